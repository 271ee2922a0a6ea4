"""The dry run: a dispatch mode in which only shape rules run, each op call a node of a scratch graph with
symbolic outputs and no kernel running.  ``tl.eval_shape`` is built on it, and so are ``tl.ops.explain``
(ops/_explain.py) and the shapes of a traced ``tl.scan``'s empty stacks (ops/control_flow.py), which sit above it."""

from __future__ import annotations

from .. import dispatch
from .. import dtypes as _dt
from ..backends import base as _backends
from ..tensor import Tensor, TensorSpec, make, make_symbolic
from .ir import Graph


class _DryRun(dispatch.Mode):
    """A dispatch mode that runs only shape rules: each op call becomes a node of ``graph``, with symbolic
    outputs, and no kernel runs."""

    def __init__(self):
        self.graph = Graph("explain", _backends.current())
        # What tl.cond/tl.scan/tl.while_loop ask of the trace enclosing the subgraphs they trace (their bodies'
        # shapes are the point): no Python-float argument is weak here, and an outside value is itself.
        self.weak_args: dict = {}

    def lift(self, t, op=None):
        return t

    def bind(self, op, inputs, attrs, specs):
        outs = self.graph.add_node(op, inputs, attrs, specs)
        return outs if isinstance(specs, tuple) else outs[0]

    def convert(self, value, dtype, backend):
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            return make_symbolic(tuple(value.shape), dtype, backend, None, 0)
        return make(backend.asarray(value, dtype=dtype), backend)

    def assign(self, var, value):
        return var  # a dry run changes nothing

    def needs_value(self, t):
        raise TypeError(
            f"tl.eval_shape / tl.ops.explain: a tensor's value was needed (shape {tuple(t.shape)}, {t.dtype}), but a "
            "dry run knows shapes and dtypes only; Python control flow on values cannot run here"
        )

    def run(self, fn, *args, **kwargs) -> list:
        """The nodes ``fn`` dispatches, with no tape recording and no kernel running."""
        start = len(self.graph.nodes)
        with dispatch.in_mode(self):
            fn(*args, **kwargs)
        return self.graph.nodes[start:]


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, as ``TensorSpec``s in the output's
    structure, without running a kernel (JAX's ``jax.eval_shape``): only the shape rules run, so huge
    shapes cost nothing.  Array, Tensor and ``TensorSpec`` leaves of the arguments stand for tensors of their
    shape and dtype (a spec's ``None`` sizes stay unknown); other leaves are passed as they are.

    >>> import tensorlib as tl
    >>> tl.eval_shape(lambda x, w: {"y": tl.nn.conv2d(x, w, 2, "SAME")},
    ...               tl.TensorSpec((60000, 32, 32, 1), "float32"), tl.TensorSpec((3, 3, 1, 6), "float32"))
    {'y': TensorSpec(shape=(60000, 16, 16, 6), dtype=float32)}
    """
    from .. import tree

    backend = _backends.current()
    leaves, treedef = tree.flatten((args, kwargs))
    leaves = [_symbolic(leaf, backend) if _stands_for_a_tensor(leaf) else leaf for leaf in leaves]
    args, kwargs = tree.unflatten(treedef, leaves)
    dry = _DryRun()
    with dispatch.in_mode(dry):
        out = fun(*args, **kwargs)
    return tree.map(lambda t: TensorSpec(tuple(t.shape), t.dtype) if isinstance(t, Tensor) else t, out)


def _stands_for_a_tensor(value) -> bool:
    return isinstance(value, (Tensor, TensorSpec)) or (hasattr(value, "shape") and hasattr(value, "dtype"))


def _symbolic(value, backend):
    if isinstance(value, TensorSpec):
        return make_symbolic(value.known_shape("tl.eval_shape"), value.dtype, backend, None, 0)
    if isinstance(value, (tuple, list)) and all(d is None or isinstance(d, int) for d in value):
        return make_symbolic(tuple(value), _dt.float32, backend, None, 0)
    if isinstance(value, Tensor) or (hasattr(value, "shape") and hasattr(value, "dtype")):
        return make_symbolic(tuple(value.shape), _dt.of_array(value.dtype), backend, None, 0)
    return value
