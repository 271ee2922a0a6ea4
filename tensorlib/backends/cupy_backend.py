"""The CuPy backend: tensors on an NVIDIA GPU, kernels through CuPy, cuBLAS and cuDNN.

CuPy is an optional extra (``pip install 'tensorlib[cuda]'``) imported on
first use: ``import tensorlib`` never needs it, and a machine without CuPy
or without a CUDA device gets one clear error when it asks for the backend.
Generic kernels run with ``xp = cupy`` (CuPy 14 mirrors NumPy 2, so the
Array API names the generic kernels use are there); the conv family, pools,
batch norm and a few others have CuPy kernels of their own in
``tensorlib.backends.cupy_nn``.

    >>> import tensorlib as tl
    >>> tl.backends.get("cupy").name
    'cupy'
"""

from __future__ import annotations

import importlib
import sys

import numpy as np

from .base import Backend, below, register

_NAME = "cupy"
# Array API names a generic kernel may use, with NumPy-1-style spellings for an older CuPy.
_STANDARD_ALIASES = {
    "pow": "power",
    "concat": "concatenate",
    "permute_dims": "transpose",
    "acos": "arccos",
    "asin": "arcsin",
    "atan": "arctan",
    "acosh": "arccosh",
    "asinh": "arcsinh",
    "atanh": "arctanh",
    "atan2": "arctan2",
}


class CupyUnavailable(RuntimeError):
    """The CuPy backend was asked for where CuPy or a CUDA device is missing."""


def _import_cupy():
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as e:
        raise CupyUnavailable(
            f"the 'cupy' backend needs CuPy with a CUDA device: CuPy is not installed "
            f"({e}); pip install 'tensorlib[cuda]'"
        ) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CUDA driver missing or broken: say so once, plainly
        raise CupyUnavailable(
            f"the 'cupy' backend needs a CUDA device, and CUDA says: {type(e).__name__}: {e}"
        ) from None
    if count == 0:
        raise CupyUnavailable("the 'cupy' backend needs a CUDA device; none is visible")
    return cupy


def _sorting(module, name):
    """The standard's ``sort``/``argsort(x, axis=, stable=)``: CuPy's sorts are stable whatever ``kind``
    says, and an older CuPy has no ``stable`` keyword."""
    fn = getattr(module, name)

    def sort(x, /, *, axis=-1, stable=True):
        return fn(x, axis=axis)

    sort.__name__ = sort.__qualname__ = name
    return sort


class _Namespace:
    """``cupy`` itself, plus the Array API functions an older CuPy lacks or spells otherwise (``astype``,
    ``isdtype``, ``acos``, ``cumulative_sum``, ``cumulative_prod``, ``sort(stable=)``...)."""

    def __init__(self, cupy):
        self._module = cupy

    def __getattr__(self, name):
        module = self._module
        fn = _sorting(module, name) if name in ("sort", "argsort") else getattr(module, name, None)
        if fn is None and name in _STANDARD_ALIASES:
            fn = getattr(module, _STANDARD_ALIASES[name])
        if fn is None and name == "astype":

            def fn(x, dtype, /, *, copy=True):
                return x.astype(dtype, copy=copy)

        if fn is None and name == "isdtype":
            fn = np.isdtype
        if fn is None and name == "matrix_transpose":

            def fn(x):
                return module.swapaxes(x, -1, -2)

        if fn is None and name in ("cumulative_sum", "cumulative_prod"):
            scan, initial = (module.cumsum, 0) if name == "cumulative_sum" else (module.cumprod, 1)

            def fn(x, /, *, axis=None, dtype=None, include_initial=False):
                out = scan(x, axis=axis, dtype=dtype)
                if include_initial:
                    pad = [(0, 0)] * out.ndim
                    pad[axis] = (1, 0)
                    out = module.pad(out, pad, constant_values=initial)
                return out

        if fn is None:
            raise AttributeError(f"module 'cupy' has no attribute {name!r}")
        setattr(self, name, fn)  # looked up once
        return fn


def _namespace(cupy):
    """The namespace generic kernels get: always the wrapper, since ``sort(stable=)`` needs one."""
    return _Namespace(cupy)


class CupyBackend(Backend):
    """Tensors held as ``cupy.ndarray`` on the current CUDA device; CuPy is imported on first use."""

    def __init__(self):
        super().__init__(_NAME, None)
        self._xp = None
        self._cupy = None

    @property
    def cupy(self):
        """The ``cupy`` module (imported, and the device checked, on first use)."""
        if self._cupy is None:
            self._cupy = _import_cupy()
        return self._cupy

    @property
    def xp(self):
        if self._xp is None:
            self._xp = _namespace(self.cupy)
        return self._xp

    @xp.setter
    def xp(self, value):
        self._xp = value

    def is_array(self, value) -> bool:
        cupy = sys.modules.get("cupy")
        return cupy is not None and isinstance(value, cupy.ndarray)

    def asarray(self, data, dtype=None):
        return self.cupy.asarray(data, dtype=dtype)

    def to_numpy(self, array) -> np.ndarray:
        return self.cupy.asnumpy(array) if self.is_array(array) else np.asarray(array)

    def einsum(self, subscripts, *operands):
        return self.cupy.einsum(subscripts, *operands)

    def synchronize(self) -> None:
        self.cupy.cuda.get_current_stream().synchronize()

    def random_generator(self, seed: int | None):
        """CuPy's generator (``cupy.random.default_rng``): draws stay on the device."""
        return self.cupy.random.default_rng(seed)

    def random(self, rng, distribution: str, shape: tuple, dtype, a: float = 0.0, b: float = 1.0):
        """The draws of ``Backend.random`` on the GPU with CuPy's generator, in float64 as on the host
        (the same distributions; CuPy's stream gives other numbers than NumPy's for one seed)."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        if distribution == "normal":
            out = a + b * rng.standard_normal(shape, dtype=np.float64)
        elif distribution == "uniform" and dtype.kind in "iu":
            out = rng.integers(a, b, size=shape, dtype=np.int64)
        elif distribution == "uniform":
            out = below(self.cupy, (a + (b - a) * rng.random(shape, dtype=np.float64)).astype(dtype), a, b)
        elif distribution == "truncated_normal":
            out = rng.standard_normal(shape, dtype=np.float64)
            bad = abs(out) > 2
            while bool(bad.any()):  # one sync per redraw round; about 5% of samples redraw each round
                out = self.cupy.where(bad, rng.standard_normal(shape, dtype=np.float64), out)
                bad = abs(out) > 2
            out = a + b * out
        elif distribution == "bernoulli":
            out = rng.random(shape, dtype=np.float64) < a
        elif distribution == "random":
            out = rng.random(shape, dtype=np.float32)
        elif distribution == "permutation":
            out = self.cupy.argsort(rng.random(shape, dtype=np.float64))  # a uniform random order
        elif distribution == "exponential":
            out = a * rng.standard_exponential(shape, dtype=np.float64)
        elif distribution == "gamma":
            out = b * rng.standard_gamma(a, size=shape, dtype=np.float64)
        elif distribution == "beta":
            x, y = (
                rng.standard_gamma(a, size=shape, dtype=np.float64),
                rng.standard_gamma(b, size=shape, dtype=np.float64),
            )
            out = x / (x + y)
        elif distribution == "laplace":
            u = rng.random(shape, dtype=np.float64) - 0.5
            out = a - b * self.cupy.sign(u) * self.cupy.log1p(-2 * abs(u))
        elif distribution == "gumbel":
            out = a - b * self.cupy.log(rng.standard_exponential(shape, dtype=np.float64))
        elif distribution == "poisson":
            # CuPy's Generator draws Poisson counts with cuRAND (int64); its lam must be a Python number.
            out = rng.poisson(float(a), size=shape)
        else:
            raise ValueError(f"unknown distribution {distribution!r}")
        return out.astype(dtype, copy=False)


cupy = register(CupyBackend())
