import pandas as pd, numpy as np, sys
import trustlab.er.kinds as K
import trustlab.er.scoring as S
from trustlab.er.comparisons import compare
exp = sys.argv[1] if len(sys.argv)>1 else ''
if 'split' in exp:
    K._CODE_SPLIT = r"[\s,;:()\[\]|\"'!?*]+"
df=pd.read_csv('/tmp/s46/patent_truth.csv')
t=df.leuven_id.to_numpy()
orig_fit = S.FSModel.fit
def fit(self, d, pairs, fm, rp, fmr, **kw):
    r = orig_fit(self, d, pairs, fm, rp, fmr, **kw)
    n=len(d); rng=np.random.default_rng(0)
    i=rng.integers(0,n,200000); j=rng.integers(0,n,200000); k=i!=j; P=np.c_[i[k],j[k]]
    G=self._em_levels(self.levels(compare(d,P,self.fields,only=self.needed_features())))
    same=t[P[:,0]]==t[P[:,1]]
    M=np.stack([np.bincount(G[same&(G[:,c]>=0),c],minlength=4)+.5 for c in range(G.shape[1])]); M/=M.sum(1,keepdims=True)
    U=np.stack([np.bincount(G[~same&(G[:,c]>=0),c],minlength=4)+.5 for c in range(G.shape[1])]); U/=U.sum(1,keepdims=True)
    print('true lambda', same.mean(), 'fitted', self.lambda_)
    for c,f in enumerate(self.fields): print(f.column, 'm fit',self.m_[c].round(3),'m true',M[c].round(3),'| u fit',self.u_[c].round(4),'u true',U[c].round(4))
    if 'orm' in exp: self.m_=M
    if 'oru' in exp: self.u_=U; self.tf_scale_={}
    if 'orl' in exp: self.lambda_=same.mean()
    return r
S.FSModel.fit = fit
kw={'blocking':['all']} if 'all' in exp.split('_') else {}
from trustlab.er import resolve
res=resolve(df,id_col='person_id',truth='leuven_id',**kw)
mt=res.metrics
print(exp, 'P %.4f R %.4f F1 %.4f PC %.3f ent %d'%(mt['precision'],mt['recall'],mt['f1'],mt['pair_completeness'],mt['n_entities']))
