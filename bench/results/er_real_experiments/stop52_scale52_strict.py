import sys, os, pandas as pd, numpy as np
a, b = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(a)):
    if not f.endswith('.pkl'): continue
    x, y = pd.read_pickle(os.path.join(a, f)), pd.read_pickle(os.path.join(b, f))
    pd.testing.assert_frame_equal(x, y, check_exact=True)
    assert list(x.dtypes) == list(y.dtypes) and x.index.equals(y.index)
    bad = 0
    for c in x.columns:
        if x[c].dtype == object:
            tx = np.array([type(v).__name__ for v in x[c].to_numpy()]); ty = np.array([type(v).__name__ for v in y[c].to_numpy()])
            bad += int((tx != ty).sum())
    print(f, x.shape, dict(x.dtypes.astype(str).value_counts()), 'type mismatches', bad, 'missing', int(x.isna().sum().sum()))
