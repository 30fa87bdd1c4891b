"""``trustlab info``: versions, threads and usable backends (like sklearn.show_versions)."""
from __future__ import annotations

from trustlab.commands._common import add_output_flags, emit_json


def register(sub) -> None:
    p = sub.add_parser("info", help="versions, threads and which backends are usable")
    add_output_flags(p)
    p.set_defaults(func=run)


def run(args) -> int:
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
