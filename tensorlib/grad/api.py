"""Functional autodiff in JAX's forms: grad, value_and_grad, vjp, jvp, jacobian, hessian."""
from __future__ import annotations

import functools

from .. import dispatch
from ..tensor import Tensor
from .backprop import backprop
from .tape import GradientTape, flatten


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    from ..ops.creation import tensor
    return tensor(x)


def _require_float(t, what, name):
    """Differentiating with respect to an integer or bool is an error (JAX's rule), never a zero."""
    if isinstance(t, Tensor) and t.dtype.kind not in "fc":
        raise TypeError(f"{what}: cannot differentiate with respect to {name} of dtype {t.dtype} "
                        f"(shape {tuple(t.shape)}); gradients need a float input: pass a float value "
                        "or cast it with tl.cast(x, 'float64')")
    return t


def _argnums_tuple(argnums, nargs, what):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"{what}: argnums {argnums} out of range for {nargs} positional arguments")
    return nums


def _value_and_grads(f, argnums, has_aux, args, kwargs, what):
    nums = _argnums_tuple(argnums, len(args), what)
    args = list(args)
    for n in nums:
        args[n] = _require_float(_as_tensor(args[n]), what, f"argument {n}")
    with GradientTape(watch_accessed_variables=False) as tape:
        for n in nums:
            tape.watch(args[n])
        out = f(*args, **kwargs)
    aux = None
    if has_aux:
        out, aux = out
    if not isinstance(out, Tensor):
        raise TypeError(f"{what}: f must return a scalar Tensor, got {type(out).__name__}")
    if out.shape != ():
        raise TypeError(f"{what}: f must return a scalar, got shape {out.shape}; use tl.vjp or "
                        "tl.jacobian for non-scalar outputs")
    grads = tape.gradient(out, [args[n] for n in nums], unconnected_gradients="zero")
    g = grads[0] if isinstance(argnums, int) else tuple(grads)
    return out, g, aux


def grad(f, argnums=0, has_aux: bool = False):
    """The gradient function of a scalar function ``f``.

    >>> import tensorlib as tl
    >>> float(tl.grad(lambda x: x ** 3)(2.0))
    12.0
    """
    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        _, g, aux = _value_and_grads(f, argnums, has_aux, args, kwargs, "tl.grad")
        return (g, aux) if has_aux else g
    return grad_f


def value_and_grad(f, argnums=0, has_aux: bool = False):
    """``f``'s value and gradient in one pass: ``(value, grad)`` or ``((value, aux), grad)``."""
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        out, g, aux = _value_and_grads(f, argnums, has_aux, args, kwargs, "tl.value_and_grad")
        return ((out, aux), g) if has_aux else (out, g)
    return value_and_grad_f


def vjp(f, *primals):
    """``(f(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` returns one gradient per primal.

    >>> import tensorlib as tl
    >>> out, vjp_fn = tl.vjp(lambda x: x * x, tl.tensor([1.0, 2.0]))
    >>> vjp_fn(tl.tensor([1.0, 1.0]))[0].numpy().tolist()
    [2.0, 4.0]
    """
    xs = [_require_float(_as_tensor(p), "tl.vjp", f"primal {i}") for i, p in enumerate(primals)]
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    with tape:
        tape.watch(xs)
        out = f(*xs)
    outs, _ = flatten(out)

    def vjp_fn(cotangent):
        cts = flatten(cotangent)[0]
        if len(cts) != len(outs):
            raise ValueError(f"vjp_fn: {len(cts)} cotangents for {len(outs)} outputs")
        cts = [c if isinstance(c, Tensor) else dispatch.to_tensor(c, o.backend, o.dtype)
               for c, o in zip(cts, outs)]
        for c, o in zip(cts, outs):
            if tuple(c.shape) != tuple(o.shape):
                raise ValueError(f"vjp_fn: cotangent shape {c.shape} does not match output shape {o.shape}")
        return tuple(backprop(tape._nodes, outs, cts, xs, "zero"))
    return out, vjp_fn


def jvp(f, primals, tangents):
    """Forward mode: ``(f(*primals), J @ tangents)``, by transposing the vjp (the double-vjp trick)."""
    from ..ops import math as m
    from ..ops import reduce as r

    xs = [_require_float(_as_tensor(p), "tl.jvp", f"primal {i}") for i, p in enumerate(primals)]
    tangents = tuple(tangents)
    if len(xs) != len(tangents):
        raise ValueError(f"tl.jvp: {len(xs)} primals but {len(tangents)} tangents")
    # Tangents given as arrays or numbers go to their primal's backend.
    ts = [t if isinstance(t, Tensor) else dispatch.to_tensor(t, x.backend, x.dtype) for x, t in zip(xs, tangents)]
    for x, t in zip(xs, ts):
        if tuple(x.shape) != tuple(t.shape):
            raise ValueError(f"tl.jvp: tangent shape {t.shape} does not match primal shape {x.shape}")
    inner = GradientTape(persistent=True, watch_accessed_variables=False)
    with inner:
        inner.watch(xs)
        out = f(*xs)
    outs, rebuild = flatten(out)
    dummies = [m.zeros_like(o) for o in outs]
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(dummies)
        grads = backprop(inner._nodes, outs, dummies, xs, "zero")
        total = None
        for g, t in zip(grads, ts):
            term = r.sum(g * m.cast(t, dtype=g.dtype))
            total = term if total is None else total + term
    tangent_out = outer.gradient(total, dummies, unconnected_gradients="zero")
    return out, rebuild(tangent_out)


def jacobian(f, argnums=0):
    """Reverse-mode Jacobian: ``out.shape + arg.shape`` for each differentiated argument.

    Outputs may be a tuple, list or dict of tensors (each gets its Jacobians); with a tuple
    ``argnums`` each output gets a tuple, one Jacobian per argument, as in JAX.
    """
    def jac_f(*args):
        nums = _argnums_tuple(argnums, len(args), "tl.jacobian")
        args = list(args)
        for n in nums:
            args[n] = _require_float(_as_tensor(args[n]), "tl.jacobian", f"argument {n}")
        with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            for n in nums:
                tape.watch(args[n])
            out = f(*args)
        leaves, rebuild = flatten(out)
        per_output = []
        for leaf in leaves:
            jacs = tape.jacobian(leaf, [args[n] for n in nums], unconnected_gradients="zero")
            per_output.append(jacs[0] if isinstance(argnums, int) else tuple(jacs))
        return rebuild(per_output)
    return jac_f


def hessian(f, argnums=0):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    return jacobian(grad(f, argnums), argnums)
