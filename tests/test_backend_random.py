"""Random draws come from the backend's own generator under one seed API (``tl.random.seed``, ``seed=``).

NumPy keeps its exact PCG64 streams; a backend that overrides ``random_generator``/``random`` (CuPy:
``cupy.random``) draws with its own generator and never converts host arrays; the host backends
without random numbers of their own (array_api_strict: the standard has none) draw NumPy's stream
and convert it.
"""

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends.base import Backend


class _Stream:
    """A generator that records every draw (a stand-in for ``cupy.random.Generator``)."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.default_rng(None if seed is None else seed + 1000)  # not NumPy's stream
        self.calls = []


class _DeviceLike(Backend):
    """A backend with a generator of its own whose draws must never go through ``asarray`` (the host)."""

    def __init__(self):
        super().__init__("device_like", np)
        self.streams = []

    def asarray(self, data, dtype=None):
        if getattr(self, "forbid_host", False):
            raise AssertionError("a draw went through the host (asarray)")
        return np.asarray(data, dtype=dtype)

    def random_generator(self, seed):
        stream = _Stream(seed)
        self.streams.append(stream)
        return stream

    def random(self, rng, distribution, shape, dtype, a=0.0, b=1.0):
        rng.calls.append((distribution, tuple(shape)))
        if distribution == "random":
            return rng.rng.random(shape, dtype=np.float32)
        if distribution == "normal":
            return (a + b * rng.rng.standard_normal(shape)).astype(dtype)
        return rng.rng.uniform(a, b, size=shape).astype(dtype)


@pytest.fixture
def device_like():
    backend = tl.backends.register(_DeviceLike())  # the conftest's isolation unregisters it afterwards
    backend.forbid_host = True
    return backend


def test_numpy_keeps_its_exact_streams():
    want = np.random.default_rng(3)
    np.testing.assert_array_equal(tl.random.normal((4,), seed=3, dtype="float64").numpy(), want.normal(0.0, 1.0, 4))
    tl.random.seed(11)
    rng = np.random.default_rng(11)
    a = tl.random.uniform((3,), 2.0, 5.0, dtype="float64")
    b = tl.random.normal((2,), 1.0, 0.5, dtype="float64")
    c = tl.random.uniform((5,), 0, 9, dtype="int64")
    np.testing.assert_array_equal(a.numpy(), rng.uniform(2.0, 5.0, size=3))
    np.testing.assert_array_equal(b.numpy(), rng.normal(1.0, 0.5, size=2))
    np.testing.assert_array_equal(c.numpy(), rng.integers(0, 9, size=5))
    gen = tl.random.Generator(4)
    rng = np.random.default_rng(4)
    np.testing.assert_array_equal(gen.permutation(6).numpy(), rng.permutation(6))
    np.testing.assert_array_equal(gen.bernoulli((5,), 0.3).numpy(), rng.random(size=5) < 0.3)


def test_draws_on_a_backend_come_from_its_generator_without_the_host(device_like):
    x = tl.random.normal((2, 3), 1.0, 2.0, seed=5, backend="device_like", dtype="float64")
    assert x.backend is device_like and x.shape == (2, 3)
    (stream,) = device_like.streams
    assert stream.seed == 5 and stream.calls == [("normal", (2, 3))]
    want = 1.0 + 2.0 * np.random.default_rng(1005).standard_normal((2, 3))
    np.testing.assert_allclose(x.numpy(), want)


def test_the_seed_api_reproduces_a_backends_stream(device_like):
    with tl.backend("device_like"):
        tl.random.seed(9)
        first = [tl.random.uniform((3,), dtype="float64").numpy() for _ in range(2)]
        tl.random.seed(9)
        again = [tl.random.uniform((3,), dtype="float64").numpy() for _ in range(2)]
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.array_equal(first[0], first[1])  # one stream, not a fresh one per draw
    # The global generator's NumPy stream is untouched by the device draws.
    tl.random.seed(9)
    np.testing.assert_array_equal(
        tl.random.uniform((3,), dtype="float64").numpy(), np.random.default_rng(9).uniform(size=3)
    )


def test_dropout_masks_come_from_the_backends_generator(device_like):
    device_like.forbid_host = False
    x = tl.tensor(np.ones((4, 5)), backend="device_like")
    device_like.forbid_host = True
    y = tl.nn.dropout(x, 0.5, seed=2)
    assert y.backend is device_like
    assert device_like.streams[-1].calls == [("random", (4, 5))]
    keep = np.random.default_rng(1002).random((4, 5), dtype=np.float32) >= 0.5
    np.testing.assert_array_equal(y.numpy(), keep * 2.0)


def test_traced_draws_on_a_backend_are_new_each_run(device_like):
    with tl.backend("device_like"):
        draw = tl.function(lambda: tl.random.normal((3,), dtype="float64"))
        tl.random.seed(1)
        a, b = draw().numpy(), draw().numpy()
    want = np.random.default_rng(1001)  # the device stream of seed 1, drawn on at every run
    np.testing.assert_allclose(a, want.standard_normal(3))
    np.testing.assert_allclose(b, want.standard_normal(3))


def test_strict_draws_numpys_stream_and_converts():
    pytest.importorskip("array_api_strict")
    x = tl.random.normal((3,), seed=4, dtype="float64", backend="array_api_strict")
    assert x.backend.name == "array_api_strict" and type(x._value).__module__.startswith("array_api_strict")
    np.testing.assert_array_equal(x.numpy(), np.random.default_rng(4).normal(size=3))
    y = tl.nn.dropout(tl.ones((2, 3), backend="array_api_strict"), 0.5, seed=8)
    keep = np.random.default_rng(8).random((2, 3), dtype=np.float32) >= 0.5
    np.testing.assert_array_equal(y.numpy(), keep * 2.0)


def test_unknown_distribution_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown distribution 'cauchy'"):
        tl.backends.numpy.random(np.random.default_rng(0), "cauchy", (2,), np.float64)


def test_initializers_draw_with_the_current_backends_generator(device_like):
    with tl.backend("device_like"):
        w = tl.initializers.kaiming_normal((4, 3), seed=6, dtype="float64")
        u = tl.initializers.glorot_uniform((4, 3), seed=6, dtype="float64")
    assert w.backend is device_like and u.backend is device_like
    assert [s.calls for s in device_like.streams] == [[("normal", (4, 3))], [("uniform", (4, 3))]]
    np.testing.assert_allclose(w.numpy(), np.sqrt(2.0 / 4) * np.random.default_rng(1006).standard_normal((4, 3)))
    # On NumPy: the same stream as before, NumPy's PCG64 of the seed.
    want = np.random.default_rng(6).normal(0.0, np.sqrt(2.0 / 4), size=(4, 3)).astype(np.float32)
    np.testing.assert_array_equal(tl.initializers.kaiming_normal((4, 3), seed=6).numpy(), want)


def test_cupy_backend_draws_poisson_counts_with_its_generator():
    # It raised NotImplementedError ("CuPy's generator has no Poisson draws"); cupy.random.Generator has
    # poisson(lam, size) (cuRAND, int64 counts) and takes lam only as a Python float or int, not np.float64.
    # NumPy's Generator has the same method: the backend's code path runs here without a GPU.
    from tensorlib.backends.cupy_backend import CupyBackend

    class _CupyLikeGenerator:
        def __init__(self):
            self.rng, self.lams = np.random.default_rng(5), []

        def poisson(self, lam, size):
            assert type(lam) in (float, int)  # CuPy raises TypeError for anything else
            self.lams.append(lam)
            return self.rng.poisson(lam, size=size)

    rng = _CupyLikeGenerator()
    counts = CupyBackend().random(rng, "poisson", (4000,), np.int64, np.float64(3.5))
    floats = CupyBackend().random(rng, "poisson", (2, 3), np.float32, 0.0)
    assert counts.dtype == np.int64 and counts.shape == (4000,) and rng.lams == [3.5, 0.0]
    assert abs(counts.mean() - 3.5) < 4 * (3.5 / 4000) ** 0.5 and abs(counts.var() - 3.5) < 0.4
    assert floats.dtype == np.float32 and not floats.any()
