"""``trustlab explain-metrics``: explanation metrics on files in the released formats.

Subcommands (each defaults to the data bundled with trustlab):

* ``plausibility``  Ding & Koehn plausibility test (+ ``--baselines``)
* ``consistency``   Ding & Koehn model / input consistency
* ``mass-accuracy`` GECOBench mass accuracy and its uniform-random baseline
* ``geco-bias``     GECO co-occurrence dataset bias
"""
from __future__ import annotations

from trustlab.commands._common import (
    CLIError,
    add_output_flags,
    atomic_write,
    constrained,
    deprecated_alias,
    emit_json,
)


def register(sub) -> None:
    p = sub.add_parser(
        "explain-metrics",
        help="explanation metrics (plausibility, consistency, mass accuracy, GECO bias)",
        description="Explanation metrics on attribution files in the released formats "
        "(Ding & Koehn saliency files, GECO jsonl); the bundled data is the default.",
    )
    s = p.add_subparsers(dest="metric", metavar="METRIC")

    q = s.add_parser("plausibility", help="Ding & Koehn plausibility test (cue vs attractor)")
    q.add_argument("--task", default="gender", choices=["gender", "number", "winobias", "syneval"],
                   help="bundled test set: gender = Winobias, number = Syneval (default gender)")
    q.add_argument("--model", default="sota", choices=["sota", "distilled"], help="bundled saliency outputs")
    q.add_argument("--verum", help="saliency towards the expected tag (out.verum)")
    q.add_argument("--malum", help="saliency towards the alternative tag (out.malum)")
    q.add_argument("--spans", help="cue ||| attractor spans (all.subjs.txt)")
    q.add_argument("--expected", help="indices of expected-scenario examples (out.pos.idx)")
    q.add_argument("--prefixes", help="prefixes (all.prefx.txt): checks one attribution per token")
    q.add_argument("--baselines", action="store_true", help="also report the Random and Nearest baselines")
    q.add_argument("--output", help="write the passing indices here (like out.passed.idx), atomically")
    add_output_flags(q)
    q.set_defaults(func=run_plausibility)

    c = s.add_parser("consistency", help="Ding & Koehn model or input consistency (clamped Pearson)")
    c.add_argument("kind", choices=["model", "input"], help="model: M vs distilled M'; input: Winobias templates")
    c.add_argument("--task", default="gender", choices=["gender", "number", "winobias", "syneval"],
                   help="bundled test set (input consistency: gender only)")
    fa = c.add_argument("--saliency-a", dest="file_a", metavar="FILE",
                        help="model: saliency file of the first model (the paper's M)")
    fb = c.add_argument("--saliency-b", dest="file_b", metavar="FILE",
                        help="model: saliency file of the second model (the paper's M', e.g. distilled)")
    deprecated_alias(c, "--a", fa)
    deprecated_alias(c, "--b", fb)
    c.add_argument("--saliency", action="append", help="input: saliency file(s) (default: bundled verum and malum)")
    c.add_argument("--prefixes", help="input: Winobias prefixes (all.prefx.txt)")
    c.add_argument(
        "--max-groups",
        type=constrained("trustlab.metrics.explanation:winobias_template_groups", "max_groups"),
        default=147,
        help="input: use the first N template groups (147 = the released script; default)",
    )
    c.add_argument("--all-groups", action="store_true", help="input: use every template group")
    c.add_argument(
        "--threshold",
        type=constrained("trustlab.metrics.explanation:model_consistency", "threshold"),
        default=0.01,
        help="zero |psi| < threshold * max|psi| (default 0.01)",
    )
    add_output_flags(c)
    c.set_defaults(func=run_consistency)

    m = s.add_parser("mass-accuracy", help="GECOBench mass accuracy and its uniform baseline")
    m.add_argument("--data", help="GECO jsonl with ground_truth (default: bundled, see --variant/--split)")
    m.add_argument("--variant", default="all", choices=["all", "subj"], help="bundled GECO variant")
    m.add_argument("--split", default="test", choices=["train", "test"], help="bundled GECO split")
    m.add_argument("--attributions", help="word-level attributions, one list per line (same order as --data)")
    m.add_argument("--pattern-variant", action="store_true",
                   help="also score the model-free Pattern Variant (word-level tf-idf covariance; approximate)")
    add_output_flags(m)
    m.set_defaults(func=run_mass_accuracy)

    g = s.add_parser("geco-bias", help="GECO co-occurrence dataset bias")
    g.add_argument("--data", help="GECO jsonl (default: bundled training split of --variant)")
    g.add_argument("--variant", default="all", choices=["all", "subj"], help="bundled GECO variant")
    g.add_argument("--exclude-gender-terms", action="store_true",
                   help="do not count the gender terms themselves (the released code does)")
    add_output_flags(g)
    g.set_defaults(func=run_geco_bias)

    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


def _fmt(x) -> str:
    return "nan" if x != x else f"{x:.4f}"


def run_plausibility(args) -> int:
    from trustlab.metrics import explanation as ex

    files = [args.verum, args.malum, args.spans, args.expected]
    released = None
    if any(files):
        if not all(files):
            raise CLIError("--verum, --malum, --spans and --expected must be given together")
        verum, malum = ex.read_saliency(args.verum), ex.read_saliency(args.malum)
        cues, attrs = ex.read_spans(args.spans)
        expected = ex.read_indices(args.expected)
        tokens = None
        if args.prefixes:
            with ex._open_text(args.prefixes) as fh:
                tokens = fh.read().splitlines()
        source = {"verum": args.verum, "malum": args.malum, "spans": args.spans, "expected": args.expected}
    else:
        d = ex.load_ding_koehn(args.task, args.model)
        verum, malum, cues, attrs, expected, tokens = (
            d.verum,
            d.malum,
            d.cue_spans,
            d.attractor_spans,
            d.expected,
            d.prefixes,
        )
        released = d.passed
        source = {"bundled": f"ding_koehn/{args.task}/{args.model}"}
    r = ex.plausibility(verum, malum, cues, attrs, expected, tokens=tokens)
    out = {"metric": "plausibility", "source": source, **r.to_dict()}
    out.pop("passed")
    if released is not None:
        import numpy as np

        out["matches_released_pass_list"] = bool(np.array_equal(r.passed, released))
    if args.baselines:
        out["baselines"] = ex.plausibility_baselines(cues, attrs, [len(v) for v in verum]).to_dict()
    if args.output:
        with atomic_write(args.output) as fh:
            fh.writelines(f"{int(i)}\n" for i in r.passed)
        out["output"] = args.output
    if args.json:
        emit_json(out)
        return 0
    print(f"plausibility  all {_fmt(r.value)}  exp {_fmt(r.expected_rate)}  alt {_fmt(r.alternative_rate)}")
    print(
        f"  passed {r.n_passed}/{r.n}  (exp {r.n_passed_expected}/{r.n_expected}, "
        f"alt {r.n_passed_alternative}/{r.n_alternative})"
        f"  p_exp {_fmt(r.p_expected)}  95% CI [{_fmt(r.ci[0])}, {_fmt(r.ci[1])}]"
    )
    if "matches_released_pass_list" in out:
        print(f"  matches released out.passed.idx: {out['matches_released_pass_list']}")
    if args.baselines:
        b = out["baselines"]
        print(f"  Random  exp {_fmt(b['random_expected'])}  alt {_fmt(b['random_alternative'])}  (expectation)")
        print(f"  Nearest exp {_fmt(b['nearest_expected'])}  alt {_fmt(b['nearest_alternative'])}")
    return 0


def run_consistency(args) -> int:
    from trustlab.metrics import explanation as ex

    results = {}
    if args.kind == "model":
        if bool(args.file_a) != bool(args.file_b):
            raise CLIError("--saliency-a and --saliency-b must be given together")
        if args.file_a:
            pairs = {"saliency": (ex.read_saliency(args.file_a), ex.read_saliency(args.file_b))}
        else:
            a, b = ex.load_ding_koehn(args.task, "sota"), ex.load_ding_koehn(args.task, "distilled")
            pairs = {"exp (verum)": (a.verum, b.verum), "alt (malum)": (a.malum, b.malum)}
        for name, (x, y) in pairs.items():
            results[name] = ex.model_consistency(x, y, threshold=args.threshold)
    else:
        if args.task not in ("gender", "winobias"):
            raise CLIError("input consistency is implemented for the Winobias (gender) templates only")
        max_groups = None if args.all_groups else args.max_groups
        if args.saliency or args.prefixes:
            if not (args.saliency and args.prefixes):
                raise CLIError("--saliency and --prefixes must be given together")
            with ex._open_text(args.prefixes) as fh:
                prefixes = fh.read().splitlines()
            sal = {f: ex.read_saliency(f) for f in args.saliency}
        else:
            d = ex.load_ding_koehn("gender", "sota")
            prefixes = d.prefixes
            sal = {"exp (verum)": d.verum, "alt (malum)": d.malum}
        groups = ex.winobias_template_groups(prefixes, max_groups=max_groups)
        for name, s in sal.items():
            if len(s) != len(prefixes):
                raise CLIError(f"{name} has {len(s)} lines but the prefixes file has {len(prefixes)}")
            results[name] = ex.input_consistency(s, groups, threshold=args.threshold)
    if args.json:
        emit_json({"metric": f"{args.kind}_consistency",
                   "results": {k: {kk: vv for kk, vv in v.to_dict().items() if kk != "r"} for k, v in results.items()}})
        return 0
    for name, r in results.items():
        print(f"{args.kind} consistency  {name}: {_fmt(r.value)}  (pairs {r.n_pairs}, skipped for length "
              f"{r.n_skipped_length}, undefined {r.n_undefined}; 95% CI [{_fmt(r.ci[0])}, {_fmt(r.ci[1])}])")
    return 0


def _geco(args, split):
    from trustlab.metrics import explanation as ex

    if args.data:
        return ex.read_geco_jsonl(args.data), args.data
    return ex.load_geco(args.variant, split), f"bundled geco/{args.variant}/{split}"


def run_mass_accuracy(args) -> int:
    from trustlab.metrics import explanation as ex

    data, src = _geco(args, args.split)
    base = ex.mass_accuracy_uniform_baseline(data.ground_truth)
    out = {"metric": "mass_accuracy", "source": src, "n_sentences": len(data),
           "uniform_baseline": base.value}
    if args.attributions:
        attr = ex.read_saliency(args.attributions)
        if len(attr) != len(data):
            raise CLIError(f"--attributions has {len(attr)} lines but the data has {len(data)} sentences")
        r = ex.mass_accuracy(attr, data.ground_truth, tokens=data.sentences)
        d = r.to_dict()
        d.pop("per_sentence")
        out.update({"value": r.value, "n": r.n, "ci": r.ci, "dropped": d["dropped"]})
    if args.pattern_variant:
        pv = ex.pattern_variant_attributions(data.sentences, data.targets)
        out["pattern_variant"] = ex.mass_accuracy(pv, data.ground_truth).value
    if args.json:
        emit_json(out)
        return 0
    if "pattern_variant" in out:
        print(f"Pattern Variant mass accuracy {_fmt(out['pattern_variant'])}  (word-level approximation)")
    if "value" in out:
        print(f"mass accuracy {_fmt(out['value'])}  (n {out['n']}, 95% CI [{_fmt(out['ci'][0])}, "
              f"{_fmt(out['ci'][1])}], dropped {len(out['dropped'])})")
    print(f"uniform-random baseline (mean k/d) {_fmt(base.value)}  on {len(data)} sentences of {src}")
    return 0


def run_geco_bias(args) -> int:
    from trustlab.metrics import explanation as ex

    data, src = _geco(args, "train")
    r = ex.geco_cooccurrence_bias(data.sentences, data.targets, count_gender_terms=not args.exclude_gender_terms)
    if args.json:
        emit_json({"metric": "geco_cooccurrence_bias", "source": src, **r.to_dict()})
        return 0
    print(f"co-occurrence bias {r.value:.4f}  (female {r.count_female}, male {r.count_male}; "
          f"{r.n_sentences} sentences of {src}; 0.5 = balanced)")
    return 0
