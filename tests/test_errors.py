"""User errors: one exception that names the op and the offending shapes, dtypes or arguments."""

import numpy as np
import pytest

import tensorlib as tl


def test_broadcast_mismatch_in_add_names_op_shapes_and_dtypes():
    with pytest.raises(
        ValueError,
        match=r"^Add: shapes \(2, 3\) and \(4,\) are not broadcastable \(inputs x: shape "
        r"\(2, 3\) float32, y: shape \(4,\) float32\)$",
    ):
        tl.add(tl.ones((2, 3)), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"^Mul: shapes \(3,\) and \(2,\) are not broadcastable"):
        tl.ones(3) * tl.ones(2)


def test_matmul_mismatch_quotes_the_callers_shapes():
    with pytest.raises(
        ValueError,
        match=r"^BatchMatMulV2: inner dimensions do not match: \(2, 3\) @ \(4, 5\) "
        r"\(3 != 4\) \(inputs x: shape \(2, 3\) float32, y: shape \(4, 5\) "
        r"float32\)$",
    ):
        tl.ones((2, 3)) @ tl.ones((4, 5))
    with pytest.raises(
        ValueError,
        match=r"^BatchMatMulV2: inner dimensions do not match: \(2, 3\) @ \(4,\) "
        r"\(3 != 4\)",
    ):
        tl.matmul(tl.ones((2, 3)), tl.ones(4))
    with pytest.raises(ValueError, match=r"^BatchMatMulV2: shapes \(2,\) and \(3,\) are not broadcastable"):
        tl.matmul(tl.ones((2, 1, 2)), tl.ones((3, 2, 2)))
    with pytest.raises(ValueError, match=r"^BatchMatMulV2: matmul of a scalar \(shapes \(\) and \(2,\)\); use \*"):
        tl.matmul(tl.tensor(2.0), tl.ones(2))


def test_einsum_errors_name_the_subscripts_and_operands():
    with pytest.raises(
        ValueError,
        match=r"^Einsum: index 'j' has sizes 3 and 4 in 'ij,jk->ik' \(operands: \(2, 3\) float32, \(4, 5\) float32\)$",
    ):
        tl.einsum("ij,jk->ik", tl.ones((2, 3)), tl.ones((4, 5)))
    with pytest.raises(
        ValueError,
        match=r"^Einsum: subscript 'ijk' has 3 indices for an operand of shape \(2, 2\) "
        r"\(operands: \(2, 2\) float32\)$",
    ):
        tl.einsum("ijk->i", tl.ones((2, 2)))
    with pytest.raises(ValueError, match=r"^Einsum: output subscript 'k' names 'k', which no operand has"):
        tl.einsum("ij->k", tl.ones((2, 2)))
    with pytest.raises(ValueError, match=r"^Einsum: output subscript 'ii' repeats an index"):
        tl.einsum("ij->ii", tl.ones((2, 2)))


@pytest.mark.parametrize(
    "reduce, name",
    [
        (tl.sum, "Sum"),
        (tl.max, "Max"),
        (tl.prod, "Prod"),
        (tl.mean, "Mean"),
        (tl.var, "Var"),
        (tl.logsumexp, "LogSumExp"),
    ],
)
def test_a_wrong_axis_names_the_op_the_axis_and_the_shape(reduce, name):
    with pytest.raises(
        ValueError,
        match=rf"^{name}: axis 2 is out of range for a tensor of rank 2 \(input.*shape "
        r"\(2, 3\)",
    ):
        reduce(tl.ones((2, 3)), axis=2)


def test_other_axis_errors():
    with pytest.raises(ValueError, match=r"^Sum: duplicate axis in \(0, -2\) \(inputs x: shape \(2, 3\) float32\)$"):
        tl.sum(tl.ones((2, 3)), axis=(0, -2))
    with pytest.raises(ValueError, match=r"^ArgMax: axis -3 is out of range for a tensor of rank 2"):
        tl.argmax(tl.ones((2, 3)), axis=-3)
    with pytest.raises(ValueError, match=r"^ConcatV2: axis 1 is out of range for a tensor of rank 1"):
        tl.concat([tl.ones(2), tl.ones(2)], axis=1)
    with pytest.raises(TypeError, match=r"^Sum: axis must be an int, got 0.5 \(inputs x: shape \(2,\) float32\)$"):
        tl.sum(tl.ones(2), axis=0.5)
    with pytest.raises(TypeError, match=r"^Max: axis must be an int, got True"):
        tl.max(tl.ones(2), axis=True)
    assert tl.sum(tl.ones((2, 3)), axis=np.int64(1)).shape == (2,)  # NumPy integers are fine
    assert tl.mean(tl.ones((2, 3)), axis=(np.int64(0), -1)).shape == ()


def test_non_numeric_data_names_the_op_and_the_input():
    with pytest.raises(TypeError, match=r"^Add: input 'y' expected a tensor, array or number, got str 'a'$"):
        tl.add(tl.ones(2), "a")
    with pytest.raises(TypeError, match=r"^Exp: input 'x' expected a tensor, array or number, got NoneType None$"):
        tl.exp(None)
    with pytest.raises(TypeError, match=r"^Exp: input 'x' has unsupported dtype <U1$"):
        tl.exp(np.array(["x"]))
    with pytest.raises(TypeError, match=r"^Exp: input 'x' has unsupported dtype uint64$"):
        tl.exp(np.array([1], np.uint64))
    with pytest.raises(TypeError, match=r"^Mul: input 'y' is not numeric: \['a'\]$"):
        tl.multiply(tl.ones(1), ["a"])
    with pytest.raises(TypeError, match=r"is not numeric: \['a', 'b'\]"):
        tl.tensor(["a", "b"])
    with pytest.raises(ValueError, match=r"ragged nested sequence"):
        tl.tensor([[1.0], [1.0, 2.0]])
    with pytest.raises(
        TypeError,
        match=r"^Cast: tensorlib: dtype uint64 is not supported \(supported: float16, "
        r"float32, float64, int32, int64, bool, complex64, complex128\) \(input shape "
        r"\(2,\) float32\)$",
    ):
        tl.cast(tl.ones(2), "uint64")


def test_dtype_errors_name_the_op():
    with pytest.raises(
        TypeError,
        match=r"^Select: condition must be bool, got float32 \(inputs condition: shape "
        r"\(2,\) float32",
    ):
        tl.ops.get("Select")(tl.ones(2), tl.ones(2), tl.zeros(2))  # tl.where reads a float condition as NumPy
    with pytest.raises(TypeError, match=r"^GatherV2: indices must be integers, got float32"):
        tl.take(tl.ones(3), tl.tensor([0.5]))


def test_shape_op_errors():
    with pytest.raises(ValueError, match=r"^Reshape: cannot reshape a tensor of shape \(6,\) into \(4, -1\)"):
        tl.reshape(tl.ones(6), (4, -1))
    with pytest.raises(ValueError, match=r"^Squeeze: cannot squeeze axis 0 of size 2"):
        tl.squeeze(tl.ones((2, 3)), 0)
    with pytest.raises(ValueError, match=r"^ConcatV2: shapes \[\(2, 3\), \(2,\)\] differ outside axis 0"):
        tl.concat([tl.ones((2, 3)), tl.ones(2)])
    with pytest.raises(ValueError, match=r"^SplitV: axis 0 of size 5 \(shape \(5,\)\) cannot be split into 2 equal"):
        tl.split(tl.ones(5), 2)
    with pytest.raises(ValueError, match=r"^BroadcastTo: .*\(2, 3\).*\(3, 3\)"):
        tl.broadcast_to(tl.ones((2, 3)), (3, 3))


def test_indexing_errors():
    x = tl.ones((2, 3))
    with pytest.raises(IndexError, match=r"^StridedSlice: index 2 is out of bounds for axis 0 with size 2"):
        x[2]
    with pytest.raises(IndexError, match=r"^StridedSlice: too many indices \(3\) for a tensor of shape \(2, 3\)$"):
        x[0, 0, 0]
    # A mask is NumPy's boolean indexing in eager mode (tests/test_advanced_indexing.py); a wrong shape is the error.
    with pytest.raises(
        IndexError,
        match=r"^StridedSlice: a boolean index of shape \(3,\) does not match the axes \(0,\) of shape \(2,\)",
    ):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match=r"^StridedSlice: unsupported index 0.5$"):
        x[0.5]
    with pytest.raises(IndexError, match=r"^StridedSlice: an index can only have a single ellipsis$"):
        x[..., ...]
    with pytest.raises(
        IndexError, match=r"^GatherV2: index 3 is out of bounds for axis 1 with size 3 \(params shape \(\d+, 3\) "
    ):
        x[:, [0, 3]]


def test_attribute_errors():
    with pytest.raises(TypeError, match=r"^Sum: unknown attribute 'axes' \(attributes: axis, keepdims\)$"):
        tl.ops.get("Sum")(tl.ones(2), axes=0)
    with pytest.raises(LookupError, match=r"^no op type 'Conv3D' is defined$"):
        tl.ops.get("Conv3D")


def test_an_error_leaves_inputs_and_tapes_usable():
    a = np.array([1.0, 2.0])
    x = tl.tensor(a)
    with tl.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ValueError):
            x + tl.ones(3)
        y = tl.sum(x * x)
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]
    assert a.tolist() == [1.0, 2.0]
