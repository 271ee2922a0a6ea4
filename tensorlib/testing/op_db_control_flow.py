"""The control-flow catalogue: ``tl.cond``, ``tl.scan`` and ``tl.while_loop``, eager and as graph nodes.

Each function has two entries: one that calls it eagerly (Python control
flow, recorded op by op) and a ``*_node`` one that calls it through a
``tl.function``, so that the ``Cond``/``Scan``/``While`` node itself runs,
and its gradient rule is what ``check_grads`` checks (to second order).
The predicate is an argument that is not differentiated, so finite
differences never cross a branch switch.

>>> from tensorlib.testing.op_db_control_flow import OPINFOS
>>> sorted({t for info in OPINFOS for t in info.op_types})
['Cond', 'Scan', 'While', 'WhileVjp']
>>> [info.name for info in OPINFOS][:2]
['cond', 'cond_node']
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import strategies as st

import tensorlib as tl

from .. import dtypes as _dt
from ..ops import random as _random
from ..graph.tracing import RetracingWarning
from .opinfo import ErrorInput, OpInfo, SampleInput

FLOATS = (_dt.float32, _dt.float64)
SHAPES = st.sampled_from([(), (3,), (2, 2)])
SEEDS = st.integers(0, 2**16)


def _uniform(seed, shape, dtype, low=-1.5, high=1.5):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


# ---------------------------------------------------------------- cond
def _cond(flag, x, y):
    """Nested operands, a branch that closes over an operand-derived value, and a nested cond."""
    scale = tl.cos(y)

    def yes(ops):
        return {"out": ops["a"] * tl.sin(ops["b"]) * scale, "aux": tl.exp(ops["a"])}

    def no(ops):
        inner = tl.cond(tl.sum(ops["b"]) > 100.0, lambda v: v * 0.0, lambda v: tl.tanh(v) * v, ops["a"])
        return {"out": inner - ops["b"] * ops["b"], "aux": ops["a"] * 2.0}

    out = tl.cond(flag, yes, no, {"a": x, "b": y})
    return out["out"], out["aux"]


def _cond_ref(flag, x, y):
    if flag:
        return x * np.sin(y) * np.cos(y), np.exp(x)
    return np.tanh(x) * x - y * y, x * 2.0


def traced_node(fn):
    """``fn`` through one ``tl.function`` (the samples' many shapes and dtypes retrace it: no warnings), so that
    the catalogue runs its graph nodes (arrays given to it are placeholders, their values unknown when traced)."""
    traced = tl.function(fn)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RetracingWarning)
            return traced(*args)

    call.__name__ = call.__qualname__ = f"{fn.__name__}_node"
    return call


_cond_node = traced_node(_cond)


@st.composite
def _cond_draw(draw, dtype):
    seed, shape = draw(SEEDS), draw(SHAPES)
    flag = np.array(draw(st.booleans()))
    return SampleInput((flag, _uniform(seed, shape, dtype), _uniform(seed + 1, shape, dtype)), grad_argnums=(1, 2))


# ---------------------------------------------------------------- scan
def _scan(init, xs, w):
    def step(carry, x):
        c, n = carry
        return (c * tl.cos(x) + x * w, n + 1), tl.sin(c) * x

    (c, n), ys = tl.scan(step, (init, tl.tensor(0)), xs)
    return c * tl.cast(n, c.dtype), ys  # the integer carry, through a float output


def _scan_ref(init, xs, w):
    c, ys = init, []
    for x in xs:
        ys.append(np.sin(c) * x)
        c = c * np.cos(x) + x * w
    return c * len(xs), np.stack(ys)


_scan_node = traced_node(_scan)


@st.composite
def _scan_draw(draw, dtype):
    seed, shape, length = draw(SEEDS), draw(SHAPES), draw(st.integers(1, 3))
    return SampleInput(
        (_uniform(seed, shape, dtype), _uniform(seed + 1, (length,) + shape, dtype), _uniform(seed + 2, shape, dtype)),
        grad_argnums=(0, 1, 2),
    )


def _reverse_scan(xs):
    return tl.scan(lambda c, x: (c * 0.5 + x, c), tl.zeros_like(xs[0]), xs, reverse=True)


def _reverse_scan_ref(xs):
    c, ys = np.zeros_like(xs[0]), [None] * len(xs)
    for t in reversed(range(len(xs))):
        ys[t] = c
        c = c * 0.5 + xs[t]
    return c, np.stack(ys)


@st.composite
def _reverse_draw(draw, dtype):
    return SampleInput((_uniform(draw(SEEDS), (draw(st.integers(1, 3)), 2), dtype),))


def _rotate_scan(xs):
    """A complex carry from a weakly typed Python init (it takes the float type of ``xs``), rotated by each
    x: gradients flow through the complex values inside the node."""
    c, ys = tl.scan(lambda c, x: (c * tl.exp(x * 1j) + x, tl.real(c) * x), 1.0 + 0j, xs)
    return tl.real(c) + tl.imag(c) * 2.0, ys


def _rotate_scan_ref(xs):
    c, ys = 1.0 + 0j, []
    for x in xs:
        ys.append(np.real(c) * x)
        c = c * np.exp(x * 1j) + x
    return (np.real(c) + np.imag(c) * 2.0).astype(xs.dtype), np.stack(ys).astype(xs.dtype)


@st.composite
def _rotate_draw(draw, dtype):
    return SampleInput((_uniform(draw(SEEDS), (draw(st.integers(1, 3)),), dtype),))


# ---------------------------------------------------------------- random draws in a body or branch
def _reseeded(fn):
    """``fn`` with the global generator reset first (and restored after): its draws are the same at every call,
    as ``check_grads`` differentiates against differences of calls."""

    def call(*args):
        saved = _random._global[0]
        tl.random.seed(0)
        try:
            return fn(*args)
        finally:
            _random._global[0] = saved

    call.__name__ = call.__qualname__ = fn.__name__
    return call


def _factor(like):
    """A fresh draw per call: a uniform in [0.5, 1.5) times a dropout mask plus one (1 or 3)."""
    return tl.random.uniform(like.shape, 0.5, 1.5, dtype=like.dtype) * (tl.nn.dropout(tl.ones_like(like), 0.5) + 1.0)


def _scan_draws(init, xs):
    """Scales the carry and each x by fresh draws and divides them out again (their product for the carry): the
    values are init and xs, and the gradients are ones only if they see the numbers the run drew."""

    def step(carry, x):
        c, p = carry
        f = _factor(x)
        return (c * f, p * f), x * f / tl.stop_gradient(f)

    (c, p), ys = tl.scan(step, (init, tl.ones_like(init)), xs)
    return c / tl.stop_gradient(p), ys


def _cond_draws(flag, x):
    """As ``_scan_draws`` for a branch: it returns ``x`` scaled by fresh draws and the draws, divided out after.
    In a scan's body, so that the gradient replays the Cond node (and its branch) apart from the run."""
    branch = lambda v: (v * (f := _factor(v)), f)  # noqa: E731
    _, (y, f) = tl.scan(
        lambda c, _: (c, tl.cond(flag, branch, lambda v: (v * 2.0, tl.ones_like(v)), c)), x, None, length=1
    )
    return y[0] / tl.stop_gradient(f[0])


@st.composite
def _cond_draws_draw(draw, dtype):
    flag = np.array(draw(st.booleans()))
    return SampleInput((flag, _uniform(draw(SEEDS), draw(SHAPES), dtype)), grad_argnums=(1,))


@st.composite
def _scan_draws_draw(draw, dtype):
    seed, shape, length = draw(SEEDS), draw(SHAPES), draw(st.integers(1, 3))
    return SampleInput((_uniform(seed, shape, dtype), _uniform(seed + 1, (length,) + shape, dtype)))


# ---------------------------------------------------------------- while_loop
def _while(limit, x):
    """Doubles ``x`` and counts while the count is below ``limit``: forward only (no maximum_iterations)."""
    return tl.while_loop(lambda s: s[0] < limit, lambda s: (s[0] + 1, s[1] * 2.0 + 1.0), (tl.tensor(0), x))


def _while_ref(limit, x):
    count = 0
    while count < limit:
        count, x = count + 1, x * 2.0 + 1.0
    return np.array(count), x


def _bounded_while(limit, x):
    """As ``_while`` with ``maximum_iterations=3``: differentiable in reverse mode (float output only)."""
    count, y = tl.while_loop(
        lambda s: s[0] < limit, lambda s: (s[0] + 1, tl.sin(s[1]) * 2.0), (tl.tensor(0), x), maximum_iterations=3
    )
    return y * tl.cast(count, y.dtype)


def _bounded_while_ref(limit, x):
    count = 0
    while count < min(limit, 3):
        count, x = count + 1, np.sin(x) * 2.0
    return x * count


def _unbounded_while(limit, x):
    """As ``_bounded_while`` without a bound: its gradient (a ``WhileVjp`` node, traced) runs the loop again."""
    count, y = tl.while_loop(lambda s: s[0] < limit, lambda s: (s[0] + 1, tl.sin(s[1]) * 2.0), (tl.tensor(0), x))
    return y * tl.cast(count, y.dtype)


def _unbounded_while_ref(limit, x):
    count = 0
    while count < limit:
        count, x = count + 1, np.sin(x) * 2.0
    return x * count


_while_node = traced_node(_while)
_bounded_while_node = traced_node(_bounded_while)
_unbounded_while_node = traced_node(_unbounded_while)


@st.composite
def _while_draw(draw, dtype):
    return SampleInput(
        (np.array(draw(st.integers(0, 5))), _uniform(draw(SEEDS), draw(SHAPES), dtype)), grad_argnums=(1,)
    )


_CONTROL = dict(dtypes=FLOATS, atol=1e-6, rtol=1e-5, grad_atol=1e-5, grad_rtol=1e-4)
_COND_ERRORS = (
    ErrorInput(
        (np.ones(2), np.ones(2), np.ones(2)),
        {},
        ValueError,
        r"tl.cond: the predicate must be a scalar, got shape \(2,\)",
    ),
)
_SCAN_ERRORS = (
    ErrorInput(
        (np.zeros(()), np.ones(()), np.ones(())),
        {},
        ValueError,
        r"tl.scan: every leaf of xs needs the same leading size, got \[float64\[\]\]",
    ),
    ErrorInput(
        (np.zeros(()), np.ones((2, 3)), np.ones(3)),
        {},
        TypeError,
        r"tl.scan: f must return a carry of the same structure, shapes and dtypes as init: init "
        r"is \[float64\[\], int64\[\]\], f returns \[float64\[3\], int64\[\]\]",
    ),
)
_WHILE_ERRORS = (
    ErrorInput(
        (np.ones(2), np.ones(2)),
        {},
        ValueError,
        r"tl.while_loop cond_fn: the predicate must be a scalar, got shape \(2,\)",
    ),
)

OPINFOS = [
    OpInfo("cond", _cond, _cond_ref, _cond_draw, error_inputs=_COND_ERRORS, **_CONTROL),
    OpInfo("cond_node", _cond_node, _cond_ref, _cond_draw, op_types=("Cond",), error_inputs=_COND_ERRORS, **_CONTROL),
    OpInfo("scan", _scan, _scan_ref, _scan_draw, error_inputs=_SCAN_ERRORS, **_CONTROL),
    OpInfo("scan_node", _scan_node, _scan_ref, _scan_draw, op_types=("Scan",), error_inputs=_SCAN_ERRORS, **_CONTROL),
    OpInfo(
        "scan_reverse_node",
        traced_node(_reverse_scan),
        _reverse_scan_ref,
        _reverse_draw,
        op_types=("Scan",),
        **_CONTROL,
    ),
    OpInfo("scan_complex", _rotate_scan, _rotate_scan_ref, _rotate_draw, **_CONTROL),
    OpInfo(
        "scan_complex_node", traced_node(_rotate_scan), _rotate_scan_ref, _rotate_draw, op_types=("Scan",), **_CONTROL
    ),
    # The gradient replays the body or branch, which must draw the numbers the run drew.
    OpInfo(
        "scan_draws_node",
        _reseeded(traced_node(_scan_draws)),
        lambda init, xs: (init, xs),
        _scan_draws_draw,
        op_types=("Scan",),
        **_CONTROL,
    ),
    OpInfo(
        "cond_draws_node",
        _reseeded(traced_node(_cond_draws)),
        lambda flag, x: x if flag else x * 2.0,
        _cond_draws_draw,
        op_types=("Cond", "Scan"),
        **_CONTROL,
    ),
    OpInfo(
        "while_loop", _while, _while_ref, _while_draw, differentiable=False, dtypes=FLOATS, error_inputs=_WHILE_ERRORS
    ),
    OpInfo(
        "while_loop_node",
        _while_node,
        _while_ref,
        _while_draw,
        op_types=("While",),
        differentiable=False,
        dtypes=FLOATS,
        error_inputs=_WHILE_ERRORS,
    ),
    OpInfo("while_loop_bounded", _bounded_while, _bounded_while_ref, _while_draw, **_CONTROL),
    OpInfo(
        "while_loop_bounded_node",
        _bounded_while_node,
        _bounded_while_ref,
        _while_draw,
        op_types=("While",),  # a While node with the bound; its gradient runs the loop again
        **_CONTROL,
    ),
    OpInfo(
        "while_loop_unbounded_node",
        _unbounded_while_node,
        _unbounded_while_ref,
        _while_draw,
        op_types=("While", "WhileVjp"),  # the gradient: a WhileVjp node, its transpose forward mode
        second_order=False,  # a second derivative of an unbounded loop needs maximum_iterations
        **_CONTROL,
    ),
]
