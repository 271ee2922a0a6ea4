"""Attacks on what was left open in the NumPy-style functions and linalg: the dtypes of the creation
functions' results from NumPy-scalar bounds, ``np.vectorize`` on tensors, ``unique`` with ``size=`` and
``axis=``, and the linalg gaps.  References: NumPy and SciPy results, JAX's documented forms where NumPy has
none, and float64 central finite differences (``tl.testing.check_grads``) for every gradient."""

import numpy as np
import pytest

import tensorlib as tl


@pytest.mark.parametrize(
    ("make", "reference"),
    [
        (lambda a, b: tl.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5)),
        (lambda a, b: tl.logspace(a, b, 4), lambda a, b: np.logspace(a, b, 4)),
        (lambda a, b: tl.geomspace(a + 1, b + 1, 4), lambda a, b: np.geomspace(a + 1, b + 1, 4)),
        (lambda a, b: tl.arange(a, b + 1, 0.25), lambda a, b: np.arange(a, b + 1, 0.25)),
    ],
)
def test_creation_from_numpy_scalar_bounds_keeps_their_dtype(make, reference):
    # NumPy scalars are strong as NumPy arrays are (DESIGN §6); only Python numbers are weak.  float64 bounds
    # gave float32, rounding 0.1-spaced values to 7 digits.
    for a, b, expected in [
        (np.float64(0.1), np.float64(1.3), np.float64),
        (np.float32(0.1), np.float32(1.3), np.float32),
        (0.1, 1.3, np.float32),
        (np.float64(0.1), 1.3, np.float64),
    ]:
        got = make(a, b)
        assert got.dtype == expected, (a, b, got.dtype)
        np.testing.assert_allclose(
            got.numpy(), reference(a, b).astype(expected), rtol=1e-6 if expected == np.float32 else 1e-14
        )


def test_float_valued_creation_of_integer_bounds_is_numpys_float64_unless_they_are_python_ints():
    assert tl.linspace(np.int32(0), np.int32(3), 4).dtype == np.linspace(np.int32(0), np.int32(3), 4).dtype
    assert tl.linspace(0, 3, 4).dtype == np.float32 and tl.arange(3).dtype == np.int64
    assert tl.linspace(tl.tensor(np.float64(0.0)), 1, 3).dtype == np.float64
    assert tl.linspace(0, 2j, 3).dtype == np.complex64
    assert tl.linspace(np.float64(0), 1, 3, dtype="float32").dtype == np.float32
