"""Diagnostic only (monkeypatches, not a change), stop 43 (tf43): does counting a value's records inflate the
term frequency of an entity's own name, and what would other TF variants do?

Usage: ``python stop43_tf_counts.py inventors_ens [rldata10000 ...]`` (dedupe files of one CSV). Prints F1 for
  as is | TF off per TF field | no tf_scale | ORACLE: TF counted once per true entity (the count the
  duplicates hypothesis asks for) | tf_scale from the table's exact random-pair agreement
  rate instead of the random sample | exact TF weight floored at the field's weaker levels' largest weight.
"""
import math, sys, warnings
ROOT = __import__("pathlib").Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import numpy as np, pandas as pd
from pathlib import Path
import er_real, trustlab
from trustlab.er import scoring
from trustlab.er.kinds import tf_keys
from trustlab.metrics.clustering import pairwise_precision_recall_f1
M = scoring.FSModel
orig = {k: getattr(M, k) for k in ("_tf_fields", "_set_tf_scale", "fit_tf", "level_weights")}


def run(tag, name, inp, truth):
    r = trustlab.resolve(str(inp[0])); p, rc, f = pairwise_precision_recall_f1(np.asarray(r.entity), truth)
    print(f"{name} {tag}: F1 {f:.4f} (P {p:.3f} / R {rc:.3f})", flush=True)


def restore():
    for k, v in orig.items():
        setattr(M, k, v)


def oracle_fit_tf(truth):
    def fit_tf(self, df):
        orig["fit_tf"](self, df)
        ent = truth[df["_row"].to_numpy()]  # the fit sees the records in another order
        for c in self._tf_fields():
            f = self.fields[c]
            k = pd.Series(tf_keys(df, f)); ok = (k != "").to_numpy()
            vc = pd.DataFrame({"k": k[ok].to_numpy(), "e": ent[ok]}).drop_duplicates()["k"].value_counts()
            tot = max(1, int(vc.sum()))
            self.tf_tables_[f.column] = {str(v): float(n / tot) for v, n in vc[vc >= 2].items()}
            self.tf_default_[f.column] = 1.0 / tot
        return self
    return fit_tf


def table_scale(self, u_rand, u):
    out = {}
    for c in self._tf_fields():
        col = self.fields[c].column
        d = self.tf_default_.get(col, 0.0)
        ur = sum(t * (t - d) for t in self.tf_tables_.get(col, {}).values())  # sum n(n-1)/N^2
        if ur > 0 and u[c, 0] / ur != 1.0:
            out[col] = float(u[c, 0] / ur)
    self.tf_scale_ = out


def floored_level_weights(self, G, T, R=None):  # level_weights with the exact TF weight floored
    W = np.zeros(G.shape)
    bf = np.log(self.m_) - np.log(self.u_)
    floor = bf[:, 1:].max(1)
    for c in range(G.shape[1]):
        g = G[:, c]; ok = g >= 0
        W[ok, c] = bf[c][g[ok]]
        t = T[:, c]; adj = (g == 0) & ~np.isnan(t)
        if adj.any():
            s = self.tf_scale_.get(self.fields[c].column, 1.0)
            W[adj, c] = np.maximum(np.log(self.m_[c, 0]) - np.log(np.maximum(t[adj] * s, 1e-12)), floor[c])
    return self._record_beyond_fields(W, R)


for name in sys.argv[1:]:
    inp, _, truth = er_real.load(name, Path("/work/shared/data")); truth = np.asarray(truth)
    run("as is", name, inp, truth)
    cols = pd.read_csv(inp[0], nrows=5, sep=None, engine="python").columns
    for col in cols:
        M._tf_fields = lambda self, col=col: [c for c in orig["_tf_fields"](self) if self.fields[c].column != col]
        run(f"TF off for {col}", name, inp, truth)
    restore()
    M._set_tf_scale = lambda self, a, b: setattr(self, "tf_scale_", {}); run("no tf_scale", name, inp, truth)
    restore(); M.fit_tf = oracle_fit_tf(truth); run("ORACLE TF counted per true entity", name, inp, truth)
    restore(); M._set_tf_scale = table_scale; run("tf_scale from the table's sum n(n-1)/N^2", name, inp, truth)
    restore(); M.level_weights = floored_level_weights; run("exact TF weight >= weaker levels' max", name, inp, truth)
    restore()
