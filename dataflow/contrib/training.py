"""``tf.contrib.training``: ``HParams``, the hyperparameter bag TF1 programs use, and
the queue-based ``bucket`` and ``bucket_by_sequence_length`` (``bucketing.py``).

An ``HParams`` holds named values, each with the type of its first value (a list's
element type for a list). ``parse("lr=0.1,layers=[64,32],name=x")`` and
``override_from_dict`` set values through that type with TF 1.15's rules: an int
widens to a float, but a float never narrows to an int, a bool and a number never
convert into each other, and only a string becomes a string.
"""

from __future__ import annotations

import json
import numbers
import re
from typing import Any

from .bucketing import bucket as bucket
from .bucketing import bucket_by_sequence_length as bucket_by_sequence_length
from .missing import contrib_hook

_PARAM = re.compile(
    r"(?P<name>[a-zA-Z][\w.]*)\s*=\s*((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])($|,\s*)"
)


def _cast(name: str, kind: type, value: Any) -> Any:
    """``value`` as ``kind``, refusing the conversions TF 1.15's ``HParams`` refuses."""
    fail = ValueError(f"Could not cast hparam '{name}' of type '{kind}' from value {value!r}")
    if isinstance(value, kind) or kind is type(None):
        return value
    if issubclass(kind, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise fail
    if issubclass(kind, bool) != isinstance(value, bool):
        raise fail
    if issubclass(kind, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise fail
    if issubclass(kind, numbers.Number) and not isinstance(value, numbers.Number):
        raise fail
    return kind(value)


def _parse_one(name: str, kind: type, text: str) -> Any:
    text = text.strip()
    if kind is bool:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        if text in ("0", "1"):
            return text == "1"
        raise ValueError(f"Could not parse hparam '{name}' of type bool from {text!r}")
    try:
        return kind(text)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Could not parse hparam '{name}' of type '{kind}' from {text!r}") from e


class HParams:
    """Named hyperparameters: ``HParams(learning_rate=0.1, layers=[64, 32])``, read as
    attributes (``hparams.learning_rate``)."""

    def __init__(self, hparam_def: Any = None, model_structure: Any = None, **kwargs: Any):
        if hparam_def is not None:
            raise ValueError("HParams: hparam_def (a protocol buffer) is not provided by dataflow")
        self._hparam_types: dict[str, tuple[type, bool]] = {}
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name: str, value: Any) -> None:
        """Adds ``name`` with ``value`` (its type is fixed from now on).

        Raises:
            ValueError: ``name`` is taken (by another hyperparameter or a method), or
                ``value`` is an empty list.
        """
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name: str, value: Any) -> None:
        """Sets ``name`` to ``value``, cast to its type.

        Raises:
            KeyError: no such hyperparameter.
            ValueError: a list for a single value or the reverse, or a refused cast.
        """
        kind, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, kind, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, kind, value))

    def del_hparam(self, name: str) -> None:
        """Removes ``name`` (nothing if absent)."""
        if name in self._hparam_types:
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values: str) -> HParams:
        """Overrides values from ``"name=value,name=[v1,v2],..."``; returns ``self``.

        Raises:
            ValueError: a malformed string, an unknown name, a name given twice, or a
                value that does not parse as the hyperparameter's type.
        """
        parsed: dict[str, Any] = {}
        pos = 0
        while pos < len(values):
            m = _PARAM.match(values, pos)
            if not m:
                raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
            pos = m.end()
            name = m.group("name")
            if name not in self._hparam_types:
                raise ValueError(f"Unknown hyperparameter type for {name}")
            if name in parsed:
                raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
            kind, is_list = self._hparam_types[name]
            if m.group("vals") is not None:
                items = [v for v in m.group("vals").split(",") if v.strip()]
                parsed[name] = [_parse_one(name, kind, v) for v in items]
            else:
                parsed[name] = _parse_one(name, kind, m.group("val"))
                if is_list:
                    parsed[name] = [parsed[name]]
        return self.override_from_dict(parsed)

    def override_from_dict(self, values_dict: dict) -> HParams:
        """``set_hparam`` for each item; returns ``self``."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def parse_json(self, values_json: str) -> HParams:
        """``override_from_dict`` of a JSON object; returns ``self``."""
        return self.override_from_dict(json.loads(values_json))

    def to_json(self, indent: Any = None, separators: Any = None, sort_keys: bool = False) -> str:
        """The values as a JSON object."""
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def values(self) -> dict[str, Any]:
        """``{name: value}`` of every hyperparameter."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` if there is none."""
        return getattr(self, key) if key in self._hparam_types else default

    def set_model_structure(self, model_structure: Any) -> None:
        self._model_structure = model_structure

    def get_model_structure(self) -> Any:
        return self._model_structure

    def __contains__(self, key: str) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return str(sorted(self.values().items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


__getattr__ = contrib_hook("training", __name__)
