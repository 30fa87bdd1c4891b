"""PrivEmb's downstream-utility protocol (Feyisetan & Kasiviswanathan, TrustNLP 2021, Section 5.4):
sentence classification before and after release.

Feyisetan & Kasiviswanathan (Table 1) substitute privatised word vectors into SentEval's
default bag-of-words sentence encoder (the mean of the word vectors of a sentence) and its
logistic-regression classifier, on MR, CR, MPQA, SST-5 and TREC-6 with ε = 10, β = 0.9, and
report train and test accuracy for M1 and M2. :func:`downstream_utility` runs that protocol
on *the user's* labelled sentences and word vectors: the same encoder, the same classifier
(scikit-learn ``LogisticRegression`` with the L2 penalty chosen from SentEval's grid
C ∈ {2⁻², …, 2³} by inner cross-validation), the same outer folds for every condition, once
on the original vectors and once per release.

The corpora of the paper are not bundled (licences), so its numbers are not reproduced here;
the protocol is tested on generated labelled sentences (``tests/privacy/test_downstream.py``).
"""
from __future__ import annotations

import numbers
import re
from typing import Any, Callable, Sequence

import numpy as np

from trustlab._validation import (
    Interval,
    check_int,
    check_interval,
    check_option,
    check_random_state,
    validate_params,
)

__all__ = ["bow_encode", "downstream_utility", "SENTEVAL_CS"]

#: SentEval's grid of inverse L2 penalties for its scikit-learn logistic regression
#: (``regs = [2**t for t in range(-2, 4, 1)]`` in ``senteval/tools/validation.py``)
SENTEVAL_CS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

_TOKEN = re.compile(r"\w+(?:'\w+)*|[^\w\s]")


def _tokens(sentence, tokenizer) -> list[str]:
    if isinstance(sentence, str):
        return list(tokenizer(sentence)) if tokenizer is not None else _TOKEN.findall(sentence)
    if isinstance(sentence, (list, tuple)) and all(isinstance(t, str) for t in sentence):
        return list(sentence)
    raise TypeError(f"each sentence must be a str or a list of str tokens; got {type(sentence).__name__}.")


def _count_matrix(sentences, emb, tokenizer):
    """Row-normalised sentence x used-word matrix S (scipy CSR), the used words' rows in
    ``emb`` and (found, total) token counts. A token is looked up as written, then
    lower-cased."""
    from scipy import sparse

    index = emb._index
    col: dict[int, int] = {}
    rows, cols = [], []
    found = total = 0
    for i, s in enumerate(sentences):
        for t in _tokens(s, tokenizer):
            total += 1
            r = index.get(t)
            if r is None:
                r = index.get(t.lower())
            if r is None:
                continue
            found += 1
            rows.append(i)
            cols.append(col.setdefault(r, len(col)))
    n = len(sentences)
    S = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, len(col)))
    S.sum_duplicates()
    counts = np.asarray(S.sum(axis=1)).ravel()
    scale = np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)
    S = sparse.diags(scale) @ S
    used = np.fromiter(col.keys(), dtype=np.int64, count=len(col))
    return S.tocsr(), used, found, total


@validate_params({"sentences": ["array-like"], "tokenizer": ["callable", None]})
def bow_encode(sentences: Sequence, embeddings: Any, *, tokenizer: Callable | None = None) -> np.ndarray:
    """SentEval's bag-of-words sentence encoder: the mean of a sentence's word vectors.

    Tokens without a vector are skipped (looked up as written, then lower-cased); a sentence
    with no known token is the zero vector, as in SentEval's ``bow.py``.

    Parameters
    ----------
    sentences : sequence of str or of token lists
        A str is split into words and punctuation (or by ``tokenizer``).
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
        The word vectors (original or released: any dimension).
    tokenizer : callable, optional
        ``str -> list of str`` for string sentences.

    Returns
    -------
    numpy.ndarray of shape (n_sentences, dim)

    Examples
    --------
    >>> emb = {"good": [1.0, 0.0], "film": [0.0, 1.0]}
    >>> bow_encode(["A good film .", "nothing known"], emb).tolist()
    [[0.5, 0.5], [0.0, 0.0]]
    """
    from trustlab.metrics.embeddings import as_embeddings

    emb = as_embeddings(embeddings)
    sentences = list(sentences)
    S, used, _, _ = _count_matrix(sentences, emb, tokenizer)
    return np.asarray(S @ emb.vectors[used].astype(np.float64)) if used.size else np.zeros((len(sentences), emb.dim))


def _fold_scores(E, y, folds, Cs, inner_folds, seed):
    """Train/test accuracy per outer fold; C chosen per fold by inner stratified CV (the
    largest mean inner accuracy, the smallest C on ties), then refitted on the whole
    training part. A plain loop (GridSearchCV's per-fit overhead dominated on small data),
    on one BLAS thread: lbfgs on a few hundred rows ran ~10x slower with OpenBLAS's
    threads spinning between the many tiny products."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from threadpoolctl import threadpool_limits

    def fit(A, b, C):
        return LogisticRegression(C=C, max_iter=2000).fit(A, b)

    train_acc, test_acc, chosen = [], [], []
    with warnings.catch_warnings(), threadpool_limits(1, user_api="blas"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        for tr, te in folds:
            Etr, ytr = E[tr], y[tr]
            k_in = min(inner_folds, int(np.bincount(ytr).min()))  # every class in every inner fold
            if len(Cs) > 1 and k_in >= 2:
                inner = list(StratifiedKFold(n_splits=k_in, shuffle=True, random_state=seed).split(Etr, ytr))
                score = [np.mean([(fit(Etr[a], ytr[a], C).predict(Etr[b]) == ytr[b]).mean() for a, b in inner])
                         for C in Cs]
                C = Cs[int(np.argmax(score))]
            else:  # one C given, or too few sentences per class to choose: sklearn's default C = 1 if offered
                C = 1.0 if 1.0 in Cs else Cs[len(Cs) // 2]
            clf = fit(Etr, ytr, C)
            train_acc.append(float((clf.predict(Etr) == ytr).mean()))
            test_acc.append(float((clf.predict(E[te]) == y[te]).mean()))
            chosen.append(float(C))
    return train_acc, test_acc, chosen


@validate_params(
    {
        "sentences": ["array-like"],
        "labels": ["array-like"],
        "epsilons": ["array-like"],
        "betas": ["array-like"],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "m": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "mechanisms": ["array-like"],
        "runs": [Interval(numbers.Integral, 1, 1000, closed="both")],
        "n_folds": [Interval(numbers.Integral, 2, None, closed="left")],
        "inner_folds": [Interval(numbers.Integral, 2, None, closed="left")],
        "Cs": ["array-like"],
        "tokenizer": ["callable", None],
        "random_state": ["random_state"],
    }
)
def downstream_utility(
    sentences: Sequence,
    labels: Sequence,
    embeddings: Any,
    *,
    epsilons: Sequence[float] = (10.0,),
    betas: Sequence[float] = (0.9,),
    delta: float = 1e-6,
    m: int | None = None,
    mechanisms: Sequence[str] = ("privemb", "m1"),
    runs: int = 1,
    n_folds: int = 10,
    inner_folds: int = 5,
    Cs: Sequence[float] = SENTEVAL_CS,
    tokenizer: Callable | None = None,
    random_state=None,
) -> dict[str, Any]:
    """Sentence-classification accuracy before and after a private release (PrivEmb paper, Section 5.4).

    The protocol of the paper's Table 1 on the user's data: every sentence is encoded as the
    mean of its word vectors (:func:`bow_encode`); a logistic regression, its C chosen from
    ``Cs`` by ``inner_folds``-fold CV on the training part, is scored by stratified
    ``n_folds``-fold CV. This runs once on the original vectors and once per release
    (mechanism × ε × β × run), on the **same folds**, so the accuracies are paired.

    Only the words that occur in ``sentences`` are released: each vector is perturbed
    independently with one shared Φ (the paper's Algorithm 1), so this has the same distribution
    as releasing the whole vocabulary and keeping those rows.

    Parameters
    ----------
    sentences : sequence of str or of token lists
    labels : sequence
        One label per sentence (any hashable; two or more classes, each with at least
        ``n_folds`` sentences after capping ``n_folds``, see below).
    embeddings : mapping, KeyedVectors, (words, matrix) or Embeddings
        The original word vectors.
    epsilons, betas : sequences of float
        The privacy grid (paper: ε = 10, β = 0.9). M1 ignores β.
    delta : float
        PrivEmb δ.
    m : int, optional
        PrivEmb projection dimension (default: calibrated from d, δ, β; m > d is allowed
        here, as in :func:`trustlab.privacy.evaluate`).
    mechanisms : sequence of {"privemb", "m1"}
    runs : int
        Independent releases per setting (their accuracies are averaged).
    n_folds : int
        Outer stratified folds (SentEval: 10); capped at the smallest class size.
    inner_folds : int
        Inner folds that choose C (capped at the smallest class of each training part; with
        fewer than 2 sentences of a class there, C = 1 is used).
    Cs : sequence of float
        Inverse L2 penalties tried (default SentEval's 2⁻² … 2³).
    tokenizer : callable, optional
        ``str -> list of str`` (default: words and punctuation; token lists are used as given).
    random_state : None, int or Generator
        Seeds the folds and every release (fix it for a reproducible report; a seeded release
        is not private against whoever knows the seed).

    Returns
    -------
    dict
        ``config``; ``coverage`` (share of tokens with a vector), ``n_sentences``,
        ``classes``, ``majority`` (accuracy of always predicting the largest class); ``rows``:
        one per condition with ``condition`` ("original", "m1" or "privemb"), ``epsilon``,
        ``beta``, ``m``, ``train_accuracy``, ``test_accuracy`` (means over folds and runs),
        ``test_accuracy_std`` (over runs × folds) and ``fold_test_accuracy`` (per run, per
        fold) — the paper's TRAIN ACC / TEST ACC columns.

    Notes
    -----
    Each word is released once, so its noisy vector is a fixed random code: when the test
    folds share much vocabulary with the training folds, a classifier can learn those codes
    and keep a high accuracy even under heavy noise (the release hides *vector values*, not
    which word is which). Compare against the ``majority`` rate and a small-ε run on your data.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> words = [f"pos{i}" for i in range(20)] + [f"neg{i}" for i in range(20)]
    >>> vecs = np.vstack([rng.normal(1, 0.3, (20, 8)), rng.normal(-1, 0.3, (20, 8))])
    >>> sents = [" ".join(rng.choice(words[:20] if k % 2 else words[20:], 5)) for k in range(60)]
    >>> res = downstream_utility(sents, [k % 2 for k in range(60)], (words, vecs), epsilons=(1e4,),
    ...                          mechanisms=("privemb",), n_folds=3, random_state=0)
    >>> [(r["condition"], r["test_accuracy"]) for r in res["rows"]]
    [('original', 1.0), ('privemb', 1.0)]
    """
    from sklearn.model_selection import StratifiedKFold

    from trustlab.metrics.embeddings import as_embeddings
    from trustlab.privacy.mechanisms import privatize

    func = "downstream_utility"
    sentences = list(sentences)
    labels = list(labels)
    if len(sentences) != len(labels):
        raise ValueError(f"got {len(sentences)} sentences but {len(labels)} labels; give one label per sentence.")
    if not sentences:
        raise ValueError("sentences is empty; give at least one sentence per fold and class.")
    emb = as_embeddings(embeddings)
    eps_list = [check_interval(e, "epsilon", low=0, func=func) for e in epsilons]
    beta_list = [check_interval(b, "beta", low=0, high=1, func=func) for b in betas]
    mechs = [check_option(str(x).lower(), "mechanisms", ("privemb", "m1"), func=func) for x in mechanisms]
    mechs = ["privemb" if x == "m2" else x for x in mechs]
    Cs = [check_interval(c, "Cs", low=0, func=func) for c in Cs]
    if not eps_list or not beta_list or not Cs:
        raise ValueError("epsilons, betas and Cs must each hold at least one value.")
    delta = check_interval(delta, "delta", low=0, high=1, func=func)
    classes, y = np.unique(np.asarray([str(v) if not isinstance(v, numbers.Number) else v for v in labels]),
                           return_inverse=True)
    counts = np.bincount(y)
    if classes.size < 2:
        raise ValueError(f"labels hold one class only ({classes[0]!r}); a classifier needs two or more.")
    smallest = int(counts.min())
    if smallest < 2:
        raise ValueError(f"class {classes[int(np.argmin(counts))]!r} has {smallest} sentence; every class "
                         "needs at least 2 for a stratified split.")
    n_folds = min(check_int(n_folds, "n_folds", low=2, func=func), smallest)
    inner_folds = check_int(inner_folds, "inner_folds", low=2, func=func)  # capped per training part
    rng = check_random_state(random_state)
    seed = lambda: int(rng.integers(0, 2**31 - 1))  # noqa: E731

    S, used, found, total = _count_matrix(sentences, emb, tokenizer)
    if used.size == 0:
        raise ValueError(f"none of the {total} tokens of the sentences has a vector in the embeddings; "
                         "check the tokenisation (tokenizer=) and the vocabulary.")
    X = np.ascontiguousarray(emb.vectors[used], dtype=np.float64)
    fold_seed = seed()
    folds = list(StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=fold_seed).split(np.zeros(len(y)), y))

    rows = []

    def add(condition, e, b, mm, results):
        tr = [a for r in results for a in r[0]]
        te = [a for r in results for a in r[1]]
        rows.append({"condition": condition, "epsilon": e, "beta": b, "m": mm,
                     "train_accuracy": float(np.mean(tr)), "test_accuracy": float(np.mean(te)),
                     "test_accuracy_std": float(np.std(te)), "fold_test_accuracy": [r[1] for r in results],
                     "C": [r[2] for r in results]})

    base = _fold_scores(np.asarray(S @ X), y, folds, Cs, inner_folds, fold_seed)
    add("original", None, None, int(X.shape[1]), [base])
    for mech in mechs:
        for e in eps_list:
            for b in (beta_list if mech == "privemb" else [None]):
                results, mm = [], X.shape[1]
                for _ in range(check_int(runs, "runs", low=1, func=func)):
                    if mech == "m1":
                        W, rec = privatize(X, epsilon=e, mechanism="m1", random_state=seed(), backend="cpu")
                    else:
                        W, rec = privatize(X, epsilon=e, beta=b, delta=delta, m=m, random_state=seed(),
                                           backend="cpu", allow_m_above_d=True)
                    mm = int(rec.m)
                    results.append(_fold_scores(np.asarray(S @ W), y, folds, Cs, inner_folds, fold_seed))
                add(mech, e, b, mm, results)
    return {
        "config": {"epsilons": eps_list, "betas": beta_list, "delta": delta, "m": m, "mechanisms": mechs,
                   "runs": runs, "n_folds": n_folds, "inner_folds": inner_folds, "Cs": Cs, "d": emb.dim},
        "coverage": found / total if total else 0.0, "n_sentences": len(sentences),
        "n_words_released": int(used.size), "classes": classes.tolist(),
        "majority": float(counts.max() / counts.sum()), "rows": rows,
    }
