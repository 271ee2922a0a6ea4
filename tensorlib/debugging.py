"""Finding the first NaN or Inf: ``check_numerics`` and ``enable_check_numerics``.

>>> import tensorlib as tl
>>> with tl.debugging.enable_check_numerics():
...     tl.log(tl.tensor([-1.0]))
Traceback (most recent call last):
...
tensorlib.debugging.NumericsError: Log produced NaN in output 0 (shape (1,), float32) ...
"""

from __future__ import annotations

from . import dispatch
from .grad.registry import register_gradient
from .ops.registry import defop


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


class _NumericsChecker:
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
    floating results.

    Also usable as a context manager, which on exit disables the check unless it was enabled before.
    """
    was_enabled = _checker in dispatch.observers
    if not was_enabled:
        dispatch.observers.append(_checker)
    return _Enabled(was_enabled)


def disable_check_numerics() -> None:
    if _checker in dispatch.observers:
        dispatch.observers.remove(_checker)
