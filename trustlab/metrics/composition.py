"""Word-level composition of token × dimension gradients (Ding & Koehn, NAACL 2021:
gradient·input, and the vector norm of their Table 8).

A saliency method (vanilla gradient, SmoothGrad, Integrated Gradients) gives a gradient
``g`` of shape ``(tokens, dims)`` with respect to the input embeddings ``e`` of the same
shape. Two compositions turn it into one score per word:

* ``"grad_input"`` (gradient·input, signed, used for the paper's main results):
  ψ(w) = Σ_{t∈w} Σ_d g_{t,d} · e_{t,d}
* ``"norm"`` (vector norm, unsigned, the paper's Table 8): ψ(w) = ‖Σ_{t∈w} g_t‖₂,
  the L2 norm of the word's gradient (sub-word gradients are summed first).

Without ``word_ids`` every token is a word. The output of :func:`compose_saliency` (a list
of 1-D vectors) is the input format of :func:`trustlab.metrics.plausibility`,
:func:`trustlab.metrics.model_consistency` and :func:`trustlab.metrics.input_consistency`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from trustlab._validation import Options, check_option, validate_params

__all__ = ["compose_word_saliency", "compose_saliency", "COMPOSITIONS"]

COMPOSITIONS = ("grad_input", "norm")


def _as_2d(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D (tokens, dims); got shape {a.shape}. "
                         "Pass one example at a time, or a list of examples to compose_saliency.")
    if a.shape[0] == 0:
        raise ValueError(f"{name} has no tokens.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return a


@validate_params(
    {
        "gradients": ["array-like"],
        "embeddings": ["array-like", None],
        "method": [Options(set(COMPOSITIONS))],
        "word_ids": ["array-like", None],
    }
)
def compose_word_saliency(
    gradients: Any,
    embeddings: Any | None = None,
    *,
    method: str = "grad_input",
    word_ids: Sequence[int] | None = None,
) -> np.ndarray:
    """Compose a ``(tokens, dims)`` gradient into one saliency score per word.

    Parameters
    ----------
    gradients : array of shape (tokens, dims)
        ∂(score)/∂(input embedding) per token and dimension.
    embeddings : array of shape (tokens, dims), optional
        The input embeddings; required for ``method="grad_input"``.
    method : {"grad_input", "norm"}
        ``"grad_input"``: Σ_d g·e per word (signed). ``"norm"``: ‖Σ_{t∈w} g_t‖₂ (≥ 0).
    word_ids : sequence of int, optional
        Word index of each token (``-1`` drops a token, e.g. ``[CLS]``); sub-word tokens with
        the same id are composed into one word. Default: each token is a word.

    Returns
    -------
    numpy.ndarray
        One float per word (``max(word_ids) + 1`` entries with ``word_ids``).

    Examples
    --------
    >>> g = [[1.0, -2.0], [0.5, 0.5], [3.0, 4.0]]
    >>> e = [[2.0, 1.0], [1.0, 1.0], [1.0, 0.0]]
    >>> compose_word_saliency(g, e).tolist()           # 1*2-2*1, 0.5+0.5, 3*1+4*0
    [0.0, 1.0, 3.0]
    >>> compose_word_saliency(g, method="norm").tolist()
    [2.23606797749979, 0.7071067811865476, 5.0]
    >>> compose_word_saliency(g, e, word_ids=[0, 0, 1]).tolist()   # two sub-words -> one word
    [1.0, 3.0]
    """
    method = check_option(method, "method", COMPOSITIONS, func="compose_word_saliency")
    g = _as_2d(gradients, "gradients")
    if method == "grad_input":
        if embeddings is None:
            raise ValueError("method='grad_input' needs the input embeddings; pass embeddings=, "
                             "or use method='norm'.")
        e = _as_2d(embeddings, "embeddings")
        if e.shape != g.shape:
            raise ValueError(f"embeddings has shape {e.shape} but gradients has shape {g.shape}; "
                             "they must match (tokens, dims).")
        per_token = np.einsum("td,td->t", g, e)
    if word_ids is None:
        if method == "grad_input":
            return per_token
        return np.linalg.norm(g, axis=1)
    w = np.asarray(word_ids)
    if w.ndim != 1 or w.size != g.shape[0] or not np.issubdtype(w.dtype, np.integer):
        raise ValueError(f"word_ids must be {g.shape[0]} integers (one per token); got {w.size} "
                         f"of dtype {w.dtype}.")
    keep = w >= 0
    if not keep.any():
        raise ValueError("word_ids marks every token as dropped (-1).")
    n_words = int(w.max()) + 1
    if method == "grad_input":
        return np.bincount(w[keep], weights=per_token[keep], minlength=n_words)
    summed = np.zeros((n_words, g.shape[1]))
    np.add.at(summed, w[keep], g[keep])
    return np.linalg.norm(summed, axis=1)


@validate_params(
    {
        "gradients": ["array-like"],
        "embeddings": ["array-like", None],
        "method": [Options(set(COMPOSITIONS))],
        "word_ids": ["array-like", None],
    }
)
def compose_saliency(
    gradients: Sequence[Any],
    embeddings: Sequence[Any] | None = None,
    *,
    method: str = "grad_input",
    word_ids: Sequence[Sequence[int]] | None = None,
) -> list[np.ndarray]:
    """:func:`compose_word_saliency` over a batch of examples (ragged lengths allowed).

    The result is a list of 1-D word-saliency vectors, the ``saliency`` input of
    :func:`trustlab.metrics.plausibility` and the consistency metrics.

    Parameters
    ----------
    gradients : sequence of arrays of shape (tokens, dims)
        Per example, the gradient per token and dimension.
    embeddings : sequence of arrays of shape (tokens, dims), optional
        Per example, the input embeddings; required for ``method="grad_input"``.
    method : {"grad_input", "norm"}
        As in :func:`compose_word_saliency`.
    word_ids : sequence of sequence of int, optional
        Per example, the word index of each token (as in :func:`compose_word_saliency`).

    Examples
    --------
    >>> from trustlab.metrics import plausibility
    >>> grads = [[[1.0, 0.0], [0.0, 2.0], [0.1, 0.1]]]
    >>> embs = [[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]]
    >>> s = compose_saliency(grads, embs)          # word scores [1.0, 2.0, 0.2]
    >>> plausibility(s, s, [[(1, 1)]], [[(0, 0)]], [True]).value   # cue word 1 beats attractor 0
    1.0
    """
    n = len(gradients)
    if embeddings is not None and len(embeddings) != n:
        raise ValueError(f"embeddings has {len(embeddings)} examples but gradients has {n}.")
    if word_ids is not None and len(word_ids) != n:
        raise ValueError(f"word_ids has {len(word_ids)} examples but gradients has {n}.")
    return [
        compose_word_saliency(
            gradients[i],
            None if embeddings is None else embeddings[i],
            method=method,
            word_ids=None if word_ids is None else word_ids[i],
        )
        for i in range(n)
    ]
