"""``trustlab privatize`` (private release of a vector file) and ``trustlab privacy-eval``."""
from __future__ import annotations

import numbers
import sys

from trustlab._validation import Interval
from trustlab.commands._common import (
    PARALLELISM_OPTION,
    CLIError,
    add_output_flags,
    constrained,
    deprecated_alias,
    emit_json,
    seed_type,
    show_progress,
)

_API = "trustlab.privacy.mechanisms:privatize"  # the declared constraints the options share
_EVAL = "trustlab.privacy.evaluation:evaluate"  # the declared constraints the options share

_THREADS = Interval(numbers.Integral, 1, 4096, closed="both")


def register(sub) -> None:
    p = sub.add_parser(
        "privatize",
        help="release private embedding vectors (PrivEmb / M1), streamed chunk by chunk",
        description=(
            "Read vectors (.npy, word2vec .txt/.vec/.bin, .parquet, gensim .kv), privatise them under "
            "(epsilon, delta)-Lipschitz privacy and write them atomically. PrivEmb (default) projects to "
            "m dimensions and adds radial noise; M1 adds noise in the input space and can swap each vector "
            "to its exact nearest vocabulary word. Randomness comes from OS entropy unless --seed is given."
        ),
    )
    p.add_argument("input", help="input vector file")
    p.add_argument("--epsilon", type=constrained(_API, "epsilon"), required=True, help="privacy parameter epsilon > 0")
    p.add_argument("--delta", type=constrained(_API, "delta"), default=1e-6, help="delta in (0, 1) (default 1e-6)")
    p.add_argument("--beta", type=constrained(_API, "beta"), default=0.9,
                   help="JL distortion beta in (0, 1) (default 0.9)")
    dim = p.add_argument("--target-dim", dest="m", type=constrained(_API, "m"), default=None, metavar="M",
                         help="dimension of the released vectors, PrivEmb's projection dimension (the paper's m; "
                         "default: calibrated from d, delta, beta)")
    deprecated_alias(p, "--m", dim)
    p.add_argument("--allow-m-above-d", action="store_true", help="permit --target-dim above the input dimension d")
    p.add_argument("--mechanism", default="privemb", choices=["privemb", "m1"], help="privemb (M2, default) or m1")
    p.add_argument("--vocab", default=None, help="M1 only: vocabulary vector file for the nearest-neighbour swap")
    p.add_argument("--projection", default="gaussian", choices=["gaussian", "achlioptas", "very_sparse"],
                   help="random projection: dense Gaussian (default), Achlioptas' sparse +-1 (density 1/3) or "
                   "the very sparse one of Li et al. (density 1/sqrt(d)); same noise and guarantee")
    p.add_argument("--output", "-o", required=True, help="output file (.npy, .txt, .bin, .parquet)")
    p.add_argument("--record", default=None, help="also write the release record (JSON) to this file")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"],
                   help="storage dtype of the output (noise is drawn and added in float64)")
    p.add_argument("--chunk-size", type=constrained(_API, "chunk_size"), default=65536,
                   help="rows per chunk (bounds memory; default 65536)")
    p.add_argument("--phi-seed", type=constrained(_API, "phi_seed"), default=None,
                   help="reuse the public projection of an earlier release")
    p.add_argument("--seed", type=seed_type(), default=None,
                   help="fix ALL randomness (reproducible, NOT private against whoever knows the seed)")
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                   help="where the release runs: cpu, gpu (CuPy), or auto: the GPU only when one is usable and the "
                   "release is large enough to gain from it (default auto)")
    jobs = p.add_argument(PARALLELISM_OPTION, dest="threads", type=constrained([_THREADS]), default=None,
                          metavar="N", help="threads of the CPU release (Numba; default: all cores)")
    deprecated_alias(p, "--threads", jobs)
    add_output_flags(p)
    p.set_defaults(func=run)

    e = sub.add_parser(
        "privacy-eval",
        help="the PrivEmb paper's utility experiments (M1 vs M2): PNG plots + JSON",
        description=(
            "Distance and inner-product approximation on fixed 100x100 word pairs and a linear SVM on "
            "Hu & Liu opinion words, for a grid of epsilon and beta; writes distance.png, "
            "inner_product.png, svm.png and privacy_eval.json to --output-dir."
        ),
    )
    e.add_argument("--embeddings", default=None,
                   help="an .npz with 'vectors' and 'words' (default: the bundled 2,200-word word2vec subset)")
    e.add_argument("--lexicon-dir", default=None, help="folder with opinion_lexicon_{positive,negative}.txt")
    e.add_argument("--epsilons", default="1,2,5,10", help="comma-separated epsilons (default 1,2,5,10)")
    e.add_argument("--betas", default="0.5,0.6,0.7,0.8,0.9",
                   help="comma-separated PrivEmb betas (default 0.5,0.6,0.7,0.8,0.9)")
    e.add_argument("--delta", type=constrained(_EVAL, "delta"), default=1e-6, help="delta in (0, 1) (default 1e-6)")
    e.add_argument("--runs", type=constrained(_EVAL, "runs"), default=3,
                   help="releases averaged for the pair experiments (default 3)")
    e.add_argument("--svm-runs", type=constrained(_EVAL, "svm_runs"), default=10,
                   help="80/20 splits for the SVM experiment (default 10)")
    e.add_argument("--no-svm", action="store_true", help="skip the SVM experiment")
    e.add_argument("--seed", type=seed_type(), default=None, help="seed for a reproducible report")
    e.add_argument("--output-dir", required=True, help="folder for the PNG plots and JSON")
    add_output_flags(e)
    e.set_defaults(func=run_eval)


def _floats(s: str, name: str) -> list[float]:
    try:
        vals = [float(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"--{name} must be comma-separated numbers, got {s!r}") from None
    if not vals:
        raise CLIError(f"--{name} is empty")
    return vals


def run(args) -> int:
    import numba

    from trustlab.privacy.io import privatize_file

    old = None
    if args.threads is not None:  # touching the thread count starts Numba's parallel runtime
        if not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
            raise CLIError(f"{PARALLELISM_OPTION} must be in [1, {numba.config.NUMBA_NUM_THREADS}] (the cores "
                           f"Numba may use here), got {args.threads}")
        old = numba.get_num_threads()
        numba.set_num_threads(args.threads)
    import warnings

    from trustlab._backend import GPUUnavailableError

    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            info = privatize_file(
            args.input, args.output, epsilon=args.epsilon, delta=args.delta, beta=args.beta, m=args.m,
            mechanism=args.mechanism, backend=args.backend, random_state=args.seed, vocab=args.vocab,
            phi_seed=args.phi_seed, allow_m_above_d=args.allow_m_above_d, chunk_size=args.chunk_size,
            dtype=args.dtype, progress=show_progress(args), record_path=args.record,
            projection=args.projection,
        )
    except GPUUnavailableError as exc:
        raise CLIError(str(exc)) from None
    finally:
        if old is not None:
            numba.set_num_threads(old)
        for w in caught:  # one line each on stderr (e.g. the --seed warning)
            print(f"trustlab privatize: warning: {w.message}", file=sys.stderr)
    if args.json:
        emit_json(info)
    elif not args.quiet:
        print(f"released {info['n']} vectors ({info['d']} -> {info['m']} dims, {info['mechanism']}, "
              f"epsilon={info['epsilon']:g}, delta={info['delta']:g}"
              + (f", beta={info['beta']:g}" if info["beta"] is not None else "")
              + f") to {info['output']} in {info['seconds']:.2f} s "
              f"({info['vectors_per_second']:.0f} vectors/s)")
        if info["phi_seed"] is not None:
            # the sensitivity needs two distinct vectors: None for n = 1 or identical rows
            extra = [f"{label} {info[key]:.3f}" for key, label in
                     (("empirical_sensitivity", "empirical sensitivity"), ("spectral_norm", "spectral norm"))
                     if info.get(key) is not None]
            print(f"public projection seed (phi_seed): {info['phi_seed']}"
                  + (f"; {', '.join(extra)}" if extra else ""))
    return 0


def run_eval(args) -> int:
    from trustlab.privacy.evaluation import evaluate, load_embeddings_subset, summarize, write_report

    eps = _floats(args.epsilons, "epsilons")
    betas = _floats(args.betas, "betas")
    if args.embeddings is None and args.lexicon_dir is None:
        data = load_embeddings_subset()
    else:
        data = load_embeddings_subset(args.embeddings, lexicon_dir=args.lexicon_dir)
    res = evaluate(data, epsilons=eps, betas=betas, delta=args.delta, runs=args.runs, svm_runs=args.svm_runs,
                   svm=not args.no_svm, random_state=args.seed, progress=show_progress(args))
    paths = write_report(res, args.output_dir)
    summ = summarize(res)
    if args.json:
        emit_json({"outputs": [str(p) for p in paths], "summary": summ, **res})
    elif not args.quiet:
        for r in res["pairs"]:
            if r["experiment"] == "distance":
                b = "" if r["beta"] is None else f" beta={r['beta']:g}"
                print(f"{r['mechanism']} eps={r['epsilon']:g}{b} m={r['m']}: mean distance error {r['mean']:.3f}")
        for r in res["svm"]:
            b = "" if r["beta"] is None else f" beta={r['beta']:g}"
            print(f"SVM {r['mechanism']} eps={r['epsilon']:g}{b}: accuracy {r['accuracy']:.3f}, AUC {r['auc']:.3f}")
        print("wrote " + ", ".join(str(p) for p in paths), file=sys.stdout)
    return 0
