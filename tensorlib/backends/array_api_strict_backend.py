"""The ``array_api_strict`` backend: generic kernels on a strict, minimal Array API namespace.

It exists to prove that kernels are backend-generic: ``array_api_strict``
has only what the Array API standard names (no ``einsum``, no ``pad``, no
array methods beyond the standard, no NumPy dtypes), so a generic kernel
that runs here runs on CuPy too.  Ops whose kernels are NumPy-only raise a
clear error here instead of copying through the host.

Tensors keep NumPy dtypes (``tl.float32`` is ``numpy.dtype('float32')``
everywhere); the namespace given to kernels translates a NumPy dtype passed
as ``dtype=`` (``xp.astype(x, dtype)``, ``xp.zeros(shape, dtype=dtype)``)
into the standard's dtype object, which is how a kernel receives dtypes from
op attributes.

    >>> import numpy as np, tensorlib as tl
    >>> x = tl.tensor(np.array([1.0, 4.0]), backend="array_api_strict")
    >>> y = tl.sqrt(x) * 2.0
    >>> y.backend.name, y.dtype, y.numpy().tolist()
    ('array_api_strict', dtype('float64'), [2.0, 4.0])
"""

from __future__ import annotations

import importlib
import sys

import numpy as np

from .base import Backend, register

_NAME = "array_api_strict"


def _module():
    try:
        return importlib.import_module("array_api_strict")
    except ImportError:
        raise ImportError(
            "the 'array_api_strict' backend needs the array-api-strict package "
            "(pip install 'tensorlib[test]' or pip install array-api-strict)"
        ) from None


class _Namespace:
    """``array_api_strict`` with NumPy dtypes accepted where a function takes a dtype.

    Everything else is the module's own attribute, so a kernel that calls a
    function outside the standard fails here with AttributeError.
    """

    def __init__(self, module):
        self._module = module
        self._dtypes = {
            np.dtype(name): getattr(module, name)
            for name in (
                "bool",
                "int8",
                "int16",
                "int32",
                "int64",
                "uint8",
                "uint16",
                "uint32",
                "uint64",
                "float32",
                "float64",
                "complex64",
                "complex128",
            )
        }

    def dtype(self, dtype):
        """The namespace's dtype for a NumPy dtype (or one of its own)."""
        try:
            return self._dtypes[np.dtype(dtype)]
        except TypeError:
            return dtype  # already one of the namespace's dtypes
        except KeyError:
            raise TypeError(
                f"array_api_strict has no dtype {np.dtype(dtype)} (float16 is outside the Array API standard)"
            ) from None

    def numpy_dtype(self, dtype) -> np.dtype:
        """The NumPy dtype for one of the namespace's dtypes."""
        for np_dtype, ours in self._dtypes.items():
            if ours == dtype:
                return np_dtype
        raise TypeError(f"array_api_strict dtype {dtype} has no NumPy counterpart")

    def astype(self, x, dtype, /, *, copy=True):
        return self._module.astype(x, self.dtype(dtype), copy=copy)

    def __getattr__(self, name):
        fn = getattr(self._module, name)
        if not callable(fn) or name in ("finfo", "iinfo", "isdtype", "result_type", "can_cast"):
            return _translating(fn, self) if name in ("finfo", "iinfo", "isdtype") else fn
        return _translating(fn, self)


def _translating(fn, ns):
    def call(*args, **kwargs):
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = ns.dtype(kwargs["dtype"])
        if fn.__name__ in ("finfo", "iinfo", "isdtype") and args and not hasattr(args[0], "shape"):
            args = (ns.dtype(args[0]),) + args[1:]
        return fn(*args, **kwargs)

    call.__name__ = call.__qualname__ = fn.__name__
    call.__wrapped__ = fn
    return call


class ArrayAPIStrictBackend(Backend):
    """Tensors held as ``array_api_strict`` arrays; the package is imported on first use."""

    unsupported_dtypes = (np.dtype(np.float16),)  # the Array API standard has no float16

    def __init__(self):
        super().__init__(_NAME, None)
        self._xp = None

    @property
    def xp(self):
        if self._xp is None:
            self._xp = _Namespace(_module())
        return self._xp

    @xp.setter
    def xp(self, value):
        self._xp = value

    def _array_type(self):
        module = sys.modules.get("array_api_strict._array_object")
        return None if module is None else module.Array

    def is_array(self, value) -> bool:
        array_type = self._array_type()
        return array_type is not None and isinstance(value, array_type)

    def asarray(self, data, dtype=None):
        xp = self.xp
        if self.is_array(data):
            return data if dtype is None else xp.astype(data, dtype, copy=False)
        host = np.asarray(data, dtype=dtype)
        if host.dtype in self.unsupported_dtypes:
            raise TypeError(f"backend {_NAME!r} has no {host.dtype} (the Array API standard has none)")
        return xp._module.asarray(host, copy=True)

    def to_numpy(self, array) -> np.ndarray:
        if self.is_array(array):
            return np.from_dlpack(array, copy=True)
        return np.asarray(array)

    def dtype_of(self, array):
        return self.xp.numpy_dtype(array.dtype)

    def fit(self, raw, dtype):
        if not self.is_array(raw):
            return self.asarray(np.asarray(raw), dtype)
        if raw.dtype != self.xp.dtype(dtype):
            return self.xp.astype(raw, dtype)
        return raw

    def copy(self, array):
        return self.xp._module.asarray(array, copy=True)

    def einsum(self, subscripts, *operands):
        raise LookupError(f"Einsum: no kernel for backend {_NAME!r} (the Array API standard has no einsum)")


array_api_strict = register(ArrayAPIStrictBackend())
