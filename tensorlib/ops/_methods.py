"""Every Tensor and Variable method that converts, dispatches or calls an op, installed in one place.

``tensorlib/tensor.py`` defines the data (Tensor, Variable, TensorSpec, Node) and imports nothing
above :mod:`tensorlib.dtypes`.  A Tensor's operators must call ops, which sit above it: that is the
one loop the layering keeps, and it is closed here, once, after the op families are defined (JAX
does the same for its tracers).  ``tensorlib/ops/__init__.py`` imports this module last.

>>> import tensorlib as tl
>>> x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> (x @ x.T + 1.0).sum().numpy().item(), tl.Variable([1.0]).read_value().numpy().tolist()
(56.0, [1.0])
"""

from __future__ import annotations

import operator
import threading
import weakref

import numpy as np

from .. import dispatch
from ..dispatch import apply
from ..tensor import Tensor, Variable, _ids
from . import linalg, reduce
from .array import dot as array_dot
from .creation import tensor
from .elementwise import (
    _bitwise_and,
    _bitwise_or,
    _bitwise_xor,
    _floor_divide,
    _invert,
    _left_shift,
    _remainder,
    _right_shift,
    conj,
    imag,
    nonzero,
    real,
)
from .math import _abs, _add, _div, _mul, _neg, _pow, _sub, cast, compare, comparison_method, identity, stop_gradient
from .math import clip as math_clip
from .math import round as math_round
from .shape import _IndexUpdates, expand_dims, getitem, squeeze, take, transpose


# ---------------------------------------------------------------- Tensor: operators
def _install_binary(name: str, op) -> None:
    """``Tensor.__name__`` and its reflected ``__rname__``, both the op ``op``."""
    setattr(Tensor, f"__{name}__", lambda self, other: apply(op, (self, other)))
    setattr(Tensor, f"__r{name}__", lambda self, other: apply(op, (other, self)))


def _install_operators():
    T = Tensor
    binary = {"add": _add, "sub": _sub, "mul": _mul, "truediv": _div, "pow": _pow, "mod": _remainder}
    binary.update(floordiv=_floor_divide, **{"and": _bitwise_and, "or": _bitwise_or, "xor": _bitwise_xor})
    binary.update(lshift=_left_shift, rshift=_right_shift)
    for name, op in binary.items():
        _install_binary(name, op)
    T.__divmod__ = lambda self, other: (self // other, self % other)
    T.__rdivmod__ = lambda self, other: (other // self, other % self)
    T.__invert__ = lambda self: apply(_invert, (self,))
    T.real = property(real, doc="The real part (``ndarray.real``); the tensor itself's values for real dtypes.")
    T.imag = property(imag, doc="The imaginary part (``ndarray.imag``); zeros for real dtypes.")
    T.conj = T.conjugate = conj
    T.__neg__ = lambda self: apply(_neg, (self,))
    # A Variable's +v is its value now: v itself would change with a later assign.
    T.__pos__ = lambda self: identity(self) if isinstance(self, Variable) else self
    T.__abs__ = lambda self: apply(_abs, (self,))
    T.__lt__ = comparison_method("Less")
    T.__le__ = comparison_method("LessEqual")
    T.__gt__ = comparison_method("Greater")
    T.__ge__ = comparison_method("GreaterEqual")
    # `t == None` (and a string) is Python's identity test, False (JAX, PyTorch): `None in [t]` must not raise.
    equal, not_equal = comparison_method("Equal"), comparison_method("NotEqual")
    T.__eq__ = lambda self, other: NotImplemented if other is None or other.__class__ is str else equal(self, other)
    T.__ne__ = lambda self, other: NotImplemented if other is None or other.__class__ is str else not_equal(self, other)
    T.__hash__ = object.__hash__
    # ``value in t`` is NumPy's ``(t == value).any()``; Python's fallback iterated rows, ambiguous beyond 1-d.
    T.__contains__ = lambda self, value: bool(compare("Equal", self, value).numpy().any())
    T.__round__ = lambda self, ndigits=None: math_round(self, 0 if ndigits is None else ndigits)
    T.__matmul__ = lambda self, other: linalg.matmul(self, other)
    T.__rmatmul__ = lambda self, other: linalg.matmul(other, self)


# ---------------------------------------------------------------- Tensor: methods
def _install_methods():
    Tensor.__getitem__ = getitem
    Tensor.at = property(_IndexUpdates, doc=_IndexUpdates.__doc__)
    Tensor.transpose = lambda self, *perm: transpose(self, perm[0] if len(perm) == 1 else (perm or None))
    Tensor.T = property(lambda self: transpose(self))
    Tensor.squeeze = squeeze
    Tensor.expand_dims = expand_dims
    Tensor.logsumexp = reduce.logsumexp  # (ndarray's reductions, with ndarray's arguments: numpy_protocol.py)
    Tensor.astype = cast
    # ndarray's methods with NumPy's arguments (the functions' defaults can differ: take flattens here).
    Tensor.clip = lambda self, min=None, max=None: math_clip(self, min, max)  # noqa: A002
    Tensor.round = lambda self, decimals=0: math_round(self, decimals)
    Tensor.take = lambda self, indices, axis=None, mode="raise": take(self, indices, axis, mode)
    Tensor.dot = lambda self, b: array_dot(self, b)
    Tensor.nonzero = lambda self: nonzero(self)
    Tensor.copy = lambda self: identity(self)
    Tensor.itemsize = property(lambda self: self.dtype.itemsize, doc="Bytes per element (``ndarray.itemsize``).")
    Tensor.nbytes = property(
        lambda self: None if self.size is None else self.dtype.itemsize * self.size,
        doc="Bytes of the values (``ndarray.nbytes``; None for a size unknown while tracing).",
    )
    Tensor._no_value = _no_value


def _no_value(self, use, remedy):
    """Raise for a symbolic tensor asked for its value (a tracing mode may first ask for a retrace)."""
    for mode in dispatch.modes:
        mode.needs_value(self)
    raise TypeError(
        f"tensorlib: a symbolic tensor {self._describe()} has no value while tl.function traces, but {use}; {remedy}"
    )


# ---------------------------------------------------------------- Variable
def _variable_init(self, initial_value, name: str | None = None, trainable: bool = True, dtype=None, backend=None):
    if trainable is not True and trainable is not False and trainable.__class__ is not np.bool_:
        # bool(trainable) made trainable="False" trainable (PyTorch's requires_grad takes a bool only).
        raise TypeError(f"Variable: trainable must be a bool, got {trainable!r}")
    init = initial_value() if callable(initial_value) else initial_value
    t = tensor(init, dtype=dtype, backend=backend)
    if t._value is None:
        raise TypeError("tensorlib: a Variable's initial value must be concrete, not a symbolic tensor")
    self._value = t._value
    self.shape = t.shape
    self.dtype = t.dtype
    self.backend = t.backend
    self._id = next(_ids)
    self._node = None
    self._index = 0
    self.name = name if name is not None else f"Variable:{next(Variable._names)}"
    self.trainable = bool(trainable)
    self._readers = weakref.WeakSet()
    self._version = 0
    self._lock = threading.RLock()


def _assign(self, value):
    """Set the value (same shape; a value of the same kind is cast to the variable's dtype, an integer only
    where every element fits, else OverflowError); inside ``tl.function`` this becomes a graph node."""
    # Under the Variable's lock, which assign_add/assign_sub and a graph run that assigns it hold across their
    # read and write: no other thread's assign lands between them and is lost (TF's assign is atomic too).
    with self._lock:
        return dispatch.assign_variable(self, value, "assign")


def _update(var, delta, combine, how: str):
    # Read, add and write under the Variable's lock (see ``dispatch.hold_variables``): no other thread's update,
    # eager or a graph's, falls between the read and the write and is lost (TF's assign_add is one atomic op).
    with var._lock:
        # An update is no differentiable read: recorded, it made the tape a reader that forbids the update itself.
        # Traced, the same holds when a tape records the graph's replay: the read is a StopGradient there.
        with dispatch.tapes_paused():
            new = combine(stop_gradient(var) if dispatch.modes else var, delta)
        return dispatch.assign_variable(var, new, how)


def _assign_add(self, delta):
    """Add ``delta`` to the value (see :meth:`assign`); atomic among threads."""
    return _update(self, delta, operator.add, "assign_add")


def _assign_sub(self, delta):
    """Subtract ``delta`` from the value (see :meth:`assign`); atomic among threads."""
    return _update(self, delta, operator.sub, "assign_sub")


def _read_value(self) -> Tensor:
    """The current value as a new Tensor (what a tape records as the read)."""
    return identity(self)


def _no_augmented_assignment(symbol, method):
    def refuse(self, other):
        # Python would fall back to ``v = v + x``: the name silently becomes a plain Tensor that no tape
        # watches and no optimizer updates (TensorFlow 2 raises here too).
        raise TypeError(
            f"tensorlib: `v {symbol}= x` on Variable {self.name!r} (shape {self.shape}, dtype {self.dtype}) is "
            f"not supported: it would replace the Variable by a new Tensor; use "
            f"{method if method else f'v.assign(v {symbol} x)'} to update it, or `out = v {symbol} x` for a new Tensor"
        )

    return refuse


def _install_variable_methods():
    for symbol, name, method in (
        ("+", "iadd", "v.assign_add(x)"),
        ("-", "isub", "v.assign_sub(x)"),
        ("*", "imul", None),
        ("/", "itruediv", None),
        ("//", "ifloordiv", None),
        ("%", "imod", None),
        ("**", "ipow", None),
        ("@", "imatmul", None),
        ("&", "iand", None),
        ("|", "ior", None),
        ("^", "ixor", None),
    ):
        setattr(Variable, f"__{name}__", _no_augmented_assignment(symbol, method))
    for name, fn in (
        ("__init__", _variable_init),
        ("assign", _assign),
        ("assign_add", _assign_add),
        ("assign_sub", _assign_sub),
        ("read_value", _read_value),
    ):
        fn.__name__ = name
        fn.__qualname__ = f"Variable.{name}"
        setattr(Variable, name, fn)


_install_operators()
_install_methods()
_install_variable_methods()
