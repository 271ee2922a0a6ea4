"""tl.tensor of a Python list with a dtype asked for (found while probing reductions): the values are
rounded once, to that dtype, as NumPy (the reference here) and TensorFlow do, and Tensors in the list
keep their gradient."""

import numpy as np
import pytest

import tensorlib as tl


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize(
    "data, dtype",
    [
        ([0.1, 0.2], "float64"),  # held 0.10000000149011612: rounded to float32 first
        ([[1e200, 2.0], [-3.5, 1e-300]], "float64"),  # 1e200 became inf, 1e-300 became 0
        ([0.1 + 0.3j], "complex128"),
        ([1, 2**53 + 1, True], "float64"),
        ((0.1,), "float16"),
    ],
)
def test_list_data_is_rounded_once_to_the_dtype_asked_for(data, dtype, traced):
    make = (lambda: tl.tensor(data, dtype=dtype)) if not traced else tl.function(lambda: tl.tensor(data, dtype=dtype))
    out = make().numpy()
    expected = np.asarray(data, dtype=dtype)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_tensors_in_a_list_keep_their_gradient_through_a_dtype(traced):
    # tl.tensor([v, 2.0], dtype="float64") rebuilt the value from the raw array: the gradient was a silent 0.
    def f(v):
        return tl.sum(tl.tensor([v * 3.0, 2.0], dtype="float64") ** 2)

    grad = tl.grad(f)
    g = (tl.function(grad) if traced else grad)(tl.tensor(1.0))
    assert g.dtype == np.float32 and float(g) == 18.0  # d/dv (3v)^2 = 18v
