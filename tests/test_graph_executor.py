"""The executor: compiled plans, feed validation, observers (profiler, numerics), run-time errors."""

import numpy as np
import pytest

import tensorlib as tl


def test_the_plan_is_straight_line_code_with_kernels_bound_once():
    f = tl.function(lambda x: tl.sum(tl.exp(x) * 2.0, axis=0))
    x = np.ones((2, 3), np.float32)
    out = f(x)
    np.testing.assert_allclose(out.numpy(), 2 * np.exp(x).sum(0), rtol=1e-6)
    f(x)  # the second run uses the compiled plan
    exe = f.get_graph(x).optimize().executable()
    calls = [line.split(";")[0] for line in exe.plan_text().splitlines()]
    assert calls == ["v2 = Exp(v0)", "v3 = Mul(v2, c1)", "v4 = Sum(v3)", "return v4"]
    assert [step[1] for step in exe._program] == [tl.ops.get(t).kernels["numpy"] for t in ("Exp", "Mul", "Sum")]
    assert "fix" not in exe.plan_text()  # these kernels return what their shape rules promise


def test_kernel_results_get_the_promised_type_and_dtype():
    f = tl.function(lambda x: (tl.sum(x), tl.sum(x, axis=0)))
    for _ in range(2):  # first (checked) and compiled runs
        total, per_column = f(np.ones((2, 2), np.float32))
        assert type(total._value) is np.ndarray and total.dtype == np.float32 and total.shape == ()
        assert per_column.dtype == np.float32 and per_column.numpy().tolist() == [2.0, 2.0]
    plan = f.get_graph(np.ones((2, 2), np.float32)).optimize().executable().plan_text()
    assert plan.count("fix type") == 1  # only the full reduction returns a NumPy scalar


def test_feeds_are_checked_against_the_placeholders():
    graph = tl.function(lambda x, y: x @ y).get_graph(
        tl.TensorSpec((None, 3), "float64"), tl.TensorSpec((3, 2), "float64")
    )
    assert graph(np.ones((4, 3)), np.ones((3, 2))).shape == (4, 2)
    with pytest.raises(TypeError, match=r"takes 2 tensor arguments \(x, y\), got 1"):
        graph(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"argument 0 \(x\) must be float64\[\?, 3\], got float64\[4, 2\]"):
        graph(np.ones((4, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"argument 1 \(y\) must be float64\[3, 2\], got float32\[3, 2\]"):
        graph(np.ones((4, 3)), np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="unknown capture 'w'; its captures are none"):
        graph(np.ones((4, 3)), np.ones((3, 2)), w=np.ones(2))
    with pytest.raises(TypeError, match="TensorSpec arguments are for get_graph"):
        tl.function(lambda x: x)(tl.TensorSpec((2,)))


def test_captures_can_be_overridden_by_name():
    table = np.arange(300.0)
    f = tl.function(lambda i: tl.take(table, i))
    graph = f.get_graph(np.array([1, 2]))
    assert graph(np.array([1, 2])).numpy().tolist() == [1.0, 2.0]
    assert graph(np.array([1, 2]), table=-table).numpy().tolist() == [-1.0, -2.0]
    with pytest.raises(ValueError, match=r"capture 'table' must be float64\[300\], got float64\[2\]"):
        graph(np.array([1, 2]), table=np.ones(2))


def test_profiler_sees_every_graph_node_with_concrete_tensors():
    f = tl.function(lambda x: tl.nn.relu(x @ x.T) + 1.0)
    x = np.random.default_rng(0).standard_normal((3, 2))
    expected = np.maximum(x @ x.T, 0) + 1.0
    with tl.profile() as prof:
        out = f(x)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    graph = f.get_graph(x).optimize()
    assert [e.op_type for e in prof.events] == [n.op_type for n in graph.nodes]
    assert {e.mode for e in prof.events} == {"graph"}
    assert prof.events[1].input_shapes == ((3, 2), (2, 3))


def _halving_op_with_out_kernel(name, calls):
    """A custom op whose kernel into ``out=`` (the executor's pooled buffers) records its calls."""
    halve = tl.ops.defop(name, inputs=("x",), infer=lambda x: x)
    halve.kernel("numpy")(lambda x: x * 0.5)

    @halve.out_kernel("numpy")
    def halve_into(x, *, out):
        calls.append(out.shape)
        return np.multiply(x, 0.5, out=out)

    return halve


def test_profiled_runs_time_the_compiled_plan_with_its_pooled_buffers():
    calls = []
    halve = _halving_op_with_out_kernel("ProfiledHalve", calls)
    f = tl.function(lambda x: halve(tl.exp(x)) + 1.0)
    x = np.random.default_rng(1).standard_normal((256, 128)).astype(np.float32)  # 128 KiB: pooled
    f(x)  # the first run interprets (allocating) and learns the plan
    assert calls == []
    with tl.profile() as prof:
        results = [f(x).numpy() for _ in range(2)]
    assert calls == [(256, 128)] * 2  # profiled runs wrote into the pooled buffer, as unprofiled runs do
    nodes = [n.op_type for n in f.get_graph(x).optimize().nodes]
    assert [e.op_type for e in prof.events] == nodes * 2
    assert {e.mode for e in prof.events} == {"graph"}
    assert all(e.seconds > 0 for e in prof.events)
    halves = [e for e in prof.events if e.op_type == "ProfiledHalve"]
    assert all(e.kernel.endswith("halve_into") and e.input_shapes == ((256, 128),) for e in halves)
    for r in results:
        np.testing.assert_allclose(r, np.exp(x) * 0.5 + 1.0, rtol=1e-6)


def test_an_observer_keeping_pooled_results_never_sees_them_overwritten():
    halve = _halving_op_with_out_kernel("KeptHalve", [])

    class Keeper:
        def __init__(self):
            self.kept = []

        def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
            if op.name == "KeptHalve":
                self.kept.append((outputs, outputs.numpy().copy()))

    f = tl.function(lambda x: halve(x * 3.0) - 1.0)
    rng = np.random.default_rng(2)
    f(rng.standard_normal((256, 128)).astype(np.float32))
    keeper = Keeper()
    tl.dispatch.observers.append(keeper)
    try:
        for _ in range(3):
            f(rng.standard_normal((256, 128)).astype(np.float32))
    finally:
        tl.dispatch.observers.remove(keeper)
    f(rng.standard_normal((256, 128)).astype(np.float32))
    for tensor, copy in keeper.kept:
        assert np.array_equal(tensor.numpy(), copy)


def test_numerics_checks_name_the_node_and_where_it_was_traced():
    f = tl.function(lambda x: tl.log(x) * 2.0)
    f(np.ones(2))
    with tl.debugging.enable_check_numerics(), np.errstate(invalid="ignore"):
        with pytest.raises(tl.debugging.NumericsError, match="Log produced") as info:
            f(np.array([1.0, -1.0]))
    assert "while running node Log" in "\n".join(info.value.__notes__)


def test_a_kernel_error_at_run_time_names_the_node_and_its_trace_site():
    f = tl.function(lambda x, i: tl.take(x, i) * 2.0)
    assert f(np.arange(3.0), np.array([2])).numpy().tolist() == [4.0]
    with pytest.raises(IndexError, match="index 5 is out of bounds") as info:
        f(np.arange(3.0), np.array([5]))
    note = "\n".join(info.value.__notes__)
    assert "while running node GatherV2(%0: float64[3], %1: int64[1]) of graph '<lambda>'" in note
    assert "test_graph_executor.py" in note


def test_a_graph_called_inside_another_trace_is_inlined():
    graph = tl.function(lambda x: tl.exp(x) + 1.0).get_graph(tl.TensorSpec((2,), "float64"))
    h = tl.function(lambda x: graph(x) * 2.0)
    x = np.array([0.0, 1.0])
    np.testing.assert_allclose(h(x).numpy(), (np.exp(x) + 1.0) * 2.0)
    assert [n.op_type for n in h.get_graph(x).nodes] == ["Exp", "Add", "Mul"]


_bad_ops = iter(range(10**6))


@pytest.mark.parametrize(
    "kernel,infer,got",
    [
        (lambda x: None, lambda x: x, r"returned None, but the op's shape rule gives shape \(2,\) float64\n"),
        (
            lambda x: x[:1] * 2.0,
            lambda x: x,
            r"returned shape \(1,\) float64, but the op's shape rule gives shape \(2,",
        ),
        (lambda x: x.astype(np.int64), lambda x: x, r"returned shape \(2,\) int64, but the op's shape rule gives"),
        (lambda x: (x * 2.0,), lambda x: (x, x), r"returned 1 results, but the op's shape rule gives 2 outputs"),
        (lambda x: (x * 2.0, x[:1]), lambda x: (x, x), r"returned shape \(1,\) float64, but the op's shape rule"),
    ],
)
def test_a_traced_kernel_disagreeing_with_its_shape_rule_raises_as_in_eager(kernel, infer, got):
    op = tl.ops.defop(f"ExecutorBadKernel{next(_bad_ops)}", inputs=("x",), infer=infer)
    op.kernel("numpy")(kernel)
    f = tl.function(lambda x: op(x * 1.5))
    x = np.ones(2)
    with pytest.raises(tl.dispatch.KernelResultError, match=rf"^{op.name}: kernel .*<lambda> {got}") as traced:
        f(x)
    assert f"while running node {op.name}(" in "\n".join(traced.value.__notes__)
    with pytest.raises(tl.dispatch.KernelResultError) as eager:
        op(tl.tensor(x * 1.5))
    assert str(eager.value) == str(traced.value)  # the same message, traced and eager


def test_a_kernel_result_of_another_width_is_fitted_as_in_eager():
    op = tl.ops.defop(f"ExecutorWideKernel{next(_bad_ops)}", inputs=("x",), infer=lambda x: x)
    op.kernel("numpy")(lambda x: x.astype(np.float64) * 2.0)
    f = tl.function(lambda x: op(x))
    x = np.ones(2, np.float32)
    for _ in range(2):  # the checked first run and the compiled runs
        out = f(x)
        assert out._value.dtype == np.float32 and out.numpy().tolist() == [2.0, 2.0]
    assert "fix type" in f.get_graph(x).optimize().executable().plan_text()


@pytest.mark.parametrize("bad", [complex(np.nan, 0.0), complex(0.0, np.inf), complex(-np.inf, 1.0)])
def test_numerics_checks_see_nan_and_inf_in_complex_values(bad):
    x = tl.tensor(np.array([1 + 1j, bad]))
    with pytest.raises(tl.debugging.NumericsError, match=r"CheckNumerics: c: tensor had (NaN|Inf).*complex128"):
        tl.debugging.check_numerics(x, "c")
    with pytest.raises(tl.debugging.NumericsError, match=r"CheckNumerics: c"):
        tl.function(lambda v: tl.debugging.check_numerics(v, "c"))(x)
    with tl.debugging.enable_check_numerics(), np.errstate(all="ignore"):
        with pytest.raises(tl.debugging.NumericsError, match=r"Log produced -?Inf|Log produced NaN"):
            tl.log(tl.tensor(np.array([1j, 0j])))
    tl.debugging.check_numerics(tl.tensor(np.array([1 + 1j, -2j])), "fine")  # finite complex values pass


def test_a_numerics_check_block_leaves_an_outer_enable_on():
    tl.debugging.enable_check_numerics()
    try:
        with tl.debugging.enable_check_numerics():
            pass
        with pytest.raises(tl.debugging.NumericsError, match="Log produced NaN"), np.errstate(invalid="ignore"):
            tl.log(tl.tensor([-1.0]))  # still checked: the block restored the state before it
    finally:
        tl.debugging.disable_check_numerics()
    with np.errstate(invalid="ignore"):
        assert np.isnan(tl.log(tl.tensor([-1.0])).numpy()).all()  # off after disable
