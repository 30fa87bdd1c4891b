"""The PrivEmb paper's utility experiments, M1 vs M2, with plots.

(1) distance approximation |‖w_i−w_j‖ − ‖x_i−x_j‖| and (2) inner-product approximation
|⟨w_i,w_j⟩ − ⟨x_i,x_j⟩| on fixed 100 × 100 word pairs; (3) a linear SVM on Hu & Liu
opinion words (balanced classes, 20% test split, several runs, accuracy and ROC AUC);
plus the closed-form bounds of Props 7–8 next to the measured worst errors and the JL
distortion of each drawn Φ.
"""
from __future__ import annotations

import numbers
import zipfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from trustlab._validation import (
    Interval,
    check_finite_array,
    check_int,
    check_interval,
    check_random_state,
    validate_params,
)
from trustlab.datasets import open_data, read_text
from trustlab.privacy.bounds import distance_bound, inner_product_bound
from trustlab.privacy.calibration import calibrate_m, jl_distortion, projection_matrix
from trustlab.privacy.mechanisms import privatize

__all__ = ["load_embeddings_subset", "evaluate", "plot_results", "summarize"]


def _read_lexicon(name: str, lexicon_dir=None) -> set[str]:
    if lexicon_dir is not None:
        p = Path(lexicon_dir) / name
        if not p.exists():
            raise FileNotFoundError(f"lexicon file {str(p)!r} does not exist")
        text = p.read_text(encoding="utf-8", errors="replace")
    else:
        text = read_text("embeddings", name, errors="replace")
    return {w.strip() for w in text.splitlines() if w.strip() and not w.startswith(";")}


@validate_params(
    {
        "path": ["path", None],
        "lexicon_dir": ["path", None],
        "n_pairs": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }
)
def load_embeddings_subset(path=None, *, lexicon_dir=None, n_pairs: int = 100, random_state=0) -> dict[str, Any]:
    """Word vectors, opinion labels and the fixed word pairs for :func:`evaluate`.

    Parameters
    ----------
    path : path, optional
        An ``.npz`` with ``vectors`` (n, d) and ``words`` (e.g. the 13k GoogleNews
        subset). Default: the bundled 2,200-word subset (see
        ``trustlab/data/embeddings/LICENSE-NOTES.md``).
    lexicon_dir : path, optional
        Folder with ``opinion_lexicon_{positive,negative}.txt`` (default: bundled copy).
    n_pairs : int
        Size of each side of the fixed pair grid (used when ``path`` is given).
    random_state : int
        Seed for the pair sample (held fixed across runs, as in the paper).

    Returns
    -------
    dict
        ``vectors`` (float64), ``words``, ``label`` (1 positive, 0 negative, −1 other),
        ``pair_a``, ``pair_b`` (row indices).

    Examples
    --------
    >>> data = load_embeddings_subset()
    >>> data["vectors"].shape, len(data["pair_a"])
    ((2200, 300), 100)
    """
    if path is None and lexicon_dir is None:
        with open_data("embeddings", "word2vec_privacy_subset.npz") as fh:
            z = np.load(fh, allow_pickle=False)
            return {"vectors": z["vectors"].astype(np.float64), "words": [str(w) for w in z["words"]],
                    "label": z["label"].astype(np.int64), "pair_a": z["pair_a"], "pair_b": z["pair_b"]}
    if path is None:
        with open_data("embeddings", "word2vec_privacy_subset.npz") as fh:
            z = np.load(fh, allow_pickle=False)
            vectors, words = z["vectors"], z["words"]
    else:
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(f"embeddings file {str(p)!r} does not exist")
        try:
            z = np.load(p, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):  # a .npy holds one bare array
                raise ValueError(f"got a single {type(z).__name__} (a .npy file?), not an .npz archive")
            vectors, words = z["vectors"], z["words"]
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            why = "the file is empty" if isinstance(exc, EOFError) else exc
            raise ValueError(f"{p}: expected an .npz with arrays 'vectors' and 'words' ({why}).") from None
    vectors = check_finite_array(vectors, "vectors")
    words = [str(w) for w in words]
    if len(words) != vectors.shape[0]:
        raise ValueError(f"{len(words)} words but {vectors.shape[0]} vectors; they must match.")
    pos = _read_lexicon("opinion_lexicon_positive.txt", lexicon_dir)
    neg = _read_lexicon("opinion_lexicon_negative.txt", lexicon_dir)
    label = np.array([1 if w in pos else 0 if w in neg else -1 for w in words], dtype=np.int64)
    n_pairs = check_int(n_pairs, "n_pairs", low=1)
    other = np.nonzero(label == -1)[0]
    if other.size < 2 * n_pairs:
        other = np.arange(len(words))
    rng = check_random_state(random_state)
    pick = rng.choice(other, 2 * n_pairs, replace=False)
    return {"vectors": vectors, "words": words, "label": label, "pair_a": pick[:n_pairs], "pair_b": pick[n_pairs:]}


def _pair_errors(XA, XB, WA, WB):
    DX = np.sqrt(np.maximum(0.0, (XA**2).sum(1)[:, None] + (XB**2).sum(1)[None, :] - 2 * XA @ XB.T))
    DW = np.sqrt(np.maximum(0.0, (WA**2).sum(1)[:, None] + (WB**2).sum(1)[None, :] - 2 * WA @ WB.T))
    dist = np.abs(DW - DX)
    inner = np.abs(WA @ WB.T - XA @ XB.T)
    return dist, inner


@validate_params(
    {
        "data": ["mapping", None],
        "epsilons": ["array-like"],
        "betas": ["array-like"],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "runs": [Interval(numbers.Integral, 1, 1000, closed="both")],
        "svm_runs": [Interval(numbers.Integral, 1, 1000, closed="both")],
        "svm": ["boolean"],
        "svm_max_per_class": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
        "output_dir": ["path", None],
        "progress": ["boolean"],
    }
)
def evaluate(
    data: dict | None = None,
    *,
    epsilons: Sequence[float] = (1, 2, 5, 10),
    betas: Sequence[float] = (0.5, 0.6, 0.7, 0.8, 0.9),
    delta: float = 1e-6,
    runs: int = 3,
    svm_runs: int = 10,
    svm: bool = True,
    svm_max_per_class: int | None = None,
    random_state=None,
    output_dir=None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run the paper's experiments (M1 vs PrivEmb) and optionally write PNG plots + JSON.

    Parameters
    ----------
    data : dict, optional
        From :func:`load_embeddings_subset` (default: the bundled subset).
    epsilons, betas : sequences of float
        Grid; M1 ignores β.
    delta : float
        PrivEmb δ (sets m with β through :func:`trustlab.privacy.calibrate_m`).
    runs : int
        Independent releases averaged for experiments (1)–(2).
    svm_runs : int
        Random 80/20 splits (each with a fresh release) for experiment (3).
    svm : bool
        Run experiment (3) (needs labelled words).
    svm_max_per_class : int, optional
        Cap per class (classes are always balanced to the smaller one).
    random_state : None, int or Generator
        Seeds every release and split (fix it for a reproducible report).
    output_dir : path, optional
        Write ``privacy_eval.json`` and ``distance.png``, ``inner_product.png``, ``svm.png``.
    progress : bool
        tqdm bar over the grid.

    Returns
    -------
    dict
        ``config``, ``pairs`` (rows: experiment, mechanism, epsilon, beta, m, mean, std,
        max, bound), ``svm`` (rows: mechanism, epsilon, beta, m, accuracy, accuracy_std,
        auc, auc_std), ``svm_baseline``, ``jl`` (per β: m and the distortions of one Φ).

    Examples
    --------
    >>> res = evaluate(epsilons=(5,), betas=(0.9,), runs=1, svm=False, random_state=0)
    >>> sorted({r["mechanism"] for r in res["pairs"]})
    ['m1', 'm2']
    """
    data = load_embeddings_subset() if data is None else data
    if output_dir is not None:
        _output_dir(output_dir)  # fail before the work, not after it
    X = check_finite_array(data["vectors"], "vectors")
    eps_list = [check_interval(e, "epsilon", low=0, func="evaluate") for e in epsilons]
    beta_list = [check_interval(b, "beta", low=0, high=1, func="evaluate") for b in betas]
    if not eps_list or not beta_list:
        raise ValueError("epsilons and betas must each hold at least one value.")
    delta = check_interval(delta, "delta", low=0, high=1, func="evaluate")
    runs = check_int(runs, "runs", low=1, func="evaluate")
    svm_runs = check_int(svm_runs, "svm_runs", low=1, func="evaluate")
    rng = check_random_state(random_state)
    d = X.shape[1]
    a_idx = np.asarray(data["pair_a"], dtype=np.int64)
    b_idx = np.asarray(data["pair_b"], dtype=np.int64)
    XA, XB = X[a_idx], X[b_idx]
    XAB = np.vstack([XA, XB])
    tau = float(np.linalg.norm(XAB, axis=1).max())
    nA = XA.shape[0]
    seeds = lambda: int(rng.integers(0, 2**63 - 1))  # noqa: E731

    settings = [("m1", e, None) for e in eps_list] + [("m2", e, b) for b in beta_list for e in eps_list]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(settings) * (1 + (svm_runs if svm else 0)), desc="privacy-eval", unit="cfg")

    pair_rows = []
    for mech, e, b in settings:
        dist_all, inner_all = [], []
        m = d
        for _ in range(runs):
            if mech == "m1":
                W, rec = privatize(XAB, epsilon=e, mechanism="m1", random_state=seeds(), backend="cpu")
            else:
                W, rec = privatize(XAB, epsilon=e, beta=b, delta=delta, random_state=seeds(), backend="cpu",
                                   allow_m_above_d=True)
            m = rec.m
            dist, inner = _pair_errors(XA, XB, W[:nA], W[nA:])
            dist_all.append(dist)
            inner_all.append(inner)
        for name, arrs in (("distance", dist_all), ("inner_product", inner_all)):
            A = np.stack(arrs)
            bound = None
            if mech == "m2":
                f = distance_bound if name == "distance" else inner_product_bound
                bound = f(tau, m, XAB.shape[0], e, b, delta)
            pair_rows.append({"experiment": name, "mechanism": mech, "epsilon": e, "beta": b, "m": m,
                              "mean": float(A.mean()), "std": float(A.mean(axis=(1, 2)).std()),
                              "max": float(A.max()), "bound": bound})
        if bar is not None:
            bar.update(1)

    jl = []
    for b in beta_list:
        m = calibrate_m(d, delta, b)
        phi = projection_matrix(m, d, seeds())
        dist = jl_distortion(phi, XA, XB)
        jl.append({"beta": b, "m": m, **dist})

    svm_rows: list[dict] = []
    baseline = None
    label = np.asarray(data.get("label", []))
    if svm and label.size == X.shape[0] and (label == 1).any() and (label == 0).any():
        from sklearn.metrics import roc_auc_score
        from sklearn.model_selection import train_test_split
        from sklearn.svm import LinearSVC

        pos = np.nonzero(label == 1)[0]
        neg = np.nonzero(label == 0)[0]
        k = min(pos.size, neg.size)
        if svm_max_per_class is not None:
            k = min(k, check_int(svm_max_per_class, "svm_max_per_class", low=2, func="evaluate"))
        sel_rng = np.random.default_rng(seeds())
        idx = np.concatenate([sel_rng.choice(pos, k, replace=False), sel_rng.choice(neg, k, replace=False)])
        y = np.concatenate([np.ones(k, dtype=np.int64), np.zeros(k, dtype=np.int64)])
        XS = X[idx]

        def fit_score(F, split_seed):
            Ftr, Fte, ytr, yte = train_test_split(F, y, test_size=0.2, random_state=split_seed, stratify=y)
            clf = LinearSVC(C=1.0, dual=False, max_iter=5000).fit(Ftr, ytr)
            return float((clf.predict(Fte) == yte).mean()), float(roc_auc_score(yte, clf.decision_function(Fte)))

        base = [fit_score(XS, seeds() % (2**31)) for _ in range(min(svm_runs, 3))]
        baseline = {"accuracy": float(np.mean([a for a, _ in base])), "auc": float(np.mean([u for _, u in base])),
                    "n_per_class": int(k)}
        for mech, e, b in settings:
            accs, aucs = [], []
            m = d
            for _ in range(svm_runs):
                if mech == "m1":
                    F, rec = privatize(XS, epsilon=e, mechanism="m1", random_state=seeds(), backend="cpu")
                else:
                    F, rec = privatize(XS, epsilon=e, beta=b, delta=delta, random_state=seeds(), backend="cpu",
                                       allow_m_above_d=True)
                m = rec.m
                acc, auc = fit_score(F, seeds() % (2**31))
                accs.append(acc)
                aucs.append(auc)
                if bar is not None:
                    bar.update(1)
            svm_rows.append({"mechanism": mech, "epsilon": e, "beta": b, "m": m,
                             "accuracy": float(np.mean(accs)), "accuracy_std": float(np.std(accs)),
                             "auc": float(np.mean(aucs)), "auc_std": float(np.std(aucs))})
    if bar is not None:
        bar.close()
    res = {
        "config": {"n_vectors": int(X.shape[0]), "d": int(d), "n_pairs": [int(nA), int(XB.shape[0])],
                   "epsilons": eps_list, "betas": beta_list, "delta": delta, "runs": runs,
                   "svm_runs": svm_runs if svm else 0, "tau": tau},
        "pairs": pair_rows, "svm": svm_rows, "svm_baseline": baseline, "jl": jl,
    }
    if output_dir is not None:
        write_report(res, output_dir)
    return res


def summarize(res: dict) -> dict[str, Any]:
    """Qualitative checks of the paper on an :func:`evaluate` result.

    ``m2_beats_m1``: per experiment and ε, for each β whether M2's mean error < M1's;
    ``m2_beats_m1_all_beta``: the same for every β at once (note: for inner products the
    expected noise ratio M2/M1 ≈ (m/d)^1.5 (1+β)² is ≈ 1 at β = 0.5, d = 300, so parity
    there is what theory predicts); ``gap_widens``: M2's error falls monotonically as β
    grows; ``svm_m2_ge_m1``: M2 accuracy ≥ M1 at the largest ε and β.
    """
    out: dict[str, Any] = {"m2_beats_m1": {}, "m2_beats_m1_all_beta": {}, "gap_widens": {}}
    for exp in ("distance", "inner_product"):
        rows = [r for r in res["pairs"] if r["experiment"] == exp]
        for e in res["config"]["epsilons"]:
            m1 = next(r["mean"] for r in rows if r["mechanism"] == "m1" and r["epsilon"] == e)
            m2 = sorted(((r["beta"], r["mean"]) for r in rows if r["mechanism"] == "m2" and r["epsilon"] == e))
            key = f"{exp}@eps={e:g}"
            out["m2_beats_m1"][key] = {f"{b:g}": bool(v < m1) for b, v in m2}
            out["m2_beats_m1_all_beta"][key] = all(v < m1 for _, v in m2)
            out["gap_widens"][key] = all(a[1] > b[1] for a, b in zip(m2, m2[1:]))
    if res["svm"]:
        e = max(res["config"]["epsilons"])
        b = max(res["config"]["betas"])
        a1 = next(r["accuracy"] for r in res["svm"] if r["mechanism"] == "m1" and r["epsilon"] == e)
        a2 = next(r["accuracy"] for r in res["svm"] if r["mechanism"] == "m2" and r["epsilon"] == e and r["beta"] == b)
        out["svm_m2_ge_m1"] = a2 >= a1
        out["svm_accuracy"] = {"m1": a1, "m2": a2, "epsilon": e, "beta": b}
    return out


def _output_dir(output_dir) -> Path:
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(
            f"output_dir {str(out)!r} is an existing file; pass a directory (it is created if missing)"
        )
    return out


def write_report(res: dict, output_dir) -> list[Path]:
    """Write ``privacy_eval.json`` and the PNG plots atomically into ``output_dir``."""
    import json

    from trustlab._fileio import atomic_write

    out = _output_dir(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = dict(res)
    res["summary"] = summarize(res)
    paths = plot_results(res, out)
    with atomic_write(out / "privacy_eval.json") as fh:
        fh.write(json.dumps(res, indent=2) + "\n")
    from trustlab.privacy.io import _umask_chmod

    for p in (out / "privacy_eval.json", *paths):
        _umask_chmod(p)  # temporary files are created 0600
    return [out / "privacy_eval.json", *paths]


def plot_results(res: dict, output_dir) -> list[Path]:
    """PNG plots (Agg backend) of the pair experiments and the SVM experiment."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from trustlab._fileio import atomic_path

    out = Path(output_dir)
    written = []
    eps = res["config"]["epsilons"]
    for exp, ylabel in (("distance", "mean |‖w_i−w_j‖ − ‖x_i−x_j‖|"),
                        ("inner_product", "mean |⟨w_i,w_j⟩ − ⟨x_i,x_j⟩|")):
        rows = [r for r in res["pairs"] if r["experiment"] == exp]
        fig, axes = plt.subplots(1, len(eps), figsize=(3.2 * len(eps), 3.2), squeeze=False)
        for ax, e in zip(axes[0], eps):
            m2 = sorted((r["beta"], r["mean"], r["std"]) for r in rows if r["mechanism"] == "m2" and r["epsilon"] == e)
            m1 = next(r for r in rows if r["mechanism"] == "m1" and r["epsilon"] == e)
            bs = [t[0] for t in m2]
            ax.errorbar(bs, [t[1] for t in m2], yerr=[t[2] for t in m2], marker="o", label="M2 (PrivEmb)")
            ax.plot(bs, [m1["mean"]] * len(bs), "r--", label="M1")
            ax.set_title(f"ε = {e:g}")
            ax.set_xlabel("β")
            ax.set_yscale("log")
        axes[0][0].set_ylabel(ylabel)
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"{exp.replace('_', ' ')} approximation, {res['config']['n_pairs'][0]}×"
                     f"{res['config']['n_pairs'][1]} word pairs")
        fig.tight_layout()
        p = out / f"{exp}.png"
        with atomic_path(p) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        written.append(p)
    if res["svm"]:
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
        for ax, key in zip(axes, ("accuracy", "auc")):
            m1 = sorted((r["epsilon"], r[key]) for r in res["svm"] if r["mechanism"] == "m1")
            ax.plot([t[0] for t in m1], [t[1] for t in m1], "r--o", label="M1")
            for b in res["config"]["betas"]:
                m2 = sorted((r["epsilon"], r[key]) for r in res["svm"] if r["mechanism"] == "m2" and r["beta"] == b)
                ax.plot([t[0] for t in m2], [t[1] for t in m2], "-o", label=f"M2 β={b:g}")
            if res.get("svm_baseline"):
                ax.axhline(res["svm_baseline"][key], color="k", ls=":", label="non-private")
            ax.set_xscale("log")
            ax.set_xlabel("ε")
            ax.set_ylabel(key)
        axes[0].legend(fontsize=7)
        fig.suptitle("linear SVM on Hu & Liu opinion words")
        fig.tight_layout()
        p = out / "svm.png"
        with atomic_path(p) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        written.append(p)
    return written
