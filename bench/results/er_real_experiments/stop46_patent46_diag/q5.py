import pandas as pd, numpy as np, sys
import trustlab.er.scoring as S
exp=sys.argv[1]
if 'urd' in exp:
    od = S.FSModel._diagnose
    orr = S.FSModel._random_u
    def ru(self, Gr):
        u = orr(self, Gr); self._ur = u.copy(); return u
    S.FSModel._random_u = ru
    def dg(self, post, npairs, n, weights=None):
        keep = self.u_
        if getattr(self, '_ur', None) is not None:
            self.u_ = self._ur
        try: return od(self, post, npairs, n, weights)
        finally: self.u_ = keep
    S.FSModel._diagnose = dg
from trustlab.er import resolve
df=pd.read_csv('/tmp/s46/patent_truth.csv')
res=resolve(df,id_col='person_id',truth='leuven_id'); mt=res.metrics
print(exp, 'P %.4f R %.4f F1 %.4f PC %.3f'%(mt['precision'],mt['recall'],mt['f1'],mt['pair_completeness']), res.blocking.tightened_from, res.model.problems_)
