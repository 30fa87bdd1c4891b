"""``trustlab info``: versions, threads and usable backends (like sklearn.show_versions);
``trustlab info --data`` lists the bundled data files with their absolute paths
(e.g. ``wildcats.txt`` for ``trustlab partition``, ``karate.edges`` for ``trustlab cliques``)."""
from __future__ import annotations

from trustlab.commands._common import add_output_flags, emit_json


def register(sub) -> None:
    p = sub.add_parser("info", help="versions, threads and which backends are usable; --data: bundled file paths")
    p.add_argument("--data", action="store_true",
                   help="list the bundled example/data files (absolute paths) instead of versions")
    add_output_flags(p)
    p.set_defaults(func=run)


def bundled_files() -> dict[str, list[str]]:
    """Bundled data files by folder of ``trustlab/data``: folder -> sorted absolute paths
    (license notes excluded).

    Examples
    --------
    >>> files = bundled_files()
    >>> any(p.endswith("wildcats.txt") for p in files["cplib"])
    True
    """
    from pathlib import Path

    from trustlab.datasets import data_path

    root = Path(str(data_path()))
    out: dict[str, list[str]] = {}
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.name == "LICENSE-NOTES.md" or "__pycache__" in f.parts or f.suffix == ".py":
            continue
        folder = f.relative_to(root).parts[0]
        out.setdefault(folder, []).append(str(f.resolve()))
    return out


def run(args) -> int:
    if getattr(args, "data", False):
        files = bundled_files()
        if args.json:
            emit_json(files)
            return 0
        for folder, paths in files.items():
            print(f"{folder}:")
            for p in paths:
                print(f"  {p}")
        return 0
    from trustlab._info import info_dict

    d = info_dict()
    if args.json:
        emit_json(d)
        return 0
    width = max(len(k) for k in d)
    for k, v in d.items():
        if isinstance(v, dict):
            print(f"{k}:")
            for k2, v2 in v.items():
                print(f"  {k2:<{width}} {v2}")
        else:
            print(f"{k:<{width}} {v}")
    return 0
