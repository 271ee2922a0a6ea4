"""Gradient checks and the op battery: ``check_grads`` and ``opcheck``.

``check_grads`` compares reverse mode (``tl.vjp``) and forward mode
(``tl.jvp``) with float64 central differences by random-direction inner
products, as HIPS autograd does: for random ``u`` (shaped like the output)
and ``v`` (shaped like one argument) it checks ``<vjp(u), v>`` against the
numeric derivative of ``<f, u>`` along ``v``, and ``J v`` against the
central difference of ``f`` along ``v``.  ``order=2`` checks the gradient
function itself the same way.  Points where ``f`` has a kink (the one-sided
derivatives disagree) are resampled.

    >>> import numpy as np, tensorlib as tl
    >>> tl.testing.check_grads(lambda x, y: tl.sum(x * tl.sin(y)), [np.ones(3), np.arange(3.0)], order=2)
"""

from __future__ import annotations

import functools
import math
import numbers
import re

import numpy as np

from .. import dtypes as _dt
from .. import tree
from ..backends import base as _backends
from ..tensor import Tensor
from .opinfo import ErrorInput, OpInfo, SampleInput

__all__ = [
    "check_grads",
    "KinkError",
    "opcheck",
    "check_forward",
    "check_kernels",
    "check_sample_grads",
    "check_traced",
    "check_error",
    "sample_tensors",
]

# (atol, rtol) for gradients computed in each dtype; eps for finite differences evaluated in each dtype.
_GRAD_TOLERANCES = {_dt.float64: (1e-5, 1e-4), _dt.float32: (1e-3, 2e-3), _dt.float16: (5e-2, 5e-2)}
_EPS = {_dt.float64: 1e-6, _dt.float32: 1e-3, _dt.float16: 1e-2}


class KinkError(AssertionError):
    """``f`` is not differentiable at the checked point, and resampling did not find a smooth one."""


class _Kink(Exception):
    """Raised inside a check when the finite differences reveal a kink; the caller resamples."""


# ---------------------------------------------------------------- points: host values and their backends


def _partial_in(f, point, argnums):
    """``f`` as a function of the arguments at ``argnums`` only, the others fixed at ``point``."""

    def f_of_diff(*diff):
        full = list(point)
        for i, d in zip(argnums, diff):
            full[i] = d
        return f(*full)

    return f_of_diff


def _host(value):
    if isinstance(value, Tensor):
        return np.array(value.numpy()), value.backend
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value), None
    return value, None


def _is_float_array(value) -> bool:
    """Float or complex: complex arguments are differentiated along their real and imaginary parts."""
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def _wide(dtype):
    """float64, or complex128 for complex values: the dtype finite differences run in."""
    return np.dtype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)


def _direction(rng, shape, dtype):
    """A random direction: each entry a random sign (a random phase for complex values) times a size
    drawn uniformly from [0.5, 1].

    The checks compare inner products with these directions, where an element that is wrong in the
    gradient shows with its weight ``|u_k v_j|``.  Gaussian entries make that weight small too often
    (below 0.02 one time in ten for a product of two), and a gross error in one element passed; here
    it is at least 1/4, and no two errors cancel exactly as they can with signs alone.  Sizes up to 1
    keep the finite-difference steps within ``eps``.
    """
    size = rng.uniform(0.5, 1.0, shape)
    if np.dtype(dtype).kind == "c":
        return np.asarray(size * np.exp(2j * np.pi * rng.uniform(0.0, 1.0, shape)))
    return np.asarray(size * rng.choice([-1.0, 1.0], shape))


def _step_scale(value):
    """``max(1, |value| / 100)`` element by element (1 where not finite): the finite-difference step's factor.

    A fixed step ``eps`` is rounded where ``|value|`` is large (1e-6 is 1% of the spacing of float64
    numbers near 1e8), and so is the change of ``f`` it causes, which made right derivatives fail; a
    step of ``eps * |value|`` is too long for functions that change on a scale of 1 (``sin`` at 1e5).
    ``eps * |value| / 100`` is over 4e7 float64 spacings of ``value`` and, for ``|value|`` up to 1e5,
    under ``1e3 * eps``.
    """
    size = np.abs(value.astype(_wide(value.dtype)))
    return np.where(np.isfinite(size), np.fmax(1.0, size / 100.0), 1.0)  # NaN and Inf entries: the fixed step


def _tensor(value, backend):
    from ..ops.creation import tensor

    return tensor(value, backend=backend)


def _inputs(point, backends, float64=False):
    """Tensors for the array entries of ``point`` (cast to float64 if asked); other values unchanged."""
    out = []
    for value, backend in zip(point, backends):
        if isinstance(value, np.ndarray):
            if float64 and value.dtype.kind in "fc":
                value = value.astype(_wide(value.dtype))
            out.append(_tensor(value, backend))
        else:
            out.append(value)
    return out


def _leaves(out, what):
    leaves = tree.leaves(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise TypeError(
                f"check_grads: {what} must return tensors (or tuples/lists of them), got {type(leaf).__name__}"
            )
    return leaves


def _lowest_precision(dtypes):
    floats = [_dt.real_dtype(d) for d in dtypes if np.dtype(d).kind in "fc"]
    return min(floats, key=lambda d: d.itemsize) if floats else _dt.float64


def _name_of(f) -> str:
    """How failures name ``f``: an op by its type (``Conv2D``), a function by its name."""
    from ..ops.registry import OpDef

    if isinstance(f, functools.partial):
        return _name_of(f.func)
    if isinstance(f, OpDef):
        return f.name
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


def _show(value) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=6, threshold=24, separator=", ").replace("\n", "")
    return repr(value)


# ---------------------------------------------------------------- the public checks


def check_grads(
    f,
    args,
    order: int = 1,
    modes=("rev", "fwd"),
    atol=None,
    rtol=None,
    eps=None,
    seed: int = 0,
    argnums=None,
    resample=None,
    max_resamples: int = 3,
    name: str | None = None,
    reference_backend: str | None = "numpy",
) -> None:
    """Check ``f``'s reverse- and forward-mode derivatives against float64 central differences.

    ``args`` are NumPy arrays, Tensors or other values (passed through
    unchanged); ``argnums`` picks the arguments to differentiate (default:
    every floating-point array).  The finite differences always run with the
    float arguments cast to float64; a float32 ``f`` has its float32
    gradients compared with looser default tolerances.  ``order=2`` also
    checks the gradient function (the vjp, differentiated again).

    ``f`` runs on the arguments' backend (Tensors keep theirs) for the
    derivatives under test; the finite differences run on
    ``reference_backend``, float64 NumPy by default, so an op on CuPy or
    array_api_strict is checked against a host reference (``None``: on the
    arguments' own backends).  ``f`` must then not close over tensors of
    another backend.

    As in JAX's ``check_grads``, each argument is moved along a random
    direction ``v`` (by ``eps``, or ``eps * |x| / 100`` where ``|x| > 100``,
    so the step is not lost to rounding at large magnitudes); forward mode
    compares ``J v`` element by element within ``atol + rtol * |numeric|``,
    reverse mode compares ``<vjp(u), v>`` with the numeric ``<u, J v>`` for a
    random ``u``, within what those element-wise tolerances allow.

    When the finite differences show a kink (the one-sided derivatives
    disagree), the point is resampled: by ``resample(rng) -> args`` if given,
    else by jittering the differentiated arguments; after ``max_resamples``
    tries :class:`KinkError` names the point.  A wrong derivative raises
    ``AssertionError`` naming the argument, the ops it feeds, the analytic and
    numeric values and the tolerances.

    >>> import numpy as np, tensorlib as tl
    >>> tl.testing.check_grads(tl.matmul, [np.ones((2, 3)), np.ones((3, 4))], order=2)
    """
    _check_settings(order, modes, atol, rtol, eps, max_resamples)
    rng = np.random.default_rng(seed)
    label = name or _name_of(f)
    args = list(args)
    first_kink = None  # (the kink's description, the first point) once the point has been moved off a kink
    for attempt in range(max_resamples + 1):
        point, backends = zip(*[_host(a) for a in args]) if args else ((), ())
        nums = _argnums(point, argnums)
        if not nums:
            raise ValueError(
                f"check_grads: {label} has no floating-point array argument to differentiate "
                f"(arguments: {', '.join(type(p).__name__ for p in point) or 'none'})"
            )
        names = [f"argument {i}" for i in range(len(point))]
        try:
            _check(
                f,
                list(point),
                list(backends),
                nums,
                order,
                tuple(modes),
                atol,
                rtol,
                eps,
                rng,
                label,
                names,
                reference=None if reference_backend is None else _backends.get(reference_backend),
            )
            return
        except _Kink as kink:
            if attempt == max_resamples:
                how = "resample(rng)" if resample is not None else "jittering the point"
                raise KinkError(
                    f"{kink}\n  Still not differentiable after {max_resamples} new points "
                    f"({how}); pass points away from kinks or a `resample` callable."
                ) from None
            if first_kink is None:
                first_kink = (str(kink).split("\n")[0], _describe_point(point, names))
            args = list(resample(rng)) if resample is not None else _jitter(point, backends, nums, rng)
        except AssertionError as failure:
            if first_kink is None:
                raise
            how = "by resample(rng)" if resample is not None else "by jittering"
            raise AssertionError(
                f"{failure}\n  This point was moved off a kink ({how}, {attempt} time(s)): "
                f"{first_kink[0]}\n  The first point was: {first_kink[1]}"
            ) from None


def _check_settings(order, modes, atol, rtol, eps, max_resamples) -> None:
    """One clear error for a setting that would make check_grads check nothing, or accuse a right gradient."""
    for name, value, least in (("order", order, 1), ("max_resamples", max_resamples, 0)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < least:
            raise ValueError(f"check_grads: {name} must be >= {least} (an int), got {value!r}")
    if isinstance(modes, str) or not modes or set(modes) - {"rev", "fwd"}:
        raise ValueError(f"check_grads: modes must be a non-empty subset of ('rev', 'fwd'), got {modes!r}")
    for name, value, positive in (("atol", atol, False), ("rtol", rtol, False), ("eps", eps, True)):
        if value is not None and not (
            isinstance(value, numbers.Real) and math.isfinite(value) and (value > 0 if positive else value >= 0)
        ):
            raise ValueError(
                f"check_grads: {name} must be a finite number {'> 0' if positive else '>= 0'} (or None), got {value!r}"
            )


def _argnums(point, argnums):
    if argnums is None:
        return tuple(i for i, v in enumerate(point) if _is_float_array(v))
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not 0 <= i < len(point) or not _is_float_array(point[i]):
            raise ValueError(
                f"check_grads: argnums {argnums!r}: argument {i} is not a floating-point array "
                f"({type(point[i]).__name__ if 0 <= i < len(point) else 'out of range'})"
            )
    return nums


def _jitter(point, backends, argnums, rng):
    """A nearby point: each differentiated entry moves by about 1% (at least 1e-4), keeping its sign."""
    out = []
    for i, (value, backend) in enumerate(zip(point, backends)):
        if i in argnums:
            step = 1e-2 * np.maximum(np.abs(value.astype(_wide(value.dtype))), 1e-2)
            value = np.asarray(value + step * _direction(rng, value.shape, value.dtype)).astype(value.dtype)
        out.append(_tensor(value, backend) if backend is not None else value)
    return out


def _on_reference(f, reference):
    """``f`` evaluated with new tensors made on ``reference`` (where the finite differences run)."""
    if reference is None:
        return f

    def on_reference(*args):
        with _backends.backend(reference):
            return f(*args)

    return on_reference


def _check(f, point, backends, argnums, order, modes, atol, rtol, eps, rng, label, names, depth=1, reference=None):
    from ..grad.api import jvp, vjp

    inputs = _inputs(point, backends)
    # The finite differences: on the reference backend (NumPy) for every argument, in float64.
    numeric_f = _on_reference(f, reference)
    numeric_backends = list(backends) if reference is None else [reference] * len(backends)

    def f_of(i):
        def f_i(x):
            full = list(inputs)
            full[i] = x
            return f(*full)

        return f_i

    out, vjp_fn = vjp(_partial_in(f, inputs, argnums), *[inputs[i] for i in argnums])
    leaves = _leaves(out, label)
    float_pos = [k for k, o in enumerate(leaves) if o.dtype.kind in "fc"]
    if not float_pos:
        raise TypeError(
            f"check_grads: {label} has no floating-point output to differentiate "
            f"(output dtypes: {[str(o.dtype) for o in leaves]})"
        )
    # f at the point itself, in float64, once: it sets the dtype the differences run in, and each argument's
    # kink check compares its one-sided differences with it.
    centre = _leaves(numeric_f(*_inputs(point, numeric_backends, True)), label)
    numeric_dtype = _lowest_precision(o.dtype for o in centre)
    f0 = [np.asarray(centre[k].numpy(), dtype=_wide(centre[k].dtype)) for k in float_pos]
    analytic_dtype = _lowest_precision([point[i].dtype for i in argnums] + [leaves[k].dtype for k in float_pos])
    default_atol, default_rtol = np.maximum(_GRAD_TOLERANCES[analytic_dtype], _GRAD_TOLERANCES[numeric_dtype])
    atol_, rtol_ = (default_atol if atol is None else atol), (default_rtol if rtol is None else rtol)
    eps_ = _EPS[numeric_dtype] if eps is None else eps
    context = dict(
        f=f,
        point=point,
        backends=backends,
        numeric_f=numeric_f,
        numeric_backends=numeric_backends,
        label=label,
        names=names,
        atol=atol_,
        rtol=rtol_,
        eps=eps_,
        numeric_dtype=numeric_dtype,
        depth=depth,
        float_pos=float_pos,
    )

    us = [_direction(rng, leaves[k].shape, leaves[k].dtype).astype(leaves[k].dtype) for k in float_pos]
    cotangents = []
    for k, leaf in enumerate(leaves):
        cotangents.append(us[float_pos.index(k)] if k in float_pos else np.zeros(leaf.shape, leaf.dtype))
    grads = vjp_fn(cotangents) if "rev" in modes else None

    for slot, i in enumerate(argnums):
        v = _direction(rng, point[i].shape, point[i].dtype) * _step_scale(point[i])
        numeric = _numeric_jvp(numeric_f, point, numeric_backends, i, v, float_pos, context, f0)
        if grads is not None:
            _compare_vjp(grads[slot], i, v, us, numeric, context)
        if "fwd" in modes:
            _, tangent_out = jvp(f_of(i), (inputs[i],), (_tensor(v.astype(point[i].dtype), backends[i]),))
            tangents = _leaves(tangent_out, f"the jvp of {label}")
            _compare_jvp([tangents[k] for k in float_pos], i, numeric, context)

    if order > 1:
        g = _vjp_function(f, len(point), argnums, float_pos, label)
        n = len(point)
        _check(
            g,
            point + us,
            backends + [leaves[k].backend for k in float_pos],
            tuple(argnums) + tuple(range(n, n + len(us))),
            order - 1,
            modes,
            atol,
            rtol,
            eps,
            rng,
            f"the gradient (vjp) of {label}",
            names + [f"cotangent {k} (of output {float_pos[k]})" for k in range(len(us))],
            depth + 1,
            reference,
        )


def _vjp_function(f, nargs, argnums, float_pos, label):
    """``(*args, *cotangents) -> vjp of f at args``: the gradient function, to be checked in turn."""
    from ..grad.api import vjp
    from ..ops.math import zeros_like

    def gradient_of_f(*values):
        point, cts = values[:nargs], values[nargs:]

        out, vjp_fn = vjp(_partial_in(f, point, argnums), *[point[i] for i in argnums])
        outs = tree.leaves(out)
        full_cts = [cts[float_pos.index(k)] if k in float_pos else zeros_like(o) for k, o in enumerate(outs)]
        return tuple(vjp_fn(full_cts))

    gradient_of_f.__qualname__ = f"gradient of {label}"
    return gradient_of_f


def _numeric_jvp(f, point, backends, i, v, float_pos, ctx, f0):
    """Central difference of f's float outputs along ``v`` in argument ``i`` (float64), after a kink check.

    ``f0``: f's float outputs at the point (float64), the centre of the one-sided differences."""
    eps = ctx["eps"]
    base = [p.astype(_wide(p.dtype)) if _is_float_array(p) else p for p in point]

    def at(step):
        shifted = list(base)
        shifted[i] = np.asarray(base[i] + step * v)
        outs = _leaves(f(*_inputs(shifted, backends)), ctx["label"])
        return [np.asarray(outs[k].numpy(), dtype=_wide(outs[k].dtype)) for k in float_pos]

    fp, fm, fp2, fm2 = at(eps), at(-eps), at(eps / 2), at(-eps / 2)
    central = []
    for k, (y0, yp, ym, yp2, ym2) in enumerate(zip(f0, fp, fm, fp2, fm2)):
        c1 = (yp - ym) / (2 * eps)
        c2 = (yp2 - ym2) / eps
        # One-sided gaps: about eps*f'' (and half that at eps/2) where f is smooth, a constant jump at a kink.
        gap1 = (yp - y0) / eps - (y0 - ym) / eps
        gap2 = (yp2 - y0) / (eps / 2) - (y0 - ym2) / (eps / 2)
        roundoff = 50 * np.finfo(ctx["numeric_dtype"]).eps * np.max(np.abs([y0, yp, ym]), initial=1.0) / eps
        limit = ctx["atol"] + ctx["rtol"] * np.abs(c1) + roundoff
        bad = (np.abs(gap1 - 2 * gap2) > limit) | (np.abs(c1 - c2) > limit) | ~np.isfinite(c1)
        if np.any(bad):
            j = _index_of(np.argmax(bad), bad.shape)
            raise _Kink(
                f"check_grads: {ctx['label']} is not differentiable at the sampled point along "
                f"{ctx['names'][i]} (output {k}, element {j}): derivative from the right "
                f"{((yp - y0) / eps)[j]:.6g}, from the left {((y0 - ym) / eps)[j]:.6g}, central "
                f"differences {c1[j]:.6g} (eps {eps:g}) and {c2[j]:.6g} (eps {eps / 2:g}).\n"
                f"  Point: {_describe_point(point, ctx['names'])}"
            )
        central.append(c1)
    return central


def _index_of(flat, shape) -> tuple:
    return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()


def _describe_point(point, names):
    return "; ".join(f"{n} = {_show(p)}" for n, p in zip(names, point))


def _describe_path(ctx, i) -> tuple:
    """(uses, op types): how argument ``i`` enters the ops on a tape of f, for failure messages."""
    from ..grad.tape import GradientTape

    inputs = _inputs(ctx["point"], ctx["backends"])
    with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(inputs[i])
        ctx["f"](*inputs)
    uses = []
    for node in tape._nodes:
        for pos, t in enumerate(node.inputs):
            if t is inputs[i]:
                names = node.op.input_names
                input_name = names[0] if node.op.variadic else names[pos]
                uses.append(f"input {pos} ({input_name!r}) of {node.op_type}")
    return list(dict.fromkeys(uses)), list(dict.fromkeys(node.op_type for node in tape._nodes))


def _failure(kind, ctx, i, detail) -> AssertionError:
    uses, types = _describe_path(ctx, i)
    arg = ctx["point"][i]
    if not uses:
        grad_of = ""
    elif ctx["depth"] == 1:
        grad_of = f" (the gradient of {', '.join(uses)})"
    else:
        grad_of = f" (it enters as {', '.join(uses)} of the gradient function)"
    return AssertionError(
        f"check_grads: {kind} derivative of {ctx['label']} with respect to {ctx['names'][i]} "
        f"(shape {arg.shape}, {arg.dtype}) disagrees with finite differences{grad_of}.\n"
        f"  {detail}\n"
        f"  Tolerances: atol {ctx['atol']:g}, rtol {ctx['rtol']:g}, eps {ctx['eps']:g}.\n"
        f"  Ops on the tape of {ctx['label']}: {', '.join(types) or 'none'}.\n"
        f"  Point: {_describe_point(ctx['point'], ctx['names'])}"
    )


def _compare_vjp(grad, i, v, us, numeric, ctx):
    arg = ctx["point"][i]
    if grad is None or tuple(grad.shape) != arg.shape or grad.dtype != arg.dtype:
        got = "None" if grad is None else f"shape {tuple(grad.shape)}, {grad.dtype}"
        raise _failure(
            "reverse-mode (vjp)", ctx, i, f"The gradient has {got}; expected shape {arg.shape}, {arg.dtype}."
        )
    # For complex values the pairing is Re(sum(a * b)): with JAX's convention the gradient g of the
    # real loss Re(<u, f>) moves it by Re(sum(g * v)) along v (real and imaginary parts at once).
    analytic = float(np.real(np.sum(np.asarray(grad.numpy(), dtype=_wide(grad.dtype)) * v)))
    terms = [n * u.astype(_wide(u.dtype)) for n, u in zip(numeric, us)]
    expected = float(np.real(sum(np.sum(t) for t in terms)))
    tolerance = _inner_product_tolerance(numeric, us, ctx)
    if not abs(analytic - expected) <= tolerance:
        worst = _worst_element(grad, i, us, ctx) if arg.size <= WORST_ELEMENT_SIZE else ""
        raise _failure(
            "reverse-mode (vjp)",
            ctx,
            i,
            f"<vjp(u), v> = {analytic:.10g} (analytic) vs {expected:.10g} (numeric), difference "
            f"{abs(analytic - expected):.3g} > tolerance {tolerance:.3g}, for random directions u, v." + worst,
        )


# How many |tol|_2 the vjp check allows (see _inner_product_tolerance): _direction's entries have
# standard deviation 0.76, so this is 5.2 standard deviations of <u, d> for a discrepancy d at the
# element-wise jvp check's limit everywhere (a false alarm below one time in a million).
INNER_PRODUCT_SIGMAS = 4.0


def _inner_product_tolerance(numeric, us, ctx) -> float:
    """How far ``<vjp(u), v>`` may be from the numeric ``<u, J v>`` when ``J v`` is right element by element.

    If the analytic ``J v`` differs from the numeric one by ``d`` with ``|d_k| <= atol + rtol |(J v)_k|``
    (the forward-mode check's tolerance), the inner products differ by ``<u, d>``: at most
    ``sum_k |u_k| tol_k``, and, as ``u``'s entries are independent, of mean 0 and independent of ``d``,
    within a few ``|tol|_2`` with overwhelming probability.  The smaller bound is used: for large outputs the worst case is
    ``sqrt(size)`` times too loose, and let a gradient that is wrong in one element of a batch pass.
    """
    tols = [ctx["atol"] + ctx["rtol"] * np.abs(n) for n in numeric]
    worst_case = sum(float(np.sum(np.abs(u) * t)) for u, t in zip(us, tols))
    likely = INNER_PRODUCT_SIGMAS * float(np.sqrt(sum(np.sum(t * t) for t in tols)))
    return min(worst_case, likely)


# Arguments up to this size get their gradient compared element by element when a check fails
# (two evaluations of f per element), so the message can show the worst one.
WORST_ELEMENT_SIZE = 64


def _worst_element(grad, i, us, ctx) -> str:
    """The element of argument ``i`` whose gradient (of ``Re <f, u>``) is furthest from its central difference.

    For a complex argument the difference runs along the real and the imaginary part: the gradient
    is ``dL/dRe - 1j dL/dIm``, the convention ``<vjp(u), v>`` is paired with (JAX's).
    """
    eps = ctx["eps"]
    base = [p.astype(_wide(p.dtype)) if _is_float_array(p) else p for p in ctx["point"]]

    def inner(j, step):
        shifted = list(base)
        moved = base[i].copy()
        moved[j] += step
        shifted[i] = moved
        outs = _leaves(ctx["numeric_f"](*_inputs(shifted, ctx["numeric_backends"])), ctx["label"])
        return sum(float(np.real(np.sum(np.asarray(outs[k].numpy()) * u))) for k, u in zip(ctx["float_pos"], us))

    def derivative(j, step):
        return (inner(j, step) - inner(j, -step)) / (2 * abs(step))

    arg = base[i]
    steps = eps * _step_scale(arg)
    numeric = np.zeros(arg.shape, arg.dtype)
    for j in np.ndindex(*arg.shape):
        numeric[j] = derivative(j, steps[j])
        if arg.dtype.kind == "c":
            numeric[j] -= 1j * derivative(j, 1j * steps[j])
    analytic = np.asarray(grad.numpy(), dtype=arg.dtype)
    error = np.abs(analytic - numeric)
    j = _index_of(np.argmax(error), error.shape)
    return (
        f"\n  Worst element {j}: analytic {analytic[j]:.10g} vs numeric {numeric[j]:.10g} (difference "
        f"{error[j]:.3g}); gradient of <f, u> element by element, "
        f"analytic {_show(analytic)}, numeric {_show(numeric)}."
    )


def _compare_jvp(tangents, i, numeric, ctx):
    for k, (t, n) in enumerate(zip(tangents, numeric)):
        if tuple(t.shape) != n.shape:
            raise _failure(
                "forward-mode (jvp)", ctx, i, f"J v of output {k} has shape {tuple(t.shape)}, expected {n.shape}."
            )
        analytic = np.asarray(t.numpy(), dtype=_wide(t.dtype))
        error = np.abs(analytic - n)
        allowed = ctx["atol"] + ctx["rtol"] * np.abs(n)
        if not np.all(error <= allowed):
            j = _index_of(np.argmax(error - allowed), error.shape)
            raise _failure(
                "forward-mode (jvp)",
                ctx,
                i,
                f"J v (output {k}, element {j}) = {analytic[j]:.10g} (analytic) vs {n[j]:.10g} "
                f"(numeric), difference {error[j]:.3g} > {allowed[j]:.3g}, for a random direction v.",
            )


# ---------------------------------------------------------------- the op battery


def sample_tensors(sample: SampleInput, backend=None) -> list:
    """The sample's positional args with NumPy arrays turned into Tensors (other values unchanged)."""
    return [_tensor(a, backend) if isinstance(a, np.ndarray) else a for a in sample.args]


def _call(op, sample, backend=None):
    return op(*sample_tensors(sample, backend), **sample.kwargs)


def check_forward(op, sample: SampleInput, ref, atol: float = 1e-6, rtol: float = 1e-5, name=None) -> None:
    """``op`` on Tensors against ``ref`` on NumPy arrays: structure, shapes, dtypes and values.

    Also checks that neither call changed the sample's arrays.
    """
    label = name or _name_of(op)
    before = [a.copy() if isinstance(a, np.ndarray) else None for a in sample.args]
    inputs = sample_tensors(sample)
    got = op(*inputs, **sample.kwargs)
    for k, (a, t) in enumerate(zip(before, inputs)):
        if a is not None and not np.array_equal(t.numpy(), a, equal_nan=True):
            raise AssertionError(f"{label}: the op changed its input {k} in place ({sample!r})")
    expected = ref(*[a.copy() if isinstance(a, np.ndarray) else a for a in sample.args], **sample.kwargs)
    got_leaves, expected_leaves = tree.leaves(got), tree.leaves(expected)
    if len(got_leaves) != len(expected_leaves):
        raise AssertionError(
            f"{label}: {len(got_leaves)} outputs, the reference gives {len(expected_leaves)} ({sample!r})"
        )
    for k, (g, e) in enumerate(zip(got_leaves, expected_leaves)):
        if not isinstance(g, Tensor):
            raise AssertionError(f"{label}: output {k} is a {type(g).__name__}, not a Tensor ({sample!r})")
        e = np.asarray(e)
        where = f"{label} output {k} for {sample!r}"
        if tuple(g.shape) != e.shape:
            raise AssertionError(f"{where}: shape {tuple(g.shape)}, the reference gives {e.shape}")
        if g.dtype != e.dtype:
            raise AssertionError(f"{where}: dtype {g.dtype}, the reference gives {e.dtype}")
        np.testing.assert_allclose(g.numpy(), e, atol=atol, rtol=rtol, equal_nan=True, err_msg=where)


def check_sample_grads(
    op, sample: SampleInput, order: int = 2, modes=("rev", "fwd"), atol=None, rtol=None, name=None, seed: int = 0
) -> None:
    """``check_grads`` of ``op`` at one sample, for the arguments in ``sample.grad_argnums``."""
    if not sample.grad_argnums:
        return
    kwargs = sample.kwargs
    label = f"{name or _name_of(op)}"

    def f(*args):
        return op(*args, **kwargs)

    f.__qualname__ = label
    check_grads(
        f,
        sample.args,
        order=order,
        modes=modes,
        atol=atol,
        rtol=rtol,
        seed=seed,
        argnums=sample.grad_argnums,
        name=label,
    )


def check_traced(op, sample: SampleInput, atol: float = 1e-6, rtol: float = 1e-5, name=None):
    """Eager against ``tl.function``-traced results; returns False (skipped) if graph mode is missing."""
    import tensorlib as tl

    function = getattr(tl, "function", None)
    if function is None:
        return False
    label = name or _name_of(op)
    positions, with_arrays = sample.split(op)
    eager = tree.leaves(_call(op, sample))
    traced = tree.leaves(function(with_arrays)(*[_tensor(sample.args[k], None) for k in positions]))
    if len(eager) != len(traced):
        raise AssertionError(f"{label}: eager gives {len(eager)} outputs, traced {len(traced)} ({sample!r})")
    for k, (e, t) in enumerate(zip(eager, traced)):
        where = f"{label} output {k}, eager vs traced, for {sample!r}"
        if e.dtype != t.dtype or tuple(e.shape) != tuple(t.shape):
            raise AssertionError(f"{where}: {tuple(e.shape)} {e.dtype} vs {tuple(t.shape)} {t.dtype}")
        np.testing.assert_allclose(t.numpy(), e.numpy(), atol=atol, rtol=rtol, equal_nan=True, err_msg=where)
    return True


def check_kernels(op, sample: SampleInput, name=None) -> int:
    """Call the kernels behind ``op`` on ``sample`` directly and compare each raw result with its op's shape rule.

    Dispatch casts a kernel's result within its kind to the rule's dtype,
    which would hide a kernel computing in the wrong precision; this calls
    the kernels again, outside dispatch.  For an OpDef, every registered
    kernel runs; for a function (``tl.nn.conv2d``, a composite), every op it
    dispatches is recorded and its kernel re-run on the same inputs.  A
    float16 rule may be computed wider (rounded once at the end).  Returns how
    many kernel calls were checked.
    """
    from ..backends import base as _backends
    from ..ops.registry import OpDef

    label = name or _name_of(op)
    calls = []  # (op, input tensors, attrs, kernel, backend)
    if isinstance(op, OpDef):
        attrs = op.bind_attrs(dict(sample.kwargs)) if op.defaults else {}
        for backend_name in sorted(op.kernels) or ["numpy"]:
            try:
                backend = _backends.get(backend_name)
            except (KeyError, LookupError, ValueError):
                continue
            calls.append((op, sample_tensors(sample, backend), attrs, op.resolve_kernel(backend), backend))
    else:
        _call_recording_kernels(op, sample, calls)
    for op_def, inputs, attrs, kernel, backend in calls:
        specs = op_def.infer(*inputs, **attrs)
        raw = kernel(*[t._value for t in inputs], **attrs)
        many_specs = specs if isinstance(specs, tuple) else (specs,)
        many_raw = raw if isinstance(specs, tuple) else (raw,)
        fn = getattr(kernel, "func", kernel)
        where = (
            f"{op_def.name}'s {backend.name} kernel ({getattr(fn, '__module__', '?')}."
            f"{getattr(fn, '__qualname__', fn)})"
        )
        if len(many_raw) != len(many_specs):
            raise AssertionError(
                f"{label}: {where} returned {len(many_raw)} outputs, the shape rule gives "
                f"{len(many_specs)} (sample {sample!r})"
            )
        for k, (r, spec) in enumerate(zip(many_raw, many_specs)):
            shape, dtype = tuple(getattr(r, "shape", ())), np.dtype(getattr(r, "dtype", type(r)))
            wider_half = spec.dtype == _dt.float16 and dtype.kind == "f" and dtype.itemsize > 2
            if shape != tuple(spec.shape) or (dtype != spec.dtype and not wider_half):
                raise AssertionError(
                    f"{label}: {where} returned output {k} of shape {shape} {dtype}, but the "
                    f"shape rule says {tuple(spec.shape)} {spec.dtype} (sample {sample!r})"
                )
    return len(calls)


def _call_recording_kernels(fn, sample, calls) -> None:
    """Run ``fn`` eagerly on ``sample``, appending every op it dispatches (with its kernel) to ``calls``."""
    from .. import dispatch

    class Recorder:
        def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
            calls.append((op, inputs, attrs, kernel, backend))

    recorder = Recorder()
    dispatch.observers.append(recorder)
    try:
        _call(fn, sample)
    finally:
        dispatch.observers.remove(recorder)


def check_error(op, error: ErrorInput, name=None) -> None:
    """The call must raise ``error.exc`` with a message matching ``error.match``."""
    label = name or _name_of(op)
    try:
        _call(op, SampleInput(error.args, error.kwargs))
    except error.exc as e:
        if not re.search(error.match, str(e)):
            raise AssertionError(
                f"{label}: {type(e).__name__} message {str(e)!r} does not match {error.match!r}"
            ) from e
        return
    except Exception as e:
        raise AssertionError(
            f"{label}: expected {error.exc.__name__} matching {error.match!r}, got {type(e).__name__}: {e}"
        ) from e
    raise AssertionError(
        f"{label}: expected {error.exc.__name__} matching {error.match!r}; the call "
        f"with {SampleInput(error.args, error.kwargs)!r} succeeded"
    )


def _cast_floats(sample: SampleInput, dtype) -> SampleInput:
    args = tuple(a.astype(dtype) if _is_float_array(a) else a for a in sample.args)
    return SampleInput(args, dict(sample.kwargs), sample.grad_argnums)


def _as_sample(s) -> SampleInput:
    if isinstance(s, SampleInput):
        return s
    return SampleInput(tuple(s) if isinstance(s, (tuple, list)) else (s,))


def _samples_function(samples):
    """Normalise opcheck's ``samples`` into OpInfo's form: ``dtype -> strategy or list``."""
    if _is_strategy(samples):
        return lambda dtype: samples.map(lambda s: _cast_floats(_as_sample(s), dtype))
    if callable(samples):
        return samples
    fixed = [_as_sample(s) for s in samples]
    return lambda dtype: [_cast_floats(s, dtype) for s in fixed]


# The dtypes opcheck checks gradients in by default (those of them the op is checked in).
_GRAD_DTYPES = (_dt.float32, _dt.float64, np.dtype(np.complex64), np.dtype(np.complex128))


def opcheck(
    op,
    samples=None,
    ref=None,
    *,
    dtypes=(_dt.float32, _dt.float64),
    grad_dtypes=None,
    differentiable: bool = True,
    order: int = 2,
    modes=("rev", "fwd"),
    atol: float = 1e-6,
    rtol: float = 1e-5,
    grad_atol=None,
    grad_rtol=None,
    error_inputs=(),
    traced: bool = True,
    max_examples: int = 10,
    name: str | None = None,
) -> dict:
    """Run the op catalogue's battery on one op or function, from one call.

    ``op`` is an OpDef, a function of Tensors, or an :class:`OpInfo` (which
    then supplies samples, reference, dtypes, tolerances and error inputs).
    ``samples`` is a list of :class:`SampleInput` (or of argument tuples;
    float arrays are cast to each dtype), a hypothesis strategy of them, or
    ``samples(dtype) -> strategy or list``.  For each sample and dtype it
    compares the forward value with ``ref`` (NumPy), compares what each
    kernel of an OpDef returns with the op's shape rule (shapes and dtypes,
    before dispatch could fix anything up), checks first- and second-order
    gradients with ``check_grads`` (both modes) in ``grad_dtypes`` (default:
    float32, float64, complex64 and complex128, so a gradient that only
    breaks in float32, or for complex inputs, fails),
    and compares eager with ``tl.function`` results when graph mode exists.  Every ``error_inputs`` entry must raise as declared.
    Returns how many checks of each kind ran; raises ``AssertionError`` on
    the first failure.

    >>> import numpy as np, tensorlib as tl
    >>> from tensorlib.testing import opcheck, SampleInput
    >>> report = opcheck(tl.tanh, [SampleInput((np.linspace(-2, 2, 5),))], ref=np.tanh)
    >>> report["forward"], report["kernels"], report["gradients"]
    (2, 2, 2)
    """
    if isinstance(op, OpInfo):
        info = op
    else:
        if samples is None:
            raise TypeError("opcheck: pass samples= (SampleInputs, a hypothesis strategy, or a function of the dtype)")
        info = OpInfo(
            name or getattr(op, "name", None) or _name_of(op),
            op,
            ref,
            _samples_function(samples),
            dtypes=tuple(np.dtype(d) for d in dtypes),
            differentiable=differentiable,
            second_order=order > 1,
            error_inputs=tuple(error_inputs),
            atol=atol,
            rtol=rtol,
            grad_atol=grad_atol,
            grad_rtol=grad_rtol,
        )
    order = order if info.second_order else 1
    report = {"forward": 0, "kernels": 0, "gradients": 0, "traced": 0, "errors": 0, "skipped": []}
    # Complex dtypes too: a default of float32 and float64 skipped the gradients of complex samples.
    grad_dtypes = [np.dtype(d) for d in (_GRAD_DTYPES if grad_dtypes is None else grad_dtypes)]

    def run_one(sample, dtype):
        report["kernels"] += check_kernels(info.op, sample, name=info.name)
        if info.ref is not None:
            check_forward(info.op, sample, info.ref, *info.tolerances(dtype), name=info.name)
            report["forward"] += 1
        if info.differentiable and dtype in grad_dtypes:
            exact = dtype in (_dt.float64, np.dtype(np.complex128))  # OpInfo's gradient tolerances are float64 ones
            check_sample_grads(
                info.op,
                sample,
                order=order,
                modes=modes,
                atol=info.grad_atol if exact else None,
                rtol=info.grad_rtol if exact else None,
                name=info.name,
            )
            report["gradients"] += 1
        if traced:
            if check_traced(info.op, sample, *info.tolerances(dtype), name=info.name):
                report["traced"] += 1
            elif not report["skipped"]:
                report["skipped"].append("traced: tl.function is not available")

    for dtype in info.dtypes:
        dtype = np.dtype(dtype)
        source = info.samples(dtype)
        if _is_strategy(source):
            _run_strategy(source, functools.partial(run_one, dtype=dtype), max_examples)
        else:
            for sample in source:
                run_one(_as_sample(sample), dtype)
    for error in info.error_inputs:
        check_error(info.op, error, name=info.name)
        report["errors"] += 1
    return report


def _is_strategy(value) -> bool:
    try:
        from hypothesis.strategies import SearchStrategy
    except ImportError:
        return False
    return isinstance(value, SearchStrategy)


def _run_strategy(strategy, run, max_examples):
    from hypothesis import HealthCheck, given, settings

    @settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def check(sample):
        run(_as_sample(sample))

    check()
