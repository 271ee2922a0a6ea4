"""Contract: tapes, traces, observers, gradient overrides and `with tl.backend` belong to one thread (issue 7, 1)."""

import threading
import time

import numpy as np
import pytest

import tensorlib as tl


def _run_threads(targets, timeout=60):
    errors = []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported in the main thread
                errors.append(e)

        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def _train(seed, steps, barrier=None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(8, 3))
    y = rng.normal(size=(8, 1))
    w = tl.Variable(rng.normal(size=(3, 1)), name=f"w{seed}")
    b = tl.Variable(np.zeros(1), name=f"b{seed}")
    losses = []
    for _ in range(steps):
        with tl.GradientTape() as tape:
            if barrier is not None:
                barrier.wait()  # both threads record at the same time
            loss = tl.mean(tl.square(tl.matmul(x, w) + b - y))
            if barrier is not None:
                barrier.wait()
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)  # assigning while the other thread's tape records
        b.assign_sub(0.1 * gb)
        losses.append(float(loss))
    return losses, w.numpy().copy(), b.numpy().copy()


def test_two_threads_training_their_own_models_give_the_serial_results():
    serial = [_train(seed, 5) for seed in (1, 2)]
    barrier = threading.Barrier(2)
    results = {}
    _run_threads([lambda s=s: results.__setitem__(s, _train(s, 5, barrier)) for s in (1, 2)])
    for seed, expected in zip((1, 2), serial):
        got = results[seed]
        assert got[0] == expected[0]
        np.testing.assert_array_equal(got[1], expected[1])
        np.testing.assert_array_equal(got[2], expected[2])


def test_an_eager_thread_stays_eager_while_another_traces():
    tracing, eager_done = threading.Event(), threading.Event()
    seen = {}

    @tl.function
    def slow(x):
        tracing.set()
        assert eager_done.wait(30)  # the other thread runs its ops while this trace is open
        return x * 2.0

    def tracer():
        seen["traced"] = slow(tl.tensor([1.0, 2.0])).numpy().tolist()

    def eager():
        assert tracing.wait(30)
        y = tl.exp(tl.tensor([0.0, 1.0], dtype="float64")) + 1.0
        seen["eager"] = y.numpy().tolist()
        seen["symbolic"] = y.is_symbolic
        eager_done.set()

    _run_threads([tracer, eager])
    assert seen["traced"] == [2.0, 4.0]
    assert seen["symbolic"] is False
    np.testing.assert_allclose(seen["eager"], [2.0, np.e + 1.0], rtol=1e-15)
    assert [n.op.name for n in slow.get_graph(tl.tensor([1.0, 2.0])).nodes] == ["Mul"]


def test_an_eager_tape_in_one_thread_does_not_record_another_threads_ops():
    inside, other_done = threading.Event(), threading.Event()
    counts = {}

    def recorder():
        x = tl.tensor(3.0, dtype="float64")
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            inside.set()
            assert other_done.wait(30)
        counts["nodes"] = len(tape._nodes)
        counts["grad"] = float(tape.gradient(y, x))

    def other():
        assert inside.wait(30)
        v = tl.Variable(1.0, name="other_threads_variable")  # a tape in this thread would watch it
        for _ in range(5):
            v.assign(v * 2.0)
        counts["other"] = float(v)
        other_done.set()

    _run_threads([recorder, other])
    assert counts == {"nodes": 1, "grad": 6.0, "other": 32.0}


def test_a_gradient_override_in_one_thread_leaves_others_alone():
    entered, done = threading.Event(), threading.Event()
    grads = {}

    def overriding():
        with tl.grad.override({"Sin": lambda node, g: g * 0.0 + 100.0}):
            entered.set()
            assert done.wait(30)
            grads["override"] = float(tl.grad(tl.sin)(tl.tensor(0.0, dtype="float64")))

    def plain():
        assert entered.wait(30)
        grads["plain"] = float(tl.grad(tl.sin)(tl.tensor(0.0, dtype="float64")))
        done.set()

    _run_threads([overriding, plain])
    assert grads == {"override": 100.0, "plain": 1.0}


def test_check_numerics_in_one_thread_leaves_others_alone():
    enabled, done = threading.Event(), threading.Event()
    out = {}

    def checking():
        tl.debugging.enable_check_numerics()
        try:
            enabled.set()
            assert done.wait(30)
            with pytest.raises(Exception, match="Log"):
                tl.log(tl.tensor([-1.0]))
        finally:
            tl.debugging.disable_check_numerics()

    def plain():
        assert enabled.wait(30)
        with np.errstate(invalid="ignore"):
            out["value"] = tl.log(tl.tensor([-1.0])).numpy()
        done.set()

    _run_threads([checking, plain])
    assert np.isnan(out["value"]).all()


def test_a_backend_block_in_one_thread_leaves_others_alone():
    class Quiet(tl.backends.Backend):
        def __init__(self):
            super().__init__("contract_threads_quiet", np)

    quiet = (
        tl.backends.get("contract_threads_quiet")
        if "contract_threads_quiet" in tl.backends.names()
        else tl.backends.register(Quiet())
    )
    entered, done = threading.Event(), threading.Event()
    names = {}

    def scoped():
        with tl.backend(quiet):
            entered.set()
            assert done.wait(30)
            names["scoped"] = tl.zeros((1,)).backend.name

    def plain():
        assert entered.wait(30)
        names["plain"] = tl.zeros((1,)).backend.name
        done.set()

    _run_threads([scoped, plain])
    assert names == {"scoped": "contract_threads_quiet", "plain": "numpy"}
    assert tl.backends.current().name == "numpy"


def test_ten_threads_calling_a_new_function_at_once_trace_it_once():
    calls = []

    @tl.function
    def f(x):
        calls.append(threading.get_ident())
        time.sleep(0.05)  # a slow trace: the other threads arrive while it runs
        return tl.sin(x) * 2.0 + 1.0

    barrier = threading.Barrier(10)
    results = [None] * 10

    def call(i):
        barrier.wait()
        results[i] = f(tl.tensor([float(i), 0.5], dtype="float64")).numpy()

    _run_threads([lambda i=i: call(i) for i in range(10)])
    assert f.trace_count == 1 and len(calls) == 1
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, np.sin([float(i), 0.5]) * 2.0 + 1.0, rtol=1e-15)
