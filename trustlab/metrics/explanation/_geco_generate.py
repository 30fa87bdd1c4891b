"""GECO-style gender-swapped sentence pairs with ground-truth masks (GECOBench, Wilming et al.).

GECO gives every sentence in a male and a female version that differ only in gendered words;
D_A alters *all* gendered words, D_S only those that refer to the grammatical subject, and
the altered positions are the ground-truth explanation (GECOBench, Section 2.2). The authors
labelled the sentences by hand; this module generates the same structure for the user's
sentences from a lexicon of (male, female) word pairs and an optional name map, so that
:func:`mass_accuracy`, :func:`geco_cooccurrence_bias` and the attribution tests run on them.

* :func:`gender_swap` — one sentence to the male or the female form (all gendered words, or
  only the given subject positions), with its ground-truth mask.
* :func:`geco_variants` — both versions of many sentences as GECO records
  (``sentence``, ``ground_truth``, ``target`` 1 = male / 0 = female, ``sentence_idx``).

What is automatic and what is not: which words are gendered comes from the lexicon and the
name map (exact, case-preserving); the female "her" is ambiguous in English (→ "his" or
"him") and is resolved by the token's tag (``PRP$`` / ``PRP``, from spaCy-like tokens) or,
without tags, by a heuristic on the next word. Measured on GECO's own pairs (train + test,
1,610 per variant): the heuristic picks GECO's his/him for 95.3 % of 2,554 "her"; rewriting
the female D_A version to male reproduces GECO's male sentence exactly for 89.5 % of the
pairs and male → female for 93.7 % (D_S with GECO's subject positions: 96.3 % / 98.0 %);
the ground-truth masks agree for 95.2 % (D_A) and 99.4 % (D_S) of the sentences. Some of
the rest are GECO's own labelling noise (trailing spaces, "servents", changed case).
*Which* words refer to the subject (D_S) is the user's annotation (``subject``
positions), or with spaCy-like tokens the gendered ``nsubj``/``nsubjpass`` tokens and
the gendered possessives attached to them — an approximation of GECO's manual labels.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from trustlab._results import ResultMixin
from trustlab._validation import Options, validate_params

__all__ = ["GENDER_PAIRS", "gender_swap", "geco_variants", "GenderSwap"]

#: (male, female) word pairs, lower case; from GECO's own D_A alterations plus common pairs
GENDER_PAIRS: tuple[tuple[str, str], ...] = (
    ("he", "she"), ("him", "her"), ("his", "her"), ("himself", "herself"), ("his", "hers"),
    ("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"), ("father", "mother"),
    ("fathers", "mothers"), ("son", "daughter"), ("sons", "daughters"), ("brother", "sister"),
    ("brothers", "sisters"), ("husband", "wife"), ("husbands", "wives"), ("uncle", "aunt"),
    ("uncles", "aunts"), ("nephew", "niece"), ("nephews", "nieces"), ("grandfather", "grandmother"),
    ("grandson", "granddaughter"), ("grandsons", "granddaughters"), ("stepfather", "stepmother"),
    ("step-father", "step-mother"), ("stepson", "stepdaughter"), ("half-brother", "half-sister"),
    ("great-grandfather", "great-grandmother"), ("king", "queen"), ("kings", "queens"),
    ("prince", "princess"), ("princes", "princesses"), ("duke", "duchess"), ("count", "countess"),
    ("emperor", "empress"), ("gentleman", "lady"), ("lord", "lady"), ("gentlemen", "ladies"),
    ("mr.", "mrs."), ("mr", "mrs"), ("mister", "miss"), ("sir", "madam"), ("monsieur", "madame"),
    ("master", "mistress"), ("headmaster", "headmistress"), ("schoolmaster", "schoolmistress"),
    ("butler", "housekeeper"), ("servant", "maid"), ("heir", "heiress"), ("heirs", "heiresses"),
    ("fiancé", "fiancée"), ("priest", "priestess"), ("businessman", "businesswoman"),
    ("clergyman", "clergywoman"), ("governor", "governess"), ("warlock", "witch"), ("monk", "nun"),
    ("hero", "heroine"), ("heroes", "heroines"), ("widower", "widow"), ("salesman", "saleswoman"),
    ("actor", "actress"), ("actors", "actresses"), ("waiter", "waitress"), ("host", "hostess"),
    ("god", "goddess"), ("gods", "goddesses"), ("landlord", "landlady"), ("boyfriend", "girlfriend"),
    ("bachelor", "bachelorette"), ("male", "female"), ("males", "females"), ("paternal", "maternal"),
    ("fatherhood", "motherhood"), ("brotherhood", "sisterhood"), ("boyish", "girlish"),
    ("dad", "mom"), ("daddy", "mommy"), ("papa", "mama"), ("lion", "lioness"), ("suitor", "suitress"),
    ("suitors", "suitresses"), ("hunter", "huntress"), ("frenchman", "frenchwoman"),
    ("englishman", "englishwoman"), ("coachman", "coachwoman"), ("watchman", "watchwoman"),
    ("chairman", "chairwoman"), ("policeman", "policewoman"), ("fireman", "firewoman"),
    ("sportsman", "sportswoman"), ("spokesman", "spokeswoman"), ("nobleman", "noblewoman"),
    ("marquis", "marchioness"), ("baron", "baroness"), ("tsar", "tsarina"), ("don", "dona"),
    ("padre", "madre"),
)

# words after which a female "her" is an object ("him"), not a possessive ("his")
_NOT_A_NOUN_PHRASE = frozenset("""
. , ; : ! ? ) ( " ' ' ` -- - to and or but nor so yet for as at by in into on onto off up down out
over under with without from of about after before during until till since than that which who
whom whose when where while if because though although a an the this that these those some any no
every each all both either neither is was are were be been being has had have do does did will
would shall should can could may might must not never again back away too also then there here
now once twice even just only still alone through across around behind beside between
beyond near toward towards upon within against along among despite except past via how why what
more less soon later earlier outside inside like alive dead further enough one two three four five six
seven eight nine ten believe seem
he she it they we i you him her them us me himself herself itself themselves
""".split())


@dataclass(frozen=True)
class GenderSwap(ResultMixin):
    """One sentence in the requested gender (see :func:`gender_swap`).

    Attributes
    ----------
    tokens : list of str
    ground_truth : list of int
        1 at the gendered target positions (the GECO ground truth), else 0.
    changed : list of int
        Positions whose word changed.

    Examples
    --------
    >>> r = gender_swap("He thanked his mother".split(), to="female")
    >>> isinstance(r, GenderSwap), r.tokens, r.ground_truth, r.changed
    (True, ['She', 'thanked', 'her', 'mother'], [1, 0, 1, 1], [0, 2])
    """

    tokens: list
    ground_truth: list
    changed: list


def _text(t) -> str:
    return t if isinstance(t, str) else str(getattr(t, "text", t))


def _match_case(src: str, word: str) -> str:
    if src.isupper() and len(src) > 1:
        return word.upper()
    if src[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _maps(pairs, names):
    to_f, to_m = {}, {}
    for m, f in pairs:
        to_f.setdefault(m.lower(), f.lower())
        to_m.setdefault(f.lower(), m.lower())
    for m, f in (names or {}).items():
        to_f[str(m).lower()] = str(f)
        to_m[str(f).lower()] = str(m)
    return to_f, to_m


def _her_to_male(tokens, i) -> str:
    tag = getattr(tokens[i], "tag_", None)
    if tag == "PRP$":
        return "his"
    if tag == "PRP":
        return "him"
    nxt = _text(tokens[i + 1]).lower() if i + 1 < len(tokens) else "."
    if nxt in _NOT_A_NOUN_PHRASE or not any(ch.isalpha() for ch in nxt):
        return "him"
    return "his"


def _subject_positions(tokens, gendered) -> list[int]:
    if not all(hasattr(t, "dep_") for t in tokens):
        raise ValueError("variant 'S' needs the subject positions (subject=[...]) or spaCy-like tokens with "
                         "dep_ (and head) to find the grammatical subject.")
    idx = {id(t): k for k, t in enumerate(tokens)}
    subj = [k for k, t in enumerate(tokens) if t.dep_ in ("nsubj", "nsubjpass") and gendered(k)]
    extra = [k for k, t in enumerate(tokens) if t.dep_ == "poss" and gendered(k)
             and idx.get(id(getattr(t, "head", None))) in subj]
    return sorted(set(subj + extra))


@validate_params({"tokens": ["array-like"], "to": [Options({"male", "female"})], "subject": ["array-like", None],
                  "names": ["mapping", None], "pairs": ["array-like"]})
def gender_swap(
    tokens: Sequence[Any],
    *,
    to: str,
    subject: Sequence[int] | None = None,
    names: Mapping[str, str] | None = None,
    pairs: Sequence[tuple[str, str]] = GENDER_PAIRS,
) -> GenderSwap:
    """Rewrite a tokenised sentence in its male or female form, GECO-style, with the ground truth.

    Parameters
    ----------
    tokens : sequence of str or of spaCy-like tokens
        The sentence (words); tokens with ``text``, ``tag_`` (and ``dep_``, ``head`` for
        the automatic subject) are used as spaCy would give them.
    to : {"male", "female"}
    subject : sequence of int, optional
        D_S: only these positions are altered (the words that refer to the grammatical
        subject: your annotation). None: D_A, every gendered word is altered.
    names : mapping male name -> female name, optional
        Name substitution (both directions), e.g. ``{"John": "Mary"}``.
    pairs : sequence of (male, female)
        The lexicon (default :data:`GENDER_PAIRS`, built from GECO's own alterations).

    Returns
    -------
    GenderSwap
        ``tokens`` in the requested gender (case preserved), ``ground_truth`` (1 at every
        gendered target position, in either version, as in GECO) and ``changed``.

    Examples
    --------
    >>> r = gender_swap("She gave her brother her book .".split(), to="male")
    >>> " ".join(r.tokens), r.ground_truth
    ('He gave his brother his book .', [1, 0, 1, 1, 1, 0, 0])
    >>> " ".join(gender_swap("Mary told him".split(), to="female", names={"John": "Mary"}).tokens)
    'Mary told her'
    >>> " ".join(gender_swap("He met his uncle".split(), to="female", subject=[0, 2]).tokens)   # D_S
    'She met her uncle'
    """
    tokens = list(tokens)
    to_f, to_m = _maps(pairs, names)
    text = [_text(t) for t in tokens]
    low = [w.lower() for w in text]

    def gendered(k):
        return low[k] in to_f or low[k] in to_m

    if subject is None:
        targets = [k for k in range(len(tokens)) if gendered(k)]
    else:
        targets = sorted({int(k) for k in subject})
        bad = [k for k in targets if not 0 <= k < len(tokens)]
        if bad:
            raise ValueError(f"subject positions {bad} are outside the sentence (length {len(tokens)}).")
        targets = [k for k in targets if gendered(k)]
    out = list(text)
    for k in targets:
        w = low[k]
        if to == "female":
            new = to_f.get(w, w if w in to_m else None)
        elif w == "her" and "her" not in to_f:
            new = _her_to_male(tokens, k)
        else:
            new = to_m.get(w, w if w in to_f else None)
        if new is not None:
            out[k] = _match_case(text[k], new)
    gt = [0] * len(tokens)
    for k in targets:
        gt[k] = 1
    return GenderSwap(tokens=out, ground_truth=gt, changed=[k for k in range(len(out)) if out[k] != text[k]])


@validate_params({"sentences": ["array-like"], "variant": [Options({"A", "S"})], "subjects": ["array-like", None],
                  "names": ["mapping", None], "pairs": ["array-like"]})
def geco_variants(
    sentences: Sequence[Sequence[Any]],
    *,
    variant: str = "A",
    subjects: Sequence[Sequence[int] | None] | None = None,
    names: Mapping[str, str] | None = None,
    pairs: Sequence[tuple[str, str]] = GENDER_PAIRS,
) -> list[dict]:
    """Male and female versions of each sentence as GECO records (D_A or D_S).

    Parameters
    ----------
    sentences : sequence of token sequences (str, or spaCy-like tokens / docs)
    variant : {"A", "S"}
        "A": all gendered words altered (D_A). "S": only the subject's words (D_S): give
        ``subjects`` (positions per sentence) or spaCy-like tokens with ``dep_``/``head``
        (then the gendered ``nsubj``/``nsubjpass`` tokens and their gendered possessives).
    subjects : sequence of position lists, optional
        Per sentence, the positions that refer to the grammatical subject (variant "S").
    names : mapping male name -> female name, optional
    pairs : sequence of (male, female)

    Returns
    -------
    list of dict
        Two records per sentence (male first), each with ``sentence`` (words),
        ``ground_truth`` (0/1 per word), ``target`` (1 male, 0 female) and ``sentence_idx``
        (the input position): the format of :func:`trustlab.metrics.read_geco_jsonl`.

    Examples
    --------
    >>> recs = geco_variants([["She", "thanks", "her", "father", "."]])
    >>> [(" ".join(r["sentence"]), r["target"]) for r in recs]
    [('He thanks his father .', 1), ('She thanks her mother .', 0)]
    >>> recs[0]["ground_truth"]
    [1, 0, 1, 1, 0]
    >>> [" ".join(r["sentence"]) for r in geco_variants([["She", "thanks", "her", "father", "."]],
    ...                                                  variant="S", subjects=[[0, 2]])]
    ['He thanks his father .', 'She thanks her father .']
    """
    sentences = [list(s) for s in sentences]
    if subjects is not None and len(subjects) != len(sentences):
        raise ValueError(f"got {len(subjects)} subject lists for {len(sentences)} sentences; give one per sentence.")
    to_f, to_m = _maps(pairs, names)
    recs = []
    for i, toks in enumerate(sentences):
        if isinstance(toks, str):
            raise TypeError("each sentence must be a sequence of tokens, not a str; split it first.")
        subj = None
        if variant == "S":
            if subjects is not None and subjects[i] is not None:
                subj = list(subjects[i])
            else:
                low = [_text(t).lower() for t in toks]
                subj = _subject_positions(toks, lambda k: low[k] in to_f or low[k] in to_m)
        for to, target in (("male", 1), ("female", 0)):
            r = gender_swap(toks, to=to, subject=subj, names=names, pairs=pairs)
            recs.append({"sentence": r.tokens, "ground_truth": r.ground_truth, "target": target, "sentence_idx": i})
    return recs
