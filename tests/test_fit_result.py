"""One fix-up of kernel results (issue 8): ``dispatch.fit_result``, used eagerly, by the executor and by
constant folding, casts within a kind only and names the op and the kernel otherwise."""

import itertools

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.dispatch import KernelResultError, fit_result

_names = itertools.count()
NUMPY = tl.backends.get("numpy")


def _op(kernel, dtype=None):
    """An op whose shape rule keeps its input's shape and gives ``dtype`` (default: the input's)."""
    infer = lambda x: tl.ops.registry.spec(x.shape, x.dtype if dtype is None else dtype)  # noqa: E731
    op = tl.ops.defop(f"FitResult{next(_names)}", inputs=("x",), infer=infer)
    op.kernel("numpy")(kernel)
    tl.grad.not_differentiable(op.name)
    return op


def _wide(x):
    return x.astype(np.float64) * 2.0


def test_a_wider_result_is_narrowed_to_the_rule_dtype_eagerly_traced_and_folded():
    op = _op(_wide)
    x = np.array([1.5, -2.0], np.float32)
    eager = op(tl.tensor(x))
    f = tl.function(lambda v: op(v))
    traced = [f(tl.tensor(x)) for _ in range(3)]  # the first run interprets, later ones run the compiled plan
    for out in [eager, *traced]:
        assert out.dtype == np.float32 and out.numpy().dtype == np.float32
        np.testing.assert_array_equal(out.numpy(), x * 2)
    folded = tl.function(lambda: op(tl.tensor(x))).get_graph().optimize()
    assert not folded.nodes  # the call was folded into a constant of the rule's dtype
    (raw,) = [raw for _, raw in folded.constants.values() if raw.shape == (2,) and not np.array_equal(raw, x)]
    assert raw.dtype == np.float32 and raw.__class__ is np.ndarray
    np.testing.assert_array_equal(raw, x * 2)


def test_a_result_of_another_kind_is_the_kernels_error_on_every_path():
    op = _op(lambda x: x * 0.5, dtype=tl.int32)
    message = rf"^{op.name}: kernel .*<lambda> returned shape \(2,\) float64, but the op's shape rule gives shape \(2,\) int32(\n|$)"
    x = tl.tensor(np.array([1, 3], np.int32))
    with pytest.raises(KernelResultError, match=message):
        op(x)
    with pytest.raises(KernelResultError, match=message):
        tl.function(lambda v: op(v))(x)
    with pytest.raises(KernelResultError, match=message):  # not folded: the run raises
        tl.function(lambda: op(tl.tensor(np.array([1, 3], np.int32))))()


@pytest.mark.parametrize(
    "raw,dtype,expected",
    [
        (np.float64(2.5), "float32", np.array(2.5, np.float32)),  # a NumPy scalar
        (7, "int32", np.array(7, np.int32)),  # a Python int
        (np.array([1, 2], np.uint8), "int64", np.array([1, 2], np.int64)),  # unsigned to signed integers
        (np.array([1.0 + 2j], np.complex128), "complex64", np.array([1.0 + 2j], np.complex64)),
        (np.ma.masked_array([1.0, 2.0]), "float64", np.array([1.0, 2.0])),  # an ndarray subclass
    ],
)
def test_fit_result_gives_a_plain_array_of_the_rule_dtype(raw, dtype, expected):
    spec = tl.TensorSpec(np.shape(raw), dtype)
    out = fit_result(raw, spec, NUMPY, tl.ops.get("Identity"))
    assert out.__class__ is np.ndarray and out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


def test_fit_result_returns_an_array_already_right_unchanged():
    raw = np.ones(3, np.float32)
    assert fit_result(raw, tl.TensorSpec((3,), "float32"), NUMPY, tl.ops.get("Identity")) is raw


@pytest.mark.parametrize(
    "raw,dtype,got",
    [
        (None, "float32", "None"),
        ([1.0, 2.0], "float64", "None"),  # a list is no array
        (np.array([True]), "float32", r"shape \(1,\) bool"),
        (np.array([1.5]), "int64", r"shape \(1,\) float64"),
        (np.array([1j]), "float64", r"shape \(1,\) complex128"),
    ],
)
def test_fit_result_refuses_other_kinds_naming_op_and_kernel(raw, dtype, got):
    def my_kernel(x):
        return x

    spec = tl.TensorSpec((1,), dtype)
    with pytest.raises(
        KernelResultError,
        match=rf"^Identity: kernel .*my_kernel returned {got}, but the op's shape rule gives shape \(1,\) {dtype}$",
    ):
        fit_result(raw, spec, NUMPY, tl.ops.get("Identity"), my_kernel)
