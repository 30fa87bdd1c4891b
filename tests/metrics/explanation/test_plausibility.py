"""Plausibility test (Ding & Koehn) and its baselines."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trustlab.metrics import explanation as ex


@pytest.fixture(scope="module", params=[("gender", "sota"), ("gender", "distilled"),
                                         ("number", "sota"), ("number", "distilled")])
def dk(request):
    return request.param, ex.load_ding_koehn(*request.param)


# counts from the seed catalogue S3.5 (reproduced from the released files)
EXPECTED_COUNTS = {
    ("gender", "sota"): (999, 347, 347, 652, 653),
    ("gender", "distilled"): (997, 324, 324, 673, 676),
    ("number", "sota"): (5694, 3568, 3965, 2126, 2315),
    ("number", "distilled"): (5758, 3382, 3723, 2376, 2557),
}


def test_reproduces_released_pass_list_exactly(dk):
    key, d = dk
    r = ex.plausibility(d.verum, d.malum, d.cue_spans, d.attractor_spans, d.expected, tokens=d.prefixes)
    assert np.array_equal(r.passed, d.passed)
    assert (r.n_passed, r.n_passed_expected, r.n_expected, r.n_passed_alternative, r.n_alternative) == EXPECTED_COUNTS[
        key
    ]
    assert r.value == pytest.approx(r.p_expected * r.expected_rate + r.p_alternative * r.alternative_rate)
    assert r.ci[0] <= r.value <= r.ci[1]


def test_distilled_equals_table6():
    # Table 6, Transformer (SG): Syneval .917/.908/.929, Winobias .997/1.00/.996
    for task, ref in [("number", (0.917, 0.908, 0.929)), ("gender", (0.997, 1.0, 0.996))]:
        d = ex.load_ding_koehn(task, "distilled")
        r = ex.plausibility(d.verum, d.malum, d.cue_spans, d.attractor_spans, d.expected)
        assert tuple(round(x, 3) for x in (r.value, r.expected_rate, r.alternative_rate)) == ref


def _slow_plausibility(verum, malum, cues, attrs, expected):
    """Direct transcription of the released evaluation loop (span max, then max over spans)."""
    passed = []
    for i in range(len(verum)):
        def sal(vec, spans):
            return max(max(vec[s:e + 1]) for s, e in spans)
        if i in expected:
            if sal(verum[i], cues[i]) > sal(verum[i], attrs[i]):
                passed.append(i)
        elif sal(malum[i], cues[i]) < sal(malum[i], attrs[i]):
            passed.append(i)
    return passed


@st.composite
def _examples(draw):
    n = draw(st.integers(1, 12))
    verum, malum, cues, attrs, exp = [], [], [], [], set()
    for i in range(n):
        L = draw(st.integers(2, 9))
        vals = st.floats(-3, 3, allow_nan=False).map(lambda x: round(x, 1))  # rounding -> ties
        verum.append(draw(st.lists(vals, min_size=L, max_size=L)))
        malum.append(draw(st.lists(vals, min_size=L, max_size=L)))
        span = st.tuples(st.integers(0, L - 1), st.integers(0, 2)).map(lambda t: (t[0], min(L - 1, t[0] + t[1])))
        cues.append(draw(st.lists(span, min_size=1, max_size=3)))
        attrs.append(draw(st.lists(span, min_size=1, max_size=3)))
        if draw(st.booleans()):
            exp.add(i)
    return verum, malum, cues, attrs, sorted(exp)


@settings(max_examples=60)
@given(_examples())
def test_matches_slow_reference(data):
    verum, malum, cues, attrs, exp = data
    r = ex.plausibility(verum, malum, cues, attrs, np.asarray(exp, dtype=np.int64))
    assert r.passed.tolist() == _slow_plausibility(verum, malum, cues, attrs, set(exp))
    mask = np.zeros(len(verum), bool)
    mask[exp] = True
    assert ex.plausibility(verum, malum, cues, attrs, mask).passed.tolist() == r.passed.tolist()


def test_baselines_match_catalogue():
    # seed catalogue S3.6: Nearest Syneval .140/.860, Winobias .500/.500; Random .500/.500
    for task, near in [("number", (0.140, 0.860)), ("gender", (0.500, 0.500))]:
        d = ex.load_ding_koehn(task, "sota")
        b = ex.plausibility_baselines(d.cue_spans, d.attractor_spans, [len(v) for v in d.verum])
        assert (round(b.nearest_expected, 3), round(b.nearest_alternative, 3)) == near
        assert (round(b.random_expected, 3), round(b.random_alternative, 3)) == (0.5, 0.5)
        # Nearest is the plausibility test applied to position saliency psi_j = j
        pos = [np.arange(len(v), dtype=float) for v in d.verum]
        r_all_exp = ex.plausibility(pos, pos, d.cue_spans, d.attractor_spans, np.arange(len(pos)))
        r_all_alt = ex.plausibility(pos, pos, d.cue_spans, d.attractor_spans, np.zeros(0, np.int64))
        assert r_all_exp.value == pytest.approx(b.nearest_expected)
        assert r_all_alt.value == pytest.approx(b.nearest_alternative)


def test_random_baseline_expectation_matches_simulation():
    cues = [[(0, 0)], [(1, 2)], [(0, 1), (4, 4)], [(3, 3)]]
    attrs = [[(2, 3)], [(0, 0)], [(2, 3)], [(0, 2)]]
    b = ex.plausibility_baselines(cues, attrs, [5, 5, 5, 5])
    rng = np.random.default_rng(0)
    reps = 4000  # all simulated draws in one call: example j of draw k is row 4 k + j
    sal = list(rng.random((4 * reps, 5)))
    r = ex.plausibility(sal, sal, cues * reps, attrs * reps, np.arange(4 * reps))
    ok = np.zeros(4 * reps)
    ok[r.passed] = 1
    sims = ok.reshape(reps, 4).mean(axis=1)
    # Monte-Carlo error of the mean of 4000 draws is sd/sqrt(4000)
    assert abs(sims.mean() - b.random_expected) < 4 * sims.std() / np.sqrt(len(sims))
    assert sims.std() == pytest.approx(b.random_sd_expected, rel=0.1)


def test_baselines_overlap_counts_ties():
    b = ex.plausibility_baselines([[(0, 1)]], [[(1, 2)]], [3])
    assert b.n_overlap == 1
    assert b.random_expected == pytest.approx(1 / 3) and b.random_alternative == pytest.approx(1 / 3)


def test_readers_roundtrip(tmp_path):
    p = tmp_path / "out.verum"
    p.write_text("[0.5, -1.25]\n3.0\n")
    assert [v.tolist() for v in ex.read_saliency(p)] == [[0.5, -1.25], [3.0]]
    s = tmp_path / "all.subjs.txt"
    s.write_text("[(1, 1)] ||| [(4, 4), (6, 7)]\n")
    assert ex.read_spans(s) == ([[(1, 1)]], [[(4, 4), (6, 7)]])
    i = tmp_path / "idx"
    i.write_text("2\n5\n")
    assert ex.read_indices(i).tolist() == [2, 5]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(verum=[], malum=[], cue=[], attr=[], exp=[]), "empty"),
        (dict(verum=[[1.0, float("nan")]], malum=[[0.0, 1.0]], cue=[[(0, 0)]], attr=[[(1, 1)]], exp=[0]), "NaN"),
        (
            dict(verum=[[1.0, 2.0]], malum=[[0.0, 1.0, 2.0]], cue=[[(0, 0)]], attr=[[(1, 1)]], exp=[0]),
            "one entry per word",
        ),
        (dict(verum=[[1.0, 2.0]], malum=[[0.0, 1.0]], cue=[[(0, 0)]], attr=[[(1, 5)]], exp=[0]), "outside"),
        (dict(verum=[[1.0, 2.0]], malum=[[0.0, 1.0]], cue=[[]], attr=[[(1, 1)]], exp=[0]), "at least one span"),
        (dict(verum=[[1.0, 2.0]], malum=[[0.0, 1.0]], cue=[[(0, 0)]], attr=[[(1, 1)]], exp=[3]), "outside"),
        (
            dict(verum=[[1.0, 2.0]], malum=[[0.0, 1.0], [1.0, 1.0]], cue=[[(0, 0)]], attr=[[(1, 1)]], exp=[0]),
            "must match",
        ),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ex.plausibility(kwargs["verum"], kwargs["malum"], kwargs["cue"], kwargs["attr"], kwargs["exp"])


def test_tokens_length_mismatch():
    with pytest.raises(ValueError, match="tokens"):
        ex.plausibility([[1.0, 2.0]], [[0.0, 1.0]], [[(0, 0)]], [[(1, 1)]], [0], tokens=["one two three"])


def test_bad_files(tmp_path):
    p = tmp_path / "bad"
    p.write_text("[0.1, oops]\n")
    with pytest.raises(ValueError, match="line 1"):
        ex.read_saliency(p)
    p.write_text("[(1, 1)] [(2, 2)]\n")
    with pytest.raises(ValueError, match="\\|\\|\\|"):
        ex.read_spans(p)
    with pytest.raises(FileNotFoundError):
        ex.read_saliency(tmp_path / "missing")
    with pytest.raises(ValueError, match="Unknown task"):
        ex.load_ding_koehn("ptb")


def test_read_saliency_names_the_bad_file(tmp_path):
    # hostile input (bench/results/hostile_inputs.md): consistency reads two files
    p = tmp_path / "b.txt"
    p.write_text("[0.1, 0.2]\n[0.3, nan]\n")
    with pytest.raises(ValueError, match=r"saliency file '.*b\.txt': line 2 contains NaN"):
        ex.read_saliency(p)
