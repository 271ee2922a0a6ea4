"""Backends: a second backend registered from user code (a NumPy wrapper that counts what kernels
call), kernel dispatch by backend, generic kernels bound to the backend's xp, tensors carrying their
backend, mixing errors, tl.set_backend and ``with tl.backend(...)``; CuPy where a GPU is present."""

import collections

import numpy as np
import pytest

import tensorlib as tl


class CountingNumpy:
    """NumPy's namespace, counting every function a kernel looks up in it."""

    def __init__(self):
        self.calls = collections.Counter()

    def __getattr__(self, name):
        self.calls[name] += 1
        return getattr(np, name)


class CountingBackend(tl.backends.Backend):
    def __init__(self):
        super().__init__("counting", CountingNumpy())


COUNTING = CountingBackend()


@pytest.fixture(autouse=True, scope="module")
def _counting_registered():
    # Registered for this module only: later tests and doctests must not see it.
    with tl.testing.isolated_registries():
        tl.backends.register(COUNTING)
        yield


@pytest.fixture
def calls():
    COUNTING.xp.calls.clear()
    return COUNTING.xp.calls


def test_registering_a_backend_makes_it_available_by_name():
    assert "counting" in tl.backends.names()
    assert tl.backends.get("counting") is COUNTING
    assert tl.backends.register(COUNTING) is COUNTING  # idempotent for the same object
    with pytest.raises(ValueError, match="a backend named 'counting' is already registered"):
        tl.backends.register(CountingBackend())
    with pytest.raises(ValueError, match=r"unknown backend 'nope'; registered: \[.*'counting'.*'numpy'"):
        tl.backends.get("nope")


def test_with_backend_creates_tensors_there_and_generic_kernels_use_its_xp(calls):
    with tl.backend("counting") as b:
        assert b is COUNTING and tl.backends.current() is COUNTING
        x = tl.tensor([0.5, 1.0])
        y = tl.exp(x)
        z = tl.zeros((2,))
    assert tl.backends.current() is tl.backends.numpy
    assert x.backend is COUNTING and y.backend is COUNTING and z.backend is COUNTING
    assert calls["exp"] == 1  # Exp's generic kernel ran with COUNTING.xp
    np.testing.assert_allclose(y.numpy(), np.exp([0.5, 1.0]).astype(np.float32))
    n = tl.exp(tl.tensor([0.5]))
    assert n.backend is tl.backends.numpy and calls["exp"] == 1  # NumPy tensors still run on NumPy


def test_ops_follow_their_inputs_backend_not_the_default(calls):
    x = tl.tensor([1.0, 2.0], backend="counting")
    assert tl.backends.current() is tl.backends.numpy
    y = tl.sum(tl.sqrt(x) * 2.0)
    assert y.backend is COUNTING and calls["sqrt"] == 1 and calls["sum"] == 1
    assert "counting" in repr(y)


def test_a_backend_specific_kernel_wins_over_the_generic_one(calls):
    op = tl.ops.defop("TestBackendTwice", inputs=("x",), infer=lambda x: x)
    seen = []

    @op.generic
    def twice_generic(xp, x):
        seen.append("generic")
        return xp.multiply(x, 2)

    @op.kernel("counting")
    def twice_counting(x):
        seen.append("counting")
        return x * 2

    assert op(tl.tensor([1.0], backend="counting")).numpy().tolist() == [2.0]
    assert op(tl.tensor([1.0])).numpy().tolist() == [2.0]
    assert seen == ["counting", "generic"] and calls["multiply"] == 0
    name, where = op.kernel_source("counting")
    assert name.endswith("twice_counting") and where.startswith(__file__)


def test_an_op_without_a_kernel_for_the_backend_says_how_to_add_one():
    op = tl.ops.defop("TestBackendNumpyOnly", inputs=("x",), infer=lambda x: x)
    op.kernel("numpy")(lambda x: x + 1)
    with pytest.raises(
        LookupError,
        match=r"TestBackendNumpyOnly: no kernel for backend 'counting' \(kernels: "
        r"numpy; it runs on NumPy only and never copies through the host\); "
        r"register one with "
        r"tl.ops.get\('TestBackendNumpyOnly'\).kernel\('counting'\)",
    ):
        op(tl.tensor([1.0], backend="counting"))


def test_mixing_backends_in_one_op_raises():
    a, b = tl.tensor([1.0, 2.0]), tl.tensor([1.0, 2.0], backend="counting")
    with pytest.raises(
        ValueError,
        match=r"Add: inputs are on different backends \(inputs x: shape \(2,\) "
        r"float32, y: shape \(2,\) float32; backends numpy, counting\); move "
        r"them with tl.tensor\(x, backend=...\)",
    ):
        tl.add(a, b)
    with pytest.raises(ValueError, match="BatchMatMulV2: inputs are on different backends"):
        tl.matmul(tl.ones((2, 2)), tl.tensor(np.ones((2, 2)), backend="counting"))
    assert (tl.tensor(a, backend="counting") + b).backend is COUNTING  # moved explicitly: fine


def test_set_backend_changes_the_default_until_changed_back():
    try:
        assert tl.set_backend("counting") is COUNTING
        assert tl.ones((1,)).backend is COUNTING and tl.arange(3).backend is COUNTING
        with tl.backend("numpy"):
            assert tl.ones((1,)).backend is tl.backends.numpy
        assert tl.tensor(1.0).backend is COUNTING
    finally:
        tl.set_backend("numpy")
    assert tl.ones((1,)).backend is tl.backends.numpy


def test_with_backend_restores_the_default_after_an_error():
    with pytest.raises(RuntimeError):
        with tl.backend("counting"):
            raise RuntimeError("boom")
    assert tl.backends.current() is tl.backends.numpy


def test_gradients_run_on_the_inputs_backend(calls):
    x = tl.tensor(np.array([0.3, -1.2]), backend="counting")
    g = tl.grad(lambda x: tl.sum(tl.sin(x) * x))(x)
    assert g.backend is COUNTING and calls["cos"] >= 1  # Sin's rule calls Cos there
    np.testing.assert_allclose(g.numpy(), np.cos([0.3, -1.2]) * [0.3, -1.2] + np.sin([0.3, -1.2]))
    tl.testing.check_grads(lambda x: tl.sum(tl.tanh(x) ** 2), [x], order=2)


def test_variables_live_on_a_backend_and_reject_values_from_another():
    v = tl.Variable(np.array([1.0, 2.0]), name="w", backend="counting")
    assert v.backend is COUNTING
    v.assign_add(np.array([1.0, 1.0]))
    assert v.backend is COUNTING and v.numpy().tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match="Variable.assign: value is on backend numpy, variable 'w' on counting"):
        v.assign(tl.tensor(np.array([0.0, 0.0])))


def _cupy_or_skip():
    try:
        backend = tl.backends.get("cupy")
        import cupy

        cupy.zeros(1)  # a device must be present
    except Exception as e:  # noqa: BLE001  (no CuPy, no cupy backend, or no GPU)
        pytest.skip(f"CuPy backend unavailable: {type(e).__name__}: {e}")
    return backend


def test_core_ops_and_gradients_on_cupy_match_numpy():
    _cupy_or_skip()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))

    def f(x, y):
        return tl.sum(tl.tanh(tl.matmul(x, y)) * 2.0) + tl.sum(tl.einsum("ij,jk->ik", x, y) ** 2)

    gpu = [tl.tensor(a, backend="cupy"), tl.tensor(b, backend="cupy")]
    value, grads = tl.value_and_grad(f, argnums=(0, 1))(*gpu)
    value_cpu, grads_cpu = tl.value_and_grad(f, argnums=(0, 1))(tl.tensor(a), tl.tensor(b))
    assert value.backend.name == "cupy" and all(g.backend.name == "cupy" for g in grads)
    np.testing.assert_allclose(value.numpy(), value_cpu.numpy(), rtol=1e-10)
    for g, c in zip(grads, grads_cpu):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-10)
