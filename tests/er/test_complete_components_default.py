"""The default ``complete_components`` (:data:`trustlab.er.defaults.COMPLETE_COMPONENTS`):
positive components of up to 2,000 records are compared whole (stop 51: a blocked citation table
of a little more than ``ALL_PAIRS_MAX`` records is one positive component of nearly all its
records, and a pair never compared cannot share a cluster)."""
import inspect

import numpy as np
import pandas as pd

from trustlab.er import generate_records, resolve
from trustlab.er.defaults import COMPLETE_COMPONENTS
from trustlab.er.distributed import resolve_distributed
from trustlab.er.scoring import _component_completion
from trustlab.er.settings import ResolveSettings


def test_default_completes_a_component_of_1500_records_whole():
    """A positive path of 1,500 records (above the old default of 1,000) and one of 3: with the
    default limit every missing pair of both is returned (brute-force count); resolve and
    resolve_distributed share the default (they must complete the same components)."""
    limit = ResolveSettings().complete_components
    assert limit == COMPLETE_COMPONENTS
    assert inspect.signature(resolve_distributed).parameters["complete_components"].default == limit
    k = 1500
    P = np.array([(i, i + 1) for i in range(k - 1)] + [(k, k + 1), (k + 1, k + 2)], np.int64)
    n, w = k + 3, np.ones(len(P))
    got = _component_completion(n, P, w, limit)
    assert len(got) == k * (k - 1) // 2 - (k - 1) + 1
    assert {tuple(p) for p in got[(got >= k).all(1)].tolist()} == {(k, k + 2)}
    have = set(map(tuple, P.tolist()))
    assert not any(tuple(p) in have for p in got[:1000].tolist())
    assert (got[:, 0] < got[:, 1]).all() and len(np.unique(got[:, 0] * n + got[:, 1])) == len(got)


def test_resolve_joins_an_entity_of_1100_records_proposed_along_a_path():
    """1,100 copies of one record whose pairs blocking proposes only along a path (two key
    rules on made-up columns; the copies differ in the other rules' columns) among 600 other
    records: with the old default (1,000) the component is too large to be compared whole and
    the neighbour rounds leave the copies in pieces (a pair never compared cannot share a
    cluster); with the default every pair is compared and the copies are one entity."""
    base = generate_records(600, random_state=3).drop(columns=["entity"])
    df = base.iloc[1:].copy()
    m = 1100
    big = base.iloc[[0] * m].copy()
    big["rec_id"] = [f"big-{i}" for i in range(m)]
    big["soc_sec_id"] = [f"s{i}" for i in range(m)]
    big["postcode"] = [f"p{i}" for i in range(m)]
    df["b1"] = [f"u{i}" for i in range(len(df))]
    df["b2"] = [f"v{i}" for i in range(len(df))]
    df["b3"] = [f"g{i // 4}" for i in range(len(df))]  # non-matching candidates (blocks of 4)
    big["b3"] = [f"h{i}" for i in range(m)]
    big["b1"] = [f"a{i // 2}" for i in range(m)]  # pairs (0,1), (2,3), ...
    big["b2"] = ["z"] + [f"b{(i - 1) // 2}" for i in range(1, m)]  # pairs (1,2), (3,4), ...
    data = pd.concat([df, big], ignore_index=True)
    fields = "given_name:name,surname:name,address_1:address,suburb:name,date_of_birth:date"
    rules = ["key:b1", "key:b2", "key:b3", "key:soc_sec_id"]
    r = resolve(data, id_col="rec_id", fields=fields, blocking=rules)
    ent = pd.Series(np.asarray(r.entity), index=np.asarray(r.ids))
    assert ent.loc[big["rec_id"]].nunique() == 1
    # no other record joins them (bar a duplicate the generator made of the copied record)
    assert (ent.loc[df["rec_id"]].isin(set(ent.loc[big["rec_id"]]))).sum() <= 1
