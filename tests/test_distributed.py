"""tl.distributed on a real dask LocalCluster: two worker processes on loopback, started here."""

import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import tensorlib as tl  # noqa: E402
from _helpers import local_cluster  # noqa: E402

# The workers cannot import this test module by name: send its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

TIMEOUT = 60  # seconds for any one computation; the machine is shared and can be slow


@pytest.fixture(scope="module")
def client():
    with local_cluster(2, "2GiB", timeout=TIMEOUT) as c:
        yield c


def seed_forward(x, w):
    y = tl.nn.conv2d(x, w, strides=1, padding="VALID")
    y = tl.nn.avg_pool(y, ksize=2, strides=2, padding="VALID")
    return tl.nn.relu(y)


def seed_data(n, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((n, 32, 32, 1)).astype(np.float32),
        rng.standard_normal((3, 3, 1, 6)).astype(np.float32),
    )


def seed_reference(x, w):
    return seed_forward(tl.tensor(x), tl.tensor(w)).numpy()


def worker_traces(client, token):
    """Per worker: how many graphs the shipped function with this token has traced there."""

    def count(token=token):
        shipped = tl.distributed._worker_cache.get(token)
        return None if shipped is None or shipped._function is None else shipped._function.trace_count

    return client.run(count)


def shipped_token(array):
    """The token of the function a map_blocks array's tasks run (the key of its scattered future)."""
    tasks = dict(array.__dask_graph__()).values()
    [future] = {a.key: a for t in tasks for a in getattr(t, "args", ()) if isinstance(a, distributed.Future)}.values()
    return future.result(timeout=TIMEOUT).token


# ---------------------------------------------------------------- import and errors (no cluster)
def test_import_tensorlib_does_not_import_dask():
    code = "import sys, tensorlib; assert not any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(os.path.dirname(__file__)))


def test_map_blocks_errors():
    x = da.from_array(np.ones((6, 2)), chunks=(3, 2))
    with pytest.raises(TypeError, match=r"map_blocks: x must be a dask array chunked along axis 0, got ndarray"):
        tl.distributed.map_blocks(tl.tanh, np.ones((6, 2)))
    with pytest.raises(
        ValueError,
        match=r"map_blocks: <lambda> maps a block of shape \(3, 2\) to shape \(\); "
        r"the output must have one row per input row",
    ):
        tl.distributed.map_blocks(lambda b: tl.sum(b), x)
    with pytest.raises(TypeError, match=r"map_blocks: <lambda> must return one Tensor per block, got a tuple"):
        tl.distributed.map_blocks(lambda b: (b, b), x)
    with pytest.raises(ValueError, match=r"data\[1\] has shape \(5, 2\) but the batch has 6 rows"):
        tl.distributed.map_blocks(lambda a, b: a + b, x, da.ones((5, 2)))
    with pytest.raises(TypeError, match=r"keyword argument 'b' is a dask array; pass the arrays to cut into blocks"):
        tl.distributed.map_blocks(lambda a, b: a + b, x, b=x)


def test_value_and_grad_errors():
    x = da.from_array(np.ones((4, 2)), chunks=(2, 2))
    loss = lambda p, x: tl.mean(x * p)  # noqa: E731
    with pytest.raises(
        TypeError,
        match=r"value_and_grad: data\[0\] must be a dask array chunked along axis 0, "
        r"got ndarray",
    ):
        tl.distributed.value_and_grad(loss, 1.0, np.ones((4, 2)))
    with pytest.raises(TypeError, match=r"parameter leaf 1 has dtype int64; gradients need float parameters"):
        tl.distributed.value_and_grad(lambda p, x: tl.mean(x * p[0]), [1.0, np.arange(2)], x)
    with pytest.raises(ValueError, match=r"data\[1\] has shape \(3,\) but the batch has 4 rows"):
        tl.distributed.value_and_grad(loss, 1.0, x, da.ones(3))
    with pytest.raises(TypeError, match=r"pass at least one dask array"):
        tl.distributed.value_and_grad(loss, 1.0)
    with pytest.raises(ValueError, match=r"data\[0\] has shape \(0, 2\): no rows to average the loss over"):
        tl.distributed.value_and_grad(loss, 1.0, da.ones((0, 2)))
    # Each was a raw IndexError, dask's message, a worker's "'int' object is not callable", or a message
    # that blamed a row count for unknown chunk sizes.
    with pytest.raises(ValueError, match=r"value_and_grad: data\[0\] must have a batch axis, got a 0-d array"):
        tl.distributed.value_and_grad(loss, 1.0, da.ones(()))
    with pytest.raises(ValueError, match=r"split_every must be an int >= 2 \(the fan-in of the sum's tree\), got 2.5"):
        tl.distributed.value_and_grad(loss, 1.0, x, split_every=2.5)
    with pytest.raises(TypeError, match=r"value_and_grad: expected a function, got int"):
        tl.distributed.value_and_grad(3, 1.0, x)
    with pytest.raises(
        TypeError, match=r"value_and_grad: parameter leaf 0 is a symbolic Tensor \(shape \(\), float32\)"
    ):
        tl.function(lambda w: tl.distributed.value_and_grad(loss, w, x)[0])(tl.tensor(1.0))
    with pytest.raises(ValueError, match=r"data\[0\] has unknown chunk sizes \(shape \(nan, 2\).*compute_chunk_sizes"):
        tl.distributed.value_and_grad(loss, 1.0, x[x[:, 0] > 0])
    with pytest.raises(ValueError, match=r"map_blocks: data\[0\] has unknown chunk sizes"):
        tl.distributed.map_blocks(tl.tanh, x[x[:, 0] > 0])
    with pytest.raises(TypeError, match=r"map_blocks: data\[1\] has dtype uint64, which tensorlib cannot hold"):
        tl.distributed.map_blocks(lambda a, b: a, x, da.ones(4, dtype=np.uint64, chunks=2))


def test_value_and_grad_loss_and_gradients_have_the_single_process_dtypes():
    # float32 parameters on float64 or int data give a float64 loss, float16 on float16 a float16 loss;
    # the partial sums were float32 whatever the loss, so the loss came back as float32, rounded.
    rng = np.random.default_rng(1)
    for pdtype, xdtype in [(np.float32, np.float64), (np.float32, np.int64), (np.float16, np.float16)]:
        xn = (rng.standard_normal((35, 3)) * 3).astype(xdtype)
        params = {"w": rng.standard_normal(3).astype(pdtype), "b": np.float32(0.5).astype(pdtype)}

        def loss_fn(p, x):
            return tl.mean(tl.square(tl.sum(x * p["w"], axis=1) + p["b"]))

        loss, grads = tl.distributed.value_and_grad(loss_fn, params, da.from_array(xn, chunks=(5, 3)))
        want_loss, want = tl.value_and_grad(loss_fn)(params, tl.tensor(xn))
        assert loss.dtype == want_loss.dtype, (pdtype, xdtype, loss.dtype, want_loss.dtype)
        rtol = 2e-3 if want_loss.dtype == np.float16 else 1e-12
        np.testing.assert_allclose(loss.numpy(), want_loss.numpy(), rtol=rtol)
        for k in params:
            assert grads[k].dtype == want[k].dtype == pdtype
            np.testing.assert_allclose(grads[k].numpy(), want[k].numpy(), rtol=2e-2 if pdtype == np.float16 else 1e-5)


def test_value_and_grad_takes_a_tl_function():
    # The loss_fn's tl.function (with its lock) was pickled whole: "cannot pickle '_thread.RLock' object".
    x = da.from_array(np.arange(6.0).reshape(6, 1), chunks=(4, 1))
    loss, g = tl.distributed.value_and_grad(tl.function(lambda p, x: tl.mean(x * p)), 2.0, x)
    assert float(loss) == 5.0 and float(g) == 2.5


def test_an_empty_block_is_not_given_to_f():
    # f ran on the empty blocks too: b / max(b) failed ("zero-size array to reduction operation maximum")
    # although every block with rows was fine.
    a = np.arange(1.0, 7.0).reshape(6, 1)
    y = tl.distributed.map_blocks(lambda b: b / tl.max(b), da.from_array(a, chunks=((0, 3, 0, 3), (1,))))
    assert y.chunks == ((0, 3, 0, 3), (1,))
    np.testing.assert_allclose(y.compute(), np.concatenate([a[:3] / 3, a[3:] / 6]), rtol=1e-15)


def test_functions_that_call_tl_grad_can_be_shipped():
    # tl.grad is a callable module: cloudpickle (and pickle) refused it, "cannot pickle '_CallableModule'
    # object", so no function using tl.grad(...) could be mapped.
    assert pickle.loads(pickle.dumps(tl.grad)) is tl.grad
    a = np.random.default_rng(5).standard_normal((7, 3))
    y = tl.distributed.map_blocks(lambda b: tl.grad(lambda z: tl.sum(tl.tanh(z)))(b), da.from_array(a, chunks=(3, 3)))
    np.testing.assert_allclose(y.compute(), 1 - np.tanh(a) ** 2, rtol=1e-12)


def test_local_scheduler_uses_the_values_at_the_call_as_a_cluster_does():
    # Without a client the tasks held the caller's closures and arrays: changed between map_blocks and
    # compute, the local result used the new values and a cluster's the old ones.
    w, v = np.ones(2), tl.Variable(np.ones(2))
    x = da.from_array(np.zeros((5, 2)), chunks=(2, 2))
    y = tl.distributed.map_blocks(lambda b, w: b + w + v, x, w)
    w[:] = 5.0
    v.assign(np.full(2, 7.0))
    np.testing.assert_array_equal(y.compute(), np.full((5, 2), 2.0))


def test_without_a_cluster_dask_local_scheduler_runs_the_same_code():
    import dask

    with dask.config.set(scheduler="threads"):
        a = np.random.default_rng(9).standard_normal((50, 3))
        xd = da.from_array(a, chunks=(20, 3))
        y = tl.distributed.map_blocks(lambda b, s: tl.sin(b) * s, xd, 2.0)
        np.testing.assert_allclose(y.compute(), np.sin(a) * 2.0, rtol=1e-12)
        # An empty block adds nothing (the mean loss of zero rows would be NaN).
        xe = da.concatenate([xd[:0], xd])
        loss, g = tl.distributed.value_and_grad(lambda p, x: tl.mean(tl.sum(x * p, axis=1) ** 2), np.ones(3), xe)
        np.testing.assert_allclose(float(loss), np.mean(a.sum(1) ** 2), rtol=1e-12)
        np.testing.assert_allclose(g.numpy(), 2 * (a.sum(1)[:, None] * a).mean(0), rtol=1e-12)


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(tl.distributed, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 4 and result.failed == 0


def test_shipped_tensors_travel_as_values_and_slots_stay_slots():
    v = tl.Variable(np.arange(3.0), name="v")
    shipped = tl.distributed._shipped(lambda b: b * v, [tl.distributed._SLOT, tl.tensor([1.0, 2.0])], {}, "t")
    tl.distributed._worker_cache.pop(shipped.token, None)
    back = pickle.loads(pickle.dumps(shipped))
    assert back is not shipped and back.token == shipped.token
    assert back.args[0] is tl.distributed._SLOT and back.args[1].numpy().tolist() == [1.0, 2.0]
    assert back.function()(np.ones(3)).numpy().tolist() == [0.0, 1.0, 2.0]
    # A second copy of the same function in this process is the cached one, with its traced graph.
    assert pickle.loads(pickle.dumps(shipped)) is back


# ---------------------------------------------------------------- map_blocks on the cluster
def test_map_blocks_seed_forward_matches_single_process(client):
    xn, w = seed_data(400)
    x = da.from_array(xn, chunks=(120, 32, 32, 1))
    y = tl.distributed.map_blocks(seed_forward, x, w, client=client)
    assert y.shape == (400, 15, 15, 6) and y.chunks[0] == (120, 120, 120, 40) and y.dtype == np.float32
    got = client.compute(y).result(timeout=TIMEOUT)
    np.testing.assert_allclose(got, seed_reference(xn, w), rtol=1e-5, atol=1e-5)
    # Computing again reuses each worker's graphs: at most one trace per block size (120 and 40).
    client.compute(y).result(timeout=TIMEOUT)
    token = shipped_token(y)
    traces = worker_traces(client, token)
    assert sum(t or 0 for t in traces.values()) <= 4 and all((t or 0) <= 2 for t in traces.values()), traces


def test_map_blocks_sends_weights_once_per_worker_not_per_block(client):
    xn, _ = seed_data(400, seed=1)
    big = np.random.default_rng(2).standard_normal((3, 3, 1, 6)).astype(np.float32)
    pad = np.zeros(2_000_000, np.float32)  # 8 MB that the function closes over

    @tl.function
    def f(b):
        return seed_forward(b, big) + tl.sum(tl.tensor(pad[:1]))

    x = da.from_array(xn, chunks=(50, 32, 32, 1))
    cached = set(tl.distributed._worker_cache)
    y = tl.distributed.map_blocks(f, x, client=client)
    assert set(tl.distributed._worker_cache) == cached  # the client keeps no copy of the function's weights
    # The tasks name the function by its scattered key; the 8 MB travel inside that one object.
    assert len(cloudpickle.dumps(dict(y.__dask_graph__().layers[y.name]))) < pad.nbytes / 100
    np.testing.assert_allclose(client.compute(y).result(timeout=TIMEOUT), seed_reference(xn, big), rtol=1e-5, atol=1e-5)
    token = shipped_token(y)
    who_has = client.who_has()
    shipped_keys = [k for k in who_has if "_Shipped" in str(k)]
    # The same function mapped again is not sent again: the client reuses the scattered copy.
    y2 = tl.distributed.map_blocks(f, x, client=client)
    assert shipped_token(y2) == token
    assert [k for k in client.who_has() if "_Shipped" in str(k)] == shipped_keys
    assert f.trace_count == 0  # the caller's tl.function is untouched: workers trace their own copies
    assert all(t == 1 for t in worker_traces(client, token).values() if t is not None)


@pytest.mark.parametrize("open_dims", [(None, 4), (None, None)])
def test_map_blocks_with_an_open_input_signature_traces_once_for_every_block_size(client, open_dims):
    # The documented way to one trace per worker failed on the client: "maps a block of shape (3, 4)
    # to shape (None, 4); the output must have one row per input row".
    a = np.random.default_rng(6).standard_normal((11, 4))
    f = tl.function(lambda b: tl.tanh(b) * 2.0, input_signature=[tl.TensorSpec(open_dims, tl.float64)])
    y = tl.distributed.map_blocks(f, da.from_array(a, chunks=(3, 4)), client=client)  # blocks of 3, 3, 3, 2
    assert y.shape == (11, 4) and y.dtype == np.float64
    np.testing.assert_allclose(client.compute(y).result(timeout=TIMEOUT), np.tanh(a) * 2.0, rtol=1e-12)
    assert all((t or 0) <= 1 for t in worker_traces(client, shipped_token(y)).values())
    with pytest.raises(
        ValueError, match=r"maps a block of shape \(3, 4\) to shape \(6, 2\); the output must have one row"
    ):
        sig = [tl.TensorSpec(open_dims, tl.float64)]
        tl.distributed.map_blocks(tl.function(lambda b: tl.reshape(b, (-1, 2)), input_signature=sig), y, client=client)


def test_map_blocks_blocks_several_dask_arguments(client):
    a = np.random.default_rng(3).standard_normal((90, 4))
    b = np.random.default_rng(4).standard_normal((90,))
    y = tl.distributed.map_blocks(
        lambda a, s, b: tl.tanh(a) * s + tl.expand_dims(b, 1),
        da.from_array(a, chunks=(40, 4)),
        3.0,
        da.from_array(b, chunks=25),
        client=client,
    )
    assert y.chunks == ((40, 40, 10), (4,))
    np.testing.assert_allclose(client.compute(y).result(timeout=TIMEOUT), np.tanh(a) * 3.0 + b[:, None], rtol=1e-12)


# ---------------------------------------------------------------- data-parallel gradients
def cnn_loss(params, x, labels):
    h = tl.nn.relu(tl.nn.conv2d(x, params["conv"][0], strides=1, padding="SAME") + params["conv"][1])
    h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
    h = tl.reshape(h, (x.shape[0], -1))
    logits = h @ params["dense"]["w"] + params["dense"]["b"]
    return tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def cnn_problem(n, dtype, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8, 8, 1)).astype(dtype)
    labels = rng.integers(0, 3, n)
    params = {
        "conv": [(rng.standard_normal((3, 3, 1, 4)) * 0.5).astype(dtype), np.zeros(4, dtype)],
        "dense": {"w": (rng.standard_normal((64, 3)) * 0.2).astype(dtype), "b": np.full(3, 0.1, dtype)},
    }
    return x, labels, params


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_value_and_grad_equals_single_machine_gradient(client, dtype, rtol):
    x, labels, params = cnn_problem(230, dtype)
    # 10 uneven blocks, fan-in 3: a reduction tree of depth 3.
    xd = da.from_array(x, chunks=(23, 8, 8, 1))
    loss, grads = tl.distributed.value_and_grad(
        cnn_loss, params, xd, da.from_array(labels, chunks=50), client=client, split_every=3
    )
    want_loss, want = tl.value_and_grad(
        lambda *leaves: cnn_loss(
            {"conv": list(leaves[:2]), "dense": {"w": leaves[2], "b": leaves[3]}}, tl.tensor(x), tl.tensor(labels)
        ),
        argnums=(0, 1, 2, 3),
    )(params["conv"][0], params["conv"][1], params["dense"]["w"], params["dense"]["b"])
    assert loss.dtype == want_loss.dtype and loss.shape == ()
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=rtol)
    got = [grads["conv"][0], grads["conv"][1], grads["dense"]["w"], grads["dense"]["b"]]
    assert isinstance(grads["conv"], list) and set(grads["dense"]) == {"w", "b"}
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=rtol, atol=rtol * 1e-2)


def cnn_loss_traces(client):
    def count():
        return sum(
            s._function.trace_count
            for s in tl.distributed._worker_cache.values()
            if s._function is not None and "cnn_loss" in s._function.__name__
        )

    return client.run(count)


def test_value_and_grad_errors_from_the_workers_reach_the_caller(client):
    x = da.from_array(np.ones((4, 2)), chunks=(2, 2))
    with pytest.raises(TypeError, match=r"<lambda> must return the scalar loss .*, got a Tensor of shape \(2, 2\)"):
        tl.distributed.value_and_grad(lambda p, x: x * p, 1.0, x, client=client)


def test_failed_value_and_grad_leaves_nothing_on_the_cluster(client):
    # The failed key's exception held this call's frame, so its futures: every failed call kept its
    # parameters and all its partial sums on the workers (5 failures: 95 keys, ~P numbers each).
    x = da.from_array(np.arange(40.0).reshape(20, 2), chunks=(3, 2)).persist()  # the last block has 2 rows
    before = set(client.futures)

    def loss_fn(p, x):  # traces on the client (3 rows), fails on the worker's last block
        return tl.mean(x * p) if x.shape[0] == 3 else tl.mean(x @ tl.ones((3, 3)))

    for i in range(3):
        with pytest.raises(ValueError, match="BatchMatMulV2: inner dimensions do not match"):
            tl.distributed.value_and_grad(loss_fn, 2.0 + i, x, client=client)
    deadline = time.monotonic() + TIMEOUT
    while not set(client.futures) <= before | {k for k in client.futures if "_Shipped" in str(k)}:
        assert time.monotonic() < deadline, sorted(map(str, set(client.futures) - before))
        time.sleep(0.05)
    del x


def test_value_and_grad_traces_once_per_worker_across_steps(client):
    x, labels, params = cnn_problem(64, np.float32, seed=6)
    xd, yd = da.from_array(x, chunks=(16, 8, 8, 1)), da.from_array(labels, chunks=16)
    before = cnn_loss_traces(client)
    losses = []
    for _ in range(3):  # three SGD steps: parameters change, each worker's graph stays
        loss, grads = tl.distributed.value_and_grad(cnn_loss, params, xd, yd, client=client)
        losses.append(float(loss))
        params = {
            "conv": [p - 0.5 * g.numpy() for p, g in zip(params["conv"], grads["conv"])],
            "dense": {k: params["dense"][k] - 0.5 * grads["dense"][k].numpy() for k in ("w", "b")},
        }
    assert losses[2] < losses[0]
    after = cnn_loss_traces(client)
    assert all(after[w] - before.get(w, 0) <= 1 for w in after), (before, after)


# ---------------------------------------------------------------- out of core: the same path, small
def test_seed_forward_from_memory_mapped_npy(client, tmp_path):
    xn, w = seed_data(1500, seed=7)
    path = tmp_path / "x.npy"
    np.save(path, xn)
    x = tl.distributed.from_npy(path, rows_per_block=400)
    # Tasks carry the path, never the data.
    assert len(pickle.dumps(x.__dask_graph__())) < 20_000
    y = tl.distributed.map_blocks(seed_forward, x, w, client=client)
    total, head = client.compute([y.sum(dtype=np.float64), y[:50]], sync=True)
    want = seed_reference(xn, w)
    np.testing.assert_allclose(head, want[:50], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(total, want.sum(dtype=np.float64), rtol=1e-6)


def test_from_npy_errors(tmp_path):
    np.save(tmp_path / "s.npy", np.float64(1.0))
    with pytest.raises(ValueError, match=r"from_npy: .*s.npy holds a 0-d array; it needs a batch axis"):
        tl.distributed.from_npy(tmp_path / "s.npy", 2)
    np.save(tmp_path / "v.npy", np.ones(3))
    with pytest.raises(ValueError, match=r"rows_per_block must be >= 1, got 0"):
        tl.distributed.from_npy(tmp_path / "v.npy", 0)
    # int() truncated 2.7 to blocks of 2 rows, and took True for 1.
    for bad in (2.7, True, "2"):
        with pytest.raises(TypeError, match=r"from_npy: rows_per_block must be an int, got"):
            tl.distributed.from_npy(tmp_path / "v.npy", bad)
    np.savez(tmp_path / "z.npz", a=np.ones(3))  # was AttributeError: 'NpzFile' object has no attribute 'shape'
    with pytest.raises(ValueError, match=r"from_npy: .*z.npz is not a .npy file \(a NpzFile\)"):
        tl.distributed.from_npy(tmp_path / "z.npz", 2)


def test_from_npy_refuses_a_file_that_changed_shape_and_reads_big_endian_files(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.ones((4, 2)))
    x = tl.distributed.from_npy(path, 2)
    np.save(path, np.full((2, 2), 5.0))  # the blocks were laid out for 4 rows: x.compute() had 2
    with pytest.raises(ValueError, match=r"from_npy: .*x.npy changed since its dask array was made: it holds \(2, 2\)"):
        x.compute(scheduler="sync")
    # Big-endian data arrives in native byte order (map_blocks refused '>f8', which tensorlib cannot hold).
    np.save(path, np.arange(6.0, dtype=">f8").reshape(3, 2))
    x = tl.distributed.from_npy(path, 2)
    assert x.dtype == np.float64 and x.dtype.isnative
    y = tl.distributed.map_blocks(lambda b: b * 2.0, x).compute()
    assert y.dtype == np.float64 and y.tolist() == (np.arange(6.0).reshape(3, 2) * 2).tolist()


# ---------------------------------------------------------------- a worker dies mid-computation
def slow_copy(block):
    time.sleep(0.08)
    return block.copy()


def test_killed_worker_blocks_are_recomputed(client):
    xn, w = seed_data(320, seed=8)
    x = da.from_array(xn, chunks=(20, 32, 32, 1)).map_blocks(slow_copy)  # 16 blocks of >= 0.08 s each
    y = tl.distributed.map_blocks(seed_forward, x, w, client=client)
    future = client.compute(y)
    victim = sorted(client.scheduler_info()["workers"])[1]
    pid = client.run(os.getpid, workers=[victim])[victim]
    deadline = time.monotonic() + TIMEOUT
    while (
        client.run_on_scheduler(
            lambda dask_scheduler: sum(
                ts.state == "memory" and "run_block" in str(ts.key) for ts in dask_scheduler.tasks.values()
            )
        )
        < 3
    ):
        assert time.monotonic() < deadline and not future.done()
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    got = future.result(timeout=TIMEOUT)
    assert got.shape == (320, 15, 15, 6)
    np.testing.assert_allclose(got, seed_reference(xn, w), rtol=1e-5, atol=1e-5)
    assert victim not in client.scheduler_info()["workers"] or client.run(os.getpid).get(victim) != pid
