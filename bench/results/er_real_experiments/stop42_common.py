"""Shared setup of stop 42's walmart_amazon presentation scripts (prod42): resolve a presentation
that ``stop41_presentations.py`` wrote into /tmp/p42/VARIANT with every default, and decide pairs
from log-odds as the pipeline does (belief propagation over one-to-one matchings, then clustering)."""

import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

sys.path.insert(0, "bench")
import er_diagnose as D  # noqa: E402
import er_real as E  # noqa: E402

import trustlab  # noqa: E402
from trustlab.er.cluster import cluster_pairs  # noqa: E402
from trustlab.er.scoring import one_to_one_log_odds, to_weights  # noqa: E402

INPUTS, KEYS, TRUTH = E.load("walmart_amazon", Path("/work/shared/data"))


def presentation(variant: str) -> SimpleNamespace:
    """``res`` (the Resolution), ``t`` (each row's true entity), ``P`` (its pairs), ``same`` (each
    pair true), ``srcc`` (each row's source code), ``model``, ``fm`` of one presentation."""
    paths = [Path("/tmp/p42") / variant / p.name for p in INPUTS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = trustlab.resolve([str(p) for p in paths], link_type="link_only")
    t = D._truth_per_row(res, paths, KEYS, TRUTH)
    P = res.pairs
    return SimpleNamespace(res=res, paths=paths, t=t, P=P, same=t[P[:, 0]] == t[P[:, 1]],
                           srcc=pd.factorize(res.source)[0], model=res.model, fm=res.features)


def decide(x: SimpleNamespace, lo: np.ndarray) -> dict:
    """Pairwise metrics of the entities the pipeline's decision gives from pair log-odds ``lo``."""
    live = np.flatnonzero(lo > -30)
    l2 = lo.copy()
    l2[live], _ = one_to_one_log_odds(x.P[live], lo[live], x.srcc)
    pr = 1 / (1 + np.exp(-np.clip(l2, -50, 50)))
    labels = cluster_pairs(len(x.t), x.P, to_weights(pr), method="xer", time_limit=60).labels
    return E.pairwise(np.asarray(labels), x.t)
