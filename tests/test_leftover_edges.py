"""Regression tests for defects an adversarial sweep left behind: integer results of arithmetic on
bools, floor division, lossy complex conversions, float16 accumulation, batch norm with one value per
channel, cyclic module trees, rank checks of indexing, and jacobians inside a persistent tape."""

import numpy as np
import pytest

import tensorlib as tl

MODES = ("eager", "traced")


def _run(mode, f, *args):
    return f(*args) if mode == "eager" else tl.function(f)(*args)


# ---------------------------------------------------------------- 1. arithmetic on bools gives integers
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "name, ref",
    [("power", np.power), ("remainder", np.remainder)],
)
def test_power_and_remainder_of_bools_give_integers_as_numpy(mode, name, ref):
    # NumPy gives int8 (held as int32 by tensorlib, JAX's int32); the rule said bool and the
    # kernel's int8 was a KernelResultError.
    x, y = np.array([True, False, True, False]), np.array([True, True, True, True])
    got = _run(mode, getattr(tl, name), x, y)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.numpy(), ref(x, y).astype(np.int32))


@pytest.mark.parametrize("mode", MODES)
def test_bool_tensor_operators_power_and_mod(mode):
    x = np.array([True, False])
    got = _run(mode, lambda a: (tl.tensor(a) ** a, tl.tensor(a) % tl.tensor([True, True])), x)
    np.testing.assert_array_equal(got[0].numpy(), [1, 1])
    np.testing.assert_array_equal(got[1].numpy(), [0, 0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["sign", "nn.relu"])
def test_sign_and_relu_of_bools_are_a_type_error_naming_the_op(mode, name):
    # NumPy and JAX refuse sign of bools; the error was NumPy's "ufunc 'sign' did not contain a loop".
    fn = tl.nn.relu if name == "nn.relu" else tl.sign
    op = "Relu" if name == "nn.relu" else "Sign"
    with pytest.raises(TypeError, match=rf"^{op}: .*bool"):
        _run(mode, fn, np.array([True, False]))


def test_power_and_remainder_of_bools_on_the_array_api_backend():
    pytest.importorskip("array_api_strict")
    x = tl.tensor(np.array([True, False]), backend="array_api_strict")
    one = tl.tensor(np.array([True, True]), backend="array_api_strict")
    assert (x**one).numpy().tolist() == [1, 0]
    assert tl.remainder(x, one).numpy().tolist() == [0, 0]
    assert (x**one).dtype == np.int32
