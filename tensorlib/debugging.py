"""Finding the first NaN or Inf (``check_numerics``, ``enable_check_numerics``) and checking shapes at run
time (``ensure_shape``, ``assert_shapes``): each an identity op that raises, so it runs in a traced graph too.

>>> import tensorlib as tl
>>> with tl.debugging.enable_check_numerics():
...     tl.log(tl.tensor([-1.0]))
Traceback (most recent call last):
...
tensorlib.debugging.NumericsError: Log produced NaN in output 0 (shape (1,), float32) ...
"""

from __future__ import annotations

import numbers

from . import dispatch
from .grad.registry import register_gradient
from .ops.registry import defop
from .ops.shape import ensure_dims


class NumericsError(ValueError):
    """A tensor holds NaN or Inf where numerics are checked."""


def _bad_kind(xp, array) -> str | None:
    if not xp.isdtype(array.dtype, ("real floating", "complex floating")):  # complex: NaN or Inf in either part
        return None
    if bool(xp.any(xp.isnan(array))):
        return "NaN"
    if bool(xp.any(xp.isinf(array))):
        return "Inf"
    return None


_check = defop(
    "CheckNumerics",
    inputs=("x",),
    attrs={"message": ""},
    infer=lambda x, *, message: x,
    side_effect=True,  # a check nothing reads still checks, as eagerly (and in tf.function)
    doc="Identity that raises when x holds NaN or Inf; its gradient is checked too.",
)


@_check.generic
def _check_kernel(xp, x, *, message):
    bad = _bad_kind(xp, x)
    if bad is not None:
        raise NumericsError(f"CheckNumerics: {message}: tensor had {bad} values (shape {x.shape}, {x.dtype})")
    return x


register_gradient("CheckNumerics", lambda node, g: check_numerics(g, f"gradient of: {node.attrs['message']}"))


def check_numerics(x, message: str = ""):
    """``x`` unchanged; raises :class:`NumericsError` if it holds NaN or Inf (also for its gradient)."""
    return _check(x, message=message)


def _dims(shape, who: str) -> tuple:
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{who}: a shape must be a tuple or list of ints, names and None, got {shape!r}")
    for d in shape:
        # NumPy integers count as ints (a size computed with np.prod), as in tf.ensure_shape; bools do not.
        if not (
            d is None or isinstance(d, str) or isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0
        ):
            raise TypeError(
                f"{who}: a dimension must be a non-negative int, a name (str) or None, got {d!r} in {shape!r}"
            )
    return tuple(d if d is None or isinstance(d, str) else int(d) for d in shape)


def ensure_shape(x, shape):
    """``x``, checked to have ``shape`` (ints, or ``None`` for any size) when it runs: TensorFlow's
    ``tf.ensure_shape``.  Traced, the result's shape takes the sizes the check pins down, and the check
    stays in the graph, so a size the trace did not know is checked at every call.

    >>> import numpy as np, tensorlib as tl
    >>> tl.ensure_shape(np.zeros((2, 3)), (None, 3)).shape
    (2, 3)
    >>> tl.ensure_shape(np.zeros((2, 3)), (2, 4))
    Traceback (most recent call last):
    ...
    ValueError: EnsureShapes: dimension 1 of input 0 (shape (2, 3), float64) is 3, expected 4 (shape (2, 4)) ...
    """
    dims = _dims(shape, "tl.ensure_shape")
    if any(isinstance(d, str) for d in dims):
        raise TypeError(f"tl.ensure_shape: sizes are ints or None, got {shape!r}; name dimensions with assert_shapes")
    return ensure_dims(x, dims=(dims,))[0]


def assert_shapes(shapes, message: str = "") -> list:
    """The tensors of ``shapes``, a list of ``(tensor, shape)`` pairs, checked when they run: each ``shape``
    holds ints, ``None`` (any size) and names, and a name has one size across all the tensors
    (TensorFlow's ``tf.debugging.assert_shapes``); ``message`` starts the error.  Use the returned
    tensors: under ``tl.function`` that keeps the check in the graph, where a size unknown when tracing
    is checked at every call.

    >>> import numpy as np, tensorlib as tl
    >>> x, mask = tl.debugging.assert_shapes([(np.zeros((4, 7)), ("N", "S")), (np.ones((4, 7), bool), ("N", "S"))])
    >>> tl.debugging.assert_shapes([(np.zeros((4, 7)), ("N", "S")), (np.ones((1, 7), bool), ("N", "S"))])
    Traceback (most recent call last):
    ...
    ValueError: EnsureShapes: dimension 0 ('N') of input 1 (shape (1, 7), bool) is 1, but 'N' is 4 in input 0 ...
    """
    pairs = list(shapes)
    if not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs):
        raise TypeError("tl.debugging.assert_shapes: expected a list of (tensor, shape) pairs")
    dims = tuple(_dims(shape, "tl.debugging.assert_shapes") for _, shape in pairs)
    if not isinstance(message, str):
        raise TypeError(f"tl.debugging.assert_shapes: message must be a str, got {type(message).__name__}")
    return list(ensure_dims(*(t for t, _ in pairs), dims=dims, message=message)) if pairs else []


class _NumericsChecker:
    def on_trace(self, op, outputs):
        """Enabled inside a traced function: the graph checks each real or complex floating output of the ops
        traced under it (naming the op and where it was traced) at every run, as eager calls are checked."""
        if op is _check:
            return
        for i, t in enumerate(outputs if isinstance(outputs, tuple) else (outputs,)):
            if t.dtype.kind in "fc":
                check_numerics(t, f"{op.name} output {i}, traced at {dispatch.user_site()}")

    def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        for i, t in enumerate(outs):
            bad = _bad_kind(backend.xp, t._value)
            if bad is not None:
                ins = ", ".join(f"{tuple(a.shape)} {a.dtype}" for a in inputs)
                raise NumericsError(
                    f"{op.name} produced {bad} in output {i} (shape {tuple(t.shape)}, {t.dtype}) "
                    f"at {dispatch.user_site()}; inputs: {ins}"
                )

    def on_assign(self, var, raw, mode):
        bad = _bad_kind(var.backend.xp, raw)
        if bad is not None:
            where = f"at {dispatch.user_site()}" if mode == "eager" else "in a tl.function's graph"
            raise NumericsError(
                f"Variable.assign: the value for variable {var.name!r} (shape {var.shape}, {var.dtype}) has {bad} "
                f"values, {where}; the variable keeps its value"
            )


_checker = _NumericsChecker()


class _Enabled:
    """What :func:`enable_check_numerics` returns: as a context manager it restores the state before it."""

    def __init__(self, was_enabled: bool):
        self.was_enabled = was_enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.was_enabled:
            disable_check_numerics()


def enable_check_numerics():
    """Check every op's outputs (forward and backward, eager and graph) for NaN/Inf, in real and complex
    floating results, and every value assigned to a Variable (``v.assign(...)``, eager or in a graph: it
    was not seen, so a NaN reached the weights unreported; the Variable keeps its value).

    Also usable as a context manager, which on exit disables the check unless it was enabled before.  In the
    body of a ``tl.function`` the ops traced in the block get ``CheckNumerics`` nodes, so the graph checks them
    at every run, as the eager calls are checked.
    """
    was_enabled = _checker in dispatch.observers
    if not was_enabled:
        dispatch.observers.append(_checker)
    return _Enabled(was_enabled)


def disable_check_numerics() -> None:
    if _checker in dispatch.observers:
        dispatch.observers.remove(_checker)
