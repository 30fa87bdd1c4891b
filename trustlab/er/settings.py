""":class:`ResolveSettings`: what :func:`trustlab.resolve` computes, as one object.

The names, defaults and constraints of resolve's settings live here once; ``resolve``'s
keyword shortcuts default to :data:`~trustlab._settings.UNSET` and declare the same
constraints, :func:`~trustlab.er.model.save_model` writes the settings into the model
file and :func:`~trustlab.er.model.load_model` reads them back.
"""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from trustlab._settings import SettingsBase
from trustlab._validation import Interval, check_option
from trustlab.er.defaults import COMPLETE_COMPONENTS

__all__ = ["ResolveSettings", "SETTINGS_FORMAT", "SETTINGS_VERSION"]

SETTINGS_FORMAT = "trustlab.er.settings"
SETTINGS_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class ResolveSettings(SettingsBase):
    """The settings of an entity resolution: fields, blocking, scoring, clustering.

    One frozen object for what :func:`trustlab.resolve` computes; ``resolve(records,
    settings=s)`` reads it, and every field is also a keyword of ``resolve`` (a keyword
    given beside ``settings`` wins: ``resolve(r, settings=s, method="hierarchical")`` is
    ``resolve(r, settings=s.replace(method="hierarchical"))``). What belongs to one run
    rather than to the settings stays a keyword of ``resolve`` only: the records, the
    ``labels`` and ``truth``, ``random_state``, ``progress``, the Dask ``client``, a saved
    ``model`` to apply and ``existing`` output to resolve against.

    Every value is checked when the object is made (the messages name the field, the
    value received and what is accepted). :meth:`to_dict` / :meth:`from_dict` are a
    versioned JSON round trip (the ``resolve_settings`` block of a model file written
    by :func:`~trustlab.er.model.save_model`; CLI ``trustlab resolve --settings FILE``).

    Parameters
    ----------
    id_col : str, optional
        *Records.* Unique record id column (default: a column named ``id``, else the
        row number).
    fields : None, str, list or dict
        Columns to compare and their kinds (``{"name": "name", "zip": "exact"}``,
        ``"name:name,zip:exact"``); inferred when None.
    link_type : {"dedupe_only", "link_only", "link_and_dedupe"}, optional
        With several tables: compare records across tables only, or all pairs.
    source_col : str, default "source_dataset"
        The column naming each record's table.
    column_map : dict, optional
        ``{first table's column: other table's column}`` pairs to compare.
    blocking : str or list of str, optional
        *Blocking.* Blocking rules (:mod:`trustlab.er.blocking`); default: every pair up to
        1,500 records, else token/key blocking on the fields.
    max_block_size : int, default 200
        Blocks with more records are dropped (purging).
    scorer : {"auto", "supervised", "fellegi_sunter"}, default "auto"
        *Scoring.* Supervised when labels are given (``auto``), else Fellegi-Sunter by EM.
    model : {"logistic", "ridge"}, default "logistic"
        Supervised model kind (a saved model to apply is resolve's ``model=`` keyword).
    C : float, default 10.0
        Inverse regularisation strength of the supervised model (> 0).
    train_fraction : float, default 0.5
        Share of the labelled candidate pairs that trains the supervised model, in (0, 1].
    weights : {"centered", "logit"}, default "centered"
        Probabilities to signed weights: ``p - 0.5`` or log-odds.
    complete_components : int, default 2000
        Score the pairs blocking missed inside positive components of up to this many
        records, and in larger ones those of records whose positive neighbourhoods
        overlap (0 disables).
    method : {"xer", "connected_components", "hierarchical"}, default "xer"
        *Clustering.* Clique partitioning (exact per component where it can prove it) or
        a baseline.
    threshold : float, optional
        xER threshold T on the weights (pairs below it are dropped).
    time_limit : float, optional
        Wall-clock seconds for the whole ``resolve`` call: the clustering gets what reading,
        blocking and scoring left (at least a minimum). Default None: a deterministic work
        budget scaled to the largest component (see :func:`trustlab.er.resolve`).
    M : int, default 10
        The partition layer's ``M``.
    solver_options : dict, optional
        Extra keywords of :func:`trustlab.partition` (checked against its signature).
    compare_methods : list of str, default ()
        Baseline clustering methods to run on the same scores.
    one_to_one : bool or list of str, default False
        The tables (or those named) are each duplicate-free (needs ``method="xer"``).

    Notes
    -----
    ``s.replace(**changes)`` gives a checked copy; ``s.to_dict()`` the JSON form (with
    ``format`` and ``version``) and ``ResolveSettings.from_dict(d)`` reads it back (fields not named
    keep their defaults; unknown names are refused, with the closest field named);
    ``ResolveSettings.defaults()``, ``.field_names()`` and ``.CONSTRAINTS`` are the declared names,
    defaults and constraints.

    Examples
    --------
    >>> import trustlab, pandas as pd
    >>> s = trustlab.ResolveSettings(fields={"name": "name"}, method="connected_components", train_fraction=1.0)
    >>> s.replace(threshold=0.1).threshold
    0.1
    >>> ResolveSettings.from_dict(s.to_dict()) == s
    True
    >>> df = pd.DataFrame({"id": [1, 2, 3, 4], "name": ["ann lee", "anne lee", "bob ray", "bob rae"],
    ...                    "ent": [0, 0, 1, 1]})
    >>> r = trustlab.resolve(df, settings=s, labels="ent")
    >>> r.entity.tolist(), r.resolve_settings.method
    ([0, 0, 1, 1], 'connected_components')
    >>> ResolveSettings(max_block_size=1)
    Traceback (most recent call last):
    ...
    trustlab._validation.InvalidParameterError: The 'max_block_size' parameter of ResolveSettings must be \
an int in the range [2, inf). Got 1 instead.
    """

    FORMAT: ClassVar[str] = SETTINGS_FORMAT
    VERSION: ClassVar[int] = SETTINGS_VERSION
    #: the groups of fields (for reading; the JSON form is flat)
    GROUPS: ClassVar[Mapping[str, tuple]] = {
        "records": ("id_col", "fields", "link_type", "source_col", "column_map"),
        "blocking": ("blocking", "max_block_size"),
        "scoring": ("scorer", "model", "C", "train_fraction", "weights", "complete_components"),
        "clustering": ("method", "threshold", "time_limit", "M", "solver_options", "compare_methods", "one_to_one"),
    }
    CONSTRAINTS: ClassVar[Mapping[str, list]] = {
        "id_col": [str, None],
        "fields": [str, "sequence", "mapping", None],
        "link_type": [{"dedupe_only", "link_only", "link_and_dedupe"}, None],
        "source_col": [str],
        "column_map": ["mapping", None],
        "blocking": [str, "sequence", None],
        "max_block_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "scorer": [{"auto", "supervised", "fellegi_sunter"}],
        "model": [{"logistic", "ridge"}],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "train_fraction": [Interval(numbers.Real, 0, 1, closed="right")],
        "weights": [{"centered", "logit"}],
        "complete_components": [Interval(numbers.Integral, 0, None, closed="left")],
        "method": [str],  # a name of CLUSTER_METHODS (checked in _check: the registry may grow)
        "threshold": [Interval(numbers.Real, None, None), None],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "M": [Interval(numbers.Integral, 1, None, closed="left")],
        "solver_options": ["mapping", None],
        "compare_methods": ["sequence"],
        "one_to_one": ["boolean", "sequence"],
    }

    # records
    id_col: str | None = None
    fields: Any = None
    link_type: str | None = None
    source_col: str = "source_dataset"
    column_map: Mapping[str, str] | None = None
    # blocking
    blocking: Sequence[str] | str | None = None
    max_block_size: int = 200
    # scoring
    scorer: str = "auto"
    model: str = "logistic"
    C: float = 10.0
    train_fraction: float = 0.5
    weights: str = "centered"
    complete_components: int = COMPLETE_COMPONENTS
    # clustering
    method: str = "xer"
    threshold: float | None = None
    time_limit: float | None = None
    M: int = 10
    solver_options: Mapping[str, Any] | None = None
    compare_methods: Sequence[str] = ()
    one_to_one: bool | Sequence[str] = False

    def _normalise(self) -> dict:
        from trustlab.er.defaults import check_time_limit

        out: dict[str, Any] = {"compare_methods": tuple(self.compare_methods),
                               "time_limit": check_time_limit(self.time_limit, func="ResolveSettings")}
        for name in ("fields", "blocking"):  # lists as tuples (a frozen object holds no list)
            v = getattr(self, name)
            if isinstance(v, (list, tuple)):  # Field objects as (column, kind) pairs: plain JSON values
                out[name] = tuple(tuple(x) if isinstance(x, list) else
                                  (x.column, x.kind) if hasattr(x, "column") and hasattr(x, "kind") else x for x in v)
        for name in ("column_map", "solver_options"):  # a copy: the caller's dict may change later
            v = getattr(self, name)
            if v is not None:
                out[name] = dict(v)
        if isinstance(self.fields, Mapping):
            out["fields"] = dict(self.fields)
        o = self.one_to_one
        out["one_to_one"] = tuple(map(str, o)) if isinstance(o, (list, tuple)) else bool(o)
        return out

    def _check(self, func: str) -> None:
        from trustlab.er.cluster import CLUSTER_METHODS

        check_option(self.method, "method", list(CLUSTER_METHODS), func=func)
        for m in self.compare_methods:
            check_option(m, "compare_methods", list(CLUSTER_METHODS), func=func)
        check_one_to_one(self.one_to_one, self.method)
        if self.solver_options:
            check_solver_options(self.solver_options, func=func)

    @classmethod
    def from_legacy(cls, settings: Mapping[str, Any], fields: Sequence[Any] = ()) -> "ResolveSettings":
        """Settings read from a version-1 model file's ``settings`` block (what was used:
        method, weights, threshold, max_block_size, time_limit, id_col, link_type,
        source_col, one_to_one) and its fields; the rest keep their defaults."""
        keep = {k: settings[k] for k in ("method", "weights", "threshold", "max_block_size", "time_limit",
                                          "link_type", "source_col", "one_to_one") if k in settings}
        if settings.get("id_col") not in (None, "_row"):  # "_row": the row number stood in for an id
            keep["id_col"] = settings["id_col"]
        if keep.get("link_type") == "dedupe_only":
            keep.pop("link_type")
        if keep.get("source_col") is None:
            keep.pop("source_col", None)
        if fields:
            keep["fields"] = {f.column: f.kind for f in fields}
        return cls.merge(None, func="ResolveSettings.from_legacy", **keep)


def check_solver_options(opts: Mapping[str, Any], *, func: str = "resolve") -> None:
    """Refuse keys of ``solver_options`` that :func:`trustlab.partition` does not take
    (``client`` and its deprecated name ``scheduler`` are resolve's own)."""
    import inspect

    from trustlab._validation import InvalidParameterError
    from trustlab.solvers.api import partition

    valid = sorted(set(inspect.signature(partition).parameters) - {"graph_or_weights", "time_limit", "M"})
    unknown = sorted(set(map(str, opts)) - set(valid))
    if unknown:
        raise InvalidParameterError(
            f"The 'solver_options' parameter of {func} has unknown key(s) {unknown}; valid keys are "
            f"the keywords of trustlab.partition: {valid} (time_limit and M are resolve's own)."
        )


def check_one_to_one(one_to_one: Any, method: str) -> bool | tuple:
    """``resolve``'s ``one_to_one`` normalised (False, True or a tuple of table names),
    refused with a clustering method other than ``xer``."""
    if isinstance(one_to_one, (bool, np.bool_)):
        one_to_one = bool(one_to_one)
    else:
        one_to_one = tuple(map(str, one_to_one))
    if one_to_one is not False and method != "xer":
        raise ValueError(f"resolve(one_to_one=...) needs method='xer' (got {method!r}): the one-to-one clustering "
                         "is exact; the baselines cannot keep a table's records apart.")
    return one_to_one


def is_saved_model(model: Any) -> bool:
    """True when ``model`` names a saved model rather than a supervised model kind."""
    from trustlab.er.model import ERModel

    if isinstance(model, (ERModel, dict)) or (hasattr(model, "blocking") and hasattr(model, "features")):
        return True
    if isinstance(model, (str, os.PathLike)):
        return str(model) not in ("logistic", "ridge")
    return False
