"""One normaliser for word-embedding inputs, and loaders for embedding files.

Every bias metric in :mod:`trustlab.metrics.bias` accepts ``embeddings`` as

* a mapping ``word -> vector`` (``dict``),
* a gensim ``KeyedVectors`` (duck-typed: ``key_to_index`` + ``vectors``; gensim is
  never imported here),
* a ``(words, matrix)`` tuple, or
* an :class:`Embeddings` object (returned unchanged).

Looking words up never silently changes a test: :meth:`Embeddings.lookup` returns the
words that were found *and* the ones that were dropped, and the metrics put the dropped
words in their result objects.
"""
from __future__ import annotations

import os
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from trustlab._validation import check_option, validate_params

__all__ = ["Embeddings", "as_embeddings", "load_embeddings", "MissingWordsWarning"]


class MissingWordsWarning(UserWarning):
    """Some words of a word set have no vector and were dropped (listed in the result)."""


@dataclass(frozen=True)
class Lookup:
    """Result of :meth:`Embeddings.lookup`: the vectors found and what was dropped."""

    words: list[str]
    vectors: np.ndarray
    missing: list[str] = field(default_factory=list)


class Embeddings:
    """An immutable word -> vector table (words + C-contiguous float matrix).

    Parameters
    ----------
    words : sequence of str
        One word per row of ``vectors``; duplicates keep the first occurrence.
    vectors : array-like of shape (n_words, dim)

    Examples
    --------
    >>> emb = Embeddings(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    >>> emb.dim, len(emb), "a" in emb
    (2, 2, True)
    >>> emb.lookup(["a", "zz"], name="X").missing
    ['zz']
    """

    def __init__(self, words: Sequence[str], vectors: Any):
        words = [str(w) for w in words]
        try:
            V = np.asarray(vectors)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise ValueError(f"embedding vectors could not be converted to an array: {exc}") from None
        if V.dtype.kind not in "fiu":
            raise ValueError(
                f"embedding vectors must be numeric, got dtype {V.dtype}. Pass a float matrix."
            )
        if V.ndim != 2:
            raise ValueError(
                f"embedding vectors must be a 2D (n_words, dim) matrix, got shape {V.shape}."
            )
        if V.shape[0] != len(words):
            raise ValueError(
                f"got {len(words)} words but {V.shape[0]} vector rows; they must match one to one."
            )
        if V.shape[0] == 0 or V.shape[1] == 0:
            raise ValueError(f"the embedding table is empty (shape {V.shape}).")
        if V.dtype.kind != "f":
            V = V.astype(np.float64)
        self._vectors = np.ascontiguousarray(V)
        self._words = words
        index: dict[str, int] = {}
        for i, w in enumerate(words):
            index.setdefault(w, i)
        self._index = index

    # -- basic protocol -------------------------------------------------
    @property
    def words(self) -> list[str]:
        return list(self._words)

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def __getitem__(self, word: str) -> np.ndarray:
        return self._vectors[self._index[word]]

    def __repr__(self) -> str:
        return f"Embeddings(n_words={len(self)}, dim={self.dim}, dtype={self._vectors.dtype})"

    # -- lookups -------------------------------------------------------
    def lookup(
        self,
        words: Iterable[str],
        *,
        name: str = "word set",
        on_missing: str = "drop",
        dtype: Any = np.float64,
    ) -> Lookup:
        """Vectors for ``words`` (in order), reporting the words that are missing.

        Parameters
        ----------
        words : iterable of str
        name : str
            Name of the set, used in messages.
        on_missing : {"drop", "raise"}
            ``"drop"`` removes missing words (they are returned in ``missing``);
            ``"raise"`` raises :class:`ValueError` listing them.
        dtype : numpy dtype
            dtype of the returned matrix.

        Raises
        ------
        ValueError
            Empty set, every word missing, a missing word with ``on_missing="raise"``,
            or a NaN/inf vector (the message names the word).
        """
        check_option(on_missing, "on_missing", ["drop", "raise"], func="lookup")
        if isinstance(words, str):
            raise TypeError(
                f"{name} must be a list of words, got the single string {words!r}. Wrap it in a list."
            )
        words = [str(w) for w in words]
        if not words:
            raise ValueError(f"{name} is empty; every word set needs at least one word.")
        found = [w for w in words if w in self._index]
        missing = [w for w in words if w not in self._index]
        if missing and on_missing == "raise":
            raise ValueError(
                f"{len(missing)} word(s) of {name} have no vector: {missing}. "
                "Pass on_missing='drop' to drop them (they are listed in the result)."
            )
        if not found:
            raise ValueError(
                f"none of the {len(words)} words of {name} has a vector (e.g. {words[:5]}); "
                "check the spelling/case or the embedding vocabulary."
            )
        V = np.ascontiguousarray(self._vectors[[self._index[w] for w in found]], dtype=dtype)
        bad = ~np.isfinite(V).all(axis=1)
        if bad.any():
            badw = [w for w, b in zip(found, bad) if b]
            raise ValueError(
                f"the vectors of {badw} (in {name}) contain NaN or infinity; "
                "fix or remove those rows of the embedding table."
            )
        return Lookup(found, V, missing)


def _is_keyed_vectors(obj: Any) -> bool:
    return hasattr(obj, "key_to_index") and hasattr(obj, "vectors")


def as_embeddings(embeddings: Any) -> Embeddings:
    """Normalise any supported embedding input to :class:`Embeddings`.

    Parameters
    ----------
    embeddings : Embeddings, mapping, gensim KeyedVectors or (words, matrix) tuple

    Returns
    -------
    Embeddings

    Raises
    ------
    TypeError
        Unsupported type.
    ValueError
        Inconsistent shapes, ragged vectors, empty table.

    Examples
    --------
    >>> as_embeddings({"he": [1.0, 0.0], "she": [0.0, 1.0]})
    Embeddings(n_words=2, dim=2, dtype=float64)
    >>> as_embeddings((["he"], [[1.0, 2.0]])).dim
    2
    """
    if isinstance(embeddings, Embeddings):
        return embeddings
    if _is_keyed_vectors(embeddings):
        kti = embeddings.key_to_index
        words = sorted(kti, key=kti.__getitem__)
        return Embeddings(words, np.asarray(embeddings.vectors)[[kti[w] for w in words]])
    if isinstance(embeddings, Mapping):
        words = list(embeddings.keys())
        if not words:
            raise ValueError("the embedding mapping is empty; it needs at least one word -> vector.")
        rows = [np.asarray(embeddings[w]) for w in words]
        shapes = {r.shape for r in rows}
        if len(shapes) != 1 or rows[0].ndim != 1:
            raise ValueError(
                f"all vectors in the embedding mapping must be 1D and of one length; got shapes {sorted(shapes)[:5]}."
            )
        return Embeddings(words, np.stack(rows))
    if isinstance(embeddings, tuple) and len(embeddings) == 2:
        words, matrix = embeddings
        if isinstance(words, str):
            raise TypeError("the (words, matrix) tuple needs a sequence of words, not one string.")
        return Embeddings(list(words), matrix)
    raise TypeError(
        "embeddings must be a mapping word -> vector, a gensim KeyedVectors, a (words, matrix) "
        f"tuple or trustlab Embeddings; got {type(embeddings).__name__}."
    )


def _load_word2vec_text(path: Path) -> Embeddings:
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
        parts = first.rstrip("\n").split(" ")
        header = len(parts) == 2 and all(p.strip().isdigit() for p in parts)
        lines = fh if header else _chain([first], fh)
        for ln, line in enumerate(lines, start=2 if header else 1):
            parts = line.rstrip().split(" ")
            if len(parts) < 2:
                continue
            try:
                vec = np.array(parts[1:], dtype=np.float32)
            except ValueError:
                raise ValueError(
                    f"{path}:{ln}: could not parse the vector of {parts[0]!r}; expected "
                    "'word v1 v2 ...' (word2vec text format)."
                ) from None
            if dim is None:
                dim = vec.shape[0]
            elif vec.shape[0] != dim:
                raise ValueError(
                    f"{path}:{ln}: vector of {parts[0]!r} has {vec.shape[0]} values, expected {dim}."
                )
            words.append(parts[0])
            rows.append(vec)
    if not rows:
        raise ValueError(f"{path} contains no vectors (expected the word2vec text format).")
    return Embeddings(words, np.stack(rows))


def _chain(*its):
    for it in its:
        yield from it


@validate_params({"path": ["path"]})
def load_embeddings(path: str | os.PathLike) -> Embeddings:
    """Load an embedding file.

    Formats (by extension): ``.npz`` with arrays ``vectors`` (n, d) and ``words`` (n,);
    word2vec text (``.txt``, ``.vec``, ``.w2v``; the ``"n d"`` header is optional);
    ``.kv`` (gensim ``KeyedVectors.save``, needs gensim installed);
    ``.bin`` (word2vec binary, needs gensim).

    Parameters
    ----------
    path : str or path-like
        The embedding file; its extension picks the format.

    Raises
    ------
    FileNotFoundError, ValueError
        Missing file, unknown extension, bad content.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "e.txt")
    >>> _ = open(p, "w").write("2 2\\nhe 1 0\\nshe 0 1\\n")
    >>> load_embeddings(p)
    Embeddings(n_words=2, dim=2, dtype=float32)
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"embedding file {str(p)!r} does not exist")
    if p.is_dir():
        raise IsADirectoryError(f"{str(p)!r} is a directory; pass an embedding file")
    ext = p.suffix.lower()
    if ext == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                if "vectors" not in z.files or "words" not in z.files:
                    raise ValueError(
                        f"{p} must contain arrays 'vectors' and 'words'; it has {z.files}."
                    )
                return Embeddings([str(w) for w in z["words"]], z["vectors"])
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            if isinstance(exc, ValueError) and "must contain" in str(exc):
                raise
            why = "the file is empty" if isinstance(exc, EOFError) else str(exc)
            raise ValueError(f"could not read {p} as .npz: {why}") from None
    if ext in (".txt", ".vec", ".w2v"):
        return _load_word2vec_text(p)
    if ext in (".kv", ".bin"):
        try:
            from gensim.models import KeyedVectors  # type: ignore
        except ImportError:
            raise ValueError(
                f"reading {ext} files needs gensim (pip install gensim); or convert to .npz "
                "with arrays 'vectors' and 'words'."
            ) from None
        kv = KeyedVectors.load(str(p)) if ext == ".kv" else KeyedVectors.load_word2vec_format(str(p), binary=True)
        return as_embeddings(kv)
    raise ValueError(
        f"unknown embedding file extension {ext!r} for {p}; use .npz (vectors, words), "
        "word2vec text (.txt/.vec) or gensim .kv."
    )


def _warn_missing(missing: Mapping[str, list[str]], stacklevel: int = 3) -> None:
    flat = {k: v for k, v in missing.items() if v}
    if flat:
        warnings.warn(
            f"dropped words with no vector: {flat} (listed in the result's 'dropped').",
            MissingWordsWarning,
            stacklevel=stacklevel,
        )
