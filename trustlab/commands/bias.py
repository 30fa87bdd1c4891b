"""``trustlab bias``: WEAT, MAC, the Bayesian bias model and DirectBias from the shell.

Without ``--embeddings`` (and ``--sets``) the commands use the bundled word2vec GoogleNews
subset and the bundled word sets, as ``bias bayes --example`` does.

Examples::

    trustlab bias weat --test 6
    trustlab bias mac
    trustlab bias direct
    trustlab bias weat --embeddings vectors.npz --test 6
    trustlab bias weat --embeddings vectors.txt --test all --similarity euclidean --json
    trustlab bias weat --embeddings vectors.npz --sets my_sets.json --permutations 100000
    trustlab bias mac --embeddings vectors.npz --sets mac_sets.json
    trustlab bias bayes --data religion_reddit.csv --model connection --json
    trustlab bias direct --embeddings vectors.npz
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

from trustlab.commands._common import (
    CLIError,
    add_output_flags,
    atomic_write,
    constrained,
    deprecated_alias,
    emit_json,
    seed_type,
    show_progress,
)

_EMB_HELP = ("embedding file: .npz (arrays 'vectors', 'words'), word2vec text (.txt/.vec) or gensim .kv "
             "(default: the bundled word2vec GoogleNews subset of the WEAT and gender words)")
_BUNDLED_NOTE = "embeddings: bundled word2vec GoogleNews subset (trustlab/data/weat/word2vec_weat_subset.npz)"


def register(sub) -> None:
    p = sub.add_parser("bias", help="bias metrics for word embeddings (WEAT, MAC, Bayesian, DirectBias)")
    bsub = p.add_subparsers(dest="bias_command", metavar="METRIC")
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])

    w = bsub.add_parser("weat", help="generalised WEAT with exact/Monte-Carlo permutation p-values")
    w.add_argument("--embeddings", default=None, help=_EMB_HELP)
    g = w.add_mutually_exclusive_group()
    g.add_argument("--test", default=None, help="Caliskan WEAT 1..10, or 'all' for the Table-3 summary (default: all)")
    g.add_argument(
        "--sets",
        default=None,
        help="JSON file with {'X': [...], 'Y': [...], 'A': [...], 'B': [...]} "
        "(or a list of such, each with an optional 'name')",
    )
    w.add_argument(
        "--similarity", default="cosine", help="cosine | euclidean | manhattan | mahalanobis (default cosine)"
    )
    w.add_argument("--statistic", default="mean", help="mean | median | min | max | discrete (default mean)")
    w.add_argument(
        "--permutations",
        default="auto",
        help="'auto' (exact when <= --exact-limit splits, else 100000 sampled), 'exact', or a number of sampled splits",
    )
    w.add_argument(
        "--exact-limit",
        type=constrained("trustlab.metrics.bias:weat", "exact_limit"),
        default=1_000_000,
        help="largest number of splits enumerated exactly under 'auto'",
    )
    w.add_argument(
        "--alternative",
        default=None,
        help="two-sided | greater | less (default: two-sided for a single --test or --sets; one-sided in the "
        "stereotype direction for --test all, as in Azarpanah & Farhadloo's Table 3). "
        "The sidedness used is printed with every p-value",
    )
    w.add_argument(
        "--ddof",
        type=constrained("trustlab.metrics.bias:weat", "ddof"),
        default=1,
        help="ddof of the effect-size SD (1 reproduces Caliskan)",
    )
    w.add_argument(
        "--alpha",
        type=constrained("trustlab.metrics.bias:weat_summary", "alpha"),
        default=0.01,
        help="significance level of the summary (default 0.01)",
    )
    w.add_argument("--seed", type=seed_type(), default=None, help="seed of the permutation sampler")
    w.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"], help="auto | cpu | gpu")
    w.add_argument("--on-missing", default="drop", help="drop (default; dropped words are reported) | raise")
    w.add_argument("-o", "--output", default=None, help="also write the JSON result to this file (atomically)")
    add_output_flags(w)
    w.set_defaults(func=run_weat)

    m = bsub.add_parser("mac", help="Mean Average Cosine distance (Manzini et al.) with per-class breakdown")
    m.add_argument("--embeddings", default=None, help=_EMB_HELP)
    m.add_argument("--sets", default=None,
                   help="JSON file with {'targets': [...], 'attributes': {class: [...], ...}} (default: the 32 bundled "
                        "professions against the female and male words of the 7 bundled gender pairs)")
    m.add_argument("--on-missing", default="drop", help="drop | raise")
    m.add_argument("-o", "--output", default=None, help="also write the JSON result to this file (atomically)")
    add_output_flags(m)
    m.set_defaults(func=run_mac)

    b = bsub.add_parser("bayes", help="Bayesian hierarchical model of raw cosine distances (89%% HPDIs)")
    src = b.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", help="CSV with columns protected_word, connection, cosine_distance")
    src.add_argument("--example", action="store_true", help="use the shipped religion / Reddit data")
    b.add_argument(
        "--model", default="connection", help="connection (m[word] + co[connection]) | cell (m[word x connection])"
    )
    b.add_argument("--draws", type=constrained("trustlab.metrics.bias:bayesian_bias", "draws"), default=2000,
                   help="posterior draws kept per chain (default 2000)")
    b.add_argument("--warmup", type=constrained("trustlab.metrics.bias:bayesian_bias", "warmup"), default=500,
                   help="warm-up (tuning) draws per chain, discarded (default 500)")
    b.add_argument("--chains", type=constrained("trustlab.metrics.bias:bayesian_bias", "chains"), default=4,
                   help="independent chains (default 4)")
    b.add_argument(
        "--hdi",
        type=constrained("trustlab.metrics.bias:bayesian_bias", "hdi_prob"),
        default=0.89,
        help="HPDI mass (default 0.89)",
    )
    b.add_argument("--seed", type=seed_type(), default=None)
    b.add_argument("-o", "--output", default=None, help="also write the JSON result to this file (atomically)")
    add_output_flags(b)
    b.set_defaults(func=run_bayes)

    d = bsub.add_parser("direct", help="gender direction (PCA of definitional pairs) and DirectBias")
    d.add_argument("--embeddings", default=None, help=_EMB_HELP)
    d.add_argument(
        "--sets",
        default=None,
        help="JSON with optional 'pairs' [[female, male], ...] and 'words' [...]; "
        "default: Matthews et al.'s 7 pairs and 32 professions",
    )
    strict = d.add_argument(
        "--strictness",
        dest="c",
        type=constrained("trustlab.metrics.bias:direct_bias", "c"),
        default=1.0,
        metavar="C",
        help="DirectBias strictness (Bolukbasi et al.'s c: the mean of |cos|^c; default 1)",
    )
    deprecated_alias(d, "--c", strict)
    d.add_argument("-o", "--output", default=None, help="also write the JSON result to this file (atomically)")
    add_output_flags(d)
    d.set_defaults(func=run_direct)


def _embeddings(args):
    """The embeddings named by --embeddings, or the bundled subset (with a note for text output)."""
    from trustlab.metrics.embeddings import load_embeddings

    if args.embeddings:
        return load_embeddings(args.embeddings), []
    from trustlab.metrics.bias import load_weat_embeddings

    return load_weat_embeddings(), [_BUNDLED_NOTE]


def _read_json(path: str):
    p = Path(path)
    if not p.exists():
        raise CLIError(f"file {path!r} does not exist")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CLIError(f"{path} is not valid JSON: {exc}") from None


def _finish(args, obj, lines) -> int:
    if args.output:
        with atomic_write(args.output) as fh:
            json.dump(obj, fh, default=_jsonable)
            fh.write("\n")
    if args.json:
        emit_json(obj)
    else:
        for ln in lines:
            print(ln)
    return 0


def _jsonable(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _perm_arg(v: str):
    if v in ("auto", "exact"):
        return v
    try:
        n = int(v)
    except ValueError:
        try:  # 1e6-style spellings of whole numbers, as the other integer options take
            f = float(v)
            n = int(f) if f == f and abs(f) != float("inf") and f.is_integer() else None
        except ValueError:
            n = None
        if n is None:
            raise CLIError(f"--permutations must be 'auto', 'exact' or a positive integer; got {v!r}") from None
    if n < 1:
        raise CLIError(f"--permutations must be a positive integer; got {n}")
    return n


def _fmt_p(p: float) -> str:
    return f"{p:.3g}"


def run_weat(args) -> int:
    from trustlab.metrics.bias import weat, weat_summary
    from trustlab.metrics.embeddings import MissingWordsWarning

    perms = _perm_arg(args.permutations)
    emb, head = _embeddings(args)
    common = dict(
        similarity=args.similarity, statistic=args.statistic, ddof=args.ddof, permutations=perms,
        exact_limit=args.exact_limit, on_missing=args.on_missing, random_state=args.seed,
        backend=args.backend,
    )
    if args.sets:
        spec = _read_json(args.sets)
        specs = spec if isinstance(spec, list) else [spec]
        results = []
        for i, sp in enumerate(specs):
            if not isinstance(sp, dict) or any(k not in sp for k in "XYAB"):
                raise CLIError(f"{args.sets}: entry {i} needs keys 'X', 'Y', 'A', 'B' (lists of words)")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingWordsWarning)
                r = weat(emb, sp["X"], sp["Y"], sp["A"], sp["B"], name=str(sp.get("name", f"set {i + 1}")),
                         alternative=args.alternative or "two-sided", **common)
            results.append(r.to_dict())
        lines = head + [_weat_line(r) for r in results]
        return _finish(args, results[0] if len(results) == 1 else results, lines)
    test = args.test or "all"
    if test == "all":
        s = weat_summary(emb, alpha=args.alpha, alternative=args.alternative or "auto",
                         progress=show_progress(args), **common)
        obj = s.to_dict()
        lines = head + [_weat_line(r) for r in s.results.values()]
        lines.append(
            f"significant (p < {s.alpha:g}, {_sided(s.alternative)}): {s.n_significant} of {s.n_tests}; "
            f"|d| mean {s.mean_abs_effect:.3f}, sd {s.sd_abs_effect:.3f}"
        )
        if args.alternative is None:
            lines.append("note: --test all uses one-sided p-values in the stereotype direction (the paper's "
                         "Table 3); a single --test is two-sided by default; choose with --alternative")
        return _finish(args, obj, lines)
    try:
        t = int(test)
    except ValueError:
        raise CLIError(f"--test must be 1..10 or 'all'; got {test!r}") from None
    from trustlab.metrics.bias import weat_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        r = weat_test(emb, t, alternative=args.alternative or "two-sided", **common)
    return _finish(args, r.to_dict(), head + [_weat_line(r.to_dict())])


def _sided(alternative: str) -> str:
    return "two-sided" if alternative == "two-sided" else f"one-sided, {alternative}"


def _weat_line(r: dict) -> str:
    dropped = {k: v for k, v in r["dropped"].items() if v}
    extra = f"  dropped: {dropped}" if dropped else ""
    se = f" +- {r['p_value_se']:.2g}" if r["method"] != "exact" else ""
    return (
        f"{r['name'] or 'WEAT'}: d = {r['effect_size']:.3f}, p = {_fmt_p(r['p_value'])}{se} "
        f"({_sided(r['alternative'])}; {r['method']}, {r['n_permutations']} splits; "
        f"{r['similarity']}/{r['statistic_name']}; sizes {r['sizes']}){extra}"
    )


def run_mac(args) -> int:
    from trustlab.metrics.bias import load_weat_sets, mac
    from trustlab.metrics.embeddings import MissingWordsWarning

    if args.sets:
        spec = _read_json(args.sets)
        if not isinstance(spec, dict) or "targets" not in spec or "attributes" not in spec:
            raise CLIError(f"{args.sets} needs keys 'targets' (list) and 'attributes' ({{class: list}})")
        sets_note = []
    else:
        d = load_weat_sets()
        spec = {"targets": d["professions"],
                "attributes": {"female": [f for f, _ in d["gender_pairs"]], "male": [m for _, m in d["gender_pairs"]]}}
        sets_note = ["sets: bundled 32 professions vs the female / male words of the 7 gender pairs"]
    emb, head = _embeddings(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        r = mac(emb, spec["targets"], spec["attributes"], on_missing=args.on_missing)
    lines = head + sets_note + [f"MAC = {r.value:.4f}"] + [f"  {c}: {v:.4f}" for c, v in r.per_class.items()]
    dropped = {k: v for k, v in r.dropped.items() if v}
    if dropped:
        lines.append(f"dropped: {dropped}")
    return _finish(args, r.to_dict(), lines)


def run_bayes(args) -> int:
    import pandas as pd

    from trustlab.metrics.bias import bayesian_bias, load_bayes_example

    if args.example:
        df = load_bayes_example()
    else:
        p = Path(args.data)
        if not p.exists():
            raise CLIError(f"file {args.data!r} does not exist")
        try:
            df = pd.read_csv(p)
        except Exception as exc:  # parser errors
            raise CLIError(f"could not read {args.data} as CSV: {exc}") from None
    r = bayesian_bias(df, model=args.model, draws=args.draws, warmup=args.warmup, chains=args.chains,
                      hdi_prob=args.hdi, random_state=args.seed)
    lines = [f"{'coefficient':<40} {'mean':>8} {'sd':>7} {int(round(r.hdi_prob * 100))}% HPDI        rhat"]
    for c in r.coefficients:
        lines.append(
            f"{c['name']:<40} {c['mean']:8.3f} {c['sd']:7.3f} "
            f"[{c['hpdi_low']:7.3f}, {c['hpdi_high']:7.3f}] {c['rhat']:.3f}"
        )
    lines.append(f"sigma {r.sigma['mean']:.4f}  (n = {r.n_obs}, {r.n_chains} chains x {r.n_draws} draws)")
    return _finish(args, r.to_dict(), lines)


def run_direct(args) -> int:
    from trustlab.metrics.bias import direct_bias, gender_direction, load_weat_sets
    from trustlab.metrics.embeddings import MissingWordsWarning

    d = load_weat_sets()
    pairs, words = d["gender_pairs"], d["professions"]
    if args.sets:
        spec = _read_json(args.sets)
        if not isinstance(spec, dict):
            raise CLIError(f"{args.sets} must be a JSON object with optional 'pairs' and 'words'")
        pairs = spec.get("pairs", pairs)
        words = spec.get("words", words)
    emb, head = _embeddings(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingWordsWarning)
        g = gender_direction(emb, pairs)
        r = direct_bias(emb, words, g, c=args.c)
    obj = {
        "direct_bias": r.value,
        "c": r.c,
        "pc1_minus_pc2": g.dominance,
        "explained_variance_ratio": g.explained_variance_ratio[:5],
        "pairs_used": g.pairs,
        "pairs_dropped": g.dropped,
        "per_word": r.per_word,
        "words_dropped": r.dropped,
    }
    lines = head + [
        f"DirectBias_{r.c:g} = {r.value:.4f} over {len(r.per_word)} words "
        f"(PC1 - PC2 = {g.dominance:.3f}, {len(g.pairs)} pairs)",
    ]
    lines += [f"  {w:<16} {v:+.3f}" for w, v in sorted(r.per_word.items(), key=lambda kv: kv[1])]
    if r.dropped or g.dropped:
        lines.append(f"dropped: words {r.dropped}, pairs {g.dropped}")
    return _finish(args, obj, lines)
