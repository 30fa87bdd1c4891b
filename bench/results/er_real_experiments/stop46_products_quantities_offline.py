"""Stop 46 (offline, first look): title quantities with units that conflict, by pair type, in stop46_products_pairs.py CSVs (the library version is comparisons.quantity_lists)."""
import re, sys, pandas as pd
from collections import Counter
U = {"gb": ("B", 1e9), "tb": ("B", 1e12), "mb": ("B", 1e6), "ghz": ("Hz", 1e9), "mhz": ("Hz", 1e6),
     "w": ("W", 1), "watt": ("W", 1), "watts": ("W", 1), "mah": ("mAh", 1), "v": ("V", 1), "volt": ("V", 1),
     "inch": ("in", 1), "inches": ("in", 1), "in": ("in", 1), '"': ("in", 1), "ft": ("in", 12), "feet": ("in", 12),
     "mm": ("mm", 1), "cm": ("mm", 10), "oz": ("oz", 1), "lb": ("lb", 1), "lbs": ("lb", 1), "mp": ("MP", 1),
     "pack": ("pk", 1), "pk": ("pk", 1), "rpm": ("rpm", 1), "ppm": ("ppm", 1), "gbps": ("bps", 1e9), "mbps": ("bps", 1e6)}
NUM = r"(\d+(?:\.\d+)?)"
RX = re.compile(r"(?<![\w.])" + NUM + r"\s*-?\s*(" + "|".join(sorted(map(re.escape, U), key=len, reverse=True)) + r")(?![a-z0-9])", re.I)
DIM = re.compile(r"(?<![\w.])" + NUM + r"\s*x\s*" + NUM + r"(?:\s*x\s*" + NUM + r")?(?![\w.])", re.I)
def q(s, units=True, dims=True):
    s = str(s).lower(); out = {}
    if units:
        for v, u in RX.findall(s):
            d, sc = U[u]; out.setdefault(d, set()).add(float(v) * sc)
    if dims:
        for m in DIM.findall(s):
            out.setdefault("AxB", set()).add(tuple(sorted(float(x) for x in m if x)))
    return out
def close(x, y):
    if isinstance(x, tuple): return x == y
    return abs(x - y) <= 0.05 * max(abs(x), abs(y))
def conflict(a, b, **kw):
    qa, qb = q(a, **kw), q(b, **kw)
    return [d for d in set(qa) & set(qb) if not any(close(x, y) for x in qa[d] for y in qb[d])]
if __name__ == "__main__":
    for f in sys.argv[1:]:
        df = pd.read_csv(f, dtype=str, keep_default_na=False)
        print("==", f)
        for kw in ({"dims": False}, {"units": False}, {}):
            res = {}
            for typ in ("tp", "fp", "fn"):
                d = df[df.type == typ]
                cs = [conflict(a, b, **kw) for a, b in zip(d.w_title, d.a_title)]
                res[typ] = (sum(1 for c in cs if c), dict(Counter(x for c in cs for x in c)))
            print(kw, res)
