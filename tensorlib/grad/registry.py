"""The gradient registry: one gradient function per differentiable input.

A gradient function for one input is called as ``fn(node, *output_grads)``
(plus ``index=`` for variadic ops) and returns that input's gradient, written
with tensorlib ops so that it can itself be recorded, traced and
differentiated again.

>>> import tensorlib as tl
>>> sorted(tl.grad.get("Mul"))
['x', 'y']
"""

from __future__ import annotations

import contextlib
import inspect

from .. import dispatch
from ..ops.registry import _ops
from ..tensor import phase as _phase

# op type -> per-input functions (None: input needs none).  Whether an op type is differentiable at all
# is stored once, on its OpDef (``differentiable``); so is whether it has a rule here (``has_gradient``,
# which dispatch reads to decide whether to keep the caller's file:line for a missing-gradient error).
rules: dict[str, tuple] = {}


def active_overrides() -> list:
    """This thread's ``override`` scopes, innermost last (an override in one thread leaves others alone)."""
    return dispatch.current_state().overrides


def _opdef(op_type):
    return _ops.get(op_type)


def _per_input(op_type, fns, by_name, what):
    op = _opdef(op_type)
    if op is None:
        raise LookupError(f"{what}: no op type {op_type!r} is defined")
    names = op.input_names
    if op.variadic:
        if len(fns) + len(by_name) != 1:
            raise TypeError(f"{what}({op_type!r}): a variadic op takes one gradient function (called with index=)")
        fn = fns[0] if fns else next(iter(by_name.values()))
        _check_rule(fn, op_type, names[0], what, variadic=True)
        return (fn,)
    if len(fns) > len(names):
        raise TypeError(f"{what}({op_type!r}): {len(fns)} functions for {len(names)} inputs {names}")
    per = list(fns) + [None] * (len(names) - len(fns))
    for key, fn in by_name.items():
        if key not in names:
            raise TypeError(f"{what}({op_type!r}): no input named {key!r} (inputs: {', '.join(names)})")
        per[names.index(key)] = fn
    for name, fn in zip(names, per):
        _check_rule(fn, op_type, name, what, variadic=False)
    return tuple(per)


def _check_rule(fn, op_type, input_name, what, variadic):
    """Reject at registration what would fail only in backward: a non-callable, or one that cannot take
    ``(op, output_grad)`` (plus ``index=`` for a variadic op)."""
    if fn is None:
        return
    if not callable(fn):
        raise TypeError(
            f"{what}({op_type!r}): the gradient for input {input_name!r} must be a function "
            f"fn(node, *output_grads), got {type(fn).__name__} {fn!r:.60}"
        )
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return
    params = sig.parameters.values()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind is p.VAR_POSITIONAL for p in params)
    keywords = {p.name for p in params if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD}
    required_kw = {p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty}
    problem = None
    if len(positional) < 2 and not star:
        problem = "it takes fewer than two positional arguments"
    elif variadic and "index" not in keywords and not any(p.kind is p.VAR_KEYWORD for p in params):
        problem = "it has no index= parameter"
    elif required_kw - {"index"}:
        problem = f"it requires keyword arguments {sorted(required_kw - {'index'})}"
    if problem:
        call = "fn(node, *output_grads, index=i)" if variadic else "fn(node, *output_grads)"
        raise TypeError(
            f"{what}({op_type!r}): the gradient for input {input_name!r} is called as {call}, "
            f"but {getattr(fn, '__qualname__', fn)}{sig} cannot be: {problem}"
        )


def register_gradient(op_type: str, *fns, **by_name) -> None:
    """Register one gradient function per input of ``op_type``, positionally or by input name.

    An input given no function (or ``None``) gets no gradient through this op,
    as for indices or a tensor used only for its shape (TensorFlow's None).
    """
    if op_type in rules:
        raise ValueError(
            f"register_gradient: {op_type!r} already has a gradient; use tl.grad.override to replace it in a scope"
        )
    op = _opdef(op_type)
    if op is not None and not op.differentiable:
        raise ValueError(f"register_gradient: {op_type!r} was declared not differentiable")
    rules[op_type] = _per_input(op_type, fns, by_name, "register_gradient")
    op.has_gradient = True


def not_differentiable(op_type: str) -> None:
    """Declare ``op_type`` not differentiable: its outputs carry no gradient, and nothing raises."""
    op = _opdef(op_type)
    if op is None:
        raise LookupError(f"not_differentiable: no op type {op_type!r} is defined")
    if op_type in rules:
        raise ValueError(f"not_differentiable: {op_type!r} already has a gradient")
    op.differentiable = False


def is_differentiable(op_type: str) -> bool:
    op = _opdef(op_type)
    return op is None or op.differentiable


def get(op_type: str) -> dict | None:
    """The per-input gradient functions of ``op_type`` by input name; None if not differentiable."""
    if not is_differentiable(op_type):
        return None
    per = _lookup_rules(op_type)
    if per is None:
        raise LookupError(f"No gradient defined for operation '{op_type}' (op type: {op_type})")
    op = _opdef(op_type)
    names = op.input_names if op is not None else tuple(f"input{i}" for i in range(len(per)))
    if op is not None and op.variadic:
        return {names[0]: per[0]}
    return dict(zip(names, per))


def override_key() -> tuple:
    """The active ``override`` scopes as a hashable value: part of a ``tl.function``'s signature, since
    a graph bakes in the gradient rules that were in effect when it was traced."""
    scopes = active_overrides()
    return tuple(tuple(scope.items()) for scope in scopes) if scopes else ()


def _lookup_rules(op_type):
    for scope in reversed(active_overrides()):
        if op_type in scope:
            return scope[op_type]
    return rules.get(op_type)


def lookup(node) -> tuple:
    """The per-input functions for a recorded node, honouring overrides; raise if there are none."""
    per = _lookup_rules(node.op.name)
    if per is None:
        raise missing_gradient_error(node)
    return per


def missing_gradient_error(node) -> LookupError:
    t = node.op.name
    site = f"\n  The op was called at {node.site}." if node.site else ""
    return LookupError(
        f"No gradient defined for operation '{t}' (op type: {t}).{site}\n"
        "  Remedies: wrap its input in tl.stop_gradient(...) if no gradient should flow, "
        "give the computation a gradient with @tl.custom_gradient, or register one with "
        f"tl.grad.register_gradient({t!r}, ...)."
    )


@contextlib.contextmanager
def override(mapping: dict):
    """Replace gradient functions inside a ``with`` block (eager and traced).

    ``mapping`` maps op type names to one function (single-input ops), a tuple
    of per-input functions (as ``register_gradient``: inputs past its end get
    no gradient), or a dict keyed by input name (inputs it does not name keep
    their rules; map an input to None to stop its gradient).  One bare function
    for an op of several inputs is a TypeError: it would stop the gradients of
    all inputs but the first.

    >>> import tensorlib as tl
    >>> x = tl.tensor([-1.0, 2.0])
    >>> with tl.grad.override({"Relu": lambda node, g: g}):
    ...     with tl.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = tl.nn.relu(x)
    ...     tape.gradient(y, x).numpy().tolist()
    [1.0, 1.0]
    """
    scope = {}
    for op_type, value in mapping.items():
        if _opdef(op_type) is None:
            raise LookupError(f"tl.grad.override: no op type {op_type!r} is defined")
        op = _opdef(op_type)
        if not isinstance(value, (dict, tuple, list)):
            _check_rule(value, op_type, op.input_names[0], "override", variadic=op.variadic)
            if not op.variadic and len(op.input_names) > 1:
                raise TypeError(
                    f"override({op_type!r}): one function for an op with {len(op.input_names)} inputs "
                    f"({', '.join(op.input_names)}); give a tuple of per-input functions (None for no gradient) "
                    f"or a dict keyed by input name ({{{op.input_names[0]!r}: fn}} keeps the others' rules)"
                )
            value = (value,)
        if isinstance(value, dict):
            # Inputs the dict does not name keep the rules in effect (registered, or an outer override).
            per = _per_input(op_type, (), value, "override")
            current = _lookup_rules(op_type)
            if current is not None and not op.variadic:
                per = tuple(fn if name in value else old for fn, old, name in zip(per, current, op.input_names))
            scope[op_type] = per
        else:
            scope[op_type] = _per_input(op_type, tuple(value), {}, "override")
    scopes = dispatch.local_state().overrides
    scopes.append(scope)
    try:
        yield
    finally:
        scopes.remove(scope)


class GradientAudit(dict):
    """``{op type: {input: status}}`` whose ``repr`` is a readable summary: counts, then the gaps by name."""

    def ops_with(self, status: str) -> list:
        """Op types with at least one input in ``status`` ('gradient', 'not differentiable' or 'missing')."""
        return [op for op, inputs in self.items() if status in inputs.values()]

    def __repr__(self):
        missing = self.ops_with("missing")
        partly = [op for op in self.ops_with("not differentiable") if "gradient" in self[op].values()]
        none = [op for op, inputs in self.items() if set(inputs.values()) <= {"not differentiable"}]
        lines = [
            f"gradient audit of {len(self)} op types: "
            f"{len(self) - len(missing) - len(none)} with gradients, {len(none)} not differentiable, "
            f"{len(missing)} missing a gradient"
        ]
        for op in missing:
            gaps = ", ".join(i for i, status in self[op].items() if status == "missing")
            lines.append(f"  MISSING  {op}: no gradient for {gaps or 'its inputs'}")
        if partly:
            lines.append(
                "  inputs without a gradient by design: "
                + "; ".join(
                    f"{op}({', '.join(i for i, st in self[op].items() if st == 'not differentiable')})" for op in partly
                )
            )
        if none:
            lines.append(f"  not differentiable: {', '.join(none)}")
        return "\n".join(lines)

    __str__ = __repr__


def audit() -> GradientAudit:
    """For every defined op type and input: 'gradient', 'not differentiable' or 'missing'.

    The result is a dict; printed, it is a summary that lists the gaps first:

    >>> import tensorlib as tl
    >>> report = tl.grad.audit()
    >>> report["ArgMax"], report["Exp"]
    ({'x': 'not differentiable'}, {'x': 'gradient'})
    >>> print(report)  # doctest: +ELLIPSIS
    gradient audit of ... op types: ... with gradients, ... not differentiable, ... missing a gradient
    ...
    """
    report = GradientAudit()
    for name, op in sorted(_ops.items()):
        if not op.differentiable:
            report[name] = {i: "not differentiable" for i in op.input_names}
            continue
        per = rules.get(name)
        if per is None:
            report[name] = {i: "missing" for i in op.input_names}
        elif op.variadic:
            report[name] = {op.input_names[0]: "gradient" if per[0] else "missing"}
        else:
            report[name] = {
                i: ("gradient" if f is not None else "not differentiable") for i, f in zip(op.input_names, per)
            }
    return report


def once_per_pass(key, out_grads, compute):
    """``compute()``, run once per backward pass for the rules of several inputs of one node.

    The engine asks a node's rules input by input, with the same output gradients; a rule that gets
    every input's gradient from one computation (a custom_gradient's grad_fn, a Cond's or a Scan's
    vector-Jacobian product, batch norm's backward) shares it here.  ``key`` is the node (or
    ``(node, which)`` when one node shares several computations).  The engine drops the result once
    the node's rules ran: a later pass computes again, also with the same output gradient tensors, so
    a gradient that an outer tape records for a higher order is never one computed in an earlier,
    unrecorded pass (a cache kept by node and by the output gradients' identity made that second
    derivative None).
    """
    memo = getattr(_phase, "memo", None)  # opened by the engine (backprop) per pass
    if memo is None:  # a rule called outside the engine
        return compute()
    hit = memo.get(key)
    if hit is not None and len(hit[0]) == len(out_grads) and all(a is b for a, b in zip(hit[0], out_grads)):
        return hit[1]
    result = compute()
    memo[key] = (tuple(out_grads), result)
    return result


class Refused:
    """What a rule's shared computation gives for an input whose gradient is an error only when a backward
    pass needs it (a tensor at a custom_vjp's nondiff_argnums, a tensor a custom_gradient function closes
    over): the rule then raises the message, never a silent zero."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message
