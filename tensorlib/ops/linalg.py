"""Contractions: matmul (batched, broadcasting), einsum (opt_einsum, cached paths), tensordot."""

from __future__ import annotations

import string

import numpy as np

from ..backends.numpy_backend import _contract_expression
from ..backends.numpy_nn import blas as _blas
from ..dispatch import apply, as_tensors
from ..grad.registry import register_gradient
from ..tensor import Tensor
from . import math as math_ops
from ._shapes import broadcast_shapes, normalize_axis
from .registry import defop, spec


# ------------------------------------------------------------------ matmul
def _matmul_infer(x, y):
    if len(x.shape) < 2 or len(y.shape) < 2:
        raise ValueError("both operands need rank >= 2 (tl.matmul handles vectors)")
    n, k = x.shape[-2:]
    k2, m = y.shape[-2:]
    if k is not None and k2 is not None and k != k2:
        raise ValueError(f"inner dimensions do not match: {x.shape} @ {y.shape} ({k} != {k2})")
    return spec(broadcast_shapes(x.shape[:-2], y.shape[:-2]) + (n, m), x.dtype)


_matmul = defop(
    "BatchMatMulV2",
    inputs=("x", "y"),
    infer=_matmul_infer,
    promote=(0, 1),
    doc="Matrix product over the last two axes; leading axes broadcast.",
)
_matmul.generic(lambda xp, x, y: xp.matmul(x, y))
# NumPy's matmul with OpenBLAS's own threads left asleep (see numpy_nn.blas); into out= for the executor.
_matmul.kernel("numpy")(_blas.matmul)
_matmul.out_kernel("numpy")(_blas.matmul)


def _swap(t):
    from .shape import transpose

    n = len(t.shape)
    return transpose(t, tuple(range(n - 2)) + (n - 1, n - 2))


register_gradient(
    "BatchMatMulV2", lambda node, g: matmul(g, _swap(node.inputs[1])), lambda node, g: matmul(_swap(node.inputs[0]), g)
)


def matmul(x, y) -> Tensor:
    """NumPy's ``matmul``: vectors are promoted to matrices and the added axis removed.

    >>> import tensorlib as tl
    >>> (tl.ones((2, 3)) @ tl.ones((3,))).numpy().tolist()
    [3.0, 3.0]
    """
    from .shape import expand_dims, squeeze

    x, y = as_tensors(x, y)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"BatchMatMulV2: matmul of a scalar (shapes {x.shape} and {y.shape}); use *")
    inner_x, inner_y = x.shape[-1], y.shape[0 if y.ndim == 1 else -2]
    if (x.ndim == 1 or y.ndim == 1) and None not in (inner_x, inner_y) and inner_x != inner_y:
        # Quote the caller's shapes, not the matrices the vectors become below.
        raise ValueError(
            f"BatchMatMulV2: inner dimensions do not match: {x.shape} @ {y.shape} "
            f"({inner_x} != {inner_y}) (inputs x: shape {x.shape} {x.dtype}, y: shape {y.shape} {y.dtype})"
        )
    squeeze_axes = []
    if x.ndim == 1:
        x = expand_dims(x, 0)
        squeeze_axes.append(-2)
    if y.ndim == 1:
        y = expand_dims(y, 1)
        squeeze_axes.append(-1)
    out = apply(_matmul, (x, y))
    if squeeze_axes:
        out = squeeze(out, tuple(a % out.ndim for a in squeeze_axes))
    return out


# ------------------------------------------------------------------ einsum
def _parse_einsum(subscripts: str, shapes) -> tuple:
    """Explicit form ``("ij", "jk"), "ik"`` with any ellipsis replaced by letters."""
    subscripts = subscripts.replace(" ", "")
    if subscripts.count("->") > 1:
        raise ValueError(f"subscripts {subscripts!r} have more than one '->'")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs, out = subscripts, None
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"subscripts {subscripts!r} name {len(ins)} operands, got {len(shapes)}")
    for sub in ins + ([out] if out is not None else []):
        # NumPy's rules: indices are ASCII letters, and "..." stands once at most in each subscript.
        rest = sub.replace("...", "", 1)
        bad = next((c for c in rest if c not in string.ascii_letters), None)
        if bad is not None:
            what = "a second ellipsis" if "..." in rest else f"{bad!r}, which is not a letter (a-z, A-Z)"
            raise ValueError(f"subscript {sub!r} of {subscripts!r} has {what}")
    used = set(subscripts)
    spare = [c for c in string.ascii_letters if c not in used]
    ell_rank = max((len(s) - len(sub.replace("...", "")) for sub, s in zip(ins, shapes) if "..." in sub), default=0)
    ell = "".join(spare[:ell_rank])
    expanded = []
    for sub, shape in zip(ins, shapes):
        if "..." in sub:
            k = len(shape) - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[ell_rank - k :] if k else "")
        if len(sub) != len(shape):
            raise ValueError(f"subscript {sub!r} has {len(sub)} indices for an operand of shape {tuple(shape)}")
        expanded.append(sub)
    sizes = {}
    for sub, shape in zip(expanded, shapes):
        for c, d in zip(sub, shape):
            prev = sizes.setdefault(c, d)
            if prev is not None and d is not None and prev != d and 1 not in (prev, d):
                what = "the axes under '...' have" if c in ell else f"index {c!r} has"
                raise ValueError(f"{what} sizes {prev} and {d} in {subscripts!r}")
            if prev in (None, 1):
                sizes[c] = d
    if out is None:
        letters = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
        unknown = [c for c in out if c not in "".join(expanded)]
        if unknown or len(set(out)) != len(out):
            raise ValueError(
                f"output subscript {out!r} "
                + (f"names {unknown[0]!r}, which no operand has" if unknown else "repeats an index")
            )
    return tuple(expanded), out


def _einsum_infer(*xs, equation):
    ins, out = equation.split("->")
    ins = ins.split(",")
    if len(ins) != len(xs):
        raise ValueError(f"equation {equation!r} names {len(ins)} operands, got {len(xs)}")
    sizes = {}
    for sub, x in zip(ins, xs):
        if len(sub) != len(x.shape):
            raise ValueError(f"subscript {sub!r} does not match operand shape {x.shape}")
        for c, d in zip(sub, x.shape):
            prev = sizes.get(c)
            if prev is not None and d is not None and prev != d and 1 not in (prev, d):
                raise ValueError(f"index {c!r} has sizes {prev} and {d} (shapes {[tuple(t.shape) for t in xs]})")
            if prev is None or prev == 1:
                sizes[c] = d
    return spec(tuple(sizes[c] for c in out), xs[0].dtype)


_einsum = defop(
    "Einsum",
    inputs=("inputs",),
    attrs={"equation": ""},
    infer=_einsum_infer,
    promote="all",
    variadic=True,
    doc="Einstein summation; on NumPy through opt_einsum with cached paths.",
)


@_einsum.kernel("numpy")
def _einsum_numpy(*xs, equation):
    try:
        return _contract_expression(equation, *(x.shape for x in xs))(*xs)
    except ValueError as e:  # sizes unknown when traced that disagree when run: opt_einsum's words named no op
        shapes = ", ".join(f"{x.shape} {x.dtype}" for x in xs)
        raise ValueError(f"Einsum: {str(e).rstrip('.')} in {equation!r} (operands: {shapes})") from None


@_einsum.generic
def _einsum_generic(xp, *xs, equation):
    """Einsum from standard functions: each operand broadcast over all indices, multiplied, summed.

    A backend with an ``einsum`` of its own (CuPy: cuTENSOR/cuBLAS) uses it; the Array API has none,
    so this spells it out (fine for the sizes a strict, test-only backend sees).
    """
    if hasattr(xp, "einsum"):
        return xp.einsum(equation, *xs)
    ins, out = equation.split("->")
    letters = list(out) + sorted({c for c in ins if c.isalpha() and c not in out})
    total = None
    for sub, x in zip(ins.split(","), xs):
        sub = list(sub)  # no repeated index: einsum() rejects diagonals
        x = xp.permute_dims(x, tuple(sub.index(c) for c in letters if c in sub))
        x = xp.reshape(x, tuple(x.shape[[c for c in letters if c in sub].index(c)] if c in sub else 1 for c in letters))
        total = x if total is None else total * x
    return xp.sum(total, axis=tuple(range(len(out), len(letters)))) if len(letters) > len(out) else total


def _einsum_grad(node, g, index):
    from .shape import broadcast_like, expand_dims, sum_to_like

    ins, out = node.attrs["equation"].split("->")
    ins = ins.split(",")
    target = ins[index]
    x = node.inputs[index]
    others = [(s, t) for k, (s, t) in enumerate(zip(ins, node.inputs)) if k != index]
    present = set(out).union(*(set(s) for s, _ in others))
    kept = "".join(c for c in target if c in present)
    grad = einsum(",".join([out] + [s for s, _ in others]) + "->" + kept, g, *(t for _, t in others))
    if kept != target:
        grad = expand_dims(grad, tuple(k for k, c in enumerate(target) if c not in present))
    if tuple(grad.shape) != tuple(x.shape) or None in x.shape:
        # A size-1 axis broadcast against a longer one (NumPy's einsum allows it): the index got its size
        # from whichever side was longer, so sum where x was broadcast and spread where the others were
        # (at run time too when a size is unknown here; backprop sums the first kind then).
        grad = sum_to_like(broadcast_like(grad, x), x)
    return grad


register_gradient("Einsum", _einsum_grad)


def _sublist_subscripts(args) -> tuple:
    """NumPy's interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as (subscripts, operands)."""
    out = args[-1] if len(args) % 2 else None
    pairs = args[:-1] if len(args) % 2 else args
    operands, subs = list(pairs[0::2]), list(pairs[1::2])

    def letters(sublist):
        try:
            return "".join("..." if v is Ellipsis else string.ascii_letters[v] for v in sublist)
        except (TypeError, IndexError):
            raise ValueError(f"Einsum: sublist {sublist!r} must hold Ellipsis or ints in [0, 52)") from None

    text = ",".join(letters(sub) for sub in subs)
    return (text if out is None else text + "->" + letters(out)), operands


def _take_diagonals(ins, xs):
    """Operands whose subscript repeats an index (``"ii"``) replaced by their diagonals (``"i"``)."""
    from .array import diagonal

    ins, xs = list(ins), list(xs)
    for k, sub in enumerate(ins):
        while len(set(sub)) != len(sub):
            c = next(c for c in sub if sub.count(c) > 1)
            i = sub.index(c)
            j = sub.index(c, i + 1)
            if xs[k].shape[i] != xs[k].shape[j]:
                raise ValueError(f"index {c!r} has sizes {xs[k].shape[i]} and {xs[k].shape[j]} in operand {k}")
            xs[k] = diagonal(xs[k], 0, i, j)
            sub = sub[:i] + sub[i + 1 : j] + sub[j + 1 :] + c
        ins[k] = sub
    return ins, xs


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def einsum(subscripts, *operands, optimize=True, dtype=None, casting: str = "safe") -> Tensor:
    """Einstein summation (``numpy.einsum`` notation: ellipsis, repeated indices within an operand
    for diagonals, and the interleaved sublist form).

    ``optimize`` (NumPy's and JAX's: a bool, a strategy name or an ``einsum_path``) is accepted; the
    contraction order is always opt_einsum's optimized, cached path, and the values do not depend on it.
    ``dtype`` (NumPy's) computes in that dtype, the operands cast to it by NumPy's ``casting`` rule; without it
    the operands are promoted to their common dtype, which ``casting="no"`` and ``"equiv"`` refuse (as NumPy).

    >>> import tensorlib as tl
    >>> tl.einsum("ij,j->i", tl.ones((2, 3)), tl.ones(3)).numpy().tolist()
    [3.0, 3.0]
    >>> float(tl.einsum("ii", tl.eye(3)))
    3.0
    >>> tl.einsum(tl.ones((2, 3)), [0, 1], tl.ones(3), [1], [0]).numpy().tolist()
    [3.0, 3.0]
    """

    if not isinstance(optimize, (bool, str, list, tuple)):
        raise TypeError(f"Einsum: optimize must be a bool, a strategy name or a path, got {optimize!r}")
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts((subscripts,) + operands)
    if casting not in _CASTINGS:
        raise ValueError(f"Einsum: casting must be one of {', '.join(map(repr, _CASTINGS))}, got {casting!r}")
    if dtype is not None:
        operands = math_ops.cast_for_loop("Einsum", operands, dtype, casting)
    xs = as_tensors(*operands)
    if dtype is None and casting in ("no", "equiv") and len({x.dtype for x in xs}) > 1:
        # NumPy casts the operands to their common dtype, which these rules forbid for any that differs
        raise TypeError(
            f"Einsum: casting={casting!r} does not allow the operands' dtypes "
            f"({', '.join(str(x.dtype) for x in xs)}) to be cast to their common dtype"
        )
    try:
        ins, out = _parse_einsum(subscripts, [x.shape for x in xs])
        ins, xs = _take_diagonals(ins, xs)
    except ValueError as e:
        shapes = ", ".join(f"{tuple(x.shape)} {x.dtype}" for x in xs)
        raise ValueError(f"Einsum: {e} (operands: {shapes})") from None
    return apply(_einsum, xs, {"equation": ",".join(ins) + "->" + out})


def tensordot(a, b, axes=2) -> Tensor:
    """``numpy.tensordot``: contract the last ``axes`` axes of a with the first of b, or explicit lists."""
    return _tensordot(a, b, axes, "tensordot")


def _tensordot(a, b, axes, name) -> Tensor:
    """``tensordot``, its errors naming ``name`` (``dot`` and ``inner`` are tensordots)."""
    a, b = as_tensors(a, b)
    where = f"(shapes {a.shape} and {b.shape})"
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} must be in [0, {min(a.ndim, b.ndim)}] {where}")
        axes_a = list(range(a.ndim - n, a.ndim))
        axes_b = list(range(n))
    else:
        axes_a, axes_b = (np.atleast_1d(np.asarray(side)).tolist() for side in axes)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: axes {axes} pair {len(axes_a)} with {len(axes_b)} axes {where}")
    # Checked here, not wrapped modulo the rank: an out-of-range axis is an error, as in NumPy.
    axes_a = [normalize_axis(i, a.ndim, f"tensordot {where}: axis of a") for i in axes_a]
    axes_b = [normalize_axis(j, b.ndim, f"tensordot {where}: axis of b") for j in axes_b]
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError(f"tensordot: repeated axis in axes {axes} {where}")
    for i, j in zip(axes_a, axes_b):
        # Checked here: einsum would broadcast a size-1 axis against the other, NumPy's tensordot does not.
        if None not in (a.shape[i], b.shape[j]) and a.shape[i] != b.shape[j]:
            raise ValueError(
                f"{name}: axis {i} of a (size {a.shape[i]}) does not match axis {j} of b (size {b.shape[j]}) "
                f"(a: shape {a.shape} {a.dtype}, b: shape {b.shape} {b.dtype})"
            )
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(axes_a, axes_b):
        sb[j] = sa[i]
    out = [c for k, c in enumerate(sa) if k not in axes_a] + [c for k, c in enumerate(sb) if k not in axes_b]
    return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)
