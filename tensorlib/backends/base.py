"""The Backend object and the public backend registry.

A backend is a name, an array namespace ``xp`` and a few conversions.  Kernels
are looked up by backend name on each OpDef, so registering a new backend and
kernels for it needs no change to tensorlib itself::

    >>> import numpy as np, tensorlib as tl
    >>> class Counting(tl.backends.Backend):
    ...     pass
    >>> _ = tl.backends.register(Counting("counting", np))
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .. import dtypes


class Backend:
    """An array library tensorlib can run kernels on.

    Subclasses override ``asarray``/``to_numpy`` when their arrays are not
    NumPy arrays; ``einsum`` and ``matmul`` may be specialised for speed.
    """

    def __init__(self, name: str, xp):
        self.name = name
        self.xp = xp

    def __reduce__(self):  # pickled and copied as its name: the registered backend itself
        return (get, (self.name,))

    def asarray(self, data, dtype=None):
        return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array) -> np.ndarray:
        return np.asarray(array)

    def is_array(self, value) -> bool:
        return isinstance(value, np.ndarray)

    def einsum(self, subscripts, *operands):
        return self.xp.einsum(subscripts, *operands)

    def fit(self, raw, dtype):
        """A kernel's result as this backend's array of ``dtype`` (its shape rule's dtype)."""
        if not self.is_array(raw):
            raw = self.asarray(raw)
        return raw if raw.dtype == dtype else raw.astype(dtype)

    def dtype_of(self, array) -> np.dtype:
        """The NumPy dtype of one of this backend's arrays (tensors always carry NumPy dtypes)."""
        return np.dtype(array.dtype)

    def copy(self, array):
        """A copy of ``array`` that shares no memory with it."""
        return array.copy()

    def synchronize(self) -> None:
        """Wait for queued device work (a no-op on the host)."""

    def random_generator(self, seed: int | None):
        """A new random number generator of this backend, seeded with ``seed`` (None: fresh entropy).

        ``tl.random`` keeps one per backend and seed, and passes it back to :meth:`random`.  Here: NumPy's
        PCG64, whose draws :meth:`random` converts (the Array API standard has no random numbers), so
        one seed gives the same numbers on every host backend.
        """
        return np.random.default_rng(seed)

    def random(self, rng, distribution: str, shape: tuple, dtype, a: float = 0.0, b: float = 1.0):
        """``shape`` samples of ``distribution`` drawn with ``rng`` (from :meth:`random_generator`), as
        this backend's array of ``dtype``: ``"normal"`` (mean a, standard deviation b), ``"uniform"``
        (in [a, b); integers for an integer dtype), ``"truncated_normal"`` (within two standard
        deviations, redrawn as TensorFlow does), ``"bernoulli"`` (True with probability a), ``"random"``
        (float32 uniforms in [0, 1), dropout's draw), ``"permutation"`` (of range(shape[0])),
        ``"exponential"`` (scale a), ``"gamma"`` (shape a, scale b), ``"beta"`` (a, b), ``"poisson"``
        (rate a), ``"laplace"`` and ``"gumbel"`` (location a, scale b), as NumPy's generator draws them.
        ``a`` and ``b`` may be arrays of this backend broadcasting to ``shape`` (one parameter per sample).

        >>> import numpy as np, tensorlib as tl
        >>> b = tl.backends.numpy
        >>> b.random(b.random_generator(0), "uniform", (2,), np.dtype("float64")).tolist()
        [0.6369616873214543, 0.2697867137638703]
        """
        a, b = (self.to_numpy(v) if self.is_array(v) else v for v in (a, b))  # per-sample parameters
        return self.asarray(
            _host_draw(rng, distribution, tuple(shape), np.dtype(dtype), a, b).astype(dtype, copy=False)
        )

    def __repr__(self) -> str:
        return f"<Backend {self.name}>"


def below(xp, x, a, b):
    """Uniform draws ``x`` in ``[a, b)``, rounded to their dtype, kept below ``b``: rounding reaches ``b``
    (float16 draws in [0, 1) were 1.0 once in about 4000, NumPy's float64 ones in a narrow range too), and
    those become the dtype's largest number below ``b`` (``a`` where there is none above it)."""
    low, high = x.dtype.type(a), x.dtype.type(b)
    return xp.minimum(x, max(np.nextafter(high, low), low))


def _host_draw(rng: np.random.Generator, distribution, shape, dtype, a, b) -> np.ndarray:
    """The draws of :meth:`Backend.random` with NumPy's generator: tensorlib's seeded streams."""
    if distribution == "normal":
        return rng.normal(a, b, size=shape)
    if distribution == "uniform":
        if dtype.kind in "iu":
            return rng.integers(a, b, size=shape)
        return below(np, rng.uniform(a, b, size=shape).astype(dtype, copy=False), a, b)
    if distribution == "truncated_normal":
        out = rng.normal(size=shape)
        bad = np.abs(out) > 2
        while bad.any():
            out[bad] = rng.normal(size=int(bad.sum()))
            bad = np.abs(out) > 2
        return a + b * out
    if distribution == "bernoulli":
        return rng.random(size=shape) < a
    if distribution == "random":
        return rng.random(shape, dtype=np.float32)
    if distribution == "permutation":
        return rng.permutation(shape[0])
    if distribution == "exponential":
        return rng.exponential(a, size=shape)
    if distribution == "gamma":  # shape a, scale b
        return rng.gamma(a, b, size=shape)
    if distribution == "beta":
        return rng.beta(a, b, size=shape)
    if distribution == "poisson":
        return rng.poisson(a, size=shape)
    if distribution == "laplace":
        return rng.laplace(a, b, size=shape)
    if distribution == "gumbel":
        return rng.gumbel(a, b, size=shape)
    raise ValueError(f"unknown distribution {distribution!r}")


_backends: dict[str, Backend] = {}
_default: list[Backend] = []


def register(backend: Backend) -> Backend:
    """Make ``backend`` available by name; returns it."""
    if backend.name in _backends and _backends[backend.name] is not backend:
        raise ValueError(f"a backend named {backend.name!r} is already registered")
    _backends[backend.name] = backend
    return backend


def get(name_or_backend) -> Backend:
    """Look a backend up by name (``"numpy"``, ``"cupy"``, ...)."""
    if isinstance(name_or_backend, Backend):
        return name_or_backend
    try:
        return _backends[name_or_backend]
    except KeyError:
        raise ValueError(f"unknown backend {name_or_backend!r}; registered: {sorted(_backends)}") from None


def names() -> list[str]:
    return sorted(_backends)


# `with tl.backend(...)` blocks of this thread (or context), innermost last: another thread's block never
# changes where this thread's tensors are made.
_scoped: contextvars.ContextVar = contextvars.ContextVar("tensorlib_backends", default=())


def current() -> Backend:
    """The backend new tensors are made on: the innermost ``with tl.backend`` block of this thread, else
    the process-wide default (``set_backend``)."""
    scoped = _scoped.get()
    return scoped[-1] if scoped else _default[-1]


def set_backend(name_or_backend) -> Backend:
    """Set the process-wide default backend (``with tl.backend(...)`` overrides it in one thread)."""
    b = get(name_or_backend)
    _default[-1] = b
    return b


@contextlib.contextmanager
def backend(name_or_backend):
    """``with tl.backend("cupy"):`` creates new tensors on that backend inside the block, in this thread."""
    b = get(name_or_backend)
    token = _scoped.set(_scoped.get() + (b,))
    try:
        yield b
    finally:
        _scoped.reset(token)


def backend_of_array(value) -> Backend | None:
    """The registered backend whose array type ``value`` is, preferring NumPy."""
    if isinstance(value, np.ndarray):
        return None
    for b in _backends.values():
        if b.name != "numpy" and b.is_array(value):
            return b
    return None


__all__ = ["Backend", "register", "get", "names", "current", "set_backend", "backend", "dtypes"]
