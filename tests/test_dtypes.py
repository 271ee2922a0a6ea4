"""dtypes: weak Python scalars, list conversion, NumPy arrays keeping their dtype, NumPy promotion
between typed values, defaults of the creation functions, and gradients keeping the input's dtype."""

import numpy as np
import pytest

import tensorlib as tl

F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
I32, I64, BOOL = np.dtype("int32"), np.dtype("int64"), np.dtype("bool")


def typed(dtype):
    return tl.tensor(np.ones(2, dtype))


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t * 2.0,
        lambda t: 2.0 * t,
        lambda t: t + 1,
        lambda t: t - 0.5,
        lambda t: t / 3.0,
        lambda t: t**2,
        lambda t: tl.maximum(t, 0.0),
        lambda t: tl.where(t > 0, t, 0.0),
        lambda t: tl.clip(t, 0, 1.5),
    ],
    ids=["mul", "rmul", "add-int", "sub", "div", "pow", "maximum", "where", "clip"],
)
@pytest.mark.parametrize("dtype", [F16, F32, F64])
def test_python_scalars_are_weak(make, dtype):
    assert make(typed(dtype)).dtype == dtype


def test_weak_scalars_next_to_integers_and_bools():
    assert (typed(I64) + 2).dtype == I64 and (typed(I32) + 2).dtype == I32
    assert (typed(I64) * 2.0).dtype == F64  # a float scalar gives float64, as NumPy 2 (and JAX with int64)
    assert (typed(BOOL) + 1).dtype == I64
    assert (typed(BOOL) + 1.5).dtype == F64
    assert (typed(I32) / typed(I32)).dtype == F64  # true division, as NumPy


def test_numpy_scalars_are_typed_not_weak():
    assert (typed(F32) + np.float64(1.0)).dtype == F64
    assert (typed(F32) + np.float32(1.0)).dtype == F32


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (F32, F64, F64),
        (F16, F32, F32),
        (I32, I64, I64),
        (I64, F32, F64),
        (I32, F16, F64),
        (BOOL, I32, I32),
        (BOOL, F32, F32),
    ],
)
def test_typed_values_promote_as_numpy_does(a, b, expected):
    assert expected == np.result_type(a, b)
    assert (typed(a) + typed(b)).dtype == expected
    assert tl.add(np.ones(2, a), np.ones(2, b)).dtype == expected
    assert tl.concat([typed(a), typed(b)]).dtype == expected
    assert tl.einsum("i,i->", typed(a), typed(b)).dtype == expected


def test_lists_and_python_numbers_convert_to_the_defaults():
    assert tl.tensor([1.0, 2.0]).dtype == F32
    assert tl.tensor([1, 2]).dtype == I64
    assert tl.tensor([1, 2.5]).dtype == F32
    assert tl.tensor([True]).dtype == BOOL
    assert tl.tensor(1.0).dtype == F32 and tl.tensor(1).dtype == I64
    assert tl.tensor([[1.0], [2.0]], dtype="float64").dtype == F64
    assert tl.tensor([1.5], dtype=int).dtype == I64


def test_lists_next_to_a_tensor_take_its_dtype():
    assert (typed(F64) + [1.0, 2.0]).dtype == F64
    assert (typed(F16) * [1, 2]).dtype == F16
    assert tl.matmul(typed(F64)[None], [[1.0], [2.0]]).dtype == F64


@pytest.mark.parametrize("dtype", [F16, F32, F64, I32, I64, BOOL])
def test_numpy_arrays_keep_their_dtype(dtype):
    a = np.ones(3, dtype)
    assert tl.tensor(a).dtype == dtype
    assert tl.identity(a).dtype == dtype
    assert tl.Variable(a).dtype == dtype


def test_narrow_numpy_integers_are_widened_and_unsupported_dtypes_rejected():
    assert tl.tensor(np.zeros(2, np.int8)).dtype == I32
    assert tl.tensor(np.zeros(2, np.uint8)).dtype == I32
    with pytest.raises(TypeError, match=r"tensorlib: dtype uint64 is not supported \(supported: float16, float32"):
        tl.tensor(np.zeros(2, np.uint64))
    with pytest.raises(TypeError, match="tensorlib: 'nonsense' is not a dtype"):
        tl.zeros(2, dtype="nonsense")


def test_creation_defaults():
    assert tl.zeros((2,)).dtype == F32 and tl.ones((2,)).dtype == F32 and tl.eye(2).dtype == F32
    assert tl.arange(3).dtype == I64 and tl.arange(3.0).dtype == F32 and tl.arange(0, 1, 0.5).dtype == F32
    assert tl.full((2,), 3).dtype == I64 and tl.full((2,), 3.0).dtype == F32 and tl.full((1,), True).dtype == BOOL
    assert tl.zeros_like(typed(F64)).dtype == F64 and tl.ones_like(typed(I32), dtype="float16").dtype == F16


def test_reductions_follow_numpy():
    # int32 sums accumulate in int64, as NumPy (np.sum of int32 is int64): an int32 sum wrapped around.
    assert tl.sum(typed(I32)).dtype == I64 and tl.prod(typed(I32)).dtype == I64 and tl.sum(typed(F16)).dtype == F16
    assert tl.sum(tl.tensor([True, True, False])).numpy() == 2  # bools count
    assert tl.sum(typed(BOOL)).dtype == I64 and tl.prod(typed(BOOL)).dtype == I64
    assert tl.mean(tl.tensor([1, 2])).dtype == F64 and float(tl.mean(tl.tensor([1, 2]))) == 1.5
    assert tl.argmax(typed(F32)).dtype == I64


def test_comparisons_and_casts():
    assert (typed(F32) > 0.5).dtype == BOOL and tl.equal(typed(I64), 1).dtype == BOOL
    assert tl.cast(typed(F64), "float16").dtype == F16
    assert tl.cast(tl.tensor([1.7, -1.7]), "int32").numpy().tolist() == [1, -1]
    assert tl.cast(tl.tensor([0.0, 2.0]), bool).numpy().tolist() == [False, True]


@pytest.mark.parametrize("dtype", [F16, F32, F64])
def test_gradients_keep_the_input_dtype(dtype):
    x = tl.tensor(np.array([0.5, 1.5], dtype))
    w = tl.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]))  # float64 weights
    g = tl.grad(lambda x: tl.sum(tl.tanh(tl.matmul(w, x)) * 2.0))(x)
    assert g.dtype == dtype
    v = tl.Variable(np.array([1.0, 2.0], dtype))
    with tl.GradientTape() as tape:
        loss = tl.sum(tl.exp(v) * 3.0)
    assert tape.gradient(loss, v).dtype == dtype


def test_float32_backward_stays_float32_through_every_intermediate():
    # Gradient intermediates keep the input's dtype: a float64 mask in a float32 backward makes every
    # following GEMM run in float64.
    x = tl.tensor(np.ones((4, 3), np.float32))
    w = tl.tensor(np.ones((3, 2), np.float32))
    dtypes = set()

    class Observer:
        def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, *rest, **more):
            outs = outputs if isinstance(outputs, tuple) else (outputs,)
            dtypes.update(str(o.dtype) for o in outs if o.dtype.kind == "f")

    tl.dispatch.observers.append(Observer())
    try:
        tl.grad(lambda w: tl.mean(tl.maximum(tl.matmul(x, w), 0.0) ** 2) + tl.logsumexp(w), argnums=0)(w)
    finally:
        tl.dispatch.observers.pop()
    assert dtypes == {"float32"}


def test_cast_of_a_python_number_is_exact():
    # tl.cast(0.1, float64) went through the default float32 first: 0.10000000149011612 (TensorFlow does the
    # same; NumPy, JAX with 64-bit types and torch.tensor(0.1, dtype=float64) give 0.1).
    assert float(tl.cast(0.1, "float64")) == 0.1
    assert complex(tl.cast(0.1 + 0.2j, "complex128")) == 0.1 + 0.2j
    assert float(tl.function(lambda: tl.cast(0.1, "float64"))()) == 0.1
    assert float(tl.cast(0.1, "float32")) == float(np.float32(0.1))
    assert int(tl.cast(-2.7, "int64")) == -2 and tl.cast(2.5, "int32").dtype == np.int32
