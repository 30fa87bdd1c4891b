"""Faithfulness: model and input consistency (Ding & Koehn), checked against scipy."""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import NearConstantInputWarning, pearsonr

from trustlab.kernels import explain as kern
from trustlab.metrics import explanation as ex


def _slow_clamped_pearson(a, b, t=0.01):
    """The released script: clamp each vector with its own max, then scipy.stats.pearsonr."""
    a = np.array(a, dtype=float)
    b = np.array(b, dtype=float)
    a[np.abs(a) < t * np.max(np.abs(a))] = 0.0
    b[np.abs(b) < t * np.max(np.abs(b))] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(pearsonr(a, b)[0])


def _exact_clamped_pearson(a, b, t=0.01):
    """The same quantity in exact rational arithmetic (the trusted reference on
    near-constant, subnormal or huge inputs, where float64 scipy loses accuracy)."""
    a = np.array(a, dtype=float)
    b = np.array(b, dtype=float)
    a[np.abs(a) < t * np.max(np.abs(a))] = 0.0
    b[np.abs(b) < t * np.max(np.abs(b))] = 0.0
    A = [Fraction(float(v)) for v in a]
    B = [Fraction(float(v)) for v in b]
    ma, mb = sum(A) / len(A), sum(B) / len(B)
    sab = sum((x - ma) * (y - mb) for x, y in zip(A, B))
    saa = sum((x - ma) ** 2 for x in A)
    sbb = sum((y - mb) ** 2 for y in B)
    if saa == 0 or sbb == 0:
        return float("nan")
    return math.copysign(math.sqrt(float(sab * sab / (saa * sbb))), float(sab)) if sab else 0.0


def _scipy_flags_near_constant(a, b, t=0.01):
    """True where scipy itself warns that its r may be inaccurate (near-constant input)."""
    a = np.array(a, dtype=float)
    b = np.array(b, dtype=float)
    a[np.abs(a) < t * np.max(np.abs(a))] = 0.0
    b[np.abs(b) < t * np.max(np.abs(b))] = 0.0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pearsonr(a, b)
    return any(issubclass(x.category, NearConstantInputWarning) for x in w)


@pytest.fixture(scope="module")
def gender():
    return ex.load_ding_koehn("gender", "sota"), ex.load_ding_koehn("gender", "distilled")


@pytest.fixture(scope="module")
def number():
    return ex.load_ding_koehn("number", "sota"), ex.load_ding_koehn("number", "distilled")


def test_model_consistency_table4b(gender, number):
    # Table 4b, Transformer SG: Syneval .598/.570, Winobias .656/.581
    for (a, b), ref in [(number, (0.598, 0.570)), (gender, (0.656, 0.581))]:
        rv = ex.model_consistency(a.verum, b.verum)
        rm = ex.model_consistency(a.malum, b.malum)
        assert (round(rv.value, 3), round(rm.value, 3)) == ref
        assert rv.n_pairs == len(a.verum) and rv.n_skipped_length == 0


def test_model_consistency_matches_scipy(gender):
    a, b = gender
    slow = np.mean([_slow_clamped_pearson(x, y) for x, y in zip(a.verum[:200], b.verum[:200])])
    assert ex.model_consistency(a.verum[:200], b.verum[:200]).value == pytest.approx(slow, abs=1e-12)


def test_input_consistency_table4a(gender):
    a, _ = gender
    groups = ex.winobias_template_groups(a.prefixes, max_groups=147)
    rv = ex.input_consistency(a.verum, groups)
    rm = ex.input_consistency(a.malum, groups)
    assert (round(rv.value, 3), round(rm.value, 3)) == (0.775, 0.752)
    assert rv.n_pairs == 386
    # the released script's loop, on the same groups
    slow = [
        _slow_clamped_pearson(a.verum[g[0]], a.verum[j])
        for g in groups for j in g[1:] if len(a.verum[j]) == len(a.verum[g[0]])
    ]
    assert rv.value == pytest.approx(np.mean(slow), abs=1e-12)


def test_template_groups_structure(gender):
    a, _ = gender
    groups = ex.winobias_template_groups(a.prefixes)
    assert len(groups) == 283  # 139 templates in lines 1-500, 144 in 501-1000
    first_block = [g for g in groups if g[0] < 500]
    assert len(first_block) == 139
    for g in groups:
        assert g == sorted(g)
        assert all((x < 500) == (g[0] < 500) for x in g)  # never crosses the two halves
    assert groups[:147] == ex.winobias_template_groups(a.prefixes, max_groups=147)


_DELETE_WORDS = """
import sys
nouns = sys.argv[1].split()
for line in sys.stdin:
    toks = line.strip().split()
    for w in nouns:
        if w in toks:
            toks[toks.index(w)] = ','
    sys.stdout.write(' '.join(toks) + '\\n')
"""

_GROUP_SH = r"""
set -e
head -500 prefx > hf1; tail -500 prefx > hf2
idx=0
for hf in hf1 hf2; do
  "$PY" delete_words.py "$NOUNS" < $hf | LC_ALL=C sort | uniq > tmpl
  while IFS= read -r line; do
    f2=`echo $line | cut -d',' -f 2`
    f3=`echo $line | cut -d',' -f 3`
    grep -n "$f2" $hf | grep "$f3" | cut -d: -f1 | tr '\n' ' ' > g_$idx || true
    echo "$hf" >> g_$idx
    idx=$(( idx + 1 ))
  done < tmpl
done
echo $idx
"""


def test_template_groups_match_shell_pipeline(gender, tmp_path):
    """The released group_by_content.sh logic run by bash/sort/cut/grep (the slow reference)."""
    import shutil
    import subprocess
    import sys

    if shutil.which("bash") is None or shutil.which("grep") is None:
        pytest.skip("needs bash and grep")
    a, _ = gender
    (tmp_path / "prefx").write_text("\n".join(a.prefixes) + "\n")
    (tmp_path / "delete_words.py").write_text(_DELETE_WORDS)
    env = {"PY": sys.executable, "NOUNS": " ".join(ex.WINOBIAS_GENDER_NOUNS), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(["bash", "-c", _GROUP_SH], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    n = int(out.stdout.split()[-1])
    shell_groups = []
    for i in range(n):
        *nums, hf = (tmp_path / f"g_{i}").read_text().split()  # "<line numbers> hf1|hf2"
        base = 0 if hf == "hf1" else 500
        shell_groups.append([base + int(x) - 1 for x in nums])
    assert ex.winobias_template_groups(a.prefixes) == shell_groups


@settings(max_examples=80)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n),
    st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n))))
def test_clamped_pearson_matches_scipy(ab):
    a, b = ab
    fast = ex.clamped_pearson(a, b)
    exact = _exact_clamped_pearson(a, b)
    if np.isnan(exact):
        assert np.isnan(fast)
    else:
        assert fast == pytest.approx(exact, abs=1e-9)
    if not _scipy_flags_near_constant(a, b):   # the released script's scipy call agrees too
        slow = _slow_clamped_pearson(a, b)
        assert (np.isnan(slow) and np.isnan(fast)) or fast == pytest.approx(slow, abs=1e-9)


@settings(max_examples=60)
@given(st.integers(3, 12), st.floats(-5, 5, allow_nan=False, allow_subnormal=True), st.data())
def test_clamped_pearson_near_constant_rows(n, c, data):
    """One entry a few ulps off a constant row: r equals corr(e_j, b) exactly."""
    a = np.full(n, c)
    j = data.draw(st.integers(0, n - 1))
    a[j] = np.nextafter(c, np.inf if c <= 0 else -np.inf)
    b = data.draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n))
    exact = _exact_clamped_pearson(a, b)
    fast = ex.clamped_pearson(a, b)
    assert (np.isnan(exact) and np.isnan(fast)) or fast == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("a,b,want", [
    ([0.0, 1e-300], [0.0, 1e-300], 1.0),          # subnormal-scale deviations: no underflow to NaN
    ([5e-324, 0.0], [1.0, 2.0], -1.0),            # two points: exactly -1, as scipy
    ([1e-200, 2e-200, 3e-200], [3.0, 2.0, 1.0], -1.0),
    ([0.1, 0.1, 0.1], [1.0, 2.0, 3.0], float("nan")),   # exactly constant: undefined
])
def test_clamped_pearson_extreme_scales(a, b, want):
    got = ex.clamped_pearson(a, b)
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


def test_kernels_compiled_equal_python():
    rng = np.random.default_rng(1)
    lens = rng.integers(2, 9, size=50)
    off = np.r_[0, np.cumsum(lens)].astype(np.int64)
    x = rng.normal(size=off[-1])
    y = rng.normal(size=off[-1])
    pi = np.arange(50, dtype=np.int64)
    for work in (0, 10**9):  # serial and parallel builds
        f = kern.select_kernel("clamped_pearson_pairs", work)
        np.testing.assert_allclose(f(x, off, y, off, pi, pi, 0.01),
                                   kern.clamped_pearson_pairs(x, off, y, off, pi, pi, 0.01))
        g = kern.select_kernel("ragged_mass_accuracy", work)
        gt = (rng.random(off[-1]) < 0.3).astype(float)
        np.testing.assert_allclose(g(x, off, gt), kern.ragged_mass_accuracy(x, off, gt))
        h = kern.select_kernel("ragged_select_max", work)
        sel = np.zeros(50, dtype=np.int64)
        soff = np.arange(51, dtype=np.int64)
        np.testing.assert_array_equal(h(x, off, sel, soff), kern.ragged_select_max(x, off, sel, soff))


def test_length_mismatch_is_skipped_and_counted():
    r = ex.model_consistency([[1.0, 2.0, 3.0], [1.0, 2.0]], [[1.0, 2.0, 4.0], [1.0, 2.0, 3.0]])
    assert r.n_pairs == 1 and r.n_skipped_length == 1
    assert np.isnan(r.r[1])


def test_bad_input():
    with pytest.raises(ValueError, match="empty"):
        ex.model_consistency([], [])
    with pytest.raises(ValueError, match="NaN"):
        ex.model_consistency([[1.0, np.nan]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="must match"):
        ex.model_consistency([[1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="threshold"):
        ex.model_consistency([[1.0, 2.0]], [[1.0, 2.0]], threshold=2.0)
    with pytest.raises(ValueError, match="no pair"):
        ex.model_consistency([[1.0, 2.0]], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="same length"):
        ex.clamped_pearson([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="outside"):
        ex.input_consistency([[1.0, 2.0], [2.0, 3.0]], [[0, 5]])
    with pytest.raises(ValueError, match="no pair"):
        ex.input_consistency([[1.0, 2.0], [2.0, 3.0]], [[0]])
    with pytest.raises(ValueError, match="empty"):
        ex.winobias_template_groups([])
