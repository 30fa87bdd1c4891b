"""Quantities with units in product titles (capacities, sizes, wattages) as evidence against a match."""
from __future__ import annotations

import numpy as np
import pandas as pd

from trustlab.er.comparisons import (QUANTITY_TOLERANCE, compare, quantity_conflict, quantity_levels,
                                     quantity_lists)
from trustlab.er.kinds import Field
from trustlab.er.scoring import FSModel


def _conflict_slow(qa, qb) -> bool:
    """The trusted definition, one pair at a time: a dimension both name, no two values close."""
    for d in {d for d, _ in qa}:
        va = [v for e, v in qa if e == d]
        vb = [v for e, v in qb if e == d]
        if not vb:
            continue
        same = False
        for x in va:
            for y in vb:
                xs, ys = (x, y) if isinstance(x, tuple) else ((x,), (y,))
                if all(abs(p - q) <= QUANTITY_TOLERANCE * max(p, q) for p, q in zip(xs, ys)):
                    same = True
        if not same:
            return True
    return False


def test_quantity_lists_reads_titles_only():
    got = quantity_lists([pd.Series([
        "Seagate 500GB portable hard drive",         # a capacity
        "Samsung 14.2MP camera with 3.0-inch screen",  # megapixels and an inch size
        "Pioneer subwoofer 350W with coil",          # a glued one-letter unit
        "2550 W Addison street Chicago",             # an address: W is west, not watts
        "7.6 x 4.8 x 1.4 inches",                    # a column of measurements: not read
        "Da-Lite screen 60 x 80 video format",       # a size
        "Eveready batteries AA 24-Pack",             # a pack count
        "6-in-1 card reader usb",                    # no unit (in is not read)
        None,
    ])]).tolist()
    assert got == [(("byte", 5e11),), (("mp", 14.2), ("inch", 3.0)), (("watt", 350.0),), (),
                   (), (("size2", (60.0, 80.0)),), (("pack", 24.0),), (), ()]
    # a free text (a description, an abstract: over 40 words) names other sizes: not read
    long = "this drive " + "holds your files safely and " * 8 + "ships with a 16GB card"
    assert quantity_lists([pd.Series([long, "short title 16GB card here"])]).tolist() == [(), (("byte", 16e9),)]
    # several columns: each value read on its own, in the columns' order
    two = quantity_lists([pd.Series(["WD hard drive 1TB", "x"]), pd.Series(["big fast 16GB memory card", None])])
    assert two.tolist() == [(("byte", 1e12), ("byte", 16e9)), ()]


def test_quantity_conflict_equals_slow_path():
    rng = np.random.default_rng(7)
    titles = ["hard drive 500GB fast", "hard drive 0.5TB fast", "hard drive 1TB fast", "memory card 1GB kit",
              "memory kit 1024MB now", "camera 14MP black body", "camera 14.1MP black body", "camera 16MP black body",
              "screen 60 x 60 video format", "screen 96 x 96 video format", "pack of pens 12-pack blue",
              "a plain title without sizes", "drive 500GB and 16MP camera combo", "monitor 24-inch wide screen"]
    L = quantity_lists([pd.Series(titles)])
    i, j = rng.integers(0, len(titles), 3000), rng.integers(0, len(titles), 3000)
    got = quantity_conflict(L, i, j)
    want = np.array([_conflict_slow(L[a], L[b]) for a, b in zip(i, j)])
    np.testing.assert_array_equal(got, want)
    assert got.any() and not got.all()
    # tolerance: 1 GB = 1024 MB and 14 / 14.1 MP are one value; 500 GB and 1 TB are not
    assert quantity_conflict(L, np.array([0, 3, 5, 0, 8]), np.array([1, 4, 6, 2, 9])).tolist() == \
        [False, False, False, True, True]


def test_codes_comparison_quantity_level():
    """A pair whose records hold codes, share none and name two sizes is the codes
    comparison's far level; a shared code keeps its level, and so does a pair where one record
    holds no code (missing: EM sees the far level as else, and a pair moved from missing to
    else moved EM's fit: titles without model numbers -0.068 F1); the same size, or no size on
    one side, changes nothing."""
    df = pd.DataFrame({"t": ["WD My Passport WDBACX5000 500GB portable drive",
                             "WD My Passport WDBACX5000 1TB portable drive",
                             "Kingston DataTraveler DT101 16GB flash drive",
                             "Kingston DataTraveler 32GB usb flash drive",
                             "Kingston DataTraveler 16GB usb flash drive",
                             "Kingston DataTraveler usb flash drive",
                             "Da-Lite Model B manual screen 60 x 60 video",
                             "Da-Lite Model B manual screen 84 x 84 video",
                             "Sony camera DSC-W570 16MP pink body",
                             "Sony camera DSC-W560 14MP blue body",
                             "Sandisk Cruzer SDCZ36 flash drive 8 GB",
                             "Sandisk Cruzer P4X7ZZ usb flash drive 4 GB"]})
    P = np.array([[0, 1], [2, 3], [2, 4], [2, 5], [6, 7], [8, 9], [10, 11]])
    fl = [Field("t", "string"), Field("#", "codes")]
    fm = compare(df, P, fl)
    G = FSModel(fl).levels(fm)[:, 1]
    # shared rare code, other sizes (kept exact); 16gb / 32gb (codes themselves, neighbours: far);
    # the same 16gb (a shared code: exact); no code nor size on one side (missing); two sizes and
    # no codes (missing: EM saw it so, it stays so); neighbouring codes (far); codes on both sides, none
    # shared, 8 / 4 GB (else before, far now)
    assert G.tolist() == [0, 2, 0, -1, -1, 2, 2]


def test_quantity_levels_only_where_no_code_is_shared():
    L = quantity_lists([pd.Series(["drive 500GB fast here", "drive 1TB fast here"])])
    lv = np.array([1.0, 0.5, 0.0, np.nan, 0.25])
    i, j = np.zeros(5, np.int64), np.ones(5, np.int64)
    np.testing.assert_array_equal(quantity_levels(lv.copy(), L, i, j), [1.0, 0.5, 0.25, np.nan, 0.25])
    np.testing.assert_array_equal(quantity_levels(lv.copy(), None, i, j), lv)


def _quantity_lists_per_record(parts) -> list:
    """The trusted slow path (``quantity_lists`` before stop 48): every record's values read
    one by one, with the same rules."""
    import re

    from trustlab.er import comparisons as C

    n = len(parts[0])
    found: dict[int, list] = {}
    for part in parts:
        low = part.fillna("").astype(str).str.lower().reset_index(drop=True)
        for r in range(n):
            s = low.iat[r]
            if not re.search(r"\d\s*-?\s*[a-z\"]", s):
                continue
            words = len(re.findall(C._QTY_WORD, s)) - len(re.findall(C._QTY_UNIT_WORD, s))
            if words < C.QUANTITY_MIN_WORDS or len(re.findall(r"\S+", s)) > C.QUANTITY_MAX_WORDS:
                continue
            q = found.setdefault(r, [])
            for v, _, u, _, g in C._QTY_UNIT.findall(s):
                if float(v) > 0:
                    dim, scale = C.QUANTITY_UNITS[u or g]
                    q.append((dim, float(v) * scale))
            for a, b, c in C._QTY_SIZE.findall(s):
                vals = tuple(sorted(float(x) for x in (a, b, c) if x))
                q.append((f"size{len(vals)}", vals))
    return [tuple(dict.fromkeys(found[r]))[:C.QUANTITY_MAX] if found.get(r) else () for r in range(n)]


def test_quantity_lists_per_distinct_value_equal_the_per_record_reading():
    """``quantity_lists`` reads each distinct value once; every record's list equals the
    per-record reading: repeated titles, several columns (order kept, repeats across
    columns dropped, more than ``QUANTITY_MAX``), case variants, missing and non-string
    values, a non-default index."""
    from trustlab.er.comparisons import QUANTITY_MAX

    rng = np.random.default_rng(11)
    vals = ["Seagate 500GB portable hard drive", "SEAGATE 500gb Portable Hard Drive", "2550 W Addison street",
            "Da-Lite screen 60 x 80 video format", "Eveready batteries AA 24-Pack", "pioneer big 350W sub woofer",
            "a plain title without sizes", "camera 14MP 16GB 3-inch 2x zoom 1200mAh 5V 9W 45mm 2lbs 60 x 80 kit",
            "12 smith street", "7.6 x 4.8 x 1.4 inches", "", None, np.nan, 1200, 3.5, "drive 0GB empty here"]
    n = 700

    def col():
        return pd.Series([vals[k] for k in rng.integers(0, len(vals), n)], dtype=object,
                         index=np.arange(n) * 3 + 5)

    for parts in ([col()], [col(), col(), col()], [col().iloc[:1]]):
        got = quantity_lists(parts).tolist()
        want = _quantity_lists_per_record(parts)
        assert got == want
    got = quantity_lists([col(), col(), col()])
    assert sum(len(x) > 0 for x in got) > 300 and max(len(x) for x in got) == QUANTITY_MAX
