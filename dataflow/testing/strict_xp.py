"""A strict stand-in array namespace: catches kernels that reach numpy behind ``ctx.xp``.

Kernels must do all array work through ``ctx.xp`` (numpy on CPU, cupy on GPU). A stray
``np.add(x, y)`` inside a kernel passes every CPU test, because there ``ctx.xp`` *is*
numpy, and only breaks on a GPU. This module is an array namespace with numpy's API
(functions, ufuncs and their methods, ``linalg``, ``random``, ``fft``, dtypes,
constants) whose arrays refuse to be touched by numpy from outside the namespace::

    from dataflow.testing import strict_xp as xp
    x = xp.asarray([1.0, 2.0])      # a StrictArray (an ndarray subclass)
    xp.add(x, 1.0)                  # fine: through the namespace
    x + 1.0, x.sum(), x[0]          # fine: array methods and operators are part of it
    np.add(x, 1.0)                  # AssertionError: numpy.add called on a StrictArray

How: every function of the namespace, and every method and operator of ``StrictArray``,
unwraps its array arguments to plain ``ndarray`` views, calls numpy on them under a
thread-local "inside the namespace" flag, and wraps array results (numpy scalars
included: they become 0-d arrays, as cupy returns) back into ``StrictArray``. So numpy
itself never sees a ``StrictArray`` on the allowed paths, and one that does see it
(``__array_ufunc__``/``__array_function__`` called with the flag down) comes from a
numpy call the kernel made itself: that raises ``AssertionError`` naming the function.

Host arrays given to the namespace's functions are refused as well (``check_mixing``):
cupy raises ``TypeError`` for ``cupy.add(device_array, numpy_array)`` or
``cupy.exp(numpy_array)``, so a kernel that builds a temporary with ``np.zeros``, or is
handed a value that missed its copy to the device, fails here as it would on a GPU.
Creation and conversion routines (``asarray``, ``array``, ...) take host data, and
Python and numpy scalars mix freely, as in cupy.

One allowance: ``scipy.special``'s ufuncs may be applied to strict arrays, because cupy
arrays accept them as well (cupy dispatches them to ``cupyx.scipy.special``).

Random generators (``xp.random.default_rng``) offer only the methods
``cupy.random.Generator`` has (``CUPY_GENERATOR_METHODS``).

What this cannot catch: ``np.asarray(x)``/``np.array(x)`` (numpy does not dispatch them
for ndarray subclasses; the AST check in ``tests/test_kernel_hygiene.py`` covers them),
and other names numpy has but cupy lacks (only a run on a GPU shows those).

``StrictArray.get()`` returns a plain numpy copy, as ``cupy.ndarray.get()`` does, and
``to_numpy`` converts results (nested in tuples/lists) back for comparisons.
``make_namespace`` builds further namespaces over other ``StrictArray`` subclasses (the
GPU dispatch tests use one as a stand-in ``cupy`` module).
"""

from __future__ import annotations

import functools
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["StrictArray", "StrictNamespace", "make_namespace", "to_numpy", "inside"]

_state = threading.local()


def _depth() -> int:
    return getattr(_state, "depth", 0)


class inside:
    """Context manager: numpy calls on strict arrays are allowed within it."""

    __slots__ = ()

    def __enter__(self) -> None:
        _state.depth = _depth() + 1

    def __exit__(self, *exc: Any) -> None:
        _state.depth -= 1


_INSIDE = inside()


class StrictArray(np.ndarray):
    """An ndarray that only the strict namespace (and its own methods) may operate on."""

    # Numpy routes ``plain_array + strict_array`` to this class's __array_ufunc__.
    __array_priority__ = 1000.0

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any):
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        if not _depth() and ufunc not in _special_ufuncs():
            raise AssertionError(
                f"numpy.{name} was called on a {type(self).__name__} outside the array "
                "namespace: a kernel used numpy directly (or mixed a numpy array into "
                "device arrays) instead of ctx.xp"
            )
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o) for o in out)
        result = getattr(ufunc, method)(*(_unwrap(x) for x in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result, type(self))

    def __array_function__(
        self, func: Callable, types: Any, args: Iterable[Any], kwargs: Mapping[str, Any]
    ) -> Any:
        if not _depth():
            raise AssertionError(
                f"{func.__module__}.{func.__name__} was called on a {type(self).__name__} "
                "outside the array namespace: a kernel used numpy directly instead of "
                "ctx.xp"
            )
        result = func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return _wrap(result, type(self))

    def get(self, stream: Any = None) -> np.ndarray:
        """A plain numpy copy (``cupy.ndarray.get``'s device-to-host copy)."""
        return np.array(np.ndarray.view(self, np.ndarray))

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))


@functools.cache
def _special_ufuncs() -> frozenset:
    """``scipy.special``'s ufuncs: cupy arrays accept them too (cupy's ``__array_ufunc__``
    dispatches them to ``cupyx.scipy.special``), so kernels may call them on xp arrays."""
    try:
        import scipy.special as special
    except ImportError:
        return frozenset()
    # With the private ufuncs its Python wrappers call (``zeta`` calls ``_zeta``).
    public = vars(special).values()
    private = vars(getattr(special, "_ufuncs", special)).values()
    return frozenset(v for v in (*public, *private) if isinstance(v, np.ufunc))


# ndarray methods left alone: object protocol, pickling, views, flags, dispatch hooks.
_NOT_WRAPPED = {
    "__array__",
    "__array_finalize__",
    "__array_function__",
    "__array_ufunc__",
    "__array_wrap__",
    "__array_namespace__",
    "__class__",
    "__class_getitem__",
    "__delattr__",
    "__dir__",
    "__dlpack__",
    "__dlpack_device__",
    "__getattribute__",
    "__getstate__",
    "__init__",
    "__init_subclass__",
    "__iter__",
    "__new__",
    "__reduce__",
    "__reduce_ex__",
    "__setattr__",
    "__setstate__",
    "__sizeof__",
    "__subclasshook__",
    "dump",
    "dumps",
    "setflags",
    "to_device",
    "tofile",
    "view",
}
# Methods whose extra arguments are indices or keys, not operands (no mixing check).
_INDEXING = {
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "take",
    "put",
    "choose",
    "compress",
    "searchsorted",
    "reshape",
    "transpose",
    "repeat",
}


def _method(name: str, fn: Callable) -> Callable:
    check = name not in _INDEXING

    def method(self: StrictArray, *args: Any, **kwargs: Any) -> Any:
        if check and args:
            check_mixing(f"ndarray.{name}", (self,) + args, type(self))
        base = np.ndarray.view(self, np.ndarray)
        with _INSIDE:
            out = fn(base, *_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        if out is base:  # in-place operators return self
            return self
        return _wrap(out, type(self))

    method.__name__ = name
    method.__qualname__ = f"StrictArray.{name}"
    return method


for _name in dir(np.ndarray):
    _attr = getattr(np.ndarray, _name)
    if (
        _name not in _NOT_WRAPPED
        and callable(_attr)
        and type(_attr).__name__ in ("method_descriptor", "wrapper_descriptor")
    ):
        setattr(StrictArray, _name, _method(_name, _attr))
del _name, _attr


# --- converting arguments and results -------------------------------------------------
def _unwrap(x: Any) -> Any:
    if isinstance(x, StrictArray):
        return np.ndarray.view(x, np.ndarray)
    t = type(x)
    if t is tuple or t is list:
        return t(_unwrap(v) for v in x)
    if t is _Proxy:
        return x._obj
    return x


_PROXIED = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def _wrap(x: Any, cls: type) -> Any:
    t = type(x)
    if t is np.ndarray:
        return x.view(cls)
    if t is cls:
        return x
    if isinstance(x, np.generic):
        return np.asarray(x).view(cls)  # cupy returns 0-d arrays, never numpy scalars
    if isinstance(x, np.ndarray):
        return np.ndarray.view(x, cls)
    if t is tuple or t is list:
        return t(_wrap(v, cls) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuples (linalg results)
        return t(*(_wrap(v, cls) for v in x))
    if isinstance(x, _PROXIED):
        return _Proxy(x, cls)
    return x


def check_mixing(name: str, args: tuple, cls: type, refuse_host: bool = False) -> None:
    """Refuses host (plain numpy) arrays among operands next to namespace arrays (or
    anywhere among them, with ``refuse_host``)."""
    device = host = False
    for a in args:
        items = a if type(a) is list or type(a) is tuple else (a,)
        for v in items:
            if isinstance(v, cls):
                device = True
            elif type(v) is np.ndarray and v.ndim > 0 and v.dtype != object:
                host = True
    if host and (device or refuse_host):
        raise AssertionError(
            f"{name} got a plain numpy array {'next to' if device else 'instead of'} "
            f"{cls.__name__}s: a kernel built a host array (np.* instead of ctx.xp), or a "
            "host value missed its transfer to the device; cupy would raise TypeError here"
        )


def to_numpy(x: Any) -> Any:
    """Plain numpy values for strict arrays (recursing into tuples and lists)."""
    if isinstance(x, StrictArray):
        return np.array(np.ndarray.view(x, np.ndarray))
    if type(x) is tuple or type(x) is list:
        return type(x)(to_numpy(v) for v in x)
    return x


# --- the namespace --------------------------------------------------------------------
# Creation and conversion routines: their one data argument may be a host array.
_CONVERTING = {
    "asarray",
    "array",
    "asanyarray",
    "ascontiguousarray",
    "asfortranarray",
    "copy",
    "frombuffer",
    "fromiter",
    "full",
    "full_like",
}


def _function(fn: Callable, name: str, cls: type, refuse_host: bool = False) -> Callable:
    check = name not in _CONVERTING

    def call(*args: Any, **kwargs: Any) -> Any:
        if check:
            check_mixing(f"xp.{name}", args, cls, refuse_host)
        with _INSIDE:
            out = fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return _wrap(out, cls)

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = getattr(fn, "__doc__", None)
    return call


class _Ufunc:
    """A numpy ufunc seen through the namespace: call, reduce, accumulate, outer, at."""

    def __init__(self, ufunc: np.ufunc, cls: type, refuse_host: bool) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self._call = _function(ufunc, ufunc.__name__, cls, refuse_host)
        for method in ("reduce", "accumulate", "reduceat", "outer", "at"):
            setattr(
                self,
                method,
                _function(getattr(ufunc, method), f"{ufunc.__name__}.{method}", cls, refuse_host),
            )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # nin, nout, identity, types, ...
        return getattr(self._ufunc, name)

    def __repr__(self) -> str:
        return f"<strict ufunc '{self.__name__}'>"


# The methods ``cupy.random.Generator`` has (CuPy 13): numpy's Generator has more
# (``permutation``, ``shuffle``, ``choice``, ``normal``, ...), which a kernel must not
# rely on.
CUPY_GENERATOR_METHODS = frozenset(
    {
        "beta",
        "binomial",
        "bit_generator",
        "chisquare",
        "dirichlet",
        "exponential",
        "f",
        "gamma",
        "geometric",
        "hypergeometric",
        "integers",
        "logseries",
        "poisson",
        "power",
        "random",
        "standard_exponential",
        "standard_gamma",
        "standard_normal",
        "uniform",
    }
)


class _Proxy:
    """A numpy object (random generator) whose methods return strict arrays. A
    ``Generator`` offers only what ``cupy.random.Generator`` has."""

    def __init__(self, obj: Any, cls: type) -> None:
        self._obj = obj
        self._cls = cls

    def __getattr__(self, name: str) -> Any:
        if (
            isinstance(self._obj, np.random.Generator)
            and not name.startswith("_")
            and name not in CUPY_GENERATOR_METHODS
        ):
            raise AttributeError(
                f"cupy.random.Generator has no '{name}' (numpy's does): "
                "kernels must use the methods both have"
            )
        attr = getattr(self._obj, name)
        if callable(attr) and not isinstance(attr, type):
            attr = _function(attr, f"{type(self._obj).__name__}.{name}", self._cls)
        else:
            attr = _wrap(attr, self._cls)
        return attr

    def __repr__(self) -> str:
        return f"<strict {self._obj!r}>"


class StrictNamespace:
    """numpy's API over a ``StrictArray`` class; attributes resolve lazily and are cached.

    Functions and ufuncs are wrapped; submodules (``linalg``, ``random``, ``fft``) become
    namespaces themselves; types (dtypes, ``ndarray``, exceptions) and constants are
    numpy's own (cupy shares numpy's dtypes too).
    """

    def __init__(
        self,
        module: types.ModuleType = np,
        array_type: type = StrictArray,
        name: str = "dataflow.testing.strict_xp",
        refuse_host: bool = True,
    ) -> None:
        self._module = module
        self._cls = array_type
        self._refuse_host = refuse_host
        self.__name__ = name
        self.ndarray = array_type

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._module, name)
        if isinstance(attr, np.ufunc):
            value: Any = _Ufunc(attr, self._cls, self._refuse_host)
        elif isinstance(attr, types.ModuleType):
            value = StrictNamespace(attr, self._cls, f"{self.__name__}.{name}", self._refuse_host)
        elif isinstance(attr, type) or not callable(attr):
            value = attr
        else:
            value = _function(attr, name, self._cls, self._refuse_host)
        self.__dict__[name] = value  # cache: later lookups skip __getattr__
        return value

    def __repr__(self) -> str:
        return f"<strict array namespace {self.__name__} over {self._module.__name__}>"


def make_namespace(
    array_type: type = StrictArray,
    name: str = "dataflow.testing.strict_xp",
    refuse_host: bool = True,
) -> StrictNamespace:
    """A strict namespace whose arrays are ``array_type`` (a ``StrictArray`` subclass).

    ``refuse_host``: its functions refuse plain numpy arrays as operands even when no
    array of its own is among them (as cupy's do); ``False`` refuses them only mixed
    with its own arrays. Creation and conversion routines (``asarray``, ``array``, ...)
    accept host data either way.
    """
    if not issubclass(array_type, StrictArray):
        raise TypeError("array_type must subclass StrictArray")
    return StrictNamespace(np, array_type, name, refuse_host)


_DEFAULT = StrictNamespace()


def __getattr__(name: str) -> Any:
    # The module itself is the namespace: ``DeviceContext(device, strict_xp, store)``.
    return getattr(_DEFAULT, name)
