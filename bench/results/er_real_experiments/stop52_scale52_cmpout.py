import sys, pandas as pd
a = pd.read_parquet(sys.argv[1], columns=['rec_id', 'entity_id']).set_index('rec_id')['entity_id']
b = pd.read_parquet(sys.argv[2], columns=['rec_id', 'entity_id']).set_index('rec_id')['entity_id']
b = b.reindex(a.index)
print(sys.argv[2], 'records', len(a), 'differ', int((a.astype(str) != b.astype(str)).sum()), 'entities', a.nunique(), b.nunique())
