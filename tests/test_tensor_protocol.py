"""The Tensor's Python protocol against NumPy: bitwise operators; eager and traced agree."""

import operator

import numpy as np
import pytest

import tensorlib as tl

INTS = np.array([-7, -2, -1, 0, 1, 5, 12, 2**40 + 3])
BOOLS = np.array([True, False, True, False, True, True, False, False])
OPERATORS = {"&": operator.and_, "|": operator.or_, "^": operator.xor}


@pytest.mark.parametrize("symbol", sorted(OPERATORS))
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_bitwise_operators_match_numpy_in_both_modes(symbol, dtype):
    # `&` and `|` on integer tensors were logical (int64 [12] & 10 gave [True], not [8]); `^` was missing.
    op = OPERATORS[symbol]
    a = (INTS if dtype != "bool" else BOOLS).astype(dtype)
    b = np.roll(a, 3)
    traced = tl.function(lambda x, y: op(x, y))
    for got, want in [
        (op(tl.tensor(a), tl.tensor(b)), op(a, b)),
        (traced(tl.tensor(a), tl.tensor(b)), op(a, b)),
        (op(a, tl.tensor(b)), op(a, b)),  # an ndarray on the left
        (op(tl.tensor(a), 10 if dtype != "bool" else True), op(a, 10 if dtype != "bool" else True)),
        (op(3 if dtype != "bool" else False, tl.tensor(a)), op(3 if dtype != "bool" else False, a)),
        (getattr(np, {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor"}[symbol])(tl.tensor(a), b), op(a, b)),
    ]:
        assert isinstance(got, tl.Tensor) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_invert_matches_numpy(dtype):
    # ~ on an integer tensor gave the logical not (bool); NumPy gives -x - 1.
    a = (INTS if dtype != "bool" else BOOLS).astype(dtype)
    for got in (~tl.tensor(a), tl.invert(a), np.invert(tl.tensor(a)), tl.function(lambda x: ~x)(tl.tensor(a))):
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got.numpy(), ~a)


@pytest.mark.parametrize(
    "call, op_type",
    [
        (lambda x: x & x, "BitwiseAnd"),
        (lambda x: x | 1, "BitwiseOr"),
        (lambda x: True ^ x, "BitwiseXor"),
        (lambda x: ~x, "Invert"),
    ],
)
def test_bitwise_operators_on_floats_raise_as_numpy_does(call, op_type):
    # They gave bools (a logical and/or/not of the floats); NumPy and PyTorch refuse floats.
    x = tl.tensor([0.5, 0.0])
    with pytest.raises(TypeError, match=rf"{op_type}: needs integer or bool inputs .* got float32 \(inputs x: shape"):
        call(x)
