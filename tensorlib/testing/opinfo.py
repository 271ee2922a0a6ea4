"""OpInfo: what the registry-driven tests need to know about one op (like PyTorch's OpInfo).

Each OpInfo names the public function to call, a NumPy reference, a
hypothesis strategy of sample inputs per dtype, which arguments are
differentiable, and error inputs with the message they must produce.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt


@dataclasses.dataclass
class SampleInput:
    """Positional ``args`` (NumPy arrays or Python values) and ``kwargs`` for one call.

    ``grad_argnums`` lists the positions of the arguments that gradients are checked for.
    """

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    grad_argnums: tuple = (0,)

    def split(self, op: Callable) -> tuple:
        """``(positions, call)``: the positions of the NumPy-array arguments, and ``call(*arrays)``, which calls
        ``op`` on the arguments with those replaced by ``arrays`` (tensors, placeholders), the keywords as given.

        >>> import numpy as np, tensorlib as tl
        >>> positions, call = SampleInput((np.ones(2), 3.0)).split(lambda x, s: x * s)
        >>> positions, call(tl.tensor([1.0, 2.0])).numpy().tolist()
        ([0], [3.0, 6.0])
        """
        positions = [k for k, a in enumerate(self.args) if isinstance(a, np.ndarray)]

        def call(*arrays):
            args = list(self.args)
            for k, a in zip(positions, arrays):
                args[k] = a
            return op(*args, **self.kwargs)

        return positions, call

    def __repr__(self):
        def show(a):
            return f"array{a.shape}:{a.dtype}" if isinstance(a, np.ndarray) else repr(a)

        return f"SampleInput(args=({', '.join(show(a) for a in self.args)}), kwargs={self.kwargs})"


@dataclasses.dataclass
class ErrorInput:
    """A call that must raise ``exc`` with a message matching the regex ``match``."""

    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    exc: type = ValueError
    match: str = ""


@dataclasses.dataclass
class OpInfo:
    """Test metadata for one public function and the op types it exercises.

    ``samples(dtype)`` returns a hypothesis strategy of :class:`SampleInput`;
    ``ref(*args, **kwargs)`` computes the expected output with NumPy (same
    arguments, arrays as NumPy arrays).  ``op_types`` are the registered op
    type names this entry covers (the registry test checks every op type is
    covered by some OpInfo).  ``kinks`` marks ops whose gradient checks must
    avoid non-differentiable points (``check_grads`` resamples or reports).
    """

    name: str
    op: Callable
    ref: Callable
    samples: Callable[[np.dtype], Any]
    op_types: tuple = ()
    dtypes: tuple = (_dt.float32, _dt.float64)
    differentiable: bool = True
    second_order: bool = True
    error_inputs: tuple = ()
    atol: float = 1e-6
    rtol: float = 1e-5
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-4
    kinks: bool = False

    def tolerances(self, dtype) -> tuple:
        """(atol, rtol) for comparing forward values in ``dtype``."""
        dtype = np.dtype(dtype)
        if dtype == _dt.float16:
            return 1e-2, 1e-2
        if dtype in (_dt.float32, _dt.complex64):
            return max(self.atol, 1e-5), max(self.rtol, 1e-4)
        return self.atol, self.rtol
