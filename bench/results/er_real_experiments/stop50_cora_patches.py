"""Run the default resolve on bench files with an inference post-hook (experiment switches), print F1 + stages."""
import sys, os, json, time, warnings
sys.path.insert(0, "/work/wt-cora50/bench")
sys.path.insert(0, "/work/wt-cora50/bench/results/er_real_experiments")
from pathlib import Path
import numpy as np
import trustlab.er.fields as F
from trustlab.er.kinds import Field
from trustlab.er.fields import FieldChoice
_orig = F.infer_fields_report
TEXT = [c for c in os.environ.get("EXP_TEXT", "").split(",") if c]
def patched(df, **kw):
    rep = _orig(df, **kw)
    if TEXT:
        rep.fields = [Field(f.column, "text") if f.column in TEXT else f for f in rep.fields]
    return rep
F.infer_fields_report = patched
import trustlab.er.pipeline as PL
from trustlab.er.scoring import to_weights as _tw
REFIT = int(os.environ.get("EXP_REFIT", "0"))
A = float(os.environ.get("EXP_A", "0.5"))
LAM = os.environ.get("EXP_LAM", "fit")
_state = {}
_oc = PL._compete
def _compete(data, sc, cfg):
    _state["data"], _state["cfg"] = data, cfg
    return _oc(data, sc, cfg)
PL._compete = _compete
_orig_cluster = PL._ClusteringConfig.cluster
def cluster(self, n, sc, method=None, sources=None):
    cr = _orig_cluster(self, n, sc, method, sources)
    if not REFIT or method is not None or sc.supervised or sc.fw is None or not len(sc.pairs):
        return cr
    data, cfg = _state["data"], _state["cfg"]
    mdl = sc.model
    for it in range(REFIT):
        G = mdl.levels(sc.fm)
        lab = np.asarray(cr.labels)
        inside = lab[sc.pairs[:, 0]] == lab[sc.pairs[:, 1]]
        if mdl.forcing_:
            Fk = mdl._forced(mdl.key_states(data.df, sc.pairs))
        else:
            Fk = np.zeros(G.shape, bool)
        m_old = mdl.m_.copy(); m = m_old.copy()
        MODE = os.environ.get("EXP_MODE", "hard")
        p = sc.prob
        hshare = float((1 - p[inside & (p < 0.5)]).sum() / max(p.sum(), 1e-9))
        print(f"GATE hidden share {hshare:.4f} (hidden pairs {int((inside & (p < 0.5)).sum())}, sum p {p.sum():.1f})", flush=True)
        if hshare < float(os.environ.get("EXP_GATE", "0")):
            break
        for c in range(G.shape[1]):
            L = m_old.shape[1]
            if MODE == "hard":
                sel = inside & ~Fk[:, c] & (G[:, c] >= 0)
                g = G[sel, c]
                m[c] = (np.bincount(g, minlength=L)[:L] + A * L * m_old[c]) / (len(g) + A * L)
            elif MODE.startswith("loo"):
                # leave-one-field-out guard: a hidden match counts for field c only when
                # the other fields alone call it a match (p without c's weight >= 0.5)
                ok = ~Fk[:, c] & (G[:, c] >= 0)
                N = p[ok].sum()
                lo_all = mdl.log_odds_from_field_weights(sc.fw)
                p_wo = 1 / (1 + np.exp(-np.clip(lo_all - sc.fw[:, c], -50, 50)))
                hid = ok & inside & (p < 0.5)
                oth = sc.fw.sum(1) - sc.fw[:, c]
                if MODE == "loo":
                    wgt = (1 - p) * (p_wo >= 0.5)
                elif MODE == "loopos":
                    wgt = (1 - p) * (oth > float(os.environ.get("EXP_MARGIN", "0")))
                else:  # loosoft
                    wgt = (1 - p) * p_wo
                add = np.bincount(G[hid, c], weights=wgt[hid], minlength=L)[:L]
                cnt = np.maximum(N * m_old[c] + add, 1e-3)
                m[c] = cnt / cnt.sum()
                if os.environ.get("EXP_DEBUG"):
                    print(f"LOO {c} {mdl.fields[c].column[:12]} hidden {hid.sum()} counted {(wgt[hid]>0.01).sum()} add {add.sum():.1f} N {N:.1f}", flush=True)
            else:
                ok = ~Fk[:, c] & (G[:, c] >= 0)
                N = p[ok].sum()
                hid = ok & inside & (p < 0.5)
                spl = ok & ~inside & (p >= 0.5)
                add = np.bincount(G[hid, c], weights=1 - p[hid], minlength=L)[:L]
                sub = np.bincount(G[spl, c], weights=p[spl], minlength=L)[:L] if MODE == "soft2" else 0
                cnt = np.maximum(N * m_old[c] + add - sub, 1e-3)
                m[c] = cnt / cnt.sum()
                if c == 0 and os.environ.get("EXP_DEBUG"):
                    print("N", N, "hidden", hid.sum(), (1 - p[hid]).sum(), "split", spl.sum(), flush=True)
        m = np.clip(m, 1e-6, None); m /= m.sum(1, keepdims=True)
        if np.allclose(m, np.clip(m_old, 1e-6, None) / np.clip(m_old, 1e-6, None).sum(1, keepdims=True), rtol=1e-9, atol=1e-12):
            print('REFIT nothing counted', flush=True)
            break
        print('REFIT applied', flush=True)
        mdl.m_ = m
        if os.environ.get("EXP_DEBUG"):
            np.set_printoptions(precision=2, suppress=True, linewidth=200)
            for c, f in enumerate(mdl.fields):
                print(f"{f.column[:10]:10s} bf old {np.log(m_old[c]/mdl.u_[c])} new {np.log(m[c]/mdl.u_[c])}", flush=True)
            print("lambda", mdl.lambda_, "inside", inside.mean(), "tf_scale", mdl.tf_scale_, "forcing", mdl.forcing_)
        if LAM == "cl":
            mdl.lambda_ = float(np.clip(inside.mean(), 1e-6, 0.5))
        if os.environ.get("EXP_PLAIN"):
            bf = mdl.level_bayes_factors()
            W = np.zeros(G.shape)
            for c in range(G.shape[1]):
                ok = G[:, c] >= 0
                W[ok, c] = bf[c][G[ok, c]]
            sc.fw = W
        else:
            sc.fw = mdl.field_weights(data.df, sc.pairs, sc.fm)
        sc.prob = mdl.proba_from_field_weights(sc.fw)
        sc.w = _tw(sc.prob, os.environ.get('EXP_WREFIT', cfg.weights))
        _oc(data, sc, cfg)
        cr = _orig_cluster(self, n, sc, method, sources)
    return cr
PL._ClusteringConfig.cluster = cluster
if os.environ.get("EXP_W"):
    _tw0 = PL.to_weights
    PL.to_weights = lambda p, kind="logit", **k: _tw0(p, os.environ["EXP_W"], **k)
    _tw = PL.to_weights
import trustlab.er.scoring as SC
if os.environ.get("EXP_NOBEYOND"):
    SC.FSModel._record_beyond_fields = lambda self, W, R=None: W
if os.environ.get("EXP_NOTF"):
    SC.FSModel._tf_fields = lambda self: []
