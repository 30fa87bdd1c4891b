"""The machinery shared by trustlab's settings objects
(:class:`~trustlab.er.ResolveSettings`, :class:`~trustlab.privacy.ReleaseSettings`).

A settings class is a frozen, keyword-only dataclass whose fields are the names and
defaults, with one class-level ``CONSTRAINTS`` mapping (the declared constraints of
:mod:`trustlab._validation`) checked in ``__post_init__``. The entry points that read a
settings object declare the same mapping in their ``validate_params`` (so a keyword
shortcut and a settings field fail with one message template) and default every
shortcut to :data:`UNSET`, so that the class is the one place that holds the defaults.

The rule where a call passes both ``settings=`` and a keyword shortcut: **the keyword
wins**. ``f(..., settings=s, name=v)`` is ``f(..., settings=s.replace(name=v))``.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Mapping
from typing import Any, ClassVar

from trustlab._validation import VALIDATED_FUNCTIONS, InvalidParameterError, check_param, make_constraint

__all__ = ["UNSET", "SettingsBase"]


class _Unset:
    """The default of a keyword shortcut: "not given; the settings (or their default) decide"."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<from settings>"

    def __reduce__(self):
        return (_Unset, ())

    def __bool__(self) -> bool:
        return False


#: the default of every keyword shortcut of a settings field (see the module docstring)
UNSET: Any = _Unset()


def _jsonable(name: str, v: Any) -> Any:
    """``v`` as plain JSON values (tuples as lists, mappings as dicts), or a ValueError
    that names the field."""
    if isinstance(v, Mapping):
        return {str(k): _jsonable(f"{name}[{k!r}]", x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(f"{name}[{i}]", x) for i, x in enumerate(v)]
    try:
        json.dumps(v, allow_nan=False)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} holds {type(v).__name__} {v!r:.60}, which a settings file cannot hold (JSON numbers, strings, "
            "booleans, null, lists and objects only); pass such values to the call itself"
        ) from None
    return v


class SettingsBase:
    """Mixin for frozen keyword-only dataclasses: validation, ``replace``, JSON round trip.

    Subclasses set ``FORMAT`` (the ``format`` key of their JSON form), ``VERSION``,
    ``CONSTRAINTS`` (field -> declared constraints) and may override :meth:`_check`
    for cross-field rules and :meth:`_normalise` for canonical forms.
    """

    FORMAT: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1
    CONSTRAINTS: ClassVar[Mapping[str, list]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.CONSTRAINTS:  # the walking test (tests/test_public_functions.py) checks every field's messages
            cls.__trustlab_params__ = {k: [make_constraint(c) for c in v] for k, v in cls.CONSTRAINTS.items()}
            VALIDATED_FUNCTIONS[f"{cls.__module__}.{cls.__qualname__}"] = cls

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        self._validate(type(self).__name__)

    def _validate(self, func: str) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is UNSET:
                raise InvalidParameterError(
                    f"{func} needs {f.name}: pass {f.name}=... (or a settings object that holds it)")
            check_param(value, f.name, self.CONSTRAINTS[f.name], func=func)
        for name, value in self._normalise().items():
            object.__setattr__(self, name, value)
        self._check(func)

    def _normalise(self) -> dict:
        """Canonical forms of field values (subclasses): ``{field: value}``."""
        return {}

    def _check(self, func: str) -> None:
        """Rules across fields, or beyond what a declared constraint says (subclasses)."""

    # ------------------------------------------------------------------ introspection
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    @classmethod
    def defaults(cls) -> dict:
        """``{field: default}`` of the fields that have one."""
        out = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:  # pragma: no cover - none today
                out[f.name] = f.default_factory()
        return out

    @classmethod
    def constraints(cls) -> dict:
        """The declared constraints of every field (for ``validate_params`` of the entry points)."""
        return {k: list(v) for k, v in cls.CONSTRAINTS.items()}

    @classmethod
    def _unknown(cls, names, where: str) -> None:
        valid = cls.field_names()
        unknown = [str(k) for k in names if k not in valid]
        if unknown:
            hints = [f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, valid, n=1)) else repr(u)
                     for u in unknown]
            raise InvalidParameterError(
                f"{where} has unknown setting(s) {', '.join(hints)}; the fields of {cls.__name__} are {list(valid)}")

    # ------------------------------------------------------------------ building
    def replace(self, **changes: Any):
        """A copy with ``changes`` applied (validated like a new object).

        Unknown names are refused with the list of fields."""
        cls = type(self)
        cls._unknown(changes, f"{cls.__name__}.replace()")
        return cls._build({n: changes.get(n, getattr(self, n)) for n in cls.field_names()}, cls.__name__)

    @classmethod
    def merge(cls, settings: Any, *, func: str, **keywords: Any):
        """``settings`` (None: the defaults) with the keyword shortcuts that were given
        (not :data:`UNSET`) applied over it: the keywords win."""
        if settings is not None and not isinstance(settings, cls):
            if isinstance(settings, Mapping):
                settings = cls.from_dict(settings)
            else:
                raise InvalidParameterError(
                    f"The 'settings' parameter of {func} must be a {cls.__name__} (or its dict, "
                    f"{cls.__name__}.to_dict()). Got {type(settings).__name__} instead.")
        given = {k: v for k, v in keywords.items() if v is not UNSET}
        cls._unknown(given, f"{func}()")
        if settings is None:
            missing = [f.name for f in dataclasses.fields(cls)  # type: ignore[arg-type]
                       if f.default is dataclasses.MISSING and f.name not in given]
            if missing:
                raise TypeError(f"{func}() needs {missing[0]}: pass {missing[0]}=... or "
                                f"settings={cls.__name__}({missing[0]}=...)")
            return cls._build({**cls.defaults(), **given}, func)
        if not given:
            return settings
        return cls._build({name: given.get(name, getattr(settings, name)) for name in cls.field_names()}, func)

    @classmethod
    def _build(cls, values: Mapping[str, Any], func: str):
        """A new object of ``values``, validated with ``func`` named in the messages."""
        obj = cls.__new__(cls)
        for name, v in values.items():
            object.__setattr__(obj, name, v)
        obj._validate(func)
        return obj

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        """The settings as plain JSON values, with ``format`` and ``version`` first."""
        out: dict[str, Any] = {"format": self.FORMAT, "version": self.VERSION}
        for name in self.field_names():
            out[name] = _jsonable(name, getattr(self, name))
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]):
        """Settings from :meth:`to_dict`'s output (or a hand-written subset of it: the
        fields not named keep their defaults). ``format`` and ``version`` are optional;
        when present they must be this class's format and a version it reads."""
        if not isinstance(d, Mapping):
            raise InvalidParameterError(
                f"{cls.__name__}.from_dict needs a dict (a JSON object); got {type(d).__name__}")
        d = dict(d)
        fmt = d.pop("format", cls.FORMAT)
        if fmt != cls.FORMAT:
            raise InvalidParameterError(
                f"not {cls.__name__} settings: format is {fmt!r}, expected {cls.FORMAT!r}")
        ver = d.pop("version", cls.VERSION)
        if not isinstance(ver, int) or isinstance(ver, bool) or not 1 <= ver <= cls.VERSION:
            raise InvalidParameterError(
                f"{cls.__name__} settings version {ver!r} is not one this trustlab reads (1 to {cls.VERSION}); "
                "upgrade trustlab for a newer file")
        cls._unknown(d, f"{cls.__name__}.from_dict()")
        return cls.merge(None, func=cls.__name__, **d)
