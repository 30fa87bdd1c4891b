"""One spelling of numbers (issue 28, item 10): plain decimal weights in instance files
(``1_000`` and ``0x1p3`` refused alike), integers on the command line parsed exactly."""
from __future__ import annotations

import numpy as np
import pytest

from trustlab.commands._common import constrained, seed_type
from trustlab.solvers.io import read_cplib, read_edgelist


@pytest.mark.parametrize("w", ["1_000", "0x1p3", "inf", "nan", "1e", "--1", "."])
def test_odd_weight_spellings_are_refused_in_both_formats(tmp_path, w):
    c = tmp_path / "c.txt"
    c.write_text(f"3\n1 {w}\n2\n")
    e = tmp_path / "e.txt"
    e.write_text(f"0 1 {w}\n1 2 1\n")
    with pytest.raises(ValueError, match="plain decimal number"):
        read_cplib(c)
    with pytest.raises(ValueError, match="plain decimal number"):
        read_edgelist(e)


@pytest.mark.parametrize("w, value", [("1e3", 1000.0), ("-.5", -0.5), ("+2.", 2.0), ("7", 7.0), ("1E-3", 1e-3)])
def test_plain_decimal_weights_are_read(tmp_path, w, value):
    c = tmp_path / "c.txt"
    c.write_text(f"3\n1 {w}\n2\n")
    assert read_cplib(c)[0, 2] == value
    e = tmp_path / "e.txt"
    e.write_text(f"0 1 {w}\n")
    assert read_edgelist(e) == [(0, 1, value)]


def test_underscored_labels_stay_text(tmp_path):
    e = tmp_path / "e.txt"
    e.write_text("1_000 1000 1\n")
    assert read_edgelist(e) == [("1_000", "1000", 1.0)]  # two nodes, not one


def test_cli_integers_are_exact():
    big = 2**63 - 1
    assert seed_type()(str(big)) == big
    t = constrained("trustlab.privacy.mechanisms:privatize", "m")
    assert t("9223372036854775807") == 9223372036854775807
    assert t("1e3") == 1000 and isinstance(t("1e3"), int)
    with pytest.raises(Exception, match="1_000"):
        t("1_000")
    assert np.int64(t("9007199254740993")) == 9007199254740993  # 2**53 + 1: float() would round it


def test_edge_file_labels_with_underscores_stay_text(tmp_path):
    from trustlab.graph import read_edge_file

    p = tmp_path / "g.txt"
    p.write_text("1_000 1000\n1000 7\n")
    g = read_edge_file(p)
    assert g.n_nodes == 3 and sorted(map(str, g.nodes.tolist())) == ["1000", "1_000", "7"]
