"""Synthetic records with known entities, for tests, scale runs and held-out checks.

* :func:`generate_records` — Febrl-style person records: each entity gets an original
  record; duplicates copy it and apply 1–3 corruptions (Febrl's kinds: character typos —
  substitution, insertion, deletion, transposition —, a missing value, a given-name /
  surname swap, a date day/month swap or digit change).
* :func:`generate_people` — people tables in several column shapes;
  :func:`generate_citations` — Cora-style citations with heavy-tailed cluster sizes.
* :func:`generate_products`, :func:`generate_companies`, :func:`generate_books` — record
  shapes unlike both (model numbers, legal forms and phone formats, ISBN-10 vs ISBN-13),
  the held-out files of ``bench/er_unseen.py``.

Names are drawn from syllable-built vocabularies (no real people or firms).
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from trustlab._validation import Interval, check_int, check_interval, check_random_state, validate_params

__all__ = [
    "generate_records",
    "generate_people",
    "generate_citations",
    "generate_products",
    "generate_companies",
    "generate_books",
    "PEOPLE_SHAPES",
    "SYNTHETIC_FIELDS",
    "SYNTHETIC_BLOCKING",
]

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


@validate_params(
    {
        "n_records": [Interval(numbers.Integral, 1, 10**8, closed="both")],
        "dup_rate": [Interval(numbers.Real, 0, 1, closed="left")],
        "max_corruptions": [Interval(numbers.Integral, 1, 100, closed="both")],
        "random_state": ["random_state"],
    }
)
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

    ent = np.arange(n_orig)
    src = rng.integers(0, n_orig, n_dup)
    out = {k: np.concatenate([v, v[src]]) for k, v in cols.items()}
    entity = np.concatenate([ent, src])
    # corrupt duplicates
    k_corr = rng.integers(1, mc + 1, n_dup)
    textual = [
        "given_name",
        "surname",
        "address_1",
        "suburb",
        "street_number",
        "postcode",
        "date_of_birth",
        "soc_sec_id",
    ]
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


# ---------------------------------------------------------------------------------------
# flexible generators: people with several column shapes, and citation-style records


def _pick(rng, arr, k):
    return arr[rng.integers(0, len(arr), k)]


_DOMAINS = np.array(["mail.com", "post.net", "inbox.org", "web.de", "example.co.uk"], dtype=object)
#: column spellings for :func:`generate_people` shapes
PEOPLE_SHAPES = {
    "split": {"first": "first_name", "last": "surname", "dob": "dob", "city": "city", "email": "email"},
    "upper": {"first": "FirstName", "last": "LastName", "dob": "BirthDate", "city": "Town", "email": "E-mail"},
    "full": {"name": "name", "dob": "date of birth", "city": "city", "email": "email", "phone": "phone"},
    "terse": {"first": "fn", "last": "ln", "dob": "born", "city": "loc", "email": "contact"},
}


@validate_params(
    {
        "n_records": [Interval(numbers.Integral, 2, 10**8, closed="both")],
        "shape": [str],
        "dup_rate": [Interval(numbers.Real, 0, 1, closed="left")],
        "missing_rate": [Interval(numbers.Real, 0, 1, closed="both")],
        "typo_rate": [Interval(numbers.Real, 0, 1, closed="both")],
        "max_cluster": [Interval(numbers.Integral, 1, 10**6, closed="both")],
        "date_format": [{"iso", "dmy", "compact"}],
        "id_col": [str],
        "truth_col": [str],
        "random_state": ["random_state"],
    }
)
def generate_people(
    n_records: int,
    *,
    shape: str = "split",
    dup_rate: float = 0.35,
    missing_rate: float = 0.08,
    typo_rate: float = 0.25,
    max_cluster: int = 5,
    date_format: str = "iso",
    id_col: str = "id",
    truth_col: str = "cluster",
    random_state: Any = None,
) -> pd.DataFrame:
    """People records (first name, surname, date of birth, city, e-mail, …) with typos,
    transpositions, missing values and true entity ids, in several column shapes.

    Parameters
    ----------
    n_records : int
        Total records.
    shape : {"split", "upper", "full", "terse"}
        Column names / layout (:data:`PEOPLE_SHAPES`); ``"full"`` has one ``name``
        column ("first last" or "last, first") and a phone column.
    dup_rate : float
        Share of records that duplicate another entity (clusters of up to ``max_cluster``).
    missing_rate, typo_rate : float
        Per-value probability of a blank / of a typo (substitution, insertion,
        deletion, transposition) in a duplicate.
    date_format : {"iso", "dmy", "compact"}
        ``1980-04-09``, ``09/04/1980`` or ``19800409``.
    id_col, truth_col : str
        Names of the record id and the true entity columns.
    random_state : int, Generator or None

    Examples
    --------
    >>> df = generate_people(200, random_state=1)
    >>> list(df.columns), len(df)
    (['id', 'first_name', 'surname', 'dob', 'city', 'email', 'cluster'], 200)
    """
    n = check_int(n_records, "n_records", low=2, func="generate_people")
    if shape not in PEOPLE_SHAPES:
        raise ValueError(f"unknown shape {shape!r}; valid shapes are {sorted(PEOPLE_SHAPES)}")
    if date_format not in ("iso", "dmy", "compact"):
        raise ValueError(f"unknown date_format {date_format!r}; valid: ['iso', 'dmy', 'compact']")
    rng = check_random_state(random_state)
    n_ent = max(1, int(round(n * (1 - dup_rate))))
    first_v = _vocab(rng, max(150, n // 8), (1, 3))
    last_v = _vocab(rng, max(400, n // 2), (2, 3))
    city_v = _vocab(rng, max(40, n // 40), (2, 3))
    # Zipf-like first names and cities (common values exist, as in real data)
    pf = 1.0 / np.arange(1, first_v.size + 1) ** 0.8
    pc = 1.0 / np.arange(1, city_v.size + 1) ** 1.0
    first = first_v[rng.choice(first_v.size, n_ent, p=pf / pf.sum())]
    last = last_v[rng.integers(0, last_v.size, n_ent)]
    city = city_v[rng.choice(city_v.size, n_ent, p=pc / pc.sum())]
    days = rng.integers(0, 365 * 70, n_ent)
    dob = np.datetime64("1940-01-01") + days.astype("timedelta64[D]")
    user = np.array([f"{a[:int(k)]}{b}{'' if d < 0.5 else int(d * 100)}" for a, b, k, d in
                     zip(first, last, rng.integers(1, 4, n_ent), rng.random(n_ent))], dtype=object)
    email = user + "@" + _pick(rng, _DOMAINS, n_ent)
    phone = np.array([f"0{rng.integers(200, 999)} {rng.integers(100, 999)} {rng.integers(1000, 9999)}"
                      for _ in range(n_ent)], dtype=object)
    # entity of each record: every entity once, the rest duplicates (cluster size capped)
    ent = list(range(n_ent))
    count = np.ones(n_ent, np.int64)
    while len(ent) < n:
        e = int(rng.integers(0, n_ent))
        if count[e] < max_cluster:
            ent.append(e)
            count[e] += 1
    ent = np.array(ent)
    is_dup = np.zeros(n, bool)
    is_dup[n_ent:] = True
    rows = []
    for r in range(n):
        e = ent[r]
        d = pd.Timestamp(dob[e])
        rec = {"first": first[e], "last": last[e], "city": city[e], "email": email[e], "phone": phone[e], "d": d}
        if is_dup[r]:
            for k in ("first", "last", "city", "email"):
                if rng.random() < typo_rate:
                    rec[k] = _typo(rec[k], rng)
            if rng.random() < 0.05:
                rec["first"], rec["last"] = rec["last"], rec["first"]
            if rng.random() < 0.1 and d.day <= 12:
                d = pd.Timestamp(year=d.year, month=d.day, day=d.month)
            elif rng.random() < 0.05:
                d = d + pd.Timedelta(days=int(rng.integers(-3, 4)))
            rec["d"] = d
            for k in ("first", "last", "city", "email", "phone", "d"):
                if rng.random() < missing_rate:
                    rec[k] = None
        rows.append(rec)
    fmt = {"iso": "%Y-%m-%d", "dmy": "%d/%m/%Y", "compact": "%Y%m%d"}[date_format]
    cols = PEOPLE_SHAPES[shape]
    out: dict[str, list] = {id_col: [f"p{i:06d}" for i in range(n)]}
    if "name" in cols:
        out[cols["name"]] = [
            None
            if (x["first"] is None and x["last"] is None)
            else (
                f"{x['last'] or ''}, {x['first'] or ''}"
                if rng.random() < 0.3
                else f"{x['first'] or ''} {x['last'] or ''}"
            ).strip()
            for x in rows
        ]
    else:
        out[cols["first"]] = [x["first"] for x in rows]
        out[cols["last"]] = [x["last"] for x in rows]
    out[cols["dob"]] = [None if x["d"] is None else x["d"].strftime(fmt) for x in rows]
    out[cols["city"]] = [x["city"] for x in rows]
    out[cols["email"]] = [x["email"] for x in rows]
    if "phone" in cols:
        out[cols["phone"]] = [x["phone"] for x in rows]
    out[truth_col] = ent
    perm = rng.permutation(n)
    df = pd.DataFrame(out).iloc[perm].reset_index(drop=True)
    df[id_col] = [f"p{i:06d}" for i in range(n)]
    return df


_TOPIC = ("learning", "neural", "networks", "data", "query", "optimization", "databases", "graph", "models",
          "inference", "bayesian", "distributed", "systems", "matching", "entity", "resolution", "efficient",
          "scalable", "approximate", "algorithms", "mining", "clustering", "information", "retrieval", "semantic",
          "web", "streams", "indexing", "probabilistic", "analysis", "kernel", "methods", "parallel", "robust",
          "structured", "prediction", "relational", "logic", "reasoning", "temporal", "spatial", "privacy")
_GLUE = ("for", "of", "in", "with", "and", "on", "via", "using", "towards", "a", "the")
_VENUES = (
    ("Proceedings of the International Conference on Very Large Data Bases", "VLDB"),
    ("ACM SIGMOD International Conference on Management of Data", "SIGMOD"),
    ("International Conference on Machine Learning", "ICML"),
    ("Advances in Neural Information Processing Systems", "NIPS"),
    ("IEEE International Conference on Data Engineering", "ICDE"),
    ("ACM SIGKDD Conference on Knowledge Discovery and Data Mining", "KDD"),
    ("Journal of Machine Learning Research", "JMLR"),
    ("Artificial Intelligence Journal", "AIJ"),
    ("Conference on Uncertainty in Artificial Intelligence", "UAI"),
    ("International Joint Conference on Artificial Intelligence", "IJCAI"),
    ("AAAI Conference on Artificial Intelligence", "AAAI"),
    ("ACM Transactions on Database Systems", "TODS"),
)


@validate_params(
    {
        "n_records": [Interval(numbers.Integral, 2, 10**8, closed="both")],
        "mean_cluster": [Interval(numbers.Real, 1, 10**6, closed="both")],
        "max_cluster": [Interval(numbers.Integral, 1, 10**6, closed="both")],
        "typo_rate": [Interval(numbers.Real, 0, 1, closed="both")],
        "missing_rate": [Interval(numbers.Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    }
)
def generate_citations(
    n_records: int,
    *,
    mean_cluster: float = 3.0,
    max_cluster: int = 40,
    typo_rate: float = 0.15,
    missing_rate: float = 0.08,
    random_state: Any = None,
) -> pd.DataFrame:
    """Citation-style records (``authors``, ``title``, ``venue``, ``year``) with true
    entity ids: author initials vs full names, dropped/reordered authors, title typos and
    dropped words, venue abbreviations, year off by one or missing; cluster sizes are
    heavy-tailed (a few papers cited many times), like Cora-style citation data.

    Parameters
    ----------
    n_records : int
        Number of records.
    mean_cluster : float
        Typical number of records per paper (sets the exponent of the heavy-tailed sizes).
    max_cluster : int
        Largest number of records per paper.
    typo_rate, missing_rate : float
        Share of values with a typo, and of values left empty.
    random_state : None, int or numpy.random.Generator
        Seed.

    Examples
    --------
    >>> df = generate_citations(120, random_state=0)
    >>> list(df.columns), len(df)
    (['id', 'authors', 'title', 'venue', 'year', 'cluster'], 120)
    """
    n = check_int(n_records, "n_records", low=2, func="generate_citations")
    rng = check_random_state(random_state)
    firsts = _vocab(rng, 300, (1, 3))
    lasts = _vocab(rng, max(300, n // 2), (2, 3))
    sizes = []
    while sum(sizes) < n:
        s = int(min(max_cluster, 1 + rng.zipf(1.0 + 1.0 / max(0.5, mean_cluster - 1.0))))
        sizes.append(min(s, n - sum(sizes)))
    n_ent = len(sizes)
    rows = []
    topic = np.array(_TOPIC, dtype=object)
    glue = np.array(_GLUE, dtype=object)
    for e in range(n_ent):
        k_auth = int(rng.integers(1, 5))
        auth = [(firsts[rng.integers(firsts.size)], lasts[rng.integers(lasts.size)]) for _ in range(k_auth)]
        words = []
        for t in range(int(rng.integers(4, 10))):
            words.append(topic[rng.integers(topic.size)] if t % 3 != 1 else glue[rng.integers(glue.size)])
        title = " ".join(words)
        venue = _VENUES[rng.integers(len(_VENUES))]
        year = int(rng.integers(1985, 2015))
        for c in range(sizes[e]):
            style = rng.random()
            a = list(auth)
            if c and rng.random() < 0.15 and len(a) > 1:
                a = a[:-1]
            names = [f"{f[0]}. {l}" if style < 0.5 else (f"{f} {l}" if style < 0.85 else f"{l}, {f[0]}.") for f, l in a]
            if c:
                names = [_typo(x, rng) if rng.random() < typo_rate else x for x in names]
            authors = (
                (", ".join(names[:-1]) + " and " + names[-1])
                if len(names) > 1 and rng.random() < 0.5
                else ", ".join(names)
            )
            t = title
            if c:
                w = t.split()
                if rng.random() < 0.2 and len(w) > 4:
                    del w[int(rng.integers(len(w)))]
                w = [_typo(x, rng) if rng.random() < typo_rate / 2 else x for x in w]
                t = " ".join(w)
                if rng.random() < 0.5:
                    t = t.title()
            v = venue[0] if (c == 0 or rng.random() < 0.5) else venue[1]
            if c and rng.random() < 0.1:
                v = "In " + v
            y = year if not (c and rng.random() < 0.08) else year + int(rng.choice([-1, 1]))
            rec = {"authors": authors, "title": t, "venue": v, "year": str(y), "cluster": e}
            if c:
                for k in ("authors", "venue", "year"):
                    if rng.random() < missing_rate:
                        rec[k] = None
            rows.append(rec)
    df = pd.DataFrame(rows).iloc[rng.permutation(n)].reset_index(drop=True)
    df.insert(0, "id", [f"c{i:05d}" for i in range(n)])
    return df


# --------------------------------------------------------------------------------------
# Record shapes unlike people and citations: products, companies, books. These are the
# held-out shapes of ``bench/er_unseen.py`` (the resolver's defaults were never tuned on
# them); every draw order is fixed, so a seed gives the same table in every release.

_SYL = ["ka", "lo", "mi", "ren", "tor", "va", "zen", "qui", "bra", "del", "fin", "gro", "hal", "jun", "mar", "nex",
        "pol", "sol", "tri", "vex", "wil", "xan", "yor", "zu", "ber", "cor", "dan", "eli", "fro", "gan"]


def _words(rng: np.random.Generator, k: int, syl: tuple[int, int] = (2, 3)) -> np.ndarray:
    out: set = set()
    while len(out) < k:
        out.add("".join(rng.choice(_SYL, rng.integers(syl[0], syl[1] + 1))))
    return np.array(sorted(out), dtype=object)


def _typo_inner(s: str, rng: np.random.Generator) -> str:
    """One deletion, transposition or vowel substitution away from the ends of ``s``."""
    if not s or len(s) < 3:
        return s
    p = int(rng.integers(1, len(s) - 1))
    op = rng.integers(3)
    if op == 0:
        return s[:p] + s[p + 1:]
    if op == 1:
        return s[:p] + s[p + 1] + s[p] + s[p + 2:]
    return s[:p] + "aeiou"[int(rng.integers(5))] + s[p + 1:]


def _entity_of_record(rng: np.random.Generator, n: int, dup_rate: float, max_size: int) -> tuple[int, np.ndarray]:
    """``round(n * (1 - dup_rate))`` entities with one record each, then duplicates of
    uniformly drawn entities (at most ``max_size`` records per entity)."""
    n_ent = max(1, int(round(n * (1 - dup_rate))))
    ent = list(range(min(n_ent, n)))
    cnt = np.ones(n_ent, int)
    while len(ent) < n:
        e = int(rng.integers(n_ent))
        if cnt[e] < max_size:
            ent.append(e)
            cnt[e] += 1
    return n_ent, np.array(ent)


def _with_duplicate_flag(ent: np.ndarray, n_ent: int):
    """``(entity, is_duplicate)`` for each record in order: an entity's first record is
    its original, later ones are duplicates."""
    seen = np.zeros(n_ent, bool)
    for e in ent:
        yield e, bool(seen[e])
        seen[e] = True


def _shuffled_table(rows: list, rng: np.random.Generator, id_prefix: str) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    df.insert(0, "id", [f"{id_prefix}{i:06d}" for i in range(len(df))])
    return df


#: the parameters every record-shape generator below takes
_SHAPE_PARAMS = {"n_records": [Interval(numbers.Integral, 2, 10**8, closed="both")], "random_state": ["random_state"]}

_BRANDS = {"Sonara": ["sonara", "SONARA", "Sonara Inc."], "Kelvix": ["kelvix", "Kelvix Corp", "KELVIX"],
           "Hewton-Pack": ["Hewton-Pack", "HP", "Hewton Pack"], "Mitsu Denki": ["Mitsu Denki", "Mitsu", "MD"],
           "Auralis": ["Auralis", "auralis"], "Zentro": ["Zentro", "ZENTRO", "Zentro Ltd"],
           "Bravik": ["Bravik", "bravik"], "Orlen": ["Orlen", "ORLEN", "Orlen Electronics"]}
_CATEGORY_WORDS = {"headphones": ["Wireless", "Noise Cancelling", "Over-Ear", "Bluetooth", "Headphones"],
                   "laptop": ["Laptop", "15.6 inch", "16GB RAM", "512GB SSD", "Notebook"],
                   "camera": ["Mirrorless", "Camera", "24MP", "4K Video", "Body Only"],
                   "monitor": ["Monitor", "27 inch", "IPS", "144Hz", "QHD"],
                   "phone": ["Smartphone", "128GB", "Unlocked", "5G", "Dual SIM"]}
_COLORS = ["Black", "Silver", "White", "Blue", "Red", "Graphite"]


@validate_params(_SHAPE_PARAMS)
def generate_products(n_records: int, *, random_state: Any = None) -> pd.DataFrame:
    """Product offers (``title``, ``brand``, ``price``, ``category``) with true entity ids.

    A title is brand + model number + 2-4 category words + colour; a duplicate may
    shuffle or drop words, drop the model number's hyphen (``AB-1234`` / ``AB1234``),
    spell the brand another way (``Hewton-Pack`` / ``HP``), move the price by up to
    7 %, lower-case the title or carry one typo; 10 % of brands and prices are blank.
    Titles of one category share most words, so the model number is what tells two
    products apart. 40 % duplicates, at most 5 records per product.

    Parameters
    ----------
    n_records : int
        Total records (>= 2).
    random_state : None, int or numpy.random.Generator
        Seed; ``None`` draws fresh entropy.

    Returns
    -------
    pandas.DataFrame
        Columns ``id, title, brand, price, category, cluster`` (``cluster``: the true
        entity id), rows in random order.

    Examples
    --------
    >>> df = generate_products(50, random_state=0)
    >>> list(df.columns), len(df), df["cluster"].nunique() < 50
    (['id', 'title', 'brand', 'price', 'category', 'cluster'], 50, True)
    """
    rng = check_random_state(random_state)
    n_ent, ent = _entity_of_record(rng, int(n_records), 0.4, 5)
    bk, ck = list(_BRANDS), list(_CATEGORY_WORDS)
    E = []
    for _ in range(n_ent):
        b, c = bk[rng.integers(len(bk))], ck[rng.integers(len(ck))]
        model = f"{''.join(rng.choice(list('ABCDEFGHJKLMNPRSTWXZ'), 2))}-{rng.integers(100, 9999)}"
        words = list(rng.choice(_CATEGORY_WORDS[c], rng.integers(2, 5), replace=False))
        E.append({"brand": b, "cat": c, "model": model, "words": words, "color": _COLORS[rng.integers(len(_COLORS))],
                  "price": float(np.round(np.exp(rng.normal(5.5, 0.8)), 2))})
    rows = []
    for e, dup in _with_duplicate_flag(ent, n_ent):
        x = E[e]
        words, model, brand = list(x["words"]), x["model"], x["brand"]
        price = x["price"]
        if dup:
            if rng.random() < 0.5:
                rng.shuffle(words)
            if rng.random() < 0.3 and len(words) > 2:
                words.pop(int(rng.integers(len(words))))
            if rng.random() < 0.4:
                model = model.replace("-", "")
            if rng.random() < 0.5:
                brand = _BRANDS[brand][rng.integers(len(_BRANDS[brand]))]
            price = round(price * float(rng.uniform(0.93, 1.07)), 2) if rng.random() < 0.6 else price
        title = " ".join([brand.split()[0], model, *words, x["color"]])
        if dup and rng.random() < 0.3:
            title = _typo_inner(title, rng)
        if dup and rng.random() < 0.3:
            title = title.lower()
        rows.append({"title": title, "brand": brand if rng.random() > 0.1 else None,
                     "price": f"{price:.2f}" if rng.random() > 0.1 else None, "category": x["cat"], "cluster": e})
    return _shuffled_table(rows, rng, "r")


@validate_params(_SHAPE_PARAMS)
def generate_companies(n_records: int, *, random_state: Any = None) -> pd.DataFrame:
    """Company records (``company_name``, ``street_address``, ``phone``, ``city``,
    ``zip``) with true entity ids.

    A duplicate may use another legal form (``Inc`` / ``Inc.`` / ``Incorporated`` /
    none), abbreviate the street suffix (``Avenue`` / ``Ave``), add a suite, write the
    phone as ``(312) 555-0100``, ``312.555.0100``, ``+1 312 555 0100`` or digits only,
    upper-case the name or carry one typo; addresses, phones and postcodes are sometimes
    blank. 40 % duplicates, at most 5 records per company.

    Parameters
    ----------
    n_records : int
        Total records (>= 2).
    random_state : None, int or numpy.random.Generator
        Seed; ``None`` draws fresh entropy.

    Returns
    -------
    pandas.DataFrame
        Columns ``id, company_name, street_address, phone, city, zip, cluster``, rows in
        random order.

    Examples
    --------
    >>> df = generate_companies(40, random_state=0)
    >>> list(df.columns)
    ['id', 'company_name', 'street_address', 'phone', 'city', 'zip', 'cluster']
    """
    rng = check_random_state(random_state)
    n = int(n_records)
    forms = [["Inc", "Inc.", "Incorporated", ""], ["LLC", "L.L.C.", ""], ["Ltd", "Limited", "Ltd."],
             ["Corp", "Corporation"]]
    kinds = ["Consulting", "Logistics", "Bakery", "Dental", "Software", "Plumbing", "Capital", "Design", "Foods",
             "Motors"]
    streets = _words(rng, 300)
    suffix = [("Street", "St"), ("Avenue", "Ave"), ("Road", "Rd"), ("Boulevard", "Blvd"), ("Drive", "Dr")]
    cities = _words(rng, 40, (2, 2))
    stems = _words(rng, 1500)
    n_ent, ent = _entity_of_record(rng, n, 0.4, 5)
    E = []
    for _ in range(n_ent):
        f = forms[rng.integers(len(forms))]
        E.append({"stem": stems[rng.integers(len(stems))].title(), "kind": kinds[rng.integers(len(kinds))], "forms": f,
                  "num": int(rng.integers(1, 9999)), "street": streets[rng.integers(len(streets))].title(),
                  "suf": suffix[rng.integers(len(suffix))], "city": cities[rng.integers(len(cities))].title(),
                  "zip": f"{rng.integers(10000, 99999)}", "phone": rng.integers(0, 10, 10)})
    rows = []
    for e, dup in _with_duplicate_flag(ent, n_ent):
        x = E[e]
        form = x["forms"][rng.integers(len(x["forms"]))] if dup else x["forms"][0]
        name = " ".join(w for w in (x["stem"], x["kind"], form) if w)
        suf = x["suf"][int(rng.integers(2))] if dup else x["suf"][0]
        addr = f"{x['num']} {x['street']} {suf}"
        if dup and rng.random() < 0.2:
            addr += f", Suite {rng.integers(1, 500)}"
        d = "".join(map(str, x["phone"]))
        style = int(rng.integers(4)) if dup else 0
        phone = [f"({d[:3]}) {d[3:6]}-{d[6:]}", f"{d[:3]}.{d[3:6]}.{d[6:]}", f"+1 {d[:3]} {d[3:6]} {d[6:]}", d][style]
        if dup and rng.random() < 0.25:
            name = _typo_inner(name, rng)
        if dup and rng.random() < 0.3:
            name = name.upper()
        rows.append({"company_name": name, "street_address": addr if rng.random() > 0.08 else None,
                     "phone": phone if rng.random() > 0.15 else None, "city": x["city"],
                     "zip": x["zip"] if rng.random() > 0.1 else None, "cluster": e})
    return _shuffled_table(rows, rng, "r")


def _isbn13(core9: str) -> str:
    s = "978" + core9
    c = (10 - sum(int(ch) * (1 if i % 2 == 0 else 3) for i, ch in enumerate(s)) % 10) % 10
    return s + str(c)


def _isbn10(core9: str) -> str:
    c = (11 - sum((10 - i) * int(ch) for i, ch in enumerate(core9)) % 11) % 11
    return core9 + ("X" if c == 10 else str(c))


@validate_params(_SHAPE_PARAMS)
def generate_books(n_records: int, *, random_state: Any = None) -> pd.DataFrame:
    """Book records (``isbn``, ``book_title``, ``author``, ``publisher``, ``year``) with
    true entity ids.

    A duplicate may give the ISBN-10 instead of the ISBN-13 (both with valid check
    digits), a hyphenated ISBN-13 or none; drop the subtitle; write the author as
    ``First Last``, ``Last, First`` or ``F. Last``; use the publisher's short name; be
    a year off; carry one title typo. 35 % duplicates, at most 4 records per book.

    Parameters
    ----------
    n_records : int
        Total records (>= 2).
    random_state : None, int or numpy.random.Generator
        Seed; ``None`` draws fresh entropy.

    Returns
    -------
    pandas.DataFrame
        Columns ``id, isbn, book_title, author, publisher, year, cluster``, rows in
        random order.

    Examples
    --------
    >>> df = generate_books(30, random_state=0)
    >>> list(df.columns)
    ['id', 'isbn', 'book_title', 'author', 'publisher', 'year', 'cluster']
    >>> _isbn10("030640615"), _isbn13("030640615")
    ('0306406152', '9780306406157')
    """
    rng = check_random_state(random_state)
    firsts = _words(rng, 200, (1, 2))
    lasts = _words(rng, 800)
    tw = _words(rng, 400)
    pubs = [("Penwick Press", "Penwick"), ("Harlow & Sons", "Harlow"), ("Oxbridge University Press", "OUP"),
            ("Stellar Books", "Stellar"), ("North Gate Publishing", "North Gate"), ("Random Tower", "RT")]
    n_ent, ent = _entity_of_record(rng, int(n_records), 0.35, 4)
    E = []
    for _ in range(n_ent):
        t = " ".join(rng.choice(tw, rng.integers(2, 5))).title()
        sub = " ".join(rng.choice(tw, rng.integers(2, 4))).title() if rng.random() < 0.5 else ""
        E.append({"title": t, "sub": sub, "first": firsts[rng.integers(len(firsts))].title(),
                  "last": lasts[rng.integers(len(lasts))].title(), "pub": pubs[rng.integers(len(pubs))],
                  "year": int(rng.integers(1950, 2024)), "core": "".join(map(str, rng.integers(0, 10, 9)))})
    rows = []
    for e, dup in _with_duplicate_flag(ent, n_ent):
        x = E[e]
        title = x["title"] + (f": {x['sub']}" if x["sub"] and (not dup or rng.random() < 0.5) else "")
        st = int(rng.integers(3)) if dup else 0
        author = [f"{x['first']} {x['last']}", f"{x['last']}, {x['first']}", f"{x['first'][0]}. {x['last']}"][st]
        k = int(rng.integers(4)) if dup else 0
        i13, i10 = _isbn13(x["core"]), _isbn10(x["core"])
        isbn = [i13, i10, f"{i13[:3]}-{i13[3]}-{i13[4:8]}-{i13[8:12]}-{i13[12]}", None][k]
        if dup and rng.random() < 0.2:
            title = _typo_inner(title, rng)
        year = x["year"] + (int(rng.choice([-1, 1])) if dup and rng.random() < 0.1 else 0)
        pub = x["pub"][int(dup and rng.random() < 0.5)]
        rows.append({"isbn": isbn, "book_title": title, "author": author, "publisher": pub, "year": str(year),
                     "cluster": e})
    return _shuffled_table(rows, rng, "r")
