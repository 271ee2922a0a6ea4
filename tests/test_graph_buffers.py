"""The executor's buffer pool: kernels with ``out=`` write into buffers kept from run to run.

What must hold: results equal the allocating run's bit for bit; no result returned (or assigned to a
Variable) ever changes after it is returned, however it views a pooled intermediate; a view held
outside the plan makes the step allocate instead of overwriting it; concurrent runs stay correct;
after the first runs a pooled graph touches no new pages.
"""

import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph.executor import POOL_MIN_BYTES
from tensorlib.ops.registry import spec

ROWS = POOL_MIN_BYTES // (4 * 64) * 2  # float32 [ROWS, 64] intermediates are twice the pooling threshold


def _data(seed, shape=(ROWS, 64)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


W = _data(99, (64, 64)) / 8
B = _data(98, (64,))


def _mlp(x):
    h = tl.nn.relu(x @ W + B)
    g = tl.nn.relu(h @ W - B) * 2.0
    return g + h


def _reference(x):
    h = np.maximum(x @ W + B, 0)
    return np.maximum(h @ W - B, 0) * 2.0 + h


def _executable(f, *args):
    return f.get_graph(*args).optimize().executable()


def test_pooled_steps_share_buffers_and_match_the_allocating_run_bit_for_bit():
    f = tl.function(_mlp)
    x = _data(0)
    first = f(x).numpy()  # interpreted: every kernel allocates
    again = [f(x).numpy() for _ in range(3)]  # compiled: pooled
    for a in again:
        assert np.array_equal(a, first)
    np.testing.assert_allclose(first, _reference(x), rtol=1e-5, atol=1e-5)
    exe = _executable(f, x)
    plan = exe.plan_text()
    assert plan.count(" into b") == len(exe.buffer_of) >= 5
    assert len(exe._buffers) < len(exe.buffer_of)  # intermediates with disjoint lifetimes share a buffer
    buffer_of = {}
    in_place = []
    for line in plan.splitlines():
        if " into b" in line:
            out, rest = line.split(" = ")
            buffer_of[out] = rest.split(" into ")[1].split(";")[0]
            args = rest.split("(")[1].split(")")[0].split(", ")
            in_place += [line for a in args if buffer_of.get(a) == buffer_of[out]]
    assert any("Relu" in line for line in in_place)  # an elementwise kernel writes over its dying input


def test_returned_results_never_change_in_later_runs():
    def f(x):
        h = tl.tanh((x @ W) * 0.5)
        k = h * 3.0
        # views of pooled intermediates: a reshape, a transpose, a slice, and the values themselves
        return tl.reshape(k, (-1,)), tl.transpose(h), k[1:3], h + 1.0, tl.sum(k)

    traced = tl.function(f)
    inputs = [_data(seed) for seed in range(4)]
    results = [traced(x) for x in inputs]
    for x, got in zip(inputs, results):
        for e, g in zip(f(tl.tensor(x)), got):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-4)
    values = [r._value for got in results for r in got]
    exe = _executable(traced, inputs[0])
    # h and k are returned through views, so only the matmul and the scaling before them are pooled
    assert sorted(exe.steps[k].node.op_type for k in exe.buffer_of) == ["BatchMatMulV2", "Mul"]
    pool = exe._pool_ids
    assert all(id(v if v.base is None else v.base) not in pool for v in values)


def test_a_value_assigned_to_a_variable_is_never_a_pooled_buffer():
    v = tl.Variable(np.zeros((ROWS, 64), np.float32))

    @tl.function
    def step(x):
        h = tl.nn.relu(x @ W + B) * 2.0
        v.assign(h + 1.0)
        return tl.sum(h)

    seen = []
    for seed in range(3):
        x = _data(seed)
        step(x)
        seen.append((v.numpy().copy(), v._value))
        np.testing.assert_allclose(v.numpy(), np.maximum(x @ W + B, 0) * 2.0 + 1.0, rtol=1e-5, atol=1e-5)
    for value, raw in seen:
        assert np.array_equal(raw, value)  # an earlier value of the Variable was not overwritten
    exe = _executable(step, _data(0))
    assigned = next(s.inputs[1] for s in exe.steps if s.kernel is None)
    assert exe.buffer_of and not any(exe.steps[k].outputs[0] == assigned for k in exe.buffer_of)


@pytest.mark.parametrize("fed", ["argument", "capture"])
@pytest.mark.parametrize(
    "view",
    [
        lambda a: tl.reshape(a, (6,)),
        lambda a: tl.reshape(a[0:2], (6,)),
        lambda a: tl.reshape(tl.stop_gradient(a), (6,)),
        lambda a: tl.reshape(tl.cast(a, "float64"), (6,)),
    ],
)
def test_a_variable_assigned_a_view_of_a_callers_array_never_changes_with_that_array(view, fed):
    # Arguments and captures are fed by reference; a view of one assigned as it was let the Variable alias the
    # caller's array (direct feeds were copied, views of them were not).
    v = tl.Variable(np.zeros(6))
    captured = np.arange(6.0).reshape(2, 3)
    if fed == "argument":
        f = tl.function(lambda a: v.assign(view(a)))
    else:
        f = tl.function(lambda: v.assign(view(captured)))
    for call in range(3):  # the first (interpreted) run and compiled ones
        a = captured if fed == "capture" else np.arange(6.0).reshape(2, 3) + call
        f(a) if fed == "argument" else f()
        expected = a.ravel().copy()
        a[0, 0] = 99.0
        np.testing.assert_array_equal(v.numpy(), expected)


def test_a_view_kept_outside_the_plan_makes_the_step_allocate_instead():
    kept = []
    keep = tl.ops.defop("BufferTestKeep", inputs=("x",), infer=lambda x: tl.TensorSpec((), x.dtype))
    keep.kernel("numpy")(lambda x: kept.append(x[:2]) or np.asarray(x.sum(), x.dtype))
    tl.grad.not_differentiable("BufferTestKeep")
    f = tl.function(lambda x: keep(tl.nn.relu(x * 2.0)) + tl.sum(tl.nn.relu(x * 3.0)))
    inputs = [_data(seed) for seed in range(4)]
    for x in inputs:
        f(x)
    for x, view in zip(inputs, kept):  # what the kernel kept still holds its run's values
        np.testing.assert_array_equal(view, np.maximum(x[:2] * 2.0, 0))


def test_concurrent_runs_of_one_graph_give_each_caller_its_own_result():
    f = tl.function(_mlp)
    f(_data(0))
    f(_data(0))
    errors = []

    def worker(seed):
        for _ in range(5):
            x = _data(seed)
            got = f(x).numpy()
            if not np.allclose(got, _reference(x), rtol=1e-5, atol=1e-5):
                errors.append(seed)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _pages_touched(fn, runs):
    resource = pytest.importorskip("resource")  # POSIX only
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(runs):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / runs


def test_after_the_first_runs_a_pooled_graph_touches_no_new_pages():
    x = _data(0, (16 * ROWS, 64))  # 8 MiB intermediates: beyond malloc's reuse of freed blocks
    f = tl.function(lambda x: tl.sum(tl.nn.relu(tl.nn.relu(x * 2.0 + 1.0) * x - 1.0)))
    f(x)
    expected = np.maximum(np.maximum(x * 2.0 + 1.0, 0) * x - 1.0, 0).sum(dtype=np.float64)
    np.testing.assert_allclose(float(f(x)), expected, rtol=1e-4)  # the fused kernel shared between threads
    per_run = _pages_touched(lambda: f(x), 5)
    intermediate_pages = x.nbytes // 4096
    assert per_run < intermediate_pages / 8, f"{per_run} page faults per run"


def test_only_results_of_at_least_the_threshold_are_pooled():
    f = tl.function(lambda x: tl.exp(x) * 2.0 + 1.0)
    small = np.ones((POOL_MIN_BYTES // 4 - 1,), np.float32)
    large = np.ones((POOL_MIN_BYTES // 4,), np.float32)
    for x in (small, large, small, large):
        f(x)
    assert _executable(f, small).buffer_of == {}
    assert len(_executable(f, large).buffer_of) == 2  # Exp, then Mul in place (the Add is returned)


def test_an_elementwise_chain_runs_in_one_buffer_written_in_place():
    x = _data(0)
    f = tl.function(lambda x: tl.sum(tl.exp(tl.sin(x * 2.0) + 1.0) * 0.5))
    f(x)
    f(x)
    exe = _executable(f, x)
    assert len(exe.buffer_of) == 5 and len(exe._buffers) == 1 and exe._buffers[0].nbytes == x.nbytes


def test_a_value_read_twice_is_written_over_only_where_the_kernel_may_write_over_each_input():
    # ReluGrad(h, h) (the vjp of relu at its own output) may write over its features, never over dy: written in
    # place over h, the mask replaced dy before dy was read, and the result was the mask.
    def fn(x):
        y, vjp = tl.vjp(tl.nn.relu, x @ W)
        return vjp(y)[0] * 2.0

    f = tl.function(fn)
    x = _data(0)
    for _ in range(3):  # the allocating first run, then pooled ones
        np.testing.assert_allclose(f(x).numpy(), np.maximum(x @ W, 0) * 2.0, rtol=1e-5, atol=1e-5)
    exe = _executable(f, x)
    step = next(k for k, s in enumerate(exe.steps) if s.node.op_type == "ReluGrad")
    assert exe.steps[step - 1].node.op_type == "Relu"
    assert exe.buffer_of[step] != exe.buffer_of[step - 1]  # not into the buffer of h = Relu(...)


def test_no_step_writes_in_place_over_memory_another_input_views_in_another_layout():
    x = _data(0, (256, 256))

    def f(x):
        h = x * 2.0
        return tl.nn.relu(h + tl.transpose(h)) * 1.0 + 1.0  # h's buffer must not receive the fused result

    traced = tl.function(f)
    for _ in range(3):
        np.testing.assert_array_equal(traced(x).numpy(), f(tl.tensor(x)).numpy())
    exe = _executable(traced, x)
    fused = next(k for k, s in enumerate(exe.steps) if s.node.op_type == "AddActivation")
    scaled = next(k for k, s in enumerate(exe.steps) if s.node.op_type == "Mul")
    assert exe.buffer_of[fused] != exe.buffer_of[scaled]


def test_a_traced_training_step_returns_fresh_gradients_every_step():
    rng = np.random.default_rng(5)
    params = [
        tl.Variable(rng.standard_normal((3, 3, 1, 8)).astype(np.float32) * 0.3),
        tl.Variable(rng.standard_normal(8).astype(np.float32) * 0.1),
        tl.Variable(rng.standard_normal((8 * 8 * 8, 64)).astype(np.float32) * 0.05),  # its gradient: 128 KiB
    ]

    def loss_and_grads(x):
        with tl.GradientTape() as tape:
            h = tl.nn.relu(tl.nn.conv2d(x, params[0], strides=1, padding="SAME") + params[1])  # 128 KiB
            h = tl.nn.max_pool(h, ksize=2, strides=2, padding="VALID")
            loss = tl.mean(tl.square(tl.reshape(h, (16, -1)) @ params[2]))
        return loss, tape.gradient(loss, params)

    step = tl.function(loss_and_grads)
    inputs = [rng.standard_normal((16, 16, 16, 1)).astype(np.float32) for _ in range(4)]
    results = [step(x) for x in inputs]  # all kept while later steps run
    assert _executable(step, inputs[0]).buffer_of  # the step does write into pooled buffers
    for x, (loss, grads) in zip(inputs, results):
        want_loss, want_grads = loss_and_grads(tl.tensor(x))
        np.testing.assert_allclose(loss.numpy(), want_loss.numpy(), rtol=1e-5)
        for g, w in zip(grads, want_grads):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)


def _split_op_with_out_kernel(name, calls):
    """A custom two-output op, ``(x * 0.5, x + 1)``, whose kernel into ``out=`` records what it was given."""
    split = tl.ops.defop(name, inputs=("x",), infer=lambda x: (spec(x.shape, x.dtype),) * 2)
    split.kernel("numpy")(lambda x: (x * 0.5, x + 1.0))

    @split.out_kernel("numpy")
    def split_into(x, *, out):
        calls.append(tuple(None if o is None else o.shape for o in out))
        half, plus = (np.empty_like(x) if o is None else o for o in out)
        return np.multiply(x, 0.5, out=half), np.add(x, 1.0, out=plus)

    return split


def test_a_multi_output_step_writes_each_pooled_result_into_its_own_buffer():
    calls = []
    split = _split_op_with_out_kernel("PooledSplit", calls)

    def f(x):
        half, plus = split(tl.exp(x))
        return half * plus - 1.0

    traced = tl.function(f)
    x = _data(3)
    first = traced(x).numpy()  # interpreted: allocates
    assert calls == []
    again = [traced(x).numpy() for _ in range(3)]
    assert calls == [((ROWS, 64), (ROWS, 64))] * 3  # both results written into the pool
    for a in again:
        assert np.array_equal(a, first)
    np.testing.assert_allclose(first, np.exp(x) * 0.5 * (np.exp(x) + 1.0) - 1.0, rtol=1e-5)
    exe = _executable(traced, x)
    step = next(k for k, s in enumerate(exe.steps) if s.node.op_type == "PooledSplit")
    half, plus = exe.buffer_of[step]
    assert half != plus  # both results live at once: never one buffer
    assert f"into (b{half}, b{plus})" in exe.plan_text()


def test_a_returned_result_of_a_multi_output_step_is_not_pooled_and_never_overwritten():
    calls = []
    split = _split_op_with_out_kernel("ReturnedSplit", calls)

    def f(x):
        half, plus = split(x * 2.0)
        return plus, half * 3.0  # plus is returned: it must be fresh memory every run

    traced = tl.function(f)
    inputs = [_data(seed) for seed in (4, 5, 6, 7)]
    results = [traced(x) for x in inputs]
    assert calls[-1] == ((ROWS, 64), None)
    exe = _executable(traced, inputs[0])
    step = next(k for k, s in enumerate(exe.steps) if s.node.op_type == "ReturnedSplit")
    assert exe.buffer_of[step][1] is None and f"into (b{exe.buffer_of[step][0]}, -)" in exe.plan_text()
    for x, (plus, tripled) in zip(inputs, results):
        np.testing.assert_array_equal(plus.numpy(), x * 2.0 + 1.0)
        np.testing.assert_array_equal(tripled.numpy(), x * 2.0 * 0.5 * 3.0)


def test_a_multi_output_step_allocates_a_result_whose_buffer_is_viewed_outside_the_plan():
    calls = []
    split = _split_op_with_out_kernel("KeptSplit", calls)

    class Keeper:
        def __init__(self):
            self.kept = []

        def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
            if op.name == "KeptSplit":
                self.kept.append([(t, t.numpy().copy()) for t in outputs])

    traced = tl.function(lambda x: tl.add(*split(x - 1.0)))
    rng = np.random.default_rng(8)
    traced(_data(9))
    keeper = Keeper()
    tl.dispatch.observers.append(keeper)
    try:
        for _ in range(3):
            traced(rng.standard_normal((ROWS, 64)).astype(np.float32))
    finally:
        tl.dispatch.observers.remove(keeper)
    traced(_data(10))
    assert None in calls[-1]  # a result the observer keeps is not overwritten: that one is allocated
    for outputs in keeper.kept:
        for tensor, copy in outputs:
            assert np.array_equal(tensor.numpy(), copy)
