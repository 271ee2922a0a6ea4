"""Tensor, Variable and TensorSpec.

A Tensor is a backend array plus its shape, dtype and backend; under
``tl.function`` tracing it is *symbolic*: no value, only the graph node that
will produce it.  Arithmetic operators and methods are attached by
``tensorlib.ops._methods`` so that every one of them goes through the one dispatch path.
"""

from __future__ import annotations

import contextvars
import itertools
import operator
import threading

import numpy as np

from . import dtypes as _dtypes

_ids = itertools.count(1)


def _spec_shape(shape) -> tuple:
    """A TensorSpec's shape: sizes that are integers (``operator.index``: 2.5, "3" and True are errors, never
    silently 2, 3 and 1) or None."""
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"TensorSpec: shape must be a tuple or list of sizes, got {type(shape).__name__} {shape!r:.40}")
    out = []
    for d in shape:
        if d is None:
            out.append(None)
            continue
        try:
            if isinstance(d, (bool, np.bool_)):
                raise TypeError
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(
                f"TensorSpec: shape {tuple(shape)!r:.80} has a size {d!r:.20} of type {type(d).__name__}; sizes are "
                "integers, or None for any size"
            ) from None
    return tuple(out)


class TensorSpec:
    """Shape and dtype of a tensor; ``None`` in ``shape`` means any size, ``shape=None`` any rank (in a
    ``tl.function``'s ``input_signature``: it traces once per rank, as ``tf.TensorSpec(None)``).

    >>> import tensorlib as tl
    >>> tl.TensorSpec((None, 3), "float32")
    TensorSpec(shape=(None, 3), dtype=float32)
    >>> tl.TensorSpec(None).is_compatible_with((2, 3, 4), "float32")
    True
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype=_dtypes.float32):
        self.shape = None if shape is None else _spec_shape(shape)
        if self.shape is not None and any(d is not None and d < 0 for d in self.shape):
            raise ValueError(
                f"TensorSpec: shape {tuple(shape)} has a negative dimension; use None for a dimension of any size"
            )
        self.dtype = _dtypes.as_dtype(dtype)

    @property
    def ndim(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def is_compatible_with(self, shape, dtype) -> bool:
        return np.dtype(dtype) == self.dtype and (
            self.shape is None
            or len(shape) == len(self.shape)
            and all(a is None or a == b for a, b in zip(self.shape, shape))
        )

    def with_rank(self, rank: int) -> TensorSpec:
        """This spec for a tensor of ``rank`` dimensions (its own shape if it has a rank, else every size None)."""
        return self if self.shape is not None else TensorSpec((None,) * rank, self.dtype)

    def known_shape(self, where: str) -> tuple:
        """The shape, for a use that needs a rank: an unknown rank raises TypeError naming ``where``."""
        if self.shape is None:
            raise TypeError(
                f"{where}: TensorSpec(None, {self.dtype}) has an unknown rank, which only a tl.function's "
                "input_signature accepts (it traces once per rank); give the rank: TensorSpec((None, None), ...)"
            )
        return self.shape

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype})"


class Tensor:
    """An n-dimensional array on a backend, recorded by tapes and traced by ``tl.function``.

    >>> import tensorlib as tl
    >>> x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (x @ x.T).numpy().tolist()
    [[5.0, 11.0], [11.0, 25.0]]
    """

    __slots__ = ("_value", "shape", "dtype", "backend", "_id", "_node", "_index", "__weakref__")
    __array_priority__ = 1000
    __hash__ = object.__hash__

    def __reduce__(self):
        # Pickled and deep-copied as its value: a new tensor with an id of its own (a copy sharing
        # the id would count as watched by the original's tapes).
        if self._value is None:
            self._no_value("pickling or copying needs it", "copy the function's result instead")
        return (make, (self._value, self.backend, self.shape, self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if None not in self.shape else None

    @property
    def is_symbolic(self) -> bool:
        return self._value is None

    @property
    def spec(self) -> TensorSpec:
        return TensorSpec(self.shape, self.dtype)

    def numpy(self) -> np.ndarray:
        """The value as a NumPy array on the host, read-only: values are immutable, so a write raises
        here instead of changing this tensor, a Variable, a graph constant or a tape's saved input.

        It is a view, not a copy (measured: a view costs the same ~1.5 us at every size, a copy grows
        with the array); ``np.array(t)`` gives a writable copy.  The view reads the memory through a
        read-only buffer, so ``a.flags.writeable = True`` is refused too (as for JAX's arrays): a plain
        read-only view of writable memory lets NumPy switch it back, and a write then changed the tensor.

        >>> import tensorlib as tl
        >>> a = tl.tensor([1.0, 2.0]).numpy()
        >>> a.flags.writeable
        False
        """
        value = self._value
        if value is None:
            self._no_value("its value is needed", "return it from the function to get its value")
        if value.__class__ is np.ndarray:
            return np.asarray(memoryview(value).toreadonly())
        return np.asarray(self.backend.to_numpy(value))

    def __array__(self, dtype=None, copy=None):
        """NumPy 2's protocol: ``copy=True`` a writable copy, ``copy=None`` a read-only view where the dtype
        allows, ``copy=False`` a view or a ValueError when only a copy can give the array."""
        if copy is False and (
            self._value is not None
            and (self._value.__class__ is not np.ndarray or (dtype is not None and np.dtype(dtype) != self.dtype))
        ):
            raise ValueError(
                f"tensorlib: np.array(t, copy=False) of a tensor {self._describe()} on backend "
                f"{self.backend.name} needs a copy to give a NumPy array of dtype "
                f"{self.dtype if dtype is None else np.dtype(dtype)}; use np.asarray(t) or copy=True"
            )
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __setitem__(self, index, value):
        remedy = (
            "give a Variable a whole new value with v.assign(new_value), e.g. v.assign(v.at[index].set(value))"
            if isinstance(self, Variable)
            else "build a new tensor instead: t.at[index].set(value) (JAX's form), or tl.where(mask, value, t)"
        )
        raise TypeError(
            f"tensorlib: a tensor {self._describe()} does not support item assignment t[...] = ...; values are "
            f"immutable: {remedy}"
        )

    def __format__(self, format_spec):
        if not format_spec:
            return str(self)
        if self.shape != ():
            raise TypeError(
                f"tensorlib: format spec {format_spec!r} needs a 0-d tensor, got {self._describe()}; "
                "format t.numpy() or its elements"
            )
        if self._value is None:
            self._no_value("formatting it needs one", "return it from the function to format its value")
        return format(self.numpy()[()], format_spec)

    def item(self, *index):
        """The element as a Python number (``ndarray.item``: none, a flat index, or one index per axis)."""
        return self.numpy().item(*index)

    def to(self, backend) -> "Tensor":
        """A copy of this tensor on ``backend`` (``"numpy"``, ``"cupy"``, ...), as ``tl.tensor(t, backend=)``.

        >>> import tensorlib as tl
        >>> tl.tensor([1.0]).to("numpy").backend.name
        'numpy'
        """
        from .backends import base as _backends

        if self._value is None:
            raise TypeError(
                f"tensorlib: .to() of a symbolic tensor {self._describe()}; move the arguments "
                "of the tl.function instead"
            )
        target = _backends.get(backend)
        value = self._value if target is self.backend else self.backend.to_numpy(self._value)
        moved = target.asarray(value)
        return make(target.copy(moved) if moved is self._value else moved, target, self.shape, self.dtype)

    def tolist(self):
        return self.numpy().tolist()

    def __bool__(self):
        if self._value is None:
            self._no_value(
                "Python `if`, `while`, `and`/`or` or bool() needs one",
                "use tl.cond(pred, true_fn, false_fn, operands) or tl.while_loop for control flow, "
                "tl.where(cond, x, y) to select elementwise, or make the argument static "
                "(static_argnums)",
            )
        return bool(self.numpy())

    def _scalar(self, use: str):
        """The one element of a 0-d tensor, as a NumPy scalar, for ``float()``, ``int()``, ``complex()``."""
        if self.shape != ():
            raise TypeError(f"tensorlib: {use} needs a 0-d tensor, got {self._describe()}; index it or use .item()")
        return self.numpy()[()]

    def _real_scalar(self, use: str):
        """``_scalar`` for ``float()`` and ``int()``: a complex value is a TypeError, as for a NumPy 0-d array
        (a NumPy complex scalar only warns and drops the imaginary part)."""
        if self.dtype.kind == "c":
            raise TypeError(f"tensorlib: {use} of a complex tensor {self._describe()}; take tl.real(t) or abs(t) first")
        return self._scalar(use)

    def __float__(self):
        return float(self._real_scalar("float()"))

    def __complex__(self):
        return complex(self._scalar("complex()"))

    def __int__(self):
        return int(self._real_scalar("int()"))

    def __index__(self):
        if not _dtypes.is_integer(self.dtype):
            raise TypeError(
                f"tensorlib: only integer tensors can be used as an index, got {self.dtype} (shape {self.shape})"
            )
        return int(self._scalar("an index (__index__)"))

    def __len__(self):
        if not self.shape:
            raise TypeError(f"tensorlib: len() of a 0-d tensor {self._describe()}")
        if self.shape[0] is None:
            raise TypeError(f"tensorlib: len() of a symbolic tensor with unknown first dimension {self._describe()}")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError(f"tensorlib: iteration over a 0-d tensor {self._describe()}")
        for i in range(len(self)):
            yield self[i]

    def _describe(self) -> str:
        src = f" from {self._node.op.name}" if self._node is not None else ""
        return f"(shape {self.shape}, dtype {self.dtype}{src})"

    def __repr__(self):
        if self._value is None:
            src = f" from {self._node.op.name}" if self._node is not None else ""
            return f"<tl.Tensor symbolic shape={self.shape} dtype={self.dtype}{src}>"
        body = np.array2string(self.numpy(), separator=", ", prefix="tl.Tensor(")
        extra = "" if self.backend.name == "numpy" else f", backend={self.backend.name}"
        return f"tl.Tensor({body}, dtype={self.dtype}{extra})"


# The engine marks the ops that gradient rules run (per thread): graph pictures colour them, profiles label
# them.  grad.backprop raises ``phase.depth`` while it runs.
phase = threading.local()
phase.depth = 0


def current_phase() -> str:
    """``"gradient"`` while the reverse-mode engine runs gradient rules on this thread, else ``"forward"``."""
    return "gradient" if getattr(phase, "depth", 0) else "forward"


# The names of the enclosing ``tl.profiler.annotate`` blocks, outermost first (per thread and context): profiles
# label the ops run inside with them, and a trace gives them to the nodes it adds (``Node.scope``).
scopes: contextvars.ContextVar[tuple] = contextvars.ContextVar("tensorlib_profiler_scopes", default=())


class Node:
    """One application of an op: what tapes record, graphs hold and a gradient rule receives as ``node``.

    ``op`` is the OpDef and ``op_type`` its name (``"Mul"``), ``inputs``/``outputs`` are Tensors (symbolic
    under tracing), ``attrs`` the op's attributes, ``site`` the user's
    ``file:line`` when it was captured (only for ops without a gradient rule),
    ``phase`` ``"gradient"`` for a graph node that a gradient rule added, else ``"forward"``,
    ``scope`` the names of the ``tl.profiler.annotate`` blocks a graph node was traced in (outermost first).
    """

    __slots__ = ("op", "inputs", "outputs", "attrs", "site", "phase", "scope", "__weakref__")

    def __init__(self, op, inputs, outputs, attrs, site=None, phase="forward", scope=()):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.site = site
        self.phase = phase
        self.scope = scope

    @property
    def op_type(self) -> str:
        return self.op.name

    def __repr__(self):
        ins = ", ".join(f"{t.shape}" for t in self.inputs)
        return f"<Node {self.op.name}({ins}) attrs={self.attrs}>"


def make(value, backend, shape=None, dtype=None) -> Tensor:
    """Wrap a raw backend array (no copy, no checks): the dispatch fast path."""
    t = object.__new__(Tensor)
    t._value = value
    t.shape = value.shape if shape is None else shape
    if dtype is None:
        dtype = value.dtype
        if not isinstance(dtype, np.dtype):  # a backend with dtype objects of its own
            dtype = backend.dtype_of(value)
    t.dtype = dtype
    t.backend = backend
    t._id = next(_ids)
    t._node = None
    t._index = 0
    return t


def make_symbolic(shape, dtype, backend, node, index) -> Tensor:
    t = object.__new__(Tensor)
    t._value = None
    t.shape = tuple(shape)
    t.dtype = dtype
    t.backend = backend
    t._id = next(_ids)
    t._node = node
    t._index = index
    return t


class Variable(Tensor):
    """A mutable tensor.  Trainable variables are watched by tapes automatically.

    Its constructor and ``assign``/``assign_add``/``assign_sub``/``read_value`` convert and dispatch,
    so they are installed with Tensor's operators by :mod:`tensorlib.ops._methods`.

    >>> import tensorlib as tl
    >>> v = tl.Variable([1.0, 2.0], name="v")
    >>> _ = v.assign_add([1.0, 1.0]); v.numpy().tolist()
    [2.0, 3.0]
    """

    # _lock: held across a read-modify-write of the value (an eager assign_add, a graph run that assigns it)
    __slots__ = ("name", "trainable", "_readers", "_version", "_lock")
    _names = itertools.count()

    def __reduce__(self):
        # A copy (``copy.deepcopy`` of a Module too) is a new Variable with the same name and value.
        return (Variable, (self._value, self.name, self.trainable, self.dtype, self.backend))

    def __repr__(self):
        return f"<tl.Variable {self.name!r} shape={self.shape} dtype={self.dtype} value={np.array2string(self.numpy(), separator=', ')}>"
