"""``tl.vmap``: vectorizing map, JAX's ``jax.vmap`` (PyTorch's ``torch.func.vmap``).

The mapped function runs once, on *logical* tensors: each stands for one batch element (its shape
lacks the mapped axis) and is backed by a *physical* tensor holding the whole batch on axis 0.
``vmap`` is a dispatch mode (like tracing): every op the function calls reaches :meth:`_Vmap.bind`,
which computes the op on the physical tensors:

- an op none of whose inputs is batched runs as it is (its result is the same for every element);
- an op with a batching rule (elementwise ops with broadcasting, reductions and the other ops along
  an axis, reshapes and transposes, matmul and einsum, stack and concat, gathers and scatters,
  convolution, pooling and batch norm with their gradients, linear algebra, FFTs) runs once on the
  whole batch (``docs/ops_table.md``'s vmap column lists which);
- any other op runs once per batch element and the results are stacked, as PyTorch's vmap falls back
  to a loop: slower, but right for every op, gradients included.

The physical ops are ordinary op calls made outside the mode: tapes recording around ``vmap``, a
``tl.function`` tracing it and an enclosing ``vmap`` see them, so ``tl.grad(lambda x: vmap(f)(x).sum())``
and ``vmap(vmap(f))`` work; a tape opened inside the mapped function records the logical ops, whose
gradient rules are batched in turn, so ``vmap(tl.grad(loss))`` gives per-example gradients.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import weakref

import numpy as np

from .. import dispatch, tree
from ..ops import array as _array
from ..ops import math as _math
from ..ops import reduce as _reduce
from ..ops import shape as _shape
from ..ops.nn import _common as _nn_common
from ..ops.registry import _ops
from ..tensor import Tensor, Variable, make_symbolic
from .registry import Refused

__all__ = [
    "AssignError",
    "BatchedValueError",
    "RaggedResultError",
    "RandomnessError",
    "Unmappable",
    "all_gather",
    "axis_index",
    "pmax",
    "pmean",
    "pmin",
    "psum",
    "vmap",
]


def vmap(fun, in_axes=0, out_axes=0, axis_size: int | None = None, randomness: str = "error", axis_name=None):
    """``fun`` mapped over an axis of its arguments: ``vmap(f)(xs)[i] == f(xs[i])``, computed batched.

    ``in_axes`` says which axis of each positional argument is mapped: an int (every array in every
    argument), ``None`` (none: the argument is passed as it is to every call), or a tuple/list with one
    entry per positional argument, each an int, ``None`` or a structure matching that argument (a
    prefix of it: dicts by key, lists and tuples by position), as in JAX.  Keyword arguments are mapped
    over their leading axis.  ``out_axes`` places the mapped axis in each output (an int, or a structure
    that is a prefix of the output's); an output that does not depend on a mapped argument is repeated
    along it.  ``axis_size`` gives the batch size when no argument is mapped.

    Traced (``tl.function`` with a ``tl.TensorSpec`` whose mapped axis is ``None``), the batch size may be
    unknown until the graph runs: ops with a batching rule run batched as they do eagerly, the mapped axes
    are checked to agree in size when the graph runs, and an op that would run once per element, which needs
    the size, raises naming it (give ``axis_size``, or the size in the signature).

    Inside ``fun`` each mapped array is one element of the batch (its shape lacks the mapped axis), so
    the function is written for one example.  Its value is not available there (no Python ``if`` on
    it: use ``tl.where``).

    ``randomness`` says how the elements draw random numbers (random draws, dropout), as in
    ``torch.func.vmap``: ``"error"`` (the default) refuses any random op, so that no choice is made
    silently; ``"different"``: each element draws its own numbers, as a Python loop would; ``"same"``:
    every element draws the same numbers (a draw that takes no mapped input is made once; dropout of a
    mapped input applies one mask to every element; when traced only the former).  A draw with an
    explicit ``seed`` gives the same numbers at every call, so the same for every element.

    ``axis_name`` (any hashable, as JAX's) names the mapped axis for the collectives inside ``fun``:
    :func:`psum`, :func:`pmean`, :func:`pmax`, :func:`pmin`, :func:`all_gather` and :func:`axis_index`
    (``jax.lax``'s), which read every element of the batch, also from inside nested ``tl.vmap`` calls.

    >>> import tensorlib as tl
    >>> w = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> xs = tl.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> tl.vmap(lambda x: w @ x)(xs).numpy().tolist()
    [[1.0, 3.0], [2.0, 4.0], [3.0, 7.0]]
    >>> per_example = tl.vmap(tl.grad(lambda w, x: tl.sum((w @ x) ** 2)), in_axes=(None, 0))
    >>> per_example(w, xs).shape
    (3, 2, 2)
    >>> tl.vmap(lambda x: x / tl.psum(x, "batch"), axis_name="batch")(tl.tensor([1.0, 3.0])).numpy().tolist()
    [0.25, 0.75]
    """
    if not callable(fun):
        raise TypeError(f"tl.vmap: expected a function to map, got {type(fun).__name__} {fun!r:.60}")
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)
    if axis_size is not None and (not isinstance(axis_size, int) or isinstance(axis_size, bool) or axis_size < 0):
        raise ValueError(f"tl.vmap: axis_size must be a non-negative int or None, got {axis_size!r}")
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"tl.vmap: randomness must be 'error', 'different' or 'same', got {randomness!r}")
    try:
        hash(axis_name)
    except TypeError:
        raise TypeError(f"tl.vmap: axis_name must be hashable, got {type(axis_name).__name__}") from None

    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
            raise ValueError(
                f"tl.vmap: in_axes has {len(in_axes)} entries but {_name(fun)} was called with {len(args)} "
                "positional arguments"
            )
        arg_axes = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(args)
        paths, treedef = tree.flatten_with_path((tuple(args), kwargs))
        leaves = [leaf for _, leaf in paths]
        axes = []
        for i, (arg, spec) in enumerate(zip(args, arg_axes)):
            axes += _axes_of(spec, arg, f"args[{i}]")
        axes += _axes_of(0, kwargs, "kwargs")
        size = _batch_size(paths, axes, axis_size, fun)
        physical = [None if axis is None else _moved_to_front(leaf, axis) for leaf, axis in zip(leaves, axes)]
        physical = _same_size_when_run(physical, size, fun)
        mode = _Vmap(size, dispatch.local_state().tapes[:], randomness)
        mode.axis_name = axis_name
        if size is None:
            mode.unknown_size = _unknown_size_note(paths, axes, fun)
            mode.batch_like = _batch_zeros(next(p for p in physical if p is not None))
        with dispatch.in_mode(mode):
            inner = [leaf if p is None else mode.logical(p) for leaf, p in zip(leaves, physical)]
            inner_args, inner_kwargs = tree.unflatten(treedef, inner)
            out = fun(*inner_args, **inner_kwargs)
        out_paths, out_def = tree.flatten_with_path(out)
        out_specs = _axes_of(out_axes, out, "the output")
        results = [
            mode.output(leaf, axis, "out" + _keys(path), fun) for (path, leaf), axis in zip(out_paths, out_specs)
        ]
        return tree.unflatten(out_def, results)

    return mapped


def _name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _check_axes_spec(what: str, spec) -> None:
    for axis in tree.leaves(spec):
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"tl.vmap: {what} entries must be ints or None, got {type(axis).__name__} {axis!r:.40}")


def _axes_of(spec, value, where: str) -> list:
    """The mapped axis (or None) of each leaf of ``value``, from ``spec``: an int or None for all of them, or a
    structure that is a prefix of ``value``'s."""
    if spec is None or isinstance(spec, int):
        return [spec] * len(tree.leaves(value))
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(spec) != set(value):
            raise ValueError(
                f"tl.vmap: the axes for {where} are a dict with keys {sorted(map(str, spec))}, but the value is "
                f"{_kind(value)}"
            )
        return [a for key in value for a in _axes_of(spec[key], value[key], f"{where}[{key!r}]")]
    if not isinstance(value, (tuple, list)) or len(value) != len(spec):
        raise ValueError(
            f"tl.vmap: the axes for {where} are a {type(spec).__name__} of {len(spec)}, but the value is {_kind(value)}"
        )
    return [a for i, (s, v) in enumerate(zip(spec, value)) for a in _axes_of(s, v, f"{where}[{i}]")]


def _kind(value) -> str:
    if isinstance(value, dict):
        return f"a dict with keys {sorted(map(str, value))}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"{type(value).__name__} {value!r:.40}"


def _leaf_name(path: tuple) -> str:
    """Where an argument leaf is, as JAX names it: ``args[1]['w']`` or ``kwargs['x']``."""
    return ("kwargs" if path[0] else "args") + _keys(path[1:])


def _keys(path: tuple) -> str:
    return "".join(f"[{k!r}]" for k in path)


def _batch_size(paths, axes, axis_size, fun) -> int:
    """The batch size: the size of every mapped axis, which must agree (each input named by its path); None
    where it is unknown until a traced function runs (every mapped axis of unknown size, no ``axis_size``)."""
    sizes, unknown = [], None
    for (path, leaf), axis in zip(paths, axes):
        if axis is None:
            continue
        shape = getattr(leaf, "shape", None)
        if shape is None or not hasattr(leaf, "dtype"):
            how = (
                "keyword arguments are mapped over axis 0 (as in JAX); pass it positionally with in_axes None, or "
                "close over it"
                if path[0]
                else "give it in_axes None"
            )
            raise ValueError(
                f"tl.vmap: {_leaf_name(path)} of {_name(fun)} is {type(leaf).__name__} {leaf!r:.40}, which has no "
                f"axis {axis} to map over; {how}"
            )
        if not -len(shape) <= axis < len(shape):
            raise ValueError(
                f"tl.vmap: in_axes {axis} is out of range for {_leaf_name(path)} of {_name(fun)} (shape {tuple(shape)})"
            )
        if shape[axis] is not None:  # an unknown size (traced) is checked against the others when it runs
            sizes.append((_leaf_name(path), axis, shape[axis], tuple(shape)))
        elif axis_size is None and unknown is None:
            unknown = ()
    if not sizes:
        if axis_size is None and unknown is None:
            raise ValueError(f"tl.vmap: no argument of {_name(fun)} is mapped (all in_axes None); give axis_size")
        return axis_size
    if len({s for _, _, s, _ in sizes}) > 1:
        listed = ", ".join(f"{name} has {s} on axis {axis} (shape {shape})" for name, axis, s, shape in sizes[:8])
        more = f", and {len(sizes) - 8} more" if len(sizes) > 8 else ""
        raise ValueError(f"tl.vmap: the mapped axes of {_name(fun)}'s arguments differ in size: {listed}{more}")
    if axis_size is not None and axis_size != sizes[0][2]:
        raise ValueError(f"tl.vmap: axis_size {axis_size} but the mapped inputs have {sizes[0][2]} elements")
    return sizes[0][2]


def _same_size_when_run(physical: list, size, fun) -> list:
    """The physical inputs, those whose batch size is unknown until run time (traced) checked then against the
    others' (known or not): mapped axes of different sizes had broadcast silently (a batch of 1 against 4)."""
    mapped = [i for i, p in enumerate(physical) if p is not None]
    if not any(physical[i].shape[0] is None for i in mapped) or (len(mapped) < 2 and size is None):
        return physical
    dims = tuple(((size if size is not None else "batch"),) + (None,) * (physical[i].ndim - 1) for i in mapped)
    message = f"tl.vmap: the mapped axes of {_name(fun)}'s arguments differ in size"
    checked = _shape.ensure_dims(*(physical[i] for i in mapped), dims=dims, message=message)
    physical = list(physical)
    for i, p in zip(mapped, checked):
        physical[i] = p
    return physical


def _unknown_size_note(paths, axes, fun) -> str:
    """Which mapped axis has a size unknown until run time (traced), for an op that needs the batch size."""
    for (path, leaf), axis in zip(paths, axes):
        if axis is not None and leaf.shape[axis] is None:
            return f"axis {axis} of {_leaf_name(path)} of {_name(fun)} (shape {tuple(leaf.shape)})"
    return ""


def _batch_zeros(physical: Tensor) -> Tensor:
    """Zeros of shape ``(size,)`` for a physical tensor (batch first) whose size is unknown until run time: its
    sum over an empty slice, so that no value is read and none is made but these."""
    empty = _shape.getitem(_shape.expand_dims(physical, 1), (slice(None), slice(0, 0)))
    return _apply("Sum", (empty,), {"axis": tuple(range(1, empty.ndim)), "keepdims": False})


def _moved_to_front(leaf, axis: int) -> Tensor:
    x = dispatch.as_tensor(leaf)
    if axis % x.ndim:
        return _array.moveaxis(x, axis, 0)
    # A Variable is read here, once: returned unchanged, it had been the Variable itself (a later assign
    # changed the result).
    return _math.identity(x) if isinstance(x, Variable) else x


def _forget(table: dict, key: int, _ref) -> None:
    """A logical tensor died: its entry goes (the weak reference's callback)."""
    table.pop(key, None)


class Unmappable(Exception):
    """What a function does cannot be mapped by ``tl.vmap`` (it could run one element at a time)."""


class BatchedValueError(TypeError, Unmappable):
    """A mapped tensor's value was asked for inside ``tl.vmap`` (it has one per element, not one)."""


class RaggedResultError(ValueError, Unmappable):
    """An op gave results of different shapes for different elements, which cannot be stacked."""


class RandomnessError(ValueError, Unmappable):
    """A random op inside a mapped function that ``randomness`` does not allow."""


class AssignError(ValueError, Unmappable):
    """A Variable assigned inside a mapped function (one element at a time, each assign is one)."""


class _Vmap(dispatch.Mode):
    """The mode of one ``vmap`` call: logical tensors stand for the elements of physical ones.

    ``tl.cond``, ``tl.while_loop`` and ``tl.scan`` run as Python here, as eagerly: a scan loops over the
    logical slices, a cond whose predicate differs per element runs both branches and selects
    elementwise, and a while loop whose predicate does runs while any element goes on, keeping the
    values of those that stopped (JAX's rules); traced, where no element's value is known, such a loop
    runs to its ``maximum_iterations`` (unrolled), keeping them the same way, or, unbounded, is a logical
    ``While`` op (its body traced into a subgraph, which tapes inside the function record and differentiate)
    whose batching rule runs one ``While`` over the batch while any element goes on.
    """

    python_control_flow = True
    axis_name = None  # vmap's axis_name: the collectives (psum, ...) find the mode by it

    def __init__(self, size: int | None, outer_tapes: list, randomness: str = "error"):
        self.size = size  # None: unknown until the traced function runs (``unknown_size`` says whose axis)
        self.unknown_size = ""
        self.batch_like = None  # zeros of shape (size,), for a size unknown until run time (see ``repeated``)
        self.randomness = randomness
        self.outer_tapes = outer_tapes  # the tapes recording where vmap was called: they see the physical ops
        # _id of a live logical tensor -> (a weak reference to it, its physical tensor): an entry goes when its
        # logical tensor does, so a physical intermediate lives no longer than it would unmapped.
        self.physical: dict = {}
        self.numbers: dict = {}  # (type, repr, dtype, backend) of a Python number -> its constant
        self.weak_args: dict = {}  # (as a trace's: a subgraph traced inside the mode asks it)
        # (pred, the first tensor id made inside, {id: guarded tensor}) per open ``gradients_only_where``
        self.guards: list = []

    def logical(self, physical: Tensor) -> Tensor:
        t = make_symbolic(physical.shape[1:], physical.dtype, physical.backend, None, 0)
        self.physical[t._id] = (weakref.ref(t, functools.partial(_forget, self.physical, t._id)), physical)
        return t

    @contextlib.contextmanager
    def outside(self):
        """Run ops as the caller of vmap would: without this mode, with the caller's tapes recording."""
        st = dispatch.local_state()
        if not st.modes or st.modes[-1] is not self:
            raise RuntimeError("tl.vmap: a batched op ran while another mode was innermost")
        inner_tapes = st.tapes[:]
        st.modes.pop()
        st.tapes[:] = self.outer_tapes
        try:
            yield
        finally:
            st.tapes[:] = inner_tapes
            st.modes.append(self)

    @contextlib.contextmanager
    def reentered(self):
        """This mode active again (after vmap returned), its logical tensors standing for the same physical
        ones: for a custom gradient function, called later by a tape, that closed over logical tensors."""
        saved = self.outer_tapes
        self.outer_tapes = dispatch.local_state().tapes[:]
        try:
            with dispatch.in_mode(self):
                yield
        finally:
            self.outer_tapes = saved

    def physical_of(self, t, like) -> Tensor:
        """The physical tensor for the logical result ``t`` of a function run in the mode: an unbatched one
        (the same for every element) repeated along the batch; ``like`` gives the shape of a missing one."""
        from ..ops import creation

        found = self.physical.get(t._id) if isinstance(t, Tensor) else None
        if found is not None:
            return found[1]
        x = creation.zeros(like.shape, dtype=like.dtype, backend=like.backend) if t is None else dispatch.as_tensor(t)
        return self.repeated(x)

    def repeated(self, x: Tensor) -> Tensor:
        """The unbatched tensor ``x`` repeated along the batch (a broadcast view): what every element sees.
        A size unknown until run time (traced) cannot be named to broadcast_to: then a tile, or for the
        batch size itself a broadcast against zeros of the batch's shape."""
        if self.size is None:
            return _shape.broadcast_like(_shape.expand_dims(x, 0), _with_ones(self.batch_like, 1, x.ndim))
        if None in x.shape:
            return _apply("Tile", (_shape.expand_dims(x, 0),), {"reps": (self.size,) + (1,) * x.ndim})
        return _shape.broadcast_to(_shape.expand_dims(x, 0), (self.size, *x.shape))

    def knows_values(self, pred) -> bool:
        """Whether the logical ``pred``'s values are known (eagerly), so a loop can test them.  Traced, an
        unmapped one (the same for every element) has none either."""
        found = self.physical.get(pred._id)
        return (pred if found is None else found[1])._value is not None

    def lift(self, t, op=None):
        """A tensor that a loop body, traced into a subgraph inside the mapped function (``tl.while_loop`` whose
        predicate differs per element, traced), reads from outside: itself, logical or not; the ``While`` op
        takes it as an input and its batching rule (``tl.ops.control_flow``'s) maps it."""
        return t

    def any_element(self, pred) -> bool:
        """Whether the logical scalar ``pred`` is true for any element (a while loop's go-on test).  Traced, the
        values are unknown, even an unmapped ``pred``'s: a loop with ``maximum_iterations`` then goes on to its
        bound, the caller keeping the values of the elements that stopped (an unbounded one is a ``While`` op,
        its body traced into a subgraph, that the mode maps)."""
        if not self.knows_values(pred):
            return True
        found = self.physical.get(pred._id)
        if found is None:
            return bool(pred.numpy())
        with self.outside():
            return bool(found[1].numpy().any())

    @contextlib.contextmanager
    def gradients_only_where(self, pred):
        """A branch or loop body that runs on every element though only the elements where the logical bool
        ``pred`` holds keep its result: inside, an op reading a float tensor made before (an operand, a
        closed-over tensor or Variable, a value of an enclosing function) reads it through
        ``where(pred, t, stop_gradient(t))``, so gradients reach it from those elements alone (JAX's select on
        a batched cond's operands and closed-over values, its issue 1052).  The result's gradient is zero at
        the other elements, but a derivative that is infinite there (``sqrt`` of a negative, ``log`` of 0)
        made it 0 * inf, a NaN gradient where a loop over the elements gives a number."""
        self.guards.append((pred, dispatch._next_id(), {}))
        try:
            yield
        finally:
            self.guards.pop()

    def guarded(self, inputs) -> tuple:
        """``inputs`` of an op run inside ``gradients_only_where``: each float tensor made before a guard
        opened read through that guard's select (once per tensor and guard), where a gradient may be asked: a
        tape records, or a graph is traced (its While ops' gradients replay the bodies)."""
        st = dispatch.local_state()
        if not (st.tapes or any(m.outer_tapes if isinstance(m, _Vmap) else True for m in st.modes)):
            return inputs
        guards, self.guards = self.guards, []  # the selects below are not guarded again
        try:
            return tuple(self._guarded(t, guards) for t in inputs)
        finally:
            self.guards = guards

    def _guarded(self, t, guards):
        if t.dtype.kind not in "fc" or t.__class__ is dispatch.WeakScalar:
            return t
        key, read = t._id, t
        for pred, start, seen in guards:
            if key < start:
                found = seen.get(key)
                if found is None:
                    found = seen[key] = _math.where(pred, read, _math.stop_gradient(read))
                read = found
        return read

    def needs_value(self, t):
        if t._id in self.physical:
            raise BatchedValueError(
                f"tl.vmap: a batched tensor (shape {t.shape} per element, {t.dtype}) has no single value inside the "
                "mapped function, so Python control flow, conversions and printing cannot use it; select "
                "elementwise with tl.where(cond, x, y), or call the function in a Python loop"
            )

    def convert(self, value, dtype, backend):
        if not isinstance(value, (bool, int, float, complex)):
            with self.outside():
                return dispatch.to_tensor(value, backend)
        # A Python number: one constant per call of vmap, keyed by repr (0.0 == -0.0 and NaN != NaN as values)
        key = (value.__class__, repr(value), dtype, backend)
        t = self.numbers.get(key)
        if t is None:
            with self.outside():
                t = self.numbers[key] = dispatch.to_tensor(value, backend, dtype)
        return t

    def assign(self, var, value):
        return self.update(var, value, "assign")

    def update(self, var, value, how):
        raise AssignError(
            f"Variable.{how}: variable {var.name!r} (shape {var.shape}, {var.dtype}) cannot be assigned inside a "
            "function mapped by tl.vmap; return the new values from it and assign after"
        )

    def bind(self, op, inputs, attrs, specs):
        for v in attrs.values():
            if isinstance(v, Tensor) and v._id in self.physical:
                self.needs_value(v)
        found = [self.physical.get(t._id) for t in inputs]
        if op.stateful:
            self.check_randomness(op, found)
        if all(f is None for f in found) and not (op.stateful and self.randomness == "different"):
            with self.outside():
                return dispatch.apply(op, inputs, attrs)
        if op.shape_only:  # the result depends on shapes alone: the same for every element
            with self.outside():
                stand_ins = [t if f is None else self._stand_in(t, f[1]) for t, f in zip(inputs, found)]
                return dispatch.apply(op, stand_ins, attrs)
        physical = [t if f is None else f[1] for t, f in zip(inputs, found)]
        batched = [f is not None for f in found]
        many = isinstance(specs, tuple)
        spec_list = specs if many else (specs,)
        with self.outside():
            rule = (
                (_DIFFERENT_DRAWS if self.randomness == "different" else {}).get(op.name)
                if op.stateful
                else _RULES.get(op.name, _elementwise if op.elementwise else None)
            )
            outs = rule(self, op, inputs, physical, batched, attrs, spec_list) if rule is not None else None
            if outs is None:
                outs = self.loop(
                    op, physical, batched, attrs, spec_list, same_draws=op.stateful and self.randomness == "same"
                )
            elif not many:
                outs = (outs,)
        result = []
        for out, spec in zip(outs, spec_list):
            shape = out.shape
            if (
                shape[0] != self.size
                and self.size is not None
                or shape[1:] != spec.shape
                and (
                    len(shape) != len(spec.shape) + 1
                    or any(s is not None and s != o for s, o in zip(spec.shape, shape[1:]))
                )
                or out.dtype != spec.dtype
            ):
                raise RuntimeError(
                    f"tl.vmap: the batched {op.name} gave shape {out.shape} {out.dtype}, expected "
                    f"({self.size}, *{spec.shape}) {spec.dtype}"
                )
            result.append(self.logical(out))
        return tuple(result) if many else result[0]

    def _stand_in(self, t: Tensor, physical: Tensor) -> Tensor:
        """A tensor of the logical ``t``'s shape and dtype, for an op that reads only those: zeros, or where a
        size is unknown until run time (traced), the first element."""
        from ..ops import creation

        if None in t.shape and self.size != 0:
            return _shape.getitem(physical, 0)
        return creation.zeros(t.shape, dtype=t.dtype, backend=t.backend)

    def check_randomness(self, op, found) -> None:
        """Refuse a random op (a draw, or dropout) that ``randomness`` does not allow."""
        if self.randomness == "error":
            raise RandomnessError(
                f"tl.vmap: {op.name} draws random numbers inside the mapped function; say how the batch elements "
                "draw with randomness='different' (each its own numbers) or randomness='same' (every element the "
                "same numbers), as in torch.func.vmap"
            )
        if self.randomness == "same" and any(f is not None and f[1]._value is None for f in found):
            raise RandomnessError(
                f"tl.vmap: randomness='same' for {op.name} on a mapped input needs its values, which a traced "
                "function does not have; draw the random numbers outside the mapped function and pass them in"
            )

    def loop(self, op, physical, batched, attrs, specs, same_draws: bool = False) -> tuple:
        """``op`` once per element, the results stacked: right for every op.  With ``same_draws`` (a random op
        under ``randomness='same'``) every element draws from a copy of the generator as it was before the
        first, so all draw the same numbers; the generator moves on as after one draw."""
        from ..ops import creation
        from ..ops import random as _random

        if self.size is None:
            raise ValueError(
                f"tl.vmap: {op.name} has no batching rule for these inputs, so it runs once per element, which "
                f"needs the batch size; it is unknown until the traced function runs ({self.unknown_size}): give "
                "it in the input signature or as vmap's axis_size"
            )
        if self.size == 0:
            for spec in specs:
                if None in spec.shape:
                    raise ValueError(f"tl.vmap: {op.name}'s result shape {spec.shape} is unknown for an empty batch")
            backend = next(p.backend for p, b in zip(physical, batched) if b)
            return tuple(creation.zeros((0, *spec.shape), dtype=spec.dtype, backend=backend) for spec in specs)
        start = copy.deepcopy(_random.current_generator()) if same_draws else None
        per_element = []
        for i in range(self.size):
            args = [_shape.getitem(p, i) if b else p for p, b in zip(physical, batched)]
            with _random.drawing_from(copy.deepcopy(start)) if i and same_draws else contextlib.nullcontext():
                out = dispatch.apply(op, args, attrs)
            per_element.append(out if isinstance(out, tuple) else (out,))
        stacked = []
        for j in range(len(specs)):
            parts = [outs[j] for outs in per_element]
            shapes = {p.shape for p in parts}
            if len(shapes) > 1:
                raise RaggedResultError(
                    f"tl.vmap: {op.name} gives results of different shapes for different batch elements "
                    f"({', '.join(str(s) for s in sorted(shapes, key=str)[:4])}), which cannot be stacked"
                )
            stacked.append(_shape.stack(parts))
        return tuple(stacked)

    def output(self, leaf, axis, where: str, fun):
        """The caller's value for the output ``leaf`` (at ``where``, as ``out[1]['w']``) of the mapped function:
        its physical tensor, the mapped axis moved to ``axis``; an unbatched output repeated along it."""
        found = self.physical.get(leaf._id) if isinstance(leaf, Tensor) else None
        if axis is None:
            if found is not None:
                raise ValueError(
                    f"tl.vmap: {where} depends on a mapped input, but its out_axes is None; give it an axis"
                )
            return leaf
        if found is None and getattr(leaf, "dtype", None) is not None and leaf.dtype.names == ("float0",):
            return self.float0_output(leaf, axis, where)
        if found is None and not isinstance(leaf, (Tensor, bool, int, float, complex)) and not hasattr(leaf, "dtype"):
            raise TypeError(
                f"tl.vmap: {where} of {_name(fun)} is {type(leaf).__name__} {leaf!r:.40}, which cannot be stacked "
                "along the mapped axis; return tensors, or give it out_axes None"
            )
        x = found[1] if found is not None else self.repeated(dispatch.as_tensor(leaf))
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"tl.vmap: out_axes {axis} is out of range for {where} (shape {x.shape[1:]} per element)")
        return x if axis % x.ndim == 0 else _array.moveaxis(x, 0, axis)

    def float0_output(self, leaf, axis: int, where: str):
        """The float0 gradient of an integer argument (``tl.grad(..., allow_int=True)``), which holds no data, with
        the mapped axis of the batch's size inserted at ``axis`` (JAX's ``vmap`` of it)."""
        if self.size is None:
            raise TypeError(
                f"tl.vmap: {where} is a float0 gradient (tl.grad's allow_int=True), whose batched shape needs the "
                f"batch size, unknown until run time here ({self.unknown_size}); give the mapped axis a known size"
            )
        if not -leaf.ndim - 1 <= axis <= leaf.ndim:
            raise ValueError(f"tl.vmap: out_axes {axis} is out of range for {where} (shape {leaf.shape} per element)")
        shape = list(leaf.shape)
        shape.insert(axis % (leaf.ndim + 1), self.size)
        return np.zeros(tuple(shape), leaf.dtype)


# ---------------------------------------------------------------- batching rules
# A rule gets the logical inputs, the physical ones (the batch on axis 0 of the batched ones), which are
# batched, the attributes and the logical result specs; it returns the physical result(s), or None to
# leave the op to the loop.


def _apply(name: str, args, attrs=None):
    return dispatch.apply(_ops[name], tuple(args), attrs or {})


def _aligned(mode, t, p, rank: int):
    """A batched physical tensor with size-1 axes after the batch, so that its element dims line up with
    rank-``rank`` elements."""
    return _with_ones(p, 1, rank - t.ndim)


def _with_ones(p, at: int, count: int):
    """``p`` with ``count`` size-1 axes inserted at axis ``at`` (an expand_dims: sizes unknown until run time
    stay so, where a reshape must name them)."""
    return p if count <= 0 else _apply("ExpandDims", (p,), {"axis": tuple(range(at, at + count))})


def _batched_shape(mode, shape: tuple):
    """``(size, *shape)`` for a Reshape of a physical tensor: ``-1`` for a batch size unknown until run time, or
    None where -1 cannot stand for it (``shape`` has no elements)."""
    if mode.size is not None:
        return (mode.size, *shape)
    return None if None in shape or not math.prod(shape) else (-1, *shape)


def _broadcast_batched(mode, p, shape: tuple):
    """The physical ``p`` (batch first, then axes of size 1 or of ``shape``) broadcast to ``(size, *shape)``."""
    if mode.size is not None:
        return _apply("BroadcastTo", (p,), {"shape": (mode.size, *shape)})
    from ..ops import creation

    like = _shape.broadcast_to(creation.zeros((), p.dtype, p.backend), (1, *shape))  # a view: only its shape is read
    return _apply("BroadcastLike", (p, like))


def _fits(op, args, attrs, size, specs) -> bool:
    """Whether ``op``'s shape rule, given the physical inputs, gives the batched result shapes."""
    stand_ins = [make_symbolic(a.shape, a.dtype, a.backend, None, 0) for a in args]
    try:
        got = op.infer(*stand_ins, **attrs) if attrs else op.infer(*stand_ins)
    except (ValueError, TypeError, IndexError):
        return False
    got = got if isinstance(got, tuple) else (got,)
    # A size unknown until run time (None) on either side is the same size: the run checks it.
    return all(
        len(g.shape) == len(s.shape) + 1
        and all(a == b or a is None or b is None for a, b in zip(g.shape, (size, *s.shape)))
        for g, s in zip(got, specs)
    )


def _elementwise(mode, op, inputs, physical, batched, attrs, specs):
    if len(inputs) == 1:  # one input, mapped: the op sees a tensor with one more leading axis
        return dispatch.apply(op, (physical[0],), attrs)
    rank = max(len(t.shape) for t in inputs)
    args = [_aligned(mode, t, p, rank) if b else p for t, p, b in zip(inputs, physical, batched)]
    if not _fits(op, args, attrs, mode.size, specs):
        return None
    return dispatch.apply(op, tuple(args), attrs)


def _axes(axis, ndim: int) -> tuple:
    return (
        tuple(range(ndim)) if axis is None else tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    )


def _reduction(mode, op, inputs, physical, batched, attrs, specs):
    (x,), (p,) = inputs, physical
    if x.ndim == 0:
        axis = ()
    else:
        axis = tuple(a + 1 for a in _axes(attrs["axis"], x.ndim))
    return dispatch.apply(op, (p,), {**attrs, "axis": axis})


def _along_one_axis(mode, op, inputs, physical, batched, attrs, specs):
    x, p = inputs[0], physical[0]
    if len(inputs) != 1 or attrs["axis"] is None or x.ndim == 0:
        return None
    return dispatch.apply(op, (p,), {**attrs, "axis": attrs["axis"] % x.ndim + 1})


def _reshape(mode, op, inputs, physical, batched, attrs, specs):
    shape = _batched_shape(mode, specs[0].shape)
    if shape is None or not batched[0]:
        return None
    return _apply("Reshape", (physical[0],), {"shape": shape})


def _transpose(mode, op, inputs, physical, batched, attrs, specs):
    n = inputs[0].ndim
    perm = tuple(attrs["perm"]) or tuple(range(n - 1, -1, -1))
    return dispatch.apply(op, (physical[0],), {"perm": (0, *(a % n + 1 for a in perm))})


def _expand_dims(mode, op, inputs, physical, batched, attrs, specs):
    rank = len(specs[0].shape)
    return dispatch.apply(op, (physical[0],), {"axis": tuple(a % rank + 1 for a in _axes(attrs["axis"], rank))})


def _squeeze(mode, op, inputs, physical, batched, attrs, specs):
    x = inputs[0]
    if attrs["axis"] is None and None in x.shape:  # sizes known at run time only: each element's own squeeze
        return None
    axis = tuple(i for i, d in enumerate(x.shape) if d == 1) if attrs["axis"] is None else _axes(attrs["axis"], x.ndim)
    return dispatch.apply(op, (physical[0],), {"axis": tuple(a + 1 for a in axis)})


def _sum_to_like(mode, op, inputs, physical, batched, attrs, specs):
    x, target = inputs[0], specs[0].shape
    shape = _batched_shape(mode, target)
    if not batched[0] or shape is None or None in x.shape:
        return None
    lead = x.ndim - len(target)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(target) if d == 1 and x.shape[lead + i] != 1]
    summed = (
        _apply("Sum", (physical[0],), {"axis": tuple(a + 1 for a in axes), "keepdims": True}) if axes else physical[0]
    )
    return _apply("Reshape", (summed,), {"shape": shape})


def _broadcast_to(mode, op, inputs, physical, batched, attrs, specs):
    if None in specs[0].shape:
        return None
    rank = len(specs[0].shape)
    return _broadcast_batched(mode, _aligned(mode, inputs[0], physical[0], rank), specs[0].shape)


def _matmul(mode, op, inputs, physical, batched, attrs, specs):
    (a, b), (pa, pb) = inputs, physical
    if a.ndim == 0 or b.ndim == 0:
        return None
    squeeze = []
    if a.ndim == 1:  # a row vector, dropped again after
        pa = _apply("ExpandDims", (pa,), {"axis": (1 if batched[0] else 0,)})
        a_shape = (1, *a.shape)
        squeeze.append(-2)
    else:
        a_shape = a.shape
    if b.ndim == 1:
        pb = _apply("ExpandDims", (pb,), {"axis": (-1,)})
        b_shape = (*b.shape, 1)
        squeeze.append(-1)
    else:
        b_shape = b.shape
    rank = max(len(a_shape), len(b_shape))
    # Size-1 axes after the batch line the matrices up; an unbatched one broadcasts against the batch.
    pa = _with_ones(pa, 1, rank - len(a_shape)) if batched[0] else _with_ones(pa, 0, rank + 1 - len(a_shape))
    pb = _with_ones(pb, 1, rank - len(b_shape)) if batched[1] else _with_ones(pb, 0, rank + 1 - len(b_shape))
    out = dispatch.apply(op, (pa, pb), attrs)
    if squeeze:
        out = _apply("Squeeze", (out,), {"axis": tuple(a % out.ndim for a in squeeze)})
    return out


def _joined(mode, op, inputs, physical, batched, attrs, specs):
    """Pack (stack) and ConcatV2: unbatched parts repeated along the batch, the axis moved past it."""
    rank = len(specs[0].shape)
    parts = [_repeated(mode, t, p, b) for t, p, b in zip(inputs, physical, batched)]
    return dispatch.apply(op, tuple(parts), {**attrs, "axis": attrs["axis"] % rank + 1})


def _repeated(mode, t, p, b):
    """A physical input with the batch: batched as it is, an unbatched one repeated along it."""
    return p if b else mode.repeated(p)


def _leading_batch(mode, op, inputs, physical, batched, attrs, specs):
    """Ops whose inputs have the same shape, any rank (the cross entropies): the batch is one more leading
    dim, unbatched inputs repeated along it, and an ``axis`` attribute moves past it."""
    if None in (d for t in inputs for d in t.shape) or len({t.shape for t in inputs}) > 1 and "axis" in attrs:
        return None
    args = [_repeated(mode, t, p, b) for t, p, b in zip(inputs, physical, batched)]
    if "axis" in attrs:
        attrs = {**attrs, "axis": attrs["axis"] % inputs[0].ndim + 1}
    if not _fits(op, args, attrs, mode.size, specs):
        return None
    return dispatch.apply(op, tuple(args), attrs)


def _strided_slice(mode, op, inputs, physical, batched, attrs, specs):
    """Basic indexing (ints, slices, None; one entry per axis): the batch axis taken whole.  The gradient op
    (dy scattered into zeros like the input) likewise, with an unbatched ``like`` repeated."""
    if Ellipsis in attrs["index"]:
        return None
    args = [_repeated(mode, t, p, b) for t, p, b in zip(inputs, physical, batched)]
    return dispatch.apply(op, tuple(args), {**attrs, "index": (slice(None), *attrs["index"])})


def _images_folded(per_image: tuple, shape_attr: str | None = None):
    """A rule for an NHWC op whose inputs at ``per_image`` hold one image per row of their first axis, each
    computed on its own (convolution and pooling, forward and input gradients): the batch folds into that
    axis, and ``shape_attr`` (the input shape a gradient op rebuilds) grows by it.  The other inputs (the
    filters) must be unbatched: else the op runs per element."""

    def rule(mode, op, inputs, physical, batched, attrs, specs):
        if any(b for i, b in enumerate(batched) if i not in per_image) or any(None in s.shape for s in specs):
            return None
        if any(None in inputs[i].shape for i in per_image) or mode.size is None and shape_attr is not None:
            return None
        shapes = [_batched_shape(mode, s.shape) for s in specs]
        if None in shapes:
            return None
        args = list(physical)
        for i in per_image:
            t = inputs[i]
            args[i] = _apply(
                "Reshape",
                (_repeated(mode, t, physical[i], batched[i]),),
                {"shape": (-1 if mode.size is None else mode.size * t.shape[0], *t.shape[1:])},
            )
        if shape_attr is not None:
            shape = specs[0].shape
            attrs = {**attrs, shape_attr: (mode.size * shape[0], *shape[1:])}
        outs = dispatch.apply(op, tuple(args), attrs)
        many = isinstance(outs, tuple)
        outs = [_apply("Reshape", (o,), {"shape": shape}) for o, shape in zip(outs if many else (outs,), shapes)]
        return tuple(outs) if many else outs[0]

    return rule


# The batched filter gradient holds every tap's slice of the batch at once (kh * kw copies of the images):
# per-example gradients of small conv nets take a few MiB (LeNet's second conv at batch 64: 13 MiB); past
# this it runs once per element, whose kernel blocks its patches.
_PATCHES_BYTES = 64 << 20


def _conv2d_backprop_filter(mode, op, inputs, physical, batched, attrs, specs):
    """Per-element filter gradients (per-example weight gradients of a conv net): the input's patches, one
    strided slice of the padded batch per filter tap, contracted with ``out_backprop`` by one batched matmul
    over images and pixels, instead of one op per element."""
    x, dy = inputs
    if None in x.shape or mode.size is None or x.dtype != dy.dtype or x.dtype != specs[0].dtype:
        return None
    kh, kw, c, f = attrs["filter_shape"]
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    (out_h, out_w), (pad_h, pad_w) = _nn_common._geometry(x.shape[1:3], (kh, kw), (sh, sw), (dh, dw), attrs["padding"])
    if mode.size * kh * kw * x.shape[0] * out_h * out_w * c * x.dtype.itemsize > _PATCHES_BYTES:
        return None  # the kernel, once per element, keeps its memory bounded
    padded = _apply(
        "PadV2", (_repeated(mode, x, physical[0], batched[0]),), {"paddings": ((0, 0),) * 2 + (pad_h, pad_w, (0, 0))}
    )
    taps = [
        _apply(
            "StridedSlice",
            (padded,),
            {
                "index": (
                    slice(None),
                    slice(None),
                    slice(p * dh, p * dh + (out_h - 1) * sh + 1, sh),
                    slice(q * dw, q * dw + (out_w - 1) * sw + 1, sw),
                    slice(None),
                )
            },
        )
        for p in range(kh)
        for q in range(kw)
    ]
    pixels = x.shape[0] * out_h * out_w
    # Taps stacked after the batch (each one copied in whole rows), then (batch, tap, channel, pixel) @
    # (batch, 1, pixel, filter): the same sums as the per-element kernel.
    patches = _apply("Reshape", (_apply("Pack", taps, {"axis": 1}),), {"shape": (mode.size, kh * kw, pixels, c)})
    dy = _apply("Reshape", (_repeated(mode, dy, physical[1], batched[1]),), {"shape": (mode.size, 1, pixels, f)})
    product = _apply("BatchMatMulV2", (_apply("Transpose", (patches,), {"perm": (0, 1, 3, 2)}), dy))
    return _apply("Reshape", (product,), {"shape": (mode.size, kh, kw, c, f)})


def _gather(mode, op, inputs, physical, batched, attrs, specs):
    """``take`` along an axis (GatherV2): batched params with shared indices take along the next axis; shared
    params with batched indices take the batch into the result, then move it to the front; both batched, a
    GatherNd of (batch position, index) pairs (which checks each index against the axis)."""
    (params, indices), (pp, pi) = inputs, physical
    axis = attrs["axis"] % params.ndim
    if batched[0] and batched[1]:  # a GatherNd of (batch position, index) pairs, the gather axis first
        if None in indices.shape or None in params.shape:
            return None
        size = params.shape[axis]
        values = pi.numpy() if pi._value is not None else None
        if values is not None and values.size and (values.min() < -size or values.max() >= size):
            bad = values[(values < -size) | (values >= size)].ravel()[0]
            raise IndexError(
                f"GatherV2: index {bad} is out of bounds for axis {axis} with size {size} (params shape "
                f"{params.shape}, indices shape {indices.shape} {indices.dtype}, per element of tl.vmap)"
            )
        moved = _array.moveaxis(pp, axis + 1, 1) if axis else pp
        positions = _with_batch_rows(mode, _apply("ExpandDims", (pi,), {"axis": (pi.ndim,)}))
        out = _apply("GatherNd", (moved, positions))  # (size, *indices, *params before axis, *params after)
        if not axis:
            return out
        m = indices.ndim
        perm = (0, *range(1 + m, 1 + m + axis), *range(1, 1 + m), *range(1 + m + axis, out.ndim))
        return _apply("Transpose", (out,), {"perm": perm})
    if batched[0]:
        return dispatch.apply(op, (pp, pi), {"axis": axis + 1})
    out = dispatch.apply(op, (pp, pi), {"axis": axis})
    return out if axis == 0 else _array.moveaxis(out, axis, 0)


def _gather_grad(mode, op, inputs, physical, batched, attrs, specs):
    """GatherV2's gradient (``dy`` scatter-added at the indices into zeros shaped like the params).  Shared
    indices: one scatter along the next axis.  Batched indices: the elements' params side by side on the
    gather axis, each element's indices offset to its own block (the kernel wraps indices as the gather
    checked them), one scatter, then the blocks split back out (a batch size unknown until run time: along
    axis 0, a GatherNd gradient at (element, index) pairs)."""
    (dy, indices, like), (pdy, pi, plike) = inputs, physical
    if None in like.shape or None in dy.shape:
        return None
    axis = attrs["axis"] % like.ndim
    pdy = _repeated(mode, dy, pdy, batched[0])
    if not batched[1]:
        return dispatch.apply(op, (pdy, pi, _repeated(mode, like, plike, batched[2])), {"axis": axis + 1})
    from ..ops import creation

    size = like.shape[axis]
    if not size or mode.size is None and axis:
        return None
    wrapped = _apply(
        "FloorMod", (pi, dispatch.to_tensor(size, pi.backend, pi.dtype))
    )  # negative indices counted from the end
    if mode.size is None:  # no blocks without the batch size: a GatherNd gradient at (element, index) pairs
        positions = _with_batch_rows(mode, _shape.expand_dims(wrapped, -1))
        return _apply("GatherNdGrad", (pdy, positions, _repeated(mode, like, plike, batched[2])))
    offsets = _apply(
        "Reshape",
        (creation.arange(0, mode.size * size, size, dtype=pi.dtype, backend=pi.backend),),
        {"shape": (mode.size,) + (1,) * indices.ndim},
    )
    blocks = like.shape[:axis] + (mode.size * size,) + like.shape[axis + 1 :]
    stand_in = _shape.broadcast_to(creation.zeros((), like.dtype, plike.backend), blocks)  # only its shape is read
    scattered = dispatch.apply(
        op,
        (_array.moveaxis(pdy, 0, axis) if axis else pdy, _apply("Add", (wrapped, offsets)), stand_in),
        {"axis": axis},
    )
    split = _apply("Reshape", (scattered,), {"shape": like.shape[:axis] + (mode.size, size) + like.shape[axis + 1 :]})
    return split if axis == 0 else _array.moveaxis(split, axis, 0)


def _batched_matrices(least: int = 2, axis_attrs: tuple = (), cores: tuple | None = None):
    """A rule for a linear algebra op that treats every axis before the last ``least`` ones of its inputs (or
    ``cores[i]`` ones of input ``i``) as a batch, broadcasting the batches of its inputs (as NumPy's linalg
    does): the vmap batch is one more leading axis, unbatched inputs repeated along it, an input with fewer
    batch axes given size-1 ones after it (so that the vmap batch lines up with the vmap batch, never with
    another input's own batch axis), and the axis attributes in ``axis_attrs`` move past it."""

    def rule(mode, op, inputs, physical, batched, attrs, specs):
        core = cores or (least,) * len(inputs)
        if any(t.ndim < c for t, c in zip(inputs, core)):
            return None
        rank = max(t.ndim for t in inputs)  # the matrices' (a diagonal written into them has one axis less)
        for name in axis_attrs:
            attrs = {**attrs, name: attrs[name] % rank + 1}
        depths = [t.ndim - c for t, c in zip(inputs, core)]
        args = []
        for t, p, b, depth in zip(inputs, physical, batched, depths):
            args.append(_repeated(mode, t, _with_ones(p, int(b), max(depths) - depth), b))
        if not _fits(op, args, attrs, mode.size, specs):
            return None
        return dispatch.apply(op, tuple(args), attrs)

    return rule


def _einsum(mode, op, inputs, physical, batched, attrs, specs):
    """A letter no operand uses names the batch: it leads the batched operands' subscripts and the result's."""
    operands, result = attrs["equation"].split("->")
    letter = next(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in operands)
    subscripts = [letter + sub if b else sub for sub, b in zip(operands.split(","), batched)]
    return dispatch.apply(op, tuple(physical), {"equation": f"{','.join(subscripts)}->{letter}{result}"})


def _axes_moved(*names: str):
    """A rule for a one-input op whose attributes ``names`` hold axes (an int, a tuple, or None for every
    axis, which stays per element only where the op reads it so): each moves past the batch."""

    def rule(mode, op, inputs, physical, batched, attrs, specs):
        ndim = inputs[0].ndim
        if ndim == 0 or any(attrs[n] is None for n in names):
            return None
        moved = {
            n: (tuple(a % ndim + 1 for a in attrs[n]) if isinstance(attrs[n], tuple) else attrs[n] % ndim + 1)
            for n in names
        }
        return dispatch.apply(op, (physical[0],), {**attrs, **moved})

    return rule


def _pad(mode, op, inputs, physical, batched, attrs, specs):
    return dispatch.apply(op, (physical[0],), {**attrs, "paddings": ((0, 0), *attrs["paddings"])})


def _tile(mode, op, inputs, physical, batched, attrs, specs):
    return dispatch.apply(op, (physical[0],), {"reps": (1, *attrs["reps"])})


def _take_along_axis(mode, op, inputs, physical, batched, attrs, specs):
    """TakeAlongAxis and its gradient, ExpWeightedCumsum: operands of one rank, unbatched ones repeated, the
    axis past the batch."""
    if attrs["axis"] is None or len({t.ndim for t in inputs}) > 1:
        return None
    args = [_repeated(mode, t, p, b) for t, p, b in zip(inputs, physical, batched)]
    return dispatch.apply(op, tuple(args), {**attrs, "axis": attrs["axis"] % inputs[0].ndim + 1})


def _batch_positions(mode, indices, physical, batched):
    """GatherNd-style ``indices`` of every element (repeated if shared) with each element's own position
    along the batch first: ``(size, ..., 1 + depth)``, indexing the physical params."""
    return _with_batch_rows(mode, _repeated(mode, indices, physical, batched))


def _with_batch_rows(mode, idx):
    """Physical GatherNd positions ``(size, ..., depth)`` with each element's batch position put first."""
    from ..ops import creation

    lead = tuple(idx.shape[:-1])
    if mode.size is None:  # 0, 1, ... counted along the zeros of the batch's shape
        ones = _math.cast(mode.batch_like, dtype=idx.dtype) + 1
        rows = _with_ones(_math.cast(_array.cumsum(ones, 0), dtype=idx.dtype) - 1, 1, len(lead))
        column = _shape.getitem(idx, (Ellipsis, slice(0, 1)))
        return _apply("ConcatV2", (_apply("BroadcastLike", (rows, column)), idx), {"axis": len(lead)})
    rows = creation.arange(mode.size, dtype=idx.dtype, backend=idx.backend)
    rows = _apply("Reshape", (rows,), {"shape": (mode.size,) + (1,) * len(lead)})
    return _apply("ConcatV2", (_apply("BroadcastTo", (rows,), {"shape": (*lead, 1)}), idx), {"axis": len(lead)})


def _gather_nd(mode, op, inputs, physical, batched, attrs, specs):
    """Shared params: batched indices are one more leading index axis.  Batched params: each element's
    indices get its batch position first."""
    (params, indices), (pp, pi) = inputs, physical
    if None in indices.shape:
        return None
    if not batched[0]:
        return dispatch.apply(op, (pp, pi), attrs)
    return dispatch.apply(op, (pp, _batch_positions(mode, indices, pi, batched[1])), attrs)


def _gather_nd_grad(mode, op, inputs, physical, batched, attrs, specs):
    """GatherNd's gradient: each element's positions (with its batch position first) scatter its ``dy``
    into its own block of a batched ``like``."""
    (dy, indices, like), (pdy, pi, plike) = inputs, physical
    if None in indices.shape or None in like.shape:
        return None
    args = (_repeated(mode, dy, pdy, batched[0]), _batch_positions(mode, indices, pi, batched[1]))
    return dispatch.apply(op, (*args, _repeated(mode, like, plike, batched[2])), attrs)


def _scatter_nd_update(mode, op, inputs, physical, batched, attrs, specs):
    """``tensor`` with slices at ``indices`` replaced by ``updates`` (``x.at[i].set(v)``): each element's
    positions get its batch position first, so repeated positions are settled within an element only."""
    (tensor, indices, updates), (pt, pi, pu) = inputs, physical
    if None in indices.shape:
        return None
    positions = _batch_positions(mode, indices, pi, batched[1])
    args = (_repeated(mode, tensor, pt, batched[0]), positions, _repeated(mode, updates, pu, batched[2]))
    return dispatch.apply(op, args, attrs)


def _scatter_nd_kept(mode, op, inputs, physical, batched, attrs, specs):
    """Which updates of such a scatter are kept (the gradient's mask), per element likewise."""
    (indices, like), (pi, pl) = inputs, physical
    if None in indices.shape:
        return None
    return dispatch.apply(
        op, (_batch_positions(mode, indices, pi, batched[0]), _repeated(mode, like, pl, batched[1])), attrs
    )


def _positions_like(mode, op, inputs, physical, batched, attrs, specs):
    """Each element's positions (``Tensor.at``'s): the same for every element, from a stand-in of its shape."""
    from ..ops import creation

    x = inputs[0]
    if None in x.shape:
        return None
    stand_in = _shape.broadcast_to(creation.zeros((), x.dtype, physical[0].backend), x.shape)
    return mode.repeated(dispatch.apply(op, (stand_in,), attrs))


def _searchsorted(mode, op, inputs, physical, batched, attrs, specs):
    """Values searched in a shared 1-D sequence: more leading value dims.  Otherwise each element's sequence
    is one more batch row (the op searches an N-D sequence row by row)."""
    (a, v), (pa, pv) = inputs, physical
    if None in a.shape or None in v.shape:
        return None
    if not batched[0] and a.ndim == 1:
        return dispatch.apply(op, (pa, pv), attrs)
    if a.ndim == 1:  # a batched 1-D sequence: one row per element, its values flattened behind it
        flat, shape = _batched_shape(mode, (math.prod(v.shape),)), _batched_shape(mode, v.shape)
        if shape is None:
            return None
        rows = _apply("Reshape", (_repeated(mode, v, pv, batched[1]),), {"shape": flat})
        return _apply("Reshape", (dispatch.apply(op, (pa, rows), attrs),), {"shape": shape})
    return dispatch.apply(op, (_repeated(mode, a, pa, batched[0]), _repeated(mode, v, pv, batched[1])), attrs)


def _bins_shared(mode, op, inputs, physical, batched, attrs, specs):
    """digitize with shared bins: the batch is one more dim of ``x``."""
    return None if batched[1] else dispatch.apply(op, tuple(physical), attrs)


def _check_ids(mode, op, inputs, physical, batched, attrs, specs):
    """CheckIds (ids checked against the size of params along an axis, the same size for every element): one
    check of every element's ids, against params' axis moved past the batch."""
    axis = attrs["axis"] % inputs[1].ndim + batched[1]
    ids = dispatch.apply(op, tuple(physical), {**attrs, "axis": axis})
    return ids if batched[0] else mode.repeated(ids)


def _segment_extreme(mode, op, inputs, physical, batched, attrs, specs):
    """segment_max / segment_min.  Ids shared by the elements: the batch is one more data axis, after the rows.
    Ids per element: element ``b``'s segment ``s`` is segment ``b * num_segments + s`` of one op over every
    element's rows (negative ids still dropped; each element's ids checked against ``num_segments`` first)."""
    (data, ids), (pd, pi) = inputs, physical
    if not batched[1]:
        out = dispatch.apply(op, (_array.moveaxis(pd, 0, 1), pi), attrs)
        return _array.moveaxis(out, 1, 0)
    n = attrs["num_segments"]
    if mode.size is None or None in data.shape or None in ids.shape:
        return None
    from ..ops import creation

    name = "segment_max" if attrs["largest"] else "segment_min"
    kept = pi >= 0
    zero = creation.zeros((), dtype=pi.dtype, backend=pi.backend)
    safe = _shape.check_ids(_math.where(kept, pi, zero), creation.zeros((n,), "bool", backend=pi.backend), 0, name)
    base = _shape.reshape(creation.arange(mode.size, dtype=pi.dtype, backend=pi.backend) * n, (mode.size, 1))
    flat_ids = _shape.reshape(_math.where(kept, safe + base, zero - 1), (-1,))
    rows = _shape.reshape(_repeated(mode, data, pd, batched[0]), (-1, *data.shape[1:]))
    out = dispatch.apply(op, (rows, flat_ids), {**attrs, "num_segments": mode.size * n})
    return _shape.reshape(out, (mode.size, n, *data.shape[1:]))


def _bincount(mode, op, inputs, physical, batched, attrs, specs):
    """bincount per element in one: element ``b``'s value ``v`` counts in bin ``b * L + v``, ``L`` the bins of one
    element: ``length`` (values past it dropped, negative ones left to raise), or, eagerly, the number every
    element's values give (if they differ, the loop says the results are ragged)."""
    (x, w), (px, pw) = inputs, physical
    if mode.size is None or None in x.shape:
        return None
    from ..ops import creation

    px, pw = _repeated(mode, x, px, batched[0]), _repeated(mode, w, pw, batched[1])
    px = _math.cast(px, "int64")
    length = attrs["length"]
    if length is None:
        values = px._value
        if values is None or values.size and int(values.min()) < 0:
            return None
        lengths = {max(int(row.max()) + 1 if row.size else 0, attrs["minlength"]) for row in px.numpy()}
        if len(lengths) > 1:
            return None
        length = lengths.pop() if lengths else attrs["minlength"]
    base = _shape.reshape(creation.arange(mode.size, dtype="int64", backend=px.backend) * length, (mode.size, 1))
    past = creation.full((), mode.size * length, dtype="int64", backend=px.backend)
    ids = _math.where(px < 0, px, _math.where(px < length, px + base, past))
    args = (_shape.reshape(ids, (-1,)), _shape.reshape(pw, (-1,)))
    out = dispatch.apply(op, args, {"minlength": 0, "length": mode.size * length})
    return _shape.reshape(out, (mode.size, length))


def _rows_leading(mode, op, inputs, physical, batched, attrs, specs):
    """An op of one input whose leading axes are rows it treats alike: the batch is one more."""
    return dispatch.apply(op, (physical[0],), attrs)


def _size(mode, op, inputs, physical, batched, attrs, specs):
    """The number of elements along axes: the same for every element (the axes are the element's)."""
    return _positions_like(mode, op, inputs, physical, batched, attrs, specs)


def _ensure_shapes(mode, op, inputs, physical, batched, attrs, specs):
    """The run-time shape checks: any size for the batch axis of the batched inputs."""
    dims = tuple((None, *d) if b else d for d, b in zip(attrs["dims"], batched))
    outs = dispatch.apply(op, tuple(physical), {**attrs, "dims": dims})
    return tuple(o if b else mode.repeated(o) for o, b in zip(outs, batched))


def _dropout_per_element(mode, op, inputs, physical, batched, attrs, specs):
    """Dropout of a batched input, a mask per element (``randomness="different"``) in one draw: the
    generator's stream gives the same numbers as a draw per element, in order.  A seeded or keyed dropout,
    which draws the same numbers at every call, runs per element."""
    if len(inputs) != 1 or attrs["seed"] is not None or not batched[0]:
        return None
    noise = attrs["noise_shape"]
    return dispatch.apply(op, (physical[0],), {**attrs, "noise_shape": None if noise is None else (None, *noise)})


def _channels_folded(images: tuple):
    """A rule for the fused batch norm ops (NHWC, statistics per channel over N, H and W): the batch folds
    into the channels, so each element keeps its own statistics in training as in inference.  The inputs
    at ``images`` are ``(B, N, H, W, C)`` and become ``(N, H, W, B * C)``; the per-channel ones, ``(C,)``
    (repeated) or ``(B, C)``, become ``(B * C,)``; the results go back the same ways."""

    def rule(mode, op, inputs, physical, batched, attrs, specs):
        if any(None in t.shape for t in inputs) or any(None in s.shape for s in specs) or mode.size is None:
            return None
        args = []
        for i, (t, p, b) in enumerate(zip(inputs, physical, batched)):
            p = _repeated(mode, t, p, b)
            if i in images:
                n, h, w, c = t.shape
                p = _apply("Transpose", (p,), {"perm": (1, 2, 3, 0, 4)})
                p = _apply("Reshape", (p,), {"shape": (n, h, w, mode.size * c)})
            else:
                p = _apply("Reshape", (p,), {"shape": (mode.size * t.shape[0],)})
            args.append(p)
        outs = []
        for o, s in zip(dispatch.apply(op, tuple(args), attrs), specs):
            if len(s.shape) == 4:
                o = _apply("Reshape", (o,), {"shape": (*s.shape[:3], mode.size, s.shape[3])})
                o = _apply("Transpose", (o,), {"perm": (3, 0, 1, 2, 4)})
            else:
                o = _apply("Reshape", (o,), {"shape": (mode.size, *s.shape)})
            outs.append(o)
        return tuple(outs)

    return rule


def _one_hot(mode, op, inputs, physical, batched, attrs, specs):
    rank = len(specs[0].shape)
    return dispatch.apply(op, (physical[0],), {**attrs, "axis": attrs["axis"] % rank + 1})


def _custom_gradient(mode, op, inputs, physical, batched, attrs, specs):
    """A ``tl.custom_gradient`` function's node: its grad_fn closed over logical tensors, so a tape outside
    calls it back in this mode, with the output gradients as logical tensors; the gradients it gives an
    unbatched input (or a Variable) are summed over the batch."""
    fn, n = attrs["grad_fn"], attrs["n_inputs"] + attrs["n_variables"]

    def batched_grad_fn(*dys, **kwargs):
        with mode.reentered():
            logical = [d if d is None else mode.logical(d) for d in dys]
            returned = fn(*logical, **kwargs)
        if "variables" in kwargs:
            grads, var_grads = returned
            var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        else:
            grads, var_grads = returned, []
        single = not isinstance(grads, (list, tuple))
        grads = [grads] if single else list(grads)
        out = []
        for g, t, b in zip(grads + var_grads, inputs[:n], batched[:n]):
            if g is not None and g.__class__ is not Refused:  # a refusal raises only if a pass needs it
                g = mode.physical_of(g, t)
                if not b:
                    g = _apply("Sum", (g,), {"axis": (0,), "keepdims": False})
            out.append(g)
        out = out[: len(grads)] if single else out
        grads_out = out[0] if single else out[: len(grads)]
        return (grads_out, out[len(grads) :]) if "variables" in kwargs else grads_out

    return dispatch.apply(op, tuple(physical), {**attrs, "grad_fn": batched_grad_fn})


_ELEMENTWISE = (
    "Abs Acos Acosh Add Angle Asin Asinh Atan Atan2 Atanh BesselI0 BesselI0e BesselI1 BesselI1e Beta Betaln "
    "BitwiseAnd BitwiseOr BitwiseXor Cast Cbrt Ceil Celu CheckNumerics CheckParameter ClipByValue Conj CopySign Cos Cosh Deg2Rad "
    "Digamma Div Elu Equal Erf Erfc Erfcinv Erfcx Erfinv Exp Exp2 Expm1 Fabs FloatPower Floor FloorDiv FloorMod Fmax "
    "Fmin Fmod Gamma Gcd Gelu Greater GreaterEqual HardSigmoid HardSwish HardTanh Heaviside Hypot Identity Igamma IgammaGradA "
    "Igammac Imag Complex "
    "Invert IsClose IsFinite IsInf IsNan IsNegInf IsPosInf Lcm Ldexp LeakyRelu LeftShift Less LessEqual Lgamma Log Log10 Log1p "
    "Log2 LogAddExp LogAddExp2 LogNdtr LogSigmoid LogicalAnd LogicalNot LogicalOr LogicalXor Logit Maximum Minimum "
    "Mish Mul NanToNum Ndtr Neg NextAfter NotEqual Polygamma Pow Rad2Deg RandomGammaGrad Real Reciprocal Relu Relu6 ReluGrad RightShift Round "
    "Select Selu Sigmoid Sign SignBit Silu Sin Sinc Sinh Softplus Softsign Spacing Sqrt Square StopGradient Sub Tan "
    "Tanh Trunc Xlog1py Xlogy"
).split()

_RULES = {name: _elementwise for name in _ELEMENTWISE}
_RULES.update({name: _reduction for name in ("Sum", "Prod", "Max", "Min", "Any", "All")})
_RULES.update(
    {
        name: _along_one_axis
        for name in ("Softmax", "LogSoftmax", "Cumsum", "Cumprod", "LogCumsumExp", "Cummax", "Cummin", "Sort")
        + ("ArgSort", "ArgMax", "ArgMin")
    }
)
_RULES.update(
    {
        "Reshape": _reshape,
        "ReshapeLike": _reshape,
        "Transpose": _transpose,
        "ExpandDims": _expand_dims,
        "Squeeze": _squeeze,
        "BroadcastLike": _elementwise,  # x's and like's shapes broadcast as an elementwise op's
        "BroadcastTo": _broadcast_to,
        "SumToLike": _sum_to_like,
        "BatchMatMulV2": _matmul,
        "Pack": _joined,
        "ConcatV2": _joined,
        "CustomGradient": _custom_gradient,
        "OneHot": _one_hot,
        "Conv2DBackpropFilter": _conv2d_backprop_filter,
        "Einsum": _einsum,
        "FusedBatchNormV3": _channels_folded((0,)),
        "FusedBatchNormGradV3": _channels_folded((0, 1)),
        "GatherNd": _gather_nd,
        "GatherNdGrad": _gather_nd_grad,
        "ScatterNdUpdate": _scatter_nd_update,
        "ScatterNdKept": _scatter_nd_kept,
        "PositionsLike": _positions_like,
        "Size": _size,
        "CheckIds": _check_ids,
        "SegmentExtreme": _segment_extreme,
        "Bincount": _bincount,
        "UniqueSized": _rows_leading,
        "SearchSorted": _searchsorted,
        "Digitize": _bins_shared,
        "ExpWeightedCumsum": _take_along_axis,
        "FFTN": _axes_moved("axes"),
        "RFFTN": _axes_moved("axes"),
        "IRFFTN": _axes_moved("axes"),
        "EnsureShapes": _ensure_shapes,
        "PadV2": _pad,
        "Tile": _tile,
        "ReverseV2": _axes_moved("axis"),
        "Roll": _axes_moved("axis"),
        "SplitV": _axes_moved("axis"),
        "NanArgMax": _axes_moved("axis"),
        "NanArgMin": _axes_moved("axis"),
        "CummaxIndex": _axes_moved("axis"),
        "CumminIndex": _axes_moved("axis"),
        "TopK": _axes_moved(),
        "Frexp": _elementwise,
        "TakeAlongAxis": _take_along_axis,
        "TakeAlongAxisGrad": _take_along_axis,
        "SigmoidCrossEntropyWithLogits": _leading_batch,
        "GatherV2": _gather,
        "GatherV2Grad": _gather_grad,
        "Conv2D": _images_folded((0,)),
        "Conv2DBackpropInput": _images_folded((1,), "input_shape"),
        "MaxPool": _images_folded((0,)),
        "AvgPool": _images_folded((0,)),
        "MaxPoolGrad": _images_folded((0, 1, 2)),
        "MaxPoolGradGrad": _images_folded((0, 1, 2)),
        "AvgPoolGrad": _images_folded((0,), "input_shape"),
        "StridedSlice": _strided_slice,
        "StridedSliceGrad": _strided_slice,
        "SparseSoftmaxCrossEntropyWithLogits": _leading_batch,
        "SoftmaxCrossEntropyWithLogits": _leading_batch,
    }
)
_RULES.update(
    {
        name: _batched_matrices()
        for name in ("Cholesky", "Eig", "Lu", "MatrixBandPartLower", "MatrixBandPartUpper")
        + ("MatrixDeterminant", "MatrixExponential", "MatrixInverse", "MatrixPseudoInverse", "MatrixSolve")
        + ("MatrixTriangularSolve", "LogMatrixDeterminant", "Qr", "SelfAdjointEigV2", "Svd")
        + ("MatrixLogarithm", "MatrixSquareRoot", "PolarUnitary", "SylvesterSolve", "MatrixAdjugateGrad")
        + ("Schur", "Hessenberg", "LDL")
    }
)
_RULES["MatrixAdjugate"] = _batched_matrices(cores=(2, 0))  # the matrices and their determinants
_RULES["MatrixDeterminantDerivative"] = _batched_matrices(cores=(2, 3))  # the matrices and their directions
_RULES["LuPivotsToPermutation"] = _batched_matrices(least=1)
_RULES["MatrixDiagPart"] = _batched_matrices(axis_attrs=("axis1", "axis2"))
_RULES["MatrixSetDiag"] = _batched_matrices(least=1, axis_attrs=("axis1", "axis2"), cores=(1, 2))


def _filtered_along_the_last_axis(mode, op, inputs, physical, batched, attrs, specs):
    """AllPoleFilter and FirFilter (ops/iir.py): a mapped signal keeps its last axis last, so the op runs once on
    the whole batch; mapped coefficients (one filter per element) fall back to one run per element."""
    if batched[0]:
        return None
    return dispatch.apply(op, tuple(physical), attrs)


_RULES["AllPoleFilter"] = _RULES["FirFilter"] = _RULES["SosFilter"] = _filtered_along_the_last_axis


def _sections_from_states(mode, op, inputs, physical, batched, attrs, specs):
    """SosFilterFrom (ops/iir.py): the signal's batch leads (repeated when unbatched), the states' goes after
    their sections axis; mapped sections fall back to one run per element."""
    if batched[0]:
        return None
    x = _repeated(mode, inputs[1], physical[1], batched[1])
    zi = _array.moveaxis(_repeated(mode, inputs[2], physical[2], batched[2]), 0, 1)
    return dispatch.apply(op, (physical[0], x, zi), attrs)


_RULES["SosFilterFrom"] = _sections_from_states


def _rational_filter(mode, op, inputs, physical, batched, attrs, specs):
    """LinearFilter (ops/iir.py): a mapped signal runs once on the whole batch; mapped coefficients fall back to
    one run per element."""
    if batched[0] or batched[1]:
        return None
    return dispatch.apply(op, tuple(physical), attrs)


_RULES["LinearFilter"] = _rational_filter
_DIFFERENT_DRAWS = {"Dropout": _dropout_per_element}


# ---------------------------------------------------------------- collectives over a named mapped axis (jax.lax's)


def psum(x, axis_name) -> Tensor:
    """The sum of ``x`` over the elements of the ``tl.vmap`` whose ``axis_name`` is given (``jax.lax.psum``):
    the same value for every element; ``x`` the same for every element gives ``x`` times the batch size.  A tuple
    of names (as JAX's; unless a vmap is named by that tuple) sums over each of those axes, as do ``pmean``,
    ``pmax`` and ``pmin``.

    >>> import tensorlib as tl
    >>> tl.vmap(lambda x: tl.psum(x, "i"), axis_name="i")(tl.tensor([1.0, 2.0, 4.0])).numpy().tolist()
    [7.0, 7.0, 7.0]
    """
    return _collective(x, axis_name, "tl.psum", lambda p, depth: _reduce.sum(p, 0))


def pmean(x, axis_name) -> Tensor:
    """The mean of ``x`` over the elements of the named ``tl.vmap`` axis (``jax.lax.pmean``); see :func:`psum`.

    >>> import tensorlib as tl
    >>> tl.vmap(lambda x: x - tl.pmean(x, "i"), axis_name="i")(tl.tensor([1.0, 2.0, 6.0])).numpy().tolist()
    [-2.0, -1.0, 3.0]
    """
    return _collective(x, axis_name, "tl.pmean", lambda p, depth: _reduce.mean(p, 0))


def pmax(x, axis_name) -> Tensor:
    """The elementwise maximum of ``x`` over the named ``tl.vmap`` axis (``jax.lax.pmax``); see :func:`psum`.

    >>> import tensorlib as tl
    >>> tl.vmap(lambda x: tl.pmax(x, "i"), axis_name="i")(tl.tensor([1.0, 5.0, 2.0])).numpy().tolist()
    [5.0, 5.0, 5.0]
    """
    return _collective(x, axis_name, "tl.pmax", lambda p, depth: _extreme(_reduce.max, p))


def pmin(x, axis_name) -> Tensor:
    """The elementwise minimum of ``x`` over the named ``tl.vmap`` axis (``jax.lax.pmin``); see :func:`psum`.

    >>> import tensorlib as tl
    >>> tl.vmap(lambda x: tl.pmin(x, "i"), axis_name="i")(tl.tensor([1.0, 5.0, 2.0])).numpy().tolist()
    [1.0, 1.0, 1.0]
    """
    return _collective(x, axis_name, "tl.pmin", lambda p, depth: _extreme(_reduce.min, p))


def _extreme(reduce, physical):
    """``reduce`` (max or min) over the batch; of an empty batch, whose result no element sees, zeros of an
    element's shape (JAX gives an empty result; NumPy's max of nothing has no identity and raised)."""
    if physical.shape[0] == 0:
        from ..ops import creation

        return creation.zeros(physical.shape[1:], dtype=physical.dtype, backend=physical.backend)
    return reduce(physical, 0)


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False) -> Tensor:
    """``x`` of every element of the named ``tl.vmap`` axis, stacked along a new axis ``axis`` (leading by
    default; negative counts from the end of the result), in every element (``jax.lax.all_gather``).  With
    ``tiled=True`` they are concatenated along ``x``'s axis ``axis`` instead, as JAX's.

    >>> import tensorlib as tl
    >>> tl.vmap(lambda x: tl.all_gather(x, "i") * x, axis_name="i")(tl.tensor([1.0, 2.0])).numpy().tolist()
    [[1.0, 2.0], [2.0, 4.0]]
    >>> rows = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> tl.vmap(lambda r: tl.all_gather(r, "i", axis=-1, tiled=True), axis_name="i")(rows)[0].numpy().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    if not isinstance(tiled, bool):
        raise TypeError(f"tl.all_gather: tiled must be a bool, got {type(tiled).__name__} {tiled!r}")

    def gather(p, depth):  # p: the named batch on axis 0, the inner vmaps' next, then x's axes (x: a leaf)
        rank = p.ndim - 1 - depth
        positions = rank if tiled else rank + 1  # the axes ``axis`` may name: the result's (tiled: x's)
        if isinstance(axis, bool) or not isinstance(axis, int) or not -positions <= axis < positions:
            raise ValueError(
                f"tl.all_gather: axis {axis!r} is out of range for x of rank {rank} with tiled={tiled} "
                f"(from {-positions} to {positions - 1})"
            )
        at = depth + axis % positions
        moved = _array.moveaxis(p, 0, at) if at else p
        if not tiled:
            return moved
        shape = tuple(moved.shape)
        if None in shape[:at] + shape[at + 2 :]:  # -1 stands for one unknown size only
            raise NotImplementedError(
                f"tl.all_gather: tiled=True needs the sizes of x's other axes under tl.function (batched shape "
                f"{shape}): give them in the input signature"
            )
        return _shape.reshape(moved, (*shape[:at], -1, *shape[at + 2 :]))

    return _collective(x, axis_name, "tl.all_gather", gather)


def axis_index(axis_name) -> Tensor:
    """The position of each element along the named ``tl.vmap`` axis, an int64 scalar (``jax.lax.axis_index``).

    >>> import tensorlib as tl
    >>> tl.vmap(lambda x: x * tl.axis_index("i"), axis_name="i")(tl.tensor([5.0, 5.0, 5.0])).numpy().tolist()
    [0.0, 5.0, 10.0]
    """
    from ..ops import creation

    mode = _named(axis_name, "tl.axis_index")
    if mode.axis_name != axis_name:  # an enclosing vmap's: the same for every element of this one
        with mode.outside():
            return axis_index(axis_name)
    if mode.size is None:
        raise ValueError(
            f"tl.axis_index: the size of the tl.vmap axis {axis_name!r} is unknown until the traced function runs "
            f"({mode.unknown_size}): give it in the input signature or as vmap's axis_size"
        )
    with mode.outside():
        positions = creation.arange(mode.size, dtype="int64")
    return mode.logical(positions)


def _named(axis_name, what):
    """The innermost mode, checked to be a ``tl.vmap`` and to have an enclosing one named ``axis_name``."""
    modes = dispatch.local_state().modes
    names = []
    for mode in reversed(modes):
        if not isinstance(mode, _Vmap):
            break
        names.append(mode.axis_name)
        if mode.axis_name == axis_name:
            return modes[-1]
    raise NameError(
        f"{what}: unbound axis name {axis_name!r}: call it inside a function mapped by "
        f"tl.vmap(..., axis_name={axis_name!r}), with no tl.function in between (the axes mapped here: "
        f"{[n for n in names if n is not None]})"
    )


def _collective(x, axis_name, what, reduce):
    """``reduce(physical, depth)`` of ``x`` over the batch of the ``tl.vmap`` named ``axis_name``, its batch on
    axis 0 of ``physical`` and the ``depth`` batches of the vmaps inside it next: the result, the same for every
    element of that vmap, keeps those; each inner vmap maps it back to its elements.  Outer tapes (``tl.grad`` of
    ``tl.vmap``) record the ops on the batch; a tape opened inside the mapped function would not, so it is
    refused (no silent zero gradient).  A nested structure (a dict or list of tensors, jax.lax's pytree) is
    collected leaf by leaf."""
    modes = dispatch.local_state().modes
    if isinstance(axis_name, tuple) and not any(getattr(m, "axis_name", None) == axis_name for m in modes):
        if what == "tl.all_gather":
            raise NotImplementedError(f"tl.all_gather: gathers over one named axis, got the names {axis_name!r}")
        if not axis_name:  # no axis: x itself, as tensors
            leaves, treedef = tree.flatten(x)
            return tree.unflatten(treedef, [dispatch.as_tensor(leaf) for leaf in leaves])
        for name in axis_name:  # several named axes (jax.lax's tuple): over each in turn
            x = _collective(x, name, what, reduce)
        return x
    if not isinstance(x, Tensor):
        leaves, treedef = tree.flatten(x)
        if not (len(leaves) == 1 and leaves[0] is x):
            _named(axis_name, what)  # an unbound name is refused for an empty structure too
            return tree.unflatten(treedef, [_collective(leaf, axis_name, what, reduce) for leaf in leaves])
    mode = _named(axis_name, what)
    x = dispatch.as_tensor(x)
    if dispatch.local_state().tapes and x.dtype.kind in "fc":
        raise NotImplementedError(
            f"{what}: a GradientTape opened inside the function mapped by tl.vmap (tl.vmap of tl.grad) does not "
            "record the collective; take the gradient outside tl.vmap (tl.grad of tl.vmap)"
        )
    return _collected(mode, x, axis_name, what, reduce, 0)


def _collected(mode, x, axis_name, what, reduce, depth):
    found = mode.physical.get(x._id)
    with mode.outside():
        if mode.axis_name == axis_name:
            return reduce(found[1] if found is not None else mode.repeated(x), depth)
        if dispatch.local_state().tapes and x.dtype.kind in "fc":
            raise NotImplementedError(
                f"{what}: a GradientTape opened between the tl.vmap named {axis_name!r} and the one inside it does "
                "not record the collective; take the gradient outside the named tl.vmap"
            )
        if found is None:  # the same for every element of this vmap
            return _collected(dispatch.modes[-1], x, axis_name, what, reduce, depth)
        out = _collected(dispatch.modes[-1], found[1], axis_name, what, reduce, depth + 1)
    return mode.logical(out)


def add_batching_rule(op_name: str, rule) -> None:
    """Batch ``op_name`` with ``rule(mode, op, inputs, physical, batched, attrs, specs)`` (see the rules above), for
    an op of a layer above this one (control flow's ``While``)."""
    _RULES[op_name] = rule  # random ops batched under randomness="different"
