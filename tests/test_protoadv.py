"""NumPy's own functions on Tensors, attacked as an adversary: ``np.f(t)`` must equal ``np.f(t.numpy())``
in value, dtype and shape (NumPy itself is the reference, with float64 central differences for the
gradients), or raise one clear error naming the function and the argument.  Covers the NEP 13/18
protocol (``tensorlib/numpy_protocol.py``), arguments a caller leaves out (they take NumPy's defaults and
meanings), and the ndarray-style methods on Tensor."""

import inspect

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import numpy_protocol
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)
X = RNG.normal(size=(3, 4))
SKEWED = (lambda a: a @ a.T + 3.0 * np.eye(3))(RNG.normal(size=(3, 3))) + np.triu(RNG.normal(size=(3, 3)), 1)


@pytest.mark.parametrize("upper", [False, True])
def test_np_linalg_cholesky_reads_numpy_s_triangle(upper):
    # np.linalg.cholesky(t) ran tl.linalg.cholesky's default symmetrize_input=True: on a matrix whose
    # triangles differ it factored (a + a.T) / 2, 0.36 off NumPy's factor of the lower triangle.
    got = np.linalg.cholesky(tl.tensor(SKEWED), upper=upper)
    np.testing.assert_allclose(got.numpy(), np.linalg.cholesky(SKEWED, upper=upper), rtol=1e-12, atol=1e-12)
    check_grads(lambda a: np.linalg.cholesky(a, upper=upper), [SKEWED], order=1)


def test_tl_cholesky_upper_without_symmetrizing_reads_the_upper_triangle():
    # NumPy and PyTorch factor the upper triangle for upper=True; tensorlib read the lower one (0.71 off).
    got = tl.linalg.cholesky(tl.tensor(SKEWED), upper=True, symmetrize_input=False).numpy()
    np.testing.assert_allclose(got, np.linalg.cholesky(SKEWED, upper=True), rtol=1e-12, atol=1e-12)
    upper = np.triu(SKEWED) + np.triu(SKEWED, 1).T  # the symmetric matrix of the upper triangle
    np.testing.assert_allclose(got, np.linalg.cholesky(upper).T, rtol=1e-12, atol=1e-12)


# tensorlib parameters NumPy's function lacks, whose default cannot change what NumPy's call means.
_MEANING_NEUTRAL = {("pad", "constant_values")}  # np.pad passes it through **kwargs


def test_every_tensorlib_only_parameter_takes_numpy_s_meaning():
    # A parameter NumPy's function does not have keeps tensorlib's default in np.f(t); each one must either
    # be set by the protocol to NumPy's meaning or be listed here as neutral.
    numpy_protocol._build_table()
    for np_fn, (tl_fn, sig, renames, _params, defaults) in numpy_protocol._table.items():
        tl_sig = numpy_protocol._signature(tl_fn)
        if sig is None or tl_sig is None:
            continue
        numpy_names = {renames.get(name, name) for name in sig.parameters}
        for name, param in tl_sig.parameters.items():
            if name in numpy_names or param.default is inspect.Parameter.empty:
                continue
            assert name in defaults or (np_fn.__name__, name) in _MEANING_NEUTRAL, (np_fn, name)


I = np.arange(-5, 7).reshape(3, 4)


@pytest.mark.parametrize(
    "call",
    [
        lambda np_, x: np_.sum(x, dtype=float),
        lambda np_, x: np_.mean(x, axis=0, dtype=float),
        lambda np_, x: np_.prod(x[:, :2], dtype=complex),
        lambda np_, x: np_.cumsum(x, axis=1, dtype=float),
        lambda np_, x: np_.ones_like(x, dtype=float),
        lambda np_, x: np_.full_like(x, 2, dtype=complex),
        lambda np_, x: np_.add.reduce(x, dtype=float),
        lambda np_, x: np_.add.accumulate(x, axis=1, dtype=float),
        lambda np_, x: np_.astype(x, float),
        lambda np_, x: np_.astype(x, np_.float32),
    ],
)
@pytest.mark.parametrize("data", [I, X], ids=["int64", "float64"])
def test_python_float_and_complex_as_dtype_mean_numpy_s_float64_and_complex128(call, data):
    # np.sum(t, dtype=float) took tensorlib's reading of Python's float (the default float, float32): a
    # float64 tensor lost half its digits where NumPy keeps float64.
    want = call(np, data)
    got = call(np, tl.tensor(data))
    assert isinstance(got, tl.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
