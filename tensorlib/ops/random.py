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

import contextlib
import threading

import numpy as np

from .. import dtypes as _dt
from ..backends import base as _backends
from ..dispatch import apply, as_tensor
from ..grad.registry import register_gradient
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
        if _per_element(a) or _per_element(b):
            raise TypeError(
                f"tl.random.Generator.{distribution}: parameters must be numbers; tl.random.{distribution} takes "
                "tensors (one parameter per sample, differentiable)"
            )
        try:
            for value in (a, b):
                _number(f"Generator.{distribution}", "a parameter", value)
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
        return self.draw("gamma", shape, dtype, alpha, _scale_of_rate(beta, "Generator.gamma"), backend)

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
    return current_generator() if seed is None else Generator(seed)


# A thread's stand-in for the global generator (tl.remat's recomputation draws the forward pass's numbers
# again from a copy, while other threads keep drawing from the global generator).
_local = threading.local()


def current_generator() -> Generator:
    """The generator that unseeded draws on this thread use: the global one, or a stand-in set by
    :func:`drawing_from`."""
    generator = getattr(_local, "generator", None)
    return _global[0] if generator is None else generator


@contextlib.contextmanager
def drawing_from(generator: Generator):
    """Unseeded draws on this thread come from ``generator`` inside the block; other threads' do not."""
    before = getattr(_local, "generator", None)
    _local.generator = generator
    try:
        yield
    finally:
        _local.generator = before


def _as_seed(value, who: str):
    """None or a non-negative int (a float seed was truncated: 3.7 drew seed 3's numbers)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{who}: seed must be a non-negative integer or None, got {value!r}")
    if value < 0:
        raise ValueError(f"{who}: seed must be a non-negative integer or None, got {value!r}")
    return int(value)


def _number(who: str, name: str, value) -> float:
    """A distribution's parameter given as a number, as a float (``float()`` raised its bare message for a
    string, None or a complex number, naming no function)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"tl.random.{who}: {name} must be a real number or a tensor, got {value!r}") from None


def _scale_of_rate(beta, who: str) -> float:
    if not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"tl.random.{who}: the rate beta must be a positive finite number, got {beta}")
    return 1.0 / float(beta)


# distribution -> (names of its parameters a and b, whether each must be > 0 (">"), >= 0 (">=") or any finite)
_PARAMETERS = {
    "normal": (("mean", None), ("stddev", ">=")),
    "truncated_normal": (("mean", None), ("stddev", ">=")),
    "exponential": (("scale", ">="),),
    "gamma": (("alpha", ">"), ("scale", ">")),
    "beta": (("a", ">"), ("b", ">")),
    "poisson": (("lam", ">="),),
    "laplace": (("loc", None), ("scale", ">")),
    "gumbel": (("loc", None), ("scale", ">")),
}


def poisson_limit(dtype) -> float:
    """The largest rate whose counts ``dtype`` holds: its largest number less ten of its square roots (NumPy's
    bound for int64, which its generator draws; int32 counts of rate 1e12 wrapped to -728318042, float16 ones
    of 1e6 were inf)."""
    top = float(np.iinfo(dtype).max if dtype.kind in "iu" else np.finfo(dtype).max)
    numpys = float(np.iinfo(np.int64).max)
    return min(top - 10 * top**0.5, numpys - 10 * numpys**0.5)


def _check_draw(distribution: str, dtype, a, b) -> None:
    """What a draw can give: integer uniforms, integer bounds the dtype holds; float ones, finite bounds in
    order; the other distributions, parameters in their range (NumPy's generator raises for some, with its own
    bare message, and returns NaN for others; a negative stddev of truncated normals drew silently) and a
    float dtype (Poisson counts: any number dtype).

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
        if distribution == "poisson" and not a <= poisson_limit(dtype):
            raise ValueError(f"lam must be at most {poisson_limit(dtype):.10g} for {dtype} counts, got {a}")
        return
    if distribution == "bernoulli":
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"the probability p must be in [0, 1], got {a}")
        return
    if distribution == "uniform" and dtype.kind == "f":
        if not (np.isfinite(a) and np.isfinite(b) and a <= b):  # NumPy: 'high - low range exceeds valid bounds'
            raise ValueError(f"minval and maxval must be finite numbers, minval <= maxval, got {a} and {b}")
        return
    if distribution != "uniform":
        return
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if a != int(a) or b != int(b) or not info.min <= a < b <= info.max + 1:
            raise ValueError(
                f"integer samples need integer bounds minval < maxval within {dtype}'s range "
                f"[{info.min}, {info.max + 1}), got minval={a}, maxval={b}"
            )
        return
    raise TypeError(f"uniform samples need a float or integer dtype, got {dtype}")


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


def keyed_normal(shape, key, salt: int, mean: float = 0.0, stddev: float = 1.0, dtype=_dt.float32) -> Tensor:
    """Normal samples that are a function of ``key`` (an int64 scalar tensor) and ``salt`` alone: a layer's own
    seeded stream (``tl.nn.GaussianNoise(stddev, seed=...)``) gives the key of each call."""
    attrs = {"shape": as_ints(shape, "RandomStandardNormal: shape"), "dtype": _dt.as_dtype(dtype), "seed": int(salt)}
    return apply(_normal, (key,), {**attrs, "a": float(mean), "b": float(stddev)})


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


# ------------------------------------------------------------- parameters given per sample, as tensors
# A location or scale given as a tensor (or an array) is one parameter per sample, broadcast to ``shape``,
# and the samples are differentiable in it, as TensorFlow's and JAX's are: the location-scale draws are
# ``loc + scale * standard`` (gradients 1 and the standard draw), the gamma draws carry the implicit
# reparameterization gradient (``RandomGammaGrad``).  Before, ``float()`` read a 0-d tensor's value, so
# ``tl.grad`` of a draw in its mean or standard deviation silently gave 0, and any other tensor raised.


def _per_element(value) -> bool:
    """Whether a distribution's parameter is given per sample: a Tensor (0-d included: it may need a gradient),
    or an array or sequence of numbers.  A Python or NumPy number draws through the scalar ops."""
    return isinstance(value, (Tensor, list, tuple)) or (hasattr(value, "shape") and np.ndim(value) > 0)


def _parameter(who: str, name: str, value, shape: tuple, dtype, bound=None) -> Tensor:
    """``value`` as a tensor of ``dtype`` that broadcasts to ``shape``; its values (when it has them, so eagerly)
    checked finite and within ``bound`` (">" positive, ">=" non-negative, None any finite number)."""
    # A number as float64 (a Python float became a float32 tensor: stddev 0.3 drew with 0.30000001 in float64),
    # checked after its cast to the samples' dtype (1e300 is no finite float32).
    t = as_tensor(value if isinstance(value, Tensor) else np.asarray(value))
    if t.dtype.kind not in "fiu":
        raise TypeError(f"tl.random.{who}: {name} must be real numbers, got {t.dtype}{list(t.shape)}")
    if len(t.shape) > len(shape) or any(
        p not in (1, s) and None not in (p, s) for p, s in zip(reversed(t.shape), reversed(shape))
    ):
        raise ValueError(
            f"tl.random.{who}: {name} of shape {tuple(t.shape)} does not broadcast to the samples' shape {shape}"
        )
    t = t if t.dtype == dtype else t.astype(dtype)
    if t.is_symbolic:  # traced: the values are checked when the graph runs
        return _check_parameter(t, rule=bound, message=f"tl.random.{who}: {name}")
    values = t.numpy()
    if not (np.isfinite(values) & _within(values, bound)).all():
        raise ValueError(f"tl.random.{who}: {name} must be {_RULES[bound]}, got {values!r}")
    return t


_check_parameter = defop(
    "CheckParameter",
    inputs=("x",),
    attrs={"rule": None, "message": ""},
    infer=lambda x, *, rule, message: x,
    doc="Identity that raises when x breaks a distribution parameter's rule: a traced draw's values checked.",
)


@_check_parameter.generic
def _check_parameter_kernel(xp, x, *, rule, message):
    ok = xp.isfinite(x) if rule is None else xp.isfinite(x) & _within(x, rule)
    if not bool(xp.all(ok)):
        raise ValueError(f"{message} must be {_RULES[rule]}, got {x!r}")
    return x


register_gradient("CheckParameter", lambda node, g: g)


_RULES = {
    ">": "positive finite numbers",
    ">=": "non-negative finite numbers",
    "[0, 1]": "probabilities in [0, 1]",
    None: "finite numbers",
}


def _within(values: np.ndarray, bound):
    if bound == "[0, 1]":
        return (values >= 0) & (values <= 1)
    return {">": values > 0, ">=": values >= 0, None: True}[bound]


def _float_samples(who: str, dtype) -> np.dtype:
    dtype = _dt.as_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"tl.random.{who}: samples with tensor parameters need a float dtype, got {dtype}")
    return dtype


def _location_scale(who, op, shape, dtype, seed, backend, loc, scale, names, bounds, standard=(0.0, 1.0)):
    """``loc + scale * standard draws`` of ``op``, differentiable in ``loc`` and ``scale`` (numbers or tensors;
    ``loc`` None for a scale family)."""
    from . import math as _math

    dtype = _float_samples(who, dtype)
    shape = as_ints(shape, f"tl.random.{who}: shape")
    params = []
    for name, value, bound in zip(names, (loc, scale), bounds):
        if value is None:  # a scale family
            params.append(None)
        elif _per_element(value):
            params.append(_parameter(who, name, value, shape, dtype, bound))
        else:
            params.append(_checked_float(who, name, value, bound))
    loc, scale = params
    samples = _math.multiply(_sample(op, shape, dtype, seed, backend, *standard), scale)
    return samples if loc is None else _math.add(samples, loc)


def _checked_float(who: str, name: str, value, bound=None) -> float:
    """A number parameter as a float, checked finite and within ``bound`` (see :func:`_parameter`)."""
    value = _number(who, name, value)
    if not (np.isfinite(value) and _within(np.float64(value), bound)):
        rule = {">": "a positive", ">=": "a non-negative", None: "a"}[bound]
        raise ValueError(f"tl.random.{who}: {name} must be {rule} finite number, got {value}")
    return value


# (names, bounds) of the location-scale parameters
_LOC_SCALE = ("loc", "scale")
_MEAN_STDDEV = ("mean", "stddev")
_NORMAL = (None, ">=")
_SCALE = (None, ">")


def _tensor_draw_infer(param, *key, dtype, seed):
    check_key(key)
    if param.dtype.kind != "f":
        raise TypeError(f"the parameter must be a float tensor, got {param.dtype}")
    return spec(param.shape, dtype)


def _tensor_draw_op(name, distribution, bound, doc, differentiable):
    """An op that draws one sample of ``distribution`` per element of its parameter tensor (a float tensor
    of the samples' shape), checked within ``bound`` when it runs; a second input, a key, as the scalar
    draws' (see KEYED)."""
    op = defop(
        name,
        inputs=("param",),
        attrs={"dtype": _dt.float32, "seed": None},
        infer=_tensor_draw_infer,
        differentiable=differentiable,
        variadic=True,
        stateful=True,
        doc=doc + " With a key input (a draw in a branch or loop body), a function of the key and the seed.",
    )

    @op.per_backend
    def _kernel(backend, param, *key, dtype, seed):
        values = backend.to_numpy(param)
        if not (np.isfinite(values) & _within(values, bound)).all():
            raise ValueError(f"{name}: the parameters must be {_RULES[bound]}, got {values!r}")
        if distribution == "poisson" and (values > poisson_limit(dtype)).any():
            raise ValueError(
                f"{name}: the rates must be at most {poisson_limit(dtype):.10g} for {dtype} counts, got {values!r}"
            )
        if key:
            return backend.random(keyed_generator(backend, key[0], seed), distribution, param.shape, dtype, param, 1.0)
        return _gen(seed).draw_array(backend, distribution, tuple(param.shape), dtype, param, 1.0)

    KEYED[name] = 1
    return op


_gamma_tensor = _tensor_draw_op(
    "RandomStandardGammaV2", "gamma", ">", "One gamma sample of rate 1 per shape parameter alpha.", True
)
_poisson_tensor = _tensor_draw_op("RandomPoissonV2", "poisson", ">=", "One Poisson count per rate.", False)
_bernoulli_tensor = _tensor_draw_op(
    "RandomBernoulliV2", "bernoulli", "[0, 1]", "True with probability p, one draw per p.", False
)
_normal_tensor = _tensor_draw_op(
    "RandomNormalV2",
    "normal",
    None,
    "One normal sample of standard deviation 1 per mean (its shape the means').",
    False,
)


def normal_like(x, mean=0.0, stddev=1.0, key=None, salt=None) -> Tensor:
    """Normal samples of ``x``'s shape and float dtype, also where that shape is known only when a graph runs (a
    ``TensorSpec`` of unknown batch: the scalar draws need their shape when traced): the draws of
    :func:`normal`'s (NumPy's ``normal(mean, stddev)``) from the stream ``tl.random.seed`` resets, or with ``key``
    (an int64 scalar tensor) a function of the key and ``salt`` (an int, 0 if not given), as :func:`keyed_normal`'s.
    ``mean`` and ``stddev`` are checked as :func:`normal` checks them (finite, ``stddev >= 0``) and may be tensors
    broadcasting to ``x``'s shape; the samples keep ``x``'s dtype.

    >>> import numpy as np, tensorlib as tl
    >>> noisy = tl.function(lambda x: x + tl.random.normal_like(x, 0.0, 0.1))
    >>> noisy.get_graph(tl.TensorSpec((None, 2))).outputs[0].shape
    (None, 2)
    >>> noisy(np.zeros((3, 2), np.float32)).shape
    (3, 2)
    """
    from .math import zeros_like

    x = as_tensor(x)
    if x.dtype.kind != "f":
        raise TypeError(
            f"tl.random.normal_like: x must be a float tensor (the samples take its dtype), got shape "
            f"{tuple(x.shape)} {x.dtype}"
        )
    shape = tuple(x.shape)
    # Checked as normal() checks them: a negative stddev (silently flipping the samples) or a NaN drew before, and
    # a float64 mean made float64 samples of a float32 x.
    mean = _parameter("normal_like", "mean", mean, shape, x.dtype)
    stddev = _parameter("normal_like", "stddev", stddev, shape, x.dtype, ">=")
    if key is None:
        samples = apply(_normal_tensor, (zeros_like(x),), {"dtype": x.dtype, "seed": _as_seed(salt, "normal_like")})
    else:
        salt = 0 if salt is None else _as_seed(salt, "tl.random.normal_like: salt")
        samples = apply(_normal_tensor, (zeros_like(x), key), {"dtype": x.dtype, "seed": salt})
    return samples * stddev + mean


def _uniform_like_infer(x, *key, dtype, seed, a, b):
    check_key(key)
    _check_draw("uniform", dtype, a, b)
    return spec(x.shape, dtype)


_uniform_like = defop(
    "RandomUniformLike",
    inputs=("x",),
    attrs={"dtype": _dt.float32, "seed": None, "a": 0.0, "b": 1.0},
    infer=_uniform_like_infer,
    differentiable=False,
    variadic=True,
    stateful=True,
    doc="Uniform samples in [a, b) of x's shape (its values unread), also where that shape is known only when the "
    "graph runs. With a key input (a draw in a branch or loop body), a function of the key and the seed.",
)


@_uniform_like.per_backend
def _uniform_like_kernel(backend, x, *key, dtype, seed, a, b):
    if key:
        return backend.random(keyed_generator(backend, key[0], seed), "uniform", x.shape, dtype, a, b)
    return _gen(seed).draw_array(backend, "uniform", tuple(x.shape), dtype, a, b)


KEYED["RandomUniformLike"] = 1


def uniform_like(x, minval: float = 0.0, maxval: float = 1.0, key=None, salt=None) -> Tensor:
    """Uniform samples in ``[minval, maxval)`` of ``x``'s shape and float dtype, also where that shape is known
    only when a graph runs (a ``TensorSpec`` of unknown batch: :func:`uniform` needs its shape when traced).  The
    draws of :func:`uniform`'s for that shape (NumPy's ``uniform(minval, maxval)``, rounded to the dtype and kept
    below ``maxval``) from the stream ``tl.random.seed`` resets (``salt``: a seed), or with ``key`` (an int64
    scalar tensor) a function of the key and ``salt`` (an int, 0 if not given), as :func:`normal_like`'s.  ``minval``
    and ``maxval`` are numbers, finite with ``minval <= maxval``.  Not differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> draw = tl.function(lambda x: tl.random.uniform_like(x))
    >>> draw.get_graph(tl.TensorSpec((None, 2))).outputs[0].shape
    (None, 2)
    >>> u = draw(np.zeros((3, 2), np.float32)).numpy()
    >>> u.shape, u.dtype.name, bool(((0 <= u) & (u < 1)).all())
    ((3, 2), 'float32', True)
    """
    x = as_tensor(x)
    if x.dtype.kind != "f":
        raise TypeError(
            f"tl.random.uniform_like: x must be a float tensor (the samples take its dtype), got shape "
            f"{tuple(x.shape)} {x.dtype}"
        )
    low, high = (_checked_float("uniform_like", name, v) for name, v in (("minval", minval), ("maxval", maxval)))
    if not low <= high:
        raise ValueError(f"tl.random.uniform_like: minval must not exceed maxval, got {minval!r} and {maxval!r}")
    attrs = {"dtype": x.dtype, "a": low, "b": high}
    if key is None:
        return apply(_uniform_like, (x,), {**attrs, "seed": _as_seed(salt, "tl.random.uniform_like")})
    salt = 0 if salt is None else _as_seed(salt, "tl.random.uniform_like: salt")
    return apply(_uniform_like, (x, key), {**attrs, "seed": salt})


def _per_sample(op, who, name, value, shape, dtype, seed, backend, bound, param_dtype) -> Tensor:
    from .shape import broadcast_to

    if isinstance(shape, (tuple, list)) and None in shape:  # traced, unknown sizes: the parameter's own shape
        param = _parameter(who, name, value, tuple(shape), param_dtype, bound)
        if tuple(param.shape) != tuple(shape):
            as_ints(shape, f"tl.random.{who}: shape")  # raises: the samples' shape must be known
    else:
        shape = as_ints(shape, f"tl.random.{who}: shape")
        param = broadcast_to(_parameter(who, name, value, shape, param_dtype, bound), shape)
    attrs = {"dtype": _dt.as_dtype(dtype), "seed": _as_seed(seed, f"tl.random.{who}")}
    if backend is None:
        return apply(op, (param,), attrs)
    with _backends.backend(backend):
        return apply(op, (param,), attrs)


# ------------------------------------------------- the implicit reparameterization gradient of gamma draws
_gamma_grad = defop(
    "RandomGammaGrad",
    inputs=("alpha", "sample"),
    infer=lambda alpha, sample: spec(sample.shape, sample.dtype),
    doc="d sample / d alpha of standard gamma samples (TensorFlow's RandomGammaGrad, JAX's random_gamma_grad).",
)


@_gamma_grad.per_backend
def _gamma_grad_kernel(backend, alpha, sample):
    # On the host in float64: two loops that stop when every element has converged.
    grad = standard_gamma_sample_grad(backend.to_numpy(alpha), backend.to_numpy(sample))
    return backend.asarray(grad.astype(backend.dtype_of(sample), copy=False))


register_gradient(
    "RandomStandardGammaV2",
    lambda node, g, index: g * apply(_gamma_grad, (node.inputs[0], node.outputs[0])) if index == 0 else None,
)


def _no_second_order(node, g):
    """The second derivative of a gamma draw in alpha is not implemented: a clear error (declared not
    differentiable, it read as 0, silently, and beta draws lost part of theirs; TensorFlow and JAX raise)."""
    raise LookupError(
        "RandomGammaGrad: second-order gradients of gamma draws in alpha (and of the beta, dirichlet, chisquare "
        "and t draws built on them, in their shape parameters) are not implemented; first-order ones are"
    )


register_gradient("RandomGammaGrad", _no_second_order, _no_second_order)


def _digamma(z: np.ndarray) -> np.ndarray:
    """psi(z) for z > 0 in float64: the recurrence psi(z) = psi(z + 1) - 1 / z up to z >= 6, then the
    asymptotic series (its error there is below 1e-15 relative)."""
    z = np.array(z, np.float64)
    out = np.zeros_like(z)
    small = z < 6
    while small.any():
        out[small] -= 1 / z[small]
        z[small] += 1
        small = z < 6
    w = 1 / (z * z)  # Bernoulli numbers B_2k / 2k
    tail = w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w * (1 / 132 - w * (691 / 32760 - w / 12))))))
    return out + np.log(z) - 0.5 / z - tail


def standard_gamma_sample_grad(alpha, x) -> np.ndarray:
    """``dx / dalpha`` at constant CDF for standard gamma samples ``x`` (rate 1) of shape ``alpha``, in float64:
    ``-(dP(alpha, x) / dalpha) / p(x; alpha)`` with ``P`` the regularized lower incomplete gamma function and
    ``p`` the density (the implicit reparameterization gradient of Figurnov et al. 2018, as JAX and TensorFlow
    compute it).  The derivative of ``P`` is carried through its power series where ``x < alpha + 1`` and
    through the continued fraction of ``1 - P`` elsewhere (Numerical Recipes' ``gser`` and ``gcf``), and the
    factor ``x^alpha e^-x / Gamma(alpha)`` that ``P``'s derivative and ``p`` share cancels, so no gamma
    function is evaluated.  0 at ``x = 0`` (a sample that underflowed), NaN where an input is NaN.

    >>> from tensorlib.ops.random import standard_gamma_sample_grad
    >>> round(float(standard_gamma_sample_grad(1.0, 1.0)), 6)   # SciPy's gammaincinv by differences: 1.173563
    1.173563
    """
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    out = np.zeros(alpha.shape)
    positive = (x > 0) & np.isfinite(x) & (alpha > 0) & np.isfinite(alpha)
    near = np.abs(x - alpha) <= np.maximum(20 * np.sqrt(alpha), _ASYMPTOTIC_SPREAD * alpha)
    large = positive & (alpha >= _ASYMPTOTIC_ALPHA) & near
    if large.any():
        out[large] = _asymptotic_grad(alpha[large], x[large])
    series = positive & ~large & (x < alpha + 1)
    fraction = positive & ~large & ~series
    if series.any():
        out[series] = _series_grad(alpha[series], x[series])
    if fraction.any():
        out[fraction] = _fraction_grad(alpha[fraction], x[fraction])
    out[~positive & ~(x == 0)] = np.nan
    return out


# From this alpha, samples within 20 standard deviations of the mean, or within 1e-3 alpha of it, take the asymptotic
# gradient: the loops below need about 9 sqrt(alpha) steps there (0.2 s at alpha = 1e6, 7 s at 1e9, and minutes, then
# NaN, from 1e12), about 40 alpha / |x - alpha| beyond (the series' ratio x / alpha).  Its relative error, about
# (x - alpha)**2 / alpha**3, is below 1e-12 within 1e-3 alpha (the loops gave NaN at alpha = 1e14, 39 standard
# deviations out: the lower log tail of gamma.logcdf's gradient in a there).
_ASYMPTOTIC_ALPHA = 1e6
_ASYMPTOTIC_SPREAD = 1e-3


def _asymptotic_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dx/da`` for a large ``a`` and ``x`` near it, from Temme's uniform expansion of ``P(a, x)``:
    ``P ~ Phi(eta sqrt(a))`` with ``eta**2 / 2 = lam - 1 - log(lam)``, ``lam = x / a``, differentiated at constant
    ``P``: ``lam - eta**2 lam / (2 (lam - 1)) + 1 / (6 a)`` (the last term fitted to the loops' values); its
    relative error is about ``(x - a)**2 / a**3``, under 2e-9 where it is used.  With ``d = lam - 1``,
    ``eta**2 / (2 d) = (d - log1p(d)) / d``, summed as a series where ``d`` is small (the difference cancels)."""
    d = (x - a) / a
    small = np.abs(d) < 1e-3
    safe = np.where(small, 1.0, d)
    ratio = np.where(
        small, d * (1 / 2 - d * (1 / 3 - d * (1 / 4 - d * (1 / 5 - d / 6)))), (safe - np.log1p(safe)) / safe
    )
    return (1 + d) * (1 - ratio) + 1 / (6 * a)


_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
# Both loops need about 9 sqrt(alpha) steps where x is near alpha.
_MAX_STEPS = 1_000_000


def _series_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where ``x < a + 1``: ``P = x^a e^-x / Gamma(a + 1) S``, ``S = sum_n t_n``, ``t_n = t_(n-1) x / (a + n)``;
    with ``p = x^a e^-x / Gamma(a + 1) a / x``, ``dx/da = -(x / a) (S (log x - psi(a + 1)) + dS/da)``."""
    total, dtotal = np.ones_like(a), np.zeros_like(a)
    term, dterm = np.ones_like(a), np.zeros_like(a)
    active, n = np.arange(a.size), 0
    while active.size and n < _MAX_STEPS:
        n += 1
        ratio = x[active] / (a[active] + n)
        dterm[active] = (dterm[active] - term[active] / (a[active] + n)) * ratio
        term[active] *= ratio
        total[active] += term[active]
        dtotal[active] += dterm[active]
        done = (term[active] <= _EPS * total[active]) & (np.abs(dterm[active]) <= _EPS * np.abs(dtotal[active]))
        active = active[~done]
    total[active] = np.nan  # not converged (alpha beyond about 1e12): no silent wrong value
    return -(x / a) * (total * (np.log(x) - _digamma(a + 1)) + dtotal)


def _fraction_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Where ``x >= a + 1``: ``1 - P = x^a e^-x / Gamma(a) h`` with ``h`` the continued fraction (modified
    Lentz), differentiated in ``a`` along with it; with ``p = x^a e^-x / Gamma(a) / x``,
    ``dx/da = x (h (log x - psi(a)) + dh/da)``."""
    b = x + 1 - a  # d/da: -1 at every step
    c, dc = np.full_like(a, 1 / _TINY), np.zeros_like(a)
    d, dd = 1 / b, 1 / b**2
    h, dh = d.copy(), dd.copy()
    active, i = np.arange(a.size), 0
    while active.size and i < _MAX_STEPS:
        i += 1
        an, dan = -i * (i - a[active]), i
        b[active] += 2
        denominator = an * d[active] + b[active]
        ddenominator = dan * d[active] + an * dd[active] - 1
        denominator = np.where(np.abs(denominator) < _TINY, _TINY, denominator)
        old_c = c[active]
        c[active] = b[active] + an / old_c
        dc[active] = -1 + dan / old_c - an * (dc[active] / old_c) / old_c
        c[active] = np.where(np.abs(c[active]) < _TINY, _TINY, c[active])
        d[active] = 1 / denominator
        dd[active] = -ddenominator / denominator**2
        step = d[active] * c[active]
        dstep = dd[active] * c[active] + d[active] * dc[active]
        dh[active] = dh[active] * step + h[active] * dstep
        h[active] *= step
        done = (np.abs(step - 1) <= _EPS) & (np.abs(dstep * h[active]) <= _EPS * np.abs(dh[active]))
        active = active[~done]
    h[active] = np.nan
    return x * (h * (np.log(x) - _digamma(a)) + dh)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Normal samples; ``mean`` and ``stddev`` may be tensors broadcasting to ``shape`` (one per sample), and the
    samples are differentiable in them (``mean + stddev * z``, TensorFlow's ``tf.random.normal``).

    >>> import tensorlib as tl
    >>> mu = tl.tensor([0.0, 10.0])
    >>> tl.grad(lambda m: tl.random.normal((3, 2), m, 2.0, seed=0).sum())(mu).numpy()
    array([3., 3.], dtype=float32)

    A complex dtype gives circular complex normal samples, ``E|z|**2 = 1`` with independent real and
    imaginary parts of variance 1/2 each (as ``torch.randn`` and ``jax.random.normal`` give), then
    ``mean + stddev * z`` for a complex ``mean`` and a real ``stddev``.
    """
    if _dt.as_dtype(dtype).kind == "c":
        return _complex_normal(shape, mean, stddev, _dt.as_dtype(dtype), seed, backend)
    if _per_element(mean) or _per_element(stddev):
        return _location_scale("normal", _normal, shape, dtype, seed, backend, mean, stddev, _MEAN_STDDEV, _NORMAL)
    return _sample(
        _normal, shape, dtype, seed, backend, _number("normal", "mean", mean), _number("normal", "stddev", stddev)
    )


def _complex_normal(shape, mean, stddev, dtype, seed, backend) -> Tensor:
    """``mean + stddev * (x + iy) / sqrt(2)`` with ``x``, ``y`` one standard normal draw of shape ``(2, *shape)``."""
    from . import math as _math

    shape = as_ints(shape, "tl.random.normal: shape")
    parts = normal((2, *shape), 0.0, _math_sqrt_half, _dt.real_dtype(dtype), seed, backend)
    z = _math.add(_math.cast(parts[0], dtype), _math.multiply(_math.cast(parts[1], dtype), 1j))
    if isinstance(stddev, Tensor) and stddev.dtype.kind == "c" or isinstance(stddev, complex):
        raise TypeError(f"tl.random.normal: stddev must be real, got {stddev!r:.60}")
    if _per_element(stddev):
        z = _math.multiply(z, _parameter("normal", "stddev", stddev, shape, _dt.real_dtype(dtype), ">="))
    elif stddev != 1.0:
        z = _math.multiply(z, _checked_float("normal", "stddev", stddev, ">="))
    if isinstance(mean, Tensor) or np.ndim(mean) or mean != 0:
        z = _math.add(z, _math.cast(mean, dtype) if isinstance(mean, Tensor) else _complex_mean(mean, dtype))
    return z


_math_sqrt_half = float(np.sqrt(0.5))


def _complex_mean(mean, dtype):
    value = np.asarray(mean)
    if value.dtype.kind not in "biufc" or not np.all(np.isfinite(value)):
        raise ValueError(f"tl.random.normal: mean must be finite numbers, got {mean!r:.60}")
    return value.astype(dtype) if value.ndim else complex(value)


def uniform(shape, minval=0.0, maxval=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Samples in ``[minval, maxval)``; an integer dtype gives integers (the bounds must then be integers).
    Float samples are NumPy's numbers rounded to the dtype, where one that rounds to ``maxval`` (a float16
    draw in [0, 1) once in about 4000) is the dtype's largest number below it.

    >>> import tensorlib as tl
    >>> sorted(set(tl.random.uniform((100,), 0, 3, dtype=tl.int32, seed=0).numpy().tolist()))
    [0, 1, 2]

    Tensor bounds (float samples) give ``minval + (maxval - minval) u``, differentiable in both.
    """
    if _per_element(minval) or _per_element(maxval):
        from . import floating as _floating
        from . import math as _math

        dtype = _float_samples("uniform", dtype)
        shape = as_ints(shape, "tl.random.uniform: shape")
        low, high = (
            _parameter("uniform", name, v, shape, dtype) if _per_element(v) else _checked_float("uniform", name, v)
            for name, v in (("minval", minval), ("maxval", maxval))
        )
        if not any(isinstance(v, Tensor) and v.is_symbolic for v in (low, high)) and (
            np.asarray(_math.less(high, low).numpy()).any()
        ):
            raise ValueError(f"tl.random.uniform: minval must not exceed maxval, got {minval!r} and {maxval!r}")
        x = _math.add(_math.multiply(_sample(_uniform, shape, dtype, seed, backend), _math.subtract(high, low)), low)
        # Rounded to the dtype, a draw may reach maxval: the largest number below it instead, the gradient kept.
        top = _math.maximum(_floating.nextafter(high, low), low)
        return _math.add(x, _math.stop_gradient(_math.subtract(_math.minimum(x, top), x)))
    for name, value in (("minval", minval), ("maxval", maxval)):
        _number("uniform", name, value)
    return _sample(_uniform, shape, dtype, seed, backend, minval, maxval)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Normal samples within two standard deviations of the mean (TensorFlow's rule: redrawn); tensor ``mean``
    and ``stddev`` as :func:`normal`'s."""
    if _per_element(mean) or _per_element(stddev):
        return _location_scale(
            "truncated_normal", _truncated, shape, dtype, seed, backend, mean, stddev, _MEAN_STDDEV, _NORMAL
        )
    mean, stddev = _number("truncated_normal", "mean", mean), _number("truncated_normal", "stddev", stddev)
    return _sample(_truncated, shape, dtype, seed, backend, mean, stddev)


def bernoulli(shape, p=0.5, dtype=_dt.bool_, seed=None, backend=None) -> Tensor:
    """True with probability ``p``; a tensor ``p`` broadcasting to ``shape`` gives one probability per sample
    (the draws are not differentiable in it)."""
    if _per_element(p):
        return _per_sample(_bernoulli_tensor, "bernoulli", "p", p, shape, dtype, seed, backend, "[0, 1]", _dt.float64)
    return _sample(_bernoulli, shape, dtype, seed, backend, _number("bernoulli", "p", p))


def permutation(n: int, seed=None, backend=None) -> Tensor:
    """A random permutation of ``range(n)`` (drawn when called, also inside ``tl.function``)."""
    return _gen(_as_seed(seed, "tl.random.permutation")).permutation(n, backend)


def exponential(shape, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Exponential samples of ``scale`` (mean ``scale``), as ``numpy.random.Generator.exponential``.

    >>> import numpy as np, tensorlib as tl
    >>> bool(np.allclose(tl.random.exponential((3,), 2.0, dtype="float64", seed=0).numpy(),
    ...                  np.random.default_rng(0).exponential(2.0, 3)))
    True

    A tensor ``scale`` (one per sample) gives ``scale * e``, differentiable in it.
    """
    if _per_element(scale):
        return _location_scale(
            "exponential", _exponential, shape, dtype, seed, backend, None, scale, (None, "scale"), (None, ">="), (1.0,)
        )
    return _sample(_exponential, shape, dtype, seed, backend, _number("exponential", "scale", scale))


def gamma(shape, alpha, beta=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Gamma samples of shape ``alpha`` and rate ``beta`` (TensorFlow's ``tf.random.gamma`` parameters; NumPy's
    ``gamma(alpha, scale=1 / beta)``), mean ``alpha / beta``.

    Either parameter may be a tensor broadcasting to ``shape`` (one per sample).  The samples are then
    differentiable: in ``beta`` through ``x = g / beta``, in ``alpha`` by the implicit reparameterization
    gradient of the standard draw ``g`` (``RandomGammaGrad``: the change of ``g`` at a constant CDF, as
    ``jax.random.gamma`` and TensorFlow's).  Numbers draw NumPy's ``gamma(alpha, 1 / beta)`` for a seed.

    >>> import tensorlib as tl
    >>> a = tl.tensor(3.0)
    >>> g = tl.grad(lambda a: tl.random.gamma((100_000,), a, 2.0, dtype="float64", seed=0).mean())(a)
    >>> round(float(g), 2)   # d mean / d alpha = 1 / beta
    0.5
    """
    if not (_per_element(alpha) or _per_element(beta)):
        alpha, beta = _number("gamma", "alpha", alpha), _number("gamma", "beta", beta)
        return _sample(_gamma, shape, dtype, seed, backend, alpha, _scale_of_rate(beta, "gamma"))
    from . import math as _math

    dtype = _float_samples("gamma", dtype)
    if _per_element(alpha):
        standard = _per_sample(_gamma_tensor, "gamma", "alpha", alpha, shape, dtype, seed, backend, ">", dtype)
    else:
        standard = _sample(_gamma, shape, dtype, seed, backend, _checked_float("gamma", "alpha", alpha, ">"), 1.0)
    if _per_element(beta):
        return _math.divide(standard, _parameter("gamma", "beta", beta, tuple(standard.shape), dtype, ">"))
    return _math.multiply(standard, _scale_of_rate(_number("gamma", "beta", beta), "gamma"))


def beta(shape, a, b, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Beta samples of parameters ``a`` and ``b`` (mean ``a / (a + b)``), as NumPy's generator.

    Tensor parameters (one per sample, broadcasting to ``shape``) draw ``x = g_a / (g_a + g_b)`` from two
    standard gamma draws in float64 (JAX's construction; other numbers than NumPy's ``beta`` for a seed), and
    the samples are differentiable in both through :func:`gamma`'s gradient.  A parameter below 0.1 draws
    its gamma draw's logarithm (see :func:`_log_standard_gamma`; both draws underflowed to 0 and gave NaN).
    """
    if not (_per_element(a) or _per_element(b)):
        return _sample(_beta, shape, dtype, seed, backend, _number("beta", "a", a), _number("beta", "b", b))
    from . import math as _math

    dtype = _float_samples("beta", dtype)
    shape = as_ints(shape, "tl.random.beta: shape")
    seed = _as_seed(seed, "tl.random.beta")
    logs = []
    for name, value, part in (("a", a, 0), ("b", b, 1)):
        part_seed = _second_stream(seed) if part else seed
        if _per_element(value):
            value = _parameter("beta", name, value, shape, _dt.float64, ">")
        else:
            value = as_tensor(np.float64(_checked_float("beta", name, value, ">")))
        logs.append(_log_standard_gamma(shape, value, part_seed, backend, "beta"))
    x = _math.sigmoid(_math.subtract(logs[0], logs[1]))  # g_a / (g_a + g_b)
    return x if dtype == _dt.float64 else x.astype(dtype)


def poisson(shape, lam, dtype=_dt.int64, seed=None, backend=None) -> Tensor:
    """Poisson counts of rate ``lam``, int64 by default as NumPy's (``dtype=float32`` gives TensorFlow's);
    NumPy backend and array_api_strict only (CuPy's generator has no Poisson draws: a clear error).  A tensor
    ``lam`` broadcasting to ``shape`` gives one rate per sample (not differentiable: the counts are integers).
    A rate whose counts the dtype cannot hold is an error (:func:`poisson_limit`: about 2.1e9 for int32, 62944
    for float16, NumPy's 9.2e18 otherwise)."""
    if _per_element(lam):
        return _per_sample(_poisson_tensor, "poisson", "lam", lam, shape, dtype, seed, backend, ">=", _dt.float64)
    return _sample(_poisson, shape, dtype, seed, backend, _number("poisson", "lam", lam))


def laplace(shape, loc=0.0, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Laplace (double exponential) samples, as NumPy's generator; tensor ``loc`` and ``scale`` give
    ``loc + scale * l``, differentiable in both."""
    if _per_element(loc) or _per_element(scale):
        return _location_scale("laplace", _laplace, shape, dtype, seed, backend, loc, scale, _LOC_SCALE, _SCALE)
    return _sample(
        _laplace, shape, dtype, seed, backend, _number("laplace", "loc", loc), _number("laplace", "scale", scale)
    )


def gumbel(shape, loc=0.0, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Gumbel samples (of the maximum), as NumPy's generator; tensor ``loc`` and ``scale`` give
    ``loc + scale * g``, differentiable in both."""
    if _per_element(loc) or _per_element(scale):
        return _location_scale("gumbel", _gumbel, shape, dtype, seed, backend, loc, scale, _LOC_SCALE, _SCALE)
    return _sample(
        _gumbel, shape, dtype, seed, backend, _number("gumbel", "loc", loc), _number("gumbel", "scale", scale)
    )


# ------------------------------------------------------------------ distributions built from the draws above
def lognormal(shape, mean=0.0, sigma=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """``exp`` of :func:`normal` samples of ``mean`` and ``sigma`` (NumPy's ``lognormal``: its numbers for a seed
    in float64); tensor parameters as :func:`normal`'s, differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> bool(np.allclose(tl.random.lognormal((3,), 1.0, 0.5, dtype="float64", seed=0).numpy(),
    ...                  np.random.default_rng(0).lognormal(1.0, 0.5, 3)))
    True
    """
    from . import math as _math

    return _math.exp(normal(shape, mean, sigma, dtype=dtype, seed=seed, backend=backend))


def logistic(shape, loc=0.0, scale=1.0, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Logistic samples ``loc + scale * log(u / (1 - u))`` of uniforms ``u`` drawn in float64 (NumPy's
    ``logistic``: its numbers for a seed, save the redraw of an exact 0, one chance in 2**53; JAX's
    ``logistic``); tensor ``loc`` and ``scale`` broadcasting to ``shape``, differentiable.

    >>> import numpy as np, tensorlib as tl
    >>> bool(np.allclose(tl.random.logistic((3,), 1.0, 2.0, dtype="float64", seed=0).numpy(),
    ...                  np.random.default_rng(0).logistic(1.0, 2.0, 3)))
    True
    """
    from . import math as _math

    dtype = _float_samples("logistic", dtype)
    shape = as_ints(shape, "tl.random.logistic: shape")
    u = uniform(shape, dtype=_dt.float64, seed=seed, backend=backend)
    z = _math.log(_math.divide(u, _math.subtract(1.0, u)))
    params = []
    for name, value, bound in (("loc", loc, None), ("scale", scale, ">")):
        if _per_element(value):
            params.append(_parameter("logistic", name, value, shape, dtype, bound))
        else:
            params.append(_checked_float("logistic", name, value, bound))
    if not _per_element(loc) and not _per_element(scale):  # numbers: NumPy's arithmetic, in float64
        x = _math.add(_math.multiply(z, params[1]), params[0])
        return x if dtype == _dt.float64 else x.astype(dtype)
    z = z if dtype == _dt.float64 else z.astype(dtype)
    return _math.add(_math.multiply(z, params[1]), params[0])


def chisquare(shape, df, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Chi-square samples of ``df`` degrees of freedom: :func:`gamma` samples of shape ``df / 2`` and rate
    1/2 (NumPy's ``chisquare``: its numbers for a seed); a tensor ``df`` (one per sample) differentiable
    through the gamma draw's gradient.

    >>> import numpy as np, tensorlib as tl
    >>> bool(np.allclose(tl.random.chisquare((3,), 4.0, dtype="float64", seed=0).numpy(),
    ...                  np.random.default_rng(0).chisquare(4.0, 3)))
    True
    """
    from . import math as _math

    if _per_element(df):
        half = _math.multiply(_parameter("chisquare", "df", df, as_ints(shape, "tl.random.chisquare"), dtype, ">"), 0.5)
        return gamma(shape, half, 0.5, dtype=dtype, seed=seed, backend=backend)
    return gamma(shape, _checked_float("chisquare", "df", df, ">") / 2, 0.5, dtype=dtype, seed=seed, backend=backend)


def t(shape, df, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Student's t samples of ``df`` degrees of freedom (JAX's ``t``, NumPy's ``standard_t``):
    ``z * sqrt(df / 2 / g)`` of a standard normal ``z`` and a gamma ``g`` of shape ``df / 2``, drawn in float64
    (other numbers than NumPy's for a seed, which interleaves the two draws); a tensor ``df`` (one per sample)
    differentiable through the gamma draw's gradient.

    >>> import tensorlib as tl
    >>> x = tl.random.t((100_000,), 5.0, dtype="float64", seed=0).numpy()
    >>> round(float(x.var()), 1)   # df / (df - 2)
    1.7
    """
    from . import math as _math

    shape = as_ints(shape, "tl.random.t: shape")
    dtype = _float_samples("t", dtype)
    seed = _as_seed(seed, "tl.random.t")
    if _per_element(df):
        half = _math.multiply(_parameter("t", "df", df, shape, _dt.float64, ">"), 0.5)
    else:
        half = _checked_float("t", "df", df, ">") / 2
    z = normal(shape, dtype=_dt.float64, seed=seed, backend=backend)
    g = gamma(shape, half, dtype=_dt.float64, seed=_second_stream(seed), backend=backend)
    x = _math.multiply(z, _math.sqrt(_math.divide(half, g)))
    return x if dtype == _dt.float64 else x.astype(dtype)


standard_t = t


def dirichlet(shape, alpha, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Dirichlet samples of concentration ``alpha`` (its last axis, ``k`` long, is the simplex's): shape
    ``shape + (k,)``, each row ``g / sum(g)`` of :func:`gamma` draws of shape ``alpha`` in float64 (NumPy's
    ``dirichlet`` where every ``alpha >= 0.1``: its numbers for a seed, to rounding; JAX's construction).
    ``alpha`` (numbers or a tensor broadcasting to ``shape + (k,)``) must be positive; the samples are
    differentiable in it.  Below 0.1 the gamma draws are drawn as their logarithms (see
    :func:`_log_standard_gamma`), so a row whose draws all underflow (all of ``alpha`` below about 0.01) is
    no longer 0 / 0, NaN.

    >>> import tensorlib as tl
    >>> x = tl.random.dirichlet((2,), [1.0, 2.0, 3.0], seed=0)
    >>> x.shape, [round(s, 5) for s in x.numpy().sum(axis=1).tolist()]
    ((2, 3), [1.0, 1.0])
    """
    from . import math as _math
    from . import reduce as _reduce

    dtype = _float_samples("dirichlet", dtype)
    alpha = as_tensor(alpha) if not isinstance(alpha, Tensor) else alpha
    if alpha.ndim == 0 or alpha.shape[-1] is None:
        raise ValueError(f"tl.random.dirichlet: alpha needs a last axis of known length, got shape {alpha.shape}")
    full = (*as_ints(shape, "tl.random.dirichlet: shape"), alpha.shape[-1])
    logs = _log_standard_gamma(full, _parameter("dirichlet", "alpha", alpha, full, _dt.float64, ">"), seed, backend)
    e = _math.exp(_math.subtract(logs, _math.stop_gradient(_reduce.max(logs, axis=-1, keepdims=True))))
    x = _math.divide(e, _reduce.sum(e, axis=-1, keepdims=True))  # g / sum(g)
    return x if dtype == _dt.float64 else x.astype(dtype)


# Below this shape parameter, beta and dirichlet draw the gamma draws' logarithms (NumPy's dirichlet changes its
# method there too).
_LOG_SPACE_BELOW = 0.1


def _log_standard_gamma(shape, alpha, seed, backend, who="dirichlet") -> Tensor:
    """``log`` of standard gamma draws of shape ``alpha`` (a float64 tensor broadcasting to ``shape``),
    differentiable in it: NumPy's gamma draws where ``alpha >= 0.1``; below, ``log G(alpha + 1) + log(U) / alpha``
    of a gamma draw ``G`` and a uniform ``U`` in (0, 1] from two more streams (``G(alpha + 1) U^(1 / alpha)`` is a
    gamma draw of shape ``alpha``), which does not underflow where the draw does: from ``alpha`` about 0.01 a
    draw of 0 is likely, and rows of beta or dirichlet samples made only of them were 0 / 0, NaN.  The gradient
    in ``alpha`` there is that of this construction (the draw of ``alpha + 1``'s implicit gradient and
    ``-log(U) / alpha**2``), another unbiased reparameterization."""
    from . import math as _math
    from .shape import broadcast_to

    alpha = broadcast_to(alpha, shape)
    g = gamma(shape, alpha, dtype=_dt.float64, seed=seed, backend=backend)
    small = _math.less(alpha, _LOG_SPACE_BELOW)
    if not alpha.is_symbolic and not small.numpy().any():
        return _math.log(g)
    boosted_alpha = _math.where(small, alpha, 1.0)  # (1 where unused: no division by a large alpha's stand-in)
    boosted = gamma(shape, _math.add(boosted_alpha, 1.0), dtype=_dt.float64, seed=_second_stream(seed), backend=backend)
    u = uniform(shape, dtype=_dt.float64, seed=_second_stream(_second_stream(seed)), backend=backend)
    log_small = _math.add(_math.log(boosted), _math.divide(_math.log1p(_math.negative(u)), boosted_alpha))
    return _math.where(small, log_small, _math.log(_math.where(small, 1.0, g)))


def multivariate_normal(shape, mean, cov, dtype=_dt.float32, seed=None, backend=None) -> Tensor:
    """Multivariate normal samples ``mean + z @ L.T`` of standard normals ``z`` and the Cholesky factor ``L`` of
    ``cov`` (JAX's ``multivariate_normal`` with its default ``method="cholesky"``; NumPy's default factors by
    SVD, so its numbers differ): shape ``shape + (k,)`` for ``mean`` ``(..., k)`` and ``cov`` ``(..., k, k)``,
    their batch axes broadcasting to ``shape``.  Differentiable in ``mean`` and ``cov`` (through
    ``tl.linalg.cholesky``, which reads ``cov``'s lower triangle); a ``cov`` that is not positive definite
    raises as Cholesky does.

    >>> import tensorlib as tl
    >>> x = tl.random.multivariate_normal((50_000,), [0.0, 1.0], [[1.0, 0.8], [0.8, 1.0]], seed=0).numpy()
    >>> [[round(float(c), 1) for c in row] for row in np.cov(x.T)]
    [[1.0, 0.8], [0.8, 1.0]]
    """
    from . import math as _math
    from .linalg import matmul
    from .linalg_ops import cholesky
    from .shape import expand_dims, squeeze

    dtype = _float_samples("multivariate_normal", dtype)
    mean, cov = as_tensor(mean), as_tensor(cov)
    if (
        mean.ndim == 0
        or cov.ndim < 2
        or len({mean.shape[-1], cov.shape[-1], cov.shape[-2]}) != 1
        or None in (mean.shape[-1],)
    ):
        raise ValueError(
            f"tl.random.multivariate_normal: mean (..., k) and cov (..., k, k) of one known k, got mean "
            f"{mean.dtype}{list(mean.shape)} and cov {cov.dtype}{list(cov.shape)}"
        )
    k = mean.shape[-1]
    full = (*as_ints(shape, "tl.random.multivariate_normal: shape"), k)
    mean = _parameter("multivariate_normal", "mean", mean, full, dtype)
    if not cov.is_symbolic and not np.isfinite(cov.numpy()).all():  # (a NaN covariance drew NaN samples)
        raise ValueError(f"tl.random.multivariate_normal: cov must be finite numbers, got {cov.numpy()!r}")
    factor = cholesky(cov if cov.dtype == dtype else cov.astype(dtype))
    z = normal(full, dtype=dtype, seed=seed, backend=backend)
    return _math.add(squeeze(matmul(factor, expand_dims(z, -1)), -1), mean)


def _second_stream(seed):
    """A second seed of ``seed`` for a function that makes two draws: its first spawned child (None: the
    global generator moves on between the draws)."""
    if seed is None:
        return None
    return int(np.random.SeedSequence(seed).spawn(1)[0].generate_state(1)[0])


def randint(shape, minval, maxval, dtype=_dt.int64, seed=None, backend=None) -> Tensor:
    """Integers in ``[minval, maxval)`` (JAX's ``randint``; ``uniform`` with an integer dtype).

    >>> import tensorlib as tl
    >>> sorted(set(tl.random.randint((50,), -1, 2, seed=0).numpy().tolist()))
    [-1, 0, 1]
    """
    if _dt.as_dtype(dtype).kind not in "iu":
        raise TypeError(f"tl.random.randint: dtype must be an integer dtype, got {_dt.as_dtype(dtype)}")
    if _per_element(minval) or _per_element(maxval):  # (uniform's error named uniform and a float dtype)
        raise TypeError(
            f"tl.random.randint: minval and maxval must be integers, not tensors, got {minval!r}, {maxval!r}"
        )
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
    if classes == 0:  # argmax over no classes raised its own 'attempt to get argmax of an empty sequence'
        raise ValueError(f"tl.random.categorical: logits need at least one class, got shape {tuple(logits.shape)}")
    # In float64: in the logits' dtype the sum rounded the noise to the logits' spacing, and argmax gave the
    # ties to the first class (float16 logits [1000, 1000.5], steps of 0.5: class 1 drawn 56% of the time, not 62%).
    noise = gumbel((batch, count, classes), dtype=_dt.float64, seed=seed, backend=logits.backend.name)
    wide = logits if logits.dtype == _dt.float64 else logits.astype(_dt.float64)
    picked = _reduce.argmax(expand_dims(wide, 1) + noise, axis=-1)
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
    if any(d < 0 for d in shape) or (n == 0 and count):  # NumPy: 'a cannot be empty unless no samples are taken'
        raise ValueError(f"tl.random.choice: cannot take shape {shape} from a of shape {tuple(a.shape)}")
    if count == 0:
        return reshape(a[:0], shape + tuple(a.shape[1:]))
    if p is None:
        logits = make(np.zeros(n), a.backend)
        nonzero = n
    elif isinstance(p, Tensor) and p.is_symbolic:  # traced: no values to check (reading them raised)
        if tuple(p.shape) != (n,) or p.dtype.kind != "f":
            raise ValueError(f"tl.random.choice: p must be {n} probabilities, got {p.dtype}{list(p.shape)}")
        logits, nonzero = _math.log(p.astype(_dt.float64)), n
    else:
        probs = np.asarray(p.numpy() if isinstance(p, Tensor) else p, np.float64)
        if probs.shape != (n,) or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"tl.random.choice: p must be {n} non-negative probabilities summing to 1, got {p!r}")
        with np.errstate(divide="ignore"):
            logits = make(np.log(probs), a.backend)
        nonzero = int(np.count_nonzero(probs))
    if not replace and count > nonzero:
        raise ValueError(f"tl.random.choice: cannot take {count} of {n} without replacement (nonzero p: fewer)")
    if replace:
        picked = reshape(categorical(reshape(logits, (1, n)), count, seed=seed), (count,))
    else:
        noise = gumbel((n,), dtype=_dt.float64, seed=seed, backend=a.backend.name)
        picked = argsort(_math.negative(logits + noise))[:count]
    return reshape(take(a, picked, axis=0), shape + tuple(a.shape[1:]))
