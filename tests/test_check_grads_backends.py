"""check_grads on another backend: the derivatives under test run there, the finite differences run in
float64 on NumPy (the reference), so a backend's kernels are checked against the host."""

import numpy as np
import pytest

import tensorlib as tl


@pytest.fixture
def strict():
    pytest.importorskip("array_api_strict")
    return tl.backends.get("array_api_strict")


def _recording(calls):
    def f(x, y):
        calls.append((x.backend.name, x.dtype, y.backend.name, y.dtype, tl.backends.current().name))
        return tl.sum(tl.sin(x) * y)

    return f


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_numeric_reference_runs_in_float64_on_numpy(strict, dtype):
    calls = []
    x = tl.tensor(np.array([0.3, -1.1], dtype), backend="array_api_strict")
    y = tl.tensor(np.array([2.0, 0.5], dtype), backend="array_api_strict")
    tl.testing.check_grads(_recording(calls), [x, y], order=2)
    on_backend = {c for c in calls if c[0] == "array_api_strict"}
    on_numpy = {c for c in calls if c[0] == "numpy"}
    assert on_backend and on_numpy
    assert all(c[2] == "array_api_strict" for c in on_backend)
    # Every finite-difference evaluation: NumPy arguments, float64, new tensors made on NumPy too.
    assert on_numpy == {("numpy", np.dtype("float64"), "numpy", np.dtype("float64"), "numpy")}
    assert {c[1] for c in on_backend} == {np.dtype(dtype)}


def test_reference_backend_none_keeps_the_arguments_backend(strict):
    calls = []
    x = tl.tensor(np.array([0.3, -1.1]), backend="array_api_strict")
    tl.testing.check_grads(_recording(calls), [x, x], reference_backend=None)
    assert {c[0] for c in calls} == {"array_api_strict"}


def test_a_wrong_gradient_on_the_backend_is_caught_against_numpy(strict):
    op = tl.ops.defop("TestStrictCube", inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: x * x * x)
    tl.grad.register_gradient("TestStrictCube", lambda node, g: g * 2.0 * node.inputs[0] * node.inputs[0])
    x = tl.tensor(np.array([0.5, 1.5]), backend="array_api_strict")
    with pytest.raises(AssertionError, match=r"reverse-mode \(vjp\) derivative of TestStrictCube"):
        tl.testing.check_grads(op, [x], modes=("rev",))


def test_a_backend_consistent_with_itself_but_not_with_numpy_fails_the_check(strict):
    # On array_api_strict both the forward kernel (x**3 + x) and its gradient's kernel (3x**2 + 1) are
    # off the NumPy ones (x**3, 3x**2) yet agree with each other: differences taken on the backend
    # itself would pass them, the NumPy reference does not.
    cube = tl.ops.defop("TestStrictDrift", inputs=("x",), infer=lambda x: x)
    cube.kernel("numpy")(lambda x: x**3)
    cube.kernel("array_api_strict")(lambda x: x * x * x + x)
    slope = tl.ops.defop("TestStrictDriftSlope", inputs=("x",), infer=lambda x: x)
    slope.kernel("numpy")(lambda x: 3.0 * x * x)
    slope.kernel("array_api_strict")(lambda x: 3.0 * x * x + 1.0)
    tl.grad.register_gradient("TestStrictDrift", lambda node, g: g * slope(node.inputs[0]))
    tl.grad.not_differentiable("TestStrictDriftSlope")
    x = np.array([0.5, 1.5])
    tl.testing.check_grads(cube, [x], modes=("rev",))
    on_strict = tl.tensor(x, backend="array_api_strict")
    tl.testing.check_grads(cube, [on_strict], modes=("rev",), reference_backend=None)
    with pytest.raises(AssertionError, match=r"derivative of TestStrictDrift with respect to argument 0"):
        tl.testing.check_grads(cube, [on_strict], modes=("rev",))
