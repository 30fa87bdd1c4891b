"""Write bench/RESULTS.md: the summary of targets and a link to each per-area result file.

Usage: python bench/collect_results.py
Each area's benchmark writes bench/results/<area>.md (its tables, machine, command, date and
load); the summary rows live in bench/results/SUMMARY.txt. RESULTS.md links to the area files
instead of copying them, so each number lives in one place.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["cliques", "gpu", "solvers", "solvers_families", "solvers_exact", "er_real", "er", "er_peers", "er-flow",
         "reduction", "firstcall", "hostile_inputs", "privacy", "bias", "explain", "metrics", "perf"]

HEADER = """# trustlab benchmark results

All numbers below were measured with pytest-benchmark, the peer a user would pick
instead measured in the same run, and the ratio reported. Machine unless a section
says otherwise: 2-core x86-64 CPU, 24 GiB RAM, no GPU, Python 3.11.7, numba 0.68.1,
numpy 2.4. **Caveat:** during these
runs the 2-core machine was often shared with other jobs (load average up to 18;
each row or section notes its load; the 2026-11-24 19:52 privacy and whole-process
figures are quiet), so absolute
timings are noisy and ratios are the more meaningful figure; targets marked "not met"
are reported as measured. Dates: 2026-11-22 to 2026-11-25 (each section gives its own
date, command and load).

Regenerate this file with `python bench/collect_results.py` after re-running a suite.

## Summary of targets

{summary}
"""


def main() -> None:
    files = {p.stem: p for p in (HERE / "results").glob("*.md")}
    links = []
    for name in ORDER + sorted(set(files) - set(ORDER)):
        if name in files:
            first = files[name].read_text().strip().splitlines()[:1]
            title = first[0].lstrip("# ").strip() if first else name
            links.append(f"* [{name}](results/{name}.md): {title}")
    summary_file = HERE / "results" / "SUMMARY.txt"
    summary = summary_file.read_text().strip() if summary_file.exists() else "(see the area files)"
    out = HEADER.format(summary=summary) + "\n\n## Per-area results\n\n" + "\n".join(links) + "\n"
    (HERE / "RESULTS.md").write_text(out)
    print(f"wrote {HERE / 'RESULTS.md'} ({len(links)} areas linked)")


if __name__ == "__main__":
    main()
