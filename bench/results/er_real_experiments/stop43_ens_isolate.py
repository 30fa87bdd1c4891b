"""Diagnostic only (monkeypatches, not a change): which pipeline addition costs ENS its ~0.02."""
import sys, warnings
ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np
from pathlib import Path
import er_real, trustlab
from trustlab.er import scoring
from trustlab.metrics.clustering import pairwise_precision_recall_f1
init, beyond = scoring.FSModel.__init__, scoring.FSModel._record_beyond_fields
def run(tag, name):
    inp, _, truth = er_real.load(name, Path("/work/shared/data"))
    r = trustlab.resolve(str(inp[0])); p, rc, f = pairwise_precision_recall_f1(np.asarray(r.entity), truth)
    print(f"{name} {tag}: F1 {f:.4f} (P {p:.3f} / R {rc:.3f})", flush=True)
for name in sys.argv[1:]:
    run("as is", name)
    scoring.FSModel.__init__ = lambda self, fields, **kw: init(self, fields, **{**kw, "tf": False})
    run("no TF", name)
    scoring.FSModel.__init__ = init
    scoring.FSModel._record_beyond_fields = lambda self, W, R=None: W
    run("no record overlap correction", name)
    scoring.FSModel.__init__ = lambda self, fields, **kw: init(self, fields, **{**kw, "tf": False})
    run("neither", name)
    scoring.FSModel.__init__, scoring.FSModel._record_beyond_fields = init, beyond
