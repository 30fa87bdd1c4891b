"""``trustlab privacy-utility``: PrivEmb's SentEval downstream protocol (Feyisetan & Kasiviswanathan,
TrustNLP 2021, Section 5.4 and Table 1) on your labelled sentences.

Examples::

    trustlab privacy-utility --sentences data.tsv --embeddings vectors.npz
    trustlab privacy-utility --sentences sents.txt --labels labels.txt --embeddings vectors.txt \\
        --epsilons 1,10 --betas 0.9 --mechanisms privemb,m1 --seed 0 --report utility.json --json
"""
from __future__ import annotations

import json
from pathlib import Path

from trustlab.commands._common import (
    CLIError,
    add_output_flags,
    atomic_write,
    constrained,
    deprecated_alias,
    emit_json,
    seed_type,
)

_API = "trustlab.privacy.downstream:downstream_utility"


def register(sub) -> None:
    p = sub.add_parser(
        "privacy-utility",
        help="sentence-classification accuracy before/after a private release (PrivEmb's SentEval protocol)",
        description=(
            "Encode each sentence as the mean of its word vectors (SentEval's bag-of-words encoder), score a "
            "logistic regression (C chosen by inner CV from SentEval's grid) by stratified k-fold CV, once on "
            "the original vectors and once per private release of them (PrivEmb and/or M1), on the same folds. "
            "Prints train and test accuracy per condition, as in the paper's Table 1."
        ),
    )
    p.add_argument("--sentences", required=True,
                   help="UTF-8 text file, one sentence per line; without --labels each line is LABEL<TAB>SENTENCE")
    p.add_argument("--labels", default=None, help="UTF-8 text file, one label per line (same order as --sentences)")
    p.add_argument("--embeddings", default=None,
                   help="word vectors: .npz ('vectors', 'words'), word2vec text/binary or gensim .kv "
                        "(default: the bundled 2,200-word word2vec subset)")
    p.add_argument("--epsilons", default="10", help="comma-separated epsilons (default 10, the paper's)")
    p.add_argument("--betas", default="0.9", help="comma-separated PrivEmb betas (default 0.9, the paper's)")
    p.add_argument("--delta", type=constrained(_API, "delta"), default=1e-6, help="delta in (0, 1) (default 1e-6)")
    dim = p.add_argument("--target-dim", dest="m", type=constrained(_API, "m"), default=None, metavar="M",
                         help="PrivEmb projection dimension (the paper's m; default: calibrated from d, delta, beta)")
    deprecated_alias(p, "--m", dim)
    p.add_argument("--mechanisms", default="privemb,m1", help="comma-separated: privemb, m1 (default both)")
    p.add_argument("--runs", type=constrained(_API, "runs"), default=1,
                   help="releases per setting, averaged (default 1)")
    p.add_argument("--folds", type=constrained(_API, "n_folds"), default=10, help="outer CV folds (default 10)")
    p.add_argument("--inner-folds", type=constrained(_API, "inner_folds"), default=5,
                   help="inner CV folds choosing C (default 5)")
    p.add_argument("--seed", type=seed_type(), default=None,
                   help="seed the folds and releases (reproducible report; NOT private against whoever knows it)")
    p.add_argument("--report", default=None, help="also write the JSON result to this file (atomically)")
    add_output_flags(p)
    p.set_defaults(func=run)


def _lines(path: str) -> list[str]:
    p = Path(path)
    if not p.exists():
        raise CLIError(f"file {path!r} does not exist")
    if p.is_dir():
        raise CLIError(f"{path!r} is a directory; pass a text file")
    return [ln.rstrip("\r\n") for ln in p.read_text(encoding="utf-8").splitlines()]


def _split(text: str, name: str, conv=str) -> list:
    try:
        vals = [conv(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"--{name} must be comma-separated numbers, got {text!r}") from None
    if not vals:
        raise CLIError(f"--{name} is empty")
    return vals


def _read_data(args) -> tuple[list[str], list[str]]:
    rows = _lines(args.sentences)
    if args.labels is None:
        keep = [(i, ln) for i, ln in enumerate(rows, 1) if ln.strip()]
        bad = [i for i, ln in keep if "\t" not in ln]
        if bad:
            raise CLIError(f"{args.sentences}: line {bad[0]} has no TAB; without --labels each line must be "
                           "LABEL<TAB>SENTENCE")
        pairs = [ln.split("\t", 1) for _, ln in keep]
        return [s for _, s in pairs], [lab.strip() for lab, _ in pairs]
    labels = [ln.strip() for ln in _lines(args.labels)]
    while labels and not labels[-1]:
        labels.pop()
    while rows and not rows[-1].strip():
        rows.pop()
    if len(rows) != len(labels):
        raise CLIError(f"{args.sentences} has {len(rows)} sentences but {args.labels} has {len(labels)} labels; "
                       "give one label per line")
    return rows, labels


def run(args) -> int:
    from trustlab.privacy.downstream import downstream_utility

    sentences, labels = _read_data(args)
    if args.embeddings:
        from trustlab.metrics.embeddings import load_embeddings

        emb = load_embeddings(args.embeddings)
    else:
        from trustlab.privacy.evaluation import load_embeddings_subset

        data = load_embeddings_subset()
        emb = (data["words"], data["vectors"])
    res = downstream_utility(
        sentences, labels, emb, epsilons=_split(args.epsilons, "epsilons", float),
        betas=_split(args.betas, "betas", float), delta=args.delta, m=args.m,
        mechanisms=_split(args.mechanisms, "mechanisms"), runs=args.runs, n_folds=args.folds,
        inner_folds=args.inner_folds, random_state=args.seed,
    )
    if args.report:
        with atomic_write(args.report) as fh:
            fh.write(json.dumps(res, indent=2) + "\n")
    if args.json:
        emit_json(res)
    elif not args.quiet:
        print(f"{res['n_sentences']} sentences, {len(res['classes'])} classes (majority {res['majority']:.3f}), "
              f"{res['n_words_released']} words released, token coverage {res['coverage']:.1%}, "
              f"{res['config']['n_folds']}-fold CV")
        for r in res["rows"]:
            what = r["condition"] + ("" if r["epsilon"] is None else f" eps={r['epsilon']:g}") + (
                "" if r["beta"] is None else f" beta={r['beta']:g}") + f" (m={r['m']})"
            print(f"{what}: train accuracy {r['train_accuracy']:.4f}, test accuracy {r['test_accuracy']:.4f} "
                  f"± {r['test_accuracy_std']:.4f}")
    return 0
