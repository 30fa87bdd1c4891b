"""Walk every public function and every CLI option with generated invalid values.

Public functions declare their parameter constraints with
:func:`trustlab._validation.validate_params`; this test generates values outside
each declaration (wrong type, NaN, +-inf, zero, negative, huge, empty, unknown
names) and asserts a clean :class:`ValueError`/:class:`TypeError` that names the
parameter and the function, raised before any work is done. The CLI half walks
every subcommand's typed options and asserts exit status 2 with one line on
stderr and no traceback.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import math
import numbers

import numpy as np
import pytest

from trustlab._validation import (
    VALIDATED_FUNCTIONS,
    Interval,
    Options,
    _NoneConstraint,
    _Special,
    _TypeConstraint,
)

PUBLIC_MODULES = ("trustlab", "trustlab.er", "trustlab.solvers", "trustlab.privacy", "trustlab.metrics",
                  "trustlab.cliques", "trustlab.datasets", "trustlab.graph")

#: public functions without declared constraints, and why
EXEMPT = {
    "trustlab._info.show_versions": "no parameters",
    "trustlab.metrics.bias._bayesian.load_bayes_example": "no parameters",
    "trustlab.metrics.bias._weat.load_weat_embeddings": "no parameters",
    "trustlab.metrics.bias._weat.load_weat_sets": "no parameters",
    "trustlab._validation.check_random_state": "it is the random_state normaliser itself",
    "trustlab.metrics.embeddings.as_embeddings": "one polymorphic input (dict, KeyedVectors, (words, matrix)); "
                                                 "its body names every accepted form on error",
    "trustlab.solvers.explain.explain": "a PartitionResult and a node label of any hashable type; "
                                        "checked in the body",
}


def _public_functions() -> dict[str, object]:
    out = {}
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n)
            if inspect.isfunction(obj):
                out[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return out


PUBLIC = _public_functions()


def test_every_public_function_declares_its_constraints():
    missing = sorted(k for k, f in PUBLIC.items()
                     if k not in EXEMPT and not hasattr(f, "__trustlab_params__"))
    assert not missing, f"public functions without validate_params: {missing}"


# ---------------------------------------------------------------------------
# value generators
# ---------------------------------------------------------------------------


def _invalid_values(c) -> list:
    if isinstance(c, Interval):
        vals: list = ["x", None, float("nan"), [1]]
        if not c.allow_inf or c.right is not None:
            vals.append(math.inf)
        if not c.allow_inf or c.left is not None:
            vals.append(-math.inf)
        if c.left is not None:
            vals += [c.left - 1, c.left - 1e-9 * max(1, abs(c.left))]
            if c.closed in ("neither", "right"):
                vals.append(c.left)
        else:
            vals.append(-1e300)
        if c.right is not None:
            vals += [c.right + 1, 10**30]
            if c.closed in ("neither", "left"):
                vals.append(c.right)
        if c.kind is numbers.Integral:
            vals += [2.5, "3", True]
        return vals
    if isinstance(c, Options):
        return ["__bogus__", 5, None, ""]
    if isinstance(c, _Special):
        return {
            "array-like": [5, None, "text"],
            "random_state": [-1, "seed", 1.5, True],
            "boolean": ["yes", 2, None],
            "callable": [5, "f"],
            "path": [5, "", None],
            "mapping": [5, "x", [1]],
            "sequence": [5, "x", None],
            "source": [5, "", None],
        }[c.name]
    if isinstance(c, _TypeConstraint):
        return [object()]
    if isinstance(c, _NoneConstraint):
        return [object()]
    return []


def _valid_value(c):
    if isinstance(c, Interval):
        lo, hi = c.left, c.right
        if c.kind is numbers.Integral:
            v = (
                1
                if lo is None
                else int(math.ceil(lo)) + (1 if c.closed in ("neither", "right") and lo == math.ceil(lo) else 0)
            )
            if hi is not None and v > hi:
                v = int(hi)
            return v
        if lo is not None and hi is not None:
            return (lo + hi) / 2
        if lo is not None:
            return float(lo) + (0.0 if c.closed in ("left", "both") else 1.0)
        if hi is not None:
            return float(hi) - (0.0 if c.closed in ("right", "both") else 1.0)
        return 1.0
    if isinstance(c, Options):
        return sorted(c.options, key=str)[0]
    if isinstance(c, _Special):
        return {"array-like": np.array([[1.0, 2.0], [3.0, 4.0]]), "random_state": 0, "boolean": True,
                "callable": (lambda *a, **k: 0), "path": "nonexistent-input.txt", "mapping": {},
                "sequence": [], "source": []}[c.name]
    if isinstance(c, _NoneConstraint):
        return None
    if isinstance(c, _TypeConstraint):
        t = c.t[0] if isinstance(c.t, tuple) else c.t
        return t()
    raise AssertionError(c)


def _cases():
    for key, func in sorted(VALIDATED_FUNCTIONS.items()):
        for pname, cons in func.__trustlab_params__.items():
            seen = set()
            for c in cons:
                for bad in _invalid_values(c):
                    if any(_accepts(k, bad) for k in cons):
                        continue
                    tag = repr(bad)
                    if tag in seen:
                        continue
                    seen.add(tag)
                    yield pytest.param(key, pname, bad, id=f"{key.split('.')[-1]}-{pname}-{tag[:20]}")


def _accepts(c, v) -> bool:
    try:
        return bool(c.is_satisfied_by(v))
    except Exception:
        return False


@pytest.mark.parametrize("key,pname,bad", list(_cases()))
def test_invalid_parameter_is_a_clean_error(key, pname, bad):
    func = VALIDATED_FUNCTIONS[key]
    sig = inspect.signature(func)
    kwargs = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name == pname:
            kwargs[p.name] = bad
        elif p.default is inspect.Parameter.empty:
            cons = func.__trustlab_params__.get(p.name)
            # undeclared data parameters are not checked by the decorator: any placeholder
            kwargs[p.name] = _valid_value(cons[0]) if cons else None
    with pytest.raises((ValueError, TypeError)) as info:
        func(**kwargs)
    msg = str(info.value)
    assert f"'{pname}' parameter of {func.__name__}" in msg, msg
    assert "\n" not in msg


# ---------------------------------------------------------------------------
# the CLI
# ---------------------------------------------------------------------------


def _subcommands():
    from trustlab.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    seen = {}
    for name, p in sub.choices.items():
        stack = [(name, p)]
        while stack:
            path, sp = stack.pop()
            inner = [a for a in sp._actions if isinstance(a, argparse._SubParsersAction)]
            if inner:
                for n2, p2 in inner[0].choices.items():
                    stack.append((f"{path} {n2}", p2))
            if id(sp) not in seen:
                seen[id(sp)] = (path, sp)
    return list(seen.values())


SUBCOMMANDS = _subcommands()


def test_every_numeric_cli_option_declares_constraints():
    plain = []
    for path, sp in SUBCOMMANDS:
        for a in sp._actions:
            if a.type in (int, float):
                plain.append(f"trustlab {path} {a.option_strings}")
    assert not plain, f"numeric options without declared constraints (use commands._common.constrained): {plain}"


def _cli_cases():
    for path, sp in SUBCOMMANDS:
        for a in sp._actions:
            cons = getattr(a.type, "constraints", None)
            if not cons or not a.option_strings:
                continue
            for c in cons:
                for bad in ("bogus", "nan", "inf", "-inf", "-1", "0", "1e30", "2.5", ""):
                    try:
                        v = a.type.parse(bad)
                    except ValueError:
                        v = bad  # not even a number: must be rejected
                    if v is not bad and any(_accepts(k, v) for k in cons):
                        continue
                    yield pytest.param(path, a.option_strings[-1], bad, id=f"{path}-{a.option_strings[-1]}-{bad}")
                break


@pytest.mark.parametrize("path,opt,bad", list(_cli_cases()))
def test_invalid_cli_option_is_one_line_exit_2(path, opt, bad, capsys):
    from trustlab.cli import main

    argv = path.split() + [f"{opt}={bad}"]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert opt in lines[0], lines[0]


# ---------------------------------------------------------------------------
# regressions from the hostile-input report
# ---------------------------------------------------------------------------


def _one_line_error(capsys, argv, *needles):
    from trustlab.cli import main

    rc = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_cplib_extreme_weights_rejected(tmp_path, capsys):
    f = tmp_path / "huge.txt"
    f.write_text("3\n1e308 1e308\n1e308\n")
    _one_line_error(capsys, ["partition", str(f), "--format", "cplib"], "magnitude")
    g = tmp_path / "huge.edges"
    g.write_text("0 1 1e308\n1 2 nan\n")
    _one_line_error(capsys, ["partition", str(g), "--format", "edgelist"], "line 1")


def test_empty_npz_is_a_clean_error(tmp_path, capsys):
    f = tmp_path / "empty.npz"
    f.write_bytes(b"")
    _one_line_error(capsys, ["bias", "weat", "--embeddings", str(f), "--test", "1"], "empty")
    _one_line_error(capsys, ["privacy-eval", "--embeddings", str(f), "--output-dir", str(tmp_path / "o")],
                    "empty")


def test_privacy_eval_output_dir_naming_a_file(tmp_path, capsys):
    f = tmp_path / "taken"
    f.write_text("x")
    _one_line_error(capsys, ["privacy-eval", "--output-dir", str(f), "--runs", "1", "--no-svm"], "existing file")


def test_bayes_draws_capped(capsys):
    _one_line_error(capsys, ["bias", "bayes", "--example", "--draws", "1e14"], "--draws")


def test_gpu_backend_without_gpu_is_one_line(capsys):
    from trustlab.cli import main

    rc = main(["bias", "weat", "--test", "1", "--backend", "gpu", "--permutations", "100", "--seed", "0"])
    err = capsys.readouterr().err
    if rc == 0:  # a real GPU is present
        pytest.skip("a usable GPU is present")
    assert rc == 2 and err.count("\n") == 1 and "backend='gpu'" in err, err


def _moon_moser(k: int) -> np.ndarray:
    """The complete k-partite graph with parts of 3: 3**k maximal cliques on 3k nodes."""
    n = 3 * k
    return np.array([(u, v) for u in range(n) for v in range(u + 1, n) if u // 3 != v // 3])


def test_clique_output_is_capped_before_memory_runs_out(tmp_path, capsys):
    from trustlab.cliques import CliqueOutputLimitError, count_maximal_cliques, maximal_cliques

    small = _moon_moser(4)  # 81 cliques of 4: 81 * (4 * 4 + 8) = 1944 bytes
    assert len(maximal_cliques(small, max_output_bytes=1944)) == 81
    with pytest.raises(CliqueOutputLimitError, match="max_output_bytes"):
        maximal_cliques(small, max_output_bytes=1943)
    with pytest.raises(CliqueOutputLimitError, match="max_cliques"):
        maximal_cliques(small, max_cliques=80)
    assert count_maximal_cliques(small) == 81
    # 3**18 (387 million) maximal cliques: stops at the cap, in well under a second
    big = tmp_path / "mm54.txt"
    big.write_text("".join(f"{u} {v}\n" for u, v in _moon_moser(18)))
    _one_line_error(capsys, ["cliques", str(big), "--max-output-bytes", "100000"], "max_output_bytes=100,000",
                    "--count")
    _one_line_error(capsys, ["cliques", str(big), "--min-size", "1e20"], "--min-size")


def test_resolve_bad_encoding_and_undecodable_file(tmp_path, capsys):
    f = tmp_path / "people.csv"
    f.write_bytes("id,name\n1,Zo\xe9 \u20ac\n2,Zoe\n".encode("cp1252"))  # not safely latin-1
    _one_line_error(capsys, ["resolve", str(f), "--encoding", "bogus-enc"], "encoding", "bogus-enc")
    line = _one_line_error(capsys, ["resolve", str(f)], "people.csv")
    assert "--encoding" in line


def test_resolve_rejects_unknown_solver_options_and_bad_fields():
    import pandas as pd

    from trustlab.er import resolve

    df = pd.DataFrame({"id": [1, 2, 3], "name": ["ann", "anne", "bob"]})
    with pytest.raises(ValueError, match="solver_options.*bogus_key"):
        resolve(df, id_col="id", fields=["name"], solver_options={"bogus_key": 1})
    with pytest.raises(ValueError, match="'fields' parameter of resolve"):
        resolve(df, id_col="id", fields=5)
    with pytest.raises(ValueError, match="'max_block_size' parameter of resolve"):
        resolve(df, id_col="id", max_block_size=2.5)


def test_partition_rejects_duplicate_nodes_and_complex_weights():
    from trustlab import partition

    W = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="distinct"):
        partition(W, nodes=["a", "a", "b"])
    with pytest.raises(ValueError, match="complex"):
        partition(W.astype(complex))
    with pytest.raises(ValueError, match="'decompose' parameter of partition"):
        partition(W, decompose="no")


def test_partition_default_budget_is_finite():
    from trustlab.solvers.api import default_time_limit, partition

    W = np.array([[0.0, 1.0], [1.0, 0.0]])
    r = partition(W, method="cpp")
    assert r.status == "optimal"
    assert default_time_limit(10**9) == 600.0
    assert partition(W, time_limit=float("inf")).status == "optimal"


def test_privatize_refuses_allocation_beyond_memory_and_zero_input_record_is_json():
    import json

    from trustlab.privacy import privatize

    X = np.random.default_rng(0).standard_normal((4, 100))
    with pytest.raises(ValueError, match="GiB"):
        privatize(X, epsilon=1.0, m=10**9, allow_m_above_d=True, random_state=0)
    rec = privatize(np.zeros((3, 100)), epsilon=1.0, random_state=0).record.to_dict()
    json.dumps(rec, allow_nan=False)  # no NaN in the public record
    assert rec["empirical_sensitivity"] is None
