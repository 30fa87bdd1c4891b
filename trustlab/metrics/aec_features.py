"""AEC interpretable features from parsed text (Misra, Liu & Mahmud, TrustNLP 2021,
Section 3.3.1, feature groups (a)–(c)).

The error classifier of :mod:`trustlab.metrics.aec` is trained on interpretable features, all
normalised by sentence length (number of tokens):

(a) :func:`dependency_triples` — generalised dependency triples ``rel-HEADTAG-DEPTAG``
    (e.g. ``amod-NN-JJ``, ``nummod-NNS-CD``) from spaCy-like parses;
(b) :func:`nrc_emotion_counts` — NRC Emotion Lexicon counts for the 8 emotions plus negative /
    positive (the paper says "8 emotion classes" but lists 10); the lexicon file is yours
    (NRC's research licence does not allow bundling it): :func:`read_nrc_lexicon` reads its
    ``word<TAB>emotion<TAB>0/1`` format;
(c) :func:`entity_type_counts` — named-entity type counts (spaCy ``doc.ents`` labels);
(d) :func:`trustlab.metrics.conversational_cues` — the Oraby et al. cues.

:func:`aec_feature_matrix` puts them side by side. Nothing is parsed or downloaded here: pass
spaCy ``Doc`` objects (or anything with the same attributes: tokens with ``dep_``, ``tag_``,
``head``, ``text``; ``ents`` with ``label_``) or plain lists (triples, tokens, labels).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from trustlab._validation import validate_params

__all__ = ["FeatureMatrix", "dependency_triples", "nrc_emotion_counts", "read_nrc_lexicon", "entity_type_counts",
           "aec_feature_matrix", "NRC_EMOTIONS"]

#: the 10 NRC classes (8 emotions + negative/positive), in the lexicon's order
NRC_EMOTIONS = ("anger", "anticipation", "disgust", "fear", "joy", "negative", "positive", "sadness", "surprise",
                "trust")


@dataclass(frozen=True)
class FeatureMatrix:
    """Features per document: ``X`` (n_docs, n_features) and the column ``names``."""

    X: np.ndarray
    names: list

    def to_frame(self):
        """As a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.X, columns=self.names)


def _length(doc) -> int:
    try:
        return max(len(doc), 1)
    except TypeError:
        return max(sum(1 for _ in doc), 1)


def _tokens_of(doc) -> list[str]:
    if isinstance(doc, str):
        return doc.split()
    return [t if isinstance(t, str) else str(getattr(t, "text", t)) for t in doc]


def _matrix(rows: list[dict], lengths: list[int], names: list | None) -> FeatureMatrix:
    if names is None:
        names = sorted({k for r in rows for k in r})
    col = {k: j for j, k in enumerate(names)}
    X = np.zeros((len(rows), len(names)))
    for i, r in enumerate(rows):
        for k, v in r.items():
            j = col.get(k)
            if j is not None:
                X[i, j] = v
        X[i] /= lengths[i]
    return FeatureMatrix(X=X, names=list(names))


@validate_params({"docs": ["array-like"], "vocabulary": ["array-like", None], "skip": ["array-like"]})
def dependency_triples(docs: Sequence[Any], *, vocabulary: Sequence[str] | None = None,
                       skip: Sequence[str] = ("ROOT",)) -> FeatureMatrix:
    """AEC feature group (a): counts of ``rel-HEADTAG-DEPTAG`` triples per document, divided by its length.

    Parameters
    ----------
    docs : sequence of spaCy-like docs, or of lists of (rel, head_tag, dep_tag) triples
        A doc's tokens need ``dep_``, ``tag_`` and ``head`` (fine-grained PTB tags, as the
        paper's ``amod-NN-JJ``); for plain triple lists the length is the number of triples
        plus one (the root).
    vocabulary : sequence of str, optional
        Fix the columns (e.g. those of the training set); other triples are ignored.
    skip : sequence of str
        Relations left out (the root's self-attachment by default).

    Returns
    -------
    FeatureMatrix

    Examples
    --------
    >>> from types import SimpleNamespace as T
    >>> toks = [T(text="two", tag_="CD", dep_="nummod"), T(text="big", tag_="JJ", dep_="amod"),
    ...         T(text="dogs", tag_="NNS", dep_="ROOT")]
    >>> for t in toks: t.head = toks[2]
    >>> f = dependency_triples([toks])
    >>> f.names, f.X.round(3).tolist()
    (['amod-NNS-JJ', 'nummod-NNS-CD'], [[0.333, 0.333]])
    """
    skip = set(skip)
    rows, lengths = [], []
    for k, doc in enumerate(docs):
        counts: dict[str, int] = {}
        items = list(doc)
        if items and all(isinstance(t, (tuple, list)) and len(t) == 3 for t in items):
            triples = [tuple(map(str, t)) for t in items]
            n = len(items) + 1
        else:
            try:
                triples = [(t.dep_, t.head.tag_, t.tag_) for t in items]
            except AttributeError:
                raise ValueError(f"docs[{k}] must be a spaCy-like doc (tokens with dep_, tag_, head) or a list of "
                                 "(rel, head_tag, dep_tag) triples.") from None
            n = len(items)
        for rel, ht, dt in triples:
            if rel in skip:
                continue
            key = f"{rel}-{ht}-{dt}"
            counts[key] = counts.get(key, 0) + 1
        rows.append(counts)
        lengths.append(max(n, 1))
    return _matrix(rows, lengths, None if vocabulary is None else list(vocabulary))


@validate_params({"path": ["path"]})
def read_nrc_lexicon(path) -> dict[str, frozenset]:
    """Read the NRC Emotion Lexicon's word-level file (``word<TAB>emotion<TAB>0|1`` lines).

    Parameters
    ----------
    path : path
        E.g. ``NRC-Emotion-Lexicon-Wordlevel-v0.92.txt`` (downloaded by you from NRC).

    Returns
    -------
    dict
        word -> frozenset of its classes (only the 1 entries).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "nrc.txt")
    >>> _ = open(p, "w").write("abandon\\tfear\\t1\\nabandon\\tjoy\\t0\\nabandon\\tsadness\\t1\\n")
    >>> sorted(read_nrc_lexicon(p)["abandon"])
    ['fear', 'sadness']
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"NRC lexicon file {str(p)!r} does not exist")
    lex: dict[str, set] = {}
    for ln, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.strip().split("\t")
        if len(parts) != 3:
            if line.strip():
                raise ValueError(f"{p}:{ln}: expected 'word<TAB>emotion<TAB>0|1', got {line.strip()!r}.")
            continue
        word, emo, flag = parts
        lex.setdefault(word.lower(), set())
        if flag.strip() == "1":
            lex[word.lower()].add(emo)
    return {w: frozenset(e) for w, e in lex.items()}


@validate_params({"docs": ["array-like"], "lexicon": ["mapping", "path"], "classes": ["array-like"]})
def nrc_emotion_counts(docs: Sequence[Any], lexicon: Mapping[str, Any] | str,
                       *, classes: Sequence[str] = NRC_EMOTIONS) -> FeatureMatrix:
    """AEC feature group (b): NRC emotion counts per document, divided by its number of tokens.

    A token counts once for every class the lexicon gives it (lower-cased lookup).

    Parameters
    ----------
    docs : sequence of spaCy-like docs, token lists or whitespace-tokenised strings
    lexicon : mapping word -> classes, or the path of the NRC word-level file
    classes : sequence of str
        The columns (default the 10 NRC classes).

    Returns
    -------
    FeatureMatrix

    Examples
    --------
    >>> lex = {"happy": {"joy", "positive"}, "storm": {"fear", "negative"}}
    >>> f = nrc_emotion_counts(["a happy day", "storm storm ahead !"], lex)
    >>> f.to_frame()[["fear", "joy", "positive"]].round(2).values.tolist()
    [[0.0, 0.33, 0.33], [0.5, 0.0, 0.0]]
    """
    lex = read_nrc_lexicon(lexicon) if isinstance(lexicon, (str, Path)) else \
        {str(w).lower(): frozenset(v) for w, v in lexicon.items()}
    classes = list(classes)
    rows, lengths = [], []
    for doc in docs:
        toks = _tokens_of(doc)
        counts: dict[str, int] = {}
        for t in toks:
            for c in lex.get(t.lower(), ()):
                counts[c] = counts.get(c, 0) + 1
        rows.append(counts)
        lengths.append(max(len(toks), 1))
    return _matrix(rows, lengths, classes)


@validate_params({"docs": ["array-like"], "labels": ["array-like", None], "lengths": ["array-like", None]})
def entity_type_counts(docs: Sequence[Any], *, labels: Sequence[str] | None = None,
                       lengths: Sequence[int] | None = None) -> FeatureMatrix:
    """AEC feature group (c): named-entity type counts per document, divided by its length.

    Parameters
    ----------
    docs : sequence of spaCy-like docs (``ents`` with ``label_``) or of label lists
    labels : sequence of str, optional
        Fix the columns (e.g. spaCy's 18 OntoNotes types); default: the labels seen.
    lengths : sequence of int, optional
        Token counts for label lists (a doc's own length is used otherwise).

    Returns
    -------
    FeatureMatrix

    Examples
    --------
    >>> f = entity_type_counts([["ORG", "GPE"], ["ORG"]], lengths=[10, 4])
    >>> f.names, f.X.tolist()
    (['GPE', 'ORG'], [[0.1, 0.1], [0.0, 0.25]])
    """
    docs = list(docs)
    if lengths is not None and len(lengths) != len(docs):
        raise ValueError(f"got {len(lengths)} lengths for {len(docs)} docs; give one per doc.")
    rows, lens = [], []
    for k, doc in enumerate(docs):
        ents = getattr(doc, "ents", None)
        labs = [str(e.label_) for e in ents] if ents is not None else [str(x) for x in doc]
        counts: dict[str, int] = {}
        for lab in labs:
            counts[lab] = counts.get(lab, 0) + 1
        rows.append(counts)
        if lengths is not None:
            lens.append(max(int(lengths[k]), 1))
        elif ents is not None:
            lens.append(_length(doc))
        else:
            raise ValueError("label lists need lengths= (the token count of each document).")
    return _matrix(rows, lens, None if labels is None else list(labels))


@validate_params({"docs": ["array-like"], "nrc_lexicon": ["mapping", "path", None],
                  "vocabulary": ["array-like", None]})
def aec_feature_matrix(docs: Sequence[Any], *, nrc_lexicon: Mapping[str, Any] | str | None = None,
                       vocabulary: Sequence[str] | None = None) -> FeatureMatrix:
    """All AEC interpretable features (Misra et al., Section 3.3.1: (a)–(d)) of spaCy-like docs, side by side.

    Columns: ``dep:<triple>`` (:func:`dependency_triples`), ``nrc:<class>``
    (:func:`nrc_emotion_counts`, only with ``nrc_lexicon``), ``ent:<label>``
    (:func:`entity_type_counts`) and ``cue:<name>`` (:func:`trustlab.metrics.conversational_cues`
    on ``doc.text``). Pass the training set's ``names`` as ``vocabulary`` to get the same
    columns on new data. Ready for :func:`trustlab.metrics.error_classifier`.

    Parameters
    ----------
    docs : sequence of spaCy-like docs
    nrc_lexicon : mapping or path, optional
    vocabulary : sequence of str, optional

    Returns
    -------
    FeatureMatrix

    Examples
    --------
    >>> from types import SimpleNamespace as T
    >>> toks = [T(text="Thanks", tag_="NNS", dep_="ROOT"), T(text="Delta", tag_="NNP", dep_="npadvmod")]
    >>> for t in toks: t.head = toks[0]
    >>> doc = type("Doc", (), {"text": "Thanks Delta", "ents": [T(label_="ORG")],
    ...                        "__iter__": lambda self: iter(toks), "__len__": lambda self: 2})()
    >>> f = aec_feature_matrix([doc])
    >>> [n for n, v in zip(f.names, f.X[0]) if v]
    ['dep:npadvmod-NNS-NNP', 'ent:ORG', 'cue:thanks']
    """
    from trustlab.metrics.aec import CUE_NAMES, conversational_cues

    docs = list(docs)
    parts = [("dep", dependency_triples(docs))]
    if nrc_lexicon is not None:
        parts.append(("nrc", nrc_emotion_counts(docs, nrc_lexicon)))
    parts.append(("ent", entity_type_counts(docs)))
    texts = [str(getattr(d, "text", " ".join(_tokens_of(d)))) for d in docs]
    parts.append(("cue", FeatureMatrix(conversational_cues(texts), list(CUE_NAMES))))
    X = np.hstack([p.X for _, p in parts]) if docs else np.zeros((0, 0))
    names = [f"{pre}:{n}" for pre, p in parts for n in p.names]
    if vocabulary is not None:
        col = {n: j for j, n in enumerate(names)}
        vocab = list(vocabulary)
        Y = np.zeros((X.shape[0], len(vocab)))
        for j, n in enumerate(vocab):
            if n in col:
                Y[:, j] = X[:, col[n]]
        return FeatureMatrix(Y, vocab)
    return FeatureMatrix(X, names)
