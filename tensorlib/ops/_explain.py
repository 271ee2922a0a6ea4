"""``tl.ops.explain``: where an op really runs, and which ops compute its gradient.

The seeds' first question, "where is ``tf.nn.conv2d`` actually executed?",
answered in one call: the op type a public function dispatches, its inputs
and attributes, the kernel on each backend (function and ``file:line``), the
strategy the kernel picks for given shapes, and the gradient function of each
input -- itself made of ops, each with its own kernel.

Given example inputs (shapes as tuples, ``TensorSpec``s, arrays or Tensors)
the call is dry-run: only shape rules run, no kernel, so huge shapes cost
nothing; the gradient functions are dry-run the same way to show the ops
they dispatch, with shapes and attributes.

>>> import tensorlib as tl
>>> text = tl.ops.explain(tl.nn.conv2d, (8, 32, 32, 3), (3, 3, 3, 6), strides=1, padding="SAME")
Conv2D: ...
>>> "Conv2DBackpropInput" in text and "numpy_nn/conv.py" in text
True
"""

from __future__ import annotations

import inspect
import sys

from ..backends import base as _backends
from ..grad import registry as _grad_registry
from ..graph.dry_run import _DryRun, _symbolic
from ..tensor import make_symbolic
from .registry import OpDef, _ops

_INDENT = "    "


def explain(target, *example_args, **example_kwargs) -> str:
    """Print and return how ``target`` runs: op, attributes, kernels and gradient ops.

    ``target`` is an op type name (``"Conv2D"``), an :class:`OpDef`, or a public
    function (``tl.nn.conv2d``, which names its op in ``op_type``).  With
    example arguments, the call is traced without running any kernel: shape
    tuples stand for float32 tensors (pass a ``tl.TensorSpec`` for another
    dtype), and the report gives shapes, the resolved attributes, the conv
    strategy and the ops each gradient function dispatches.
    """
    opdef, fn = _resolve(target)
    if example_args or example_kwargs:
        text = _explain_call(opdef, fn, example_args, example_kwargs)
    else:
        text = _explain_static(opdef, fn)
    print(text)
    return text


# ------------------------------------------------------------------ resolving the target
def _public_functions() -> dict:
    """op type -> the first public function (tl.nn, tl) that dispatches it."""
    import tensorlib

    found = {}
    for namespace in (tensorlib.nn, tensorlib):
        for value in vars(namespace).values():
            op_type = getattr(value, "op_type", None)
            if callable(value) and isinstance(op_type, str):
                found.setdefault(op_type, value)
    return found


def _resolve(target):
    if isinstance(target, OpDef):
        return target, _public_functions().get(target.name)
    if isinstance(target, str):
        if target not in _ops:
            raise LookupError(
                f"explain: no op type {target!r} is defined; op types look like 'Conv2D' (tl.ops.all_ops() lists them)"
            )
        return _ops[target], _public_functions().get(target)
    if callable(target):
        op_type = getattr(target, "op_type", None)
        return (_ops[op_type] if op_type in _ops else None), target
    raise TypeError(f"explain: expected an op type name, an OpDef or a tensorlib function, got {target!r}")


def _example_call(opdef, fn, args, kwargs):
    """(callable, args, kwargs) with example tensors replaced by symbolic ones."""
    backend = _backends.current()
    if fn is None:
        return (lambda *a: opdef(*a, **kwargs)), [_symbolic(a, backend) for a in args], {}
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(
            f"explain: the example arguments do not fit {fn.__name__}{inspect.signature(fn)}: {e}"
        ) from None
    tensor_params = getattr(fn, "tensor_params", None) or (
        opdef.input_names if opdef is not None else tuple(bound.arguments)
    )
    for name, value in bound.arguments.items():
        if name in tensor_params:
            bound.arguments[name] = _symbolic(value, backend)
    return fn, bound.args, bound.kwargs


# ------------------------------------------------------------------ describing
def _describe_tensor(t) -> str:
    return f"{tuple(t.shape)} {t.dtype}"


def _signature(node) -> str:
    names = node.op.input_names
    ins = ", ".join(
        f"{names[i] if i < len(names) else names[-1]}: {_describe_tensor(t)}" for i, t in enumerate(node.inputs)
    )
    outs = ", ".join(_describe_tensor(o) for o in node.outputs)
    return f"{node.op.name}({ins}) -> {outs}"


def _attrs_text(attrs) -> str:
    shown = {k: v for k, v in attrs.items() if not callable(v)}
    return ", ".join(f"{k}={v!r}" for k, v in shown.items()) or "none"


def _source(fn) -> str:
    fn = inspect.unwrap(fn)
    try:
        where = f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        where = "<unknown>"
    return f"{fn.__module__}.{fn.__qualname__} at {where}"


def _kernel_lines(opdef) -> list:
    lines = []
    for name in _backends.names():
        found = opdef.kernel_source(name)
        if found is None:
            lines.append(
                f"{name}: no kernel ({opdef.kernels_note()}; register one with "
                f"tl.ops.get({opdef.name!r}).kernel({name!r}))"
            )
            continue
        qualname, where = found
        registered = opdef.kernels.get(name)
        if registered is None and opdef.generic_kernel is not None:
            lines.append(f"{name}: {qualname} at {where} (generic: written against the backend's xp)")
            continue
        lines.append(f"{name}: {qualname} at {where}")
        if registered is not None and getattr(registered, "__wrapped__", None) is not None:
            lines.append(
                f"{' ' * len(name)}  called by {registered.__module__}.{registered.__qualname__}, "
                "which resolves the attributes"
            )
    return lines


def _strategy_line(node) -> str | None:
    # The strategy function sits on the NumPy kernel that picks it (as tl.profile reads it).
    strategy = getattr(node.op.kernels.get("numpy"), "strategy", None)
    if strategy is None or any(None in t.shape[1:] for t in node.inputs):  # the batch size may be unknown
        return None
    return strategy(*node.inputs, **node.attrs) or None


def _describe_node(node, indent: str) -> list:
    lines = [f"{indent}{_signature(node)}", f"{indent}{_INDENT}attributes  {_attrs_text(node.attrs)}"]
    for i, kernel in enumerate(_kernel_lines(node.op)):
        lines.append(f"{indent}{_INDENT}{'kernel' if i == 0 else '':<10}  {kernel}")
    strategy = _strategy_line(node)
    if strategy is not None:
        lines.append(f"{indent}{_INDENT}strategy    {strategy} (conv2d_strategy for these shapes)")
    return lines


def _rules(opdef):
    """(per-input gradient functions in input order, or None with the reason there are none)."""
    try:
        by_name = _grad_registry.get(opdef.name)
    except LookupError:
        return None, f"gradient    none registered: backprop through {opdef.name} raises LookupError"
    if by_name is None:
        return None, f"gradient    none: {opdef.name} is declared not differentiable"
    return tuple(by_name.values()), None


def _gradient_lines(node, dry: _DryRun, indent: str) -> list:
    per_input, missing = _rules(node.op)
    if missing:
        return [f"{indent}{missing}"]
    lines = [f"{indent}gradient    one function per input; each dispatches ops of its own:"]
    out_grads = [make_symbolic(o.shape, o.dtype, o.backend, None, 0) for o in node.outputs]
    names = node.op.input_names
    for i, t in enumerate(node.inputs):
        name = names[0] if node.op.variadic else names[i]
        fn = per_input[0] if node.op.variadic else per_input[i]
        if fn is None or t.dtype.kind != "f":
            lines.append(f"{indent}{_INDENT}{name}: no gradient flows to it")
            continue
        lines.append(f"{indent}{_INDENT}{name} <- {_source(fn)}")
        try:
            extra = {"index": i} if node.op.variadic else {}
            calls = dry.run(fn, node, *out_grads, **extra)
        except Exception as e:  # a rule that needs values cannot be dry-run; say so, keep explaining
            lines.append(f"{indent}{_INDENT * 2}(could not be traced without values: {type(e).__name__}: {e})")
            continue
        if not calls:
            lines.append(f"{indent}{_INDENT * 2}(dispatches no op: the incoming gradient passes through)")
        for call in calls:
            lines.extend(_describe_node(call, indent + _INDENT * 2))
    return lines


def _family_module(fn) -> str:
    """The op family that exports ``fn``: ``tensorlib.ops.nn`` for a function defined in ``tensorlib.ops.nn.conv``."""
    parts = fn.__module__.split(".")
    for end in range(min(3, len(parts)), len(parts)):
        if getattr(sys.modules.get(".".join(parts[:end])), fn.__name__, None) is fn:
            return ".".join(parts[:end])
    return fn.__module__


def _header(opdef, fn) -> list:
    lines = []
    if opdef is not None:
        lines.append(f"{opdef.name}: {opdef.__doc__ or ''}".rstrip())
    if fn is not None:
        signature = inspect.signature(fn).replace(return_annotation=inspect.Signature.empty)
        lines.append(
            f"{_INDENT}called as   {_family_module(fn).replace('tensorlib.ops.', 'tl.')}.{fn.__name__}{signature}"
        )
    return lines


def _explain_call(opdef, fn, args, kwargs) -> str:
    dry = _DryRun()
    call, call_args, call_kwargs = _example_call(opdef, fn, args, kwargs)
    nodes = dry.run(call, *call_args, **call_kwargs)
    lines = _header(opdef, fn)
    if len(nodes) > 1 or opdef is None:
        lines.append(f"{_INDENT}dispatches {len(nodes)} ops: {', '.join(n.op.name for n in nodes)}")
    for node in nodes:
        lines.extend(_describe_node(node, _INDENT))
        lines.extend(_gradient_lines(node, dry, _INDENT * 2))
    return "\n".join(lines)


def _referenced_ops(fn) -> list:
    """The OpDefs and public op functions a gradient function names (when no example shapes are given)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    found = []
    for name in code.co_names:
        value = fn.__globals__.get(name)
        op = value if isinstance(value, OpDef) else _ops.get(getattr(value, "op_type", None) or "")
        if op is not None and op not in found:
            found.append(op)
    return found


def _explain_static(opdef, fn) -> str:
    if opdef is None:
        raise TypeError(
            f"explain: {getattr(fn, '__name__', fn)!r} does not name an op type; pass example "
            "inputs (shapes) so explain can trace the ops it dispatches"
        )
    lines = _header(opdef, fn)
    lines.append(f"{_INDENT}inputs      {', '.join(opdef.input_names)}")
    lines.append(f"{_INDENT}attributes  {_attrs_text(opdef.defaults)} (defaults)")
    for i, kernel in enumerate(_kernel_lines(opdef)):
        lines.append(f"{_INDENT}{'kernel' if i == 0 else '':<10}  {kernel}")
    per_input, missing = _rules(opdef)
    if missing:
        lines.append(f"{_INDENT}{missing}")
        return "\n".join(lines)
    lines.append(f"{_INDENT}gradient    one function per input (pass example shapes to see every op they call):")
    names = opdef.input_names[:1] if opdef.variadic else opdef.input_names
    for name, rule in zip(names, per_input):
        if rule is None:
            lines.append(f"{_INDENT * 2}{name}: no gradient flows to it")
            continue
        lines.append(f"{_INDENT * 2}{name} <- {_source(rule)}")
        for op in _referenced_ops(rule):
            lines.append(f"{_INDENT * 3}calls {op.name}")
            lines.extend(f"{_INDENT * 4}{'kernel' if i == 0 else '':<10}  {k}" for i, k in enumerate(_kernel_lines(op)))
    return "\n".join(lines)
