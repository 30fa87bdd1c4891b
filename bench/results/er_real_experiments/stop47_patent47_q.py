import pandas as pd, numpy as np, sys, os
from trustlab.er import resolve
df=pd.read_csv('/tmp/s46/patent_truth.csv')
kw={'blocking':['all']} if 'all' in sys.argv[1:] else {}
res=resolve(df,id_col='person_id',truth='leuven_id',**kw); mt=res.metrics
print(os.environ.get('S47'), sys.argv[1:], 'P %.4f R %.4f F1 %.4f PC %.3f ent %d'%(mt['precision'],mt['recall'],mt['f1'],mt['pair_completeness'],mt['n_entities']), res.blocking.tightened_from, res.model.problems_, 'lam', res.model.lambda_)
if os.environ.get('SESS'):
    for s in res.model.sessions_: print(s)
    print(res.model.parameter_table().to_string())
    print('tf_scale', res.model.tf_scale_)
