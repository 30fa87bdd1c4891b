"""Synthetic Febrl-style person records with known entities, for tests and scale runs.

Each entity gets an original record; duplicates copy it and apply 1–3 corruptions
(Febrl's kinds: character typos — substitution, insertion, deletion, transposition —,
a missing value, a given-name/surname swap, a date day/month swap or digit change).
Names are drawn from syllable-built vocabularies (no real people).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from trustlab._validation import check_int, check_interval, check_random_state

__all__ = ["generate_records", "SYNTHETIC_FIELDS", "SYNTHETIC_BLOCKING"]

#: field spec that fits :func:`generate_records`
SYNTHETIC_FIELDS = {
    "given_name": "name", "surname": "name", "street_number": "exact", "address_1": "address",
    "suburb": "name", "postcode": "exact", "state": "exact", "date_of_birth": "date", "soc_sec_id": "string",
}
#: blocking rules that fit :func:`generate_records` (union of compound keys)
SYNTHETIC_BLOCKING = [
    "key:surname+postcode", "key:given_name+date_of_birth", "key:surname+date_of_birth",
    "key:soc_sec_id", "key:given_name+address_1", "key:surname+suburb",
]

_CONS = list("bcdfghjklmnprstvwz") + ["ch", "sh", "th", "tr", "br", "st"]
_VOW = ["a", "e", "i", "o", "u", "ai", "ee", "ou", "y"]
_STREET = ["street", "road", "avenue", "place", "crescent", "drive", "lane", "court", "circuit", "parade"]
_STATES = ["nsw", "vic", "qld", "wa", "sa", "tas", "act", "nt"]
_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def _vocab(rng: np.random.Generator, size: int, syl: tuple[int, int]) -> np.ndarray:
    k = rng.integers(syl[0], syl[1] + 1, size=size * 2)
    c = rng.integers(0, len(_CONS), size=(size * 2, syl[1]))
    v = rng.integers(0, len(_VOW), size=(size * 2, syl[1]))
    words = ["".join(_CONS[c[i, s]] + _VOW[v[i, s]] for s in range(k[i])) for i in range(size * 2)]
    return np.array(pd.unique(np.array(words, dtype=object))[:size], dtype=object)


def _typo(s: str, r: np.random.Generator) -> str:
    if not s:
        return s
    op = int(r.integers(4))
    p = int(r.integers(len(s)))
    ch = _LETTERS[r.integers(26)]
    if op == 0:  # substitute
        return s[:p] + ch + s[p + 1:]
    if op == 1:  # insert
        return s[:p] + ch + s[p:]
    if op == 2 and len(s) > 1:  # delete
        return s[:p] + s[p + 1:]
    if len(s) > 1:  # transpose
        p = min(p, len(s) - 2)
        return s[:p] + s[p + 1] + s[p] + s[p + 2:]
    return s + ch


def generate_records(
    n_records: int,
    *,
    dup_rate: float = 0.4,
    max_corruptions: int = 3,
    random_state: Any = None,
) -> pd.DataFrame:
    """Generate ``n_records`` Febrl-style person records with true entity ids.

    Parameters
    ----------
    n_records : int
        Total number of records (originals + duplicates).
    dup_rate : float in [0, 1)
        Share of records that are duplicates of an original.
    max_corruptions : int
        Each duplicate gets 1..``max_corruptions`` corruptions.
    random_state : int, Generator or None
        Seed.

    Returns
    -------
    DataFrame
        Columns ``rec_id``, ``entity`` and the fields of :data:`SYNTHETIC_FIELDS`.

    Examples
    --------
    >>> df = generate_records(100, random_state=0)
    >>> len(df), df["rec_id"].is_unique, int(df["entity"].nunique())
    (100, True, 60)
    """
    n = check_int(n_records, "n_records", low=1, func="generate_records")
    dup_rate = check_interval(dup_rate, "dup_rate", low=0, high=1, closed="left", func="generate_records")
    mc = check_int(max_corruptions, "max_corruptions", low=1, func="generate_records")
    rng = check_random_state(random_state)
    n_orig = max(1, int(round(n * (1 - dup_rate))))
    n_dup = n - n_orig
    given = _vocab(rng, max(200, min(20000, n // 20)), (1, 3))
    sur = _vocab(rng, max(500, min(200000, n // 4)), (2, 3))
    street = _vocab(rng, max(300, min(50000, n // 10)), (2, 3))
    suburb = _vocab(rng, max(100, min(10000, n // 50)), (2, 3))
    st_type = np.array(_STREET, dtype=object)
    g = given[rng.integers(0, given.size, n_orig)]
    s = sur[rng.integers(0, sur.size, n_orig)]
    num = rng.integers(1, 400, n_orig).astype(str).astype(object)
    addr = street[rng.integers(0, street.size, n_orig)] + " " + st_type[rng.integers(0, st_type.size, n_orig)]
    sub_idx = rng.integers(0, suburb.size, n_orig)
    subs = suburb[sub_idx]
    pc = (1000 + (sub_idx * 7919) % 8999).astype(str).astype(object)
    state = np.array(_STATES, dtype=object)[sub_idx % len(_STATES)]
    days = rng.integers(0, 365 * 80, n_orig)
    dob = (np.datetime64("1930-01-01") + days.astype("timedelta64[D]")).astype(str)
    dob = np.char.replace(dob, "-", "").astype(object)
    ssn = rng.integers(1_000_000, 9_999_999, n_orig).astype(str).astype(object)
    cols = {
        "given_name": g, "surname": s, "street_number": num, "address_1": addr, "suburb": subs,
        "postcode": pc, "state": state, "date_of_birth": dob, "soc_sec_id": ssn,
    }
    names = list(cols)
    ent = np.arange(n_orig)
    src = rng.integers(0, n_orig, n_dup)
    out = {k: np.concatenate([v, v[src]]) for k, v in cols.items()}
    entity = np.concatenate([ent, src])
    # corrupt duplicates
    k_corr = rng.integers(1, mc + 1, n_dup)
    textual = ["given_name", "surname", "address_1", "suburb", "street_number", "postcode", "date_of_birth", "soc_sec_id"]
    probs = np.array([0.2, 0.2, 0.15, 0.1, 0.05, 0.1, 0.1, 0.1])
    for d in range(n_dup):
        row = n_orig + d
        for _ in range(int(k_corr[d])):
            u = rng.random()
            if u < 0.08:  # swap names
                out["given_name"][row], out["surname"][row] = out["surname"][row], out["given_name"][row]
                continue
            f = textual[int(rng.choice(len(textual), p=probs))]
            if u < 0.2:  # missing value
                out[f][row] = ""
            elif f == "date_of_birth" and u < 0.3:
                v = out[f][row]
                if len(v) == 8:
                    out[f][row] = v[:4] + v[6:8] + v[4:6]
            else:
                out[f][row] = _typo(out[f][row], rng)
    perm = rng.permutation(n)
    df = pd.DataFrame({k: v[perm] for k, v in out.items()})
    df.insert(0, "entity", entity[perm])
    df.insert(0, "rec_id", [f"rec-{i}" for i in range(n)])
    df = df.replace("", np.nan)
    return df
