"""``tl.optimizers``: SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta and Lion,
learning-rate schedules, clipping.

``opt.apply(grads, variables)`` takes the same nested structure twice, as
``tape.gradient(loss, model.trainable_variables)`` returns it.  The update
formulas are PyTorch's (``torch.optim``), so the numbers match it step for
step (Lion, which PyTorch lacks, is Keras').  An optimizer's state (its step counter and per-variable slots such as
Adam's moments) lives in Variables, so a step traced by ``tl.function``
updates it like an eager step does; a schedule is written in tensorlib ops on
the step counter for the same reason.

An optimizer also takes ``torch.optim``'s form: the parameters first (a Module,
Variables, or a list of parameter-group dicts with settings of their own) and
torch's argument names (``lr``, ``betas``, ``eps``, RMSprop's ``alpha``);
``opt.param_groups`` and ``opt.add_param_group`` are torch's.

>>> import tensorlib as tl
>>> w = tl.Variable([1.0, -2.0])
>>> opt = tl.optimizers.SGD(learning_rate=0.1)
>>> with tl.GradientTape() as tape:
...     loss = tl.sum(w * w)
>>> opt.apply(tape.gradient(loss, [w]), [w])
>>> w.numpy().tolist()
[0.8, -1.6]
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import math
import warnings

import numpy as np

from . import dtypes as _dt
from . import tree
from .dispatch import check_assignable, current_state, state_read, tapes_paused
from .ops import creation as _creation
from .ops import elementwise as _elementwise
from .ops import math as _math_ops
from .ops import reduce as _reduce_ops
from .module import Module
from ._param_groups import ParamGroup, canonical, group_dicts, settable, taking_params
from .tensor import Tensor, Variable

__all__ = [
    "Optimizer",
    "ParamGroup",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adamax",
    "NAdam",
    "RAdam",
    "Adadelta",
    "Lion",
    "StepDecay",
    "MultiStepDecay",
    "LinearSchedule",
    "LambdaSchedule",
    "SequentialSchedule",
    "ChainedSchedule",
    "CosineDecay",
    "Warmup",
    "ExponentialDecay",
    "PiecewiseConstant",
    "PolynomialDecay",
    "InverseTimeDecay",
    "CosineDecayRestarts",
    "OneCycle",
    "ReduceLROnPlateau",
    "clip_by_global_norm",
    "clip_by_norm",
    "global_norm",
]


# ------------------------------------------------------------------ nested structures
def _is_none(value) -> bool:
    return value is None


def _path_str(path) -> str:
    return "".join(f"[{k!r}]" for k in path) or "<root>"


def _pairs(grads, variables, who: str) -> list:
    """``[(path, grad, variable), ...]`` from two structures that must match; grads may be None (skipped).

    A Module given as ``variables`` stands for its ``trainable_variables`` (the structure its gradients have).
    """
    if isinstance(variables, Module):
        variables = variables.trainable_variables
    if isinstance(grads, Module):  # build(model): the variables are their own "gradients"
        grads = grads.trainable_variables
    # None is a leaf here: a None gradient (an unconnected variable) still pairs with its variable.
    grad_paths, grad_def = tree.flatten_with_path(grads, is_leaf=_is_none)
    var_paths, var_def = tree.flatten_with_path(variables, is_leaf=_is_none)
    # Paths, not TreeDefs, must agree: a tuple of gradients for a list of variables is fine, and
    # dicts pair by key whatever their order.
    grad_at = dict(grad_paths)
    if grad_at.keys() != {p for p, _ in var_paths}:
        missing = [_path_str(p) for p, _ in var_paths if p not in grad_at]
        extra = [_path_str(p) for p, _ in grad_paths if p not in dict(var_paths)]
        raise ValueError(
            f"{who}: grads and variables must have the same structure; "
            f"missing gradients for {missing or 'none'}, gradients without a variable at "
            f"{extra or 'none'} ({len(grad_paths)} gradients, {len(var_paths)} variables; grads {grad_def!r}, "
            f"variables {var_def!r})"
        )
    pairs = []
    seen = {}  # a Variable shared by two paths (a layer used twice) is updated once, as torch.optim does
    for path, v in var_paths:
        g = grad_at[path]
        if g is None and v is None:  # an empty slot in both: None is an empty subtree, as in tl.tree
            continue
        if not isinstance(v, Variable):
            raise TypeError(f"{who}: {_path_str(path)} is a {type(v).__name__}, not a tl.Variable")
        if g is None:
            continue
        if not isinstance(g, Tensor):  # a NumPy array or a Python number for a 0-d variable
            g = _creation.tensor(g)
        if g.dtype.kind == "b":  # a mask passed by mistake: it stepped by lr * 1.0 where True, silently
            raise TypeError(
                f"{who}: gradient at {_path_str(path)} is bool, variable {v.name!r} is {v.dtype}; a gradient is "
                "a number (cast the tensor if it is meant as one)"
            )
        if g.dtype.kind == "c" and v.dtype.kind != "c":
            raise TypeError(
                f"{who}: gradient at {_path_str(path)} is {g.dtype}, variable {v.name!r} is {v.dtype}; "
                "a real variable takes a real gradient"
            )
        if tuple(g.shape) != tuple(v.shape):
            raise ValueError(
                f"{who}: gradient at {_path_str(path)} has shape {tuple(g.shape)}, "
                f"variable {v.name!r} has shape {v.shape}"
            )
        if v._id in seen:
            first_path, first = seen[v._id]
            if first is not g and _differ(first, g):
                raise ValueError(
                    f"{who}: variable {v.name!r} appears at {_path_str(first_path)} and {_path_str(path)} with "
                    "different gradients (traced, two tensors that are not one count as different); pass it "
                    "once (with the sum of its gradients if both count)"
                )
            continue
        seen[v._id] = (path, g)
        pairs.append(("/".join(str(k) for k in path) or v.name, g, v))
    return pairs


def _differ(a: Tensor, b: Tensor) -> bool:
    """Two gradients of one variable (not one tensor) that differ, or that a traced step cannot compare:
    taking symbolic ones as equal dropped the second gradient silently, where an eager step refused."""
    if a._value is None or b._value is None:
        return True
    return not np.array_equal(a.numpy(), b.numpy(), equal_nan=True)


# ------------------------------------------------------------------ clipping
def _as_tensors(tensors):
    """The structure with each number or array leaf as a Tensor (``global_norm([3.0, 4.0])`` raised
    AttributeError; TensorFlow converts each entry)."""
    return tree.map(lambda t: t if isinstance(t, Tensor) else _creation.tensor(t), tensors)


def global_norm(tensors) -> Tensor:
    """``sqrt(sum of squares)`` over every tensor of a nested structure (None entries ignored; none at all: 0).

    The squares are summed scaled by the largest magnitude, so a norm that the dtype holds is found even where
    the squares are not (float32 entries of 3e20 gave inf, 1e-30 gave 0).

    >>> import tensorlib as tl
    >>> float(tl.optimizers.global_norm([tl.tensor([3.0]), {"b": tl.tensor([4.0])}, None]))
    5.0
    >>> print(f"{float(tl.optimizers.global_norm([tl.tensor([3e20]), tl.tensor([4e20])])):.6g}")
    5e+20
    """
    leaves = tree.leaves(_as_tensors(tensors))
    if not leaves:  # all None (no variable got a gradient): 0, as in TensorFlow (it was a ValueError)
        return _creation.tensor(np.float32(0.0))
    return _scaled_norm([_magnitude(t) for t in leaves])


def _magnitude(t: Tensor) -> Tensor:
    """``|t|`` (real: |z| of a complex z, as torch.linalg.vector_norm; z^2 made the norm complex), float16 in float32
    (65000 ** 2 is inf in float16)."""
    if t.dtype.kind == "c":
        t = _math_ops.abs(t)
    return _math_ops.cast(t, _dt.float32) if t.dtype == _dt.float16 else t


def _scaled_norm(magnitudes: list, axes=None, keepdims: bool = False) -> Tensor:
    """The L2 norm of the tensors ``magnitudes`` together (of one, over ``axes``), as
    ``peak * sqrt(sum((m / peak) ** 2))`` with ``peak`` the largest magnitude, held constant for the gradient (the
    norm is homogeneous in it): the plain sum of squares overflowed past the square root of the dtype's largest
    value (NaN after clipping) and underflowed to 0 below that of its smallest.  An all-zero norm has the zero
    gradient (the square root's argument is kept away from 0)."""
    peaks = [_reduce_ops.max(_math_ops.abs(m), axis=axes, keepdims=keepdims, initial=0.0) for m in magnitudes]
    peak = _math_ops.stop_gradient(functools.reduce(_math_ops.maximum, peaks))
    divisor = _math_ops.where((peak > 0) & (peak < math.inf), peak, 1.0)
    squares = None
    for m in magnitudes:
        s = _reduce_ops.sum(_math_ops.square(m / divisor), axis=axes, keepdims=keepdims)
        squares = s if squares is None else squares + s
    positive = squares > 0
    return _math_ops.where(positive, _math_ops.sqrt(_math_ops.where(positive, squares, 1.0)), squares) * divisor


def clip_by_global_norm(tensors, clip_norm: float):
    """Scale every tensor by ``clip_norm / max(global_norm, clip_norm)``: returns ``(clipped, global_norm)``.

    The structure of ``tensors`` is kept (None entries stay None), as in TensorFlow, and as there an
    infinite or NaN global norm (an inf or NaN entry, or squares past the dtype's range) makes every
    entry NaN, so the error shows; ``clip_norm=float("inf")`` scales nothing and only measures the
    norm, as in PyTorch.  The norm of float16 tensors is computed and returned in float32.

    >>> import tensorlib as tl
    >>> clipped, norm = tl.optimizers.clip_by_global_norm([tl.tensor([3.0]), tl.tensor([4.0])], 1.0)
    >>> float(norm), [round(float(c[0]), 3) for c in clipped]
    (5.0, [0.6, 0.8])
    """
    clip_norm = _positive(clip_norm, "clip_by_global_norm", "clip_norm")
    tensors = _as_tensors(tensors)
    for path, t in tree.flatten_with_path(tensors)[0]:
        if getattr(t, "dtype", np.dtype(float)).kind not in "fc":  # the scale would be cast to 0 or 1
            raise TypeError(
                f"clip_by_global_norm: entry {_path_str(path)} has dtype {t.dtype}; only float or complex "
                "tensors are scaled"
            )
    norm = global_norm(tensors)
    if _clips_nothing(clip_norm, norm.dtype):
        return tree.map(lambda t: t, tensors), norm
    # An infinite or NaN norm makes every entry NaN, as in TensorFlow, to signal the error: the finite
    # entries were scaled by clip_norm / inf = 0, and a step with them silently did nothing.  TensorFlow's
    # way, ``+ (norm - norm)`` (0 for a finite norm): a NaN constant picked away by a where made
    # enable_check_numerics stop every clipped step ("Cast produced NaN") though nothing was wrong.
    scale = clip_norm / _math_ops.maximum(norm, clip_norm) + (norm - norm)
    return tree.map(lambda t: _scaled(t, scale), tensors), norm


def _positive(value, who: str, what: str) -> float:
    """A clipping norm: a real number > 0 (a string or an array failed in a bare comparison)."""
    number = _real(value, who, what)
    if not number > 0:
        raise ValueError(f"{who}: {what} must be positive, got {number}")
    return number


def _clips_nothing(clip_norm, norm_dtype) -> bool:
    """An infinite ``clip_norm``, or one past the largest value of the norm's dtype, scales nothing (as in
    PyTorch): in that dtype it is inf (1e300 for a float32 norm), and ``t * inf / inf`` made every value NaN."""
    return clip_norm == math.inf or clip_norm > float(np.finfo(norm_dtype.name).max)


def _scaled(t: Tensor, scale: Tensor) -> Tensor:
    """``t * scale`` in ``t``'s dtype; float16 multiplies in float32 (a scale under 6e-5 is subnormal there)."""
    if t.dtype == _dt.float16:
        return _math_ops.cast(_math_ops.cast(t, _dt.float32) * _math_ops.cast(scale, _dt.float32), t.dtype)
    return t * _math_ops.cast(scale, t.dtype)


def clip_by_norm(t, clip_norm: float, axes=None) -> Tensor:
    """``t * clip_norm / max(norm(t, axes), clip_norm)``: ``t`` rescaled so its L2 norm (over ``axes``, all
    by default) is at most ``clip_norm`` (TensorFlow's ``tf.clip_by_norm``, same formula and dtype).

    A ``t`` whose norm is at most ``clip_norm`` is returned unchanged; an all-zero ``t`` has a finite
    gradient (zero norms are kept out of the square root, as in TensorFlow).

    >>> import tensorlib as tl
    >>> tl.optimizers.clip_by_norm(tl.tensor([3.0, 4.0]), 1.0).numpy().round(3).tolist()
    [0.6, 0.8]
    >>> tl.optimizers.clip_by_norm(tl.tensor([[3.0, 0.1], [4.0, 0.1]]), 1.0, axes=0).numpy().round(3).tolist()
    [[0.6, 0.1], [0.8, 0.1]]
    """
    clip_norm = _positive(clip_norm, "clip_by_norm", "clip_norm")
    if not isinstance(t, Tensor):
        t = _creation.tensor(t)
    if t.dtype.kind not in "fc":
        raise TypeError(
            f"clip_by_norm: t has dtype {t.dtype} (shape {t.shape}); only float or complex tensors are clipped"
        )
    magnitude = _magnitude(t)
    if _clips_nothing(clip_norm, magnitude.dtype):
        return t
    norm = _scaled_norm([magnitude], axes, keepdims=True)
    return _scaled(t, clip_norm / _math_ops.maximum(norm, clip_norm))


# ------------------------------------------------------------------ schedules
class StepDecay:
    """``initial * gamma ** floor(step / step_size)`` (PyTorch's ``StepLR``).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.StepDecay(1.0, step_size=10, gamma=0.5)
    >>> [float(s(t)) for t in (0, 9, 10, 25)]
    [1.0, 1.0, 0.5, 0.25]
    """

    def __init__(self, initial: float, step_size: int, gamma: float = 0.1):
        step_size = _whole_steps(step_size, "StepDecay", "step_size")
        self.initial, self.step_size = _non_negative(initial, "StepDecay", "initial"), step_size
        self.gamma = _non_negative(gamma, "StepDecay", "gamma")

    def __call__(self, step) -> Tensor:
        return self.initial * _math_ops.power(self.gamma, _math_ops.floor(_as_step(step) / self.step_size))


class CosineDecay:
    """From ``initial`` down to ``alpha * initial`` along half a cosine over ``decay_steps``, then constant.

    ``lr(t) = initial * (alpha + (1 - alpha) * (1 + cos(pi * min(t, T) / T)) / 2)`` (Keras' ``CosineDecay``;
    PyTorch's ``CosineAnnealingLR(T_max=T, eta_min=alpha * initial)`` up to ``T``, past which torch's rate rises
    again along the cosine).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.CosineDecay(1.0, decay_steps=100)
    >>> [round(float(s(t)), 4) for t in (0, 50, 100, 200)]
    [1.0, 0.5, 0.0, 0.0]
    """

    def __init__(self, initial: float, decay_steps: int, alpha: float = 0.0):
        decay_steps = _whole_steps(decay_steps, "CosineDecay", "decay_steps")
        self.initial, self.decay_steps = _non_negative(initial, "CosineDecay", "initial"), decay_steps
        self.alpha = _non_negative(alpha, "CosineDecay", "alpha")

    def __call__(self, step) -> Tensor:
        progress = _math_ops.minimum(_as_step(step), float(self.decay_steps)) / self.decay_steps
        cosine = 0.5 * (1.0 + _math_ops.cos(math.pi * progress))
        return self.initial * (self.alpha + (1.0 - self.alpha) * cosine)


class Warmup:
    """Linear warm-up from ``initial / warmup_steps`` to the wrapped schedule (or constant) over ``warmup_steps``.

    Step ``t < warmup_steps`` gives ``after(0) * (t + 1) / warmup_steps``; afterwards ``after(t - warmup_steps)``.

    >>> import tensorlib as tl
    >>> s = tl.optimizers.Warmup(0.4, warmup_steps=4)
    >>> [round(float(s(t)), 4) for t in (0, 1, 3, 10)]
    [0.1, 0.2, 0.4, 0.4]
    """

    def __init__(self, after, warmup_steps: int):
        warmup_steps = _whole_steps(warmup_steps, "Warmup", "warmup_steps")
        self.after, self.warmup_steps = after, warmup_steps
        self._after = _schedule_of(after) if callable(after) else _non_negative(after, "Warmup", "after")

    def __call__(self, step) -> Tensor:
        t = _as_step(step)
        later = _lr_at(self._after, _math_ops.maximum(t - self.warmup_steps, 0.0))
        ramp = _lr_at(self._after, t * 0.0) * _math_ops.minimum((t + 1.0) / self.warmup_steps, 1.0)
        return _math_ops.where(t < self.warmup_steps, ramp, later)


class ExponentialDecay:
    """``initial * decay_rate ** (step / decay_steps)``; ``staircase=True`` floors ``step / decay_steps``
    (Keras' ``ExponentialDecay``; PyTorch's ``ExponentialLR(gamma)`` is ``decay_steps=1``).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.ExponentialDecay(1.0, decay_steps=10, decay_rate=0.5)
    >>> [round(float(s(t)), 4) for t in (0, 5, 10, 30)]
    [1.0, 0.7071, 0.5, 0.125]
    >>> s = tl.optimizers.ExponentialDecay(1.0, decay_steps=10, decay_rate=0.5, staircase=True)
    >>> [float(s(t)) for t in (0, 9, 10, 25)]
    [1.0, 1.0, 0.5, 0.25]
    """

    def __init__(self, initial: float, decay_steps: int, decay_rate: float, staircase: bool = False):
        decay_steps = _whole_steps(decay_steps, "ExponentialDecay", "decay_steps")
        decay_rate = _non_negative(decay_rate, "ExponentialDecay", "decay_rate")
        self.initial, self.decay_steps = _non_negative(initial, "ExponentialDecay", "initial"), decay_steps
        self.decay_rate = decay_rate
        self.staircase = bool(staircase)

    def __call__(self, step) -> Tensor:
        exponent = _as_step(step) / self.decay_steps
        return self.initial * _math_ops.power(
            self.decay_rate, _math_ops.floor(exponent) if self.staircase else exponent
        )


class PiecewiseConstant:
    """``values[0]`` up to and including step ``boundaries[0]``, ``values[1]`` up to ``boundaries[1]``, ...,
    ``values[-1]`` after the last boundary (Keras' ``PiecewiseConstantDecay``: a value changes one step
    after its boundary, where PyTorch's ``MultiStepLR`` changes at the milestone itself).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.PiecewiseConstant([10, 20], [1.0, 0.5, 0.1])
    >>> [float(s(t)) for t in (0, 10, 11, 20, 21, 1000)]
    [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
    """

    def __init__(self, boundaries, values):
        self.boundaries = [_real(b, "PiecewiseConstant", f"boundaries[{i}]") for i, b in enumerate(boundaries)]
        self.values = [_non_negative(v, "PiecewiseConstant", f"values[{i}]") for i, v in enumerate(values)]
        if len(self.values) != len(self.boundaries) + 1:
            raise ValueError(
                f"PiecewiseConstant: needs one value more than boundaries, got {len(self.boundaries)} boundaries "
                f"and {len(self.values)} values"
            )
        if any(b >= c for b, c in zip(self.boundaries, self.boundaries[1:])):
            raise ValueError(f"PiecewiseConstant: boundaries must increase, got {list(boundaries)}")

    def __call__(self, step) -> Tensor:
        t = _as_step(step)
        rate = _math_ops.cast(self.values[0], _dt.float64)
        for boundary, value in zip(self.boundaries, self.values[1:]):
            rate = _math_ops.where(t > boundary, value, rate)
        return rate


class PolynomialDecay:
    """From ``initial`` to ``end`` along ``(1 - t / decay_steps) ** power`` over ``decay_steps``, then ``end``
    (Keras' ``PolynomialDecay``; ``power=1`` is PyTorch's ``PolynomialLR`` to ``end``).  With ``cycle=True``
    the decay restarts past the end over a horizon stretched to the next multiple of ``decay_steps``.

    >>> import tensorlib as tl
    >>> s = tl.optimizers.PolynomialDecay(1.0, decay_steps=10, end=0.0, power=2.0)
    >>> [round(float(s(t)), 4) for t in (0, 5, 10, 20)]
    [1.0, 0.25, 0.0, 0.0]
    """

    def __init__(self, initial: float, decay_steps: int, end: float = 1e-4, power: float = 1.0, cycle: bool = False):
        self.decay_steps = _whole_steps(decay_steps, "PolynomialDecay", "decay_steps")
        who = "PolynomialDecay"
        self.initial, self.end = _non_negative(initial, who, "initial"), _non_negative(end, who, "end")
        self.power = _non_negative(power, who, "power")
        self.cycle = bool(cycle)

    def __call__(self, step) -> Tensor:
        t = _as_step(step)
        if self.cycle:  # the horizon: decay_steps times the cycles begun (1 at step 0)
            horizon = self.decay_steps * _math_ops.maximum(_elementwise.ceil(t / self.decay_steps), 1.0)
        else:
            horizon, t = float(self.decay_steps), _math_ops.minimum(t, float(self.decay_steps))
        return (self.initial - self.end) * _math_ops.power(1.0 - t / horizon, self.power) + self.end


class InverseTimeDecay:
    """``initial / (1 + decay_rate * t / decay_steps)``; ``staircase=True`` floors ``t / decay_steps``
    (Keras' ``InverseTimeDecay``).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.InverseTimeDecay(1.0, decay_steps=10, decay_rate=0.5)
    >>> [round(float(s(t)), 4) for t in (0, 10, 30)]
    [1.0, 0.6667, 0.4]
    """

    def __init__(self, initial: float, decay_steps: int, decay_rate: float, staircase: bool = False):
        self.decay_steps = _whole_steps(decay_steps, "InverseTimeDecay", "decay_steps")
        self.initial = _non_negative(initial, "InverseTimeDecay", "initial")
        self.decay_rate = _non_negative(decay_rate, "InverseTimeDecay", "decay_rate")
        self.staircase = bool(staircase)

    def __call__(self, step) -> Tensor:
        p = _as_step(step) / self.decay_steps
        return self.initial / (1.0 + self.decay_rate * (_math_ops.floor(p) if self.staircase else p))


class CosineDecayRestarts:
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter 2017) in Keras' form: the first period
    lasts ``first_decay_steps``, each next one ``t_mul`` times longer and starting ``m_mul`` times lower,
    each decaying from its start to ``alpha * initial``.  (PyTorch's ``CosineAnnealingWarmRestarts``
    is ``t_mul=T_mult``, ``m_mul=1``, ``alpha=eta_min / initial``.)

    >>> import tensorlib as tl
    >>> s = tl.optimizers.CosineDecayRestarts(1.0, first_decay_steps=10, t_mul=2.0, m_mul=0.5)
    >>> [round(float(s(t)), 4) for t in (0, 5, 10, 20, 30)]
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(
        self, initial: float, first_decay_steps: int, t_mul: float = 2.0, m_mul: float = 1.0, alpha: float = 0.0
    ):
        who = "CosineDecayRestarts"
        self.first_decay_steps = _whole_steps(first_decay_steps, who, "first_decay_steps")
        self.initial, self.alpha = _non_negative(initial, who, "initial"), _non_negative(alpha, who, "alpha")
        self.t_mul, self.m_mul = _real(t_mul, who, "t_mul"), _real(m_mul, who, "m_mul")
        if not self.t_mul >= 1 or not self.m_mul >= 0:
            # Periods of t_mul < 1 shrink and add up to first_decay_steps / (1 - t_mul) steps; past them the rate
            # was NaN (Keras' too).  PyTorch's CosineAnnealingWarmRestarts also takes T_mult >= 1 only.
            raise ValueError(f"{who}: t_mul must be >= 1 and m_mul >= 0, got t_mul={t_mul}, m_mul={m_mul}")

    def _begun(self, restarts: Tensor) -> Tensor:
        """Where period ``restarts`` starts, in periods of the first: ``1 + t_mul + ... + t_mul^(restarts - 1)``."""
        return (_math_ops.power(self.t_mul, restarts) - 1.0) / (self.t_mul - 1.0)

    def __call__(self, step) -> Tensor:
        fraction = _as_step(step) / self.first_decay_steps
        if self.t_mul == 1.0:
            restarts = _math_ops.floor(fraction)
            fraction = fraction - restarts
        else:  # periods 1, t_mul, t_mul^2, ...: the restarts before t solve a geometric sum
            restarts = _math_ops.floor(_math_ops.log1p(fraction * (self.t_mul - 1.0)) / math.log(self.t_mul))
            # The logarithm is rounded: at a restart itself (step 363 of first_decay_steps=3, t_mul=3, where
            # log(243) / log(3) is 4.999...) it fell one period short and the rate was 0, not the restart's.
            restarts = _math_ops.where(fraction >= self._begun(restarts + 1.0), restarts + 1.0, restarts)
            restarts = _math_ops.where(fraction < self._begun(restarts), restarts - 1.0, restarts)
            begun = self._begun(restarts)
            fraction = (fraction - begun) / _math_ops.power(self.t_mul, restarts)
        cosine = 0.5 * _math_ops.power(self.m_mul, restarts) * (1.0 + _math_ops.cos(math.pi * fraction))
        return self.initial * ((1.0 - self.alpha) * cosine + self.alpha)


class OneCycle:
    """The one-cycle policy (Smith & Topin 2019) in PyTorch's ``OneCycleLR`` form, for the learning rate:
    from ``max_lr / div_factor`` up to ``max_lr`` over the first ``pct_start`` of ``total_steps``, then down
    to ``max_lr / div_factor / final_div_factor`` at step ``total_steps - 1`` (and there after it), along
    half cosines (``anneal="cos"``) or lines (``"linear"``).  ``three_phase=True`` comes back down to the
    start over a second ``pct_start`` before the final decay.  PyTorch also cycles momentum; here only
    the rate is scheduled.

    >>> import tensorlib as tl
    >>> s = tl.optimizers.OneCycle(1.0, total_steps=100, anneal="linear", div_factor=10, final_div_factor=10)
    >>> [round(float(s(t)), 4) for t in (0, 29, 99)]
    [0.1, 1.0, 0.01]
    """

    def __init__(
        self,
        max_lr: float,
        total_steps: int,
        pct_start: float = 0.3,
        anneal: str = "cos",
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
    ):
        who = "OneCycle"
        self.total_steps = _whole_steps(total_steps, who, "total_steps")
        self.max_lr, self.pct_start = _non_negative(max_lr, who, "max_lr"), _real(pct_start, who, "pct_start")
        self.div_factor = _real(div_factor, who, "div_factor")
        self.final_div_factor = _real(final_div_factor, who, "final_div_factor")
        if not 0.0 < self.pct_start < 1.0 or self.div_factor <= 0 or self.final_div_factor <= 0:
            raise ValueError(
                f"{who}: pct_start must be in (0, 1) and div_factor, final_div_factor positive, got "
                f"pct_start={pct_start}, div_factor={div_factor}, final_div_factor={final_div_factor}"
            )
        if anneal not in ("cos", "linear"):
            raise ValueError(f"{who}: anneal must be 'cos' or 'linear', got {anneal!r}")
        self.anneal, self.three_phase = anneal, bool(three_phase)
        start = self.max_lr / self.div_factor
        up = self.pct_start * self.total_steps - 1.0
        ends = [up, 2.0 * self.pct_start * self.total_steps - 2.0] if three_phase else [up]
        ends.append(self.total_steps - 1.0)
        rates = [start, self.max_lr] + ([start] if three_phase else []) + [start / self.final_div_factor]
        if any(b <= a for a, b in zip([0.0, *ends], ends)):
            raise ValueError(
                f"{who}: total_steps={total_steps} with pct_start={pct_start} leaves a phase without steps"
            )
        self._phases = [(a, b, rates[i], rates[i + 1]) for i, (a, b) in enumerate(zip([0.0, *ends], ends))]

    def __call__(self, step) -> Tensor:
        t = _math_ops.minimum(_as_step(step), self._phases[-1][1])
        rate = None
        for first, last, start, end in reversed(self._phases):  # the phase t is in: the first whose end it reaches
            pct = (t - first) / (last - first)
            if self.anneal == "cos":
                value = end + (start - end) / 2.0 * (_math_ops.cos(math.pi * pct) + 1.0)
            else:
                value = start + (end - start) * pct
            rate = value if rate is None else _math_ops.where(t <= last, value, rate)
        return rate


class MultiStepDecay:
    """``initial * gamma ** (the number of milestones <= step)`` (PyTorch's ``MultiStepLR``: the rate changes at
    each milestone itself; a milestone given twice counts twice, as there).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.MultiStepDecay(1.0, milestones=[2, 5], gamma=0.5)
    >>> [float(s(t)) for t in (0, 1, 2, 4, 5, 100)]
    [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, initial: float, milestones, gamma: float = 0.1):
        who = "MultiStepDecay"
        self.initial, self.gamma = _non_negative(initial, who, "initial"), _non_negative(gamma, who, "gamma")
        self.milestones = sorted(_count(m, who, f"milestones[{i}]") for i, m in enumerate(milestones))

    def __call__(self, step) -> Tensor:
        t = _as_step(step)
        passed = _math_ops.cast(t * 0.0, _dt.float64)
        for milestone in self.milestones:
            passed = passed + _math_ops.cast(t >= milestone, _dt.float64)
        return self.initial * _math_ops.power(self.gamma, passed)


class LinearSchedule:
    """``initial`` times a factor going linearly from ``start_factor`` to ``end_factor`` over ``total_steps``,
    then ``end_factor`` (PyTorch's ``LinearLR``: a warm-up with ``start_factor < 1``, a decay with
    ``end_factor < 1``).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.LinearSchedule(1.0, start_factor=0.25, total_steps=3)
    >>> [float(s(t)) for t in (0, 1, 2, 3, 10)]
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, initial: float, start_factor: float = 1.0 / 3.0, end_factor: float = 1.0, total_steps: int = 5):
        who = "LinearSchedule"
        self.initial, self.total_steps = (
            _non_negative(initial, who, "initial"),
            _whole_steps(total_steps, who, "total_steps"),
        )
        self.start_factor = _non_negative(start_factor, who, "start_factor")
        self.end_factor = _non_negative(end_factor, who, "end_factor")
        if self.start_factor == 0.0:  # torch.optim refuses it too: start_factor in (0, 1]
            raise ValueError(f"{who}: start_factor must be > 0, got {start_factor!r}")

    def __call__(self, step) -> Tensor:
        progress = _math_ops.minimum(_as_step(step), float(self.total_steps)) / self.total_steps
        return self.initial * (self.start_factor + (self.end_factor - self.start_factor) * progress)


class LambdaSchedule:
    """``initial * factor(step)`` (PyTorch's ``LambdaLR``), ``factor`` called with the step as a 0-d float64 tensor,
    so that a traced step reads it at every call: write it in tensor arithmetic (``lambda t: 0.95 ** t``;
    ``tl.minimum``/``tl.where`` for a branch, not Python's ``min`` or ``if``).

    >>> import tensorlib as tl
    >>> s = tl.optimizers.LambdaSchedule(0.1, lambda t: 0.5 ** t)
    >>> [round(float(s(t)), 6) for t in (0, 1, 3)]
    [0.1, 0.05, 0.0125]
    """

    def __init__(self, initial: float, factor):
        if not callable(factor):
            raise TypeError(f"LambdaSchedule: factor must be a callable of the step, got {type(factor).__name__}")
        self.initial, self.factor = _non_negative(initial, "LambdaSchedule", "initial"), factor

    def __call__(self, step) -> Tensor:
        return self.initial * _lr_at(self.factor, _as_step(step))


class SequentialSchedule:
    """``schedules[0]`` until ``milestones[0]``, then ``schedules[1]`` from its own step 0, and so on (PyTorch's
    ``SequentialLR``: each schedule starts over at its milestone).

    >>> import tensorlib as tl
    >>> warmup = tl.optimizers.LinearSchedule(1.0, start_factor=0.5, total_steps=2)
    >>> decay = tl.optimizers.ExponentialDecay(1.0, decay_steps=1, decay_rate=0.5)
    >>> s = tl.optimizers.SequentialSchedule([warmup, decay], milestones=[2])
    >>> [float(s(t)) for t in (0, 1, 2, 3, 4)]
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, schedules, milestones):
        who = "SequentialSchedule"
        self.schedules = [_schedule_of(s) if callable(s) else _non_negative(s, who, "schedules[i]") for s in schedules]
        self.milestones = [_count(m, who, f"milestones[{i}]") for i, m in enumerate(milestones)]
        if len(self.milestones) != len(self.schedules) - 1 or any(
            b <= a for a, b in zip(self.milestones, self.milestones[1:])
        ):
            raise ValueError(
                f"{who}: needs increasing milestones, one fewer than schedules; got {len(self.schedules)} schedules "
                f"and milestones {list(milestones)}"
            )

    def __call__(self, step) -> Tensor:
        t = _as_step(step)
        rate = _lr_at(self.schedules[0], t)
        for milestone, schedule in zip(self.milestones, self.schedules[1:]):
            rate = _math_ops.where(t >= milestone, _lr_at(schedule, _math_ops.maximum(t - milestone, 0.0)), rate)
        return rate


class ChainedSchedule:
    """The schedules' factors multiplied: ``initial * prod(s(step) / initial)``, for schedules of one ``initial``
    (PyTorch's ``ChainedScheduler`` of multiplicative schedulers, ``LinearLR``, ``ExponentialLR``, ``StepLR``,
    ``MultiStepLR``, ``ConstantLR``, ``LambdaLR``: each scales the rate the one before it set).

    >>> import tensorlib as tl
    >>> warmup = tl.optimizers.LinearSchedule(1.0, start_factor=0.5, total_steps=2)
    >>> decay = tl.optimizers.ExponentialDecay(1.0, decay_steps=1, decay_rate=0.5)
    >>> s = tl.optimizers.ChainedSchedule([warmup, decay])
    >>> [float(s(t)) for t in (0, 1, 2, 3)]
    [0.5, 0.375, 0.25, 0.125]
    """

    def __init__(self, schedules):
        who = "ChainedSchedule"
        self.schedules = list(schedules)
        initials = {getattr(s, "initial", None) for s in self.schedules}
        if not self.schedules or None in initials or len(initials) != 1:
            raise ValueError(
                f"{who}: needs schedules with one initial rate (each has `initial`, as the base rate torch's "
                f"schedulers share), got {[getattr(s, 'initial', type(s).__name__) for s in self.schedules]}"
            )
        (self.initial,) = initials

    def __call__(self, step) -> Tensor:
        t = _as_step(step)
        rate = _lr_at(self.schedules[0], t)
        for schedule in self.schedules[1:]:
            rate = rate * (_lr_at(schedule, t) / self.initial) if self.initial else rate * 0.0
        return rate


class ReduceLROnPlateau:
    """Scale an optimizer's constant learning rate by ``factor`` when a metric has stopped improving for more than
    ``patience`` calls of :meth:`step` (PyTorch's ``ReduceLROnPlateau``, same arguments and rules; Keras' callback
    is ``threshold_mode="abs"`` with ``min_delta`` as ``threshold``).

    ``mode="min"`` counts a value as better below ``best * (1 - threshold)`` (``"rel"``) or ``best - threshold``
    (``"abs"``), ``"max"`` above ``best * (1 + threshold)`` or ``best + threshold``; a NaN is never better.  After a
    reduction, ``cooldown`` calls pass without counting; the rate never goes below ``min_lr``, and a change
    smaller than ``eps`` is skipped.  Its state (``best``, the bad calls, the cooldown left, the calls) lives in
    Variables, in ``variables``, ``state_dict()`` and checkpoints, so a resumed run reduces where the
    uninterrupted one does.  :meth:`step` runs in Python, eagerly, between (traced) training steps, as the
    optimizer's rate is read by them at every call.

    >>> import tensorlib as tl
    >>> opt = tl.optimizers.SGD(1.0)
    >>> plateau = tl.optimizers.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> for loss in [3.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0]:  # halved after the 2nd and the 4th call without progress
    ...     plateau.step(loss)
    >>> opt.learning_rate
    0.25
    """

    def __init__(
        self,
        optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float = 0.0,
        eps: float = 1e-8,
    ):
        who = "ReduceLROnPlateau"
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{who}: optimizer must be a tl.optimizers.Optimizer, got {type(optimizer).__name__}")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"{who}: mode must be 'min' or 'max' and threshold_mode 'rel' or 'abs', got mode={mode!r}, "
                f"threshold_mode={threshold_mode!r}"
            )
        self.factor = _real(factor, who, "factor")
        if not 0.0 <= self.factor < 1.0:
            raise ValueError(f"{who}: factor must be in [0, 1), got {factor!r}")
        self.patience, self.cooldown = _count(patience, who, "patience"), _count(cooldown, who, "cooldown")
        self.threshold, self.eps = _non_negative(threshold, who, "threshold"), _non_negative(eps, who, "eps")
        self.min_lr = _non_negative(min_lr, who, "min_lr")
        self.optimizer, self.mode, self.threshold_mode = optimizer, mode, threshold_mode
        self._state = {
            "best": Variable(np.float64(math.inf if mode == "min" else -math.inf), name="best", trainable=False),
            "num_bad_steps": Variable(np.int64(0), name="num_bad_steps", trainable=False),
            "cooldown_counter": Variable(np.int64(0), name="cooldown_counter", trainable=False),
            "steps": Variable(np.int64(0), name="steps", trainable=False),
        }

    state_dict = Module.state_dict
    load_state_dict = Module.load_state_dict

    @property
    def variables(self) -> dict:
        """``{"best", "num_bad_steps", "cooldown_counter", "steps"}`` as Variables, for checkpoints."""
        return dict(self._state)

    def _better(self, value: float, best: float) -> bool:
        if self.mode == "min":
            return value < (best * (1.0 - self.threshold) if self.threshold_mode == "rel" else best - self.threshold)
        return value > (best * (1.0 + self.threshold) if self.threshold_mode == "rel" else best + self.threshold)

    def step(self, metric) -> None:
        """Count ``metric`` (a number or a 0-d tensor: the validation loss, say) and reduce the rate if due."""
        who = "ReduceLROnPlateau.step"
        if current_state().modes:
            raise RuntimeError(
                f"{who}: called while tl.function traces; it decides in Python, once per call, so call it outside "
                "the traced function (the optimizer's traced steps read the rate it sets)"
            )
        value = float(metric.numpy()) if isinstance(metric, Tensor) else _number(metric, who, "metric")
        optimizer = self.optimizer
        for index in range(len(optimizer._groups)):
            with optimizer._using(index):
                if optimizer._schedule is not None:
                    group = f" (parameter group {index})" if index else ""
                    raise TypeError(
                        f"{who}: the optimizer's learning rate is a schedule{group}; only a constant rate is reduced"
                    )
        state = {name: v.numpy().item() for name, v in self._state.items()}
        state["steps"] += 1
        if self._better(value, state["best"]):
            state["best"], state["num_bad_steps"] = value, 0
        else:
            state["num_bad_steps"] += 1
        if state["cooldown_counter"] > 0:
            state["cooldown_counter"] -= 1
            state["num_bad_steps"] = 0
        if state["num_bad_steps"] > self.patience:
            for index in range(len(optimizer._groups)):  # every group's rate, as torch's reduces each group's
                with optimizer._using(index):
                    old = optimizer.learning_rate
                    new = max(old * self.factor, self.min_lr)
                    if old - new > self.eps:
                        if optimizer._lr is optimizer._own_lr:
                            optimizer.learning_rate = new
                        else:  # the caller's rate Variable: assigned, as torch sets its param group's "lr"
                            optimizer._lr.assign(np.asarray(new, optimizer._lr.dtype.name))
            state["cooldown_counter"], state["num_bad_steps"] = self.cooldown, 0
        for name, v in self._state.items():
            v.assign(np.asarray(state[name], v.dtype.name))


def _count(value, who: str, what: str) -> int:
    """A count of steps, >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{who}: {what} must be a whole number >= 0, got {value!r}")
    return int(value)


def _number(value, who: str, what: str) -> float:
    """A number argument as a float (NaN included); a string, None or an array is a TypeError naming the
    function and argument (a string was read as a number, others failed in a bare comparison)."""
    try:
        number = None if isinstance(value, (str, bytes)) else float(value)
    except (TypeError, ValueError):
        number = None
    if number is None:
        raise TypeError(f"{who}: {what} must be a real number, got {type(value).__name__} {value!r}")
    return number


def _real(value, who: str, what: str) -> float:
    """A schedule's or clipping's number argument: :func:`_number`, and not NaN (a NaN boundary silently
    never switched)."""
    number = _number(value, who, what)
    if math.isnan(number):
        raise ValueError(f"{who}: {what} must not be NaN")
    return number


def _non_negative(value, who: str, what: str) -> float:
    """A schedule's rate, factor or exponent: :func:`_real`, and >= 0.  A negative rate (``initial=-0.1``,
    ``StepDecay``'s ``gamma=-0.5`` at odd steps, ``alpha=-0.1`` at a period's end) made the optimizer climb
    the loss, silently, where it refuses a negative constant rate as ``torch.optim`` does."""
    number = _real(value, who, what)
    if not number >= 0:
        raise ValueError(f"{who}: {what} must be >= 0, got {value}")
    return number


def _whole_steps(value, who: str, what: str) -> int:
    """A count of steps, >= 1 (2.5 had been truncated to 2 without a word)."""
    try:
        whole = not isinstance(value, bool) and int(value) == value and value >= 1
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole:
        raise ValueError(f"{who}: {what} must be a whole number >= 1, got {value!r}")
    return int(value)


def _as_step(step) -> Tensor:
    from .ops.creation import tensor

    t = step if isinstance(step, Tensor) else tensor(float(step), dtype=_dt.float64)
    return t if t.dtype == _dt.float64 else _math_ops.cast(t, _dt.float64)


class _Unstepped:
    """A callable of no arguments (Keras' form of a learning rate) as a schedule: called without the step."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, step) -> Tensor:
        return self.fn()


def _schedule_of(fn):
    """``fn`` as a schedule of the step: itself, or for a callable that takes no argument (``lambda: 0.01``,
    Keras' form, which failed with "takes 0 positional arguments but 1 was given" at the first step) a
    wrapper that calls it without one.  Decided once, when it is set: inspecting costs 10-25 us a step."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature (a builtin): taken as a schedule
        return fn
    try:
        signature.bind(None)
    except TypeError:
        try:
            signature.bind()
        except TypeError:  # takes neither: calling it with the step raises its own error
            return fn
        return _Unstepped(fn)
    return fn


def _lr_at(schedule, step: Tensor) -> Tensor:
    """The rate at ``step`` in float64.  A schedule's Python number is read at float64 directly: cast as a
    weak scalar it went through float32, and 0.1 became 0.10000000149011612 for a float64 model."""
    rate = schedule(step) if callable(schedule) else schedule
    if isinstance(rate, Tensor):
        return rate if rate.dtype == _dt.float64 else _math_ops.cast(rate, _dt.float64)
    return _creation.tensor(rate, dtype=_dt.float64)


# ------------------------------------------------------------------ optimizers
# What a traced step keys its graphs by (state_read): a new one for each schedule or Variable set as the
# rate.  Not id(), which a new schedule can reuse once an old one is freed, and the stale graph ran.
_lr_keys = itertools.count()


def _compute_dtype(dtype):
    """The dtype an update is computed in: float32 for float16 (its epsilon and small squares underflow)."""
    return _dt.float32 if dtype == _dt.float16 else dtype


def _on(t: Tensor, backend) -> Tensor:
    """``t``, or its copy on ``backend`` (the optimizer's own numbers live on the default one; a CuPy model's
    update reads copies)."""
    return t if t.backend is backend else _creation.tensor(t, backend=backend)


def _clip_value(g: Tensor, bound: float) -> Tensor:
    """``g`` clipped into ``[-bound, bound]``; a complex one part by part, as the (real, imaginary) pairs its
    step runs on (clipped as one number, by NumPy's order of the real part first, 0.1+2j passed unclipped)."""
    if g.dtype.kind != "c":
        return _math_ops.clip(g, -bound, bound)
    parts = (_elementwise.real(g), _elementwise.imag(g))
    return _elementwise.complex_(*(_math_ops.clip(part, -bound, bound) for part in parts))


def _slot_layout(var: Variable) -> tuple:
    """The shape and NumPy dtype of a slot of ``var``: the update's dtype (float32 for float16), and for a complex
    variable its (real, imaginary) pairs along a last axis of 2, as the update runs on them (PyTorch's
    ``view_as_real``)."""
    if var.dtype.kind == "c":
        return (*var.shape, 2), np.dtype(_compute_dtype(_dt.real_dtype(var.dtype)).name)
    return tuple(var.shape), np.dtype(_compute_dtype(var.dtype).name)


def _check_float(pairs, who: str) -> None:
    for _, _, v in pairs:
        if v.dtype.kind not in "fc":
            raise TypeError(
                f"{who}: variable {v.name!r} has dtype {v.dtype}; only float and complex variables are trained"
            )


def _as_pairs(z: Tensor, dtype) -> Tensor:
    """A complex tensor as its (real, imaginary) parts along a new last axis (PyTorch's ``view_as_real``)."""
    from .ops.shape import stack

    return _math_ops.cast(stack([_elementwise.real(z), _elementwise.imag(z)], axis=-1), dtype)


def _ascent_pairs(g: Tensor, dtype) -> Tensor:
    """The (real, imaginary) parts of the steepest-ascent direction of a JAX-convention complex gradient:
    ``conj(g)`` (docs/complex.md), so descent on the pairs is ``z - lr * conj(g)``."""
    return _as_pairs(_elementwise.conj(g), dtype)


# The ranges of hyperparameters (torch.optim's constructors' checks); a NaN is in none.
_RANGES = {
    ">= 0": lambda x: x >= 0,
    "[0, 1)": lambda x: 0 <= x < 1,
    "[0, 1]": lambda x: 0 <= x <= 1,
}


class _Hyperparameter:
    """A number of an optimizer's update rule (``beta_1``, ``momentum``, ``weight_decay``, ...), held in a 0-d
    float64 Variable as a constant learning rate is: a traced step reads it at every call, so a value set
    between steps is the one the next step uses, without tracing again (a ``torch.optim`` param group's
    values are read at every step).  Only what picks the update's ops (a number's sign, see
    ``Optimizer._rule_switches``) is baked into a traced step's graph.  Reading it gives the float.

    A flag (``amsgrad``, ``nesterov``, ``centered``, ``decoupled_weight_decay``, ``maximize``) is held the same way
    in a 0-d bool Variable, so that a checkpoint restores it as ``torch.optim``'s ``load_state_dict`` restores its
    param groups' flags; it picks the update's ops, so setting it retraces a traced step.  Reading it gives the
    bool."""

    def __init__(self, name: str, flag: bool = False):
        self.name, self.flag = name, flag

    def __get__(self, opt, owner=None):
        if opt is None:
            return self
        try:
            return opt.__dict__["_hyper_values"][self.name]
        except KeyError:
            raise AttributeError(f"{type(opt).__name__} has no attribute {self.name!r}") from None

    def __set__(self, opt, value) -> None:
        number = _flag(value, type(opt).__name__, self.name) if self.flag else opt._checked(self.name, value)
        opt.__dict__.setdefault("_hyper_values", {})[self.name] = number
        held = opt.__dict__.setdefault("_hypers", {})
        stored = np.bool_(number) if self.flag else np.float64(number)
        if self.name in held:
            held[self.name].assign(stored)
        else:
            held[self.name] = Variable(stored, name=self.name, trainable=False)


def _flag(value, who: str, what: str) -> bool:
    """A flag of an update rule (``amsgrad``, ``nesterov``, ``centered``, ``maximize``, ...): a bool, or 0 or 1
    (a string such as ``"False"`` was truthy and turned the flag on)."""
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{who}: {what} must be a bool, got {type(value).__name__} {value!r}")


class _Hypers:
    """A traced step's hyperparameters, read from their Variables, for the updates computed in ``dtype`` on
    ``backend``: ``hp.beta_1`` in that dtype, ``hp.exact("beta_1")`` in float64 (for powers of the step
    counter), and ``hp.complement("beta_1")``, ``1 - beta_1`` computed in float64 and rounded once.  Each is
    made once a step, whatever the number of variables."""

    def __init__(self, held: dict, dtype, backend):
        self._held, self._dtype, self._backend, self._made = held, dtype, backend, {}

    def _once(self, key: tuple, make) -> Tensor:
        t = self._made.get(key)
        if t is None:
            t = self._made[key] = make()
        return t

    def _in_dtype(self, t: Tensor) -> Tensor:
        return t if t.dtype == self._dtype else _math_ops.cast(t, self._dtype)

    def exact(self, name: str) -> Tensor:
        return self._once((name, "exact"), lambda: _on(self._held[name], self._backend))

    def complement(self, name: str) -> Tensor:
        return self._once((name, "complement"), lambda: self._in_dtype(1.0 - self.exact(name)))

    def __getattr__(self, name: str) -> Tensor:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._once((name, "value"), lambda: self._in_dtype(self.exact(name)))


class _EagerHypers:
    """An eager step's hyperparameters: the Python floats (``_Hypers``' interface), which each op reads in its
    dtype as ``_Hypers``' casts do, so eager and traced steps agree bit for bit, without the casts' ops."""

    def __init__(self, values: dict):
        self._values = values

    def exact(self, name: str) -> float:
        return self._values[name]

    def complement(self, name: str) -> float:
        return 1.0 - self._values[name]

    def __getattr__(self, name: str) -> float:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._values[name]


class Optimizer:
    """Base class: holds the learning rate (a float or a schedule of the step), the step counter and the slots.

    Subclasses define ``_slot_names`` (and ``_counter_names``, per-variable step counters), ``_hyperparameters``
    (the numbers of the rule, read from Variables at every step) and ``_update(var, grad, lr, hp, slots)``,
    written in tensorlib ops, which updates the slots and returns the variable's new value (``var`` is the
    value in the update's dtype, not the Variable; ``hp.beta_1`` a hyperparameter in that dtype).
    ``variables`` returns the optimizer state as a nested dict (for checkpoints).  Every optimizer
    takes Keras' clipping arguments, one of them at most: ``clipnorm`` clips each gradient's norm,
    ``global_clipnorm`` all of them together, ``clipvalue`` each value (a complex one's real and imaginary parts) into ``[-clipvalue, clipvalue]``.
    ``state_dict()`` and ``load_state_dict(state, strict=True)`` are PyTorch's, as on a Module.
    ``maximize=True`` (every optimizer's, as in ``torch.optim``) ascends: it steps as for the negated gradient,
    weight decay included.  Complex
    Variables are trained as PyTorch trains them: the update runs on their (real, imaginary) pairs, with the
    steepest-ascent direction ``conj(grad)`` (docs/complex.md), and their slots hold the pairs.

    A hyperparameter set between steps (``opt.beta_1 = 0.8``, ``opt.momentum``, ``opt.weight_decay``, ...) is
    used from the next step on, as a ``torch.optim`` param group's: like a constant learning rate it lives in
    a Variable that a traced step reads at every call, so it does not trace the step again.  Only a change
    that picks other ops does (a weight decay or momentum set to or from 0, RAdam's ``beta_2`` across 2/3,
    a flag such as ``nesterov``, a clipping argument).

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> opt = tl.optimizers.SGD(1.0, weight_decay=0.5)
    >>> step = tl.function(lambda: opt.apply([tl.tensor([0.0])], [w]))
    >>> step()
    >>> opt.weight_decay = 0.25
    >>> step()
    >>> w.numpy().tolist(), step.trace_count  # 1 * (1 - 0.5) * (1 - 0.25)
    ([0.375], 1)
    """

    _slot_names: tuple = ()
    _counter_names: tuple = ()  # per-variable int64 step counters (0-d), beside the variable-shaped slots
    _scalar_names: tuple = ()  # per-variable 0-d float64 state (NAdam's product of momentum coefficients)
    _hyperparameters: tuple = ()  # numbers of the update rule held in Variables (see _Hyperparameter)
    _ranges: tuple = ()  # (hyperparameter, its range: a key of _RANGES) where it is not ">= 0"
    _flag_names: tuple = ()  # flags that pick the rule's ops (amsgrad, nesterov, ...), held as bool Variables
    maximize = _Hyperparameter("maximize", flag=True)  # every optimizer's (torch.optim's maximize)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls._hyperparameters:
            if not isinstance(getattr(cls, name, None), _Hyperparameter):
                setattr(cls, name, _Hyperparameter(name))
        for name in cls._flag_names:
            if not isinstance(getattr(cls, name, None), _Hyperparameter):
                setattr(cls, name, _Hyperparameter(name, flag=True))
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_takes_params", False):  # torch's form: Adam(params, lr=...)
            cls.__init__ = taking_params(init)

    def __init__(
        self,
        learning_rate,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        who = type(self).__name__
        global_clipnorm, clipnorm, clipvalue = (
            None if value is None else _positive(value, who, name)
            for name, value in (("global_clipnorm", global_clipnorm), ("clipnorm", clipnorm), ("clipvalue", clipvalue))
        )
        if sum(value is not None for value in (global_clipnorm, clipnorm, clipvalue)) > 1:
            raise ValueError(
                f"{who}: only one of clipnorm, clipvalue and global_clipnorm can be set (as in Keras), got "
                f"clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )
        self._schedule = None
        self._lr = self._own_lr = None  # the Variable read as the constant learning rate: ours or the user's
        self.learning_rate = learning_rate
        self.global_clipnorm, self.clipnorm, self.clipvalue = global_clipnorm, clipnorm, clipvalue
        self.maximize = maximize
        self.iterations = Variable(np.int64(0), name="iterations", trainable=False)
        self._slots: dict = {}  # variable id -> (key, variable, {slot name: Variable})
        self._restored: dict = {}  # slot key -> {slot name: Variable}: loaded before the variable was first seen
        self._split: set = set()  # paths two variables of other names came at: keyed "path/name" since
        self._built = None  # the structure given to build: what apply(grads) updates
        # Parameter groups (torch.optim's param_groups): group 0's settings are the optimizer's own attributes,
        # another group's are swapped in while it is used (_using).  Group 0's params None: every variable not in
        # another group (an optimizer made without parameters, Keras' way).
        self._groups: list = [{"params": None, "state": None}]
        self._group_of: dict = {}  # variable id -> its group's index

    # The attributes that hold one group's settings (swapped in by _using).
    _GROUP_STATE = ("_hyper_values", "_hypers", "_lr", "_own_lr", "_schedule", "_lr_key")

    @contextlib.contextmanager
    def _using(self, index: int):
        """Within: the optimizer's settings are group ``index``'s (its rate, hyperparameters and flags)."""
        if index == 0:
            yield
            return
        group, own = self._groups[index], {k: self.__dict__.get(k) for k in self._GROUP_STATE}
        self.__dict__.update(group["state"])
        try:
            yield
        finally:
            group["state"] = {k: self.__dict__.get(k) for k in self._GROUP_STATE}
            self.__dict__.update(own)

    def _settings(self) -> dict:
        """The settings of the group in use, as a group dict gives them (a schedule as itself)."""
        names = settable(type(self))
        return {
            name: getattr(self, name)
            for name in names
            if name in self.__dict__.get("_hyper_values", ()) or name == "learning_rate"
        }

    @property
    def param_groups(self) -> list:
        """The parameter groups, as ``torch.optim``'s: live views (:class:`ParamGroup`) whose
        ``"lr"``, hyperparameters and flags are read and set by name, each used from the next step on.

        Group 0's settings are the optimizer's own (``opt.learning_rate`` is ``param_groups[0]["lr"]``).  An
        optimizer made without parameters (Keras' way) has one group, of every variable it has updated.

        >>> import tensorlib as tl
        >>> a, b = tl.Variable([1.0]), tl.Variable([2.0])
        >>> opt = tl.optimizers.Adam([{"params": [a]}, {"params": [b], "weight_decay": 0.1}], lr=0.01)
        >>> [(g["lr"], g["weight_decay"], len(g["params"])) for g in opt.param_groups]
        [(0.01, 0.0, 1), (0.01, 0.1, 1)]
        """
        return [ParamGroup(self, i) for i in range(len(self._groups))]

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (``torch.optim``'s ``add_param_group``): ``{"params": variables, setting: value, ...}``; the
        settings it leaves out are the constructor's.  A variable already in a group is a ValueError.

        >>> import tensorlib as tl
        >>> opt = tl.optimizers.SGD([tl.Variable([1.0])], lr=0.1)
        >>> w = tl.Variable([1.0])
        >>> opt.add_param_group({"params": [w], "lr": 0.5})
        >>> opt.apply([tl.tensor([1.0])], [w])
        >>> float(w[0])
        0.5
        """
        if not isinstance(param_group, dict):
            raise TypeError(
                f"{type(self).__name__}.add_param_group: a group is a dict with 'params', got {type(param_group).__name__}"
            )
        self._add_groups([param_group], f"{type(self).__name__}.add_param_group")

    def _add_groups(self, params, who: str | None = None) -> None:
        """Add the groups of ``params`` (torch's first argument); from the constructor, the first is group 0."""
        from_constructor = who is None
        who = who or type(self).__name__
        groups = group_dicts(params, who)
        allowed = set(settable(type(self)))
        owner, settings = dict(self._group_of), []
        if self._groups[0]["params"] is None and not from_constructor:  # implicit group 0: the variables it updated
            owner.update({vid: 0 for vid in self._slots if vid not in owner})
        first = 0 if from_constructor else len(self._groups)  # the index the first of these groups gets
        for n, group in enumerate(groups):
            _check_float([(None, None, var) for var in group["params"]], who)
            for var in group["params"]:
                if var._id in owner:
                    raise ValueError(
                        f"{who}: variable {var.name!r} {var.shape} is in parameter groups {owner[var._id]} and "
                        f"{first + n}; a variable belongs to one group"
                    )
                owner[var._id] = first + n
            settings.append(canonical(type(self), {k: value for k, value in group.items() if k != "params"}, who))
            unknown = set(settings[-1]) - allowed
            if unknown:
                raise TypeError(f"{who}: a parameter group of {type(self).__name__} has no setting {sorted(unknown)}")
        for n, (group, given) in enumerate(zip(groups, settings)):
            if from_constructor and n == 0:
                index = 0
            else:
                index = len(self._groups)
                empty = {k: None for k in self._GROUP_STATE}
                self._groups.append({"params": None, "state": {**empty, "_hyper_values": {}, "_hypers": {}}})
                given = {**self.__dict__.get("_defaults", {}), **given}
            try:
                try:
                    with self._using(index):
                        for name, value in given.items():
                            setattr(self, name, value)
                except (TypeError, ValueError) as e:  # the setting's own message, with the group it came in
                    said = str(e).removeprefix(f"{type(self).__name__}: ")
                    raise type(e)(f"{who}: parameter group {index}: {said}") from None
                self._check_conflicts(who, (index,))
            except BaseException:
                if index:
                    self._groups.pop()
                raise
            self._groups[index]["params"] = group["params"]
            self._group_of.update({v._id: index for v in group["params"]})

    _conflict = (
        None  # (values: a group's hyperparameters and flags by name) -> what makes them invalid together, or None
    )

    def _check_conflicts(self, who: str, indices) -> None:
        """Refuse settings that are invalid together in the groups ``indices`` (SGD's ``nesterov`` without momentum).
        The constructor, ``add_param_group`` and every step check them: a setting written into ``param_groups`` or
        loaded from a checkpoint may make a pair the constructor refuses.  Read from the groups' stored values, not
        through ``_using`` (a step pays about 1 us a group)."""
        if self._conflict is None:
            return
        for index in indices:
            values = self.__dict__["_hyper_values"] if index == 0 else self._groups[index]["state"]["_hyper_values"]
            conflict = self._conflict(values)
            if conflict:
                raise ValueError(f"{who}: parameter group {index}: {conflict}")

    def _group_params(self, index: int) -> list:
        """Group ``index``'s variables (an implicit group 0: those updated so far that no other group holds)."""
        params = self._groups[index]["params"]
        if params is not None:
            return list(params)
        return [var for _, var, _ in self._slots.values() if var._id not in self._group_of]

    def _group_index(self, var: Variable, who: str) -> int:
        index = self._group_of.get(var._id)
        if index is not None:
            return index
        if self._groups[0]["params"] is not None:
            raise ValueError(
                f"{who}: variable {var.name!r} {var.shape} is in no parameter group of this optimizer; add it with "
                "add_param_group (or make the optimizer from it)"
            )
        return 0

    # PyTorch's optimizer.state_dict() / load_state_dict(state): the step counter, a constant learning rate
    # and the slots, as tl.checkpoint names them (a PyTorch user's first call had been an AttributeError).
    state_dict = Module.state_dict
    load_state_dict = Module.load_state_dict

    # torch.optim's per-parameter state keys -> this optimizer's slot names (None: kept by torch only)
    _torch_state: dict = {}
    _TORCH_ONLY = frozenset({"params", "foreach", "capturable", "differentiable", "fused", "initial_lr"})

    def load_torch_state_dict(self, state_dict: dict) -> None:
        """Resume from a ``torch.optim`` optimizer's ``state_dict()`` (SGD, Adam, AdamW, RMSprop, Adagrad, Adamax,
        NAdam, RAdam, Adadelta): each group's ``lr`` (unless this group's rate is a schedule), hyperparameters and
        flags, and each parameter's state (``momentum_buffer``, ``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``,
        ``square_avg``, ``grad_avg``, ``sum``, ``exp_inf``, ``acc_delta``, ``mu_product``, ``step``), copied into
        the slots' dtype; a complex parameter's complex state becomes its (real, imaginary) pairs.  This optimizer is made from the same parameters in the
        same groups and order as torch's: parameter ``j`` of group ``i`` takes the state torch lists at
        ``param_groups[i]["params"][j]``; one torch has no state for starts afresh.  ``iterations`` becomes the
        largest ``step`` torch kept (a schedule's step), where it kept one.  The arrays may be torch tensors or
        NumPy arrays; torch is not imported.  Everything is checked before anything is set: another number of
        groups or parameters, a shape that differs, a setting this optimizer does not have (Adam's
        ``decoupled_weight_decay=True`` is AdamW) or a value out of range is an error naming it.

        >>> import numpy as np, tensorlib as tl
        >>> w = tl.Variable([1.0, 2.0])
        >>> opt = tl.optimizers.SGD([w], lr=0.1, momentum=0.9)
        >>> torch_state = {"state": {0: {"momentum_buffer": np.array([0.5, -1.0])}},
        ...                "param_groups": [{"lr": 0.2, "momentum": 0.9, "dampening": 0, "weight_decay": 0,
        ...                                  "nesterov": False, "maximize": False, "params": [0]}]}
        >>> opt.load_torch_state_dict(torch_state)
        >>> opt.apply([tl.tensor([1.0, 1.0])])  # buf = 0.9 * buf + g; w -= 0.2 * buf
        >>> [round(x, 6) for x in w.numpy().tolist()]
        [0.71, 1.98]
        """
        who = f"{type(self).__name__}.load_torch_state_dict"
        if not self._torch_state:
            raise NotImplementedError(
                f"{who}: converts the state of torch.optim's SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, NAdam, RAdam "
                f"and Adadelta, not of {type(self).__name__}"
            )
        try:
            groups, state = list(state_dict["param_groups"]), dict(state_dict["state"])
        except (TypeError, KeyError):
            raise TypeError(
                f"{who}: expected torch.optim's state_dict(), a dict with 'state' and 'param_groups'"
            ) from None
        made = self._groups[0]["params"] is not None
        ours = [self._group_params(i) for i in range(len(self._groups))]
        if not made or [len(g.get("params", ())) for g in groups] != [len(p) for p in ours]:
            raise ValueError(
                f"{who}: torch's groups hold {[len(g.get('params', ())) for g in groups]} parameters, this optimizer's "
                f"{[len(p) for p in ours] if made else 'none (made without them)'}; make it from the same parameters "
                "in the same groups, as torch's param_groups"
            )
        settings, slots, steps = [], [], []
        for i, group in enumerate(groups):
            given = {k: v for k, v in group.items() if k not in self._TORCH_ONLY}
            if isinstance(self, Adam):  # Adam's decoupled_weight_decay is a class here (NAdam's, RAdam's a flag)
                decoupled = bool(given.pop("decoupled_weight_decay", isinstance(self, AdamW)))
                if decoupled != isinstance(self, AdamW):
                    raise ValueError(
                        f"{who}: group {i} has decoupled_weight_decay={decoupled}; load it into "
                        f"{'an AdamW' if decoupled else 'an Adam'}"
                    )
            given = canonical(type(self), given, who)
            unknown = sorted(set(given) - set(settable(type(self))))
            if unknown:
                raise ValueError(f"{who}: group {i} has settings {unknown} that {type(self).__name__} does not have")
            with self._using(i):
                if self._schedule is not None:  # the group's schedule stays; torch's lr was its value
                    given.pop("learning_rate", None)
            for name, value in given.items():  # checked as setting them checks, before anything is set
                if name == "learning_rate":
                    _non_negative(value, who, f"group {i} lr")
                elif name in (*type(self)._flag_names, "maximize"):
                    _flag(value, who, f"group {i} {name}")
                else:
                    self._checked(name, value)
            settings.append(given)
            for j, (index, var) in enumerate(zip(group["params"], ours[i])):
                arrays = {}
                for key, value in state.get(index, {}).items():
                    if key not in self._torch_state:
                        raise ValueError(
                            f"{who}: parameter {index} has state {key!r}, which {type(self).__name__} does not keep"
                        )
                    name = self._torch_state[key]
                    if name is None:
                        if key == "step":  # torch counts steps that no slot here keeps: iterations still does
                            steps.append(int(_torch_array(value)))
                        continue
                    arrays[name] = _torch_array(value)
                    want = () if name in ("step", *self._scalar_names) else _slot_layout(var)[0]
                    if var.dtype.kind == "c" and want and np.iscomplexobj(arrays[name]):
                        # torch keeps a complex parameter's state complex; the slots hold its view_as_real pairs
                        if arrays[name].shape != tuple(var.shape):
                            raise ValueError(
                                f"{who}: parameter {index}'s {key!r} has shape {arrays[name].shape}, but variable "
                                f"{var.name!r} (group {i}, position {j}) needs {tuple(var.shape)}"
                            )
                        arrays[name] = np.stack([arrays[name].real, arrays[name].imag], axis=-1)
                    elif np.iscomplexobj(arrays[name]):
                        raise ValueError(
                            f"{who}: parameter {index}'s {key!r} is complex ({arrays[name].dtype}), but variable "
                            f"{var.name!r} (group {i}, position {j}) is {var.dtype}"
                        )
                    if arrays[name].shape != want:
                        raise ValueError(
                            f"{who}: parameter {index}'s {key!r} has shape {arrays[name].shape}, but variable "
                            f"{var.name!r} (group {i}, position {j}) needs {want}"
                        )
                slots.append((i, var, arrays))
        for i, given in enumerate(settings):
            with self._using(i):
                for name, value in given.items():
                    setattr(self, name, value)
        for position, (i, var, arrays) in enumerate(slots):
            with self._using(i):
                held = self._slots_for(str(position), var)
            for name, slot in held.items():
                if name in arrays:
                    value = arrays[name].astype(slot.dtype.name)
                elif name == "step" and "momentum" in arrays:  # SGD with dampening: the buffer took its first step
                    value = np.int64(1)
                else:
                    value = self._slot_begin(name, var)
                slot.assign(value)
            steps += [int(arrays["step"])] if "step" in arrays else []
        if steps:
            self.iterations.assign(np.int64(max(steps)))

    def __getstate__(self) -> dict:
        # Slots are found by their variable's id, and a copy (copy.deepcopy, pickle) of the variable gets a
        # new one: the copy lists them by variable and finds them again by the copied variables' ids.
        state = dict(self.__dict__)
        state["_slots"] = list(self._slots.values())
        return state

    def __setstate__(self, state: dict) -> None:
        state["_slots"] = {var._id: (key, var, slots) for key, var, slots in state["_slots"]}
        groups = state.get("_groups", ())
        state["_group_of"] = {v._id: i for i, g in enumerate(groups) for v in g["params"] or ()}
        self.__dict__.update(state)

    @property
    def learning_rate(self):
        """The schedule, or the constant learning rate as a float.

        Setting it takes effect at the next step, a traced one too (as assigning Keras' ``learning_rate``
        or a ``torch.optim`` param group's ``"lr"``): a constant lives in a Variable that traced steps
        read at every call, and a traced step retraces when a schedule is set or replaced.  A 0-d
        float ``tl.Variable`` given as the learning rate is read at every step; assigning it changes it.
        A callable of no arguments (Keras' form) is called at every eager step; a traced step calls it
        while tracing, as ``tf.function`` does, so to change between traced steps it returns a Variable.

        >>> import tensorlib as tl
        >>> w = tl.Variable([1.0])
        >>> opt = tl.optimizers.SGD(0.1)
        >>> step = tl.function(lambda: opt.apply([tl.tensor([1.0])], [w]))
        >>> step()
        >>> opt.learning_rate = 0.5
        >>> step()
        >>> round(float(w[0]), 6)  # 1 - 0.1 - 0.5
        0.4
        """
        if isinstance(self._schedule, _Unstepped):
            return self._schedule.fn
        return self._schedule if self._schedule is not None else float(self._lr.numpy())

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        if callable(value) and not isinstance(value, Tensor):
            self._schedule, self._lr_key = _schedule_of(value), next(_lr_keys)
            return
        given = isinstance(value, Variable) and value.shape == () and value.dtype.kind == "f"
        try:
            if isinstance(value, (str, bytes)):  # float("0.1") had made a string a rate
                raise TypeError
            rate = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"{type(self).__name__}: learning_rate must be a number, a 0-d float tl.Variable or a schedule "
                f"(a callable of the step), got {type(value).__name__} {value!r}"
            ) from None
        if not rate >= 0:
            raise ValueError(f"{type(self).__name__}: learning_rate must be >= 0, got {rate}")
        if given:
            self._lr, self._lr_key = value, next(_lr_keys)  # read at every step, by reference: the user assigns it
        elif self._schedule is not None or self._lr is None or self._lr is not self._own_lr:
            self._lr = self._own_lr = Variable(np.float64(rate), name="learning_rate", trainable=False)
            self._lr_key = next(_lr_keys)
        else:
            self._lr.assign(np.float64(rate))  # the same Variable: a traced step reads the new value
        self._schedule = None

    @property
    def _trace_key(self) -> tuple:
        """What a traced step's graph bakes in: the rate's key (a new one for each schedule or Variable set
        as the rate), the facts about the hyperparameters that pick ops (``_rule_switches``), and every other
        number or flag set on the optimizer (``nesterov``, ``amsgrad``, ``clipnorm``, ...).  The
        hyperparameters' values are read from Variables at every call: setting ``opt.beta_1 = 0.8`` between
        traced steps is used by the next one without tracing again; ``opt.weight_decay = 0.0`` (which drops
        the decay's ops) or ``opt.clipnorm`` retrace, as setting a schedule does."""
        state = vars(self)
        names = state.get("_baked_names")
        if names is None:  # found once (3.5 us a step for the scan; 0.3 us for the lookups)
            names = self._baked_names = tuple(
                k for k, v in state.items() if k[0] != "_" and (v is None or isinstance(v, (bool, int, float)))
            )
        key = (self._lr_key, *map(state.get, names), *self._rule_switches())
        for index in range(1, len(self._groups)):  # each group's rate and the facts that pick its ops
            with self._using(index):
                key += (index, self._lr_key, *self._rule_switches())
        return key

    def _rule_switches(self) -> tuple:
        """What the update's Python branches read from the hyperparameters: each one's sign (``if
        self.weight_decay``, ``momentum > 0``; a NaN counts with the negatives, as both tests see it)."""
        return tuple((v > 0, v == 0) for v in self.__dict__.get("_hyper_values", {}).values())

    def _checked(self, name: str, value) -> float:
        """Hyperparameter ``name`` set to ``value``, as a float, checked as ``torch.optim``'s constructors check it
        (``_ranges``; the rest must be >= 0): a NaN, negative or out-of-range value is a ValueError, a string a
        TypeError naming it ("0.9" was read as a number).  The constructor, a setting between steps and a loaded
        checkpoint all pass here (a checkpoint's ``beta_1=1.5`` or ``epsilon=-1`` had loaded silently)."""
        number = _number(value, type(self).__name__, name)
        bounds = dict(self._ranges).get(name, ">= 0")
        if not _RANGES[bounds](number):
            raise ValueError(
                f"{type(self).__name__}: {name} must be {'>= 0' if bounds == '>= 0' else 'in ' + bounds}, got {value}"
            )
        return number

    def _slots_for(self, key: str, var: Variable) -> dict:
        """The slots of ``var``, created at its first update and keyed by its path in that structure.

        Slots hold the dtype the update is computed in (float32 for a float16 variable).  A slot
        restored from a checkpoint before the variable was first seen (or, for one seen, a slot its flags did
        not call for until the checkpoint's flags were loaded) starts from the file's value.
        """
        entry = self._slots.get(var._id)
        key = self._new_key(key, var) if entry is None else entry[0]
        restored = self._restored.get(key, {}) if self._restored else {}
        for name, value in restored.items():
            want = {
                "counter": ((), np.dtype(np.int64)),
                "scalar": ((), np.dtype(np.float64)),
            }.get(self._slot_kinds().get(name)) or _slot_layout(var)
            if (tuple(value.shape), np.dtype(value.dtype.name)) != want:
                raise ValueError(
                    f"{type(self).__name__}: the checkpoint's slot {key}/{name} has shape {tuple(value.shape)} "
                    f"{value.dtype}, but variable {var.name!r} ({var.shape} {var.dtype}) needs {want[0]} {want[1]}"
                )
        if restored:
            del self._restored[key]
        if entry is None:
            entry = self._slots[var._id] = (key, var, {})
        key, _, slots = entry
        # Every slot the optimizer's arguments call for now: one set after the first step (SGD's momentum
        # turned on, as a torch.optim param group's momentum may be; amsgrad; centered) starts from its
        # initial value, where the update had failed with a bare KeyError.
        for name in (*self._slot_names, *self._counter_names, *self._scalar_names):
            if name not in slots:
                slots[name] = self._new_slot(key, name, var, restored.get(name))
        return slots

    def _new_slot(self, key: str, name: str, var: Variable, restored) -> Variable:
        """Slot ``name`` of ``var``: the checkpoint's value, or its start."""
        value = restored.numpy() if restored is not None else self._slot_begin(name, var)
        return Variable(value, name=f"{key}/{name}", trainable=False, backend=var.backend)

    def _slot_begin(self, name: str, var: Variable) -> np.ndarray:
        """The value slot ``name`` of ``var`` starts from (0-d for counters and scalars)."""
        if name in self._counter_names:
            return np.int64(0)
        if name in self._scalar_names:
            return np.float64(self._slot_start(name))
        shape, dtype = _slot_layout(var)
        return np.full(shape, self._slot_start(name), dtype)

    def _state_loaded(self, head: str, names) -> None:
        """After a checkpoint holding this optimizer's state loaded (its names ``head + key.slot``): every slot it
        gave no value starts again, as a variable without state in a ``torch.optim`` ``load_state_dict`` does.
        A partial load (``strict=False``) had kept such slots from before the load (moments of 3 steps beside a
        step counter of 1; a pending slot of an earlier file, used at the first step), silently."""
        given = {name[len(head) :] for name in names if name.startswith(head)}
        for key in list(self._restored):
            kept = {n: v for n, v in self._restored[key].items() if f"{key}.{n}" in given}
            if kept:
                self._restored[key] = kept
            else:
                del self._restored[key]
        for key, var, slots in self._slots.values():
            for name, slot in slots.items():
                if f"{key}.{name}" not in given:
                    slot.assign(self._slot_begin(name, var))

    def _new_key(self, path: str, var: Variable) -> str:
        """The slot key of a variable first seen at ``path``: the path, or ``path/name`` where another
        variable came to the same path (one optimizer serving two models).  Keys are names in checkpoints,
        where "." separates names (a variable named "fc1.weight" passed alone made the state unsaveable).

        Two variables at one path are told apart by their names, whatever order ``apply`` sees them in: the
        first one's key becomes ``path/its name`` too, and a checkpoint restores each by its name.  Keyed
        by the order of ``apply`` calls alone, the first kept ``path``, and a restored optimizer that saw
        the models in the other order gave each the other's slots.  Variables of one name at one path can
        only be told apart by that order: a warning says so."""
        base = path.replace(".", "_")
        taken = {k: vid for vid, (k, _, _) in self._slots.items()}
        named = f"{base}/{var.name}".replace(".", "_")
        if base not in taken and base not in self._split:
            # Alone at its path, unless a checkpoint written after a split holds this variable's name.
            return named if named in self._restored and base not in self._restored else base
        owner = taken.get(base)
        if owner is not None:
            first = self._slots[owner][1]
            if first.name != var.name:
                self._rekey(owner, f"{base}/{first.name}".replace(".", "_"))
                self._split.add(base)
            else:
                warnings.warn(
                    f"{type(self).__name__}: two variables named {var.name!r} came at the path {path!r}; their "
                    "slots are told apart only by the order of apply calls, so a checkpoint restores them right "
                    "only if a new optimizer sees them in the same order (give the variables distinct names, or "
                    "use one optimizer per model)",
                    stacklevel=4,
                )
        key = named
        while key in taken or key == base:  # a third variable of a taken name: the order decides
            key = f"{key}/{var.name}".replace(".", "_")
        return key

    def _rekey(self, vid: int, key: str) -> None:
        """Move a variable's slots (and their names) to ``key``."""
        _, var, slots = self._slots[vid]
        for name, slot in slots.items():
            slot.name = f"{key}/{name}"
        self._slots[vid] = (key, var, slots)

    def build(self, variables) -> None:
        """Create the slots of every Variable in ``variables`` now, as the first ``apply`` would (Keras' ``build``).

        ``variables`` then lists them, so a checkpoint loads strictly into an optimizer that has taken
        no step.  Without ``build``, ``tl.load_variables`` keeps the slots it finds for variables not
        seen yet and they start from the file's values at the first ``apply``.  As in Keras,
        ``apply(grads)`` without variables then updates these (a Module: its trainable variables at
        that step).

        >>> import tensorlib as tl
        >>> opt = tl.optimizers.Adam()
        >>> w = tl.Variable([1.0, 2.0])
        >>> opt.build({"w": w})
        >>> sorted(opt.variables["slots"]["w"])
        ['m', 'step', 'v']
        >>> opt.apply({"w": tl.tensor([1.0, -1.0])})
        >>> [round(x, 6) for x in w.numpy().tolist()]
        [0.999, 2.001]
        """
        who = f"{type(self).__name__}.build"
        pairs = _pairs(variables, variables, who)
        _check_float(pairs, who)
        self._all_slots(pairs, who)
        self._built = variables

    def _all_slots(self, pairs: list, who: str) -> list:
        """The slots of every pair's variable, made where missing; a warning when new ones start from zero
        while slots restored from a checkpoint stay unmatched (as TensorFlow warns of unresolved checkpoint
        objects): keys are paths in the first ``apply``'s structure, and one of another shape
        (``apply_gradients`` of a list after ``apply`` of a model's dict) silently resumed from zero moments."""
        if not self._restored:  # (every step after the first: nothing to match)
            return [self._group_slots(key, v, who) for key, _, v in pairs]
        pending, seen = set(self._restored), set(self._slots)
        slots = [self._group_slots(key, v, who) for key, _, v in pairs]
        fresh = [key for vid, (key, _, _) in self._slots.items() if vid not in seen and key not in pending]
        if fresh and self._restored:
            warnings.warn(
                f"{who}: the checkpoint's slots for {sorted(self._restored)} match no variable of this step, and "
                f"new slots start from zero for {fresh}; a slot's key is its variable's path in the structure "
                "given to apply (pass the structure the checkpoint was saved with)",
                stacklevel=3,
            )
        return slots

    def _group_slots(self, key: str, var: Variable, who: str) -> dict:
        """The slots of ``var``, made as its group's flags call for."""
        if len(self._groups) == 1 and self._groups[0]["params"] is None:
            return self._slots_for(key, var)
        with self._using(self._group_index(var, who)):
            return self._slots_for(key, var)

    def _restore_slots(self, restored: dict) -> None:
        """Keep ``{slot key: {slot name: array}}`` from a checkpoint, as Variables listed in ``variables``
        (so saving again keeps them), until that variable is first seen."""
        for key, named in restored.items():
            self._restored.setdefault(key, {}).update(
                {name: Variable(a, name=f"{key}/{name}", trainable=False) for name, a in named.items()}
            )

    def _slot_start(self, name: str) -> float:
        """The value a new slot starts from (0; Adagrad's accumulator starts elsewhere)."""
        return 0.0

    def _slot_kinds_from(self, settings: dict) -> dict:
        """:meth:`_slot_kinds` under the hyperparameters and flags of ``settings`` (``{name: 0-d array}``, a
        checkpoint's, before they are assigned): which slots a file written with other flags holds (SGD's
        momentum buffer for an ``SGD()`` loading a momentum run, Adam's ``v_max`` for ``amsgrad``)."""
        values = self.__dict__.get("_hyper_values", {})
        given = {n: np.asarray(a).item() for n, a in settings.items() if n in values and np.ndim(a) == 0}
        self.__dict__["_hyper_values"] = {**values, **given}
        try:
            return self._slot_kinds()
        finally:
            self.__dict__["_hyper_values"] = values

    def _slot_kinds(self) -> dict:
        """``{slot name: "slot"}`` for a variable-shaped float slot, ``"counter"`` for a 0-d int64 step counter,
        ``"scalar"`` for a 0-d float64 state."""
        kinds = {n: "slot" for n in self._slot_names}
        kinds.update({n: "counter" for n in self._counter_names})
        kinds.update({n: "scalar" for n in self._scalar_names})
        return kinds

    def apply(self, grads, variables=None) -> None:
        """Update ``variables`` in place from ``grads`` (same nested structure; None gradients are skipped).

        ``variables`` may be a Module: its ``trainable_variables`` are updated.  Left out, they are the
        ones given to :meth:`build` (Keras' ``apply(grads)``).

        A float16 variable is updated in float32 (its slots are float32) and the result rounded to
        float16, as PyTorch's mixed-precision optimizers and optax's float32 moments do: in float16,
        Adam's ``epsilon=1e-8`` and small squared gradients are 0, and its step was NaN or infinite.
        """
        who = f"{type(self).__name__}.apply"
        if variables is None and self._built is None and self._groups[0]["params"] is not None:
            variables = [v for i in range(len(self._groups)) for v in self._groups[i]["params"]]
        if variables is None:
            if self._built is None:
                raise TypeError(
                    f"{who}: no variables given, and the optimizer was not built; pass apply(grads, variables) "
                    "or call build(variables) first"
                )
            variables = self._built
        pairs = _pairs(grads, variables, who)
        if not pairs:
            given = tree.leaves(variables.trainable_variables if isinstance(variables, Module) else variables)
            if given:  # a loss that does not reach the variables trained nothing, silently (Keras raises too)
                raise ValueError(
                    f"{who}: every gradient is None ({len(given)} variables), so no variable would change: the "
                    "loss does not depend on them (computed outside the GradientTape, or through .numpy()?)"
                )
            return
        _check_float(pairs, who)
        self._check_conflicts(who, range(len(self._groups)))  # before any variable changes
        # Every slot exists (or failed to restore) before any variable changes.
        slots = self._all_slots(pairs, who)
        if not current_state().modes:  # (a traced step's assigns are checked when the graph runs)
            self._check_assignable(who, [v for _, _, v in pairs], slots)
        state_read(self, "_trace_key")  # a traced step retraces when what its graph bakes in changes
        with tapes_paused():  # a step is not differentiated: torch.optim steps under no_grad
            self._step(pairs, slots)

    def _step(self, pairs: list, slots: list) -> None:
        if self.global_clipnorm is not None or self.clipnorm is not None or self.clipvalue is not None:
            pairs = [(key, g, v) for (key, _, v), g in zip(pairs, self._clipped([g for _, g, _ in pairs]))]
        # Steps already taken (the schedule's argument), in float64 so a float64 model sees lr exactly.
        step = _math_ops.cast(self.iterations, _dt.float64)
        if len(self._groups) == 1:
            self._step_group(pairs, slots, step)
        else:
            where = [self._group_index(v, "") for _, _, v in pairs]
            for index in sorted(set(where)):
                with self._using(index):
                    self._step_group(
                        [p for p, i in zip(pairs, where) if i == index],
                        [s for s, i in zip(slots, where) if i == index],
                        step,
                    )
        self.iterations.assign_add(np.int64(1))

    def _step_group(self, pairs: list, slots: list, step: Tensor) -> None:
        """Update ``pairs`` (of the group in use) with that group's rate and hyperparameters."""
        if self.maximize:  # ascent: the negated gradient, before weight decay joins it (torch.optim's maximize)
            pairs = [(key, -g, v) for key, g, v in pairs]
        lr = _lr_at(self._schedule, step) if self._schedule is not None else _math_ops.cast(self._lr, _dt.float64)
        by_dtype, traced = {}, bool(current_state().modes)
        eager_hypers = None if traced else _EagerHypers(self.__dict__.get("_hyper_values", {}))
        for (_, g, v), slots_v in zip(pairs, slots):
            pairs_of = v.dtype.kind == "c"  # complex: the update runs on (real, imaginary) pairs, as in PyTorch
            work = _compute_dtype(_dt.real_dtype(v.dtype) if pairs_of else v.dtype)
            if (work, v.backend) not in by_dtype:
                lr_b = _on(lr, v.backend)
                hypers = _Hypers(self.__dict__.get("_hypers", {}), work, v.backend) if traced else eager_hypers
                by_dtype[work, v.backend] = (_math_ops.cast(lr_b, work) if work != _dt.float64 else lr_b, hypers)
            lr_v, hp = by_dtype[work, v.backend]
            if pairs_of:
                new = self._update(_as_pairs(v, work), _ascent_pairs(g, work), lr_v, hp, slots_v)
                new = _elementwise.complex_(new[..., 0], new[..., 1])
            else:
                value = v if v.dtype == work else _math_ops.cast(v, work)
                new = self._update(value, _math_ops.cast(g, work) if g.dtype != work else g, lr_v, hp, slots_v)
            v.assign(new if new.dtype == v.dtype else _math_ops.cast(new, v.dtype))

    def _clipped(self, grads: list) -> list:
        """The gradients clipped by the one clipping argument set (Keras' ``_clip_gradients``)."""
        if self.clipnorm is not None:
            return [clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm is not None:
            return clip_by_global_norm(grads, self.global_clipnorm)[0]
        return [_clip_value(g, self.clipvalue) for g in grads]

    def apply_gradients(self, grads_and_vars) -> None:
        """TensorFlow's form of :meth:`apply`: an iterable of ``(gradient, variable)`` pairs.

        >>> import tensorlib as tl
        >>> w = tl.Variable([1.0])
        >>> tl.optimizers.SGD(0.5).apply_gradients(zip([tl.tensor([1.0])], [w]))
        >>> w.numpy().tolist()
        [0.5]
        """
        pairs = list(grads_and_vars)
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(
                    f"{type(self).__name__}.apply_gradients: entry {i} is a {type(pair).__name__}, not a "
                    "(gradient, variable) pair; pass zip(grads, variables)"
                )
        self.apply([g for g, _ in pairs], [v for _, v in pairs])

    def _check_assignable(self, who: str, variables: list, slots: list) -> None:
        """Refuse the step before any assign, so a refused one changes neither a variable nor a slot (an
        assign refused halfway, to a variable a recording tape had read, left the earlier slots stepped)."""
        for var in [*variables, *(s for named in slots for s in named.values()), self.iterations]:
            try:
                check_assignable(var)
            except RuntimeError as e:
                raise RuntimeError(f"{who}: {e}") from None

    def _update(self, var, grad, lr, hp, slots) -> Tensor:
        raise TypeError(f"{type(self).__name__}: an Optimizer subclass must define _update")

    @property
    def variables(self) -> dict:
        """``{"iterations": ..., "learning_rate": ..., "slots": {path: {slot: Variable}}}`` for checkpoints.

        A variable's path is where it sat in the structure of its first ``apply``
        (``"0/kernel"`` for ``model.trainable_variables["0"]["kernel"]``; its name when
        passed alone; a ``"."``, the checkpoints' separator, becomes ``"_"``), so a fresh optimizer
        for the same model restores by name.  Two variables at one path (one optimizer for two models)
        are ``"path/name"`` each, so they restore by name in whatever order ``apply`` sees them.  ``learning_rate`` is there for a constant rate (one
        changed during training is restored, as by ``torch.optim``'s ``load_state_dict`` and Keras'
        optimizer variables); not for a schedule (a function of ``iterations``) or a rate Variable
        given by the caller, which is the caller's to save.  ``hyperparameters`` holds the numbers of the rule
        (``beta_1``, ``epsilon``, ``momentum``, ``weight_decay``, ...) and its flags (``amsgrad``, ``nesterov``,
        ``centered``, ``maximize``, ...), restored with the slots they call for, as ``torch.optim``'s
        loads and keeps the optimizer's own).  Parameter groups after the first (group 0's settings are the ones
        above) are under ``param_groups``: ``{"1": {"learning_rate": ..., "hyperparameters": {...}}, ...}``.
        """
        slots = {key: dict(named) for key, named in self._restored.items()}  # restored, not used yet
        for key, _, named in self._slots.values():
            slots[key] = {**slots.get(key, {}), **named}
        state = {"iterations": self.iterations, **self._group_variables()}
        groups = {}
        for index in range(1, len(self._groups)):
            with self._using(index):
                groups[str(index)] = self._group_variables()
        if groups:
            state["param_groups"] = groups
        return {**state, "slots": slots}

    def _group_variables(self) -> dict:
        """The Variables of the group in use: a constant rate of its own, its hyperparameters and flags."""
        state = {}
        if self._schedule is None and self._lr is self._own_lr:
            state["learning_rate"] = self._lr
        hypers = self.__dict__.get("_hypers")
        if hypers:
            state["hyperparameters"] = dict(hypers)
        return state

    def _setting_heads(self) -> list:
        """``[(name prefix, group index)]`` of each group's hyperparameters in :attr:`variables`' names."""
        return [("hyperparameters.", 0)] + [
            (f"param_groups.{i}.hyperparameters.", i) for i in range(1, len(self._groups))
        ]

    def _refused_settings(self, state: dict) -> dict:
        """``{name: why}`` for the numbers of a checkpoint's hyperparameters (``state``: ``{name: array}``, named
        as in :attr:`variables`) that :meth:`_checked` refuses, as the constructor and a setting would (flags' and
        shapes' dtypes are checked with every entry's)."""
        problems = {}
        for head, index in self._setting_heads():
            with self._using(index):
                numbers = self.__dict__.get("_hyper_values", {})
                for name, a in state.items():
                    setting = name[len(head) :] if name.startswith(head) else None
                    if isinstance(numbers.get(setting), float) and a is not None and np.ndim(a) == 0:
                        try:
                            self._checked(setting, np.asarray(a).item())
                        except (TypeError, ValueError) as e:
                            problems[name] = str(e)
        return problems

    def _slot_kinds_in(self, state: dict) -> tuple:
        """``(kinds, kinds_of)``: :meth:`_slot_kinds` of any group under the settings ``state`` (a checkpoint's,
        named as in :attr:`variables`) gives, the slots a file written with other flags holds; and a function of a
        slot key giving the kinds of that key's group (for a key of no variable seen yet, with several groups,
        the kinds every group has)."""
        by_group = {}
        for head, index in self._setting_heads():
            with self._using(index):
                by_group[index] = self._slot_kinds_from(
                    {n[len(head) :]: a for n, a in state.items() if n.startswith(head)}
                )
        kinds = {name: kind for group in by_group.values() for name, kind in group.items()}
        common = {name: kind for name, kind in kinds.items() if all(name in g for g in by_group.values())}
        group_of_key = {key: self._group_of.get(var._id, 0) for key, var, _ in self._slots.values()}
        return kinds, lambda key: by_group[group_of_key[key]] if key in group_of_key else common

    def _hyperparameters_loaded(self) -> None:
        """After a checkpoint assigned the hyperparameters' Variables: the floats an eager step and the rule's
        branches read take their values (set as ``opt.beta_1 = value`` sets both), in every group."""
        for index in range(len(self._groups)):
            with self._using(index):
                for name, held in self.__dict__.get("_hypers", {}).items():
                    setattr(self, name, held.numpy().item())


def _moments(slots, grad, hp) -> tuple:
    """Adam's moving averages of the gradient and its square, updated in ``slots`` and returned."""
    m = hp.beta_1 * slots["m"] + hp.complement("beta_1") * grad
    v = hp.beta_2 * slots["v"] + hp.complement("beta_2") * _math_ops.square(grad)
    slots["m"].assign(m)
    slots["v"].assign(v)
    return m, v


def _decayed(opt, var, grad, lr, hp, decoupled: bool) -> tuple:
    """``(var, grad)`` after ``opt``'s weight decay: L2 adds ``wd * w`` to the gradient, decoupled scales ``w``
    by ``1 - lr * wd`` (AdamW's)."""
    if not opt.weight_decay:
        return var, grad
    if decoupled:
        return var * (1.0 - lr * hp.weight_decay), grad
    return var, grad + hp.weight_decay * var


def _counted(slots, dtype=_dt.float64) -> Tensor:
    """A variable's own step counter advanced by this step, as ``dtype``: its step number ``t`` (1-based)."""
    slots["step"].assign_add(np.int64(1))
    return _math_ops.cast(slots["step"], dtype)


def _in(value: Tensor, like: Tensor) -> Tensor:
    """A float64 scalar computed from the step counter, in the update's dtype."""
    return value if value.dtype == like.dtype else _math_ops.cast(value, like.dtype)


def _torch_array(value) -> np.ndarray:
    """A torch tensor (read without importing torch) or an array-like, as a NumPy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        # NumPy has no bfloat16 or complex32: torch's .numpy() refuses them (state of a bfloat16/half model)
        widened = {"torch.bfloat16": "float", "torch.complex32": "cfloat"}.get(str(value.dtype))
        value = (getattr(value, widened)() if widened else value).numpy()
    return np.asarray(value)


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum (PyTorch's form) and Nesterov momentum.

    ``g += weight_decay * w``; with momentum ``buf = momentum * buf + (1 - dampening) * g``
    (``buf = g`` at a variable's first step, as in PyTorch) and the step is ``buf`` (or
    ``g + momentum * buf`` with ``nesterov=True``); ``w -= lr * step``.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> opt = tl.optimizers.SGD(0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.apply([tl.tensor([1.0])], [w])
    >>> round(float(w[0]), 4)  # 1 - 0.1 * 1 - 0.1 * 1.9
    0.71
    """

    _hyperparameters = ("momentum", "weight_decay", "dampening")
    _flag_names = ("nesterov",)
    _torch_state = {"momentum_buffer": "momentum"}

    def __init__(
        self,
        learning_rate=0.01,
        momentum: float = 0.0,
        nesterov: bool = False,
        weight_decay: float = 0.0,
        global_clipnorm: float | None = None,
        dampening: float = 0.0,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.momentum, self.nesterov, self.weight_decay = momentum, nesterov, weight_decay
        self.dampening = dampening
        conflict = self._conflict(self._hyper_values)
        if conflict:
            raise ValueError(f"SGD: {conflict}")

    @staticmethod
    def _conflict(values: dict) -> str | None:
        if values["nesterov"] and (not values["momentum"] > 0 or values["dampening"] != 0):
            return (
                f"nesterov=True needs a positive momentum and zero dampening, got momentum={values['momentum']}, "
                f"dampening={values['dampening']}"
            )
        return None

    # The slots follow the arguments as they are now (momentum may be set after the first step, as in a
    # torch.optim param group): Optimizer._slots_for adds the missing ones.
    @property
    def _slot_names(self) -> tuple:
        return ("momentum",) if self.momentum > 0 else ()

    @property
    def _counter_names(self) -> tuple:
        # With dampening, a variable's first step differs (buf = g): each variable counts its steps.
        return ("step",) if self.momentum > 0 and self.dampening else ()

    def _slots_for(self, key: str, var: Variable) -> dict:
        seen = self._slots.get(var._id)
        started = seen is not None and "momentum" in seen[2] and "step" not in seen[2]
        slots = super()._slots_for(key, var)
        if started and "step" in slots:  # dampening set after the buffer took steps: the next is no first step
            slots["step"] = Variable(np.int64(1), name=slots["step"].name, trainable=False, backend=var.backend)
        return slots

    def _update(self, var, grad, lr, hp, slots):
        _, grad = _decayed(self, var, grad, lr, hp, False)
        if self.momentum > 0:
            buf = slots["momentum"]
            if self.dampening:
                first = slots["step"] == 0
                slots["step"].assign_add(np.int64(1))
                damped = _math_ops.where(first, grad, hp.complement("dampening") * grad)
                new_buf = hp.momentum * buf + damped  # buf is 0 before the first step
            else:
                new_buf = hp.momentum * buf + grad
            buf.assign(new_buf)
            grad = grad + hp.momentum * new_buf if self.nesterov else new_buf
        return var - lr * grad


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) with bias correction; ``weight_decay`` adds ``wd * w`` to the gradient (L2).

    ``m = b1 m + (1 - b1) g``; ``v = b2 v + (1 - b2) g^2``;
    ``w -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon)``.
    ``amsgrad=True`` (Reddi et al. 2018, PyTorch's form) divides by the running maximum of ``v``
    instead: ``v_max = max(v_max, v)``, ``w -= lr * (m / (1 - b1^t)) / (sqrt(v_max / (1 - b2^t)) + epsilon)``.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.Adam(0.1).apply([tl.tensor([5.0])], [w])  # the first step moves by lr
    >>> round(float(w[0]), 6)
    0.9
    """

    # Each variable counts its own steps for the bias corrections, as torch.optim.Adam does: a
    # variable that got no gradient on some steps is corrected by the steps it actually took.
    _counter_names = ("step",)
    _hyperparameters = ("beta_1", "beta_2", "epsilon", "weight_decay")
    _ranges = (("beta_1", "[0, 1)"), ("beta_2", "[0, 1)"))
    _flag_names = ("amsgrad",)
    _torch_state = {"exp_avg": "m", "exp_avg_sq": "v", "max_exp_avg_sq": "v_max", "step": "step"}

    def __init__(
        self,
        learning_rate=1e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        weight_decay: float = 0.0,
        global_clipnorm: float | None = None,
        amsgrad: bool = False,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.beta_1, self.beta_2, self.epsilon, self.weight_decay = beta_1, beta_2, epsilon, weight_decay
        self.amsgrad = amsgrad

    @property
    def _slot_names(self) -> tuple:
        return ("m", "v", "v_max") if self.amsgrad else ("m", "v")

    def _decay(self, var, grad, lr, hp) -> tuple:
        """(the value the step starts from, the gradient the moments see): L2 decay joins the gradient."""
        return _decayed(self, var, grad, lr, hp, False)

    def _update(self, var, grad, lr, hp, slots):
        start, grad = self._decay(var, grad, lr, hp)
        m, v = _moments(slots, grad, hp)
        if self.amsgrad:
            v = _math_ops.maximum(slots["v_max"], v)
            slots["v_max"].assign(v)
        slots["step"].assign_add(np.int64(1))
        t = _math_ops.cast(slots["step"], _dt.float64)
        # The corrections in float64 (PyTorch computes them in Python floats), then in the variable's dtype.
        m_hat = m / _in(1.0 - _math_ops.power(hp.exact("beta_1"), t), var)
        v_hat = v / _in(1.0 - _math_ops.power(hp.exact("beta_2"), t), var)
        return start - lr * m_hat / (_math_ops.sqrt(v_hat) + hp.epsilon)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019): ``w -= lr * wd * w`` before the Adam step.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.AdamW(0.1, weight_decay=0.5).apply([tl.tensor([0.0])], [w])
    >>> round(float(w[0]), 6)  # decay only: 1 - 0.1 * 0.5
    0.95
    """

    def __init__(
        self,
        learning_rate=1e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        weight_decay: float = 0.01,
        global_clipnorm: float | None = None,
        amsgrad: bool = False,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(
            learning_rate,
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
            global_clipnorm,
            amsgrad,
            clipnorm,
            clipvalue,
            maximize,
        )

    def _decay(self, var, grad, lr, hp) -> tuple:
        return _decayed(self, var, grad, lr, hp, True)


class RMSprop(Optimizer):
    """RMSprop in PyTorch's form: ``v = rho v + (1 - rho) g^2``; ``w -= lr * g / (sqrt(v) + epsilon)``.

    ``centered=True`` subtracts the squared running mean of ``g`` from ``v``;
    ``momentum > 0`` accumulates ``buf = momentum * buf + g / (sqrt(v) + epsilon)`` and steps by ``buf``.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.RMSprop(0.01, rho=0.99).apply([tl.tensor([2.0])], [w])
    >>> round(float(w[0]), 4)  # 1 - 0.01 * 2 / sqrt(0.01 * 4)
    0.9
    """

    _hyperparameters = ("rho", "epsilon", "momentum", "weight_decay")
    _ranges = (("rho", "[0, 1)"),)
    _flag_names = ("centered",)
    _torch_state = {"square_avg": "v", "grad_avg": "mean_grad", "momentum_buffer": "momentum", "step": None}

    def __init__(
        self,
        learning_rate=0.01,
        rho: float = 0.99,
        epsilon: float = 1e-8,
        momentum: float = 0.0,
        centered: bool = False,
        weight_decay: float = 0.0,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.rho, self.epsilon, self.momentum, self.centered = rho, epsilon, momentum, centered
        self.weight_decay = weight_decay

    @property
    def _slot_names(self) -> tuple:
        return ("v",) + (("mean_grad",) if self.centered else ()) + (("momentum",) if self.momentum > 0 else ())

    def _update(self, var, grad, lr, hp, slots):
        _, grad = _decayed(self, var, grad, lr, hp, False)
        rho, rest = hp.rho, hp.complement("rho")
        v = rho * slots["v"] + rest * _math_ops.square(grad)
        slots["v"].assign(v)
        if self.centered:
            mean_grad = rho * slots["mean_grad"] + rest * grad
            slots["mean_grad"].assign(mean_grad)
            v = v - _math_ops.square(mean_grad)
        direction = grad / (_math_ops.sqrt(v) + hp.epsilon)
        if self.momentum > 0:
            buf = hp.momentum * slots["momentum"] + direction
            slots["momentum"].assign(buf)
            direction = buf
        return var - lr * direction


class Adagrad(Optimizer):
    """Adagrad (Duchi et al. 2011) in PyTorch's form: ``acc += g^2``; ``w -= lr_t * g / (sqrt(acc) + epsilon)``.

    ``lr_t = lr / (1 + (t - 1) * lr_decay)`` at a variable's step ``t``; ``weight_decay`` adds ``wd * w`` to
    the gradient; the accumulator starts at ``initial_accumulator_value``.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> opt = tl.optimizers.Adagrad(0.1)
    >>> for _ in range(2):
    ...     opt.apply([tl.tensor([2.0])], [w])
    >>> round(float(w[0]), 4)  # 1 - 0.1 * 2 / 2 - 0.1 * 2 / sqrt(8)
    0.8293
    """

    _slot_names = ("accumulator",)
    _counter_names = ("step",)
    _torch_state = {"sum": "accumulator", "step": "step"}
    _hyperparameters = ("lr_decay", "weight_decay", "epsilon", "initial_accumulator_value")

    def __init__(
        self,
        learning_rate=0.01,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        epsilon: float = 1e-10,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.lr_decay, self.weight_decay = lr_decay, weight_decay
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon

    def _slot_start(self, name: str) -> float:
        return self.initial_accumulator_value if name == "accumulator" else 0.0

    def _update(self, var, grad, lr, hp, slots):
        _, grad = _decayed(self, var, grad, lr, hp, False)
        slots["step"].assign_add(np.int64(1))
        if self.lr_decay:
            t = _math_ops.cast(slots["step"], _dt.float64)
            lr = lr / _in(1.0 + (t - 1.0) * hp.exact("lr_decay"), var)
        acc = slots["accumulator"] + _math_ops.square(grad)
        slots["accumulator"].assign(acc)
        return var - lr * grad / (_math_ops.sqrt(acc) + hp.epsilon)


class Adamax(Optimizer):
    """Adamax (Kingma & Ba 2015, section 7.1), Adam with the infinity norm, in PyTorch's form.

    ``g += weight_decay * w``; ``m = b1 m + (1 - b1) g``; ``u = max(b2 u, |g| + epsilon)``;
    ``w -= lr / (1 - b1^t) * m / u`` at a variable's step ``t``.  (Keras adds ``epsilon`` to ``u`` instead:
    ``u = max(b2 u, |g|)``, ``m / (u + epsilon)``; they differ only where ``|g|`` is near ``epsilon``.)

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.Adamax(0.1).apply([tl.tensor([-3.0])], [w])  # the first step moves by lr
    >>> round(float(w[0]), 6)
    1.1
    """

    _slot_names = ("m", "u")
    _counter_names = ("step",)
    _torch_state = {"exp_avg": "m", "exp_inf": "u", "step": "step"}
    _hyperparameters = ("beta_1", "beta_2", "epsilon", "weight_decay")
    _ranges = (("beta_1", "[0, 1)"), ("beta_2", "[0, 1)"))

    def __init__(
        self,
        learning_rate=2e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        weight_decay: float = 0.0,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.beta_1, self.beta_2, self.epsilon, self.weight_decay = beta_1, beta_2, epsilon, weight_decay

    def _update(self, var, grad, lr, hp, slots):
        _, grad = _decayed(self, var, grad, lr, hp, False)
        m = hp.beta_1 * slots["m"] + hp.complement("beta_1") * grad
        u = _math_ops.maximum(hp.beta_2 * slots["u"], _math_ops.abs(grad) + hp.epsilon)
        slots["m"].assign(m)
        slots["u"].assign(u)
        t = _counted(slots)
        return var - lr / _in(1.0 - _math_ops.power(hp.exact("beta_1"), t), var) * m / u


class NAdam(Optimizer):
    """NAdam (Dozat 2016): Adam with Nesterov momentum and a momentum schedule, in PyTorch's form.

    At a variable's step ``t``: ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``, ``P_t = mu_1 ... mu_t``;
    ``m = b1 m + (1 - b1) g``; ``v = b2 v + (1 - b2) g^2``; ``d = sqrt(v / (1 - b2^t)) + epsilon``;
    ``w -= lr (1 - mu_t) / (1 - P_t) * g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) * m / d``.
    ``weight_decay`` adds ``wd * w`` to the gradient, or with ``decoupled_weight_decay=True`` (NAdamW) scales
    ``w`` by ``1 - lr * wd`` first.  The product ``P_t`` is a per-variable slot (float64).  The default
    ``momentum_decay=4e-3`` is PyTorch's and Dozat's ``0.96^(t/250)``; Keras' ``Nadam`` schedules the
    momentum with ``0.96^t``, which is ``momentum_decay=1.0`` here (with the default, a Keras model's
    trajectory is not reproduced: its first steps differ by several times the step).

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.NAdam(0.1).apply([tl.tensor([2.0])], [w])
    >>> round(float(w[0]), 4)  # 1 - 0.1 * 2 / 2 - 0.1 * mu_2 / (1 - mu_1 mu_2) * 0.2 / 2, mu_t close to 0.45
    0.8944
    """

    _slot_names = ("m", "v")
    _counter_names = ("step",)
    _scalar_names = ("mu_product",)
    _torch_state = {"exp_avg": "m", "exp_avg_sq": "v", "mu_product": "mu_product", "step": "step"}
    _hyperparameters = ("beta_1", "beta_2", "epsilon", "weight_decay", "momentum_decay")
    _ranges = (("beta_1", "[0, 1)"), ("beta_2", "[0, 1)"))
    _flag_names = ("decoupled_weight_decay",)

    def __init__(
        self,
        learning_rate=2e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.weight_decay, self.momentum_decay = weight_decay, momentum_decay
        self.decoupled_weight_decay = decoupled_weight_decay

    def _slot_start(self, name: str) -> float:
        return 1.0 if name == "mu_product" else 0.0

    def _update(self, var, grad, lr, hp, slots):
        var, grad = _decayed(self, var, grad, lr, hp, self.decoupled_weight_decay)
        b1, psi = hp.exact("beta_1"), hp.exact("momentum_decay")
        t = _counted(slots)
        mu = b1 * (1.0 - 0.5 * _math_ops.power(0.96, t * psi))
        mu_next = b1 * (1.0 - 0.5 * _math_ops.power(0.96, (t + 1.0) * psi))
        product = slots["mu_product"] * mu
        slots["mu_product"].assign(product)
        m, v = _moments(slots, grad, hp)
        denom = _math_ops.sqrt(v / _in(1.0 - _math_ops.power(hp.exact("beta_2"), t), var)) + hp.epsilon
        step_g = _in((1.0 - mu) / (1.0 - product), var)
        step_m = _in(mu_next / (1.0 - product * mu_next), var)
        return var - lr * step_g * grad / denom - lr * step_m * m / denom


class RAdam(Optimizer):
    """RAdam (Liu et al. 2020): Adam whose adaptive step is rectified by the variance of its estimate, in
    PyTorch's form.

    With ``rho_inf = 2 / (1 - b2) - 1`` and ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)`` at a variable's step
    ``t``: ``m``, ``v`` as in Adam, ``m_hat = m / (1 - b1^t)``; while ``rho_t <= 5`` the step is SGD with
    momentum, ``w -= lr * m_hat``; after it ``w -= lr * m_hat * r_t * sqrt(1 - b2^t) / (sqrt(v) + epsilon)``
    with ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.
    ``weight_decay`` is L2, or decoupled (``w *= 1 - lr * wd``) with ``decoupled_weight_decay=True``.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.RAdam(0.1).apply([tl.tensor([5.0])], [w])  # the first steps are SGD with momentum
    >>> round(float(w[0]), 6)
    0.5
    """

    _slot_names = ("m", "v")
    _counter_names = ("step",)
    _hyperparameters = ("beta_1", "beta_2", "epsilon", "weight_decay")
    _ranges = (("beta_1", "[0, 1)"), ("beta_2", "[0, 1)"))
    _flag_names = ("decoupled_weight_decay",)
    _torch_state = {"exp_avg": "m", "exp_avg_sq": "v", "step": "step"}

    def __init__(
        self,
        learning_rate=1e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.weight_decay, self.decoupled_weight_decay = weight_decay, decoupled_weight_decay

    def _rule_switches(self) -> tuple:
        # rho_t < rho_inf = 2 / (1 - b2) - 1: with rho_inf <= 5 (beta_2 <= 2/3) never rectified, and the
        # rectifier is not real there.
        return (*super()._rule_switches(), 2.0 / (1.0 - self.beta_2) - 1.0 <= 5.0)

    def _update(self, var, grad, lr, hp, slots):
        var, grad = _decayed(self, var, grad, lr, hp, self.decoupled_weight_decay)
        b2 = hp.exact("beta_2")
        m, v = _moments(slots, grad, hp)
        t = _counted(slots)
        m_hat = m / _in(1.0 - _math_ops.power(hp.exact("beta_1"), t), var)
        correction2 = 1.0 - _math_ops.power(b2, t)
        if self._rule_switches()[-1]:  # never rectified
            return var - lr * m_hat
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * t * _math_ops.power(b2, t) / correction2
        rectified = rho_t > 5.0
        # The rectifier only where it is defined (rho_t > 4); elsewhere a 1 the where below never picks.
        safe = _math_ops.where(rectified, rho_t, 5.0)
        rect = _math_ops.sqrt(
            (safe - 4.0) * (safe - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * safe) * correction2
        )
        adaptive = _in(rect, var) / (_math_ops.sqrt(v) + hp.epsilon)
        return var - lr * m_hat * _math_ops.where(rectified, adaptive, _math_ops.ones_like(adaptive))


class Adadelta(Optimizer):
    """Adadelta (Zeiler 2012) in PyTorch's form: ``s = rho s + (1 - rho) g^2``;
    ``d = sqrt(a + epsilon) / sqrt(s + epsilon) * g``; ``a = rho a + (1 - rho) d^2``; ``w -= lr * d``
    (``g += weight_decay * w`` first).

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0])
    >>> tl.optimizers.Adadelta(1.0, rho=0.5, epsilon=0.25).apply([tl.tensor([1.0])], [w])
    >>> round(float(w[0]), 6)  # 1 - sqrt(0.25) / sqrt(0.5 + 0.25)
    0.42265
    """

    _slot_names = ("square_avg", "acc_delta")
    _torch_state = {"square_avg": "square_avg", "acc_delta": "acc_delta", "step": None}
    _hyperparameters = ("rho", "epsilon", "weight_decay")
    _ranges = (("rho", "[0, 1]"),)

    def __init__(
        self,
        learning_rate=1.0,
        rho: float = 0.9,
        epsilon: float = 1e-6,
        weight_decay: float = 0.0,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.rho, self.epsilon, self.weight_decay = rho, epsilon, weight_decay

    def _update(self, var, grad, lr, hp, slots):
        _, grad = _decayed(self, var, grad, lr, hp, False)
        rho, rest, eps = hp.rho, hp.complement("rho"), hp.epsilon
        square_avg = rho * slots["square_avg"] + rest * _math_ops.square(grad)
        delta = _math_ops.sqrt(slots["acc_delta"] + eps) / _math_ops.sqrt(square_avg + eps) * grad
        slots["square_avg"].assign(square_avg)
        slots["acc_delta"].assign(rho * slots["acc_delta"] + rest * _math_ops.square(delta))
        return var - lr * delta


class Lion(Optimizer):
    """Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms") in Keras' form:
    ``w -= lr * sign(b1 m + (1 - b1) g)``, then ``m = b2 m + (1 - b2) g``; ``weight_decay`` is decoupled,
    ``w *= 1 - lr * wd`` first (as Keras and optax apply it).  Every coordinate moves by exactly ``lr``
    (0 where the sign is 0), so Lion takes a learning rate 3-10x below AdamW's.

    >>> import tensorlib as tl
    >>> w = tl.Variable([1.0, 1.0])
    >>> tl.optimizers.Lion(0.1).apply([tl.tensor([3.0, -1e-9])], [w])
    >>> [round(x, 6) for x in w.numpy().tolist()]
    [0.9, 1.1]
    """

    _slot_names = ("m",)
    _hyperparameters = ("beta_1", "beta_2", "weight_decay")
    _ranges = (("beta_1", "[0, 1]"), ("beta_2", "[0, 1]"))

    def __init__(
        self,
        learning_rate=1e-3,
        beta_1: float = 0.9,
        beta_2: float = 0.99,
        weight_decay: float = 0.0,
        global_clipnorm: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        maximize: bool = False,
    ):
        super().__init__(learning_rate, global_clipnorm, clipnorm, clipvalue, maximize)
        self.beta_1, self.beta_2, self.weight_decay = beta_1, beta_2, weight_decay

    def _update(self, var, grad, lr, hp, slots):
        var, grad = _decayed(self, var, grad, lr, hp, True)
        m = slots["m"]
        direction = _math_ops.sign(hp.beta_1 * m + hp.complement("beta_1") * grad)
        slots["m"].assign(hp.beta_2 * m + hp.complement("beta_2") * grad)
        return var - lr * direction
