"""Graph passes, run before execution: simplification, constant folding, CSE, fusion, ReluGrad moved
before MaxPoolGrad, a first conv layer and its pool in phase order, dead-node elimination.

Each pass rebuilds the graph front to back (``Graph.add_node`` re-runs the
shape rules, so a rewritten graph is checked as it is built) and maps old
values to new ones.  None of them runs a kernel on anything but small
constants.

>>> import tensorlib as tl
>>> f = tl.function(lambda x: tl.transpose(tl.transpose(x * 1.0)) + tl.exp(x) + tl.exp(x))
>>> g = f.get_graph(tl.TensorSpec((2, 3)))
>>> [n.op_type for n in g.optimize().nodes]
['Exp', 'Add', 'Add']
"""

from __future__ import annotations

import numpy as np

from ..dispatch import fit_result
from ..ops import registry as _registry
from ..ops._shapes import normalize_axes
from .ir import ASSIGN, Graph, _nbytes

# Folded results live only in the optimized graph (files hold the traced graph), so they may be a
# little larger than traced constants: enough for a fused conv filter, never a data-sized array.
FOLD_BYTES = 16 * 1024

# Whether optimize() fuses a MaxPool into the Conv2DAddActivation it reads (fuse_conv_add_activation_max_pool).
# Off: on the 2-core machines measured (2 MiB of L2 per core, a 260 MiB L3 holding every activation), the traced
# LeNet step ran 1-2.6% slower fused: pooling a block of images in the conv's epilogue cost as much as the
# separate pass or more (the conv's blocks outgrow L2, and smaller ones slowed the conv more than they saved).
# Set it before tracing on machines where that pass is memory-bound.
FUSE_CONV_MAX_POOL = False


def optimized(graph: Graph, keep_gradients: bool = False) -> Graph:
    """``graph.optimize(keep_gradients)``: the graph after the passes, computed once per graph and flag.

    ``keep_gradients`` keeps StopGradient and custom gradients, for graphs that are replayed under a
    GradientTape."""
    # On the graph, not in a weak-keyed table: an optimized graph may be the graph itself.
    cache = graph.__dict__.get("_optimized")
    if cache is None:
        cache = graph._optimized = {}
    g = cache.get(keep_gradients)
    if g is None:
        g = cache[keep_gradients] = optimize(graph, keep_gradients)
    return g


def optimize(graph: Graph, keep_gradients: bool = False) -> Graph:
    """All passes in order.  ``keep_gradients`` keeps the ops that only matter to gradients
    (StopGradient, CustomGradient), for a graph that will be replayed under a tape."""
    g = simplify(graph, keep_gradients)
    fused = fuse_avgpool_grad_conv_backprop(fuse_conv_avgpool(g))
    if fused is not g:
        g = simplify(fused, keep_gradients)
    g = move_relu_grad_before_max_pool_grad(fuse_add_activation(g))
    g = fuse_conv_add_activation(g)
    if FUSE_CONV_MAX_POOL:
        g = fuse_conv_add_activation_max_pool(g)
    g = fuse_conv_backprop_bias(g)
    if not keep_gradients:  # the phase-order ops are not differentiable
        g = fuse_phase_pool(g)
    return eliminate_dead_nodes(g)


def _is_stateful(node) -> bool:
    """Nodes that are never folded or merged: a stateful op's, whose results are not a function of inputs and
    attrs alone; a side-effect op's, which runs at every call as often as eagerly (folded, it ran once, when
    the graph was optimized; merged, two calls ran once); and a control-flow node's whose subgraphs hold one
    (a random draw in a loop body)."""
    return _in_node(node, lambda n: n.op.stateful or n.op.side_effect)


def _has_side_effect(node) -> bool:
    """Nodes kept though nothing reads them: Variable assignments, ops declared ``side_effect`` (a check that
    raises), and a control-flow node whose branch or body holds one."""
    return node.op is ASSIGN or _in_node(node, lambda n: n.op.side_effect)


def _in_node(node, test) -> bool:
    """``test`` holds for ``node`` or for a node of its subgraphs (a branch or loop body), at any depth."""
    return test(node) or any(
        isinstance(v, Graph) and any(_in_node(n, test) for n in v.nodes) for v in node.attrs.values()
    )


# ---------------------------------------------------------------- simplify = no-ops + folding + CSE
def simplify(graph: Graph, keep_gradients: bool = False) -> Graph:
    """Algebraic no-ops, constant folding of small constants, and common-subexpression elimination."""
    new = graph.empty_copy()
    env: dict = {}
    seen: dict = {}
    constants = {_constant_key(raw, t.backend): t for t, raw in new.constants.values()}
    for node in graph.nodes:
        ins = tuple(env.get(t._id, t) for t in node.inputs)
        if node.op is ASSIGN:
            new.add_node(ASSIGN, ins, node.attrs, (), node.site, node.phase, node.scope)
            continue
        outs = _no_op(new, node, ins, keep_gradients)
        if outs is None:
            stateful = _is_stateful(node)
            key = None if stateful else (node.op.name, tuple(t._id for t in ins), canonical(node.attrs))
            outs = seen.get(key)
            if outs is None:
                outs = None if stateful else _fold(new, node, ins, constants)
                if outs is None:
                    outs = new.add_node(node.op, ins, node.attrs, site=node.site, phase=node.phase, scope=node.scope)
                if key is not None:
                    seen[key] = outs
        for old, out in zip(node.outputs, outs):
            env[old._id] = out
    new.outputs = [env.get(t._id, t) for t in graph.outputs]
    return new


def canonical(value):
    """A hashable key for attribute values: tuples, slices, dtypes, Ellipsis, arrays; callables by identity."""
    if isinstance(value, dict):
        return ("dict",) + tuple((k, canonical(v)) for k, v in sorted(value.items()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__,) + tuple(canonical(v) for v in value)
    if isinstance(value, slice):
        return ("slice", canonical(value.start), canonical(value.stop), canonical(value.step))
    if isinstance(value, np.dtype):
        return ("dtype", value.str)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if value is None or value is Ellipsis or isinstance(value, (bool, int, float, str, np.generic)):
        return (type(value).__name__, repr(value))
    return ("object", id(value))


def _constant_key(raw, backend):
    host = np.asarray(backend.to_numpy(raw))
    return host.dtype.str, host.shape, host.tobytes(), backend.name


def _fold(new: Graph, node, ins, constants):
    """Evaluate a node whose inputs are all constants (or, for a shape-only op, have known shapes), if its
    outputs are small; None otherwise."""
    shape_only = node.op.shape_only
    if not ins or any(t._id not in new.constants and not (shape_only and None not in t.shape) for t in ins):
        return None
    if any(None in o.shape or _nbytes(o.shape, o.dtype) > FOLD_BYTES for o in node.outputs):
        return None
    backend = ins[0].backend
    values = [
        new.constant_value(t) if t._id in new.constants else backend.xp.empty(t.shape, dtype=t.dtype) for t in ins
    ]
    try:
        kernel = node.op.resolve_kernel(backend)
        raw = kernel(*values, **node.attrs)
        raws = [
            fit_result(r, o, backend, node.op, kernel)
            for r, o in zip(raw if isinstance(raw, tuple) else (raw,), node.outputs)
        ]
    except Exception:  # noqa: BLE001 - leave the error to the run, where it names the call site
        return None
    outs = []
    for value in raws:
        key = _constant_key(value, backend)
        t = constants.get(key)
        if t is None:
            t = constants[key] = new.add_constant(value, backend=backend)
        outs.append(t)
    return tuple(outs)


def _all_equal(new: Graph, t, number) -> bool:
    raw = new.constant_value(t)
    if raw is None or raw.size > 64:
        return False
    return bool(np.all(np.asarray(t.backend.to_numpy(raw)) == number))


def _all_zeros(new: Graph, t, negative: bool) -> bool:
    """Whether ``t`` is a small constant of zeros, each with the sign bit ``negative`` where its dtype has one."""
    raw = new.constant_value(t)
    if raw is None or raw.size > 64:
        return False
    host = np.asarray(t.backend.to_numpy(raw))
    if not np.all(host == 0):
        return False
    if host.dtype.kind == "c":
        host = np.concatenate([host.real.ravel(), host.imag.ravel()])
    return host.dtype.kind not in "fc" or bool(np.all(np.signbit(host) == negative))


def _no_op(new: Graph, node, ins, keep_gradients):
    """Replacement outputs when the node does nothing (x*1, x+0, transpose of transpose, ...), else None.

    A replacement must have the node's exact shape and dtype: ``x * ones(3, 3)``
    broadcasts and ``x_int + 0.5`` promotes, so neither is a no-op.
    """
    kind, out = node.op.name, node.outputs[0] if node.outputs else None

    def same(t):
        return t.shape == out.shape and t.dtype == out.dtype

    if kind == "Identity" or (kind == "StopGradient" and not keep_gradients):
        return (ins[0],)
    if kind == "CustomGradient" and not keep_gradients:
        return ins[node.attrs["n_inputs"] + node.attrs["n_variables"] :]  # its inputs, read variables, outputs
    # Complex x * 1, x / 1 and x ** 1 are not x: NumPy's formulas turn inf + 0j into inf + nanj, and lose signs of zero
    exact_unit = out is not None and out.dtype.kind != "c"
    if kind == "Mul" and exact_unit:
        for x, other in ((ins[0], ins[1]), (ins[1], ins[0])):
            if same(x) and _all_equal(new, other, 1):
                return (x,)
    if kind == "Add":
        # x + (-0.0) is x for every float x, but x + 0.0 turns x = -0.0 into +0.0 (and 1 / x from -inf into inf)
        for x, other in ((ins[0], ins[1]), (ins[1], ins[0])):
            if same(x) and _all_zeros(new, other, negative=True):
                return (x,)
    if kind == "Sub" and same(ins[0]) and _all_zeros(new, ins[1], negative=False):
        return (ins[0],)  # x - 0.0 is x, -0.0 included; x - (-0.0) is x + 0.0
    if kind in ("Div", "Pow") and exact_unit and same(ins[0]) and _all_equal(new, ins[1], 1):
        return (ins[0],)
    if kind in ("LogicalAnd", "LogicalOr"):
        keep = kind == "LogicalAnd"  # x & True == x, x | False == x
        for x, other in ((ins[0], ins[1]), (ins[1], ins[0])):
            if same(x) and _all_equal(new, other, keep):
                return (x,)
            if x.shape == out.shape and _all_equal(new, other, not keep):
                # x & False, x | True: x's values do not matter, only its shape (a FullLike, folded if small)
                if None not in out.shape and _nbytes(out.shape, out.dtype) <= FOLD_BYTES:
                    return (
                        new.add_constant(x.backend.xp.full(out.shape, not keep, dtype=out.dtype), backend=x.backend),
                    )
                return new.add_node(
                    _registry.get("FullLike"),
                    (x,),
                    {"value": not keep, "dtype": out.dtype},
                    site=node.site,
                    phase=node.phase,
                    scope=node.scope,
                )
    if kind == "Select":
        for value, chosen in ((True, ins[1]), (False, ins[2])):
            if same(chosen) and _all_equal(new, ins[0], value):
                return (chosen,)
    if kind == "Cast" and same(ins[0]):
        return (ins[0],)
    if kind in ("BroadcastTo", "BroadcastLike", "SumToLike") and same(ins[0]) and None not in out.shape:
        # An axis of unknown size may be 1 at run time and change size there.
        return (ins[0],)
    if kind in ("Reshape", "ReshapeLike"):
        if same(ins[0]) and None not in out.shape:
            return (ins[0],)
        inner = ins[0]._node
        if kind == "Reshape" and inner is not None and inner.op.name == "Reshape" and ins[0] is inner.outputs[0]:
            return new.add_node(
                node.op, (inner.inputs[0],), node.attrs, site=node.site, phase=node.phase, scope=node.scope
            )
    if kind == "Transpose":
        perm = tuple(node.attrs["perm"])
        inner = ins[0]._node
        source = ins[0]
        if inner is not None and inner.op.name == "Transpose":
            first = inner.attrs["perm"]
            perm = tuple(first[p] for p in perm)
            source = inner.inputs[0]
        if perm == tuple(range(len(perm))):
            return (source,)
        if source is not ins[0]:
            return new.add_node(node.op, (source,), {"perm": perm}, site=node.site, phase=node.phase, scope=node.scope)
    return None


# ---------------------------------------------------------------- AvgPool right after a stride-1 Conv2D
def fuse_conv_avgpool(graph: Graph) -> Graph:
    """``avg_pool(conv2d(x, w))`` -> one ``conv2d(x, w', strides=pool strides)``.

    Exact for VALID padding everywhere, unit dilation and conv stride 1, when
    the conv feeds only the pool: ``w'`` is ``w`` convolved with a kh x kw box
    divided by kh*kw (a (KH+kh-1) x (KW+kw-1) filter).  The pooled output is
    never materialized at full resolution, which also saves its memory.

    Exact for finite values, to rounding.  An inf or NaN in ``x`` meets the summed weights of ``w'``, not each
    weight of ``w``: where the unfused sums make ``inf - inf = NaN`` the fused one can make an inf (a weight sum
    of one sign), and where they make an inf it can make NaN (a weight sum of 0, times inf).  Both are
    non-finite, and both trip ``check_numerics``.
    """
    uses = _use_counts(graph)
    pairs = {}
    for node in graph.nodes:
        conv = node.inputs[0]._node if node.op.name == "AvgPool" and node.inputs else None
        if (
            conv is not None
            and conv.op.name == "Conv2D"
            and uses[conv.outputs[0]._id] == 1
            and _fusable(conv.attrs, node.attrs)
            and None not in conv.inputs[1].shape
        ):
            pairs[id(node)] = (node, conv)
    if not pairs:
        return graph

    def strided_conv(pool, conv):
        def build(new, value):
            x, w = map(value, conv.inputs)
            kh, kw = pool.attrs["ksize"]
            box = _box_filter(new, w, kh, kw, pool)
            attrs = {**conv.attrs, "strides": tuple(pool.attrs["strides"])}
            return new.add_node(conv.op, (x, box), attrs, site=pool.site, phase=pool.phase, scope=pool.scope)

        return build

    rewrites = {key: strided_conv(pool, conv) for key, (pool, conv) in pairs.items()}
    return _rebuild(graph, {id(conv) for _, conv in pairs.values()}, rewrites)


def _use_counts(graph: Graph) -> dict:
    """value id -> how many node inputs and graph outputs read it."""
    uses: dict = {}
    for node in graph.nodes:
        for t in node.inputs:
            uses[t._id] = uses.get(t._id, 0) + 1
    for t in graph.outputs:
        uses[t._id] = uses.get(t._id, 0) + 1
    return uses


def _rebuild(graph: Graph, dropped: set, rewrites: dict) -> Graph:
    """``graph`` rebuilt front to back: the nodes whose ids are in ``dropped`` left out, each node whose id
    maps to ``build`` in ``rewrites`` replaced by ``build(new, value)`` (which adds nodes to ``new`` and
    returns the values standing for the node's outputs; ``value(t)`` is the new value of an old ``t``),
    every other node copied (its shape rule re-run by ``add_node``)."""
    new = graph.empty_copy()
    env: dict = {}

    def value(t):
        return env.get(t._id, t)

    for node in graph.nodes:
        if id(node) in dropped:
            continue
        build = rewrites.get(id(node))
        if build is None:
            outs = new.add_node(
                node.op, tuple(map(value, node.inputs)), node.attrs, site=node.site, phase=node.phase, scope=node.scope
            )
        else:
            outs = build(new, value)
        for old, out in zip(node.outputs, outs):
            env[old._id] = out
    new.outputs = [value(t) for t in graph.outputs]
    return new


def _is_valid(padding) -> bool:
    return padding == "VALID" or padding in (((0, 0), (0, 0)), [[0, 0], [0, 0]])


def _fusable(conv_attrs, pool_attrs) -> bool:
    return (
        _is_valid(conv_attrs.get("padding"))
        and _is_valid(pool_attrs.get("padding"))
        and tuple(conv_attrs.get("strides", (1, 1))) == (1, 1)
        and tuple(conv_attrs.get("dilations", (1, 1))) == (1, 1)
        and conv_attrs.get("data_format", "NHWC") == "NHWC"
        and pool_attrs.get("data_format", "NHWC") == "NHWC"
    )


def _box_filter(g: Graph, w, kh: int, kw: int, like):
    """``w`` (HWIO) fully convolved with a kh x kw box, over kh*kw: pad, add shifted slices, scale (nodes in the
    phase and scope of the node ``like``)."""
    fh, fw = w.shape[0] + kh - 1, w.shape[1] + kw - 1
    pads = ((kh - 1, kh - 1), (kw - 1, kw - 1), (0, 0), (0, 0))
    padded = g.add_node(
        _registry.get("PadV2"), (w,), {"paddings": pads, "constant_values": 0}, phase=like.phase, scope=like.scope
    )[0]
    total = _sum_of_windows(g, padded, [(kh - 1 - p, kw - 1 - q) for p in range(kh) for q in range(kw)], fh, fw, like)
    scale = g.add_constant(w.backend.asarray(np.asarray(1.0 / (kh * kw), dtype=w.dtype)), backend=w.backend)
    return g.add_node(_registry.get("Mul"), (total, scale), {}, phase=like.phase, scope=like.scope)[0]


# ---------------------------------------------------------------- its gradient: AvgPoolGrad into the conv backprops
def fuse_avgpool_grad_conv_backprop(graph: Graph) -> Graph:
    """The gradient counterpart of :func:`fuse_conv_avgpool`: an ``AvgPoolGrad`` whose result feeds only
    stride-1 VALID ``Conv2DBackpropInput``/``Conv2DBackpropFilter`` nodes is folded into them.

    ``backprop_input(w, avg_pool_grad(g))`` is ``backprop_input(w', g)`` with the pool's strides, ``w'``
    the box-filtered ``w``; ``backprop_filter(x, avg_pool_grad(g))`` is ``backprop_filter(x, g)`` for the
    (KH+kh-1) x (KW+kw-1) filter at the pool's strides, box-correlated back to KH x KW (the transpose of
    the box filter).  Exact for finite values (to rounding; inf and NaN as in :func:`fuse_conv_avgpool`); the
    full-resolution gradient is never materialized.
    """
    uses: dict = {}
    for node in graph.nodes:
        for i, t in enumerate(node.inputs):
            uses.setdefault(t._id, []).append((node, i))
    outputs = {t._id for t in graph.outputs}
    pools = {}
    for node in graph.nodes:
        if node.op.name != "AvgPoolGrad" or node.outputs[0]._id in outputs or not _is_valid(node.attrs["padding"]):
            continue
        users = uses.get(node.outputs[0]._id, [])
        if users and all(
            u.op.name in ("Conv2DBackpropInput", "Conv2DBackpropFilter")
            and i == 1
            and _fusable(u.attrs, node.attrs)
            and None not in _static_filter(u)
            for u, i in users
        ):
            pools[node.outputs[0]._id] = node
    if not pools:
        return graph
    new = graph.empty_copy()
    env: dict = {}
    for node in graph.nodes:
        ins = tuple(env.get(t._id, t) for t in node.inputs)
        pool = pools.get(node.inputs[1]._id) if len(node.inputs) == 2 else None
        if pool is None:
            outs = new.add_node(node.op, ins, node.attrs, site=node.site, phase=node.phase, scope=node.scope)
        else:
            kh, kw = pool.attrs["ksize"]
            grad = env.get(pool.inputs[0]._id, pool.inputs[0])
            attrs = {**node.attrs, "strides": tuple(pool.attrs["strides"])}
            if node.op.name == "Conv2DBackpropInput":
                outs = new.add_node(
                    node.op,
                    (_box_filter(new, ins[0], kh, kw, node), grad),
                    attrs,
                    site=node.site,
                    phase=node.phase,
                    scope=node.scope,
                )
            else:
                fh, fw, c_in, c_out = node.attrs["filter_shape"]
                attrs["filter_shape"] = (fh + kh - 1, fw + kw - 1, c_in, c_out)
                wide = new.add_node(node.op, (ins[0], grad), attrs, site=node.site, phase=node.phase, scope=node.scope)[
                    0
                ]
                outs = (_box_correlate(new, wide, fh, fw, kh, kw, node),)
        for old, out in zip(node.outputs, outs):
            env[old._id] = out
    new.outputs = [env.get(t._id, t) for t in graph.outputs]
    return new


def _static_filter(node) -> tuple:
    return tuple(node.attrs["filter_shape"]) if node.op.name == "Conv2DBackpropFilter" else tuple(node.inputs[0].shape)


def _sum_of_windows(g: Graph, source, corners, fh: int, fw: int, like):
    """The sum of ``source``'s fh x fw windows (its first two axes) at ``corners``, in ``like``'s phase and scope."""
    total = None
    for p, q in corners:
        index = (slice(p, p + fh), slice(q, q + fw), slice(None), slice(None))
        part = g.add_node(
            _registry.get("StridedSlice"), (source,), {"index": index}, phase=like.phase, scope=like.scope
        )
        total = (
            part[0]
            if total is None
            else g.add_node(_registry.get("Add"), (total, part[0]), {}, phase=like.phase, scope=like.scope)[0]
        )
    return total


def _box_correlate(g: Graph, wide, fh: int, fw: int, kh: int, kw: int, like):
    """``sum over p<kh, q<kw of wide[p:p+fh, q:q+fw]`` over kh*kw: the transpose of :func:`_box_filter`."""
    total = _sum_of_windows(g, wide, [(p, q) for p in range(kh) for q in range(kw)], fh, fw, like)
    scale = g.add_constant(wide.backend.asarray(np.asarray(1.0 / (kh * kw), dtype=wide.dtype)))
    return g.add_node(_registry.get("Mul"), (total, scale), {}, phase=like.phase, scope=like.scope)[0]


# ---------------------------------------------------------------- bias add + activation
_FUSED_ACTIVATIONS = {"Relu": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid"}


def fuse_add_activation(graph: Graph) -> Graph:
    """``relu(x + b)`` (or ``tanh``, ``sigmoid``) -> one ``AddActivation(x, b)``, where the sum feeds only
    the activation.

    Exact: the fused kernel gives each element the unfused operations; the sum, often the size of a
    whole layer's output, is never materialized.  A gradient graph keeps working as it is (the
    activations' gradients read their output, which the fused node produces), and the fused op has
    gradient rules of its own for graphs replayed under a tape.
    """
    uses = _use_counts(graph)
    pairs = {}
    for node in graph.nodes:
        activation = _FUSED_ACTIVATIONS.get(node.op.name)
        add = node.inputs[0]._node if activation and node.inputs else None
        if (
            add is not None
            and add.op.name == "Add"
            and node.inputs[0] is add.outputs[0]
            and uses[add.outputs[0]._id] == 1
            and add.outputs[0].dtype.kind == "f"
            and add.inputs[0].dtype == add.inputs[1].dtype == add.outputs[0].dtype
        ):
            pairs[id(node)] = (node, add, activation)
    if not pairs:
        return graph
    fused = _registry.get("AddActivation")

    def add_activation(node, add, activation):
        def build(new, value):
            ins = tuple(map(value, add.inputs))
            return new.add_node(
                fused, ins, {"activation": activation}, site=node.site, phase=node.phase, scope=node.scope
            )

        return build

    rewrites = {key: add_activation(*triple) for key, triple in pairs.items()}
    return _rebuild(graph, {id(add) for _, add, _ in pairs.values()}, rewrites)


# ---------------------------------------------------------------- ReluGrad after MaxPoolGrad, at pooled size
def move_relu_grad_before_max_pool_grad(graph: Graph) -> Graph:
    """``ReluGrad(MaxPoolGrad(h, p, g), h)`` -> ``MaxPoolGrad(h, p, ReluGrad(g, p))`` when no input cell
    lies in two pooling windows and the MaxPoolGrad result feeds only that ReluGrad (h is typically the
    ReLU's output, p = max_pool(h)).  The ReluGrad then runs on the pooled gradient, kh*kw times
    smaller, and the full-resolution gradient is written once.

    Exact, inf and NaN in ``g`` included.  MaxPoolGrad sends each window's ``g`` to one cell, the first
    whose ``h`` equals ``p``, and 0 to every other cell (where windows do not overlap, no cell adds two
    gradients).  At that cell ``h == p``, so ``h > 0`` exactly when ``p > 0``: ReluGrad gives it the
    same value in either order.  Every other cell is a 0 in either order (ReluGrad of a 0 is the same
    0).  ReluGrad keeps each element finite or not, so MaxPoolGrad's kernel takes the same path for
    ``g`` and for the masked ``g``; and both ops promote their inputs to the widest dtype, exactly.
    """
    uses = _use_counts(graph)
    pools = {}
    for node in graph.nodes:
        pool = node.inputs[0]._node if node.op.name == "ReluGrad" and len(node.inputs) == 2 else None
        if (
            pool is not None
            and pool.op.name == "MaxPoolGrad"
            and node.inputs[0] is pool.outputs[0]
            and uses[pool.outputs[0]._id] == 1
            and node.inputs[1]._id == pool.inputs[0]._id
            and _windows_apart(pool.attrs)
        ):
            pools[id(node)] = (node, pool)
    if not pools:
        return graph
    relu_grad = _registry.get("ReluGrad")

    def masked_first(node, pool):
        def build(new, value):
            h, p, g = map(value, pool.inputs)
            masked = new.add_node(relu_grad, (g, p), {}, site=node.site, phase=node.phase, scope=node.scope)[0]
            return new.add_node(pool.op, (h, p, masked), pool.attrs, site=pool.site, phase=pool.phase, scope=pool.scope)

        return build

    rewrites = {key: masked_first(*pair) for key, pair in pools.items()}
    return _rebuild(graph, {id(pool) for _, pool in pools.values()}, rewrites)


def _windows_apart(pool_attrs) -> bool:
    """Whether each input cell lies in one pooling window at most (strides at least the window)."""
    return all(s >= k for s, k in zip(pool_attrs["strides"], pool_attrs["ksize"]))


def fuse_conv_add_activation(graph: Graph) -> Graph:
    """``AddActivation(Conv2D(x, w), b)`` (either order) -> one ``Conv2DAddActivation(x, w, b)``, where the
    conv's result feeds only that node and ``b`` holds one value per output channel, of the result's dtype.

    Exact: the fused kernel applies the bias and activation to each block of the conv's result, with the
    unfused operations, while the block is in cache; the conv's result is never materialized on its own.
    """
    uses = _use_counts(graph)
    fusions = {}  # id(AddActivation node) -> (that node, its Conv2D node, the bias)
    for node in graph.nodes:
        if node.op.name != "AddActivation":
            continue
        for side in (0, 1):
            conv, bias = node.inputs[side]._node, node.inputs[1 - side]
            if (
                conv is not None
                and conv.op.name == "Conv2D"
                and node.inputs[side] is conv.outputs[0]
                and uses[conv.outputs[0]._id] == 1
                and tuple(bias.shape) == (conv.outputs[0].shape[3],)
                and None not in bias.shape  # a bias of unknown length could broadcast a length 1
                and bias.dtype == conv.outputs[0].dtype == node.outputs[0].dtype
            ):
                fusions[id(node)] = (node, conv, bias)
                break
    if not fusions:
        return graph
    fused = _registry.get("Conv2DAddActivation")

    def fused_conv(node, conv, bias):
        def build(new, value):
            ins = tuple(map(value, (*conv.inputs, bias)))
            attrs = {**conv.attrs, "activation": node.attrs["activation"]}
            return new.add_node(fused, ins, attrs, site=node.site, phase=node.phase, scope=node.scope)

        return build

    rewrites = {key: fused_conv(*triple) for key, triple in fusions.items()}
    return _rebuild(graph, {id(conv) for _, conv, _ in fusions.values()}, rewrites)


def fuse_conv_add_activation_max_pool(graph: Graph) -> Graph:
    """``MaxPool(h)`` of ``h = Conv2DAddActivation(x, w, b)`` -> one ``Conv2DAddActivationMaxPool(x, w, b)``,
    whose outputs stand for ``h`` (every other reader of ``h``, such as the pool's gradient, reads it as before)
    and for the pool's result.  Where several MaxPools read ``h``, the first is fused and the others read ``h``.
    ``optimize()`` runs it when :data:`FUSE_CONV_MAX_POOL` is set.

    Exact: the fused kernel writes ``h`` as ``Conv2DAddActivation`` does and pools each block of its images,
    with the operations ``MaxPool`` gives each element, while the block is in cache: ``h`` is not read back
    from memory by a pass of its own.
    """
    pools = {}  # id(Conv2DAddActivation node) -> (that node, the first MaxPool reading its result)
    for node in graph.nodes:
        conv = node.inputs[0]._node if node.op.name == "MaxPool" and node.inputs else None
        if (
            conv is not None
            and conv.op.name == "Conv2DAddActivation"
            and node.inputs[0] is conv.outputs[0]
            and id(conv) not in pools
        ):
            pools[id(conv)] = (conv, node)
    if not pools:
        return graph
    fused = _registry.get("Conv2DAddActivationMaxPool")
    pooled = {}  # id(MaxPool node) -> the fused node's pooled output, once the fused node is built

    def fused_conv(conv, pool):
        def build(new, value):
            attrs = {**conv.attrs, **{f"pool_{k}": pool.attrs[k] for k in ("ksize", "strides", "padding")}}
            h, pooled[id(pool)] = new.add_node(
                fused, tuple(map(value, conv.inputs)), attrs, site=conv.site, phase=conv.phase, scope=conv.scope
            )
            return (h,)

        return build

    rewrites = {}
    for key, (conv, pool) in pools.items():
        rewrites[key] = fused_conv(conv, pool)
        rewrites[id(pool)] = lambda new, value, pool=pool: (pooled[id(pool)],)
    return _rebuild(graph, set(), rewrites)


# ---------------------------------------------------------------- a conv layer's gradients, fused
def fuse_conv_backprop_bias(graph: Graph) -> Graph:
    """A conv layer's bias and filter gradients -> one ``Conv2DBackpropFilterWithBias``; and with its input
    gradient too -> one ``Conv2DBackprop`` (TensorFlow's "backprop filter with bias").

    For an output gradient ``dy`` read by ``Sum(dy, axis=(0, 1, 2))`` (the bias gradient, as the gradient of
    a bias add or of ``Conv2DAddActivation`` writes it) and by ``Conv2DBackpropFilter(x, dy)``, both are
    replaced by ``Conv2DBackpropFilterWithBias(x, dy)``; when ``dy`` is also read by a
    ``Conv2DBackpropInput(w, dy)`` of the same strides, padding and dilations, for an input of ``x``'s
    shape and a filter of the filter gradient's, all three by ``Conv2DBackprop(x, w, dy)``; and where the input
    gradient's one use is ``ReluGrad(input gradient, x)`` (``x`` a ReLU's output, as a conv net's previous layer
    reads it), that too, by ``Conv2DBackprop(x, w, dy, relu_grad=True)`` (bit for bit the ReluGrad).  Shapes must be
    static and dtypes equal; other readers of ``dy`` stay.  The fused node takes the place of the first of
    the nodes it replaces, so ``x`` and ``w`` must be computed before it.  Exact but for rounding: the
    fused kernels read ``dy`` fewer times (with the Fourier strategy, its spectrum once) and sum in an
    order of their own.
    """
    readers: dict = {}
    for index, node in enumerate(graph.nodes):
        for t in node.inputs:
            readers.setdefault(t._id, []).append((index, node))
    made_at = {o._id: index for index, node in enumerate(graph.nodes) for o in node.outputs}
    outputs = {t._id for t in graph.outputs}
    fusions = {}  # id(first replaced node) -> (fused op, inputs, attrs, the replaced nodes in output order)
    replaced = set()
    for node in graph.nodes:
        if node.op.name != "Sum" or not _is_bias_gradient(node):
            continue
        dy = node.inputs[0]
        users = [(i, n) for i, n in readers[dy._id] if id(n) not in replaced]
        sum_at = next(i for i, n in users if n is node)
        found = next(((i, n) for i, n in users if _is_filter_gradient(n, dy)), None)
        if found is None:
            continue
        filter_at, filt = found
        x = filt.inputs[0]
        group = [(sum_at, node), (filter_at, filt)]
        attrs = {k: filt.attrs[k] for k in ("strides", "padding", "dilations")}
        found = next(((i, n) for i, n in users if _is_input_gradient(n, dy, filt)), None)
        if found is not None:
            group.insert(0, found)
            op, ins, outs = "Conv2DBackprop", (x, found[1].inputs[0], dy), [found[1], filt, node]
            mask = _relu_grad_of(found[1].outputs[0], x, readers, outputs)
            attrs["relu_grad"] = mask is not None
            if mask is not None:
                group.append(mask)
                outs[0] = mask[1]
        else:
            op, ins, outs = "Conv2DBackpropFilterWithBias", (x, dy), [filt, node]
            attrs["filter_shape"] = filt.attrs["filter_shape"]
        first = min(i for i, _ in group)
        if any(made_at.get(t._id, -1) >= first for t in ins):
            continue
        fusions[id(graph.nodes[first])] = (_registry.get(op), ins, attrs, outs, filt)
        replaced.update(id(n) for _, n in group)
    if not fusions:
        return graph
    new = graph.empty_copy()
    env: dict = {}
    for node in graph.nodes:
        fusion = fusions.get(id(node))
        if fusion is not None:
            op, ins, attrs, outs, filt = fusion
            values = new.add_node(
                op, tuple(env.get(t._id, t) for t in ins), attrs, site=filt.site, phase=filt.phase, scope=filt.scope
            )
            for old, value in zip(outs, values):
                env[old.outputs[0]._id] = value
        elif id(node) not in replaced:
            values = new.add_node(
                node.op,
                tuple(env.get(t._id, t) for t in node.inputs),
                node.attrs,
                site=node.site,
                phase=node.phase,
                scope=node.scope,
            )
            for old, value in zip(node.outputs, values):
                env[old._id] = value
    new.outputs = [env.get(t._id, t) for t in graph.outputs]
    return new


def _relu_grad_of(dx, x, readers, outputs):
    """``(index, node)`` of the ``ReluGrad(dx, x)`` that is ``dx``'s one use, of ``dx``'s dtype, or None."""
    users = readers.get(dx._id, [])
    if len(users) != 1 or dx._id in outputs:
        return None
    index, node = users[0]
    if (
        node.op.name == "ReluGrad"
        and node.inputs[0] is dx
        and node.inputs[1] is x
        and node.outputs[0].dtype == dx.dtype
    ):
        return index, node
    return None


def _is_bias_gradient(node) -> bool:
    """Whether a ``Sum`` node sums a static, floating 4-D value over exactly (N, H, W), keeping no dims."""
    dy, axis = node.inputs[0], node.attrs["axis"]
    return (
        len(dy.shape) == 4
        and None not in dy.shape
        and dy.dtype.kind == "f"
        and node.outputs[0].dtype == dy.dtype
        and not node.attrs["keepdims"]
        and axis is not None
        and normalize_axes(axis, 4) == (0, 1, 2)
    )


def _is_filter_gradient(node, dy) -> bool:
    """Whether ``node`` is a ``Conv2DBackpropFilter(x, dy)`` of static shapes and ``dy``'s dtype."""
    return (
        node.op.name == "Conv2DBackpropFilter"
        and node.inputs[1] is dy
        and node.inputs[0] is not dy
        and None not in node.inputs[0].shape
        and node.inputs[0].dtype == dy.dtype == node.outputs[0].dtype
    )


def _is_input_gradient(node, dy, filt) -> bool:
    """Whether ``node`` is a ``Conv2DBackpropInput(w, dy)`` matching the filter gradient ``filt``: the same conv
    attributes, an input of ``filt``'s input's shape, a filter of its filter's shape, one dtype."""
    return (
        node.op.name == "Conv2DBackpropInput"
        and node.inputs[1] is dy
        and node.inputs[0] is not dy
        and all(canonical(node.attrs[k]) == canonical(filt.attrs[k]) for k in ("strides", "padding", "dilations"))
        and tuple(node.attrs["input_shape"]) == tuple(filt.inputs[0].shape)
        and tuple(node.inputs[0].shape) == tuple(filt.attrs["filter_shape"])
        and node.inputs[0].dtype == dy.dtype == node.outputs[0].dtype
    )


# ---------------------------------------------------------------- a first conv layer in phase order
def fuse_phase_pool(graph: Graph) -> Graph:
    """A first conv layer, its max pool and their gradients -> the phase-order ops of
    :mod:`tensorlib.ops.nn.phases`: ``h = Conv2DAddActivation(x, w, b)`` (stride 1, undilated, at most 4 input
    channels, float32 or float64, static shapes, on the NumPy backend), ``p = MaxPool(h)`` (VALID, windows as strides, tiling ``h``),
    and for each ``MaxPoolGrad(h, p, g)`` the ``Conv2DBackpropFilterWithBias(x, ...)`` that is its one reader,
    where ``h`` has no other reader and is no graph output, become ``Conv2DAddActivationPhasePool``,
    ``MaxPoolPhasesGrad`` and ``Conv2DBackpropFilterWithBiasPhases``.  Then the pool and its gradient run on
    contiguous planes instead of runs of ``C`` values.  ``optimize()`` runs it on graphs not replayed under a
    tape (the phase-order ops are not differentiable).

    ``h`` and its gradient stay internal to the three ops: the pooled result is bit for bit ``MaxPool``'s,
    and the filter and bias gradients equal the unfused ones but for rounding (the conv's sums of products
    and the gradients' sums run in another order).
    """
    readers: dict = {}
    for node in graph.nodes:
        for t in node.inputs:
            readers.setdefault(t._id, []).append(node)
    outputs = {t._id for t in graph.outputs}
    layers = []  # (conv, pool, [(MaxPoolGrad, filter gradient), ...])
    for conv in graph.nodes:
        layer = _phase_layer(conv, readers, outputs)
        if layer is not None:
            layers.append(layer)
    if not layers:
        return graph
    phase_pool = _registry.get("Conv2DAddActivationPhasePool")
    phases_grad = _registry.get("MaxPoolPhasesGrad")
    filter_phases = _registry.get("Conv2DBackpropFilterWithBiasPhases")
    made: dict = {}  # id(conv) -> (h in phase order, pooled), once built
    rewrites, dropped = {}, set()

    def fused_conv(conv, pool):
        def build(new, value):
            attrs = {"padding": conv.attrs["padding"], "activation": conv.attrs["activation"], "pool": pool}
            made[id(conv)] = new.add_node(
                phase_pool, tuple(map(value, conv.inputs)), attrs, site=conv.site, phase=conv.phase, scope=conv.scope
            )
            return (None,)  # h itself is read by no node that is kept

        return build

    def phase_grad(conv, grad, pool):
        def build(new, value):
            h, pooled = made[id(conv)]
            return new.add_node(
                phases_grad,
                (h, pooled, value(grad.inputs[2])),
                {"pool": pool},
                site=grad.site,
                phase=grad.phase,
                scope=grad.scope,
            )

        return build

    def phase_filter(filt, pool):
        def build(new, value):
            attrs = {"filter_shape": filt.attrs["filter_shape"], "padding": filt.attrs["padding"], "pool": pool}
            return new.add_node(
                filter_phases, tuple(map(value, filt.inputs)), attrs, site=filt.site, phase=filt.phase, scope=filt.scope
            )

        return build

    for conv, pool_node, grads in layers:
        pool = tuple(pool_node.attrs["ksize"])
        rewrites[id(conv)] = fused_conv(conv, pool)
        rewrites[id(pool_node)] = lambda new, value, conv=conv: (made[id(conv)][1],)
        for grad, filt in grads:
            rewrites[id(grad)] = phase_grad(conv, grad, pool)
            rewrites[id(filt)] = phase_filter(filt, pool)
    return _rebuild(graph, dropped, rewrites)


def _phase_layer(conv, readers, outputs):
    """``(conv, its MaxPool, [(MaxPoolGrad, Conv2DBackpropFilterWithBias), ...])`` when the phase order applies
    to ``conv`` (see :func:`fuse_phase_pool`), else None."""
    from ..backends.numpy_nn import phases as _phase_kernels  # numpy_nn builds on nothing here
    from ..ops.nn._common import _geometry

    if conv.op.name != "Conv2DAddActivation" or conv.outputs[0]._id in outputs:
        return None
    x, w = conv.inputs[0], conv.inputs[1]
    h = conv.outputs[0]
    if None in tuple(x.shape) or None in tuple(w.shape) or h.dtype not in (np.float32, np.float64):
        return None
    if x.backend.name != "numpy":  # elsewhere the phase-order ops are the NHWC kernels, reordered
        return None
    if any(t.dtype != h.dtype for t in conv.inputs):
        return None
    users = readers.get(h._id, [])
    pools = [n for n in users if n.op.name == "MaxPool" and n.inputs[0] is h]
    if len(pools) != 1:
        return None
    pool = pools[0]
    ksize, strides = tuple(pool.attrs["ksize"]), tuple(pool.attrs["strides"])
    pads = _geometry(
        tuple(x.shape[1:3]),
        tuple(w.shape[:2]),
        tuple(conv.attrs["strides"]),
        tuple(conv.attrs["dilations"]),
        conv.attrs["padding"],
    )[1]
    if not _is_valid(pool.attrs["padding"]) or not _phase_kernels.phase_pool_applies(
        x.shape, w.shape, conv.attrs["strides"], conv.attrs["dilations"], pads, ksize, strides
    ):
        return None
    grads = []
    for user in users:
        if user is pool:
            continue
        if not (
            user.op.name == "MaxPoolGrad"
            and user.inputs[0] is h
            and user.inputs[1] is pool.outputs[0]
            and all(canonical(user.attrs[k]) == canonical(pool.attrs[k]) for k in ("ksize", "strides", "padding"))
            and user.outputs[0]._id not in outputs
            and user.outputs[0].dtype == h.dtype
        ):
            return None
        filters = readers.get(user.outputs[0]._id, [])
        if len(filters) != 1:
            return None
        filt = filters[0]
        if not (
            filt.op.name == "Conv2DBackpropFilterWithBias"
            and filt.inputs[0] is x
            and filt.inputs[1] is user.outputs[0]
            and canonical(filt.attrs["padding"]) == canonical(conv.attrs["padding"])
            and tuple(filt.attrs["strides"]) == (1, 1)
            and tuple(filt.attrs["dilations"]) == (1, 1)
            and tuple(filt.attrs["filter_shape"]) == tuple(w.shape)
        ):
            return None
        grads.append((user, filt))
    if not grads:  # without a gradient the NHWC kernels pool as fast
        return None
    return conv, pool, grads


# ---------------------------------------------------------------- dead nodes
def eliminate_dead_nodes(graph: Graph) -> Graph:
    """Drop nodes (and constants) nothing needs; Variable assignments and checks always stay."""
    live = {t._id for t in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if any(o._id in live for o in node.outputs) or _has_side_effect(node):
            kept.append(node)
            live.update(t._id for t in node.inputs)
    new = graph.empty_copy()
    new.nodes = kept[::-1]
    new.constants = {k: v for k, v in graph.constants.items() if k in live}
    new.outputs = list(graph.outputs)
    return new
