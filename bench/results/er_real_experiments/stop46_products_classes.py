"""Stop 46: model-number classes (equal / contains / neighbour / same digits / unrelated / missing) of a stop46_products_pairs.py CSV, by pair type."""
import re, sys, pandas as pd, numpy as np
sys.path.insert(0, ".")
from trustlab.er.comparisons import code_variant
def norm(s): return re.sub(r"[^0-9a-z]", "", str(s).lower())
def cls(a, b):
    a, b = norm(a), norm(b)
    if not a or not b: return "missing"
    v = code_variant(np.array([a], object), np.array([b], object))[0]
    if v == 1.0: return "equal"
    if v == 0.75: return "contains"
    if v == 0.5: return "neighbour"
    from rapidfuzz.distance import Levenshtein
    if Levenshtein.normalized_similarity(a, b) >= 0.5: return "near_samedigits"
    return "unrelated"
df = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
df["cls"] = [cls(a, b) for a, b in zip(df.w_model, df.a_model)]
df["gap"] = (df.w_has_true == "False") & (df.a_has_true == "False")
print(pd.crosstab(df.cls, df.type))
print("fp truth-gap (neither has partner):", pd.crosstab(df[df.type=="fp"].cls, df[df.type=="fp"].gap))
df.to_csv(sys.argv[1].replace(".csv", "_cls.csv"), index=False)
