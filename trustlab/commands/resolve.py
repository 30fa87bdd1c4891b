"""``trustlab resolve``: entity resolution of a record table (or a bundled dataset)."""
from __future__ import annotations

import argparse
import sys
import time

from trustlab.commands._common import (
    CLIError,
    add_output_flags,
    atomic_path,
    constrained,
    emit_json,
    encoding_type,
    seed_type,
    show_progress,
)

_API = "trustlab.er.pipeline:resolve"  # the declared constraints the options share


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "resolve",
        help="resolve records into entities (entity resolution)",
        description=(
            "Resolve the records of INPUT (CSV, .csv.gz or parquet) into entities: blocking, "
            "pairwise scoring (supervised with --labels, else unsupervised Fellegi-Sunter), and "
            "clique partitioning (--method xer) or a baseline. With --dataset NAME the bundled "
            "dataset is resolved and evaluated against its true entities."
        ),
    )
    p.add_argument("input", nargs="*", help="records file (CSV, .csv.gz or parquet); two or more files are "
                   "resolved together with a source column (see --link-only)")
    p.add_argument("--dataset", help="a bundled dataset instead of INPUT: csv_example, patent, settlements, "
                   "restaurant, febrl1..febrl4")
    p.add_argument("--id-col", help="unique record id column (default: 'id' if present, else the row number)")
    p.add_argument("--fields", help="columns to compare as col:kind,... (kinds: string, name, address, phone, "
                   "numeric, date, exact, latlon, tokens); inferred when omitted; quote a column name holding "
                   ", ; : + in backquotes, e.g. '`http://x.org/ontology#name`:name'")
    p.add_argument("--labels", help="training labels: a CSV of pairs (id_l,id_r,match) or of (id,entity); "
                   "or the name of an entity column of INPUT")
    p.add_argument("--unsupervised", action="store_true",
                   help="with --dataset: ignore the truth for training (Fellegi-Sunter EM)")
    p.add_argument("--truth", help="column of INPUT with true entity ids (prints metrics)")
    p.add_argument("--method", default="xer", help="xer (default), connected_components or hierarchical")
    p.add_argument("--compare", default="", help="baseline methods to run on the same scores, comma separated "
                   "(default: none)")
    p.add_argument("--blocking", help="blocking rules separated by ';', e.g. 'token:name;key:zip'; quote a column "
                   "name holding : + @ ; in backquotes, e.g. 'token:`http://x.org/ontology#name`'")
    p.add_argument("--max-block-size", type=constrained(_API, "max_block_size"), default=None,
                   help="purge blocks larger than this (default 200)")
    p.add_argument("--threshold", type=constrained(_API, "threshold"), default=None,
                   help="xER blocking threshold T on the signed weights: pairs below it are dropped before "
                   "clustering (default: none, or the threshold saved in --model)")
    p.add_argument("--time-limit", type=constrained(_API, "time_limit"), default=None, metavar="S",
                   help="wall-clock seconds for the whole call: blocking and scoring run first (they are not "
                   "interrupted) and the clustering gets what is left, shared by its components "
                   "(> 0; default: the clustering gets a work budget of 10 + 1 per 20 records of the largest "
                   "component, at most 120, in reference seconds of counted work: about that many seconds on a "
                   "quiet machine, and the same entities whatever the load)")
    p.add_argument("--train-fraction", type=constrained(_API, "train_fraction"), default=0.5,
                   help="share of labelled pairs used for training (default 0.5)")
    p.add_argument("--seed", type=seed_type(), default=0,
                   help="random_state: seed of the training split and of the random pairs Fellegi-Sunter "
                   "estimates u from (default 0)")
    p.add_argument("--encoding", type=encoding_type, default=None,
                   help="text encoding of INPUT (default utf-8, or UTF-16 by its byte-order mark)")
    p.add_argument("--sep", default=None, help="delimiter of CSV INPUT (default: detected among comma, tab, "
                   "semicolon, pipe, %% and #; an unclear file stops with an error asking for --sep)")
    p.add_argument("--output", "-o", help="write one row per input record here (atomically): [source,] id, "
                   "entity_id, then the record's columns (CSV, or parquet by extension)")
    lk = p.add_mutually_exclusive_group()
    lk.add_argument("--link-only", dest="link_type", action="store_const", const="link_only",
                    help="several tables: compare only records of different tables and never merge two "
                    "records of one table")
    lk.add_argument("--link-and-dedupe", dest="link_type", action="store_const", const="link_and_dedupe",
                    help="several tables: compare all pairs (the default for several inputs)")
    lk.add_argument("--link-type", dest="link_type", choices=["dedupe_only", "link_only", "link_and_dedupe"],
                    help="as in the API; with one INPUT, link_only reads the table of each record from --source-col")
    p.add_argument("--one-to-one", action="store_true",
                   help="the INPUT tables are each duplicate-free: no entity holds two records of one table, "
                   "solved exactly (two tables: a maximum-weight assignment, proven optimal at any size; "
                   "more: clique partitioning with same-table pairs forbidden); needs several INPUT files "
                   "(or --link-type with --source-col) and --method xer")
    p.add_argument("--save-model", metavar="PATH", help="save the fitted model (fields, blocking rules, "
                   "parameters) to this JSON file")
    p.add_argument("--model", metavar="PATH", help="apply a model saved with --save-model (no training)")
    p.add_argument("--existing", metavar="PATH", help="with --model: an earlier --output to resolve INPUT "
                   "against; existing entity ids stay stable (they change only when new records merge "
                   "entities: the merged entity keeps the smallest id)")
    p.add_argument("--pairs", metavar="PATH", help="write the scored pairs with record ids, probability, "
                   "weight and per-field match weights (CSV, or parquet by extension)")
    p.add_argument("--report", metavar="PATH", help="write a self-contained HTML report of the run")
    p.add_argument("--column-map", metavar="A=B,...", help="several INPUT files: pair column A of the first file "
                   "with column B of the others (quote names holding , = in backquotes); the rest are paired by "
                   "name and content, and the pairing is printed")
    p.add_argument("--formula-guard", action=argparse.BooleanOptionalAction, default=True,
                   help="in CSV written by --output and --pairs, start text cells a spreadsheet would run as a "
                   "formula (=..., @..., +/-... other than numbers) with a ' (default: on; --existing reads such "
                   "files back exactly). --no-formula-guard writes every cell verbatim (for other programs)")
    p.add_argument("--source-col", default="source_dataset",
                   help="name of the source column (default source_dataset, as Splink); the file stem is the source")
    p.add_argument("--settings", metavar="FILE", help="read the settings from a JSON file: a ResolveSettings "
                   "dict (ResolveSettings.to_dict(); keys not named keep their defaults) or a model file written by "
                   "--save-model (its resolve_settings); the options given on the command line override it")
    add_output_flags(p)
    _mark_defaults(p)
    p.set_defaults(func=run)
    from trustlab.commands import resolve_distributed

    resolve_distributed.add_arguments(p)


def _read_settings(path: str):
    """(ResolveSettings, the field names the file sets) from ``--settings FILE``."""
    import json

    from trustlab.er.model import MODEL_FORMAT, load_model
    from trustlab.er.settings import ResolveSettings

    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except OSError as exc:
        raise CLIError(f"--settings {path!r}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CLIError(f"--settings {path!r} is not a JSON file ({exc})") from None
    try:
        if isinstance(d, dict) and d.get("format") == MODEL_FORMAT:  # a saved model: the settings it was trained with
            return load_model(path).resolve_settings, set(ResolveSettings.field_names())
        s = ResolveSettings.from_dict(d)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"--settings {path!r}: {exc}") from None
    return s, set(d) - {"format", "version"}


class _DefaultStr(str):
    """An option's default, left as the parser set it (not given on the command line)."""


class _DefaultFloat(float):
    """An option's default, left as the parser set it (not given on the command line)."""


#: options that are settings of ResolveSettings: with --settings, only those given override the file
_SETTING_OPTIONS = {"method": "method", "threshold": "threshold", "time_limit": "time_limit",
                    "train_fraction": "train_fraction", "compare": "compare_methods", "source_col": "source_col"}


def _mark_defaults(p) -> None:
    for a in p._actions:
        if a.dest in _SETTING_OPTIONS and isinstance(a.default, (str, float)):
            a.default = (_DefaultStr if isinstance(a.default, str) else _DefaultFloat)(a.default)


def _given(args, settings) -> dict:
    """The setting options for resolve: every one without ``--settings`` (as always);
    with it, only those given on the command line (they override the file)."""
    out = {}
    for dest, name in _SETTING_OPTIONS.items():
        v = getattr(args, dest)
        default = v is None or isinstance(v, (_DefaultStr, _DefaultFloat))
        if settings is not None and default:
            continue
        if isinstance(v, _DefaultStr):
            v = str(v)
        elif isinstance(v, _DefaultFloat):
            v = float(v)
        out[name] = [m for m in v.split(",") if m.strip()] if dest == "compare" else v
    return out


def _read_labels(path: str, id_col: str):
    from trustlab.er.records import read_records

    lab = read_records(path)
    if lab.shape[1] >= 3:
        return lab.iloc[:, :3]
    if lab.shape[1] == 2:
        return dict(zip(lab.iloc[:, 0], lab.iloc[:, 1]))
    raise ValueError(
        f"labels file {path!r} needs 2 columns (id, entity) or 3 (id_l, id_r, match); got {list(lab.columns)}"
    )


def _write_table(frame, tmp, name: str, guard: bool = False) -> None:
    if str(name).lower().endswith((".parquet", ".pq")):
        try:
            frame.to_parquet(tmp, index=False)
        except ImportError as exc:
            raise ImportError(f"writing parquet needs pyarrow: pip install 'trustlab[parquet]' ({exc})") from None
    else:
        if guard:  # CSV for people: no cell a spreadsheet would run as a formula
            from trustlab.er.records import guard_formulas

            frame = guard_formulas(frame)
        frame.to_csv(tmp, index=False)


def run(args) -> int:
    try:
        return _run(args)
    except ImportError as exc:  # optional dependency missing: say how to install it
        raise CLIError(str(exc)) from None


def _budget_line(b: dict) -> str:
    """The pair budget (and the memory it plans for) beside the pairs made and this process's
    peak resident memory: what the run said it would use and what it used."""
    import resource
    import sys as _sys

    used = int(b.get("n_candidate_pairs") or 0) + int(b.get("n_completed_pairs") or 0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if _sys.platform == "darwin" else 1024)
    line = f"budget: {used:,} pairs compared (candidates and completed components)"
    if b.get("pair_budget") is not None:
        line += f" of at most {int(b['pair_budget']):,}"
        if b.get("budget_bytes"):
            line += f" (planned: {_gib(int(b['budget_bytes']))} for pairs and comparisons)"
    return line + f"; peak memory of this process {_gib(peak)}"


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.0f} MiB"


def _run(args) -> int:
    from trustlab.commands import resolve_distributed
    from trustlab.er import resolve
    from trustlab.er.records import read_records

    if resolve_distributed.wanted(args):  # --client, --local-cluster or a directory: every stage on Dask
        return resolve_distributed.run(args)
    t0 = time.perf_counter()
    if (not args.input) == (args.dataset is None):
        raise CLIError("give either INPUT or --dataset NAME (not both)")
    kw: dict = {}
    settings, named = _read_settings(args.settings) if getattr(args, "settings", None) else (None, set())
    if settings is not None:
        kw["settings"] = settings
    if args.dataset:
        from trustlab.datasets import load_er_dataset

        ds = load_er_dataset(args.dataset)
        records = ds.records
        # the dataset's own settings, except those the --settings file names
        kw.update({k: v for k, v in ds.resolve_kwargs().items() if k not in named})
        truth = ds.truth_col
        # supervised on a --train-fraction split of the truth (the xER paper's setting),
        # except Febrl and --unsupervised: Fellegi-Sunter EM with no labels
        unsup = args.unsupervised or args.dataset.startswith("febrl")
        labels = None if unsup else ds.truth_col
    else:
        tables = [read_records(f, encoding=args.encoding, sep=args.sep) for f in args.input]
        if len(tables) > 1:
            from trustlab.er.linking import stem_names

            records = dict(zip(stem_names(args.input), tables))
        else:
            records = tables[0]
        truth = args.truth
        labels = None
    if args.id_col:
        kw["id_col"] = args.id_col
    if args.fields:
        kw["fields"] = args.fields
    if args.blocking:
        from trustlab.er.rules import split_rules

        kw["blocking"] = split_rules(args.blocking)
    if args.max_block_size is not None:
        kw["max_block_size"] = args.max_block_size
    if args.link_type:
        kw["link_type"] = args.link_type
    if args.one_to_one:
        kw["one_to_one"] = True
    if args.column_map:
        if not isinstance(records, dict):
            raise CLIError("--column-map pairs the columns of two or more INPUT files; give several files")
        from trustlab.er.linking import parse_column_map

        kw["column_map"] = parse_column_map(args.column_map)
    if args.labels:
        if isinstance(records, dict):
            raise CLIError("--labels with several INPUT files is not supported; stack them with a source column")
        if args.input and args.labels in records.columns:
            labels = args.labels
        else:
            import os

            if not os.path.exists(args.labels):
                cols = f"a column of INPUT (it has {list(records.columns)})" if args.input else "a column"
                raise CLIError(f"--labels {args.labels!r} is neither {cols} nor an existing labels file; "
                               "pass an entity column name or a CSV of (id, entity) or (id_l, id_r, match)")
            labels = _read_labels(args.labels, kw.get("id_col") or "id")
    if args.existing and not args.model:
        raise CLIError("--existing needs --model PATH (the model saved with --save-model)")
    if args.model:
        kw["model"] = args.model
    if args.existing:
        if isinstance(records, dict):
            raise CLIError("--existing takes one INPUT file of new records")
        from trustlab.er.records import unguard_formulas

        # an earlier --output, read back exactly (undoing its spreadsheet-formula guard)
        ex = read_records(args.existing, encoding=args.encoding, sep=args.sep)
        kw["existing"] = unguard_formulas(ex)
        kw["existing"].attrs.update(ex.attrs)
    if args.time_limit is not None:
        from trustlab.er.defaults import check_time_limit

        try:
            check_time_limit(args.time_limit, func="--time-limit")
        except ValueError:
            raise CLIError(
                "--time-limit must be a positive number of seconds (omit it for the size-scaled default); "
                f"got {args.time_limit}"
            ) from None
    res = resolve(records, labels=labels, truth=truth, random_state=args.seed, progress=show_progress(args),
                  **_given(args, settings), **kw)
    if args.output:
        frame = res.to_frame(records=True)
        with atomic_path(args.output) as tmp:
            _write_table(frame, tmp, args.output, guard=args.formula_guard)
    if args.save_model:
        from trustlab.er.model import save_model

        with atomic_path(args.save_model) as tmp:
            save_model(res, tmp)
    if args.pairs:
        from trustlab.er.report import pairs_frame

        with atomic_path(args.pairs) as tmp:
            _write_table(pairs_frame(res), tmp, args.pairs, guard=args.formula_guard)
    if args.report:
        from trustlab.er.report import write_report

        with atomic_path(args.report) as tmp:
            write_report(res, tmp, title=f"trustlab resolve {' '.join(args.input) if args.input else args.dataset}")
    if res.column_pairing is not None and res.column_pairing.differs and not args.quiet:
        # the pairing decides what is compared: show it (stderr: stdout may be --json)
        sys.stderr.write("columns paired across the tables (override with --column-map A=B,...):\n"
                         + res.column_pairing.describe() + "\n")
    summary = res.summary()
    summary["seconds"] = round(time.perf_counter() - t0, 4)
    inp = args.input[0] if args.input and len(args.input) == 1 else (args.input or None)
    used = res.resolve_settings if settings is not None else None  # with --settings: the file's method, say
    out = {"dataset": args.dataset, "input": inp, "method": used.method if used is not None else args.method,
           "link_type": res.link_type}
    if res.metrics is None:
        out.update({"precision": None, "recall": None, "f1": None})
    out.update(summary)
    if res.field_report is not None:
        out["field_choices"] = res.field_report.to_dict()["choices"]
    for k in ("output", "save_model", "pairs", "report"):
        if getattr(args, k):
            out[k] = getattr(args, k)
    if args.json:
        emit_json(out)
        return 0
    if not args.quiet:
        w = sys.stdout.write
        w(f"{out['n_records']} records -> {out['n_entities']} entities ({out['method']}) in {out['seconds']:.2f} s\n")
        if res.field_report is not None:
            w("fields (inferred; override with --fields col:kind,...):\n" if not args.fields else "fields:\n")
            w(res.field_report.describe() + "\n")
        if out.get("model_warnings"):
            w("WARNING: unsupervised training degenerated: " + "; ".join(out["model_warnings"]) + "\n")
        b = out["blocking"]
        w(
            f"blocking: {b['n_candidate_pairs']} candidate pairs, reduction ratio {b['reduction_ratio']:.4f}"
            + (f", pair completeness {b['pair_completeness']:.4f}" if b.get("pair_completeness") is not None else "")
            + "\n"
        )
        w(_budget_line(b) + "\n")
        w(f"components: {out['component_status']}; proven optimal {out.get('n_components_proven', 0)} of "
          f"{out.get('n_components_multi', 0)} multi-record components (max gap {out.get('max_gap', 0.0):.3g})\n")
        if out.get("one_to_one"):
            o = out["one_to_one"]
            w(f"one-to-one: {o['solver']} over tables {o['sources']} (duplicate-free: {o['duplicate_free']})\n")
        if res.metrics:
            m = res.metrics
            w("pairwise P/R/F1 %.4f / %.4f / %.4f; B3 F1 %.4f; homogeneity %.4f completeness %.4f V %.4f; "
              "ARI %.4f FMI %.4f\n" % (m["precision"], m["recall"], m["f1"], m["bcubed_f1"], m["homogeneity"],
                                      m["completeness"], m["v_measure"], m["ari"], m["fmi"]))
        for name, bm in res.baselines.items():
            if "f1" in bm:
                w(f"  baseline {name}: P/R/F1 {bm['precision']:.4f} / {bm['recall']:.4f} / {bm['f1']:.4f}, "
                  f"{bm['n_entities']} entities\n")
            else:
                w(f"  baseline {name}: {bm['n_entities']} entities\n")
        if args.output:
            w(f"wrote {args.output}\n")
    return 0
