"""``tf.data.Options`` and ``tf.data.ThreadingOptions``: what ``Dataset.with_options``
attaches to a dataset and ``Dataset.options()`` returns, merged along the pipeline.

TF1 treats these as hints to its runtime; dataflow keeps them and honours what they
permit: its pipelines always produce elements in order (``deterministic=False`` allows
TF to reorder, it never requires it), and its threads are the prefetch and parallel-map
threads a pipeline asks for. Each option is typed and unset (``None``) until set; setting
an unknown option or a value of the wrong type fails as in TF1.
"""

from __future__ import annotations

from typing import Any


class _OptionsBase:
    """Typed, named options: ``_FIELDS`` maps each option to (type, docstring)."""

    _FIELDS: dict[str, tuple[type, str]] = {}
    _ALIASES: dict[str, str] = {}

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name: str) -> Any:
        name = type(self)._ALIASES.get(name, name)
        if name not in type(self)._FIELDS:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}")
        kind = type(self)._FIELDS[name][0]
        values = object.__getattribute__(self, "_values")
        if name not in values and issubclass(kind, _OptionsBase):
            values[name] = kind()  # nested options exist once asked for, as in TF
        return values.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        name = type(self)._ALIASES.get(name, name)
        if name not in type(self)._FIELDS:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        kind = type(self)._FIELDS[name][0]
        if value is not None and not (
            isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        ):
            raise TypeError(f"Property {name} must be of type {kind.__name__}, got {value!r}.")
        self._values[name] = value

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values == other._values

    __hash__ = None  # type: ignore[assignment]

    def _merged(self, other: _OptionsBase) -> _OptionsBase:
        out = type(self)()
        for source in (self, other):
            for name, value in source._values.items():
                mine = out._values.get(name)
                if isinstance(value, _OptionsBase) and isinstance(mine, _OptionsBase):
                    value = mine._merged(value)
                elif value is None:
                    continue
                out._values[name] = value
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values})"


class ThreadingOptions(_OptionsBase):
    """Threading hints: ``max_intra_op_parallelism`` (threads one op may use) and
    ``private_threadpool_size`` (a thread pool of the dataset's own)."""

    _FIELDS = {
        "max_intra_op_parallelism": (int, "threads one op may use"),
        "private_threadpool_size": (int, "size of a private thread pool"),
    }


class Options(_OptionsBase):
    """Options of a ``tf.data`` pipeline (see the module docstring).

    Example::

        options = tf.data.Options()
        options.experimental_deterministic = False
        options.experimental_threading.private_threadpool_size = 4
        dataset = dataset.with_options(options)
    """

    _FIELDS = {
        "experimental_deterministic": (bool, "whether the order of elements must be kept"),
        "experimental_slack": (bool, "whether prefetching may lag the consumer"),
        "experimental_threading": (ThreadingOptions, "threading hints"),
    }
    _ALIASES = {
        "deterministic": "experimental_deterministic",
        "threading": "experimental_threading",
    }

    def merge(self, options: Options) -> Options:
        """A new ``Options`` with this one's settings, overridden by ``options``' set
        ones (nested options merged field by field)."""
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge takes an Options, got {options!r}")
        merged = self._merged(options)
        assert isinstance(merged, Options)
        return merged
