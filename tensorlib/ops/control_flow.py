"""Control flow: ``cond``, ``while_loop`` and ``scan`` in JAX's forms.

Eagerly they run Python (the taken branch, the loop), so tapes record the
ops inside as usual.  While ``tl.function`` traces, each becomes one node
holding its branches or body as subgraphs (``Cond``, ``While``, ``Scan``):
both branches are traced, the node's kernel runs the chosen subgraph with the
executor, ``print(graph)`` lists the subgraphs nested under the node, and
graph files save and load them.  What a branch or body reads from outside
becomes an input of the node, so gradients reach it.  A Variable a branch or body assigns
is, traced, one more output of the node (of a loop, one more carry that the body's reads see), assigned
after it (TensorFlow's rule for ``tf.cond`` and ``tf.while_loop``; docs/graph_mode.md).

Gradients: ``Cond``'s rule is a ``cond`` of the two branches' vector-Jacobian
products (so it is differentiable again), ``Scan``'s is a reverse ``scan`` of
the body's, fed the carries the forward scan kept (where a gradient is likely:
see ``_may_differentiate``; else the gradient runs the scan again for them).  A ``while_loop`` with
``maximum_iterations`` differentiates as a ``scan`` of ``cond``s (TensorFlow's rule); without, its
gradient is a ``WhileVjp`` node that runs the loop again keeping its steps (as TensorFlow's while_v2
keeps them), and forward mode (``tl.jvp``, ``tl.jacfwd``) carries each variable's tangent along the
loop (JAX's rule), as the transpose of that node.

>>> import tensorlib as tl
>>> f = tl.function(lambda x: tl.cond(tl.sum(x) > 0, lambda v: v * 2.0, lambda v: -v, x))
>>> f(tl.tensor([1.0, 2.0])).numpy().tolist(), f(tl.tensor([-1.0, -2.0])).numpy().tolist()
([2.0, 4.0], [1.0, 2.0])
>>> [n.op_type for n in f.get_graph(tl.TensorSpec((2,), "float32")).nodes]
['Sum', 'Greater', 'Cond']
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from .. import dispatch
from ..backends import base as _backends
from .. import tree
from ..grad import vmap as _vmap
from ..grad.registry import once_per_pass, register_gradient
from ..tensor import Tensor, TensorSpec, Variable, make, make_symbolic
from .registry import defop

__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop"]


# ---------------------------------------------------------------- helpers
def _flatten(value, what: str) -> tuple:
    """(tensor leaves, treedef) of a nested argument; arrays and numbers become tensors."""
    from ..graph.tracing import tensor_leaves

    try:
        return tensor_leaves(value, _backend_of(value))
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


def _backend_of(value):
    from ..backends import base as _backends

    first = next((t for t in tree.leaves(value) if isinstance(t, Tensor)), None)
    return first.backend if first is not None else _backends.current()


def _types(leaves) -> str:
    return "[" + ", ".join(f"{t.dtype}{list(t.shape)}" for t in leaves) + "]"


def _nesting(what_a, a, what_b, b, kinds_a=(), kinds_b=()) -> str:
    """An error message's tail: the two structures, drawn, when they differ; else the path of the first leaf
    whose ``(shape, dtype)`` in ``kinds_a`` differs from ``kinds_b`` (in a big tree, counting is no way to find it)."""
    if a != b:
        return f" (the nesting differs: {what_a} {a!r}, {what_b} {b!r})"
    for path, ka, kb in zip(tree._paths(a._key, (), []), kinds_a, kinds_b):
        if ka != kb:
            where = "".join(f"[{k!r}]" for k in path)
            if not where:
                return ""  # one bare leaf: the lists drawn say it all
            return f" (first difference at {where}: {ka[1]}{list(ka[0])} vs {kb[1]}{list(kb[0])})"
    return ""


def _kinds(leaves) -> list:
    return [(tuple(t.shape), t.dtype) for t in leaves]


def _run(graph, raws) -> tuple:
    """Run a subgraph on raw arrays with the executor (its optimized plan, compiled once)."""
    from ..graph.executor import runner

    return runner(graph).run(list(raws), [])


def _replay(graph, values) -> list:
    """The subgraph's outputs for Tensor ``values``, op by op (so tapes record and traces inline it)."""
    from ..graph.executor import replay

    return replay(graph, list(values), [])


def _specs(graph) -> tuple:
    return tuple(TensorSpec(o.shape, o.dtype) for o in graph.outputs)


def _count(value, what: str, name: str):
    """``value`` as a non-negative Python int (NumPy integers too; not a bool, a float or a tensor)."""
    try:
        if isinstance(value, (bool, Tensor)) or getattr(value, "dtype", None) == bool:
            raise TypeError
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}: {name} must be a non-negative int, got {value!r}") from None
    if count < 0:
        raise ValueError(f"{what}: {name} must be a non-negative int, got {value!r}")
    return count


def _check_unroll(unroll, what: str) -> None:
    """JAX's ``unroll=`` (a positive int or a bool): a speed hint there; here every step runs as a step, so the
    values are the same, and only its type and range are checked."""
    if isinstance(unroll, bool):
        return
    try:
        count = operator.index(unroll) if not isinstance(unroll, Tensor) else None
    except TypeError:
        count = None
    if count is None or count < 1:
        raise (ValueError if count is not None else TypeError)(
            f"{what}: unroll must be a positive int or a bool, got {unroll!r:.60}"
        )


def _keeping_order(treedef, fn: Callable) -> Callable:
    """``fn`` with its result's dicts in the key order of ``treedef``'s: a branch or loop body that builds a dict
    in another order returns the same structure (JAX sorts dict keys; here the first order wins)."""
    return lambda *args: tree.ordered_as(treedef, fn(*args))


def _keeping_carry_order(init, f: Callable) -> Callable:
    """A scan body ``f`` whose carry's dicts come back in ``init``'s key order (see :func:`_keeping_order`)."""
    treedef = tree.flatten(init)[1]

    def body(carry, x):
        out = f(carry, x)
        if out.__class__ in (tuple, list) and len(out) == 2:
            return out.__class__((tree.ordered_as(treedef, out[0]), out[1]))
        return out

    return body


def _signature(value, what: str) -> tuple:
    """(treedef, [(shape, dtype) per tensor leaf]) of a nested value, as :func:`_flatten` would make the
    leaves, converting only those that are not tensors yet (Python loops check this at every step)."""
    leaves, structure = tree.flatten(value, is_constant=lambda v: isinstance(v, str))
    if any(not isinstance(v, Tensor) for v in leaves):
        leaves, structure = _flatten(value, what)
    return structure, [(t.shape, t.dtype) for t in leaves]


def _check_same(expected: tuple, after, rule: str, was: str, got: str, got_nesting: str | None = None):
    """The check the traced forms make, made for Python loops too: ``after`` has the ``expected``
    :func:`_signature` (structure, shapes, dtypes); else one TypeError, ``rule`` then both drawn."""
    structure, kinds = expected
    a_structure, a_kinds = _signature(after, rule.split(":")[0])
    if a_structure != structure or a_kinds != kinds:
        drawn = lambda ks: "[" + ", ".join(f"{d}{list(s)}" for s, d in ks) + "]"  # noqa: E731
        raise TypeError(
            f"{rule}: {was} {drawn(kinds)}, {got} {drawn(a_kinds)}"
            + _nesting(was, structure, got_nesting or got, a_structure, kinds, a_kinds)
        )


_WIDER = {"b": "biufc", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}


def _weak(value) -> list:
    """For each tensor leaf of ``value`` (as :func:`_flatten` lists them): is it weakly typed, a Python
    number or a Python-float argument of ``tl.function``?  (NumPy scalars are not, as in JAX.)"""
    leaves, _ = tree.flatten(value, is_constant=lambda v: isinstance(v, str))
    return [type(v) in (bool, int, float, complex) or v.__class__ is dispatch.WeakScalar for v in leaves]


def _promote_weak(leaves, weak, outs):
    """``leaves`` with each weak one made a strong value of the dtype a loop body returned it with (unless it
    returned a weak value), or None if none changes.

    JAX's rule for a weakly typed initial value: ``tl.scan(f, 0.0, xs)`` carries the float type of
    ``xs``, eagerly and traced alike, where a strongly typed one must come back unchanged."""
    from . import math as math_ops

    if len(outs) != len(leaves):
        return None
    promoted, changed = list(leaves), False
    for i, (t, w, o) in enumerate(zip(leaves, weak, outs)):
        # Only the first step sees the weak value: the later ones see what it returned, strong unless the
        # body handed a weak value back (eagerly ``c + x`` is a strong tensor, and ``c + x`` again promotes
        # as strong values do: a float32 carry and int32 ``x`` make float64).
        returned_strong = o.__class__ is not dispatch.WeakScalar
        if (
            w
            and o.shape == t.shape
            and o.dtype.kind in _WIDER[t.dtype.kind]
            and (o.dtype != t.dtype or returned_strong)
        ):
            promoted[i], changed = math_ops.cast(t, o.dtype), True
    return promoted if changed else None


def _weak_casts(a_leaves, a_weak, b_leaves, b_weak) -> tuple:
    """For two branches' result leaves (and whether each is weakly typed), the dtype each branch's leaf is cast
    to (None: kept): a weak one takes the other's dtype where that one is strong (JAX's weak-type promotion of
    cond branches), as ``x + 2.0`` would.  Eagerly one branch runs, so ``cond(p, lambda: x, lambda: 0.0)`` with a
    float64 ``x`` worked there, and refused the float32 ``0.0`` traced and under ``tl.vmap``."""
    a_to, b_to = [None] * len(a_leaves), [None] * len(b_leaves)
    if len(a_leaves) != len(b_leaves):
        return a_to, b_to
    for i, (a, wa, b, wb) in enumerate(zip(a_leaves, a_weak, b_leaves, b_weak)):
        if wa != wb and a.shape == b.shape and a.dtype != b.dtype:
            weak, strong = (a, b) if wa else (b, a)
            if strong.dtype.kind in _WIDER[weak.dtype.kind]:
                (a_to if wa else b_to)[i] = strong.dtype
    return a_to, b_to


def _cast_leaves(value, dtypes, what: str):
    """``value``'s tensor leaves cast to ``dtypes`` (None: kept), in its structure."""
    if not any(dtypes):
        return value
    leaves, structure = _flatten(value, what)
    return tree.unflatten(structure, [t if d is None else _cast_to(t, d) for t, d in zip(leaves, dtypes)])


def _runs_python() -> bool:
    """Whether control flow runs as Python here: eagerly, or under a mode that maps ops (``tl.vmap``)."""
    modes = dispatch.modes
    return not modes or modes[-1].python_control_flow


def _owned(value):
    """``value`` with its arrays and Variables made tensor values, as the traced forms make them: the functions
    see the dtypes tensorlib holds (a NumPy int8 array is int32, never wrapping around), and no result is the
    caller's array or Variable (which later writes or assigns would change).  Python numbers stay as they are
    (weakly typed)."""
    return tree.map(_value_of, value)


def _value_of(leaf):
    from . import math as math_ops

    if isinstance(leaf, Variable):
        return math_ops.identity(leaf)  # its value now, recorded: gradients still reach the Variable
    if not isinstance(leaf, Tensor) and hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return dispatch.as_tensor(leaf)
    return leaf


def _callables(what: str, **fns) -> None:
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"{what}: {name} must be callable, got {type(fn).__name__} {fn!r:.60}")


def _scalar_pred(pred, what: str):
    if not isinstance(pred, Tensor):
        try:
            pred = dispatch.to_tensor(pred, _backend_of(pred))
        except TypeError:
            raise TypeError(
                f"{what}: the predicate must be a scalar bool or number, got {type(pred).__name__} {pred!r:.60}"
            ) from None
    if pred.shape != ():
        raise ValueError(f"{what}: the predicate must be a scalar, got shape {pred.shape} ({pred.dtype})")
    return pred


def _bool_pred(pred, what: str):
    from . import math as math_ops

    pred = _scalar_pred(pred, what)
    return pred if pred.dtype.kind == "b" else math_ops.not_equal(pred, 0)


def _all_grads(node, grads, compute) -> tuple:
    """The gradients for every input of ``node``, computed once per backward pass (the engine asks
    per input, with the same output gradients)."""
    return once_per_pass(node, grads, compute)


def _differentiable(t) -> bool:
    """Float and complex values carry gradients; integer and bool ones (counters, flags) do not."""
    return t.dtype.kind in "fc"


def _vjp_of(graph, n_args: int) -> Callable:
    """``f(*args, *cotangents) -> gradients for every arg`` (zeros where none flows), for a subgraph."""
    return _vjp(lambda args: _replay(graph, args), n_args)


def _vjp(fn, n_args: int) -> Callable:
    """As :func:`_vjp_of`, for ``fn(args) -> list of outputs`` written with tensorlib ops."""
    from ..grad.tape import GradientTape
    from . import math as math_ops

    def vjp(*values):
        args, cotangents = values[:n_args], values[n_args:]
        wrt = [a for a in args if _differentiable(a)]
        with GradientTape() as tape:
            for a in wrt:
                tape.watch(a)
            outs = fn(args)
        # The cotangents weigh the outputs as tape.gradient's output_gradients (complex ones included).
        pairs = [(o, g) for o, g in zip(outs, cotangents) if _differentiable(o)]
        grads = (
            tape.gradient(
                [o for o, _ in pairs], wrt, output_gradients=[g for _, g in pairs], unconnected_gradients="zero"
            )
            if pairs and wrt
            else [math_ops.zeros_like(a) for a in wrt]
        )
        it = iter(grads)
        return tuple(next(it) if _differentiable(a) else math_ops.zeros_like(a) for a in args)

    return vjp


def _reading_carried(variables: list, fn: Callable) -> Callable:
    """``fn`` of a loop's carry, called with ``(carry, [values of variables])``: in it, reads and assigns of
    ``variables`` go to those values (``carried_out`` then gives them at the end of a body)."""
    from ..graph.tracing import carried_variables

    def call(carry, *rest):
        own, values = carry
        carried_variables(variables, values)
        return fn(own, *rest)

    return call


# ---------------------------------------------------------------- cond
def _cond_infer(pred, *args, true_graph, false_graph):
    return _specs(true_graph)


_cond_op = defop(
    "Cond",
    inputs=("inputs",),
    attrs={"true_graph": None, "false_graph": None},
    infer=_cond_infer,
    variadic=True,
    doc="Run true_graph or false_graph (subgraphs) on the inputs, as the scalar predicate (the first input) says.",
)


@_cond_op.generic
def _cond_kernel(xp, pred, *args, true_graph, false_graph):
    return _run(true_graph if bool(pred) else false_graph, args)


def cond(pred, true_fn: Callable, false_fn: Callable, *operands) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (JAX's ``lax.cond``).

    ``pred`` is a scalar (bool or number); ``operands`` may be tensors, arrays,
    numbers or nested tuples/lists/dicts of them.  Eagerly only the chosen
    branch runs.  Traced, both branches are traced into subgraphs, must return
    the same structure, shapes and dtypes (dicts pair by key, in true_fn's order),
    and one ``Cond`` node runs the chosen one; its gradient (to any order)
    goes through the taken branch.  Under ``tl.vmap`` with a predicate per
    element both branches run on every element and are selected; what each
    branch reads from outside it (``operands``, closed-over tensors and
    Variables) passes gradients back only from the elements that take it
    (JAX's rule), so a derivative that is infinite on the others (``sqrt`` of
    a negative) makes no NaN.

    >>> import tensorlib as tl
    >>> x = tl.tensor([1.0, -2.0])
    >>> tl.cond(True, lambda v: v * 3.0, lambda v: v, x).numpy().tolist()
    [3.0, -6.0]
    >>> tl.grad(lambda v: tl.sum(tl.cond(tl.sum(v) < 0, tl.exp, tl.sin, v)))(x).numpy().round(3).tolist()
    [2.718, 0.135]
    """
    _callables("tl.cond", true_fn=true_fn, false_fn=false_fn)
    pred = _scalar_pred(pred, "tl.cond")
    if _runs_python():
        operands = _owned(operands)
        if pred._value is None:  # a predicate per element of tl.vmap: both branches, selected elementwise
            return _per_element_cond(pred, true_fn, false_fn, operands)
        return _owned(true_fn(*operands) if bool(pred.numpy()) else false_fn(*operands))
    from ..graph.tracing import trace_subgraph, variable_value, write_back

    leaves, structure = _flatten(operands, "tl.cond operands")
    args = tree.unflatten(structure, leaves)
    true_sub, true_out = trace_subgraph(true_fn, args, "true_fn")
    false_sub, false_out = trace_subgraph(_keeping_order(true_sub.graph.structure, false_fn), args, "false_fn")
    tg, fg = true_sub.graph, false_sub.graph
    if tg.structure == fg.structure and _specs(tg) != _specs(fg):
        t_to, f_to = _weak_casts(tg.outputs, _weak(tg.outputs), fg.outputs, _weak(fg.outputs))
        if any(t_to):
            true_sub, true_out = trace_subgraph(lambda *a: _cast_leaves(true_fn(*a), t_to, "true_fn"), args, "true_fn")
        if any(f_to):
            false_sub, false_out = trace_subgraph(
                _keeping_order(true_sub.graph.structure, lambda *a: _cast_leaves(false_fn(*a), f_to, "false_fn")),
                args,
                "false_fn",
            )
        tg, fg = true_sub.graph, false_sub.graph
    if tg.structure != fg.structure or _specs(tg) != _specs(fg):
        raise TypeError(
            f"tl.cond: true_fn and false_fn must return the same structure, shapes and dtypes; "
            f"true_fn returns {_types(true_out)}, false_fn returns {_types(false_out)}"
            + _nesting(
                "true_fn returns", tg.structure, "false_fn returns", fg.structure, _kinds(true_out), _kinds(false_out)
            )
        )
    n_out, structure = len(true_out), tg.structure
    variables = list({**true_sub.written, **false_sub.written}.values())
    if variables:  # assigned in a branch: one more output each (its old value where not), written back below
        before = [variable_value(v) for v in variables]
        true_sub.variable_outputs(variables, before)
        false_sub.variable_outputs(variables, before)
    outer = true_sub.outer + [v for v in false_sub.outer if v._id not in true_sub.outer_map]
    tg, fg = true_sub.with_outer(len(leaves), outer), false_sub.with_outer(len(leaves), outer)
    outs = _cond_op(pred, *leaves, *outer, true_graph=tg, false_graph=fg)
    outs = outs if isinstance(outs, tuple) else (outs,)
    for o, t, f in zip(outs, tg.outputs, fg.outputs):
        if t.__class__ is f.__class__ is dispatch.WeakScalar:
            o.__class__ = t.__class__  # two Python numbers: eagerly the one taken, weakly typed (JAX's rule too)
    write_back(variables, outs[n_out:])
    return tree.unflatten(structure, outs[:n_out])


def switch(index, branches, *operands) -> Any:
    """``branches[index](*operands)``, the index clamped into range (JAX's ``lax.switch``): eagerly only that
    branch runs; traced, one ``Cond`` per further branch (each traced once), so the gradient goes through
    the branch taken; under ``tl.vmap`` an index per element selects elementwise.

    >>> import tensorlib as tl
    >>> fns = [lambda v: v * 0.0, tl.sin, lambda v: v * 10.0]
    >>> [float(tl.switch(i, fns, tl.tensor(1.0))) for i in (-4, 2, 9)]
    [0.0, 10.0, 10.0]
    """
    from . import math as math_ops

    branches = list(branches)
    if not branches:
        raise ValueError("tl.switch: branches must hold at least one function")
    _callables("tl.switch", **{f"branches[{i}]": b for i, b in enumerate(branches)})
    index = _scalar_pred(index, "tl.switch")
    if index.dtype.kind not in "iub":
        raise TypeError(f"tl.switch: the index must be an integer scalar, got {index.dtype}")
    index = math_ops.clip(index, 0, len(branches) - 1)

    def from_(k):  # branches[k:], as a chain of conds
        if k == len(branches) - 1:
            return branches[k]
        return lambda *ops: cond(math_ops.equal(index, k), branches[k], from_(k + 1), *ops)

    return from_(0)(*operands)


def fori_loop(lower, upper, body_fun: Callable, init_val, unroll: int | bool = 1) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; return ``val`` (JAX's ``lax.fori_loop``).

    With Python or NumPy integer bounds the loop is a :func:`scan` over the indices, so it is differentiable (reverse
    mode) when traced; bounds given as tensors make it a :func:`while_loop` (forward only when traced, as
    in JAX).  ``i`` is an int64 scalar tensor, weakly typed whatever the bounds (``c + i`` keeps ``c``'s
    dtype, as in JAX).  ``unroll`` is accepted as in :func:`scan`.

    >>> import tensorlib as tl
    >>> int(tl.fori_loop(0, 5, lambda i, total: total + i * i, 0))
    30
    """
    from . import creation
    from . import math as math_ops

    if not callable(body_fun):
        raise TypeError(f"tl.fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    _check_unroll(unroll, "tl.fori_loop")
    static = [_concrete_int(b) for b in (lower, upper)]
    if None not in static:
        lower, upper = static
        if upper <= lower:
            return _owned(init_val)  # the caller's array or Variable was returned itself
        carry, _ = scan(lambda val, i: (body_fun(_weakly_typed(i), val), None), init_val, creation.arange(lower, upper))
        return carry
    lower, upper = (_scalar_pred(b, "tl.fori_loop") for b in (lower, upper))
    for b in (lower, upper):
        if b.dtype.kind not in "iu":
            raise TypeError(f"tl.fori_loop: lower and upper must be integers, got {b.dtype}")
    lower, upper = lower.astype("int64"), upper.astype("int64")
    _, val = while_loop(
        lambda state: math_ops.less(state[0], upper),
        # The index weakly typed as for concrete bounds (a copy: the counter itself stays strong), so ``c + i``
        # keeps a float32 or int32 carry's dtype here too, as JAX's int32 index does (a strong int64 made it
        # float64 or int64, and the loop refused the carry's new dtype).
        lambda state: (state[0] + 1, body_fun(_weakly_typed(math_ops.identity(state[0])), state[1])),
        (lower, init_val),
    )
    return val


def _weakly_typed(index: Tensor) -> Tensor:
    """The loop index of concrete bounds, weakly typed as in JAX: ``c + i`` keeps an int32 or float32 carry's dtype
    (a strong int64 index made it int64 or float64, and the loop refused the carry's new dtype)."""
    if index.__class__ is Tensor:
        index.__class__ = dispatch.WeakScalar  # a fresh slice of the indices, owned by this step
    return index


def _concrete_int(bound) -> int | None:
    """A Python or NumPy integer (a 0-d integer array too) as a Python int; None for a tensor or anything else.
    Concrete bounds make ``fori_loop`` a differentiable scan, as in JAX (NumPy integers were taken for tensors)."""
    if isinstance(bound, (bool, Tensor)) or getattr(bound, "dtype", None) == bool or getattr(bound, "shape", ()) != ():
        return None
    try:
        return operator.index(bound)
    except TypeError:
        return None


def _per_element_cond(pred, true_fn, false_fn, operands):
    """A cond under ``tl.vmap`` whose predicate has a value per element: where the values are known (eagerly)
    and every element takes one branch, only that one runs, as in a loop over the elements; else both run on
    every element and are selected elementwise (JAX's rule), a failure saying so."""
    from . import math as math_ops

    mode, taken = dispatch.modes[-1], _bool_pred(pred, "tl.cond")
    if mode.knows_values(pred):
        if not mode.any_element(taken):
            return _owned(false_fn(*operands))
        if not mode.any_element(math_ops.logical_not(taken)):
            return _owned(true_fn(*operands))
    try:
        with mode.gradients_only_where(taken):
            true_out = true_fn(*operands)
        with mode.gradients_only_where(math_ops.logical_not(taken)):
            outs = true_out, false_fn(*operands)
    except Exception as e:
        e.add_note(
            "(tl.cond under tl.vmap: the predicate has a value per element, so both branches ran on every element, "
            "as in JAX; a branch can fail on the elements that do not take it: guard its inputs, e.g. with tl.where)"
        )
        raise
    return _selected(pred, *outs)


def _selected(pred, true_out, false_out):
    """``where(pred, t, f)`` leaf by leaf of the two branches' results (JAX's cond under vmap)."""
    from . import math as math_ops

    t_leaves, t_structure = _flatten(true_out, "tl.cond true_fn's result")
    false_out = tree.ordered_as(t_structure, false_out)
    f_leaves, f_structure = _flatten(false_out, "tl.cond false_fn's result")
    if t_structure == f_structure:
        t_to, f_to = _weak_casts(t_leaves, _weak(true_out), f_leaves, _weak(false_out))
        t_leaves = [t if d is None else _cast_to(t, d) for t, d in zip(t_leaves, t_to)]
        f_leaves = [f if d is None else _cast_to(f, d) for f, d in zip(f_leaves, f_to)]
    if t_structure != f_structure or _types(t_leaves) != _types(f_leaves):
        raise TypeError(
            f"tl.cond: true_fn and false_fn must return the same structure, shapes and dtypes; "
            f"true_fn returns {_types(t_leaves)}, false_fn returns {_types(f_leaves)}"
        )
    pred = _bool_pred(pred, "tl.cond")
    return tree.unflatten(t_structure, [math_ops.where(pred, t, f) for t, f in zip(t_leaves, f_leaves)])


def _kept_where_stopped(pred, new, old):
    """``new`` where ``pred``, else ``old`` (cast to ``new``'s dtypes: Python numbers in the first values)."""
    from . import math as math_ops

    new_leaves, structure = _flatten(new, "tl.while_loop body_fn's result")
    old_leaves = _flatten(old, "tl.while_loop loop_vars")[0]
    pred = _bool_pred(pred, "tl.while_loop")
    kept = [math_ops.where(pred, n, _cast_to(o, n.dtype)) for n, o in zip(new_leaves, old_leaves)]
    return tree.unflatten(structure, kept)


def _cond_grad(node, *grads, index):
    if index == 0:
        return None  # the predicate

    def compute():
        pred, args = node.inputs[0], node.inputs[1:]
        n = len(args)
        return cond(pred, _vjp_of(node.attrs["true_graph"], n), _vjp_of(node.attrs["false_graph"], n), *args, *grads)

    grad = _all_grads(node, grads, compute)[index - 1]
    return grad if _differentiable(node.inputs[index]) else None


register_gradient("Cond", _cond_grad)


def _body_shapes(body, carry, xs, outer):
    """The shapes of ``body``'s outputs on the carries, a row of each of ``xs`` and the outer values, from its
    shape rules alone (no kernel runs); None where a size stays unknown or a rule needs values."""
    from ..graph.dry_run import eval_shape

    shapes = [tuple(c.shape) for c in carry] + [tuple(x.shape[1:]) for x in xs] + [tuple(o.shape) for o in outer]
    specs = [TensorSpec(shape, t.dtype) for shape, t in zip(shapes, body.inputs)]
    try:
        outs = eval_shape(lambda *values: list(_replay(body, values)), *specs)
    except Exception:  # noqa: BLE001 - a rule that needs values: the caller runs a step instead
        return None
    shapes = [tuple(o.shape) for o in outs]
    return None if any(None in shape for shape in shapes) else shapes


# ---------------------------------------------------------------- scan
def _scan_infer(*args, body, n_carry, n_xs, length, reverse, history):
    outs = body.outputs
    carry, ys = outs[:n_carry], outs[n_carry:]
    return (
        tuple(TensorSpec(c.shape, c.dtype) for c in carry)
        + tuple(TensorSpec((length,) + tuple(y.shape), y.dtype) for y in ys)
        + (tuple(TensorSpec((length,) + tuple(c.shape), c.dtype) for c in carry) if history else ())
    )


_scan_op = defop(
    "Scan",
    inputs=("inputs",),
    attrs={"body": None, "n_carry": 0, "n_xs": 0, "length": 0, "reverse": False, "history": True},
    infer=_scan_infer,
    variadic=True,
    doc="Loop the body subgraph over the leading axis of the xs inputs, threading the carry; "
    "outputs the final carry, the stacked ys and, if history, the carry before each step (for the gradient).",
)


@_scan_op.generic
def _scan_kernel(xp, *args, body, n_carry, n_xs, length, reverse, history):
    carry = list(args[:n_carry])
    xs, outer = args[n_carry : n_carry + n_xs], list(args[n_carry + n_xs :])
    if xs and {x.shape[0] for x in xs} != {xs[0].shape[0] if length is None else length}:
        # traced with a leading size known only now
        raise ValueError(
            f"tl.scan: every leaf of xs needs the same leading size"
            + (f" (length={length})" if length is not None else "")
            + f", got shapes {[tuple(x.shape) for x in xs]}"
        )
    length = xs[0].shape[0] if length is None else length
    n_ys = len(body.outputs) - n_carry
    ys = [[None] * length for _ in range(n_ys)]
    history = [[None] * length for _ in range(n_carry)] if history else []
    for step in range(length):
        t = length - 1 - step if reverse else step
        for j, c in enumerate(carry if history else ()):
            history[j][t] = c
        out = _run(body, carry + [x[t, ...] for x in xs] + outer)
        _same_shapes(carry, out[:n_carry], _CARRY_RULE, "init is", "f returns", body.structure.children[0])
        carry = list(out[:n_carry])
        for k in range(n_ys):
            ys[k][t] = out[n_carry + k]
    shapes = [tuple(s.shape) for s in body.outputs]
    if not length and any(None in shape for shape in shapes):
        # Traced with a size known only at run time (an LSTM's batch): the body's shape rules on the sizes known
        # now give the sizes of the empty stacks (xp.empty had raised "'NoneType' object cannot be interpreted as
        # an integer").  No step runs, as eagerly: a step on zeros raised where the body checks its numbers
        # (log(0)) or fails on them (a singular matrix), and ran its side effects once.
        shapes = _body_shapes(body, carry, xs, outer)
        if shapes is None:
            probe = _run(body, carry + [xp.zeros(x.shape[1:], dtype=x.dtype) for x in xs] + outer)
            shapes = [tuple(o.shape) for o in probe]
    dtypes = [s.dtype for s in body.outputs]
    order = list(range(n_carry, len(shapes))) + list(range(n_carry))  # the ys, then the carry's history
    stacked = [
        xp.stack(y) if length else xp.empty((0,) + shapes[i], dtype=dtypes[i]) for y, i in zip(ys + history, order)
    ]
    return tuple(carry) + tuple(stacked)


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False, unroll: int | bool = 1) -> tuple:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; return ``(carry, stacked ys)``.

    JAX's ``lax.scan``: ``init`` and ``xs`` may be nested structures; ``xs=None``
    with ``length=n`` loops ``n`` times with ``x=None``; ``reverse=True`` runs
    from the last slice to the first (``ys`` keep ``xs``'s order); ``unroll`` (JAX's speed hint, a positive int
    or a bool) is accepted and changes no value.  The carry
    must keep its structure (dicts pair by key), shapes and dtypes; a Python number in ``init`` is
    weakly typed, as in JAX, and takes the dtype ``f`` returns it with
    (``tl.scan(f, 0.0, xs)`` carries ``xs``'s float type).  Traced, one ``Scan`` node runs
    the body subgraph, over a leading size that may be known only at run time (``TensorSpec((None, ...))``,
    as TF's ``tf.scan``); its gradient is a reverse scan of the body's
    vector-Jacobian product.

    >>> import tensorlib as tl
    >>> total, running = tl.scan(lambda c, x: (c + x, c * x), tl.tensor(0.0), tl.tensor([1.0, 2.0, 3.0]))
    >>> float(total), running.numpy().tolist()
    (6.0, [0.0, 2.0, 9.0])
    """
    _callables("tl.scan", f=f)
    _check_unroll(unroll, "tl.scan")
    f = _keeping_carry_order(init, f)
    if length is not None:
        length = _count(length, "tl.scan", "length")
    x_leaves, x_structure = _flatten(xs, "tl.scan xs")
    # Traced, a leading size may be known only at run time (TF's tf.scan): the Scan node checks it then.
    known = {x.shape[0] for x in x_leaves if x.shape and x.shape[0] is not None}
    unknown = any(x.shape[0] is None for x in x_leaves if x.shape)
    if (
        any(not x.shape for x in x_leaves)
        or len(known) > 1
        or (length is not None and known and known != {length})
        or (unknown and _runs_python())
    ):
        raise ValueError(
            f"tl.scan: every leaf of xs needs the same leading size"
            + (f" (length={length})" if length is not None else "")
            + f", got {_types(x_leaves)}"
        )
    if length is None:
        if not x_leaves:
            raise ValueError("tl.scan: give xs or length")
        length = known.pop() if known else None
    if _runs_python():
        return _scan_eager(f, init, x_leaves, x_structure, length, reverse)
    from ..graph.tracing import keyed_call, trace_subgraph

    c_leaves, c_structure = _flatten(init, "tl.scan init")
    slices = [make_symbolic(x.shape[1:], x.dtype, x.backend, None, 0) for x in x_leaves]
    weak = _weak(init)
    keys = None  # if f draws random numbers: a key per step, a hidden last leaf of xs
    while True:
        carry, x = tree.unflatten(c_structure, c_leaves), tree.unflatten(x_structure, slices)
        if keys is None:
            sub, outs = trace_subgraph(f, (carry, x), "f", loop=True)
        else:
            key = make_symbolic((), keys.dtype, keys.backend, None, 0)
            sub, outs = trace_subgraph(lambda c, xk: keyed_call(xk[1], f, c, xk[0]), (carry, (x, key)), "f")
        body = sub.graph
        if body.structure.kind not in ("tuple", "list") or len(body.structure.children) != 2:
            raise TypeError(f"tl.scan: f must return a pair (carry, y), got {body.structure!r}")
        if keys is None and sub.drew:
            if length is None:
                raise ValueError(
                    f"tl.scan: f draws random numbers, which needs the number of steps when it is traced; xs are "
                    f"{_types(x_leaves)} (give their leading size in the TensorSpec, or length=)"
                )
            keys = _random_keys((length,))
            continue
        carry_structure, y_structure = body.structure.children
        n_carry = carry_structure.num_leaves
        new_carry = outs[:n_carry]
        promoted = _promote_weak(c_leaves, weak, new_carry) if any(weak) else None
        if promoted is None:
            break
        c_leaves, weak = promoted, [False] * len(weak)  # traced again with the carry's own dtypes
    if carry_structure != c_structure or [(t.shape, t.dtype) for t in new_carry] != [
        (t.shape, t.dtype) for t in c_leaves
    ]:
        raise TypeError(
            f"{_CARRY_RULE}: init is {_types(c_leaves)}, f returns {_types(new_carry)}"
            + _nesting("init is", c_structure, "f's carry is", carry_structure, _kinds(c_leaves), _kinds(new_carry))
        )
    if sub.written:  # f assigns Variables: traced again with each one as one more carry, assigned after the loop
        return _scan_carrying(list(sub.written.values()), f, init, xs, length, reverse)
    if keys is not None:
        x_leaves = [*x_leaves, keys]
    body = sub.with_outer(len(c_leaves) + len(x_leaves), list(sub.outer))
    results = _scan_op(
        *c_leaves,
        *x_leaves,
        *sub.outer,
        body=body,
        n_carry=n_carry,
        n_xs=len(x_leaves),
        length=length,
        reverse=reverse,
        history=_may_differentiate(),
    )
    carry = tree.unflatten(c_structure, results[:n_carry])
    ys = tree.unflatten(y_structure, results[n_carry : len(outs)])
    return carry, ys


def _scan_carrying(variables, f, init, xs, length, reverse):
    from ..graph.tracing import carried_out, variable_value, write_back

    reading = _reading_carried(variables, f)

    def step(carry, x):
        new, y = reading(carry, x)
        return (new, carried_out(variables)), y

    (carry, values), ys = scan(step, (init, [variable_value(v) for v in variables]), xs, length, reverse)
    write_back(variables, values)
    return carry, ys


_CARRY_RULE = "tl.scan: f must return a carry of the same structure, shapes and dtypes as init"
_YS_RULE = "tl.scan: f must return ys of the same structure, shapes and dtypes at every step"
_LOOP_RULE = "tl.while_loop: body_fn must return the structure, shapes and dtypes of loop_vars"


def _same_shapes(before, after, rule: str, was: str, got: str, structure) -> None:
    """The eager loops' check, made on raw arrays as a node runs: traced with None sizes, a carry that changes
    shape is known only then (the loop went on with it, silently).  ``structure`` (the carry's) names the path of
    the first leaf that changed, as the trace-time check does."""
    if any(a.shape != b.shape for a, b in zip(before, after)):
        drawn = lambda arrays: "[" + ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays) + "]"  # noqa: E731
        raise TypeError(
            f"{rule}: {was} {drawn(before)}, {got} {drawn(after)}"
            + _nesting(was, structure, got, structure, _kinds(before), _kinds(after))
        )


def _scan_eager(f, init, x_leaves, x_structure, length, reverse):
    from . import shape as _shape

    if not length:
        if dispatch.modes:  # under tl.vmap: f's shape rules alone give the ys' element shapes
            return _owned(init), _empty_ys(f, init, x_leaves, x_structure)
        # No step runs, but ys need shapes and dtypes: the traced scan knows them without running f.
        from ..graph.tracing import function

        xs = tree.unflatten(x_structure, x_leaves)
        return function(lambda c, x: scan(f, c, x, length=0, reverse=reverse))(init, xs)
    init = _owned(init)
    carry, ys, reference = init, [None] * length, init
    order = [length - 1 - step if reverse else step for step in range(length)]
    for t in order:
        x = tree.unflatten(x_structure, [leaf[t] for leaf in x_leaves]) if x_leaves else None
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("tl.scan: f must return a pair (carry, y)")
        carry, ys[t] = out
        if t == order[0]:
            reference = _signature(_adopt_weak(init, carry, "tl.scan init"), "tl.scan init")
        _check_same(reference, carry, _CARRY_RULE, "init is", "f returns", "f's carry is")
    # Traced, one trace fixes the ys; eagerly every step must agree with the first, whose Python numbers
    # (made from a weakly typed init) take the dtypes of the next step's.
    first = ys[order[0]]
    expected = _adopt_weak(first, ys[order[1]], "tl.scan ys") if length > 1 else first
    signature = _signature(expected, "tl.scan ys")
    for t in order[1:]:
        _check_same(signature, ys[t], _YS_RULE, "the first step returns", f"step {t} returns")
    want, structure = _flatten(expected, "tl.scan ys")
    leaves = [_flatten(y, "tl.scan ys")[0] for y in ys]
    stacked = [_shape.stack([_cast_to(per_step[k], w.dtype) for per_step in leaves]) for k, w in enumerate(want)]
    return _owned(carry), tree.unflatten(structure, stacked)


class _ShapesOnly(dispatch.Mode):
    """Runs shape rules only: every op call gives symbolic tensors of its result specs."""

    def bind(self, op, inputs, attrs, specs):
        backend = inputs[0].backend if inputs else _backends.current()
        many = specs if isinstance(specs, tuple) else (specs,)
        outs = tuple(make_symbolic(s.shape, s.dtype, backend, None, 0) for s in many)
        return outs if isinstance(specs, tuple) else outs[0]

    def convert(self, value, dtype, backend):
        return make_symbolic(tuple(getattr(value, "shape", ())), dtype, backend, None, 0)


def _empty_ys(f, init, x_leaves, x_structure):
    """The stacked ys of a scan of length 0 under a mode that maps ops (``tl.vmap``): no step runs, so one
    step's shape rules, run on stand-ins, give each y's element shape and dtype."""
    from . import creation

    x = tree.unflatten(
        x_structure, [make_symbolic(leaf.shape[1:], leaf.dtype, leaf.backend, None, 0) for leaf in x_leaves]
    )
    with dispatch.in_mode(_ShapesOnly()):
        out = f(init, x if x_leaves else None)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("tl.scan: f must return a pair (carry, y)")
    return tree.map(lambda y: creation.zeros((0, *y.shape), dtype=y.dtype) if isinstance(y, Tensor) else y, out[1])


def _cast_to(t, dtype):
    from . import math as math_ops

    return t if t.dtype == dtype else math_ops.cast(t, dtype)


def _adopt_weak(init, values, what: str):
    """``init`` with its weak leaves given the dtypes the first step returned them with (the eager
    counterpart of the traced forms' promotion, so both accept and reject the same loops)."""
    weak = _weak(init)
    if not any(weak):
        return init
    leaves, structure = _flatten(init, what)
    outs, out_structure = _flatten(values, what)
    promoted = _promote_weak(leaves, weak, outs) if out_structure == structure else None
    return init if promoted is None else tree.unflatten(structure, promoted)


def _sum(a, b):
    # Integer and bool carries (loop counters, flags) get no gradient: their cotangents are placeholders
    # that are never added (the Array API has no bool arithmetic) and are dropped below.
    return a + b if _differentiable(a) else a


def _may_differentiate() -> bool:
    """Will a gradient likely be asked of the node traced now?  Yes if a tape records inside the trace or
    the node is in a branch or body (differentiated by replaying it).  A scan then keeps the carry of each
    step (length x the carry's memory); else it keeps nothing and a later gradient runs it again."""
    from ..graph.tracing import _SubTrace

    return bool(dispatch.tapes) or isinstance(dispatch.modes[-1], _SubTrace)


def _scan_grad(node, *grads, index):
    a = node.attrs
    n_carry, n_xs, length = a["n_carry"], a["n_xs"], a["length"]
    n_ys = len(a["body"].outputs) - n_carry

    def compute():
        from . import math as math_ops

        inputs = node.inputs
        init, xs, outer = inputs[:n_carry], inputs[n_carry : n_carry + n_xs], inputs[n_carry + n_xs :]
        g_carry, g_ys = grads[:n_carry], grads[n_carry : n_carry + n_ys]
        if a["history"]:
            history, g_history = node.outputs[n_carry + n_ys :], [list(grads[n_carry + n_ys :])]
        else:  # the forward node kept no carries: the scan again, keeping them (its ys unused)
            history, g_history = _scan_op(*inputs, **dict(a, history=True))[n_carry + n_ys :], []
        body_vjp = _vjp_of(a["body"], n_carry + n_xs + len(outer))

        def step(carry, per_step):
            gc, go = carry
            c_t, x_t, gy_t = per_step[:3]
            g = body_vjp(*c_t, *x_t, *outer, *gc, *gy_t)
            dc, dx, do = list(g[:n_carry]), g[n_carry : n_carry + n_xs], g[n_carry + n_xs :]
            if len(per_step) > 3:  # gradients reaching the history outputs themselves
                dc = [_sum(d, h) for d, h in zip(dc, per_step[3])]
            return (dc, [_sum(o, d) for o, d in zip(go, do)]), list(dx)

        (g_init, g_outer), g_xs = scan(
            step,
            (list(g_carry), [math_ops.zeros_like(o) for o in outer]),
            (list(history), list(xs), list(g_ys), *g_history),
            length=length,
            reverse=not a["reverse"],
        )
        return tuple(g_init) + tuple(g_xs) + tuple(g_outer)

    grad = _all_grads(node, grads, compute)[index]
    return grad if _differentiable(node.inputs[index]) else None


register_gradient("Scan", _scan_grad)


# ---------------------------------------------------------------- while_loop
def _while_infer(*args, cond_graph, body_graph, n_vars, maximum_iterations):
    return _specs(body_graph)


_while_op = defop(
    "While",
    inputs=("inputs",),
    attrs={"cond_graph": None, "body_graph": None, "n_vars": 0, "maximum_iterations": None},
    infer=_while_infer,
    variadic=True,
    doc="Run body_graph on the loop variables while cond_graph says so, at most maximum_iterations times "
    "(None: no bound).",
)


@_while_op.generic
def _while_kernel(xp, *args, cond_graph, body_graph, n_vars, maximum_iterations):
    values, outer, count = list(args[:n_vars]), list(args[n_vars:]), 0
    while (maximum_iterations is None or count < maximum_iterations) and bool(_run(cond_graph, values + outer)[0]):
        new = _run(body_graph, values + outer)
        _same_shapes(values, new, _LOOP_RULE, "loop_vars are", "body_fn returns", body_graph.structure)
        values = list(new)
        count += 1
    return tuple(values)


def _while_grad(node, *grads, index):
    """Bounded: the loop again, as a differentiable scan of conds, under the VJP's tape.  Unbounded: a
    ``WhileVjp`` node, whose kernel runs the loop again keeping its steps and whose gradient with respect to
    the cotangents (its transpose: forward mode, by the double-vjp trick) carries the tangents along the loop."""
    a = node.attrs
    bound, n_vars = a["maximum_iterations"], a["n_vars"]

    def compute():
        if bound is None:
            attrs = {"cond_graph": a["cond_graph"], "body_graph": a["body_graph"], "n_vars": n_vars}
            return _while_vjp_op(*node.inputs, *grads, **attrs)
        return _vjp(_loop_of(a, bound), len(node.inputs))(*node.inputs, *grads)

    grad = _all_grads(node, grads, compute)[index]
    return grad if _differentiable(node.inputs[index]) else None


def _loop_of(attrs, bound):
    """``loop(args) -> final loop variables`` of a ``While`` node's subgraphs, written with tensorlib ops: a
    Python loop eagerly (a tape records its steps), the differentiable scan of conds when traced (bounded)."""
    n_vars = attrs["n_vars"]

    def loop(args):
        outer = list(args[n_vars:])
        return list(
            while_loop(
                lambda v: _replay(attrs["cond_graph"], list(v) + outer)[0],
                lambda v: tuple(_replay(attrs["body_graph"], list(v) + outer)),
                tuple(args[:n_vars]),
                maximum_iterations=bound,
            )
        )

    return loop


def _while_vjp_infer(*args, cond_graph, body_graph, n_vars):
    n_inputs = len(args) - n_vars
    return tuple(TensorSpec(t.shape, t.dtype) for t in args[:n_inputs])


_while_vjp_op = defop(
    "WhileVjp",
    inputs=("inputs",),
    attrs={"cond_graph": None, "body_graph": None, "n_vars": 0},
    infer=_while_vjp_infer,
    variadic=True,
    doc="The gradients for the inputs of an unbounded While (its inputs, then a cotangent per loop variable): "
    "the loop run again, its steps recorded, and differentiated in reverse.",
)


@_while_vjp_op.per_backend
def _while_vjp_kernel(backend, *args, cond_graph, body_graph, n_vars):
    # The steps are known only as the loop runs: it runs eagerly here, a tape recording them (TensorFlow
    # keeps each step's values for a while loop's gradient too).
    values = [make(a, backend, tuple(a.shape)) for a in args]  # read only: no copy
    attrs = {"cond_graph": cond_graph, "body_graph": body_graph, "n_vars": n_vars}
    grads = _vjp(_loop_of(attrs, None), len(args) - n_vars)(*values)
    return tuple(g._value for g in grads)


def _while_vjp_grad(node, *grads, index):
    """Forward mode through an unbounded while loop (JAX's jvp of ``lax.while_loop``): the transpose of the
    loop's VJP in its cotangents is the loop's JVP, a while loop carrying each variable's tangent beside it
    (the body's own JVP, by :func:`tl.jvp`); ``grads`` are the tangents of the loop's inputs.  A second
    derivative with respect to the loop's inputs needs ``maximum_iterations``."""
    a = node.attrs
    n_vars = a["n_vars"]
    n_inputs = len(node.inputs) - n_vars
    if index < n_inputs:
        raise ValueError(
            "tl.while_loop: a second derivative of a while loop through its inputs needs maximum_iterations=N "
            "(its trip count is unknown in advance); pass maximum_iterations, or write the loop with tl.scan"
        )

    def compute():
        from ..grad.api import jvp

        inputs = node.inputs[:n_inputs]
        outer, outer_tangents = list(inputs[n_vars:]), _tangents(inputs[n_vars:], grads[n_vars:])

        def body(carry):
            values, tangents = carry

            def step(*vs):
                return tuple(_replay(a["body_graph"], list(vs) + outer))

            new, new_tangents = jvp(step, (*values, *outer), (*tangents, *outer_tangents))
            # An integer or bool variable keeps its zero tangent (the carry keeps its dtype).
            return tuple(new), tuple(
                nt if _differentiable(v) else t for v, t, nt in zip(values, tangents, new_tangents)
            )

        start = (tuple(inputs[:n_vars]), tuple(_tangents(inputs[:n_vars], grads[:n_vars], zeros=True)))
        _, tangents = while_loop(lambda c: _replay(a["cond_graph"], list(c[0]) + outer)[0], body, start)
        return tangents

    return _all_grads(node, grads, compute)[index - n_inputs]


def _tangents(values, grads, zeros: bool = False) -> list:
    """The tangent of each value: its gradient, cast to its dtype; for an integer or bool value (no tangent)
    None, or with ``zeros`` a zero of its dtype (a loop carry needs a value)."""
    from . import math as math_ops

    return [
        math_ops.cast(g, v.dtype) if _differentiable(v) else (math_ops.zeros_like(v) if zeros else None)
        for v, g in zip(values, grads)
    ]


register_gradient("WhileVjp", _while_vjp_grad)
register_gradient("While", _while_grad)


def while_loop(cond_fn: Callable, body_fn: Callable, loop_vars, maximum_iterations: int | None = None) -> Any:
    """``while cond_fn(vars): vars = body_fn(vars)``; return the final ``vars`` (JAX's ``lax.while_loop``).

    ``loop_vars`` may be a nested structure; ``body_fn`` must keep its
    structure (dicts pair by key), shapes and dtypes (a Python number takes the dtype ``body_fn``
    returns it with, as in ``tl.scan``).  Eagerly this is a Python loop.  Traced, a
    ``While`` node runs the subgraphs; its gradient runs the loop again, keeping
    its steps, and forward mode carries the tangents along the loop (a second
    derivative needs ``maximum_iterations``).  With ``maximum_iterations=N`` the loop
    stops after at most N steps and is differentiable as a ``scan`` of ``cond``s
    (TensorFlow's rule), to any order: it traces as that scan where a tape records, else
    as a ``While`` node whose gradient runs the loop again as the scan.

    >>> import tensorlib as tl
    >>> i, x = tl.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0), (tl.tensor(0), tl.tensor(1.5)))
    >>> int(i), float(x)
    (3, 12.0)
    """
    _callables("tl.while_loop", cond_fn=cond_fn, body_fn=body_fn)
    body_fn = _keeping_order(tree.flatten(loop_vars)[1], body_fn)
    if maximum_iterations is not None:
        maximum_iterations = _count(maximum_iterations, "tl.while_loop", "maximum_iterations")
    if _runs_python():
        loop_vars = _owned(loop_vars)
        values, count, reference = loop_vars, 0, loop_vars
        while maximum_iterations is None or count < maximum_iterations:
            pred = _scalar_pred(cond_fn(values), "tl.while_loop cond_fn")
            # Under tl.vmap a predicate may differ per element: loop while any element goes on, and keep
            # the values of the elements that stopped (JAX's batched while loop).
            per_element = pred._value is None and bool(dispatch.modes)
            bounded = maximum_iterations is not None
            if per_element and not bounded and not dispatch.modes[-1].knows_values(pred):
                # Traced, no element's value is known: a While op traced as it is (tapes inside the mapped
                # function record it), which the mode maps (``_batched_while``); its Python-number carries
                # given the dtypes the body gives them, as the other forms do.
                if any(_weak(values)):
                    values = _adopt_weak(values, body_fn(values), "tl.while_loop loop_vars")
                return _owned(_traced_while(cond_fn, body_fn, values, None))
            if not (dispatch.modes[-1].any_element(pred) if per_element else bool(pred.numpy())):
                break
            if per_element:
                with dispatch.modes[-1].gradients_only_where(_bool_pred(pred, "tl.while_loop")):
                    new = body_fn(values)
            else:
                new = body_fn(values)
            if not count:
                reference = _signature(_adopt_weak(loop_vars, new, "tl.while_loop loop_vars"), "tl.while_loop")
            _check_same(reference, new, _LOOP_RULE, "loop_vars are", "body_fn returns")
            values = _kept_where_stopped(pred, new, values) if per_element else new
            count += 1
        return _owned(values)
    return _traced_while(cond_fn, body_fn, loop_vars, maximum_iterations)


def _batched_while(mode, op, inputs, physical, batched, attrs, specs):
    """``While`` under ``tl.vmap`` (JAX's batching rule for ``lax.while_loop``): one ``While`` over the physical
    batch that runs while any element goes on, each element keeping its values once its own predicate is
    false; the subgraphs replayed on logical tensors in the mode, which maps their ops."""
    n_vars = attrs["n_vars"]
    start = [p if b else mode.repeated(p) for p, b in zip(physical[:n_vars], batched[:n_vars])]
    return tuple(_batched_loop(mode, attrs, start, list(inputs[n_vars:])))


def _batched_loop(mode, attrs, start, outer) -> list:
    """The final physical loop variables of a ``While`` node's subgraphs run over the batch, from the physical
    ``start``, the subgraphs reading the logical ``outer``."""
    from . import math as math_ops
    from . import reduce
    from . import shape as shape_ops

    def replayed(graph, values):
        return _replay(graph, [mode.logical(p) for p in values] + outer)

    def goes_on(values):
        with mode.reentered():
            pred = replayed(attrs["cond_graph"], values)[0]
        return reduce.any(mode.physical_of(pred, pred))

    def step(values):
        with mode.reentered():
            logical = [mode.logical(p) for p in values] + outer
            pred = _replay(attrs["cond_graph"], logical)[0]
            with mode.gradients_only_where(_bool_pred(pred, "tl.while_loop")):
                new = _replay(attrs["body_graph"], logical)
        keep = mode.physical_of(pred, pred)
        return tuple(
            math_ops.where(shape_ops.expand_dims(keep, tuple(range(1, p.ndim))), mode.physical_of(n, n), p)
            for n, p in zip(new, values)
        )

    return list(while_loop(goes_on, step, tuple(start), maximum_iterations=attrs.get("maximum_iterations")))


def _batched_while_vjp(mode, op, inputs, physical, batched, attrs, specs):
    """``WhileVjp`` under ``tl.vmap``: the VJP of the loop run over the batch (an element that stopped keeps its
    values, so its gradient is its own loop's), one node for the whole batch instead of one per element."""
    n_vars = attrs["n_vars"]
    args = [p if b else mode.repeated(p) for p, b in zip(physical, batched)]
    n_inputs = len(args) - n_vars

    def loop(values):
        outer = [mode.logical(p) for p in values[n_vars:]]  # read by the replays: the gradient reaches them
        return _batched_loop(mode, attrs, values[:n_vars], outer)

    return _vjp(loop, n_inputs)(*args)


_vmap.add_batching_rule("While", _batched_while)
_vmap.add_batching_rule("WhileVjp", _batched_while_vjp)


def _traced_while(cond_fn, body_fn, loop_vars, maximum_iterations, keyed: bool = False):
    from ..graph.tracing import keyed_call, trace_subgraph

    leaves, structure = _flatten(loop_vars, "tl.while_loop loop_vars")
    weak = _weak(loop_vars)
    if maximum_iterations is not None and dispatch.tapes:
        # A tape records inside this trace: the scan of conds differentiates in place.  (A While node
        # would run only the steps taken, but its gradient computes the loop again.)
        if any(weak):  # the scan of conds needs the loop's dtypes up front: the body tells them
            _, outs = trace_subgraph(body_fn, (tree.unflatten(structure, leaves),), "body_fn", loop=True)
            leaves = _promote_weak(leaves, weak, outs) or leaves
        return _bounded_while(cond_fn, body_fn, tree.unflatten(structure, leaves), maximum_iterations)
    while True:
        args = tree.unflatten(structure, leaves)
        body_sub, outs = trace_subgraph(body_fn, (args,), "body_fn", loop=not keyed)
        promoted = _promote_weak(leaves, weak, outs) if any(weak) and body_sub.graph.structure == structure else None
        if promoted is None:
            break
        leaves, weak = promoted, [False] * len(weak)  # traced again with the loop's own dtypes
    if body_sub.graph.structure != structure or [(t.shape, t.dtype) for t in outs] != [
        (t.shape, t.dtype) for t in leaves
    ]:
        raise TypeError(
            f"{_LOOP_RULE}: loop_vars are {_types(leaves)}, body_fn returns {_types(outs)}"
            + _nesting(
                "loop_vars are", structure, "body_fn returns", body_sub.graph.structure, _kinds(leaves), _kinds(outs)
            )
        )
    pred = lambda v: _bool_pred(cond_fn(v), "tl.while_loop cond_fn")  # noqa: E731
    cond_sub, _ = trace_subgraph(pred, (args,), "cond_fn", loop=not keyed)
    if cond_sub.written:
        names = ", ".join(repr(v.name) for v in cond_sub.written.values())
        raise ValueError(
            f"tl.while_loop: cond_fn assigns variable {names}; a predicate changes no state (assign in body_fn)"
        )
    if body_sub.written:  # assigned Variables: one more loop variable each, assigned after the loop
        variables = list(body_sub.written.values())
        return _while_carrying(variables, cond_fn, body_fn, tree.unflatten(structure, leaves), maximum_iterations)
    if not keyed and (body_sub.drew or cond_sub.drew):
        # Random draws: a key per step, a hidden last loop variable (cond_fn's draws salted apart from the body's)
        return _traced_while(
            lambda vk: keyed_call(vk[1], cond_fn, vk[0], salt=_COND_SALT),
            lambda vk: (keyed_call(vk[1], body_fn, vk[0]), _random_keys(())),
            (args, _random_keys(())),
            maximum_iterations,
            keyed=True,
        )[0]
    outer = cond_sub.outer + [v for v in body_sub.outer if v._id not in cond_sub.outer_map]
    cg, bg = cond_sub.with_outer(len(leaves), outer), body_sub.with_outer(len(leaves), outer)
    outs = _while_op(
        *leaves, *outer, cond_graph=cg, body_graph=bg, n_vars=len(leaves), maximum_iterations=maximum_iterations
    )
    return tree.unflatten(structure, outs if isinstance(outs, tuple) else (outs,))


def _while_carrying(variables, cond_fn, body_fn, loop_vars, maximum_iterations):
    from ..graph.tracing import carried_out, variable_value, write_back

    reading = _reading_carried(variables, body_fn)
    values, finals = while_loop(
        _reading_carried(variables, cond_fn),
        lambda carry: (reading(carry), carried_out(variables)),
        (loop_vars, [variable_value(v) for v in variables]),
        maximum_iterations,
    )
    write_back(variables, finals)
    return values


_COND_SALT = 1 << 32


def _random_keys(shape):
    """Keys for the random draws of a loop's steps, drawn per run (from the enclosing body's key in one)."""
    from . import random as _random

    return _random.uniform(shape, 0, _random.KEY_BOUND, dtype="int64")


def _bounded_while(cond_fn, body_fn, loop_vars, maximum_iterations):
    """At most N steps as a scan whose step is a cond: differentiable through the taken steps."""
    from . import math as math_ops

    def body(values):
        new = body_fn(values)
        _check_same(
            _signature(values, "tl.while_loop"), new, _LOOP_RULE, "loop_vars are", "body_fn returns"
        )  # before cond names itself
        return new

    def step(carry, _):
        values, active = carry
        active = math_ops.logical_and(active, _bool_pred(cond_fn(values), "tl.while_loop cond_fn"))
        return (cond(active, body, lambda v: v, values), active), None

    (values, _), _ = scan(
        step, (loop_vars, dispatch.to_tensor(True, _backend_of(loop_vars))), length=maximum_iterations
    )
    return values
