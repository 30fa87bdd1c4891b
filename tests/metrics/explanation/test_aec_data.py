"""AEC data preparation: SST 5 -> 3 merge and near-duplicate removal (against brute force)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from trustlab.metrics.aec_data import remove_near_duplicates, sst_three_way


def test_sst_merge():
    assert sst_three_way([4, 3, 2, 1, 0]).tolist() == [2, 2, 1, 0, 0]
    assert sst_three_way(["Very_Negative", "negative", "neutral"]).tolist() == [0, 0, 1]
    assert sst_three_way([0.0, 0.2, 0.4, 0.41, 0.6, 0.61, 1.0]).tolist() == [0, 0, 0, 1, 1, 2, 2]
    for bad in ([5], ["great"], [1.5], [True]):
        with pytest.raises(ValueError):
            sst_three_way(bad)


def _jaccard(a, b):
    a, b = set(a.split()), set(b.split())
    return len(a & b) / max(len(a | b), 1)


@pytest.mark.parametrize("threshold", [1.0, 0.8, 0.5])
def test_near_duplicates_match_brute_force(threshold):
    rng = np.random.default_rng(int(threshold * 10))
    vocab = ["a", "fine", "film", "dull", "plot", "great", "acting", "The", "FILM!"]
    texts = [" ".join(rng.choice(vocab, rng.integers(1, 5))) for _ in range(80)]
    got = remove_near_duplicates(texts, threshold=threshold)
    norm = [" ".join("".join(c if c.isalnum() or c == "_" else " " for c in t.lower()).split()) for t in texts]
    keep = []
    for i, t in enumerate(norm):
        dup = any(norm[j] == t for j in keep) or (
            threshold < 1 and any(_jaccard(t, norm[j]) >= threshold for j in keep))
        if not dup:
            keep.append(i)
    assert got == keep
    assert all(norm[i] != norm[j] for i, j in itertools.combinations(got, 2))
