"""clustering_report from summed counts (what the distributed evaluation adds up) equals the direct one."""
import numpy as np
import pandas as pd
import pytest

from trustlab.metrics.clustering import _cell_sums, _report_from_sums, _size_sums, clustering_report


def _sums(p, t, parts=1):
    f = pd.DataFrame({"p": p, "t": t})
    c = f.groupby(["p", "t"]).size().rename("n").reset_index()
    a, b = c.groupby("p")["n"].sum(), c.groupby("t")["n"].sum()
    c["a"], c["b"] = a[c["p"]].to_numpy(), b[c["t"]].to_numpy()
    # the sums of any split of the cells and clusters add up
    def split(x):
        return [x.iloc[i] for i in np.array_split(np.arange(len(x)), parts)]

    cells = sum(_cell_sums(x["n"], x["a"], x["b"]) for x in split(c))
    sizes = [sum(_size_sums(x) for x in split(s)) for s in (a, b)]
    return cells, sizes[0], sizes[1]


@pytest.mark.parametrize("seed", range(40))
def test_report_from_sums_equals_the_report(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    p = rng.integers(0, int(rng.integers(1, 25)), n)
    t = rng.integers(0, int(rng.integers(1, 25)), n)
    if seed % 5 == 0:
        p = np.zeros(n, int)  # one predicted cluster
    if seed % 7 == 0:
        t = np.arange(n)  # every record alone
    want = clustering_report(p, t)
    got = _report_from_sums(*_sums(p, t, parts=1 + seed % 3))
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-9, abs=1e-12), k
