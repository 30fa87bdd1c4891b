import dask, os, tempfile, pandas as pd, numpy as np
from trustlab.er import generate_records
from trustlab.er import distributed as D
df = generate_records(800, random_state=2)
d = tempfile.mkdtemp(dir="/tmp/scale52/tmp")
for k, part in enumerate(np.array_split(df, 2)):
    part.to_csv(os.path.join(d, f"p{k}.csv"), index=False)
kw = dict(id_col="rec_id", fields={"given_name": "name", "surname": "name", "date_of_birth": "date"}, blocking=["key:surname", "token:given_name"], sample_size=300)
with dask.config.set(scheduler="synchronous"):
    a = D.resolve_distributed(d, output=d + "/a", **kw)
    src = D._source
    D._source = lambda r, k: (s := src(r, k)).map_partitions(D._as_object, meta=D._as_object(s._meta))
    b = D.resolve_distributed(d, output=d + "/b", **kw)
ea = pd.read_parquet(a.output).set_index("rec_id")["entity_id"].sort_index(); eb = pd.read_parquet(b.output).set_index("rec_id")["entity_id"].sort_index()
print(a.n_records, ea.equals(eb), pd.read_parquet(a.output).dtypes.equals(pd.read_parquet(b.output).dtypes))
