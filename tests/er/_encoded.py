"""A shared case for the tests that compare the distributed encodings with ``compare``."""
from __future__ import annotations

import numpy as np

from trustlab.er import distributed as D
from trustlab.er.comparisons import compare
from trustlab.er.scoring import FSModel


def encoded_case(df, fields, pieces: int = 3):
    """``(P, only, whole, enc)``: a third of the pairs of ``df``, the features the model
    needs, ``compare``'s features of those pairs on the raw records, and the records encoded
    in ``pieces`` partitions, weighed by their summed document frequencies and concatenated."""
    P = np.array([(a, b) for a in range(len(df)) for b in range(a + 1, len(df)) if (a + b) % 3 == 0], np.int64)
    tf = FSModel(fields)
    only = tf.needed_features()
    whole = compare(df, P, fields, only=only)
    parts = np.array_split(np.arange(len(df)), pieces)
    encs = [D._encode(df.iloc[p].set_axis(p), fields, only, None, tf, None) for p in parts]
    doc_freq = D._sum_doc_counts([D._doc_counts(e) for e in encs], len(df))
    enc = D._Enc.concat([D._weigh(e, fields, doc_freq) for e in encs])
    return P, only, whole, enc
