"""Stop 41: ``bench/er_diagnose.py`` on a walmart_amazon presentation written by ``stop41_presentations.py``
(``OUTDIR/VARIANT/{walmart,amazon}.csv``). Run from the repository root:
``PYTHONPATH=. python bench/results/er_real_experiments/stop41_diagnose.py VARIANT [OUTDIR] [--oracle]``."""
import sys
from pathlib import Path

sys.path.insert(0, "bench")
import er_diagnose as D  # noqa: E402
import er_real as E  # noqa: E402

variant = sys.argv[1]
rest = [a for a in sys.argv[2:] if not a.startswith("--")]
outdir = Path(rest[0] if rest else "/tmp/stop41_wa")
_load = E.load


def load(name, data):
    inputs, keys, truth = _load("walmart_amazon", data)
    return [outdir / variant / p.name for p in inputs], keys, truth


E.load = load
print(D.diagnose(variant, Path("/work/shared/data"), oracle="--oracle" in sys.argv))
