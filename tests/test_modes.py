"""The mode protocol (issue 8): ``dispatch.Mode`` and the one way in and out of a mode, ``dispatch.in_mode``."""

import importlib
import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import dispatch
from tensorlib.graph.ir import Graph


class Recorder(dispatch.Mode):
    """A mode that builds a graph and logs every protocol call it gets."""

    def __init__(self):
        self.graph = Graph("recorded", tl.backends.current())
        self.events = []

    def bind(self, op, inputs, attrs, specs):
        self.events.append(("bind", op.name, tuple(tuple(t.shape) for t in inputs), dict(attrs), specs))
        outs = self.graph.add_node(op, inputs, attrs, specs)
        return outs if isinstance(specs, tuple) else outs[0]

    def convert(self, value, dtype, backend):
        self.events.append(("convert", value, dtype))
        return self.graph.add_constant(backend.asarray(value, dtype=dtype))

    def snapshot(self, var):
        self.events.append(("snapshot", var.name))
        return super().snapshot(var)

    def assign(self, var, value):
        self.events.append(("assign", var.name, tuple(value.shape)))
        return var

    def needs_value(self, t):
        self.events.append(("needs_value", tuple(t.shape)))

    def bound(self):
        return [e[1] for e in self.events if e[0] == "bind"]


def _state():
    st = dispatch.current_state()
    return list(st.modes), list(st.tapes)


def test_bind_gets_op_inputs_attrs_and_the_shape_rules_specs():
    x = tl.tensor(np.ones((2, 3), np.float32))
    with dispatch.in_mode(Recorder()) as mode:
        y = tl.sum(x * 2.0, axis=1)
    assert y._value is None and y.shape == (2,) and y.dtype == np.float32  # no kernel ran
    (convert, mul, total) = mode.events
    assert convert[0] == "convert" and convert[1] == 2.0 and convert[2] == np.float32
    assert mul[:3] == ("bind", "Mul", ((2, 3), ()))
    assert (mul[4].shape, mul[4].dtype) == ((2, 3), np.float32)
    assert total[:3] == ("bind", "Sum", ((2, 3),)) and total[3]["axis"] == 1
    assert (total[4].shape, total[4].dtype) == ((2,), np.float32)
    assert [n.op_type for n in mode.graph.nodes] == ["Mul", "Sum"] and mode.graph.nodes[-1].outputs[0] is y


def test_several_outputs_are_bound_as_a_tuple_of_specs():
    with dispatch.in_mode(Recorder()) as mode:
        w, v = tl.linalg.eigh(tl.tensor(np.eye(3)))
    ((_, name, shapes, _, specs),) = mode.events
    assert name == "SelfAdjointEigV2" and shapes == ((3, 3),)
    assert [(s.shape, s.dtype) for s in specs] == [((3,), np.float64), ((3, 3), np.float64)]
    assert (w.shape, v.shape) == ((3,), (3, 3)) and w._value is None and v._value is None


def test_convert_gets_the_callers_array_itself_with_its_dtype():
    data = np.arange(3.0)
    x = tl.tensor(np.ones(3, np.float32))
    with dispatch.in_mode(Recorder()) as mode:
        tl.add(x, data)
    (convert,) = [e for e in mode.events if e[0] == "convert"]
    assert convert[1] is data and convert[2] == np.float64
    assert mode.bound() == ["Cast", "Add"]  # float32 + float64 promotes, through the mode too


def test_snapshot_assign_and_needs_value_reach_the_mode():
    v = tl.Variable(np.ones(2), name="weights")
    with dispatch.in_mode(Recorder()) as mode:
        with tl.GradientTape() as tape:  # a tape opened inside the mode records the mode's nodes
            y = v * 3.0
        assert tape._nodes and tape._nodes[0].inputs[0] is v  # the base class snapshot: the Variable itself
        v.assign(tl.tensor(np.zeros(2)))
        with pytest.raises(TypeError, match=r"symbolic tensor .* has no value"):
            float(tl.sum(y))
    assert ("snapshot", "weights") in mode.events
    assert ("assign", "weights", (2,)) in mode.events
    assert ("needs_value", ()) in mode.events
    np.testing.assert_array_equal(v.numpy(), np.ones(2))  # the recorder kept the assignment to itself


def test_the_base_class_defaults():
    class Minimal(dispatch.Mode):
        def bind(self, op, inputs, attrs, specs):
            return inputs[0]

        def convert(self, value, dtype, backend):
            return tl.tensor(value, dtype=dtype)

    v = tl.Variable(np.ones(2), name="kept")
    mode = Minimal()
    assert mode.snapshot(v) is v and mode.needs_value(v) is None
    with dispatch.in_mode(mode):
        assert tl.exp(v) is v
        with pytest.raises(ValueError, match=r"^Variable.assign: variable 'kept' .* while a Minimal mode is active$"):
            v.assign(np.zeros(2))
    np.testing.assert_array_equal(v.numpy(), np.ones(2))


def test_a_mode_must_implement_bind_and_convert():
    class NoConvert(dispatch.Mode):
        def bind(self, op, inputs, attrs, specs):
            return inputs[0]

    with pytest.raises(TypeError, match=r"abstract method.*convert"):
        NoConvert()
    with pytest.raises(TypeError, match=r"^dispatch.in_mode: expected a dispatch.Mode, got list \[\]$"):
        with dispatch.in_mode([]):
            pass
    assert _state() == ([], [])


def test_leaving_restores_modes_and_tapes_also_on_an_exception():
    x = tl.tensor(np.array([0.5, 1.0]))
    mode = Recorder()
    with tl.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ZeroDivisionError):
            with dispatch.in_mode(mode):
                assert _state() == ([mode], [])  # the outer tape pauses: it must not record symbolic nodes
                tl.exp(x)
                1 / 0
        assert _state() == ([], [tape])
        y = tl.sum(tl.exp(x))  # eager again and recorded
    assert mode.bound() == ["Exp"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp([0.5, 1.0]))


def test_an_error_raised_by_the_mode_itself_restores_too():
    class Refuse(Recorder):
        def bind(self, op, inputs, attrs, specs):
            raise RuntimeError(f"no {op.name}")

    outer = Recorder()
    with dispatch.in_mode(outer):
        with pytest.raises(RuntimeError, match="^no Exp$"):
            with dispatch.in_mode(Refuse()):
                tl.exp(tl.tensor(1.0))
        assert _state() == ([outer], [])
        tl.exp(tl.tensor(1.0))
    assert outer.bound() == ["Exp"] and _state() == ([], [])


def test_nested_modes_the_innermost_gets_the_calls():
    outer, inner = Recorder(), Recorder()
    x = tl.tensor(np.ones(2))
    with dispatch.in_mode(outer):
        tl.exp(x)
        with dispatch.in_mode(inner):
            assert _state() == ([outer, inner], [])
            tl.sin(x)
            with dispatch.in_mode(outer):  # the same mode again, innermost now
                tl.cos(x)
            assert _state() == ([outer, inner], [])
            tl.tanh(x)
        tl.log(x)
    assert outer.bound() == ["Exp", "Cos", "Log"] and inner.bound() == ["Sin", "Tanh"]
    assert _state() == ([], [])


def test_a_mode_is_active_in_its_own_thread_only():
    mode = Recorder()
    entered, finished = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        entered.wait(10)
        seen["state"] = _state()
        seen["value"] = tl.exp(tl.tensor([0.0])).numpy()  # runs its kernel: no mode in this thread
        finished.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with dispatch.in_mode(mode):
        entered.set()
        assert finished.wait(10)
        y = tl.exp(tl.tensor([1.0]))
    thread.join()
    assert seen["state"] == ([], []) and seen["value"].tolist() == [1.0]
    assert mode.bound() == ["Exp"] and y._value is None


def test_tracing_and_explains_dry_run_are_modes():
    seen = []

    @tl.function
    def f(x):
        seen.append(dispatch.current_state().modes[-1])
        return tl.exp(x)

    f(tl.tensor(1.0))
    assert isinstance(seen[0], dispatch.Mode) and _state() == ([], [])
    explain = importlib.import_module("tensorlib.ops._explain")
    dry = explain._DryRun()
    nodes = dry.run(tl.nn.relu, tl.ones((2, 2)))
    assert isinstance(dry, dispatch.Mode) and nodes == dry.graph.nodes
    assert [n.op_type for n in nodes] == ["Relu"] and nodes[0].outputs[0].shape == (2, 2)


def test_tapes_paused_resumes_them_also_on_an_exception():
    x = tl.tensor(np.array([1.0, 2.0]))
    with tl.GradientTape() as outer, tl.GradientTape() as inner:
        outer.watch(x)
        inner.watch(x)
        with pytest.raises(KeyError):
            with dispatch.tapes_paused():
                assert _state() == ([], [])
                hidden = tl.exp(x)
                raise KeyError("boom")
        assert _state() == ([], [outer, inner])
        y = tl.sum(x * hidden)
    np.testing.assert_allclose(outer.gradient(y, x).numpy(), np.exp([1.0, 2.0]))  # hidden is a constant
    np.testing.assert_allclose(inner.gradient(y, x).numpy(), np.exp([1.0, 2.0]))
