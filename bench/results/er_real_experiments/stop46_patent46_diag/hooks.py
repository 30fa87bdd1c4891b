import numpy as np, sys
import trustlab.er.kinds as K
import trustlab.er.scoring as S
import trustlab.er.fields as FF
def install(exp):
    if 'split' in exp:
        K._CODE_SPLIT = r"[\s,;:()\[\]|\"'!?*]+"
    if 'nocodes' in exp:
        o = FF.infer_fields_report
        def inf(*a, **k):
            r = o(*a, **k)
            r.fields[:] = [f for f in r.fields if f.kind != 'codes']
            return r
        FF.infer_fields_report = inf
        import trustlab.er.pipeline as PL, trustlab.er.records as R
        for mod in (PL, R):
            if hasattr(mod, 'infer_fields_report'): mod.infer_fields_report = inf
    if 'deconv' in exp:
        # u on random pairs without the matches: u_rand = lam*m + (1-lam)*u, refit once
        of = S.FSModel.fit
        def fit(self, df, pairs, fm, rp, fmr, **kw):
            of(self, df, pairs, fm, rp, fmr, **kw)
            if self.m_ is None or self.u_ is None: return self
            Gr = self._em_levels(self.levels(fmr))
            ur = self._random_u(Gr)
            lam = self.lambda_
            uc = np.maximum(ur - lam*self.m_, 0.5*ur*0+1e-6)/(1-lam)
            uc /= uc.sum(1, keepdims=True)
            o = S.FSModel._random_u
            S.FSModel._random_u = lambda s, G: uc
            try: of(self, df, pairs, fm, rp, fmr, **kw)
            finally: S.FSModel._random_u = o
            print('deconv lam', lam, 'u name', ur[2].round(4), '->', uc[2].round(4), file=sys.stderr)
            return self
        S.FSModel.fit = fit
def install2(exp):
    if 'mtok' in exp:
        K.ColumnProfile.mean_tok = property(lambda self: float(self.sample.str.split(r"[\s*]+", regex=True).str.len().mean()))
def install3(exp):
    import trustlab.er.pipeline as PL
    o = PL._tighten_blocking
    def tb(data, scored, stats, mbs, cfg, rng):
        m = scored.model
        print('DRIFT at', mbs, m.problems_, m.lambda_, file=sys.stderr)
        print(m.parameter_table().to_string(), m.sessions_, file=sys.stderr)
        if 'notight' in exp: return scored, stats, mbs
        return o(data, scored, stats, mbs, cfg, rng)
    PL._tighten_blocking = tb
