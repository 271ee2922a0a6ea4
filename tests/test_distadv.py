"""tl.distributed attacked as an adversary: the same computations done eagerly in one piece (tensorlib,
NumPy float64), block by block on dask's local scheduler and on a one-worker LocalCluster.

What it attacks: functions shipped by reference whose module changed (stale traces), parameter dtypes
against the single-process ``tl.value_and_grad``, data dtypes that eager tensorlib widens, dask arrays
nested in arguments, ``from_npy`` paths and dtypes, complex parameters, losses that are sums.
References: NumPy formulas in float64, eager ``tl.value_and_grad`` / eager calls of the function.
"""

import importlib
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import tensorlib as tl  # noqa: E402
from _helpers import central_differences, local_cluster  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])
TIMEOUT = 60


@pytest.fixture(scope="module")
def client():
    with local_cluster(1, "1GiB", timeout=TIMEOUT) as c:
        yield c


# ---------------------------------------------------------------- functions that live in a module
USERMOD = """
import tensorlib as tl
SCALE = {scale}

def helper(b):
    return b * SCALE + {shift}

def f(b):
    return helper(b)

def loss(p, x):
    return tl.mean(helper(x * p))
"""


def write_module(tmp_path, name, scale, shift):
    (tmp_path / f"{name}.py").write_text(USERMOD.format(scale=scale, shift=shift))


@pytest.fixture
def usermod(tmp_path, monkeypatch):
    name = f"distadv_usermod_{abs(hash(str(tmp_path)))}"
    write_module(tmp_path, name, 2.0, 0.0)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield module, (lambda scale, shift: write_module(tmp_path, name, scale, shift))
    sys.modules.pop(name, None)


def module_results(module, client=None):
    x = da.from_array(np.arange(1.0, 5.0).reshape(4, 1), chunks=2)
    y = tl.distributed.map_blocks(module.f, x, client=client)
    y = y.compute() if client is None else client.compute(y).result(timeout=TIMEOUT)
    loss, grad = tl.distributed.value_and_grad(module.loss, 1.0, x, client=client)
    return y.ravel().tolist(), float(loss), float(grad)


def eager_module_results(module):
    x = np.arange(1.0, 5.0).reshape(4, 1)
    loss, grad = tl.value_and_grad(module.loss)(1.0, tl.tensor(x))
    return module.f(tl.tensor(x)).numpy().ravel().tolist(), float(loss), float(grad)


def test_a_module_function_whose_module_changed_is_not_run_from_a_stale_trace(usermod, sync_scheduler):
    # Functions importable by name were pickled by reference: the token (the bytes' hash) stayed the same
    # when a global they read changed or their module was reloaded with new code, and the cached copy with
    # its old graph ran: [2, 4, 6, 8] after SCALE = 5, and again after the reload with "+ 100".
    module, rewrite = usermod
    assert module_results(module) == eager_module_results(module) == ([2.0, 4.0, 6.0, 8.0], 5.0, 5.0)
    module.SCALE = 5.0
    assert module_results(module) == eager_module_results(module) == ([5.0, 10.0, 15.0, 20.0], 12.5, 12.5)
    rewrite(3.0, 100.0)
    importlib.reload(module)
    assert module_results(module) == eager_module_results(module) == ([103.0, 106.0, 109.0, 112.0], 107.5, 7.5)


def test_a_function_from_a_module_the_workers_cannot_import_runs_there(usermod, client):
    # By reference, the worker had to import the module (not on its path: ModuleNotFoundError), and used
    # its own copy of the module's globals, not the caller's.
    module, _ = usermod
    module.SCALE = 4.0
    assert module_results(module, client) == eager_module_results(module) == ([4.0, 8.0, 12.0, 16.0], 10.0, 10.0)


def test_a_module_function_with_a_global_that_cannot_be_pickled_still_runs(tmp_path, monkeypatch, sync_scheduler):
    # Sent by value, its globals travel too; a lock cannot, so such a function goes by reference as before.
    name = f"distadv_lockmod_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(
        "import threading\nLOCK = threading.Lock()\n\ndef f(b):\n    with LOCK:\n        return b * 3.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    try:
        y = tl.distributed.map_blocks(module.f, da.from_array(np.arange(4.0), chunks=3)).compute()
    finally:
        sys.modules.pop(name, None)
    assert y.tolist() == [0.0, 3.0, 6.0, 9.0]


# ---------------------------------------------------------------- value_and_grad against one process
def test_python_number_parameters_have_the_dtypes_of_the_single_process_gradient(sync_scheduler):
    # A Python float parameter became a float64 array (np.asarray) where tl.value_and_grad makes it a
    # float32 tensor: on float32 data the loss came back float64 (eager float32), the gradient float64.
    rng = np.random.default_rng(3)
    for xdtype in (np.float32, np.float64):
        xn = rng.standard_normal((13, 2)).astype(xdtype)
        params = {"w": 2.0, "b": [0.5, -1.0]}

        def loss_fn(p, x):
            return tl.mean(tl.square(x * p["w"] + p["b"][0] - p["b"][1]))

        loss, grads = tl.distributed.value_and_grad(loss_fn, params, da.from_array(xn, chunks=(4, 2)))
        want_loss, want = tl.value_and_grad(loss_fn)(params, tl.tensor(xn))
        assert loss.dtype == want_loss.dtype == xdtype
        assert grads["w"].dtype == want["w"].dtype == grads["b"][0].dtype == np.float32
        # NumPy in float64: L = mean((w x + c)^2) with c = 1.5; dL/dw = mean(2 (w x + c) x), dL/db0 = mean(2 (w x + c))
        x64, r = xn.astype(np.float64), 2.0 * xn.astype(np.float64) + 1.5
        rtol = 1e-5 if xdtype == np.float32 else 1e-12
        np.testing.assert_allclose(float(loss), np.mean(r**2), rtol=rtol)
        np.testing.assert_allclose(float(grads["w"]), np.mean(2 * r * x64), rtol=1e-5)
        np.testing.assert_allclose(float(grads["b"][0]), np.mean(2 * r), rtol=1e-5)
        np.testing.assert_allclose(float(grads["b"][1]), -np.mean(2 * r), rtol=1e-5)


# ---------------------------------------------------------------- map_blocks against eager calls
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.uint32])
def test_map_blocks_takes_the_integer_dtypes_that_eager_tensorlib_widens(dtype, sync_scheduler):
    # tl.tensor widens uint8 images to int32 (uint32 to int64); map_blocks traced with the raw dtype:
    # "TypeError: tensorlib: dtype uint8 is not supported" from a TensorSpec, for data eager takes.
    a = np.arange(24).reshape(8, 3).astype(dtype)

    def f(b):
        return tl.cast(b, tl.float32) / 255.0 + tl.cast(b * 2, tl.float32)

    y = tl.distributed.map_blocks(f, da.from_array(a, chunks=(3, 3)))
    want = f(tl.tensor(a)).numpy()
    assert y.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(y.compute(), want)
    np.testing.assert_allclose(want, a.astype(np.float64) / 255.0 + 2.0 * a, rtol=1e-6)
    loss, g = tl.distributed.value_and_grad(
        lambda w, x, y: tl.mean((tl.cast(x, tl.float32) @ w - tl.cast(y, tl.float32)) ** 2),
        np.ones(3, np.float32),
        da.from_array(a, chunks=(3, 3)),
        da.from_array(a[:, 0], chunks=5),
    )
    r = a.astype(np.float64).sum(1) - a[:, 0]
    np.testing.assert_allclose(float(loss), np.mean(r**2), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), (2 * r[:, None] * a).mean(0), rtol=1e-6)


# ---------------------------------------------------------------- from_npy
def test_from_npy_reads_a_relative_path_after_the_working_directory_changed(tmp_path, monkeypatch):
    # The path was kept as given: after a chdir (or on a worker started elsewhere) every block raised
    # FileNotFoundError: 'x.npy'.
    a = np.arange(30.0).reshape(10, 3)
    np.save(tmp_path / "x.npy", a)
    monkeypatch.chdir(tmp_path)
    x = tl.distributed.from_npy("x.npy", 4)
    monkeypatch.chdir(tmp_path.parent)
    np.testing.assert_array_equal(x.compute(scheduler="sync"), a)


@pytest.mark.parametrize(
    "value",
    [
        np.zeros(4, dtype=[("a", "f8"), ("b", "i4")]),
        np.array(["ab", "c", "d"]),
        np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]"),
        np.arange(4, dtype=np.uint64),
    ],
    ids=["structured", "str", "datetime", "uint64"],
)
def test_from_npy_refuses_dtypes_tensorlib_cannot_hold(tmp_path, value):
    # They gave a dask array that every tensorlib function refused later, far from the file.
    np.save(tmp_path / "x.npy", value)
    with pytest.raises(TypeError, match=r"from_npy: .*x.npy has dtype .*, which tensorlib cannot hold \(supported:"):
        tl.distributed.from_npy(tmp_path / "x.npy", 2)


def test_map_blocks_cuts_dask_arrays_nested_in_arguments_into_the_same_blocks(sync_scheduler):
    # A dask array inside a dict or tuple argument was sent whole (its graph pickled with the function)
    # and f got all its rows with every block: "Mul: shapes (4, 3) and (10, 3) are not broadcastable".
    # The doc: the other dask arrays in args are cut into the same blocks along axis 0.
    rng = np.random.default_rng(7)
    a, b, c = rng.standard_normal((10, 3)), rng.standard_normal((10, 3)), rng.standard_normal((10,))
    x = da.from_array(a, chunks=(4, 3))

    def f(x, extra, scale):
        return x * extra["b"] + tl.expand_dims(extra["c"][0], 1) * scale

    y = tl.distributed.map_blocks(f, x, {"b": da.from_array(b, chunks=(3, 3)), "c": (da.from_array(c, chunks=5),)}, 2.0)
    assert y.chunks == ((4, 4, 2), (3,))
    np.testing.assert_allclose(y.compute(), a * b + c[:, None] * 2.0, rtol=1e-15)
    with pytest.raises(TypeError, match=r"map_blocks: keyword argument 'extra' holds a dask array; pass the arrays"):
        tl.distributed.map_blocks(lambda x, extra: x + extra["b"], x, extra={"b": x})


def test_value_and_grad_takes_complex_parameters_as_tl_value_and_grad_does(sync_scheduler):
    # "parameter leaf 0 has dtype complex128; gradients need float parameters", where the single-process
    # tl.value_and_grad differentiates a real loss of complex parameters (dL/dRe - i dL/dIm, as JAX).
    rng = np.random.default_rng(11)
    x = rng.standard_normal((17, 3)) + 1j * rng.standard_normal((17, 3))
    y = rng.standard_normal(17) + 1j * rng.standard_normal(17)
    w = np.array([0.5 - 1j, 2.0 + 0.25j, -1.0 + 0j])

    def loss_fn(p, x, y):
        r = x @ p["w"] - y
        return tl.mean(tl.real(r * tl.conj(r))) + p["s"] ** 2

    params = {"w": w, "s": 0.5}
    loss, g = tl.distributed.value_and_grad(
        loss_fn, params, da.from_array(x, chunks=(5, 3)), da.from_array(y, chunks=(4,)), split_every=2
    )
    want_loss, want = tl.value_and_grad(loss_fn)(params, tl.tensor(x), tl.tensor(y))
    assert loss.dtype == want_loss.dtype == np.float64 and g["w"].dtype == want["w"].dtype == np.complex128

    def numpy_loss(w):
        return np.mean(np.abs(x @ w - y) ** 2) + 0.25

    np.testing.assert_allclose(float(loss), numpy_loss(w), rtol=1e-12)
    d_re = central_differences(lambda re: numpy_loss(re + 1j * w.imag), w.real)
    d_im = central_differences(lambda im: numpy_loss(w.real + 1j * im), w.imag)
    np.testing.assert_allclose(g["w"].numpy(), d_re - 1j * d_im, rtol=1e-6)
    np.testing.assert_allclose(g["w"].numpy(), want["w"].numpy(), rtol=1e-12)
    np.testing.assert_allclose(float(g["s"]), 1.0, rtol=1e-6)


@pytest.mark.parametrize("chunks", [(6, 0, 7, 1), (14,), (1,) * 14])
def test_value_and_grad_of_a_sum_over_rows_with_reduction_sum(chunks, sync_scheduler):
    # A loss_fn that sums over its rows was weighted as a mean: sum_b n_b * S_b / N, neither the sum nor
    # the mean (2.86 where the sum is 15.77). reduction="sum" adds the blocks' losses and gradients.
    rng = np.random.default_rng(12)
    a = rng.standard_normal((14, 2))
    w = np.array([0.5, -2.0])

    def loss_fn(w, x):
        return tl.sum(tl.tanh(x @ w) ** 2)

    x = da.from_array(a, chunks=(chunks, 2))
    loss, g = tl.distributed.value_and_grad(loss_fn, w, x, reduction="sum", split_every=2)
    t = np.tanh(a @ w)
    np.testing.assert_allclose(float(loss), np.sum(t**2), rtol=1e-13)
    np.testing.assert_allclose(g.numpy(), (2 * t * (1 - t**2)) @ a, rtol=1e-13)
    want_loss, want = tl.value_and_grad(loss_fn)(w, tl.tensor(a))
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-13)
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-13)
    with pytest.raises(ValueError, match=r"value_and_grad: reduction must be 'mean' or 'sum', got 'max'"):
        tl.distributed.value_and_grad(loss_fn, w, x, reduction="max")


@pytest.mark.parametrize("split_every", [2, np.int64(3), np.int32(100)])
def test_value_and_grad_takes_numpy_integers_for_split_every(split_every, sync_scheduler):
    # np.int64(3) was refused: "split_every must be an int >= 2 ..., got np.int64(3)".
    a = np.arange(20.0).reshape(10, 2)
    loss, g = tl.distributed.value_and_grad(
        lambda w, x: tl.mean(x @ w), np.ones(2), da.from_array(a, chunks=(1, 2)), split_every=split_every
    )
    assert float(loss) == a.sum(1).mean() and g.numpy().tolist() == a.mean(0).tolist()
    with pytest.raises(ValueError, match=r"split_every must be an int >= 2 \(the fan-in of the sum's tree\), got"):
        tl.distributed.value_and_grad(
            lambda w, x: tl.mean(x @ w), np.ones(2), da.from_array(a, chunks=2), split_every=np.bool_(True)
        )


@pytest.mark.parametrize("split_every", [None, 1000])
def test_float32_partial_sums_are_combined_without_losing_precision(split_every, sync_scheduler):
    # dask's sum along axis 0 adds one float32 row after the other: over 500 one-row blocks (a flat tree,
    # split_every above the number of blocks) the loss 0.3 came back 0.3000015 (5e-6 off) and the
    # gradient alike, where NumPy's float32 mean (pairwise) is within an ulp. Each node of the tree now
    # adds in float64 and rounds once.
    a = np.full((500, 2), 0.3, np.float32)
    w = np.array([1.0, 1.0], np.float32)
    loss, g = tl.distributed.value_and_grad(
        lambda w, x: tl.mean(x @ w), w, da.from_array(a, chunks=(1, 2)), split_every=split_every
    )
    assert loss.dtype == g.dtype == np.float32
    exact = 2 * np.float64(np.float32(0.3))
    assert abs(float(loss) - exact) <= 2 * np.spacing(np.float32(exact)), float(loss)
    np.testing.assert_allclose(g.numpy(), [exact / 2] * 2, rtol=2 * np.finfo(np.float32).eps)
    # Eager's loss is within an ulp too (its gradient, a float32 GEMM over the 500 rows, is 1.5 ulps off).
    want_loss = tl.value_and_grad(lambda w, x: tl.mean(x @ w))(w, tl.tensor(a))[0]
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=2 * np.finfo(np.float32).eps)


def test_two_from_npy_arrays_of_one_file_with_other_blocks_do_not_share_dask_keys(tmp_path, sync_scheduler):
    # The dask name came from the path, size and mtime only: from_npy(p, 2) and from_npy(p, 3) had the same
    # keys for different blocks, and computing both at once mixed them: x3 came back with 8 rows (four
    # blocks of x2's 2 rows), x2 + x3 raised IndexError.
    a = np.arange(24.0).reshape(12, 2)
    np.save(tmp_path / "x.npy", a)
    x2, x3 = tl.distributed.from_npy(tmp_path / "x.npy", 2), tl.distributed.from_npy(tmp_path / "x.npy", 3)
    y3, y2 = dask.compute(tl.distributed.map_blocks(lambda b: b * 3.0, x3), x2 * 2.0)
    np.testing.assert_array_equal(y3, a * 3.0)
    np.testing.assert_array_equal(y2, a * 2.0)
    np.testing.assert_array_equal((x2 + x3).compute(), a * 2.0)
    # The same file with the same blocks is the same dask array (dask computes it once).
    assert tl.distributed.from_npy(tmp_path / "x.npy", 2).name == x2.name


def test_map_blocks_pickles_the_function_and_its_weights_once_per_call(monkeypatch, sync_scheduler):
    # dask named the tasks by pickling the shipped function (weights included) twice more per call
    # (tokenize): with 128 MB of weights a map_blocks call took 2.1 s, 0.36 s with its token as the name.
    w = np.random.default_rng(1).standard_normal((3, 3))
    x = da.from_array(np.arange(12.0).reshape(4, 3), chunks=(3, 3))
    dumps, calls = tl.distributed._dumps, []
    monkeypatch.setattr(tl.distributed, "_dumps", lambda *args: calls.append(1) or dumps(*args))

    def f(b):
        return b @ w

    y1 = tl.distributed.map_blocks(f, x)
    assert len(calls) == 1
    y2 = tl.distributed.map_blocks(lambda b: b @ w + 1.0, x)
    y3 = tl.distributed.map_blocks(f, x)
    # Task names still follow the content: another function, other names; the same one, the same.
    assert y1.name != y2.name and y1.name == y3.name
    r1, r2 = dask.compute(y1, y2)
    np.testing.assert_allclose(r1, x.compute() @ w, rtol=1e-14)
    np.testing.assert_allclose(r2, x.compute() @ w + 1.0, rtol=1e-14)


# ---------------------------------------------------------------- the caches
def test_the_shipped_function_caches_keep_a_bounded_number_of_bytes(monkeypatch, sync_scheduler):
    # The caches held the last 16 shipped functions whatever their size: map_blocks(f, x, w + i) in a loop
    # over 32 MB weights kept 16 copies (RSS +620 MB after 20 calls, none of them referenced any more).
    monkeypatch.setattr(tl.distributed, "CACHE_BYTES", 3_000_000)
    monkeypatch.setattr(tl.distributed, "_worker_cache", type(tl.distributed._worker_cache)())
    x = da.from_array(np.ones((6, 500)), chunks=(4, 500))

    def f(b, w):
        return b @ w

    w = np.random.default_rng(2).standard_normal((500, 500))  # 2 MB pickled
    for i in range(6):
        np.testing.assert_allclose(tl.distributed.map_blocks(f, x, w + i).compute(), np.ones((6, 500)) @ (w + i))
        assert len(tl.distributed._worker_cache) == 1
    # The newest stays however big, so the same call again reuses its graphs.
    [kept] = tl.distributed._worker_cache.values()
    traces = kept._function.trace_count
    tl.distributed.map_blocks(f, x, w + 5).compute()
    assert list(tl.distributed._worker_cache.values()) == [kept] and kept._function.trace_count == traces
    # Small functions are still kept up to CACHE_SIZE.
    for i in range(4):
        tl.distributed.map_blocks(lambda b, s: b * s, x, float(i)).compute()
    assert len(tl.distributed._worker_cache) == 5


CLASSMOD = """
import collections
import tensorlib as tl
FACTOR = {factor}
Params = collections.namedtuple("Params", "w b")

class Scale(tl.Module):
    def __init__(self, k):
        super().__init__()
        self.k = tl.Variable(k)

    def __call__(self, b):
        return b * self.k * FACTOR

def loss(p, x):
    return tl.mean((x * p.w + p.b) * FACTOR)
"""


def test_a_class_from_a_module_the_workers_cannot_import_travels_by_value(tmp_path, monkeypatch, client):
    # A model class in the user's own module was pickled by reference: the worker had to import the module
    # (ModuleNotFoundError), its methods read the worker's globals, and a changed global kept the old trace.
    name = f"distadv_classmod_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(CLASSMOD.format(factor=3.0))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    try:
        a = np.arange(1.0, 7.0).reshape(6, 1)
        x = da.from_array(a, chunks=4)
        for factor in (3.0, 5.0):
            module.FACTOR = factor
            y = tl.distributed.map_blocks(module.Scale(2.0), x, client=client)
            np.testing.assert_array_equal(client.compute(y).result(timeout=TIMEOUT), a * 2.0 * factor)
            with dask.config.set(scheduler="sync"):
                np.testing.assert_array_equal(
                    tl.distributed.map_blocks(module.Scale(2.0), x).compute(), a * 2.0 * factor
                )
            loss, g = tl.distributed.value_and_grad(
                module.loss, module.Params(np.float64(2.0), np.float64(1.0)), x, client=client
            )
            assert type(g) is module.Params
            np.testing.assert_allclose(float(loss), np.mean((a * 2.0 + 1.0) * factor), rtol=1e-15)
            np.testing.assert_allclose([float(g.w), float(g.b)], [np.mean(a) * factor, factor], rtol=1e-15)
    finally:
        sys.modules.pop(name, None)


SHIFT = 1.0


class AddShift:
    """A model class of the caller's (this module is pickled by value, as a script's __main__ is)."""

    def __call__(self, b):
        return b + SHIFT


def test_mapping_an_instance_leaves_its_class_alone(monkeypatch, sync_scheduler):
    # The local scheduler's copy was unpickled in the caller's process, where cloudpickle's class tracker
    # gave back the caller's own class and set the pickled copies of its methods on it: AddShift.__call__
    # was replaced by a copy whose globals were frozen at the call, so after SHIFT = 5 even the eager
    # AddShift()(x) gave x + 1, and so did every later map_blocks.
    call = AddShift.__call__
    a = np.zeros((3, 1))
    x = da.from_array(a, chunks=2)
    np.testing.assert_array_equal(tl.distributed.map_blocks(AddShift(), x).compute(), a + 1.0)
    assert AddShift.__call__ is call
    monkeypatch.setattr(sys.modules[__name__], "SHIFT", 5.0)
    np.testing.assert_array_equal(AddShift()(tl.tensor(a)).numpy(), a + 5.0)
    np.testing.assert_array_equal(tl.distributed.map_blocks(AddShift(), x).compute(), a + 5.0)


# ---------------------------------------------------------------- Variables as parameters
def test_variables_given_as_params_are_the_ones_the_loss_reads(sync_scheduler, client):
    # TF's style: the loss reads the model's Variables, which are also the params to differentiate.
    # tl.value_and_grad differentiates those very Variables; the workers got the params as new arrays
    # and the loss's Variables as other copies: gradient [0, 0] where eager gives [-8, -10] (and half of
    # it when the loss used both), silently.
    a = np.arange(1.0, 9.0).reshape(4, 2)
    v = tl.Variable(np.array([1.0, -1.0]), name="v")
    b = tl.Variable(0.5, name="b")

    def reads_variables(params, x):
        return tl.mean((x @ v + b) ** 2)

    def reads_both(params, x):
        return tl.mean((x @ params["v"]) * (x @ v) + b * params["b"])

    for loss_fn in (reads_variables, reads_both):
        params = {"v": v, "b": b}
        want_loss, want = tl.value_and_grad(loss_fn)(params, tl.tensor(a))
        for c in (None, client):
            for step in range(2):  # the second step after the Variables changed
                loss, g = tl.distributed.value_and_grad(loss_fn, params, da.from_array(a, chunks=3), client=c)
                np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-14)
                np.testing.assert_allclose(g["v"].numpy(), want["v"].numpy(), rtol=1e-14)
                np.testing.assert_allclose(float(g["b"]), float(want["b"]), rtol=1e-14)
                v.assign(v.numpy() * 0.5)
                want_loss, want = tl.value_and_grad(loss_fn)(params, tl.tensor(a))
        v.assign(np.array([1.0, -1.0]))
    # NumPy: L = mean((x v + b)^2), dL/dv = mean(2 r x), dL/db = mean(2 r).
    r = a @ np.array([1.0, -1.0]) + 0.5
    _, g = tl.distributed.value_and_grad(reads_variables, [v, b], da.from_array(a, chunks=3))
    np.testing.assert_allclose(g[0].numpy(), (2 * r[:, None] * a).mean(0), rtol=1e-14)
    np.testing.assert_allclose(float(g[1]), (2 * r).mean(), rtol=1e-14)


def test_a_function_that_reaches_a_module_of_the_caller_through_its_name_is_not_stale(usermod, sync_scheduler):
    # f reads the module as a global (import usermod; usermod.helper(b)): the module went by reference,
    # so f's bytes and token stayed the same after the module changed, and the old graph ran.
    module, rewrite = usermod

    def f(b):
        return module.helper(b) * 10.0

    x = da.from_array(np.arange(1.0, 5.0).reshape(4, 1), chunks=3)
    assert tl.distributed.map_blocks(f, x).compute().ravel().tolist() == [20.0, 40.0, 60.0, 80.0]
    module.SCALE = 5.0
    assert tl.distributed.map_blocks(f, x).compute().ravel().tolist() == [50.0, 100.0, 150.0, 200.0]
    rewrite(3.0, 100.0)
    importlib.reload(module)
    assert tl.distributed.map_blocks(f, x).compute().ravel().tolist() == [1030.0, 1060.0, 1090.0, 1120.0]
    assert module.SCALE == 3.0 and module.f(tl.tensor(np.ones(1))).numpy().tolist() == [103.0]


def test_a_loss_that_is_not_a_scalar_is_refused_naming_the_distributed_function_and_the_loss(sync_scheduler):
    # The error named tl.value_and_grad and "f" and suggested tl.vjp: "tl.value_and_grad: f must return a
    # scalar, got shape (2, 2); use tl.vjp or tl.jacobian for non-scalar outputs".
    x = da.from_array(np.ones((4, 2)), chunks=2)

    def per_row_loss(p, x):
        return tl.sum(x * p, axis=1)

    with pytest.raises(
        TypeError,
        match=r"tl.distributed.value_and_grad: per_row_loss must return the scalar loss of its batch "
        r"\(its mean, or its sum with reduction='sum'\), got a Tensor of shape \(2,\)",
    ):
        tl.distributed.value_and_grad(per_row_loss, 1.0, x)
    with pytest.raises(TypeError, match=r"value_and_grad: <lambda> must return the scalar loss .*, got tuple"):
        tl.distributed.value_and_grad(lambda p, x: (tl.mean(x * p), 1.0), 1.0, x)
