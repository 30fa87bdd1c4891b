"""Comments and docstrings cite papers (author, venue, section/table/figure), never the internal
catalogue ids (``P6.7``, ``S4``) that a reader of this repository cannot look up."""
import re
from pathlib import Path

import trustlab

ROOT = Path(trustlab.__file__).parent
CATALOGUE_ID = re.compile(r"\b(P[0-9]+\.[0-9]+|S[0-9]+(\.[0-9]+)?)\b")


def test_no_catalogue_ids_in_the_package():
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
            for p in sorted(ROOT.rglob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if CATALOGUE_ID.search(line)]
    assert hits == [], "catalogue ids instead of citations:\n" + "\n".join(hits)
