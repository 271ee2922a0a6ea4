"""Random tensors with explicit seeding.

Every function takes ``seed=``: the same seed gives the same numbers.  Without
one, numbers come from a global generator that ``tl.random.seed(s)`` resets.
The module-level functions are ops, so a traced function draws new numbers on
each run; a :class:`Generator` object's methods draw when called (inside
``tl.function``, once, at trace time).

>>> import tensorlib as tl
>>> a = tl.random.normal((2,), seed=0); b = tl.random.normal((2,), seed=0)
>>> bool((a == b).numpy().all())
True
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..backends import base as _backends
from ..dispatch import apply
from ..tensor import Tensor, make
from ._shapes import as_ints
from .registry import defop, spec


class Generator:
    """A seeded stream of random tensors on any backend.

    Each backend draws with its own generator (``Backend.random_generator``):
    NumPy's PCG64 on the host backends (the same seed gives the same numbers on
    NumPy and array_api_strict), CuPy's on the GPU, so draws never go through
    the host there.  One Generator keeps one stream per backend, all from its seed.
    """

    def __init__(self, seed: int | None = None):
        self._seed = seed
        self._rng = np.random.default_rng(seed)  # the NumPy backend's stream (initializers draw from it too)
        self._streams = {"numpy": self._rng}

    def _stream(self, backend):
        stream = self._streams.get(backend.name)
        if stream is None:
            stream = self._streams.setdefault(backend.name, backend.random_generator(self._seed))
        return stream

    def draw(self, distribution: str, shape, dtype, a=0.0, b=1.0, backend=None) -> Tensor:
        """``shape`` samples of ``distribution`` (see ``Backend.random``) on ``backend`` (default: current)."""
        bk = _backends.current() if backend is None else _backends.get(backend)
        dtype = _dt.as_dtype(dtype)
        try:
            _check_draw(distribution, dtype, a, b)
        except (TypeError, ValueError) as e:
            raise type(e)(f"tl.random.Generator.{distribution}: {e}") from None
        return make(self.draw_array(bk, distribution, as_ints(shape, "tl.random.Generator: shape"), dtype, a, b), bk)

    def draw_array(self, backend, distribution: str, shape: tuple, dtype, a=0.0, b=1.0):
        """As :meth:`draw`, the backend's raw array (what kernels use)."""
        return backend.random(self._stream(backend), distribution, shape, dtype, a, b)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self.draw("normal", shape, dtype, mean, stddev, backend)

    def uniform(self, shape, minval=0.0, maxval=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self.draw("uniform", shape, dtype, minval, maxval, backend)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        """Normal samples redrawn until within two standard deviations (TensorFlow's rule)."""
        return self.draw("truncated_normal", shape, dtype, mean, stddev, backend)

    def bernoulli(self, shape, p=0.5, dtype=_dt.bool_, backend=None) -> Tensor:
        return self.draw("bernoulli", shape, dtype, p, 0.0, backend)

    def permutation(self, n: int, backend=None) -> Tensor:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:  # -1 gave an empty permutation
            raise ValueError(f"tl.random.permutation: n must be a non-negative integer, got {n!r}")
        return self.draw("permutation", (int(n),), _dt.int64, 0.0, 0.0, backend)


_global = [Generator()]


def seed(value: int) -> None:
    """Reset the global generator."""
    _global[0] = Generator(_as_seed(value, "tl.random.seed"))


def _gen(seed):
    return _global[0] if seed is None else Generator(seed)


def _as_seed(value, who: str):
    """None or a non-negative int (a float seed was truncated: 3.7 drew seed 3's numbers)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{who}: seed must be a non-negative integer or None, got {value!r}")
    if value < 0:
        raise ValueError(f"{who}: seed must be a non-negative integer or None, got {value!r}")
    return int(value)


def _check_draw(distribution: str, dtype, a, b) -> None:
    """What a draw can give: normals need a float dtype; integer uniforms, integer bounds the dtype holds.

    Otherwise the float draws were cast to the dtype (normal int32 samples were mostly 0, bool ones all True).
    """
    if distribution == "bernoulli":
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"the probability p must be in [0, 1], got {a}")
        return
    if distribution not in ("normal", "truncated_normal", "uniform") or dtype.kind == "f":
        return
    if distribution == "uniform" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if a != int(a) or b != int(b) or not info.min <= a < b <= info.max + 1:
            raise ValueError(
                f"integer samples need integer bounds minval < maxval within {dtype}'s range "
                f"[{info.min}, {info.max + 1}), got minval={a}, maxval={b}"
            )
        return
    floats = "a float or integer" if distribution == "uniform" else "a float"
    raise TypeError(f"{distribution} samples need {floats} dtype, got {dtype}")


# The module-level draws are ops (stateful, not differentiable), so a traced function draws new
# numbers on every run instead of baking the trace-time draw into its graph.
def _draw_op(name, distribution, doc):
    def infer(*, shape, dtype, seed, a, b):
        if any(d < 0 for d in shape):
            raise ValueError(f"shape {shape} has a negative dimension")
        _check_draw(distribution, dtype, a, b)
        return spec(shape, dtype)

    op = defop(
        name,
        inputs=(),
        attrs={"shape": (), "dtype": _dt.float32, "seed": None, "a": 0.0, "b": 1.0},
        infer=infer,
        differentiable=False,
        stateful=True,
        doc=doc,
    )

    @op.per_backend
    def _kernel(backend, *, shape, dtype, seed, a, b):
        return _gen(seed).draw_array(backend, distribution, shape, dtype, a, b)

    return op


_normal = _draw_op("RandomStandardNormal", "normal", "Normal samples with mean a and standard deviation b.")
_uniform = _draw_op("RandomUniform", "uniform", "Uniform samples in [a, b).")
_truncated = _draw_op(
    "TruncatedNormal",
    "truncated_normal",
    "Normal samples within two standard deviations of the mean a (standard deviation b).",
)
_bernoulli = _draw_op("RandomBernoulli", "bernoulli", "True with probability a.")


def _sample(op, shape, dtype, seed, backend, a=0.0, b=1.0) -> Tensor:
    attrs = {
        "shape": as_ints(shape, f"{op.name}: shape"),
        "dtype": _dt.as_dtype(dtype),
        "seed": _as_seed(seed, op.name),
        "a": a,
        "b": b,
    }
    if backend is None:
        return apply(op, (), attrs)
    with _backends.backend(backend):
        return apply(op, (), attrs)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _sample(_normal, shape, dtype, seed, backend, float(mean), float(stddev))


def uniform(shape, minval=0.0, maxval=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Samples in ``[minval, maxval)``; an integer dtype gives integers (the bounds must then be integers).

    >>> import tensorlib as tl
    >>> sorted(set(tl.random.uniform((100,), 0, 3, dtype=tl.int32, seed=0).numpy().tolist()))
    [0, 1, 2]
    """
    return _sample(_uniform, shape, dtype, seed, backend, minval, maxval)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    return _sample(_truncated, shape, dtype, seed, backend, float(mean), float(stddev))


def bernoulli(shape, p=0.5, dtype=_dt.bool_, seed=None, backend=None) -> Tensor:
    return _sample(_bernoulli, shape, dtype, seed, backend, float(p))


def permutation(n: int, seed=None, backend=None) -> Tensor:
    """A random permutation of ``range(n)`` (drawn when called, also inside ``tl.function``)."""
    return _gen(_as_seed(seed, "tl.random.permutation")).permutation(n, backend)
