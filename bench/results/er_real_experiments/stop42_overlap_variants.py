"""Stop 42 (people42): the whole-record overlap variants, evaluated offline.

Reads the pickles of ``stop42_offline_capture.py`` (a default run's per-field weights without
the record overlap, the per-pair per-column shared cosine parts D, each record's squared norm
per column, the table shares), recomputes the record's weight under each variant, scores the
pairs (link files: the one-to-one competition as ``pipeline._compete``) and clusters them with
``cluster_pairs(method="xer")``. ``base`` reproduces the pipeline except on csv_example and
jedai_cora (time limits and settings of the pipeline's clustering differ: use the differences).

    PYTHONPATH=. python bench/results/er_real_experiments/stop42_overlap_variants.py \
        rldata500,restaurant base,dot,maxtabpos
(run from the repository root after the capture; pickles in /tmp/p42)
"""

import math
import pickle
import sys
import warnings

import numpy as np

sys.path.insert(0, "bench")
from er_real import pairwise

from trustlab.er.cluster import cluster_pairs
from trustlab.er.scoring import one_to_one_log_odds, to_weights


def load(name):
    return pickle.load(open(f"/tmp/p42/{name}.pkl", "rb"))


def beyond(r, S):
    same = np.sign(r) == np.sign(S)
    return np.where(same, np.sign(r) * np.maximum(np.abs(r) - np.abs(S), 0.0), r)


def variant(d, kind):
    W = d["Wraw"].copy()
    cols = d["cols"]
    rec = cols.index("*")
    fidx = [cols.index(nm) for nm in d["names"]]
    Wf = W[:, fidx]  # field weights of the record's columns, in names order
    D, X = d["D"], d["X"]
    dot = D.sum(1) + X
    r = W[:, rec]
    tab = np.array([d["share"].get(nm, 0.0) for nm in d["names"]])
    S_tab = Wf @ tab
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(dot[:, None] > 0, D / dot[:, None], 0.0)
    if kind == "base":
        W[:, rec] = beyond(r, S_tab)
    elif kind == "frac":  # S = sum frac_c W_c for agreement; table shares otherwise
        S = np.where(dot > 0, (frac * Wf).sum(1), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind == "fracpos":  # agreement: r * unexplained share (cols whose field W>0 explained)
        expl = (frac * (Wf > 0)).sum(1)
        W[:, rec] = np.where((r > 0) & (dot > 0), r * (1 - expl), beyond(r, S_tab))
    elif kind == "sumshared":  # S = sum of W_c of columns sharing tokens
        S = np.where(dot > 0, (Wf * (D > 0)).sum(1), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind == "dot":  # S = sum D_c W_c (share of the whole vectors' cosine)
        S = np.where(dot > 0, (D * Wf).sum(1), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind.startswith("dotp") and kind != "dotpos":  # S = sum D_c W_c / dot^p
        p = float(kind[4:])
        S = np.where(dot > 0, (D * Wf).sum(1) / np.maximum(dot, 1e-12) ** p, S_tab)
        W[:, rec] = beyond(r, S)
    elif kind == "dotpos":  # only positive field weights overlap for r>0
        S = np.where(dot > 0, (D * np.maximum(Wf, 0)).sum(1), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind == "maxtab":  # the larger of the table-share and the per-pair overlap
        S = np.where(dot > 0, np.maximum((D * Wf).sum(1), S_tab), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind == "maxtabpos":
        S = np.where(dot > 0, np.maximum((D * np.maximum(Wf, 0)).sum(1), S_tab), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind in ("mass", "gmass", "masspos", "massdot"):
        M = (d["Ni"] + d["Nj"]) / 2 if kind != "gmass" else np.sqrt(d["Ni"] * d["Nj"])
        if kind == "masspos":
            S = (M * np.maximum(Wf, 0)).sum(1) + (M * np.minimum(Wf, 0)).sum(1) * 0
        elif kind == "massdot":  # agreement side: D; disagreement side: unshared mass
            S = np.where(r > 0, (D * Wf).sum(1), ((M - D) * Wf).sum(1))
        else:
            S = (M * Wf).sum(1)
        W[:, rec] = beyond(r, S)
    elif kind == "dotneg":  # a disagreeing field's shared words: the record's evidence from them is void
        with np.errstate(invalid="ignore", divide="ignore"):
            void = np.where(dot > 0, (D * (Wf < 0)).sum(1) / dot, 0.0)
        S = np.where(dot > 0, (D * np.maximum(Wf, 0)).sum(1) + np.maximum(r, 0) * void, S_tab)
        W[:, rec] = beyond(r, S)
    elif kind in ("negA", "negB"):
        M = (d["Ni"] + d["Nj"]) / 2
        Spos = np.where(dot > 0, np.maximum((D * np.maximum(Wf, 0)).sum(1), S_tab), S_tab)
        Sneg = ((M - D) * np.minimum(Wf, 0)).sum(1)
        if kind == "negB":
            Sneg = np.minimum(Sneg, S_tab)
        S = np.where(r > 0, Spos, Sneg)
        W[:, rec] = beyond(r, S)
    elif kind in ("colmax", "colmaxall"):
        sh = np.maximum(D, tab[None, :])
        if kind == "colmax":
            S = np.where(r > 0, (np.where(Wf > 0, sh, tab[None, :]) * Wf).sum(1), S_tab)
        else:
            S = np.where(r > 0, (sh * Wf).sum(1), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind in ("tabpos", "maxtabpos2"):
        Stp = np.maximum(Wf, 0) @ tab
        if kind == "tabpos":
            S = np.where(r > 0, Stp, S_tab)
        else:
            S = np.where(r > 0, np.maximum((D * np.maximum(Wf, 0)).sum(1), Stp), S_tab)
        W[:, rec] = beyond(r, S)
    elif kind == "full":
        W[:, rec] = beyond(r, Wf.sum(1))
    elif kind == "drop":
        W[:, rec] = 0
    else:
        raise ValueError(kind)
    return W


def score(d, W, tl=60.0):
    lo = math.log(d["lam"] / (1 - d["lam"])) + W.sum(1)
    if d["source"] is not None:
        codes = np.unique(d["source"], return_inverse=True)[1]
        live = np.flatnonzero(lo > -30.0)
        lo2 = lo.copy()
        lo2[live], _ = one_to_one_log_odds(d["P"][live], lo[live], codes)
        lo = lo2
    w = to_weights(1.0 / (1.0 + np.exp(-np.clip(lo, -50, 50))))
    lab = np.asarray(cluster_pairs(d["n"], d["P"], w, method="xer", time_limit=tl).labels)
    r = pairwise(lab, d["t"])
    return r, lab


if __name__ == "__main__":
    names = sys.argv[1].split(",")
    kinds = sys.argv[2].split(",")
    for nm in names:
        d = load(nm)
        line = [f"{nm:14s} pipe {d['f1']['f1']:.4f}"]
        for k in kinds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r, _ = score(d, variant(d, k))
            line.append(f"{k} {r['f1']:.4f} ({r['precision']:.3f}/{r['recall']:.3f})")
        print(" | ".join(line), flush=True)
