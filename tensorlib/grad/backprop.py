"""The one reverse-mode engine, for tapes (eager) and graphs (symbolic) alike.

Both hand it a list of recorded Nodes in execution order.  It calls, per
node, only the gradient functions of inputs that lead back to a source, and
reduces broadcast gradients back to each input's shape in one place.
"""

from __future__ import annotations

import inspect

from ..tensor import Tensor
from ..tensor import phase as _phase
from ..tensor import scopes as _scopes
from . import registry
from .registry import once_per_pass  # noqa: F401  (the engine's memo; rules import it from the registry)


def backprop(nodes, targets, target_grads, sources, unconnected: str = "none"):
    """Gradients of ``sum(target * target_grad)`` with respect to each source."""
    # The ops that rules run are gradient ops (profiles and pictures tell them apart); per thread.
    _phase.depth = getattr(_phase, "depth", 0) + 1
    outer_memo, _phase.memo = getattr(_phase, "memo", None), {}
    try:
        return _backprop(nodes, targets, target_grads, sources, unconnected)
    finally:
        _phase.depth -= 1
        _phase.memo = outer_memo


def _backprop(nodes, targets, target_grads, sources, unconnected):
    from ..ops import math as math_ops

    needs = {s._id for s in sources}
    relevant = []
    for node in nodes:
        for t in node.inputs:
            if t._id in needs:
                relevant.append(node)
                for o in node.outputs:
                    if o.dtype.kind in "fc":
                        needs.add(o._id)
                break
    keep = {s._id for s in sources}
    grads: dict = {}
    for t, g in zip(targets, target_grads):
        if t._id in needs:
            _accumulate(grads, t._id, g)
    lookup = registry.lookup
    rules = None if registry.active_overrides() else registry.rules
    memo = _phase.memo
    outer = _scopes.get()
    for node in reversed(relevant):
        outs = node.outputs
        if len(outs) == 1:
            oid = outs[0]._id
            g = grads.get(oid) if oid in keep else grads.pop(oid, None)
            if g is None:
                continue
            out_grads = single = g
        else:
            single = None
            out_grads = [grads.get(o._id) if o._id in keep else grads.pop(o._id, None) for o in outs]
            if all(g is None for g in out_grads):
                continue
            out_grads = [math_ops.zeros_like(o) if g is None else g for o, g in zip(outs, out_grads)]
        op = node.op
        per_input = rules.get(op.name) if rules is not None else None
        if per_input is None:
            per_input = lookup(node)
        variadic = op.variadic
        if single is not None and variadic:
            out_grads = (single,)
        # A traced node's gradient ops go in its profiler.annotate blocks too (TF's gradients/<scope>).
        token = _scopes.set(_joined_scope(outer, node.scope)) if node.scope else None
        try:
            for i, t in enumerate(node.inputs):
                if t._id not in needs:
                    continue
                fn = per_input[0] if variadic else per_input[i]
                if fn is None:  # an input used for its shape or as indices: no gradient flows to it
                    continue
                if variadic:
                    g = fn(node, *out_grads, index=i)
                elif single is not None:
                    g = fn(node, single)
                else:
                    g = fn(node, *out_grads)
                if g is None:
                    continue
                if g.__class__ is not Tensor or g.shape != t.shape or g.dtype is not t.dtype:
                    g = fit_to(checked(g, t, node, i, fn), t)
                if None in t.shape and t._value is None and _may_broadcast_at_run_time(t, node):
                    g = _sum_to_like(g, t)
                key = t._id
                prev = grads.get(key)
                grads[key] = g if prev is None else prev + g
        finally:
            if token is not None:
                _scopes.reset(token)
        if memo:  # what the rules of this node shared (once_per_pass) is not needed again
            memo.clear()
    result = []
    for s in sources:
        g = grads.get(s._id)
        if g is None and unconnected == "zero":
            g = math_ops.zeros_like(s)
        result.append(g)
    return result


def _joined_scope(outer: tuple, scope: tuple) -> tuple:
    """The scope of a gradient op: the blocks the gradient is taken in, then its forward node's blocks that are not
    among them (``("step",)`` and ``("step", "conv1")`` give ``("step", "conv1")``)."""
    shared = 0
    for a, b in zip(outer, scope):
        if a != b:
            break
        shared += 1
    return outer + scope[shared:]


class GradientRuleError(TypeError):
    """A gradient rule returned something that is not a gradient for its input."""


def checked(g, like, node, index, fn):
    """``g`` if it can be the gradient of input ``index`` of ``node``; else a GradientRuleError.

    A gradient is a Tensor with a float dtype whose shape equals the input's
    or sums back to it (the input was broadcast).  Only called when the
    shape or dtype differs from the input's, so the common case costs nothing.
    """
    problem = None
    if not isinstance(g, Tensor):
        problem = f"got {type(g).__name__} {g!r:.60}, expected a Tensor or None"
    elif g.dtype.kind not in "fc":
        problem = f"got dtype {g.dtype}, expected a float dtype ({like.dtype})"
    elif not _sums_back(g.shape, like.shape, strict=node.op.name == "CustomGradient"):
        problem = f"got shape {tuple(g.shape)}, expected {tuple(like.shape)}"
    if problem is None:
        return g
    op = node.op
    names = op.input_names
    name = names[0] + f"[{index}]" if op.variadic else names[index] if index < len(names) else str(index)
    rule = node.attrs.get("grad_fn") if op.name == "CustomGradient" else fn
    raise GradientRuleError(
        f"gradient of {op.name} for input {name!r} (shape {tuple(like.shape)} {like.dtype}): "
        f"{problem}; rule defined at {rule_site(rule)}"
    )


def _sums_back(got, want, strict):
    """Whether a gradient of shape ``got`` sums back to ``want`` (``want`` broadcast to ``got``)."""
    if len(got) < len(want) or (strict and len(got) != len(want)):
        return False
    for a, b in zip(got[len(got) - len(want) :], want):
        if a != b and not (a is None or b is None) and (strict or b != 1):
            return False
    return True


def rule_site(fn) -> str:
    """``file:line`` where a gradient function was written."""
    fn = inspect.unwrap(getattr(fn, "func", fn))
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"<{type(fn).__name__}, no Python source>"
    return f"{code.co_filename}:{code.co_firstlineno}"


def _accumulate(grads, key, g):
    prev = grads.get(key)
    grads[key] = g if prev is None else prev + g


def _may_broadcast_at_run_time(t, node) -> bool:
    """Whether an axis of symbolic ``t`` whose size is unknown may be 1 at run time, broadcast by ``node``'s op
    against a longer axis of another input: its gradient is then summed back at run time."""
    if node.op.name in ("Einsum", "BroadcastTo"):  # letters, or an attribute, say what meets what
        return True
    for p, d in enumerate(reversed(t.shape)):
        if d is None and any(u is not t and len(u.shape) > p and u.shape[-1 - p] != 1 for u in node.inputs):
            return True
    return False


def _sum_to_like(g, like):
    from ..ops.shape import sum_to_like

    return sum_to_like(g, like)


def fit_to(g, like):
    """Sum a broadcast gradient back to ``like``'s shape and give it ``like``'s dtype."""
    from ..ops import math as math_ops

    if g.shape != like.shape:
        g = sum_to(g, like.shape)
    if g.dtype != like.dtype and like.dtype.kind in "fc":
        # A complex gradient for a real input keeps its real part (JAX's convention; Cast does that).
        g = math_ops.cast(g, dtype=like.dtype)
    return g


def sum_to(g, shape):
    """Reduce ``g`` over the axes along which ``shape`` was broadcast (the one un-broadcast helper)."""
    from ..ops import reduce as reduce_ops

    lead = len(g.shape) - len(shape)
    kept = tuple(lead + i for i, d in enumerate(shape) if d == 1 and g.shape[lead + i] != 1)
    if kept:
        g = reduce_ops.sum(g, axis=kept, keepdims=True)
    if lead > 0:
        g = reduce_ops.sum(g, axis=tuple(range(lead)))
    return g
