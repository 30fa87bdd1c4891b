"""The field-kind registry (trustlab.er.kinds): every kind is declared once and used everywhere."""
import numpy as np
import pandas as pd
import pytest

from trustlab.er.blocking import adaptive_blocking_rules, default_blocking_rules
from trustlab.er.comparisons import FEATURES, compare
from trustlab.er.kinds import COMPARISON_LEVELS, FIELD_KINDS, KINDS, Field, field_kind, tf_keys
from trustlab.er.kinds import FIELD_KINDS as RECORDS_FIELD_KINDS
from trustlab.er.scoring import FSModel


def test_every_kind_is_declared_once_and_has_features():
    assert tuple(KINDS) == FIELD_KINDS == RECORDS_FIELD_KINDS
    assert set(FEATURES) == set(FIELD_KINDS)
    assert COMPARISON_LEVELS == {k: KINDS[k].levels for k in FIELD_KINDS}


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match="Valid kinds are"):
        field_kind("nope")


@pytest.mark.parametrize("kind", FIELD_KINDS)
def test_compare_computes_the_features_the_levels_need(kind):
    rng = np.random.default_rng(0)
    words = ["ann smith", "anne smyth", "TH-50PZ850U", "2001-02-03", "404/231-1368", "a@b.org", "12.5"]
    df = pd.DataFrame({"a": rng.choice(words, 12), "b": rng.choice(words, 12),
                       "lat": rng.uniform(-1, 1, 12), "lon": rng.uniform(-1, 1, 12)})
    column = {"latlon": "lat,lon", "record": "*", "codes": "#"}.get(kind, "a")
    f = Field(column, kind)
    fields = [f, Field("b", "string")] if KINDS[kind].derived else [f]
    pairs = np.array([[i, k] for i in range(12) for k in range(i + 1, 12)])
    m = FSModel(fields)
    fm = compare(df, pairs, fields, only=m.needed_features())
    ex, sim = KINDS[kind].exact_feature, KINDS[kind].level_feature
    assert f"{column}:{ex}" in fm.names and f"{column}:{sim}" in fm.names
    G = m.levels(fm)
    assert G.shape == (len(pairs), len(fields)) and G.min() >= -1 and G.max() <= 3
    assert len(Field(column, kind).columns()) == KINDS[kind].arity


def test_tf_keys_use_the_kind_normaliser():
    df = pd.DataFrame({"z": [" SW1A 1AA", "sw1a-1aa", None], "c": ["1995.", "1995,", "x"]})
    assert list(tf_keys(df, Field("z", "postcode"))) == ["sw1a1aa", "sw1a1aa", ""]
    assert list(tf_keys(df, Field("c", "exact"))) == ["1995", "1995", "x"]


def test_blocking_roles_come_from_the_registry():
    fields = [Field(f"c{i}", k) for i, k in enumerate(FIELD_KINDS) if KINDS[k].arity == 1]
    rules = default_blocking_rules(fields, 10_000)
    want = [f"{KINDS[f.kind].default_rule}:{f.column}" for f in fields if KINDS[f.kind].default_rule]
    assert rules == want
    df = pd.DataFrame({f.column: [f"v{r % 7} w{r}" for r in range(40)] for f in fields})
    got = adaptive_blocking_rules(df, fields)
    keyed = {r.split(":")[1] for r in got if r.startswith("key:")}
    tokened = {r.split(":")[1].split("@")[0] for r in got if r.startswith("token:")}
    assert keyed <= {f.column for f in fields if KINDS[f.kind].key_rule}
    assert tokened == {f.column for f in fields if KINDS[f.kind].token_rule is not None}


def _er_imports(name):
    import ast
    from pathlib import Path

    import trustlab.er

    path = Path(trustlab.er.__file__).parent / f"{name}.py"
    tree = ast.parse(path.read_text())
    return {n.module.rsplit(".", 1)[-1] for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("trustlab.er.")}


@pytest.mark.parametrize("a, b", [("model", "pipeline"), ("fields", "records")])
def test_stage_modules_do_not_import_each_other(a, b):
    # function-local imports count too: the path through resolve reads one way
    assert not (b in _er_imports(a) and a in _er_imports(b))
    assert b not in _er_imports(a)


def test_fallback_sorted_rule_uses_a_field_with_one_column_of_its_own():
    # numeric fields get no key or token rule, so blocking falls back to a sorted rule;
    # it used to take the first field that was not latlon, here the whole-record one
    # (no column: IndexError)
    df = pd.DataFrame({"x": np.arange(30) * 1.5, "t": [f"w{i}" for i in range(30)]})
    fields = [Field("*", "record"), Field("lat,x", "latlon"), Field("x", "numeric")]
    assert adaptive_blocking_rules(df.assign(lat=0.0), fields) == ["sorted:x:10"]


def test_field_spec_joins_the_columns_of_a_two_column_kind():
    from trustlab.er.fields import parse_field_spec

    two = [k for k in FIELD_KINDS if KINDS[k].arity == 2]
    assert two and all(parse_field_spec(f"a+b:{k}") == [Field("a,b", k)] for k in two)
