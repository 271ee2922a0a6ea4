"""Hypothesis strategies for tensorlib users, built on ``hypothesis.extra.numpy``.

They draw NumPy arrays (finite values in a sane range), shapes, broadcast
partners, axes, and valid inputs for any registered op::

    >>> import numpy as np
    >>> from hypothesis import given
    >>> import tensorlib as tl
    >>> from tensorlib.testing import strategies as tls
    >>> @given(tls.tensors(np.float64, tls.shapes(max_dims=2)))
    ... def test_neg_is_its_own_inverse(x):
    ...     np.testing.assert_array_equal(tl.negative(tl.negative(x)).numpy(), x)
    >>> test_neg_is_its_own_inverse()
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = [
    "tensors",
    "scalars",
    "shapes",
    "broadcastable_shapes",
    "mutually_broadcastable_shapes",
    "valid_axes",
    "valid_axis",
    "op_inputs",
    "conv2d_args",
]


def _float_bound(value, dtype, direction):
    """``value`` rounded inward to the nearest number representable in ``dtype``."""
    rounded = dtype.type(value)
    if (direction > 0 and float(rounded) < value) or (direction < 0 and float(rounded) > value):
        rounded = np.nextafter(rounded, dtype.type(direction * np.inf))
    return float(rounded)


def scalars(dtype, min_value=-3.0, max_value=3.0) -> st.SearchStrategy:
    """Scalar values of ``dtype``: finite, no subnormals, within [min_value, max_value] (for complex
    dtypes, the real and the imaginary part each)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        part = scalars(dtype.type(0).real.dtype, min_value, max_value)
        return st.builds(complex, part, part)
    if dtype.kind == "f":
        return st.floats(
            _float_bound(min_value, dtype, +1),
            _float_bound(max_value, dtype, -1),
            width=8 * dtype.itemsize,
            allow_nan=False,
            allow_infinity=False,
            allow_subnormal=False,
        )
    if dtype.kind in "iu":
        return st.integers(int(np.ceil(min_value)), int(np.floor(max_value)))
    if dtype.kind == "b":
        return st.booleans()
    raise TypeError(f"tensors: dtype {dtype} is not supported")


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4) -> st.SearchStrategy:
    """Array shapes (tuples of ints), small by default so tests stay fast."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def tensors(
    dtype=np.float64, shape=None, elements=None, *, min_value=-3.0, max_value=3.0, unique: bool = False
) -> st.SearchStrategy:
    """NumPy arrays of ``dtype`` and ``shape`` (a tuple or a strategy of tuples; default: ``shapes()``).

    Values are finite and lie in ``[min_value, max_value]`` (complex ones: each part) unless an ``elements``
    strategy says otherwise.

    >>> import numpy as np
    >>> from hypothesis import given
    >>> from tensorlib.testing.strategies import tensors
    >>> @given(tensors(np.float32, (2, 3), min_value=0.5))
    ... def check(x):
    ...     assert x.dtype == np.float32 and x.shape == (2, 3) and x.min() >= 0.5
    >>> check()
    """
    dtype = np.dtype(dtype)
    if shape is None:
        shape = shapes()
    if elements is None:
        elements = scalars(dtype, min_value, max_value)
    return hnp.arrays(dtype, shape, elements=elements, unique=unique)


def broadcastable_shapes(
    shape, min_dims: int = 0, max_dims: int | None = None, min_side: int = 1, max_side: int | None = 4
) -> st.SearchStrategy:
    """Shapes that broadcast against ``shape`` (NumPy rules)."""
    if max_dims is None:
        max_dims = max(len(shape), min_dims)
    return hnp.broadcastable_shapes(
        tuple(shape), min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def mutually_broadcastable_shapes(
    num_shapes: int, min_dims: int = 0, max_dims: int = 3, max_side: int = 4
) -> st.SearchStrategy:
    """``num_shapes`` shapes that broadcast together (a tuple of tuples)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims, max_side=max_side
    ).map(lambda b: b.input_shapes)


def valid_axis(ndim: int) -> st.SearchStrategy:
    """One axis of a rank-``ndim`` array, negative axes included."""
    if ndim == 0:
        raise ValueError("valid_axis: a 0-d array has no axis")
    return st.integers(-ndim, ndim - 1)


def valid_axes(
    ndim: int, allow_none: bool = True, allow_int: bool = True, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy:
    """A reduction ``axis`` argument for a rank-``ndim`` array: None, an int, or a tuple of distinct axes."""
    options = [hnp.valid_tuple_axes(ndim, min_size=min_size, max_size=max_size)]
    if allow_none:
        options.insert(0, st.none())
    if allow_int and ndim > 0 and min_size <= 1:
        options.append(valid_axis(ndim))
    return st.one_of(options)


def _find_opinfo(op):
    from .op_db import all_opinfos

    infos = all_opinfos()
    if isinstance(op, str):
        for info in infos:
            if info.name == op:
                return info
        for info in infos:
            if op in info.op_types:
                return info
    else:
        name = getattr(op, "name", None)
        for info in infos:
            if info.op is op or (name is not None and name in info.op_types):
                return info
    raise LookupError(f"op_inputs: no OpInfo describes {op!r}; known: {', '.join(sorted(i.name for i in infos))}")


def op_inputs(op, dtype=np.float64) -> st.SearchStrategy:
    """Valid :class:`~tensorlib.testing.opinfo.SampleInput` draws for a registered op.

    ``op`` is an OpInfo name (``"matmul"``), an op type (``"BatchMatMulV2"``),
    an :class:`~tensorlib.ops.OpDef` or the public function itself.

    >>> import numpy as np, tensorlib as tl
    >>> from hypothesis import given
    >>> from tensorlib.testing.strategies import op_inputs
    >>> @given(op_inputs("BatchMatMulV2"))
    ... def check(sample):
    ...     np.testing.assert_allclose(tl.matmul(*sample.args).numpy(), np.matmul(*sample.args))
    >>> check()
    """
    info = _find_opinfo(op)
    dtype = np.dtype(dtype)
    if dtype not in info.dtypes:
        raise ValueError(
            f"op_inputs: {info.name} is not tested in {dtype} (dtypes: {', '.join(str(d) for d in info.dtypes)})"
        )
    return info.samples(dtype)


@st.composite
def conv2d_args(
    draw, dtype=np.float64, max_batch: int = 2, max_size: int = 6, max_channels: int = 3, max_kernel: int = 3
):
    """``(input, filters, kwargs)`` for ``tl.nn.conv2d``: NHWC input, HWIO filter, strides, padding, dilations.

    With ``"VALID"`` padding the dilated kernel always fits the input.
    """
    n = draw(st.integers(1, max_batch))
    c_in = draw(st.integers(1, max_channels))
    c_out = draw(st.integers(1, max_channels))
    kh, kw = draw(st.integers(1, max_kernel)), draw(st.integers(1, max_kernel))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilations = (1, 1) if strides != (1, 1) else (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    min_h, min_w = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    h = draw(st.integers(min_h, max(min_h, max_size)))
    w = draw(st.integers(min_w, max(min_w, max_size)))
    x = draw(tensors(dtype, (n, h, w, c_in)))
    filters = draw(tensors(dtype, (kh, kw, c_in, c_out)))
    return x, filters, {"strides": strides, "padding": padding, "dilations": dilations}
