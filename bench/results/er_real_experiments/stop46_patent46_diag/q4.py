import pandas as pd, numpy as np, sys
sys.path.insert(0,'/tmp/patent46'); import hooks
exp = sys.argv[1]; hooks.install(exp); hooks.install2(exp); hooks.install3(exp)
from trustlab.er import resolve
df=pd.read_csv('/tmp/s46/patent_truth.csv')
kw={'blocking':['all']} if 'all' in exp.split('_') else {}
res=resolve(df,id_col='person_id',truth='leuven_id',**kw)
mt=res.metrics
print(exp, 'P %.4f R %.4f F1 %.4f PC %.3f ent %d'%(mt['precision'],mt['recall'],mt['f1'],mt['pair_completeness'],mt['n_entities']))
print(res.blocking)
