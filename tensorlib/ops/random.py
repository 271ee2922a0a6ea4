"""Random tensors with explicit seeding.

Every function takes ``seed=``: the same seed gives the same numbers.  Without
one, numbers come from a global generator that ``tl.random.seed(s)`` resets.
The module-level functions are ops, so a traced function draws new numbers on
each run; a :class:`Generator` object's methods draw when called (inside
``tl.function``, once, at trace time).  Traced in a ``tl.cond`` branch or a loop
body, an unseeded draw is a function of a key that the enclosing graph draws per
run (per step in a loop), so that a gradient replaying the body sees the same numbers.

>>> import tensorlib as tl
>>> a = tl.random.normal((2,), seed=0); b = tl.random.normal((2,), seed=0)
>>> bool((a == b).numpy().all())
True
"""

from __future__ import annotations

import threading

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

    def exponential(self, shape, scale=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self.draw("exponential", shape, dtype, scale, 0.0, backend)

    def gamma(self, shape, alpha, beta=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        """Gamma samples of shape ``alpha`` and rate ``beta`` (TensorFlow's parameters: scale ``1 / beta``)."""
        return self.draw("gamma", shape, dtype, alpha, _scale_of_rate(beta, "gamma"), backend)

    def beta(self, shape, a, b, dtype=_dt.float32, backend=None) -> Tensor:
        return self.draw("beta", shape, dtype, a, b, backend)

    def poisson(self, shape, lam, dtype=_dt.int64, backend=None) -> Tensor:
        return self.draw("poisson", shape, dtype, lam, 0.0, backend)

    def laplace(self, shape, loc=0.0, scale=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self.draw("laplace", shape, dtype, loc, scale, backend)

    def gumbel(self, shape, loc=0.0, scale=1.0, dtype=_dt.float32, backend=None) -> Tensor:
        return self.draw("gumbel", shape, dtype, loc, scale, backend)

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


def _scale_of_rate(beta, who: str) -> float:
    if not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"tl.random.{who}: the rate beta must be a positive finite number, got {beta}")
    return 1.0 / float(beta)


# distribution -> (names of its parameters a and b, whether each must be > 0 (">"), >= 0 (">=") or any finite)
_PARAMETERS = {
    "exponential": (("scale", ">="),),
    "gamma": (("alpha", ">"), ("scale", ">")),
    "beta": (("a", ">"), ("b", ">")),
    "poisson": (("lam", ">="),),
    "laplace": (("loc", None), ("scale", ">")),
    "gumbel": (("loc", None), ("scale", ">")),
}


def _check_draw(distribution: str, dtype, a, b) -> None:
    """What a draw can give: normals need a float dtype; integer uniforms, integer bounds the dtype holds;
    the other distributions, parameters in their range (NumPy's generator raises for some and returns NaN for
    others) and a float dtype (Poisson counts: any number dtype).

    Otherwise the float draws were cast to the dtype (normal int32 samples were mostly 0, bool ones all True).
    """
    if distribution in _PARAMETERS:
        for (name, bound), value in zip(_PARAMETERS[distribution], (a, b)):
            in_range = {">": value > 0, ">=": value >= 0, None: True}[bound]
            if not (np.isfinite(value) and in_range):
                rule = {">": "a positive", ">=": "a non-negative", None: "a"}[bound]
                raise ValueError(f"{name} must be {rule} finite number, got {value}")
        if dtype.kind != "f" and not (distribution == "poisson" and dtype.kind in "iu"):
            raise TypeError(f"{distribution} samples need a float dtype, got {dtype}")
        return
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
#
# An unseeded draw traced in a tl.cond branch or a loop body takes a key instead (an int64 scalar input; its
# ``seed`` attribute is then a salt telling the body's draws apart): its numbers are a function of the key,
# which the enclosing trace draws once per run (per step for a loop).  A gradient replays the branch or body,
# and the replay must draw the numbers the forward run drew (a dropout mask drawn again gave the gradient of
# another mask, silently).
KEYED: dict = {}  # op type -> its inputs but the key, for the draws that take one in a branch or body (graph.tracing)
KEY_BOUND = 2**62  # keys are int64 draws in [0, KEY_BOUND)


def check_key(key, who: str = "key") -> None:
    """The key input of a keyed draw: one int64 scalar (a shape rule's check)."""
    if len(key) > 1 or (key and (tuple(key[0].shape) != () or key[0].dtype != _dt.int64)):
        got = ", ".join(f"{k.dtype}{list(k.shape)}" for k in key)
        raise TypeError(f"{who} must be one int64 scalar, got [{got}]")


_keyed = threading.local()


def keyed_generator(backend, key, salt):
    """The generator of a keyed draw: a function of the key's value and the salt alone.

    On the host backends, NumPy's counter-based Philox keyed by both: one per thread whose state is set
    for each draw (a fifth of the cost of making a generator, about 40 us, at every step of a loop)."""
    words = [int(key) & (2**64 - 1), int(salt) & (2**64 - 1)]
    if type(backend).random_generator is not _backends.Backend.random_generator:
        return backend.random_generator(int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0]))
    philox = getattr(_keyed, "philox", None)
    if philox is None:
        philox = _keyed.philox = np.random.Philox(0)
        _keyed.generator = np.random.Generator(philox)
        _keyed.state = {**philox.state, "buffer_pos": 4, "has_uint32": 0, "uinteger": 0}  # (copied when set)
        _keyed.state["state"] = {"counter": np.zeros(4, np.uint64), "key": np.zeros(2, np.uint64)}
    _keyed.state["state"]["key"][:] = words
    philox.state = _keyed.state
    return _keyed.generator


def _draw_op(name, distribution, doc):
    def infer(*key, shape, dtype, seed, a, b):
        check_key(key)
        if any(d < 0 for d in shape):
            raise ValueError(f"shape {shape} has a negative dimension")
        _check_draw(distribution, dtype, a, b)
        return spec(shape, dtype)

    op = defop(
        name,
        inputs=("key",),
        attrs={"shape": (), "dtype": _dt.float32, "seed": None, "a": 0.0, "b": 1.0},
        infer=infer,
        differentiable=False,
        variadic=True,
        stateful=True,
        doc=doc + " With a key input (a draw in a branch or loop body), a function of the key and the seed.",
    )

    @op.per_backend
    def _kernel(backend, *key, shape, dtype, seed, a, b):
        if key:
            return backend.random(keyed_generator(backend, key[0], seed), distribution, shape, dtype, a, b)
        return _gen(seed).draw_array(backend, distribution, shape, dtype, a, b)

    KEYED[name] = 0
    return op


_normal = _draw_op("RandomStandardNormal", "normal", "Normal samples with mean a and standard deviation b.")
_uniform = _draw_op("RandomUniform", "uniform", "Uniform samples in [a, b).")
_truncated = _draw_op(
    "TruncatedNormal",
    "truncated_normal",
    "Normal samples within two standard deviations of the mean a (standard deviation b).",
)
_bernoulli = _draw_op("RandomBernoulli", "bernoulli", "True with probability a.")
_exponential = _draw_op("RandomExponential", "exponential", "Exponential samples of scale a.")
_gamma = _draw_op("RandomGamma", "gamma", "Gamma samples of shape a and scale b.")
_beta = _draw_op("RandomBeta", "beta", "Beta samples of parameters a and b.")
_poisson = _draw_op("RandomPoisson", "poisson", "Poisson counts of rate a.")
_laplace = _draw_op("RandomLaplace", "laplace", "Laplace samples of location a and scale b.")
_gumbel = _draw_op("RandomGumbel", "gumbel", "Gumbel samples of location a and scale b.")


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


def exponential(shape, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Exponential samples of ``scale`` (mean ``scale``), as ``numpy.random.Generator.exponential``.

    >>> import numpy as np, tensorlib as tl
    >>> bool(np.allclose(tl.random.exponential((3,), 2.0, dtype="float64", seed=0).numpy(),
    ...                  np.random.default_rng(0).exponential(2.0, 3)))
    True
    """
    return _sample(_exponential, shape, dtype, seed, backend, float(scale))


def gamma(shape, alpha, beta=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Gamma samples of shape ``alpha`` and rate ``beta`` (TensorFlow's ``tf.random.gamma`` parameters; NumPy's
    ``gamma(alpha, scale=1 / beta)``), mean ``alpha / beta``.  Scalar parameters; not differentiable."""
    return _sample(_gamma, shape, dtype, seed, backend, float(alpha), _scale_of_rate(float(beta), "gamma"))


def beta(shape, a, b, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Beta samples of parameters ``a`` and ``b`` (mean ``a / (a + b)``), as NumPy's generator."""
    return _sample(_beta, shape, dtype, seed, backend, float(a), float(b))


def poisson(shape, lam, dtype=_dt.int64, seed=None, backend=None) -> Tensor:
    """Poisson counts of rate ``lam``, int64 by default as NumPy's (``dtype=float32`` gives TensorFlow's);
    NumPy backend and array_api_strict only (CuPy's generator has no Poisson draws: a clear error)."""
    return _sample(_poisson, shape, dtype, seed, backend, float(lam))


def laplace(shape, loc=0.0, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Laplace (double exponential) samples, as NumPy's generator."""
    return _sample(_laplace, shape, dtype, seed, backend, float(loc), float(scale))


def gumbel(shape, loc=0.0, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Gumbel samples (of the maximum), as NumPy's generator."""
    return _sample(_gumbel, shape, dtype, seed, backend, float(loc), float(scale))


def randint(shape, minval, maxval, dtype=_dt.int64, seed=None, backend=None) -> Tensor:
    """Integers in ``[minval, maxval)`` (JAX's ``randint``; ``uniform`` with an integer dtype).

    >>> import tensorlib as tl
    >>> sorted(set(tl.random.randint((50,), -1, 2, seed=0).numpy().tolist()))
    [-1, 0, 1]
    """
    if _dt.as_dtype(dtype).kind not in "iu":
        raise TypeError(f"tl.random.randint: dtype must be an integer dtype, got {_dt.as_dtype(dtype)}")
    return uniform(shape, minval, maxval, dtype=dtype, seed=seed, backend=backend)


def categorical(logits, num_samples: int, dtype=_dt.int64, seed=None) -> Tensor:
    """TensorFlow's ``tf.random.categorical``: for each row of ``logits`` (batch, classes), ``num_samples``
    class indices drawn with probabilities ``softmax(logits)`` (a ``-inf`` logit is never drawn), by the
    Gumbel-max trick: the argmax of the logits plus Gumbel noise.  Drawn on every run of a traced function.

    >>> import tensorlib as tl
    >>> draws = tl.random.categorical(tl.tensor([[0.0, -float("inf"), 0.0]]), 1000, seed=0).numpy()
    >>> sorted(set(draws[0].tolist())), draws.shape
    ([0, 2], (1, 1000))
    """
    from . import reduce as _reduce
    from .shape import expand_dims

    logits = logits if isinstance(logits, Tensor) else make(np.asarray(logits, np.float32), _backends.current())
    if logits.ndim != 2 or logits.dtype.kind != "f":
        raise ValueError(
            f"tl.random.categorical: logits must be a 2-D float tensor (batch, classes), got {logits.dtype}"
            f"{list(logits.shape)}"
        )
    count = int(num_samples) if isinstance(num_samples, (int, np.integer)) and not isinstance(num_samples, bool) else -1
    if count < 0:
        raise ValueError(f"tl.random.categorical: num_samples must be a non-negative integer, got {num_samples!r}")
    if _dt.as_dtype(dtype) not in (_dt.int32, _dt.int64):
        raise TypeError(f"tl.random.categorical: dtype must be int32 or int64, got {_dt.as_dtype(dtype)}")
    if None in logits.shape:
        raise ValueError(f"tl.random.categorical: logits need a known shape, got {logits.shape}")
    batch, classes = logits.shape
    noise = gumbel((batch, count, classes), dtype=logits.dtype, seed=seed, backend=logits.backend.name)
    picked = _reduce.argmax(expand_dims(logits, 1) + noise, axis=-1)
    return picked if picked.dtype == _dt.as_dtype(dtype) else picked.astype(dtype)


def shuffle(x, seed=None) -> Tensor:
    """TensorFlow's ``tf.random.shuffle``: ``x`` with its first axis in a random order, drawn on every run
    of a traced function (an argsort of uniform draws); the gradient flows back to ``x``.

    >>> import tensorlib as tl
    >>> sorted(tl.random.shuffle(tl.tensor([1, 2, 3, 4]), seed=0).numpy().tolist())
    [1, 2, 3, 4]
    """
    from .array import argsort
    from .shape import take

    x = x if isinstance(x, Tensor) else make(np.asarray(x), _backends.current())
    if x.ndim == 0 or x.shape[0] is None:
        raise ValueError(f"tl.random.shuffle: x needs a first axis of known length, got shape {x.shape}")
    keys = uniform((x.shape[0],), dtype=_dt.float64, seed=seed, backend=x.backend.name)
    return take(x, argsort(keys), axis=0)


def choice(a, shape=(), replace: bool = True, p=None, seed=None) -> Tensor:
    """NumPy's ``Generator.choice`` along ``a``'s first axis (an int ``a`` means ``arange(a)``): ``shape``
    draws, with or without replacement, with probabilities ``p`` (uniform by default).  Without replacement
    the Gumbel-top-k trick draws them (the same law as NumPy's, other numbers); the gradient flows back to
    ``a``.

    >>> import tensorlib as tl
    >>> sorted(tl.random.choice(5, (5,), replace=False, seed=0).numpy().tolist())
    [0, 1, 2, 3, 4]
    """
    from . import math as _math
    from .array import argsort
    from .shape import reshape, take

    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        a = make(np.arange(int(a)), _backends.current())
    a = a if isinstance(a, Tensor) else make(np.asarray(a), _backends.current())
    if a.ndim == 0 or a.shape[0] is None:
        raise ValueError(f"tl.random.choice: a needs a first axis of known length, got shape {a.shape}")
    shape = as_ints(shape if isinstance(shape, (tuple, list)) else (shape,), "tl.random.choice: shape")
    count, n = int(np.prod(shape, dtype=np.int64)), a.shape[0]
    if p is None:
        logits = make(np.zeros(n), a.backend)
    else:
        probs = np.asarray(p.numpy() if isinstance(p, Tensor) else p, np.float64)
        if probs.shape != (n,) or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"tl.random.choice: p must be {n} non-negative probabilities summing to 1, got {p!r}")
        with np.errstate(divide="ignore"):
            logits = make(np.log(probs), a.backend)
    if not replace and count > int(np.count_nonzero(np.isfinite(logits.numpy()))):
        raise ValueError(f"tl.random.choice: cannot take {count} of {n} without replacement (nonzero p: fewer)")
    if replace:
        picked = reshape(categorical(reshape(logits, (1, n)), count, seed=seed), (count,))
    else:
        noise = gumbel((n,), dtype=_dt.float64, seed=seed, backend=a.backend.name)
        picked = argsort(_math.negative(logits + noise))[:count]
    return reshape(take(a, picked, axis=0), shape + tuple(a.shape[1:]))
