"""The user toolkit attacked as an adversary: ``tl.testing.check_grads`` must fail on deliberately wrong
gradients (registered here) and pass right ones at large magnitudes; ``tl.profile`` must record honestly.

References: float64 central differences, the closed-form derivatives of the functions checked, and
JAX's ``check_grads`` / torch's ``gradcheck`` semantics (an absolute plus relative tolerance on each
checked quantity).
"""

import json
import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import SampleInput, check_grads, opcheck


def _square_with(name, rule):
    """``x * x``, element by element, with the gradient ``rule(node, g)``."""
    op = tl.ops.defop(name, inputs=("x",), infer=lambda x: x)
    op.generic(lambda xp, x: x * x)
    tl.grad.register_gradient(name, rule)
    return op


def _wrong_in_the_last(shape, how):
    """A mask that is 1 everywhere but in the last element (or row) of ``shape``."""

    def rule(node, g):
        mask = np.ones(shape)
        mask[-1] = how
        return g * 2.0 * node.inputs[0] * tl.tensor(mask.astype(node.inputs[0].dtype))

    return rule


@pytest.mark.parametrize(
    "shape, dtype, how",
    [
        ((16,), np.float32, -1.0),  # a sign error in one element
        ((256,), np.float32, -1.0),
        ((4096,), np.float64, -1.0),
        ((4096,), np.float64, 2.0),  # a factor of 2 in one element
        ((16, 64), np.float32, 2.0),  # wrong for the last batch element only
    ],
)
def test_reverse_mode_catches_a_gradient_wrong_in_one_element_of_a_batch(shape, dtype, how):
    # d(x^2)/dx = 2x; the registered rule is wrong in the last element (or row) only.  With random
    # Gaussian directions and a tolerance summing |u_k (J v)_k| over the output, about one seed in
    # three let these pass; every seed must fail, naming the op and the argument.
    name = f"ToolsWrongInLast{'x'.join(map(str, shape))}{np.dtype(dtype).name}{'Sign' if how < 0 else 'Double'}"
    op = _square_with(name, _wrong_in_the_last(shape, how))
    x = np.random.default_rng(1).uniform(0.5, 1.5, shape).astype(dtype)
    for seed in range(6):
        with pytest.raises(
            AssertionError, match=rf"reverse-mode \(vjp\) derivative of {name} with respect to argument 0"
        ):
            check_grads(op, [x], modes=("rev",), seed=seed)


def test_reverse_mode_passes_right_gradients_of_large_outputs():
    # No false alarms from the tighter tolerance: right gradients of many-element float32 and float64 ops.
    rng = np.random.default_rng(2)
    right = _square_with("ToolsRightSquare", lambda node, g: g * 2.0 * node.inputs[0])
    for seed in range(3):
        for dtype in (np.float32, np.float64):
            check_grads(right, [rng.uniform(-2, 2, (64, 64)).astype(dtype)], modes=("rev",), seed=seed)
            check_grads(tl.tanh, [rng.standard_normal((64, 64)).astype(dtype)], seed=seed)
            a, b = rng.standard_normal((32, 48)).astype(dtype), rng.standard_normal((48, 24)).astype(dtype)
            check_grads(tl.matmul, [a, b], seed=seed)
            check_grads(lambda x: tl.nn.softmax(x, axis=-1), [rng.standard_normal((16, 40)).astype(dtype)], seed=seed)


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: x * 1e8, [1e8, 2e8]),
        (lambda x: x * x, [1e6, -3e6]),
        (lambda x: tl.sum(x * x), [1e-3, 1e8, -1.0]),
        (tl.sin, [1e5, -2e5]),
        (tl.log, [1e10, 3e12]),
    ],
)
def test_right_gradients_at_large_magnitudes_pass(f, x):
    # A fixed step of 1e-6 is below the float64 spacing at 1e8 and a percent of it at 1e6: the
    # rounded step made the numeric derivative of x * 1e8 at 1e8 come out 3% low, a false alarm.
    check_grads(f, [np.array(x)], order=2)


def test_a_wrong_gradient_at_large_magnitudes_still_fails():
    op = _square_with("ToolsSlightlyWrongSquare", lambda node, g: g * 2.001 * node.inputs[0])
    with pytest.raises(AssertionError, match="derivative of ToolsSlightlyWrongSquare with respect to argument 0"):
        check_grads(op, [np.array([1e6, -3e6, 2e7])])


def test_numpy_integer_sizes_are_sizes_in_ensure_shape_and_assert_shapes():
    # tf.ensure_shape(x, (np.int64(2), 3)) accepts NumPy integers (a size computed with np.prod); this
    # raised "a dimension must be a non-negative int".
    x = np.zeros((2, 3))
    assert tl.ensure_shape(x, (np.int64(2), np.int32(3))).shape == (2, 3)
    assert tl.debugging.assert_shapes([(x, ("N", np.prod([3])))])[0].shape == (2, 3)
    with pytest.raises(
        ValueError, match=r"EnsureShapes: dimension 1 of input 0 \(shape \(2, 3\), float64\) is 3, expected 4"
    ):
        tl.ensure_shape(x, (2, np.int64(4)))
    for bad in (True, np.int64(-1), 2.0):
        with pytest.raises(TypeError, match="tl.ensure_shape: a dimension must be a non-negative int"):
            tl.ensure_shape(x, (bad, 3))


# ---------------------------------------------------------------- tl.profile


def test_a_profile_entered_twice_is_refused_and_stops_recording_after_its_block():
    # Entering the same profile again in its block appended it twice to the observers: every op was
    # recorded twice, and after the block the profile stayed active, recording (and growing) forever.
    prof = tl.profile()
    with prof:
        with pytest.raises(RuntimeError, match="tl.profile: this profile is already recording in this thread"):
            prof.__enter__()
        tl.exp(tl.ones((2,)))
    tl.exp(tl.ones((2,)))
    assert [e.op_type for e in prof.events] == ["Exp"]
    with prof:  # entering it again after its block is fine: the events add up
        tl.exp(tl.ones((2,)))
    assert [e.op_type for e in prof.events] == ["Exp", "Exp"]


def test_annotations_nest_name_the_ops_inside_and_reach_the_chrome_trace(tmp_path):
    w = tl.Variable(np.ones((3, 2)))
    step = tl.function(lambda x: tl.sum(tl.tanh(x @ w)))
    with tl.profile() as prof:
        with tl.profiler.annotate("train"):
            with tl.profiler.annotate("forward"):
                step(np.ones((4, 3)))
            with pytest.raises(ValueError):
                with tl.profiler.annotate("bad"):
                    tl.matmul(np.ones((2, 3)), np.ones((2, 3)))
            tl.exp(tl.ones((2,)))
        tl.log(tl.ones((2,)))
    scopes = {(e.op_type, e.mode): e.scope for e in prof.events}
    assert scopes[("Tanh", "graph")] == "train/forward"
    assert scopes[("Exp", "eager")] == "train" and scopes[("Log", "eager")] == ""
    assert [(r.name, r.scope) for r in prof.ranges] == [
        ("forward", "train/forward"),
        ("bad", "train/bad"),
        ("train", "train"),
    ]
    outer, inner = prof.ranges[2], prof.ranges[0]
    assert outer.start_s <= inner.start_s and inner.start_s + inner.seconds <= outer.start_s + outer.seconds
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    rows = {e["args"]["name"]: e["tid"] for e in events if e["ph"] == "M"}
    boxes = [e for e in events if e["ph"] == "X" and e["tid"] == rows["annotations"]]
    assert sorted(b["name"] for b in boxes) == ["bad", "forward", "train"]
    for e in events:  # Chrome's trace event format: complete events carry these, in microseconds
        if e["ph"] == "X":
            assert {"name", "ph", "pid", "tid", "ts", "dur"} <= set(e) and e["dur"] >= 0
    with pytest.raises(TypeError, match="tl.profiler.annotate: name must be a str"):
        with tl.profiler.annotate(3):
            pass


# ---------------------------------------------------------------- tl.testing.isolated_registries


def test_isolated_registries_undo_out_kernels_and_generic_kernels_of_existing_ops():
    # Only op.kernels was restored: an out= kernel or a generic kernel registered on a built-in op
    # inside the block stayed after it (conftest wraps every test in the block, so it leaked into
    # every later test).
    exp = tl.ops.get("Exp")
    out_before, generic_before = dict(exp.out_kernels), exp.generic_kernel
    with tl.testing.isolated_registries():
        exp.out_kernel("numpy")(lambda x, *, out: np.multiply(x, 0.0, out=out))
        exp.generic(lambda xp, x: x * 0.0)
        exp.kernels_reason = "changed"
    assert exp.out_kernels == out_before and exp.generic_kernel is generic_before and exp.kernels_reason == ""
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(tl.function(lambda x: tl.exp(x) * 2.0)(x).numpy(), 2 * np.exp(x), rtol=1e-15)


def test_the_profile_names_the_conv_algorithm_the_numpy_kernel_picked(tmp_path):
    # The conv kernels choose shifted_gemm (<= 4 input channels), im2col_gemm (more channels, short
    # rows) or fourier_gemm (a large filter on a batch of small images) by conv2d_strategy's rules;
    # the profile said only "conv2d" (OpDef.strategy was set on the three conv ops and read nowhere).
    cases = [((2, 8, 8, 3), (3, 3, 3, 4), "shifted_gemm"), ((2, 8, 8, 16), (3, 3, 16, 16), "im2col_gemm")]
    cases += [((16, 16, 16, 8), (9, 9, 8, 8), "fourier_gemm"), ((0, 8, 8, 3), (3, 3, 3, 4), "")]
    for x_shape, w_shape, expected in cases:
        x, w = tl.Variable(np.ones(x_shape, np.float32)), tl.Variable(np.ones(w_shape, np.float32))
        with tl.profile() as prof:
            with tl.GradientTape() as tape:
                y = tl.sum(tl.nn.conv2d(x, w, 1, "SAME"))
            tape.gradient(y, [x, w])
        got = {e.op_type: e.strategy for e in prof.events if e.op_type.startswith("Conv2D")}
        assert got == dict.fromkeys(("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"), expected)
        if expected:
            assert f"conv2d [{expected}]" in prof.table()
            path = tmp_path / f"{expected}.json"
            prof.export_chrome_trace(path)
            events = json.loads(path.read_text())["traceEvents"]
            assert {e["args"]["strategy"] for e in events if e["name"].startswith("Conv2D")} == {expected}
    # A kernel the user registers says nothing about strategies: none is reported for it.
    with tl.testing.isolated_registries():
        tl.ops.get("Conv2D").kernel("numpy")(lambda x, w, **attrs: np.zeros((2, 8, 8, 4), np.float32))
        with tl.profile() as prof:
            tl.nn.conv2d(np.ones((2, 8, 8, 3), np.float32), np.ones((3, 3, 3, 4), np.float32), 1, "SAME")
    assert [(e.op_type, e.strategy) for e in prof.events] == [("Conv2D", "")]


@pytest.mark.parametrize(
    "setting, message",
    [
        ({"max_resamples": -1}, r"max_resamples must be >= 0 \(an int\), got -1"),
        ({"order": 1.5}, r"order must be >= 1 \(an int\), got 1.5"),
        ({"order": True}, r"order must be >= 1 \(an int\), got True"),
        ({"eps": 0.0}, r"eps must be a finite number > 0 \(or None\), got 0.0"),
        ({"eps": float("nan")}, r"eps must be a finite number > 0 \(or None\), got nan"),
        ({"atol": -1.0}, r"atol must be a finite number >= 0 \(or None\), got -1.0"),
        ({"rtol": float("nan")}, r"rtol must be a finite number >= 0 \(or None\), got nan"),
        ({"modes": "rev"}, r"modes must be a non-empty subset of \('rev', 'fwd'\), got 'rev'"),
    ],
)
def test_check_grads_settings_that_would_check_nothing_or_accuse_a_right_gradient_are_errors(setting, message):
    # max_resamples=-1 checked nothing, so even a wrong gradient passed; eps=0 or a negative atol
    # raised KinkError ("not differentiable") for sin; a NaN rtol said sin's gradient was wrong.
    wrong = _square_with("ToolsWrongForSettings", lambda node, g: g * 3.0 * node.inputs[0])
    for f in (tl.sin, wrong):
        with pytest.raises(ValueError, match="check_grads: " + message):
            check_grads(f, [np.array([0.3, 0.5])], **setting)
    check_grads(tl.sin, [np.array([0.3, 0.5])], atol=np.float32(1e-5), rtol=0, eps=np.float64(1e-6), order=np.int64(1))


# ---------------------------------------------------------------- tl.testing.opcheck


def test_opcheck_checks_the_gradients_of_complex_samples():
    # grad_dtypes defaulted to (float32, float64): with dtypes=(complex64, complex128) opcheck ran no
    # gradient check and passed a rule with a conjugate too many ("gradients": 0, nothing skipped).
    # For f(z) = z^2 the rule g * 2z is the right one (float64 central differences along the real
    # and imaginary parts, check_grads' convention, which is JAX's).
    def square(name, conjugate):
        op = tl.ops.defop(name, inputs=("x",), infer=lambda x: x)
        op.generic(lambda xp, x: x * x)
        tl.grad.register_gradient(name, lambda node, g: g * 2.0 * (conjugate(node.inputs[0])))
        return op

    samples = [SampleInput((np.array([0.5 + 0.2j, -1.0 + 1.0j]),))]
    complex_dtypes = (np.complex64, np.complex128)
    right = square("ToolsComplexRight", lambda z: z)
    assert opcheck(right, samples, ref=lambda z: z * z, dtypes=complex_dtypes)["gradients"] == 2
    wrong = square("ToolsComplexConjugated", tl.conj)
    with pytest.raises(AssertionError, match=r"derivative of ToolsComplexConjugated .* \(shape \(2,\), complex64\)"):
        opcheck(wrong, samples, ref=lambda z: z * z, dtypes=complex_dtypes)


def test_a_failure_for_complex_arguments_or_outputs_names_the_worst_element():
    # The element-by-element report ran for real arguments and real outputs only: a complex failure
    # said nothing about which element was wrong.  Here the rule for z^2 is 3x too large in element 2
    # (numeric: central differences along the real and imaginary parts, g = dL/dRe - 1j dL/dIm).
    mask = np.array([1.0, 1.0, 3.0, 1.0])
    op = _square_with("ToolsComplexWrongInOne", lambda node, g: g * 2.0 * node.inputs[0] * tl.tensor(mask))
    with pytest.raises(AssertionError) as info:
        check_grads(op, [np.array([0.5 + 0.2j, -1.0 + 1.0j, 0.3 - 0.7j, 2.0 + 0j])], modes=("rev",))
    worst = re.search(r"Worst element \(2,\): analytic (\S+) vs numeric (\S+) ", str(info.value))
    assert worst and abs(complex(worst[1]) / complex(worst[2]) - 3.0) < 1e-6
    # A complex output of a real argument: the rule's sign is wrong in element 2.
    rc = tl.ops.defop("ToolsRealToComplex", inputs=("x",), infer=lambda x: tl.TensorSpec(x.shape, np.complex128))
    rc.generic(lambda xp, x: x * x * (1 + 2j))
    sign = np.array([1.0, 1.0, -1.0])
    tl.grad.register_gradient(
        "ToolsRealToComplex", lambda node, g: tl.real(g * (1 + 2j)) * 2.0 * node.inputs[0] * tl.tensor(sign)
    )
    with pytest.raises(AssertionError) as info:
        check_grads(rc, [np.array([0.5, 1.0, 2.0])], modes=("rev",))
    worst = re.search(r"Worst element \(2,\): analytic (\S+) vs numeric (\S+) ", str(info.value))
    assert worst and abs(float(worst[1]) / float(worst[2]) + 1.0) < 1e-6


def test_a_profile_entered_in_two_threads_keeps_their_ops_on_separate_rows(tmp_path):
    # Profiles are per thread (DESIGN 6); entering the same one in a worker too recorded the worker's
    # ops on the same trace rows as the main thread's, where their boxes overlapped (Chrome draws a
    # row's complete events as one call stack) and nothing said which thread ran what.
    import threading

    prof = tl.profile()
    started, release = threading.Event(), threading.Event()

    def worker():
        with prof:
            with tl.profiler.annotate("load"):
                tl.log(tl.ones((3,)))
                started.set()
                release.wait(5)

    thread = threading.Thread(target=worker, name="loader")
    with prof:
        thread.start()
        started.wait(5)
        tl.exp(tl.ones((3,)))  # runs while the worker's "load" block is open
        release.set()
        thread.join()
    main = threading.current_thread().name
    assert sorted((e.op_type, e.thread) for e in prof.events) == [("Exp", main), ("Log", "loader")]
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    boxes = {e["name"]: names[e["tid"]] for e in events if e["ph"] == "X"}
    assert boxes == {
        "Exp": f"eager forward ({main})",
        "Log": "eager forward (loader)",
        "load": "annotations (loader)",
    }
