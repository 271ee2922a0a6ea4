"""Graph mode's leftovers (tl.function, saved graphs), attacked as an adversary.

What it attacks, and against which references:
- threads: a traced function that updates Variables (assign_add, in the body and in a tl.cond branch), called
  from several threads at once, and mixed with eager assign_add in other threads, loses no update (the serial
  count is the reference; TF's AssignAddVariableOp is atomic per variable);
"""

import threading

import numpy as np
import pytest

import tensorlib as tl


def _run_threads(targets, timeout=60):
    errors = []

    def guard(target):
        def run():
            try:
                target()
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


@pytest.fixture
def often_switching_threads():
    import sys

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads between any two bytecodes: a lost update shows at once
    yield
    sys.setswitchinterval(old)


def test_traced_assign_add_from_several_threads_loses_no_update(often_switching_threads):
    counter = tl.Variable(np.zeros(3), name="counter")
    other = tl.Variable(np.zeros(()), name="other")

    @tl.function
    def step(d):
        counter.assign_add(d)
        tl.cond(tl.sum(d) > 0, lambda: other.assign_add(1.0), lambda: other.assign_sub(1.0))
        return counter + 0.0

    one = tl.tensor(np.ones(3))
    step(tl.tensor(np.zeros(3)))
    counter.assign(np.zeros(3))
    other.assign(0.0)
    calls, threads = 150, 4

    def traced():
        for _ in range(calls):
            step(one)

    def eager():
        for _ in range(calls):
            counter.assign_add(np.ones(3))

    _run_threads([traced] * threads + [eager])
    np.testing.assert_array_equal(counter.numpy(), np.full(3, calls * (threads + 1.0)))
    assert float(other.numpy()) == calls * threads
