"""Stage 7, *persist*: train once, apply many times; a fitted ER model as readable JSON.

A saved model holds the fields, the blocking rules, the fitted scorer (Fellegi–Sunter
m/u/λ and term-frequency tables, or the supervised model's coefficients) and the
clustering settings (method, weights, threshold). ``resolve(new_records, model=path)``
applies it without training.

Incremental resolution against an earlier output (``resolve(new_records, model=...,
existing=old_output)``) is :mod:`trustlab.er.incremental`.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trustlab._validation import validate_params
from trustlab.er.kinds import Field

__all__ = ["ERModel", "save_model", "load_model", "MODEL_FORMAT"]

MODEL_FORMAT = "trustlab.er.model"
#: 2: the ``resolve_settings`` block (:class:`~trustlab.er.ResolveSettings`); version-1 files
#: still load (their settings are derived from the ``settings`` block and the fields)
MODEL_VERSION = 2


# ---------------------------------------------------------------------------- model-file schema
#: The declared shape of a model file (a JSON Schema subset: type, enum, properties,
#: required, additionalProperties, items, minItems, minimum/maximum, exclusiveMinimum/
#: exclusiveMaximum), per format version. :func:`check_model_dict` checks every value
#: against it before anything is built from the file; cross-field rules (one m and u
#: row per field, rows that are probability distributions) are checked after it.
_NUM = {"type": "number"}
_PROB = {"type": "number", "exclusiveMinimum": 0, "maximum": 1}
_STRS = {"type": "array", "items": {"type": "string"}}
_FIELD = {"type": "object", "required": ["column", "kind"], "additionalProperties": False,
          "properties": {"column": {"type": "string", "minLength": 1}, "kind": {"enum": None}}}
_FS_SCORER = {
    "type": "object", "required": ["type", "fields", "m", "u", "lambda"], "additionalProperties": False,
    "properties": {
        "type": {"enum": ["FSModel"]},
        "fields": {"type": "array", "minItems": 1, "items": _FIELD},
        "levels": _STRS,
        "comparison_levels": {"type": "object", "additionalProperties": {"type": "array", "maxDepth": 2}},
        "m": {"type": "array", "minItems": 1, "items": {"type": "array", "items": _PROB}},
        "u": {"type": "array", "minItems": 1, "items": {"type": "array", "items": _PROB}},
        "lambda": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "tf": {"type": "boolean"},
        "tf_tables": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": _PROB}},
        "tf_default": {"type": "object", "additionalProperties": _PROB},
        "n_iter": {"type": "integer", "minimum": 0},
        "n_seed_pairs": {"type": "integer", "minimum": 0},
        "problems": _STRS,
        "drifted": {"type": "boolean"},
        "max_iter": {"type": "integer", "minimum": 1},
        "u_prior": {"type": "number", "exclusiveMinimum": 0},
        "forcing": {"type": "array", "items": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
        "key_coef": {"type": "array", "items": _NUM},
        "tf_centre": {"type": "object", "additionalProperties": _NUM},
        "tf_scale": {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0}},
        "record_share": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1}},
        # blocking strata (FSModel._fit_strata): [agreed-key bits, log-odds of a match, u rows]
        "strata": {"type": "array", "items": {"type": "array", "minItems": 3, "maxItems": 3, "maxDepth": 3,
                                              "items": {"type": ["number", "array"], "items": {"type": "array",
                                                                                              "items": _PROB}}}},
        "tol": {"type": "number", "exclusiveMinimum": 0},
    },
}
_SUP_SCORER = {
    "type": "object", "required": ["type", "model", "C", "coef", "intercept"], "additionalProperties": False,
    "properties": {
        "type": {"enum": ["SupervisedScorer"]},
        "model": {"enum": ["logistic", "ridge"]},
        "C": {"type": "number", "exclusiveMinimum": 0},
        # logistic: [[c1, c2, ...]] (one row); ridge: [c1, c2, ...]
        "coef": {"type": "array", "minItems": 1, "maxDepth": 2,
                 "items": {"type": ["number", "array"], "minItems": 1, "items": _NUM}},
        "intercept": {"type": "array", "minItems": 1, "maxItems": 1, "items": _NUM},
    },
}
MODEL_SCHEMA = {
    "$id": f"trustlab.er.model/{MODEL_VERSION}",
    "type": "object",
    "required": ["format", "version", "fields", "blocking", "scorer"],
    "additionalProperties": False,
    "properties": {
        "format": {"enum": [MODEL_FORMAT]},
        "version": {"type": "integer", "minimum": 1, "maximum": MODEL_VERSION},
        "fields": {"type": "array", "minItems": 1, "maxItems": 256, "items": _FIELD},
        "blocking": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
        "settings": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "method": {"enum": ["xer", "connected_components", "hierarchical"]},
                "weights": {"enum": ["logit", "centered"]},
                "threshold": {"type": ["number", "null"]},
                "max_block_size": {"type": "integer", "minimum": 2},
                "time_limit": {"type": ["number", "null"], "exclusiveMinimum": 0},
                "id_col": {"type": ["string", "null"]},
                "n_training_records": {"type": "integer", "minimum": 0},
                "link_type": {"enum": ["dedupe_only", "link_only", "link_and_dedupe"]},
                "source_col": {"type": ["string", "null"]},
                "one_to_one": {"type": ["boolean", "array"]},
                "cluster_refits": {"type": "integer", "minimum": 0},
            },
        },
        "scorer": {"oneOf": [_FS_SCORER, _SUP_SCORER], "discriminator": "type"},
        # checked value by value by ResolveSettings.from_dict (its declared constraints)
        "resolve_settings": {"type": "object"},
    },
}

_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _type_ok(v: Any, t: str) -> bool:
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return isinstance(v, _JSON_TYPES[t])


def _where(path: str) -> str:
    return path or "the top level"


def _check(v: Any, sch: dict, path: str) -> None:
    """Check ``v`` against the schema node ``sch`` (see :data:`MODEL_SCHEMA`); a
    ValueError names the JSON path, what it holds and what it must hold."""
    if "oneOf" in sch:
        key = sch["discriminator"]
        kinds = [s["properties"][key]["enum"][0] for s in sch["oneOf"]]
        if not isinstance(v, dict) or v.get(key) not in kinds:
            got = v.get(key) if isinstance(v, dict) else type(v).__name__
            raise ValueError(f"{path}.{key} must be one of {kinds}; got {got!r}")
        sch = sch["oneOf"][kinds.index(v[key])]
    if "enum" in sch:
        allowed = sch["enum"] if sch["enum"] is not None else list(_field_kinds())
        if not (isinstance(v, str) or v is None) or v not in allowed:
            raise ValueError(f"{path} must be one of {allowed}; got {_short(v)}")
        return
    types = sch.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_type_ok(v, t) for t in types):
            want = " or ".join("a finite number" if t == "number" else f"a JSON {t}" for t in types)
            raise ValueError(f"{path} must be {want}; got {_short(v)}")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        for key, bad in (("minimum", v < sch.get("minimum", -math.inf)), ("maximum", v > sch.get("maximum", math.inf)),
                         ("exclusiveMinimum", "exclusiveMinimum" in sch and v <= sch["exclusiveMinimum"]),
                         ("exclusiveMaximum", "exclusiveMaximum" in sch and v >= sch["exclusiveMaximum"])):
            if bad:
                lo = (f"> {sch['exclusiveMinimum']}" if "exclusiveMinimum" in sch else
                      f">= {sch['minimum']}" if "minimum" in sch else "")
                hi = (f"< {sch['exclusiveMaximum']}" if "exclusiveMaximum" in sch else
                      f"<= {sch['maximum']}" if "maximum" in sch else "")
                raise ValueError(f"{path} must be {' and '.join(x for x in (lo, hi) if x)}; got {v!r}")
    if isinstance(v, str) and len(v) < sch.get("minLength", 0):
        raise ValueError(f"{path} must not be empty")
    if isinstance(v, list):
        if len(v) < sch.get("minItems", 0):
            raise ValueError(f"{path} must hold at least {sch['minItems']} item(s); got {len(v)}")
        if len(v) > sch.get("maxItems", math.inf):
            raise ValueError(f"{path} must hold at most {sch['maxItems']} item(s); got {len(v)}")
        if "maxDepth" in sch and _depth(v) > sch["maxDepth"]:
            raise ValueError(f"{path} is nested deeper than {sch['maxDepth']} levels")
        if "items" in sch:
            for i, x in enumerate(v):
                _check(x, sch["items"], f"{path}[{i}]")
    if isinstance(v, dict):
        props = sch.get("properties", {})
        for k in sch.get("required", []):
            if k not in v:
                raise ValueError(f"{_where(path)} lacks the required key {k!r}")
        extra = sch.get("additionalProperties", True)
        for k, x in v.items():
            sub = f"{path}.{k}" if path else str(k)
            if k in props:
                _check(x, props[k], sub)
            elif extra is False:
                raise ValueError(f"{_where(path)} has the unknown key {k!r}; valid keys: {sorted(props)}")
            elif isinstance(extra, dict):
                _check(x, extra, sub)


def _depth(v: Any) -> int:
    return 1 + max((_depth(x) for x in v), default=0) if isinstance(v, list) else 0


def _short(v: Any) -> str:
    r = repr(v) if not isinstance(v, (dict, list)) else f"a JSON {'object' if isinstance(v, dict) else 'array'}"
    return r if len(r) <= 60 else r[:57] + "..."


def _field_kinds() -> tuple:
    from trustlab.er.kinds import FIELD_KINDS

    return FIELD_KINDS


def check_model_dict(d: Any) -> None:
    """Check a model file's content against :data:`MODEL_SCHEMA` and the rules across
    its values; raise ValueError naming the first problem (a JSON path such as
    ``scorer.u[1]``).

    Examples
    --------
    >>> check_model_dict({"format": "trustlab.er.model", "version": 1, "fields": [], "blocking": ["all"],
    ...                   "scorer": {}})
    Traceback (most recent call last):
    ...
    ValueError: fields must hold at least 1 item(s); got 0
    """
    if not isinstance(d, dict) or d.get("format") != MODEL_FORMAT:
        raise ValueError(
            f"not a trustlab ER model (expected format {MODEL_FORMAT!r}, got "
            f"{d.get('format') if isinstance(d, dict) else type(d).__name__!r}); "
            "write one with save_model(...) or `trustlab resolve ... --save-model model.json`"
        )
    v = d.get("version")
    if isinstance(v, int) and not isinstance(v, bool) and v > MODEL_VERSION:
        raise ValueError(f"model file version {v} is newer than this trustlab reads ({MODEL_VERSION}); upgrade "
                         "trustlab")
    _check(d, MODEL_SCHEMA, "")
    cols = [f["column"] for f in d["fields"]]
    sc = d["scorer"]
    if sc["type"] == "FSModel":
        from trustlab.er.kinds import LEVEL_NAMES

        scols = [f["column"] for f in sc["fields"]]
        if scols != cols or [f["kind"] for f in sc["fields"]] != [f["kind"] for f in d["fields"]]:
            raise ValueError(f"scorer.fields {scols} differ from the model's fields {cols}")
        for key in ("m", "u"):
            rows = sc[key]
            if len(rows) != len(cols):
                raise ValueError(f"scorer.{key} has {len(rows)} row(s) but the model has {len(cols)} field(s); "
                                 "one row per field")
            for i, row in enumerate(rows):
                if len(row) != len(LEVEL_NAMES):
                    raise ValueError(f"scorer.{key}[{i}] has {len(row)} value(s); one per level "
                                     f"{list(LEVEL_NAMES)} is needed")
                if abs(math.fsum(row) - 1.0) > 1e-3:
                    raise ValueError(f"scorer.{key}[{i}] (field {cols[i]!r}) sums to {math.fsum(row):.6g}; the "
                                     "probabilities of the levels of a field must sum to 1")
        for i, (bits, _, su) in enumerate(sc.get("strata", [])):
            if not isinstance(bits, int) or isinstance(bits, bool) or not 0 < bits < 2 ** len(sc.get("forcing", [])):
                raise ValueError(f"scorer.strata[{i}][0] must be the bits of the key rules a stratum agrees on "
                                 f"(an integer in 1 .. 2**{len(sc.get('forcing', []))} - 1); got {bits!r}")
            if len(su) != len(cols) or any(len(row) != len(LEVEL_NAMES) or abs(math.fsum(row) - 1.0) > 1e-3
                                           for row in su):
                raise ValueError(f"scorer.strata[{i}][2] must hold one u row per field ({len(cols)}), each a "
                                 f"probability distribution over the levels {list(LEVEL_NAMES)}")
        for key in ("tf_tables", "tf_default", "tf_centre", "tf_scale", "record_share"):
            unknown = sorted(set(sc.get(key, {})) - set(cols))
            if unknown:
                raise ValueError(f"scorer.{key} names column(s) {unknown[:5]} that are not fields {cols}")
    else:
        flat = [y for x in sc["coef"] for y in (x if isinstance(x, list) else [x])]
        if len(sc["coef"]) > 1 and any(isinstance(x, list) for x in sc["coef"]):
            raise ValueError("scorer.coef must be one list of coefficients (or one row of them)")
        if not all(abs(x) < 1e6 for x in [*flat, *sc["intercept"]]):
            raise ValueError("scorer.coef holds a coefficient of magnitude 1e6 or more; not a fitted model")


def _scorer_to_dict(s: Any) -> dict:
    if hasattr(s, "to_dict"):
        return s.to_dict()
    from trustlab.er.scoring import SupervisedScorer

    if isinstance(s, SupervisedScorer):
        m = s._m
        return {"type": "SupervisedScorer", "model": s.model, "C": s.C,
                "coef": np.asarray(m.coef_, np.float64).tolist(),
                "intercept": np.asarray(m.intercept_, np.float64).ravel().tolist()}
    raise TypeError(f"cannot save a scorer of type {type(s).__name__}")


def _scorer_from_dict(d: dict) -> Any:
    kind = d.get("type")
    if kind == "FSModel":
        from trustlab.er.scoring import FSModel

        return FSModel.from_dict(d)
    if kind == "SupervisedScorer":
        from trustlab.er.scoring import SupervisedScorer

        return SupervisedScorer.from_dict(d)
    raise ValueError(f"unknown scorer type {kind!r} in the model file; valid: ['FSModel', 'SupervisedScorer']")


@dataclass
class ERModel:
    """A fitted entity-resolution model (what :func:`save_model` writes).

    Attributes
    ----------
    fields : list of Field
    blocking : list of str
        The blocking rules used in training. ``["all"]`` (every pair, chosen for small
        training sets) is replaced by the default rules of the fields when the model is
        applied to more than 1,500 records.
    scorer : FSModel or SupervisedScorer
    settings : dict
        ``method``, ``weights``, ``threshold``, ``max_block_size``, ``id_col``,
        ``link_type``, ``source_col``, ``n_training_records``, ``cluster_refits`` (how often
        ``m`` was re-estimated from the clusters; ``weights`` is then ``"logit"``): what the
        training run used.
    resolve_settings : ResolveSettings or None
        The :class:`~trustlab.er.ResolveSettings` of the training call
        (``resolve(records, settings=model.resolve_settings)`` trains again the same
        way). A version-1 file has none: they are derived from ``settings`` and ``fields``
        (:meth:`~trustlab.er.ResolveSettings.from_legacy`).
    """

    fields: list
    blocking: list
    scorer: Any
    settings: dict = field(default_factory=dict)
    resolve_settings: Any = None

    @property
    def supervised(self) -> bool:
        return type(self.scorer).__name__ == "SupervisedScorer"

    def rules_for(self, df: pd.DataFrame) -> list[str]:
        rules = list(self.blocking)
        from trustlab.er.defaults import ALL_PAIRS_MAX, default_rules

        if "all" in rules and len(df) > ALL_PAIRS_MAX:
            return default_rules(df, self.fields, max_block_size=int(self.settings.get("max_block_size", 200)))
        return rules

    def score(self, df: pd.DataFrame, pairs: np.ndarray):
        """(match probabilities, FeatureMatrix) of ``pairs`` (row positions of ``df``)."""
        from trustlab.er.comparisons import compare
        from trustlab.er.kinds import needed_features

        # an unsupervised model counts the whole record beyond the fields by each pair's shared
        # parts (FSModel.shared_parts), as the resolve that fitted it did: the record's features with them
        only = None if self.supervised else needed_features([f for f in self.fields if f.kind == "record"])
        fm = compare(df, pairs, self.fields, only=only or None)
        if len(pairs) == 0:
            return np.zeros(0), fm
        if self.supervised:
            want = np.asarray(self.scorer._m.coef_).size
            from trustlab.er.scoring import _design

            have = _design(fm.X[:1]).shape[1]
            if want != have:
                raise ValueError(f"the model's supervised scorer has {want} coefficient(s) but its fields give "
                                 f"{have} feature(s); the model file does not match its fields")
            return self.scorer.predict_proba(fm.X), fm
        return self.scorer.predict_proba(df, pairs, fm), fm

    def to_dict(self) -> dict:
        return {
            "format": MODEL_FORMAT, "version": MODEL_VERSION,
            "fields": [{"column": f.column, "kind": f.kind} for f in self.fields],
            "blocking": list(self.blocking),
            "settings": {k: v for k, v in self.settings.items()},
            "scorer": _scorer_to_dict(self.scorer),
            **self._settings_block(),
        }

    def _settings_block(self) -> dict:
        """``{"resolve_settings": ...}``, without the run's Dask client (``solver_options``'
        ``client`` / ``scheduler``: a resource of the run, not a setting); ``{}`` with a
        warning when another value cannot be written as JSON."""
        rs = self.resolve_settings
        if rs is None:
            return {}
        if rs.solver_options and {"client", "scheduler"} & set(rs.solver_options):
            rs = rs.replace(solver_options={k: v for k, v in rs.solver_options.items()
                                            if k not in ("client", "scheduler")})
        try:
            return {"resolve_settings": rs.to_dict()}
        except ValueError as exc:
            import warnings

            warnings.warn(f"the model is saved without its resolve_settings: {exc}", UserWarning, stacklevel=4)
            return {}

    @classmethod
    def from_dict(cls, d: dict) -> "ERModel":
        """Build a model from a model file's content, checked first (:func:`check_model_dict`)."""
        from trustlab.er.settings import ResolveSettings

        check_model_dict(d)
        fields = [Field(f["column"], f["kind"]) for f in d["fields"]]
        settings = dict(d.get("settings", {}))
        try:
            rs = (ResolveSettings.from_dict(d["resolve_settings"]) if "resolve_settings" in d
                  else ResolveSettings.from_legacy(settings, fields))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"resolve_settings: {exc}") from None
        return cls(fields=fields, blocking=list(d["blocking"]), scorer=_scorer_from_dict(d["scorer"]),
                   settings=settings, resolve_settings=rs)

    @classmethod
    def from_resolution(cls, res: Any) -> "ERModel":
        fields = list(res.features.fields) if res.features is not None and res.features.fields else \
            list(getattr(res.field_report, "fields", []) or [])
        return cls(fields=fields, blocking=list(res.blocking.rules or []), scorer=res.model,
                   settings=dict(getattr(res, "settings", {}) or {}),
                   resolve_settings=getattr(res, "resolve_settings", None))


@validate_params({"model": [object], "path": ["path"]})
def save_model(model: Any, path: str | os.PathLike) -> Path:
    """Write a fitted model (an :class:`ERModel` or a :class:`~trustlab.er.Resolution`)
    to ``path`` as indented JSON (written atomically).

    Parameters
    ----------
    model : ERModel or Resolution
        The fitted model, or a resolution whose fields, blocking rules, scorer and settings
        are saved.
    path : str or os.PathLike
        The JSON file to write (its format is :data:`MODEL_SCHEMA`, versioned).

    Returns
    -------
    pathlib.Path
        The path written.

    Examples
    --------
    >>> import tempfile, os, trustlab
    >>> from trustlab.er import generate_records
    >>> df = generate_records(200, random_state=0)
    >>> r = trustlab.resolve(df, id_col="rec_id", fields="given_name:name,surname:name,date_of_birth:date")
    >>> p = save_model(r, os.path.join(tempfile.mkdtemp(), "model.json"))
    >>> m = load_model(p)
    >>> [f.column for f in m.fields], m.blocking
    (['given_name', 'surname', 'date_of_birth'], ['all'])
    """
    if not isinstance(model, ERModel):
        if not hasattr(model, "blocking") or not hasattr(model, "model"):
            raise TypeError(f"save_model needs an ERModel or a Resolution; got {type(model).__name__}")
        model = ERModel.from_resolution(model)
    from trustlab._fileio import atomic_write, json_default

    d = model.to_dict()
    path = Path(path)
    with atomic_write(path) as fh:
        json.dump(d, fh, indent=2, default=json_default)
        fh.write("\n")
    return path


class _BadConstant(ValueError):
    pass


def _no_constant(name: str):
    raise _BadConstant(name)


@validate_params({"model": [object]})
def load_model(model: Any) -> ERModel:
    """An :class:`ERModel` from a path to a model JSON, its dict, a Resolution or an ERModel.

    Parameters
    ----------
    model : str, os.PathLike, dict, Resolution or ERModel
        A file written by :func:`save_model` (CLI ``--save-model``), its parsed content, a
        resolution to take the fitted model from, or a model (returned as it is). Files and
        dicts are checked against :data:`MODEL_SCHEMA` before anything is built.

    Returns
    -------
    ERModel

    Examples
    --------
    >>> import trustlab
    >>> from trustlab.er import generate_records
    >>> r = trustlab.resolve(generate_records(120, random_state=0), id_col="rec_id",
    ...                      fields="given_name:name,surname:name")
    >>> m = load_model(r)
    >>> [f.column for f in m.fields]
    ['given_name', 'surname']
    """
    if isinstance(model, ERModel):
        return model
    if hasattr(model, "blocking") and hasattr(model, "features"):  # a Resolution
        return ERModel.from_resolution(model)
    if isinstance(model, dict):
        return ERModel.from_dict(model)
    if isinstance(model, (str, os.PathLike)):
        p = Path(model)
        if not p.exists():
            raise FileNotFoundError(f"model file {str(p)!r} does not exist")
        if p.is_dir():
            raise IsADirectoryError(f"model file {str(p)!r} is a directory; pass the JSON file written by "
                                    "save_model (CLI: --save-model)")
        try:
            d = json.loads(p.read_text(encoding="utf-8"), parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"model file {str(p)!r} is not valid JSON ({exc})") from None
        except RecursionError:
            raise ValueError(f"model file {str(p)!r} is not a trustlab model: its JSON is nested too deeply "
                             "(a model file is at most a few levels deep)") from None
        except _BadConstant as exc:
            raise ValueError(f"model file {str(p)!r} holds {exc.args[0]}, which is not a JSON number; a model "
                             "file has finite numbers only") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"model file {str(p)!r} is not a trustlab model: not UTF-8 JSON text "
                             f"({exc.reason} at byte {exc.start}); pass the JSON file written by save_model "
                             "(CLI: --save-model)") from None
        if not isinstance(d, dict):
            raise ValueError(f"model file {str(p)!r} is not a trustlab model: it holds a JSON "
                             f"{type(d).__name__}, not the object written by save_model (CLI: --save-model)")
        try:
            return ERModel.from_dict(d)
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, RecursionError):
                exc = ValueError("its JSON is nested too deeply")
            raise ValueError(f"model file {str(p)!r}: {exc}") from None
    raise TypeError(f"model must be a path to a model JSON, a dict or an ERModel; got {type(model).__name__}")


