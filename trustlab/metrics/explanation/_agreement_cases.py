"""Ding & Koehn's number-agreement test-case construction rules (NAACL 2021,
Appendix A.1, the PTB part).

From a dependency-parsed sentence, a test case is the prefix up to a present-tense verb (or
copula) whose subject is a noun, with the expected number of the verb, the subject as the cue
and the nouns of the other number before the verb as attractors. The rules (App. A and the
released ``prepare_ptb_dataset.py`` of shuoyangd/tarsius):

1. the verb is VBZ/VBP, or a present/past copula (is/are/was/were) attached to a predicate
   that has the noun subject; the subject precedes it (no "says the chancellor");
2. the subject is singular (NN/NNP) with a VBZ verb or plural (NNS/NNPS) with a VBP verb
   (copulas: the subject's number decides); attractors are nouns of the other number that
   precede the verb, the subject excluded — at least one is required;
3. an attractor that is a compound modifier (``nn``/``compound``) of a plural noun is dropped
   ("customer services");
4. the verb must not immediately follow its subject;
5. a case whose attractors are all more than 10 words away from the subject is dropped.

PTB itself is LDC-licensed; these rules run on the user's parses (CoNLL rows or spaCy-like
tokens). The released script has slips the rules above do not copy: its copula branch reads
the subject's tag at a list index instead of the subject's id and skips every copula whose
predicate follows it (its comment says it meant questions such as "are you …?"), and rule 3
tests the verb's relation rather than the attractor's. So the released PTB cases may differ.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

from trustlab._validation import Interval, validate_params

__all__ = ["agreement_cases"]

_SING = ("NN", "NNP")
_PLUR = ("NNS", "NNPS")
_COP_FORMS = {"is": 0, "was": 0, "are": 1, "were": 1}


def _rows(sentence) -> list[tuple[str, str, int, str]]:
    """(form, tag, head (0-based, -1 root), deprel) per token."""
    items = list(sentence)
    if not items:
        raise ValueError("the sentence is empty.")
    if all(hasattr(t, "tag_") and hasattr(t, "head") for t in items):
        base = items[0].i
        return [(str(t.text), str(t.tag_), -1 if t.head.i == t.i else t.head.i - base, str(t.dep_)) for t in items]
    out = []
    for k, r in enumerate(items):
        try:
            form, tag, head, dep = r
            out.append((str(form), str(tag), int(head) - 1, str(dep)))
        except (TypeError, ValueError):
            raise ValueError(f"token {k} must be a (form, PTB tag, CoNLL head (1-based, 0 = root), deprel) row or a "
                             "spaCy-like token with text, tag_, dep_ and head.") from None
    return out


@validate_params({"sentence": ["array-like"], "max_distance": [Interval(numbers.Integral, 0, None, closed="left")]})
def agreement_cases(sentence: Sequence[Any], *, max_distance: int = 10) -> list[dict]:
    """Number-agreement test cases of one parsed sentence (Ding & Koehn, NAACL 2021, App. A.1).

    Parameters
    ----------
    sentence : sequence of (form, tag, head, deprel) rows or spaCy-like tokens
        Penn Treebank tags; CoNLL heads (1-based, 0 = root); Stanford/UD relations
        (``nsubj``, ``cop``, ``nn``/``compound``).
    max_distance : int
        Rule 5: drop a case whose attractors are all farther than this from the subject.

    Returns
    -------
    list of dict
        ``prefix`` (tokens before the verb), ``tag`` (0 singular / 1 plural: the expected
        verb number, as the released ``all.tag.txt``), ``cue`` ([(subject, subject)]),
        ``attractors`` ([(i, i), ...]) — the ``all.subjs.txt`` format read by
        :func:`trustlab.metrics.read_spans` — and ``verb`` (its index).

    Examples
    --------
    >>> rows = [("The", "DT", 2, "det"), ("keys", "NNS", 6, "nsubj"), ("to", "TO", 5, "case"),
    ...         ("the", "DT", 5, "det"), ("cabinet", "NN", 2, "nmod"), ("are", "VBP", 0, "ROOT"),
    ...         ("here", "RB", 6, "advmod")]
    >>> agreement_cases(rows)
    [{'prefix': ['The', 'keys', 'to', 'the', 'cabinet'], 'tag': 1, 'cue': [(1, 1)], 'attractors': [(4, 4)], \
'verb': 5}]
    """
    rows = _rows(sentence)
    n = len(rows)
    if any(not -1 <= h < n for _, _, h, _ in rows):
        raise ValueError(f"a head index is outside [0, {n}] (1-based, 0 = root).")
    cands = []  # (subject, verb, tag)
    for s, (_, stag, head, dep) in enumerate(rows):
        if dep not in ("nsubj", "nsubjpass") or head < 0 or s > head:
            continue
        if stag not in _SING + _PLUR:
            continue
        htag, hdep = rows[head][1], rows[head][3]
        if htag in ("VBZ", "VBP") and hdep != "cop":
            if (htag == "VBZ") == (stag in _SING):
                cands.append((s, head, 0 if htag == "VBZ" else 1))
        for c, (form, ctag, chead, cdep) in enumerate(rows):   # copula attached to the predicate
            if cdep == "cop" and chead == head and c > s and form.lower() in _COP_FORMS \
                    and ctag not in ("VB", "VBN", "VBG"):
                cands.append((s, c, 0 if stag in _SING else 1))
    out = []
    for s, v, tag in sorted(set(cands), key=lambda x: (x[1], x[0])):
        other = _PLUR if tag == 0 else _SING
        attrs = [a for a in range(v) if a != s and rows[a][1] in other]
        attrs = [a for a in attrs if not (rows[a][3] in ("nn", "compound") and rows[a][2] >= 0
                                          and rows[rows[a][2]][1] in _PLUR)]
        if not attrs or v - s == 1 or min(abs(a - s) for a in attrs) > max_distance:
            continue
        out.append({"prefix": [r[0] for r in rows[:v]], "tag": tag, "cue": [(s, s)],
                    "attractors": [(a, a) for a in attrs], "verb": v})
    return out
