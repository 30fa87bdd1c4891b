"""Stage 8, *report*: inspecting a run, the scored pairs as a table, and a self-contained
HTML report.

* :func:`pairs_frame` — one row per scored pair: both record ids (and sources), the
  match probability, the signed weight used by the clustering, whether the pair ended in
  one entity, and per field its match weight (natural-log Bayes factor of the field's
  comparison level, Fellegi–Sunter) or, for supervised scorers, its main similarity.
* :func:`write_report` — one HTML file with no external resources: the summary, the
  fields, the m/u table, a histogram of the pair weights (inline SVG), and the
  multi-record entities with their records, evidence (pairs and field weights) and
  certificates (status and gap of the solver on their component), searchable with a
  little inline JavaScript.
"""
from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["pairs_frame", "write_report", "report_html"]


def _field_names(res: Any) -> list[str]:
    flds = getattr(res.features, "fields", None) or []
    return [f.column for f in flds]


def _per_field(res: Any) -> tuple[np.ndarray | None, str]:
    """(matrix pairs x fields, kind) with kind 'weight' (log Bayes factors) or 'similarity'."""
    fw = getattr(res, "field_weights", None)
    if fw is not None and len(fw) == len(res.pairs):
        return np.asarray(fw, np.float64), "weight"
    fm = res.features
    if fm is not None and fm.X.shape[0] == len(res.pairs) and fm.primary:
        return fm.X[:, fm.primary], "similarity"
    return None, ""


def pairs_frame(res: Any) -> pd.DataFrame:
    """The scored pairs of a :class:`~trustlab.er.Resolution` with ids and per-field weights.

    Columns: ``<id>_l``, ``<id>_r`` (and ``<source>_l``/``_r`` for several tables),
    ``match_probability``, ``weight`` (the signed edge weight), ``same_entity``,
    ``entity_l``, ``entity_r``, then ``w_<field>`` per field (natural-log Bayes factor,
    0 where a value is missing) or ``sim_<field>`` for supervised scorers.

    Examples
    --------
    >>> import trustlab
    >>> from trustlab.er import generate_records
    >>> df = generate_records(100, random_state=0)
    >>> r = trustlab.resolve(df, id_col="rec_id", fields="given_name:name,surname:name,date_of_birth:date")
    >>> list(pairs_frame(r).columns)  # doctest: +NORMALIZE_WHITESPACE
    ['rec_id_l', 'rec_id_r', 'match_probability', 'weight', 'same_entity', 'entity_l', 'entity_r',
     'w_given_name', 'w_surname', 'w_date_of_birth']
    """
    P = np.asarray(res.pairs, np.int64).reshape(-1, 2)
    idc = res.id_col
    out: dict[str, Any] = {}
    if getattr(res, "source", None) is not None:
        out[f"{res.source_col}_l"] = res.source[P[:, 0]]
        out[f"{idc}_l"] = res.ids[P[:, 0]]
        out[f"{res.source_col}_r"] = res.source[P[:, 1]]
        out[f"{idc}_r"] = res.ids[P[:, 1]]
    else:
        out[f"{idc}_l"] = res.ids[P[:, 0]]
        out[f"{idc}_r"] = res.ids[P[:, 1]]
    out["match_probability"] = np.asarray(res.prob, np.float64)
    out["weight"] = np.asarray(res.weights, np.float64)
    el, er = res.entity[P[:, 0]], res.entity[P[:, 1]]
    out["same_entity"] = el == er
    out["entity_l"] = el
    out["entity_r"] = er
    M, kind = _per_field(res)
    if M is not None:
        pre = "w_" if kind == "weight" else "sim_"
        for c, name in enumerate(_field_names(res)[: M.shape[1]]):
            out[pre + str(name)] = M[:, c]
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------- HTML
def _svg_histogram(w: np.ndarray, same: np.ndarray, bins: int = 40) -> str:
    """Stacked histogram of pair weights (pairs inside one entity vs across), inline SVG."""
    W, H, pad = 640, 220, 30
    if w.size == 0:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="40">'
            '<text x="10" y="25">no scored pairs</text></svg>'
        )
    lo, hi = float(np.min(w)), float(np.max(w))
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    a = np.histogram(w[same], edges)[0]
    b = np.histogram(w[~same], edges)[0]
    top = max(1, int(max(a.max(), b.max())))
    # log count scale: the few pairs inside entities stay visible beside the many across
    scale = (H - pad) / np.log10(1.0 + top)
    bw = (W - 2 * pad) / bins
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="weight-histogram" width="{W}" height="{H + 40}" '
             f'role="img" aria-label="histogram of pair weights">',
             f'<rect x="0" y="0" width="{W}" height="{H + 40}" fill="#fff"/>']
    half = max((bw - 1) / 2, 0.5)
    for k in range(bins):
        x = pad + k * bw
        hb = scale * np.log10(1.0 + b[k])
        ha = scale * np.log10(1.0 + a[k])
        parts.append(f'<rect x="{x:.1f}" y="{H - hb:.1f}" width="{half:.1f}" height="{hb:.1f}" fill="#c0504d">'
                     f'<title>{edges[k]:.2f}..{edges[k + 1]:.2f}: {b[k]} pairs across entities</title></rect>')
        parts.append(f'<rect x="{x + half:.1f}" y="{H - ha:.1f}" width="{half:.1f}" height="{ha:.1f}" '
                     f'fill="#4f81bd"><title>{edges[k]:.2f}..{edges[k + 1]:.2f}: {a[k]} pairs inside an entity'
                     '</title></rect>')
    parts.append(f'<line x1="{pad}" y1="{H}" x2="{W - pad}" y2="{H}" stroke="#333"/>')
    for t in np.linspace(lo, hi, 5):
        x = pad + (t - lo) / (hi - lo) * (W - 2 * pad)
        parts.append(f'<text x="{x:.1f}" y="{H + 15}" font-size="11" text-anchor="middle">{t:.1f}</text>')
    if lo < 0 < hi:
        x0 = pad + (0 - lo) / (hi - lo) * (W - 2 * pad)
        parts.append(
            f'<line x1="{x0:.1f}" y1="{pad / 2}" x2="{x0:.1f}" y2="{H}" stroke="#333" stroke-dasharray="4 3"/>'
        )
    parts.append(f'<text x="{pad}" y="{H + 32}" font-size="11">pair weight (log-odds); blue: inside an entity '
                 f'({int(same.sum())}), red: across ({int((~same).sum())}); counts on a log scale, '
                 f'largest bin {top}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(df: pd.DataFrame, cls: str = "") -> str:
    # a missing value is shown as an empty cell, not as NaN
    return df.to_html(index=False, classes=cls, border=0, float_format=lambda v: f"{v:.4g}", escape=True,
                      na_rep="")


_CSS = """
body{font-family:system-ui,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left}
th{background:#f3f3f3}.entity{border:1px solid #ccc;border-radius:6px;padding:8px;margin:8px 0}
.entity.hidden{display:none}.cert{font-size:12px;color:#555}.ok{color:#2a7a2a}.warn{color:#b36b00}
#search{font-size:15px;padding:5px;width:360px}.pos{color:#2a7a2a}.neg{color:#b22222}pre{font-size:12px}
"""

_JS = """
(function(){
  var box = document.getElementById('search');
  var ents = document.querySelectorAll('.entity');
  var count = document.getElementById('match-count');
  function filter(q){
    q = (q || '').toLowerCase().trim();
    var shown = 0;
    for (var i = 0; i < ents.length; i++){
      var hit = !q || ents[i].textContent.toLowerCase().indexOf(q) >= 0;
      ents[i].classList.toggle('hidden', !hit);
      if (hit) shown++;
    }
    count.textContent = shown + ' of ' + ents.length + ' entities shown';
    return shown;
  }
  box.addEventListener('input', function(){ filter(box.value); });
  // self-check: the search finds the first entity by its first record id and shows all again
  var ok = true;
  try {
    if (ents.length){
      var first = ents[0].getAttribute('data-first');
      ok = filter(first) >= 1 && !ents[0].classList.contains('hidden');
    }
    ok = ok && filter('') === ents.length && !!document.getElementById('weight-histogram');
  } catch (e) { ok = false; console.error('report self-check failed: ' + e); }
  document.body.setAttribute('data-selfcheck', ok ? 'ok' : 'failed');
  if (!ok) console.error('report self-check failed');
})();
"""


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "" if np.isnan(v) else f"{v:.4g}"
    return str(v)


def report_html(res: Any, *, title: str = "trustlab resolve report", max_entities: int = 2000,
                max_pairs_per_entity: int = 30) -> str:
    """The HTML text of :func:`write_report` (see there)."""
    esc = html.escape
    summ = res.summary()
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{esc(title)}</h1>"]
    # summary
    flat = {k: v for k, v in summ.items() if not isinstance(v, (dict, list))}
    parts.append("<h2>Summary</h2>")
    parts.append(_table(pd.DataFrame({"quantity": list(flat), "value": [_fmt(v) for v in flat.values()]})))
    nested = {k: v for k, v in summ.items() if isinstance(v, (dict, list))}
    if nested:
        parts.append("<details><summary>details (blocking, components, fields)</summary><pre>"
                     + esc(json.dumps(nested, indent=1, default=str)) + "</pre></details>")
    fr = getattr(res, "field_report", None)
    if fr is not None and hasattr(fr, "describe"):
        given = all(c.reason == "given by the caller" for c in getattr(fr, "choices", []) if c.role == "field")
        how = "given by the caller (fields=...)" if given else "inferred from each column's name and values"
        parts.append(f"<h2>Fields: {esc(how)}</h2><pre>" + esc(fr.describe()) + "</pre>")
    # m/u table
    parts.append("<h2>Model: m/u table</h2>")
    mdl = res.model
    if mdl is not None and hasattr(mdl, "parameter_table"):
        lam = getattr(mdl, "lambda_", None)
        if lam is not None:
            parts.append(f"<p>prior match share among candidate pairs &lambda; = {float(lam):.4g}</p>")
        parts.append(_table(mdl.parameter_table(), "mu"))
    elif mdl is not None and hasattr(mdl, "_m"):
        parts.append("<p>supervised scorer (" + esc(str(getattr(mdl, "model", ""))) + "): no m/u table; "
                     "coefficients are in the saved model.</p>")
    else:
        parts.append("<p>no model parameters available</p>")
    # histogram
    P = np.asarray(res.pairs, np.int64).reshape(-1, 2)
    same = res.entity[P[:, 0]] == res.entity[P[:, 1]] if len(P) else np.zeros(0, bool)
    wl = np.log(np.clip(res.prob, 1e-12, 1)) - np.log(np.clip(1 - np.asarray(res.prob), 1e-12, 1))
    parts.append("<h2>Pair weights</h2>" + _svg_histogram(np.clip(wl, -30, 30), same))
    # entities
    pf = pairs_frame(res)
    fcols = [c for c in pf.columns if c.startswith(("w_", "sim_"))]
    ent = res.entity
    order = pd.Series(np.arange(len(ent))).groupby(ent).apply(list)
    sizes = order.map(len)
    multi = sizes[sizes >= 2].sort_values(ascending=False, kind="stable")
    shown = multi.index[:max_entities]
    rec = getattr(res, "records", None)
    show_cols = []
    if rec is not None:
        fset = set(_field_names(res))
        show_cols = [c for c in rec.columns if c in fset]
    cr = res.clusters
    inside = pf[pf["same_entity"]]
    by_ent = {e: g for e, g in inside.groupby("entity_l")} if len(inside) else {}
    parts.append(f"<h2>Entities</h2><p>{len(multi)} entities with two or more records"
                 + (f" (the {len(shown)} largest shown)" if len(shown) < len(multi) else "")
                 + f"; {int((sizes == 1).sum())} singletons.</p>")
    parts.append("<input id='search' type='search' placeholder='search ids, names, values…' "
                 "aria-label='search entities'> <span id='match-count'></span>")
    parts.append("<div id='entities'>")
    for e in shown:
        rows = order[e]
        comp = int(cr.component[rows[0]]) if len(cr.component) else -1
        status = cr.status[comp] if cr.status and 0 <= comp < len(cr.status) else "unknown"
        gap = float(cr.gap[comp]) if len(cr.gap) and 0 <= comp < len(cr.gap) else float("nan")
        proven = status in ("optimal", "closed_form")
        g = by_ent.get(e)
        ww = float(g["weight"].sum()) if g is not None else 0.0
        minp = float(g["match_probability"].min()) if g is not None and len(g) else float("nan")
        first = str(res.ids[rows[0]])
        parts.append(f"<div class='entity' data-first='{esc(first, quote=True)}'>")
        parts.append(f"<b>entity {esc(str(e))}</b> &middot; {len(rows)} records &middot; within-weight {ww:.3g}"
                     f" &middot; weakest pair p = {minp:.3g}"
                     f"<div class='cert'>certificate: component {comp}, solver status "
                     f"<span class='{'ok' if proven else 'warn'}'>{esc(status)}</span>"
                     + (f", gap {gap:.3g}" if np.isfinite(gap) else "") + "</div>")
        recs = pd.DataFrame({res.id_col: res.ids[rows]})
        if getattr(res, "source", None) is not None:
            recs.insert(0, res.source_col, res.source[rows])
        if show_cols:
            sub = rec.iloc[rows][show_cols].reset_index(drop=True)
            recs = pd.concat([recs.reset_index(drop=True), sub], axis=1)
        parts.append(_table(recs))
        if g is not None and len(g):
            ev = g.sort_values("match_probability").head(max_pairs_per_entity)
            cols = [c for c in ev.columns if c.endswith(("_l", "_r")) and not c.startswith("entity")]
            parts.append("<details><summary>evidence: " + str(len(g)) + " scored pairs inside</summary>"
                         + _table(ev[cols + ["match_probability", "weight"] + fcols]) + "</details>")
        parts.append("</div>")
    parts.append("</div>")
    parts.append(f"<script>{_JS}</script></body></html>")
    return "".join(parts)


def write_report(res: Any, path: str | os.PathLike, **kw: Any) -> Path:
    """Write a self-contained HTML report of a :class:`~trustlab.er.Resolution`.

    Parameters
    ----------
    res : Resolution
    path : str or path
    **kw
        ``title``, ``max_entities`` (largest entities shown, default 2000),
        ``max_pairs_per_entity`` (evidence rows per entity, weakest first).

    Examples
    --------
    >>> import tempfile, os, trustlab
    >>> from trustlab.er import generate_records
    >>> df = generate_records(100, random_state=0)
    >>> r = trustlab.resolve(df, id_col="rec_id", fields="given_name:name,surname:name,date_of_birth:date")
    >>> p = write_report(r, os.path.join(tempfile.mkdtemp(), "r.html"))
    >>> "weight-histogram" in p.read_text()
    True
    """
    path = Path(path)
    path.write_text(report_html(res, **kw), encoding="utf-8")
    return path
