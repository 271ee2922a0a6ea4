"""Functional autodiff in JAX's forms: grad, value_and_grad, vjp, jvp, jacobian (jacrev), jacfwd, hessian.

Arguments and results may be nested structures (dicts, lists, tuples, named
tuples) of tensors: ``tensorlib.tree`` flattens them, and gradients come back
in the structure of the argument they belong to.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from .. import dispatch
from .. import tree
from ..tensor import Tensor
from .backprop import backprop
from .tape import GradientTape, check_cotangent_kind, quiet


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    from ..ops.creation import tensor

    return tensor(x)


def _require_float(t, what, name):
    """Differentiating with respect to an integer or bool is an error (JAX's rule), never a zero."""
    if isinstance(t, Tensor) and t.dtype.kind not in "fc":
        raise TypeError(
            f"{what}: cannot differentiate with respect to {name} of dtype {t.dtype} "
            f"(shape {tuple(t.shape)}); gradients need a float input: pass a float value "
            "or cast it with tl.cast(x, 'float64')"
        )
    return t


def _fresh(t):
    """A new tensor for a differentiated Tensor argument: an Identity of it, which outer tapes record.

    Watching the caller's tensor itself would also watch every other use of it: the same tensor given
    twice (``grad(f, argnums=(0, 1))(x, x)``) or closed over by ``f`` (``grad(lambda a: a * x)(x)``,
    the nested-derivative "perturbation confusion") would get the total derivative where JAX gives
    the partial one.  Variables stay themselves (``f`` may assign them).
    """
    if t.__class__ is not Tensor:
        return t
    from ..ops.math import identity

    return identity(t)


def _differentiable(value, what, name, integers: bool = False):
    """``(tree of tensors, its leaves, its treedef)`` for an argument to differentiate with respect to;
    ``None`` entries are empty subtrees (they get ``None`` back).  With ``integers`` an integer or bool leaf
    is kept as it is (forward mode: it carries no tangent) instead of refused."""
    leaves, treedef = tree.flatten(value)
    leaves = [_as_tensor(x) for x in leaves]
    leaves = [
        x
        if integers and x.dtype.kind not in "fc"
        else _fresh(_require_float(x, what, name if not treedef.children else f"{name} (leaf {i})"))
        for i, x in enumerate(leaves)
    ]
    return tree.unflatten(treedef, leaves), leaves, treedef


def _sources(args, argnums, what, integers: bool = False):
    """``(args, sources, treedefs)``: the arguments with the differentiated ones made fresh tensors, their
    leaves (the sources) and one treedef per differentiated argument (``integers``: see ``_differentiable``)."""
    nums = _argnums_tuple(argnums, len(args), what)
    args = list(args)
    sources, treedefs = [], []
    for n in nums:
        args[n], leaves, treedef = _differentiable(args[n], what, f"argument {n}", integers)
        sources += leaves
        treedefs.append(treedef)
    return args, sources, treedefs


def _no_constants(leaves, outs, what) -> None:
    for leaf, o in zip(leaves, outs):
        if o is None:
            raise TypeError(
                f"{what}: f returned a constant {type(leaf).__name__} (no tensor): its Jacobian is zero and not "
                "computed; return tensors"
            )


def _argnums_tuple(argnums, nargs, what):
    """``argnums`` as a tuple of ints (NumPy integers too, as in JAX); each argument once."""
    nums = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    try:
        if any(isinstance(n, (bool, np.bool_)) for n in nums):
            raise TypeError
        nums = tuple(operator.index(n) for n in nums)
    except TypeError:
        raise TypeError(f"{what}: argnums must be an int or a tuple of ints, got {argnums!r:.60}") from None
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"{what}: argnums {argnums} out of range for {nargs} positional arguments")
    # The same argument twice was differentiated once, its first gradient a silent zero (the argument
    # was replaced by a fresh tensor for its second place); PyTorch's torch.func refuses it too.
    positions = [n % nargs for n in nums]
    if len(set(positions)) != len(positions):
        raise ValueError(f"{what}: argnums {argnums} names an argument twice; give each argument once")
    return nums


def _one_argnum(argnums) -> bool:
    """Whether ``argnums`` is one int (the gradient comes bare), not a tuple (a tuple of gradients)."""
    return not isinstance(argnums, (tuple, list))


def _split(flat, treedefs):
    """``flat`` cut into one tree per treedef."""
    out, i = [], 0
    for treedef in treedefs:
        out.append(tree.unflatten(treedef, flat[i : i + treedef.num_leaves]))
        i += treedef.num_leaves
    return out


# JAX's dtype of the gradient of an integer or bool argument under allow_int=True (jax.dtypes.float0): no data.
_FLOAT0 = np.dtype([("float0", np.void, 0)])


def _value_and_grads(f, argnums, has_aux, holomorphic, args, kwargs, what, allow_int: bool = False):
    args, sources, treedefs = _sources(args, argnums, what, integers=allow_int)
    inexact = [t for t in sources if t.dtype.kind in "fc"]
    if holomorphic:
        _complex_sources(inexact, what)
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(sources)
        out = f(*args, **kwargs)
    out, aux = _split_aux(out, has_aux, what)
    if not isinstance(out, Tensor):
        raise TypeError(f"{what}: f must return a scalar Tensor, got {type(out).__name__}")
    if out.shape != ():
        raise TypeError(
            f"{what}: f must return a scalar, got shape {out.shape}; use tl.vjp or tl.jacobian for non-scalar outputs"
        )
    if holomorphic and out.dtype.kind != "c":
        raise TypeError(f"{what}: with holomorphic=True, f must return a complex scalar, got dtype {out.dtype}")
    if not holomorphic and out.dtype.kind != "f":
        # JAX's rule: an integer or bool output has no gradient, a complex one needs holomorphic=True or tl.vjp.
        raise TypeError(
            f"{what}: f must return a real float scalar, got dtype {out.dtype}; differentiate a float "
            "(tl.real(out) or tl.abs(out) of a complex one), pass holomorphic=True for a holomorphic f, or use tl.vjp"
        )
    found = iter(tape.gradient(out, inexact, unconnected_gradients="zero"))
    flat = [next(found) if t.dtype.kind in "fc" else _float0_zeros(t, what) for t in sources]
    grads = _split(flat, treedefs)
    g = grads[0] if _one_argnum(argnums) else tuple(grads)
    return out, g, aux


def _float0_zeros(t: Tensor, what: str) -> np.ndarray:
    """The float0 gradient of the integer or bool source ``t`` (allow_int=True): zeros of its shape, no data."""
    if None in t.shape:
        raise TypeError(
            f"{what}: allow_int=True gives an integer argument a float0 gradient of its shape, but the shape "
            f"{t.shape} (dtype {t.dtype}) has an unknown dim under tl.function; give it a full shape in input_signature"
        )
    return np.zeros(t.shape, _FLOAT0)


def _complex_sources(sources, what) -> None:
    """``holomorphic=True`` differentiates with respect to complex inputs only (JAX's rule)."""
    _all_complex(
        sources,
        f"{what}: holomorphic=True differentiates with respect to complex inputs",
        "; cast it with tl.cast(x, 'complex128')",
    )


def _complex_outputs(outs, what) -> None:
    """``holomorphic=True`` Jacobians are of complex outputs only (JAX's rule)."""
    _all_complex(outs, f"{what}: with holomorphic=True, f must return complex tensors", "")


def _all_complex(tensors, message, advice) -> None:
    for t in tensors:
        if t.dtype.kind != "c":
            raise TypeError(f"{message}, got dtype {t.dtype} (shape {tuple(t.shape)}){advice}")


def _split_aux(out, has_aux, what):
    """``(output, aux)``: ``f``'s result taken apart when ``has_aux``, else ``(out, None)``."""
    if not has_aux:
        return out, None
    # A pair only: unpacking a Tensor of length 2 would silently take its elements as (value, aux).
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        got = f"a {type(out).__name__} of length {len(out)}" if isinstance(out, (tuple, list)) else type(out).__name__
        raise TypeError(f"{what}: with has_aux=True, f must return a pair (output, aux), got {got}")
    return out[0], out[1]


def grad(f, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False):
    """The gradient function of a scalar function ``f``; nested arguments get gradients of their structure.

    With ``holomorphic=True`` (JAX's), ``f`` maps complex inputs to a complex scalar and its complex
    derivative ``f'(z)`` comes back (for a ``f`` that is holomorphic).  An integer or bool argument is an
    error, unless ``allow_int=True`` (JAX's): then its gradient is a NumPy array of its shape and JAX's
    ``float0`` dtype (``numpy.dtype([("float0", "V")])``, equal to ``jax.dtypes.float0``), which holds no data.

    >>> import tensorlib as tl
    >>> float(tl.grad(lambda x: x ** 3)(2.0))
    12.0
    >>> g = tl.grad(lambda p: p["w"] * p["b"])({"w": 2.0, "b": 3.0})
    >>> float(g["w"]), float(g["b"])
    (3.0, 2.0)

    Each differentiated argument is a variable of its own, as in JAX: the same tensor given twice,
    or also closed over by ``f``, gets its partial derivative, not the total one.

    >>> x = tl.tensor(3.0)
    >>> [float(g) for g in tl.grad(lambda a, b: a * b, argnums=(0, 1))(x, x)], float(tl.grad(lambda a: a * x)(x))
    ([3.0, 3.0], 3.0)
    >>> complex(tl.grad(lambda z: z**3, holomorphic=True)(tl.tensor(1 + 2j)))  # 3 z^2
    (-9+12j)
    >>> gx, gn = tl.grad(lambda x, n: x**n, argnums=(0, 1), allow_int=True)(tl.tensor(2.0), tl.tensor(3))
    >>> float(gx), gn.shape, gn.dtype.names
    (12.0, (), ('float0',))
    """
    _check_allow_int(allow_int, "tl.grad")

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        _, g, aux = _value_and_grads(f, argnums, has_aux, holomorphic, args, kwargs, "tl.grad", allow_int)
        return (g, aux) if has_aux else g

    return grad_f


def value_and_grad(f, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False):
    """``f``'s value and gradient in one pass: ``(value, grad)`` or ``((value, aux), grad)``; the keywords
    as in :func:`grad`.

    >>> import tensorlib as tl
    >>> value, g = tl.value_and_grad(lambda p: tl.sum(p[0] * p[1]))([tl.tensor(2.0), tl.tensor(5.0)])
    >>> float(value), [float(t) for t in g]
    (10.0, [5.0, 2.0])
    """

    _check_allow_int(allow_int, "tl.value_and_grad")

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        out, g, aux = _value_and_grads(f, argnums, has_aux, holomorphic, args, kwargs, "tl.value_and_grad", allow_int)
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def _check_allow_int(allow_int, what) -> None:
    if allow_int is not True and allow_int is not False:
        raise TypeError(f"{what}: allow_int must be a bool, got {allow_int!r:.60}")


def _outputs(out, what):
    """The output leaves: Tensors take part; a NumPy or Python constant has a zero derivative."""
    leaves, treedef = tree.flatten(out)
    tensors = []
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            tensors.append(leaf)
        elif hasattr(leaf, "shape") and hasattr(leaf, "dtype") or isinstance(leaf, (int, float, bool)):
            tensors.append(None)  # a constant: nothing flows back from it
        else:
            raise TypeError(
                f"{what}: f returned a {type(leaf).__name__} ({leaf!r:.60}); return tensors, "
                "arrays or numbers, or dicts/lists/tuples of them"
            )
    return leaves, tensors, treedef


def vjp(f, *primals, has_aux: bool = False):
    """``(f(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` returns one gradient per primal.

    With ``has_aux=True`` ``f`` returns ``(output, aux)`` and the result is ``(output, vjp_fn, aux)``,
    as in JAX.

    Primals, outputs and cotangents may be nested structures; an output that
    is a NumPy or Python constant contributes nothing (its cotangent is ignored).

    >>> import tensorlib as tl
    >>> out, vjp_fn = tl.vjp(lambda x: x * x, tl.tensor([1.0, 2.0]))
    >>> vjp_fn(tl.tensor([1.0, 1.0]))[0].numpy().tolist()
    [2.0, 4.0]
    """
    return _vjp(f, primals, has_aux, "tl.vjp")


def _vjp(f, primals, has_aux, what, integers: bool = False):
    """``tl.vjp``; with ``integers`` an integer or bool primal leaf is no source: its gradient is None."""
    primals, xs, treedefs = _primals(primals, what, integers)
    wrt = [x for x in xs if x.dtype.kind in "fc"]
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    with tape:
        tape.watch(wrt)
        out, aux = _split_aux(f(*primals), has_aux, what)
    leaves, outs, out_def = _outputs(out, what)

    def vjp_fn(cotangent):
        # Dicts are matched by key, never zipped in flattening order (their order or keys may differ); lists and
        # tuples only by count (``[ct]`` for one output is accepted).
        cts, ct_def = tree.flatten_as(out_def, cotangent)
        if cts is None:
            raise ValueError(
                f"vjp_fn: {ct_def.num_leaves} cotangents for {len(leaves)} outputs (output structure "
                f"{out_def!r}, cotangent structure {ct_def!r})"
            )
        targets, weights = [], []
        for k, (c, o, leaf) in enumerate(zip(cts, outs, leaves)):
            shape = tuple(getattr(leaf, "shape", ()))
            if tuple(getattr(c, "shape", ())) != shape:
                raise ValueError(
                    f"vjp_fn: cotangent shape {tuple(getattr(c, 'shape', ()))} does not match output shape {shape}"
                )
            if o is not None and o.dtype.kind not in "fc":
                # A constant to differentiation (JAX's float0 cotangent; a float0 array was "dtype not supported").
                if not _zeros_of_shape(c, shape):
                    raise TypeError(
                        f"vjp_fn: output {k} is {o.dtype} (shape {shape}), which carries no gradient; its cotangent "
                        f"must be zeros or JAX's float0 zeros of its shape, got nonzero values"
                    )
            elif o is not None:
                weight = c if isinstance(c, Tensor) else dispatch.to_tensor(c, o.backend, o.dtype)
                check_cotangent_kind(weight, o, "vjp_fn: cotangent")
                targets.append(o)
                weights.append(weight)
        with quiet(tape):
            grads = iter(backprop(tape._nodes, targets, weights, wrt, "zero"))
        return tuple(_split([next(grads) if x.dtype.kind in "fc" else None for x in xs], treedefs))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def linear_transpose(f, *primals):
    """The transpose of the linear function ``f`` (JAX's ``jax.linear_transpose``): ``f_t(cotangent)``
    returns, for a ``cotangent`` of ``f``'s output structure, shapes and dtypes, one cotangent per primal
    (a tuple), ``x -> J^T x`` for the matrix ``J`` of ``f`` (its transpose, not the conjugate one, for a
    complex ``f``, as in JAX).  ``primals`` give only the shapes and dtypes (tensors, arrays, ``TensorSpec``s
    or anything with ``shape`` and ``dtype``; nested too), of a float or complex dtype.  ``f`` is run once,
    at zeros, and its recorded vjp is transposed at each call; for an affine ``f`` that is the transpose of
    its linear part, as in JAX.  A non-linear ``f`` is a ValueError, as in JAX: ``f`` runs once more, at a fixed
    random point, for a dot-product test (under ``tl.function`` or ``tl.vmap``, with no values, it is not run).

    >>> import tensorlib as tl
    >>> a = tl.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> f_t = tl.linear_transpose(lambda x: a @ x, tl.TensorSpec((2,), "float32"))
    >>> f_t(tl.tensor([1.0, 0.0, 1.0]))[0].numpy().tolist()  # a.T @ [1, 0, 1]
    [6.0, 8.0]
    """
    from .. import dtypes
    from ..ops import creation

    if not callable(f):
        raise TypeError(f"tl.linear_transpose: f must be callable, got {type(f).__name__} {f!r:.60}")
    zeros = []
    for n, primal in enumerate(primals):
        leaves, treedef = tree.flatten(primal)
        filled = []
        for leaf in leaves:
            shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
            if shape is None or dtype is None:
                leaf = np.asarray(leaf)
                shape, dtype = leaf.shape, leaf.dtype
            dtype = dtypes.as_dtype(dtype)
            if dtype.kind not in "fc" or None in tuple(shape):
                raise TypeError(
                    f"tl.linear_transpose: primal {n} must give a known shape and a float or complex dtype, got "
                    f"shape {tuple(shape)} {dtype}"
                )
            filled.append(creation.zeros(tuple(shape), dtype=dtype))
        zeros.append(tree.unflatten(treedef, filled))
    out, vjp_fn = _vjp(f, zeros, False, "tl.linear_transpose")
    out_leaves, out_def = tree.flatten(out)
    if not dispatch.current_state().modes:  # values to test with (not under tl.function or tl.vmap)
        _check_linear(f, zeros, out_leaves, out_def, vjp_fn)

    def f_transpose(cotangent):
        leaves, treedef = tree.flatten(tree.ordered_as(out_def, cotangent))  # dicts pair by key
        # Not getattr(c, "dtype", np.asarray(c).dtype): its default ran first, reading a traced tensor's value.
        given = [_shape_and_dtype(c) for c in leaves]
        wanted = [_shape_and_dtype(o) for o in out_leaves]
        if treedef != out_def or given != wanted:
            raise TypeError(
                "tl.linear_transpose: the cotangent must have f's output structure, shapes and dtypes: expected "
                f"{_listed(wanted)}, got {_listed(given)}"
            )
        return vjp_fn(cotangent)

    return f_transpose


def _check_linear(f, zeros: list, out_leaves: list, out_def, vjp_fn) -> None:
    """Refuse a non-linear ``f`` in ``linear_transpose`` (JAX raises: its non-linear primitives have no transpose
    rule), where the transposed vjp at zeros was silently a wrong answer (``sin`` gave the identity, ``x * x`` 0).
    The dot-product test at one fixed random point ``r`` and cotangent ``c``: ``<c, f(r) - f(0)> == <f_t(c), r>``
    holds for every affine ``f`` and fails for a non-linear one but on a set of measure zero.  ``<a, b>`` is the
    real part of ``sum(a * b)``, the pairing of JAX's non-conjugated transpose, under which the real-linear
    ``conj``, ``real`` and ``imag`` are linear too.  Within ``sqrt(eps)`` of the products' magnitudes in the
    narrowest dtype."""
    from ..ops import creation

    rng = np.random.default_rng(0)

    def draw(like):
        value = rng.standard_normal(tuple(like.shape))
        if like.dtype.kind == "c":
            value = value + 1j * rng.standard_normal(tuple(like.shape))
        return creation.tensor(value, dtype=like.dtype)

    points = [tree.unflatten(d, [draw(z) for z in leaves]) for leaves, d in map(tree.flatten, zeros)]
    with dispatch.tapes_paused():
        moved = tree.flatten(f(*points))[0]
    kept = [k for k, o in enumerate(out_leaves) if isinstance(o, Tensor) and o.dtype.kind in "fc"]
    cotangent = [
        draw(o) if k in kept else creation.zeros(tuple(o.shape), dtype=o.dtype) if isinstance(o, Tensor) else o
        for k, o in enumerate(out_leaves)
    ]
    back = [t for ct in vjp_fn(tree.unflatten(out_def, cotangent)) for t in tree.flatten(ct)[0]]
    probes = [t for p in points for t in tree.flatten(p)[0]]
    narrowest = max(np.finfo(t.dtype.name).eps for t in (*probes, *(out_leaves[k] for k in kept)))

    def wide(t):  # summed in complex128: float16 products overflowed to inf, and passed any f
        return np.asarray(t.numpy() if isinstance(t, Tensor) else t, dtype=np.complex128)

    terms = [(wide(cotangent[k]), wide(moved[k]), wide(out_leaves[k])) for k in kept]
    pairs = [(wide(b), wide(r)) for b, r in zip(back, probes) if b is not None]
    change = sum(np.sum(c * (m - o)) for c, m, o in terms).real
    through = sum(np.sum(b * r) for b, r in pairs).real
    scale = sum(np.sum(np.abs(c) * (np.abs(m) + np.abs(o))) for c, m, o in terms)
    scale += sum(np.sum(np.abs(b * r)) for b, r in pairs)
    if abs(change - through) > np.sqrt(narrowest) * scale:
        raise ValueError(
            f"tl.linear_transpose: {getattr(f, '__name__', type(f).__name__)} is not linear: at a random point r and "
            f"cotangent c, <c, f(r) - f(0)> = {change:.6g} but <f_transpose(c), r> = {through:.6g} (the real parts); "
            "f must be linear (or affine) in its arguments, as for jax.linear_transpose"
        )


def _shape_and_dtype(value) -> tuple:
    """(shape, dtype) of a tensor or array-like, without reading a tensor's value (a traced one has none)."""
    from .. import dtypes

    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        value = np.asarray(value)
    return tuple(value.shape), dtypes.as_dtype(value.dtype)


def _listed(specs) -> str:
    return "(" + ", ".join(f"{d.name}{list(s)}" for s, d in specs) + ")"


def linearize(f, *primals, has_aux: bool = False):
    """``(f(*primals), f_jvp)`` (JAX's ``jax.linearize``): ``f_jvp(*tangents)`` is the Jacobian of ``f`` at
    ``primals`` applied to ``tangents``, as :func:`jvp` gives, but ``f`` runs once: each call of ``f_jvp``
    transposes the recorded vjp (linear in its cotangent) instead of running ``f`` again.  With
    ``has_aux=True`` ``f`` returns ``(output, aux)`` and the result is ``(output, f_jvp, aux)``, as in JAX.

    >>> import tensorlib as tl
    >>> y, f_jvp = tl.linearize(lambda x: tl.sin(x) * x, tl.tensor([0.0, 1.0]))
    >>> [round(v, 4) for v in f_jvp(tl.tensor([1.0, 1.0])).numpy().tolist()]
    [0.0, 1.3818]
    """
    from ..ops import creation
    from ..ops import math as math_ops

    out, vjp_fn, *aux = _vjp(f, primals, has_aux, "tl.linearize", integers=True)
    leaves, outs, out_def = _outputs(out, "tl.linearize")
    zeros = tree.unflatten(out_def, [math_ops.zeros_like(leaf) for leaf in leaves])
    treedefs = [tree.flatten(p)[1] for p in primals]

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise ValueError(f"tl.linearize: f_jvp takes {len(primals)} tangents (one per primal), got {len(tangents)}")
        # Checked as tl.jvp checks them (an integer primal's tangent None or zeros: it carries none).
        ts = _tangent_leaves(primals, tangents, "tl.linearize")
        _, transposed = _vjp(vjp_fn, (zeros,), False, "tl.linearize", integers=True)
        (tangent_out,) = transposed(tuple(_split(ts, treedefs)))
        # An integer or bool output's tangent is a zero, as tl.jvp gives.
        flat = tree.flatten_as(out_def, tangent_out, is_leaf=lambda t: t is None)[0]
        return tree.unflatten(
            out_def,
            [
                t if t is not None else creation.zeros(tuple(leaf.shape), _float_dtype(leaf))
                for t, leaf in zip(flat, leaves)
            ],
        )

    return (out, f_jvp, *aux)


def _tangent_leaves(primals, tangents, what) -> list:
    """The leaves of ``tangents`` as tensors, in the order of the leaves of ``primals`` (dicts by key), each
    of its primal's shape; None for an integer or bool primal, which carries no tangent (PyTorch's forward-mode
    rule, JAX's float0): its tangent is given as None or as zeros."""
    xs, primal_def = tree.flatten(primals)
    flat_tangents, tangent_def = tree.flatten_as(primal_def, tangents)
    if flat_tangents is None:  # None given for an integer primal's tangent
        flat_tangents, _ = tree.flatten_as(primal_def, tangents, is_leaf=lambda t: t is None)
    if flat_tangents is None:
        raise tree.structure_error(f"{what}: tangents and primals", primal_def, tangent_def)
    xs = [_as_tensor(x) for x in xs]
    ts = []
    for i, (x, t) in enumerate(zip(xs, flat_tangents)):
        where = f"primal {i} ({x.dtype}, shape {tuple(x.shape)})"
        if t is None:
            if x.dtype.kind in "fc":
                raise TypeError(
                    f"{what}: the tangent of {where} is None; a float primal needs a tangent (zeros for none)"
                )
            ts.append(None)
            continue
        dtype = t.dtype if isinstance(t, Tensor) else np.asarray(t).dtype
        if x.dtype.kind not in "fc":
            shape = tuple(t.shape) if isinstance(t, Tensor) else np.shape(t)
            if not _zeros_of_shape(t, x.shape):
                raise TypeError(
                    f"{what}: cannot differentiate with respect to primal {i} of dtype {x.dtype} (shape "
                    f"{tuple(x.shape)}): an integer or bool primal carries no tangent, so give None or zeros of its "
                    f"shape for it, not shape {shape} {dtype}{' with nonzero values' if shape == tuple(x.shape) else ''}"
                )
            ts.append(None)
            continue
        if dtype.kind == "c" and x.dtype.kind != "c":
            # A real primal moves along real directions only: the imaginary part was dropped silently
            # (jvp(f, (x,), (1j + 1,)) gave f'(x)); JAX refuses the dtype mismatch too.
            raise TypeError(
                f"{what}: tangent {i} is {dtype} for a real primal ({x.dtype}, shape {tuple(x.shape)}); "
                f"a real primal's tangent is real (pass its real part, or make the primal complex)"
            )
        # Tangents given as arrays or numbers go to their primal's backend.
        t = t if isinstance(t, Tensor) else dispatch.to_tensor(t, x.backend, x.dtype)
        if tuple(x.shape) != tuple(t.shape):
            raise ValueError(f"{what}: tangent shape {tuple(t.shape)} does not match primal shape {tuple(x.shape)}")
        ts.append(t)
    return ts


def _zeros_of_shape(t, shape) -> bool:
    """Whether ``t`` (a tensor, array or number) is zeros of ``shape``, or JAX's ``float0`` of it (symbolic zeros):
    the only tangent or cotangent of an integer or bool value (it carries none).  Traced zeros count (no value)."""
    if isinstance(t, Tensor):  # its values on the host (any backend's array); a traced one has none
        values, got = (None if t._value is None else t.numpy()), tuple(t.shape)
    else:
        values = np.asarray(t)
        got = values.shape
    return got == tuple(shape) and (values is None or values.dtype.kind == "V" or not np.any(values))


def _primals(primals, what, integers: bool = False):
    trees, xs, treedefs = [], [], []
    for i, p in enumerate(primals):
        t, leaves, treedef = _differentiable(p, what, f"primal {i}", integers)
        trees.append(t)
        xs += leaves
        treedefs.append(treedef)
    return trees, xs, treedefs


def jvp(f, primals, tangents, has_aux: bool = False):
    """Forward mode: ``(f(*primals), J @ tangents)``, by transposing the vjp (the double-vjp trick).

    With ``has_aux=True`` ``f`` returns ``(output, aux)`` and the result is
    ``(output, tangent_out, aux)``, as in JAX.

    ``tangents`` has the structure of ``primals``; the result tangent has the structure of the
    output (a NumPy or Python constant output gets a zero tangent).  An integer or bool primal carries no
    tangent (PyTorch's forward-mode rule; JAX's float0 tangents): give None or zeros for it.  An integer or
    bool output gets a zero (float) tangent.

    >>> import tensorlib as tl
    >>> _, t = tl.jvp(lambda x: x * x, (tl.tensor([1.0, 2.0]),), (tl.tensor([1.0, 1.0]),))
    >>> t.numpy().tolist()
    [2.0, 4.0]
    >>> _, t = tl.jvp(lambda x, n: x**n, (tl.tensor(2.0), tl.tensor(3)), (tl.tensor(1.0), None))
    >>> float(t)
    12.0
    """
    from ..ops import creation
    from ..ops import math as math_ops
    from ..ops import reduce as reduce_ops

    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"tl.jvp: {len(primals)} primals but {len(tangents)} tangents")
    primals, xs, treedefs = _primals(primals, "tl.jvp", integers=True)
    ts = _tangent_leaves(tuple(primals), tangents, "tl.jvp")
    xs, ts = [x for x, t in zip(xs, ts) if t is not None], [t for t in ts if t is not None]
    inner = GradientTape(persistent=True, watch_accessed_variables=False)
    with inner:
        inner.watch(xs)
        out, aux = _split_aux(f(*primals), has_aux, "tl.jvp")
    leaves, outs, out_def = _outputs(out, "tl.jvp")
    # An integer or bool output is a constant to differentiation: a zero tangent, as for NumPy outputs.
    outs = [o if o is None or o.dtype.kind in "fc" else None for o in outs]
    live = [o for o in outs if o is not None]
    dummies = [math_ops.zeros_like(o) for o in live]
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(dummies)
        with quiet(inner):
            grads = backprop(inner._nodes, live, dummies, xs, "zero")
        total = None
        for g, t in zip(grads, ts):
            term = reduce_ops.sum(g * math_ops.cast(t, dtype=g.dtype))
            total = term if total is None else total + term
    tangent_live = iter(
        outer.gradient(total, dummies, unconnected_gradients="zero")
        if total is not None
        else [math_ops.zeros_like(o) for o in live]
    )
    tangent_out = [
        next(tangent_live)
        if o is not None
        else creation.zeros(tuple(getattr(leaf, "shape", ())), dtype=_float_dtype(leaf))
        for o, leaf in zip(outs, leaves)
    ]
    tangent_out = tree.unflatten(out_def, tangent_out)
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


def _float_dtype(value):
    dtype = value.dtype if isinstance(value, Tensor) else np.result_type(value)
    return dtype if dtype.kind == "f" else np.float64


def jacobian(f, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """Reverse-mode Jacobian: ``out.shape + arg.shape`` for each differentiated argument.

    Outputs may be a tuple, list or dict of tensors (each gets its Jacobians) and arguments
    nested structures (each leaf gets its Jacobian, in the argument's structure); with a tuple
    ``argnums`` each output gets a tuple, one per argument, as in JAX.  With ``has_aux=True``,
    ``f`` returns ``(output, aux)`` and the result is ``(jacobian, aux)``.  With ``holomorphic=True``
    (JAX's) the arguments and outputs must be complex, and a holomorphic ``f`` gets its complex
    derivatives ``d out_i / d z_j``.

    >>> import tensorlib as tl
    >>> tl.jacobian(lambda x: x * x)(tl.tensor([1.0, 3.0])).numpy().tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    >>> jac, aux = tl.jacobian(lambda x: (x * x, "aux"), has_aux=True)(tl.tensor([1.0, 3.0]))
    >>> jac.numpy().tolist(), aux
    ([[2.0, 0.0], [0.0, 6.0]], 'aux')
    >>> tl.jacobian(lambda z: z**2, holomorphic=True)(tl.tensor([1j, 2.0 + 0j])).numpy().tolist()
    [[2j, 0j], [0j, (4+0j)]]
    """
    return _reverse_jacobian(f, argnums, has_aux, holomorphic, "tl.jacobian")


def _reverse_jacobian(f, argnums, has_aux, holomorphic, what):
    """:func:`jacobian`, its errors naming ``what`` (the public function the user called)."""

    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        args, sources, treedefs = _sources(args, argnums, what)
        if holomorphic:
            _complex_sources(sources, what)
        with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(sources)
            out, aux = _split_aux(f(*args, **kwargs), has_aux, what)
        leaves, outs, out_def = _outputs(out, what)
        _no_constants(leaves, outs, what)
        if holomorphic:
            _complex_outputs(outs, what)
        per_output = []
        for o in outs:
            jacs = _split(tape.jacobian(o, sources, unconnected_gradients="zero"), treedefs)
            per_output.append(jacs[0] if _one_argnum(argnums) else tuple(jacs))
        jac = tree.unflatten(out_def, per_output)
        return (jac, aux) if has_aux else jac

    return jac_f


jacrev = jacobian  # JAX's and PyTorch's name for the reverse-mode Jacobian


def jacfwd(f, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """Forward-mode Jacobian (JAX's ``jacfwd``): one :func:`jvp` per element of the differentiated
    arguments, mapped by ``tl.vmap``; the same result, shapes and structure as :func:`jacobian` (which
    takes one backward pass per output element, mapped too).  It suits functions with fewer inputs than
    outputs.  A complex argument's element takes two jvps, along its real and its imaginary part, so that
    non-holomorphic functions (``abs``, ``conj``) get reverse mode's column too (docs/complex.md); with
    ``holomorphic=True`` (JAX's: complex arguments and outputs) it takes the one along the real part, the
    complex derivative of a holomorphic ``f``.

    >>> import tensorlib as tl
    >>> tl.jacfwd(lambda x: tl.stack([x[0] * x[1], x[0] ** 2]))(tl.tensor([2.0, 3.0])).numpy().tolist()
    [[3.0, 2.0], [4.0, 0.0]]
    >>> tl.jacfwd(lambda z: z**2, holomorphic=True)(tl.tensor([1j, 2.0 + 0j])).numpy().tolist()
    [[2j, 0j], [0j, (4+0j)]]
    """
    from ..ops import creation
    from ..ops import math as math_ops
    from ..ops import shape as shape_ops
    from .custom import _global_random_state, _random_state_at
    from .vmap import vmap

    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        args, sources, treedefs = _sources(args, argnums, "tl.jacfwd")
        nums = _argnums_tuple(argnums, len(args), "tl.jacfwd")
        if holomorphic:
            _complex_sources(sources, "tl.jacfwd")

        def of_sources(*leaves):
            full = list(args)
            for n, part in zip(nums, _split(list(leaves), treedefs)):
                full[n] = part
            return _split_aux(f(*full, **kwargs), has_aux, "tl.jacfwd")[0]

        # Every run of f draws what the first one drew (the Jacobian was of other dropout masks than the
        # output, the aux and tl.jacobian's, which all come from one run).
        start = _global_random_state()
        with dispatch.assigns_logged() as assigned:
            result = f(*args, **kwargs)
        if assigned:
            _refuse_assigns(assigned)
        out, aux = _split_aux(result, has_aux, "tl.jacfwd")
        leaves, outs, out_def = _outputs(out, "tl.jacfwd")
        _no_constants(leaves, outs, "tl.jacfwd")
        if holomorphic:
            _complex_outputs(outs, "tl.jacfwd")
        columns = []  # per source: per output leaf, its Jacobian
        for k, source in enumerate(sources):

            def tangent_out(t, k=k):
                tangents = [t if j == k else math_ops.zeros_like(s) for j, s in enumerate(sources)]
                return tree.leaves(jvp(of_sources, tuple(sources), tuple(tangents))[1])

            size = math.prod(source.shape)
            basis = shape_ops.reshape(
                creation.eye(size, dtype=source.dtype, backend=source.backend), (size, *source.shape)
            )
            if source.dtype.kind == "c" and not holomorphic:  # along the real and the imaginary part of each element
                basis = shape_ops.concat([basis, basis * 1j], axis=0)
            if size:
                with _random_state_at(start):
                    stacked = vmap(tangent_out, randomness="same")(basis)
            else:
                stacked = [creation.zeros((0, *o.shape), o.dtype) for o in outs]
            if size and source.dtype.kind == "c" and not holomorphic:
                stacked = [_reverse_convention(c[:size], c[size:]) for c in stacked]
            # (size, *out.shape) -> out.shape + source.shape
            columns.append(
                [
                    shape_ops.reshape(
                        shape_ops.transpose(shape_ops.reshape(c, (size, math.prod(o.shape)))), (*o.shape, *source.shape)
                    )
                    for c, o in zip(stacked, outs)
                ]
            )
        per_output = []
        for i in range(len(outs)):
            jacs = _split([columns[k][i] for k in range(len(sources))], treedefs)
            per_output.append(jacs[0] if _one_argnum(argnums) else tuple(jacs))
        jac = tree.unflatten(out_def, per_output)
        return (jac, aux) if has_aux else jac

    return jac_f


def _refuse_assigns(assigned) -> None:
    """``tl.jacfwd``'s f assigned Variables (``assigned``: :func:`dispatch.assigns_logged`'s log): put back their
    values from before it ran and refuse, before any mapped run of f (tl.vmap refused the first assign there,
    after the first run had already changed the Variables)."""
    for var, before in assigned.values():
        dispatch.put_value(var, before)
    from .vmap import AssignError

    names = ", ".join(f"{var.name!r} (shape {tuple(var.shape)}, {var.dtype})" for var, _ in assigned.values())
    raise AssignError(
        f"tl.jacfwd: f assigns Variable {names}, and jacfwd runs f once per input element (mapped by tl.vmap), "
        "which cannot assign; the Variables are left unchanged. Use tl.jacrev (one run of f, its assigns done once) "
        "or return the new values from f and assign after"
    )


def _reverse_convention(along_real, along_imag):
    """The Jacobian column that reverse mode gives for a complex source element (docs/complex.md): row i
    is the gradient of Re(out_i), d Re(out_i)/dx - i d Re(out_i)/dy, from the tangents along x and y.  For
    a holomorphic f it is f' (the tangent along x); jacfwd(tl.abs) gave d|z|/dx alone, real, while
    jacrev(tl.abs) gave conj(z)/|z|."""
    from ..ops import elementwise

    return elementwise.real(along_real) - elementwise.real(along_imag) * 1j


def hessian(f, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian: the Jacobian of the Jacobian (JAX's ``jacfwd(jacrev(f))``), of shape
    ``out.shape + arg.shape + arg.shape``; for a scalar ``f`` the Jacobian of its gradient
    (``(hessian, aux)`` with ``has_aux``).  ``f``'s outputs must be real float tensors, or with
    ``holomorphic=True`` (JAX's) complex ones of complex arguments: a holomorphic ``f``'s second
    complex derivatives.

    >>> import tensorlib as tl
    >>> tl.hessian(lambda x: tl.sum(x ** 3))(tl.tensor([1.0, 2.0])).numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    >>> tl.hessian(lambda x: x[0] * x ** 2)(tl.tensor([1.0, 2.0])).shape
    (2, 2, 2)
    >>> complex(tl.hessian(lambda z: z**3, holomorphic=True)(tl.tensor(1 + 2j)))  # 6 z
    (6+12j)
    """
    inner = _reverse_jacobian(_float_outputs(f, has_aux, holomorphic), argnums, has_aux, holomorphic, "tl.hessian")
    return _reverse_jacobian(inner, argnums, has_aux, holomorphic, "tl.hessian")


def _float_outputs(f, has_aux, holomorphic):
    """``f``, refusing integer, bool and complex outputs (as ``tl.grad`` does): their Hessian is not defined;
    with ``holomorphic`` complex outputs are the ones it takes (``jacobian`` checks them)."""

    @functools.wraps(f)
    def checked(*args, **kwargs):
        result = f(*args, **kwargs)
        for leaf in tree.leaves(_split_aux(result, has_aux, "tl.hessian")[0]):
            if isinstance(leaf, Tensor) and leaf.dtype.kind != "f" and not holomorphic:
                raise TypeError(
                    f"tl.hessian: f must return real float tensors, got dtype {leaf.dtype} (shape {tuple(leaf.shape)}); "
                    "differentiate a float (tl.real(out) or tl.abs(out) of a complex one), or pass holomorphic=True "
                    "for a holomorphic f"
                )
        return result

    return checked
