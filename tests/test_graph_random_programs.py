"""The optimizer, proven on random programs: optimized graph == unoptimized graph == eager, value and dtype.

Hypothesis draws straight-line programs over a pool of values: elementwise
ops, casts, reductions with attributes, reshapes and transposes, selects,
algebraic no-ops (x*1, x+0, x**1, casts to the same dtype), seeded random
draws and dropout, constants, repeated subexpressions (CSE candidates) and
near-duplicates that differ only in an attribute, additions feeding an
activation (the bias + activation fusion), and conv + average pool pairs with
non-square pools and strides (the conv/pool fusion), and
control flow: ``tl.cond``, ``tl.scan`` (reverse, unrolled, ``xs=None``) and
``tl.while_loop`` (bounded or not) whose branches and bodies are programs of the
same catalogue, nested two deep (the passes run inside them: a subgraph runs
optimized; values and dtypes, and gradients traced against eager).  Each input holds one NaN, inf,
-0.0, 0.0 or 1.0: NaN must stay NaN and a zero keep its sign exactly where eager has them.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl

FLOAT_DTYPES = ("float32", "float64")
SHAPES = [(3,), (2, 3), (1, 3)]


def _unary(name):
    return {
        "exp": lambda x: tl.exp(tl.tanh(x)),
        "sin": tl.sin,
        "neg": tl.negative,
        "abs": tl.abs,
        "square": tl.square,
        "sqrt": lambda x: tl.sqrt(tl.abs(x) + 1.0),
        "relu": tl.nn.relu,
        "tanh": tl.tanh,
        "pow1": lambda x: x**1,
        "mul1": lambda x: x * 1.0,
        "add0": lambda x: x + 0.0,
        "sub0": lambda x: x - 0.0,
        "div1": lambda x: x / 1.0,
        "identity": tl.identity,
        "stop": tl.stop_gradient,
        "zeros_like": tl.zeros_like,
        "ones_like": lambda x: tl.ones_like(x) * 2.0,
        "double_t": lambda x: tl.transpose(tl.transpose(x)),
    }[name]


UNARY = [
    "exp",
    "sin",
    "neg",
    "abs",
    "square",
    "sqrt",
    "relu",
    "tanh",
    "pow1",
    "mul1",
    "add0",
    "sub0",
    "div1",
    "identity",
    "stop",
    "zeros_like",
    "ones_like",
    "double_t",
]
BINARY = {
    "add": tl.add,
    "sub": tl.subtract,
    "mul": tl.multiply,
    "max": tl.maximum,
    "min": tl.minimum,
    "div": lambda a, b: a / (tl.abs(b) + 1.0),
    "where": lambda a, b: tl.where(a > b, a, b),
    "and_where": lambda a, b: tl.where(tl.logical_and(a > 0.0, b > 0.0), a, b * 0.5),
    "and_false": lambda a, b: tl.where(tl.logical_and(a > b, False), a, b),
    "or_true": lambda a, b: tl.where(tl.logical_or(a > b, True), a, b),
    "add_relu": lambda a, b: tl.nn.relu(a + b),  # the bias + activation fusion
    "add_tanh": lambda a, b: tl.tanh(a + b),
    "add_sigmoid": lambda a, b: tl.sigmoid(b + a),
}


@st.composite
def programs(draw):
    """(input arrays, steps): each step names an op and the pool indices it reads."""
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    n_inputs = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, shape).astype(dtype) for _ in range(n_inputs)]
    for x in inputs:  # one special value per input: passes must keep NaN, inf and the sign of zero where eager does
        x.flat[rng.integers(0, x.size)] = draw(st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0]))
    return inputs, _steps(draw, n_inputs, draw(st.integers(2, 9)))


def _steps(draw, size, count, control_flow=0):
    """``count`` steps over a pool of ``size`` values; with ``control_flow`` > 0, also ``tl.cond``,
    ``tl.scan`` and ``tl.while_loop`` steps whose branches and bodies are programs drawn the same way (nested
    ``control_flow`` deep)."""
    kinds = ["unary", "binary", "const", "cast", "reduce", "reshape", "random", "dropout", "repeat"]
    if control_flow:
        kinds += ["cond", "scan", "while"]
    steps = []
    for _ in range(count):
        kind = draw(st.sampled_from(kinds))
        pick = st.integers(0, size - 1)
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(UNARY)), draw(pick)))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), draw(pick), draw(pick)))
        elif kind == "const":
            value = draw(st.sampled_from([0.0, 1.0, -0.0, 2.5, "array"]))
            steps.append(("const", value, draw(pick), draw(st.integers(0, 2**16))))
        elif kind == "cast":
            steps.append(("cast", draw(st.sampled_from(["float32", "float64", "int32"])), draw(pick)))
        elif kind == "reduce":
            steps.append(
                (
                    "reduce",
                    draw(st.sampled_from(["sum", "mean", "max"])),
                    draw(st.sampled_from([None, -1])),
                    draw(st.booleans()),
                    draw(pick),
                )
            )
        elif kind == "reshape":
            steps.append(("reshape", draw(pick)))
        elif kind == "random":
            steps.append(("random", draw(st.integers(0, 3)), draw(pick)))
        elif kind == "dropout":
            steps.append(("dropout", draw(st.sampled_from([0.0, 0.5])), draw(st.integers(0, 3)), draw(pick)))
        elif kind == "cond":  # branches of the operands (a, b), each a program; the predicate a sum's sign
            body = lambda: _steps(draw, 2, draw(st.integers(1, 3)), control_flow - 1)  # noqa: E731
            steps.append(("cond", draw(pick), draw(pick), draw(pick), body(), body()))
        elif kind == "scan":  # carry c and a slice x of xs (None: xs=None with a length), both a program's values
            steps.append(
                (
                    "scan",
                    draw(pick),
                    draw(pick),
                    draw(st.booleans()),
                    draw(st.sampled_from([1, 2, True])),
                    _steps(draw, 2, draw(st.integers(1, 3)), control_flow - 1),
                    draw(st.integers(1, 2)),
                )
            )
        elif kind == "while":  # a counter and a carry, a fixed trip count, a bound or none
            steps.append(
                (
                    "while",
                    draw(pick),
                    draw(st.integers(0, 3)),
                    draw(st.sampled_from([None, 1, 2, 5])),
                    _steps(draw, 2, draw(st.integers(1, 3)), control_flow - 1),
                )
            )
        else:
            if not steps:
                continue
            steps.append(("repeat", draw(st.integers(0, len(steps) - 1))))
        size += 1
    return steps


def _fit(value, like):
    """``value`` with the shape and dtype of ``like`` (a carry, a branch's result): cast, and summed and
    broadcast where its shape differs."""
    if value.dtype != like.dtype:
        value = tl.cast(value, like.dtype)
    if tuple(value.shape) != tuple(like.shape):
        value = tl.broadcast_to(tl.sum(value), tuple(like.shape))
    return value


def _run(inputs, steps):
    """The program as a Python function of tensors (eager or traced alike); returns every value it made."""
    pool = list(inputs)
    for step in steps:
        while step[0] == "repeat":
            step = steps[step[1]]
        kind = step[0]
        if kind == "unary":
            out = _unary(step[1])(pool[step[2]])
        elif kind == "binary":
            a, b = pool[step[2]], pool[step[3]]
            if a.dtype != b.dtype:
                b = tl.cast(b, a.dtype)
            if tuple(a.shape) != tuple(b.shape):
                b = tl.sum(b)  # a scalar broadcasts against anything
            out = BINARY[step[1]](a, b)
        elif kind == "const":
            x = pool[step[2]]
            c = (
                np.random.default_rng(step[3]).uniform(-1, 1, x.shape).astype(x.dtype)
                if step[1] == "array"
                else step[1]
            )
            out = x * c + c
        elif kind == "cast":
            out = tl.cast(pool[step[2]], step[1])
        elif kind == "reduce":
            x = pool[step[4]]
            fn = {"sum": tl.sum, "mean": tl.mean, "max": tl.max}[step[1]]
            out = fn(x, axis=step[2] if x.ndim else None, keepdims=step[3])
        elif kind == "reshape":
            x = pool[step[1]]
            out = tl.reshape(x, (-1,)) if x.ndim != 1 else tl.reshape(x, (1, -1))
        elif kind == "random":
            x = pool[step[2]]
            out = x + tl.random.normal(tuple(x.shape), seed=step[1], dtype=x.dtype) if x.dtype.kind == "f" else x
        elif kind == "dropout":
            x = pool[step[3]]
            out = tl.nn.dropout(x, step[1], seed=step[2]) if x.dtype.kind == "f" else x
        elif kind == "cond":
            _, p, a, b, true_steps, false_steps = step
            a, b = pool[a], pool[b]

            def branch(body):
                return lambda u, v: _fit((u, v, *_run([u, v], body))[-1], u)

            out = tl.cond(tl.sum(pool[p]) > 0, branch(true_steps), branch(false_steps), a, b)
        elif kind == "scan":
            _, c, x, reverse, unroll, body, n = step
            c, x = pool[c], pool[x]

            def f(carry, row):
                made = (carry, row, *_run([carry, carry if row is None else row], body))
                return _fit(made[-1], carry), made[2] if len(made) > 2 else carry

            if x.ndim:
                carry, ys = tl.scan(f, c, x, reverse=reverse, unroll=unroll)
            else:
                carry, ys = tl.scan(f, c, None, length=n, reverse=reverse, unroll=unroll)
            out = carry + tl.cast(tl.sum(ys), carry.dtype)
        else:
            _, x, trips, bound, body = step
            x = pool[x]

            def body_fn(state):
                i, v = state
                return i + 1, _fit((v, *_run([v, tl.cast(i, v.dtype)], body))[-1], v)

            out = tl.while_loop(lambda s: s[0] < trips, body_fn, (tl.tensor(0), x), maximum_iterations=bound)[1]
        pool.append(out)
    return tuple(pool[len(inputs) :])


def _same(expected, got, what, zero_signs=True):
    assert len(expected) == len(got)
    for k, (e, g) in enumerate(zip(expected, got)):
        assert (np.dtype(e.dtype), tuple(e.shape)) == (np.dtype(g.dtype), tuple(g.shape)), (
            f"{what} value {k}: {e.dtype}{list(e.shape)} vs {g.dtype}{list(g.shape)}"
        )
        got, want = np.asarray(g.numpy()), np.asarray(e.numpy())
        assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what} value {k}: NaN at {got} vs {want}"
        zeros = (want == 0) & zero_signs
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), f"{what} value {k}: {got} vs {want}"
        tol = 1e-6 if np.dtype(e.dtype) == np.float32 else 1e-12
        np.testing.assert_allclose(
            np.asarray(g.numpy(), np.float64),
            np.asarray(e.numpy(), np.float64),
            rtol=tol,
            atol=tol,
            err_msg=f"{what} value {k}",
        )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the special values: inf - inf, a cast of NaN to int32
@settings(max_examples=40, deadline=None)
@given(program=programs())
def test_optimized_equals_unoptimized_equals_eager(program):
    inputs, steps = program
    eager = _run([tl.tensor(x) for x in inputs], steps)
    graph = tl.function(lambda *xs: _run(list(xs), steps)).get_graph(*inputs)
    raws = graph.executable().run(list(inputs), [])
    unoptimized = [tl.tensor(r) for r in raws]
    optimized = graph(*inputs)
    _same(eager, unoptimized, "unoptimized graph")
    _same(eager, optimized, "optimized graph")
    assert graph.optimize().verify() is not None


@st.composite
def control_flow_programs(draw):
    """Programs of the same catalogue with ``tl.cond``/``tl.scan``/``tl.while_loop`` steps, nested two deep."""
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rng.uniform(-2, 2, shape).astype(dtype) for _ in range(2)]
    inputs[0].flat[rng.integers(0, inputs[0].size)] = draw(st.sampled_from([np.nan, np.inf, -0.0, 1.0]))
    return inputs, _steps(draw, 2, draw(st.integers(1, 4)), control_flow=2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=30, deadline=None)
@given(program=control_flow_programs())
def test_control_flow_optimized_equals_unoptimized_equals_eager(program):
    """Branches and loop bodies run optimized (``executor.runner``); unoptimized, they run as traced."""
    from tensorlib.graph import executor

    inputs, steps = program
    eager = _run([tl.tensor(x) for x in inputs], steps)
    graph = tl.function(lambda *xs: _run(list(xs), steps)).get_graph(*inputs)
    optimized = graph(*inputs)
    again = graph(*inputs)  # the second run: the compiled plans, pooled buffers
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(executor, "runner", executor.executable)  # subgraphs run as traced too
        unoptimized = [tl.tensor(r) for r in executor.executable(graph).run(list(inputs), [])]
    _same(eager, unoptimized, "unoptimized graph")
    _same(eager, optimized, "optimized graph")
    _same(eager, again, "optimized graph, second run")
    assert graph.optimize().verify() is not None


def _loss(*xs, steps):
    """A scalar of every float value the program makes (non-finite values masked out)."""
    total = tl.tensor(0.0, dtype=xs[0].dtype)
    for value in _run(list(xs), steps):
        if value.dtype.kind == "f":
            total = total + tl.cast(tl.sum(tl.where(tl.isfinite(value), value, 0.0)), total.dtype)
    return total


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=15, deadline=None)
@given(program=control_flow_programs())
def test_control_flow_gradients_traced_equal_eager(program):
    """Finite inputs, and the sign of a zero gradient not compared: a branch or body's gradient is computed
    whole (as in JAX), so an unused result's zero cotangent times a NaN partial is NaN, and a structurally zero
    part adds +0.0 to a -0.0, where eager's tape skips what the loss does not reach."""
    inputs, steps = program
    inputs = [np.nan_to_num(x, posinf=1.5, neginf=-1.5) for x in inputs]
    grad = tl.grad(lambda a, b: _loss(a, b, steps=steps), argnums=(0, 1))
    eager = grad(*[tl.tensor(x) for x in inputs])
    traced = tl.function(grad)(*inputs)
    _same(eager, traced, "traced gradient", zero_signs=False)


# Pool window (kh, kw), pool strides (sh, sw) and filter size (fh, fw) for the conv + pool fusions.
POOL_AND_FILTER = dict(
    kh=st.integers(1, 3),
    kw=st.integers(1, 3),
    sh=st.integers(1, 3),
    sw=st.integers(1, 3),
    fh=st.integers(1, 3),
    fw=st.integers(1, 2),
    seed=st.integers(0, 2**16),
)


@settings(max_examples=12, deadline=None)
@given(**POOL_AND_FILTER)
def test_conv_avg_pool_fusion_is_exact_for_any_pool_and_stride(kh, kw, sh, sw, fh, fw, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 8, 7, 2))
    w = rng.standard_normal((fh, fw, 2, 3))

    def f(x):
        return tl.nn.avg_pool(
            tl.nn.conv2d(x, w, strides=1, padding="VALID"), ksize=(kh, kw), strides=(sh, sw), padding="VALID"
        )

    graph = tl.function(f).get_graph(x)
    fused = [n.op_type for n in graph.optimize().nodes]
    assert "AvgPool" not in fused  # the fusion applied...
    np.testing.assert_allclose(graph(x).numpy(), f(tl.tensor(x)).numpy(), rtol=1e-12, atol=1e-12)  # ...exactly


def test_cse_keeps_nodes_whose_attributes_differ():
    def f(x):
        return (
            tl.cast(x, "float32"),
            tl.cast(x, "int32"),
            tl.sum(x, axis=0),
            tl.sum(x, axis=1),
            tl.sum(x, axis=0, keepdims=True),
        )

    graph = tl.function(f).get_graph(np.ones((2, 3)))
    types = [n.op_type for n in graph.optimize().nodes]
    assert types.count("Cast") == 2 and types.count("Sum") == 3
    for e, g in zip(f(tl.tensor(np.ones((2, 3)))), graph(np.ones((2, 3)))):
        assert e.dtype == g.dtype and e.shape == g.shape


def test_stateful_ops_are_never_folded_or_merged():
    f = tl.function(lambda: (tl.random.normal((3,)), tl.random.normal((3,))))
    a, b = f()
    c, _ = f()
    assert not np.array_equal(a.numpy(), b.numpy())  # two draws are not one (no CSE)
    assert not np.array_equal(a.numpy(), c.numpy())  # and each run draws again (no folding)
    types = [n.op_type for n in f.get_graph().optimize().nodes]
    assert len(types) == 2


@pytest.mark.parametrize(
    "make, gone",
    [
        (lambda x: x**1, "Pow"),
        (lambda x: tl.where(tl.tensor(True), x, x * 2.0), "Select"),
        (lambda x: tl.logical_and(x > 0, True), "LogicalAnd"),
        (lambda x: tl.logical_and(x > 0, False), "LogicalAnd"),
        (lambda x: tl.logical_or(x > 0, False), "LogicalOr"),
        (lambda x: tl.where(tl.logical_or(x > 0, True), x, -x), "Select"),
        (lambda x: x + tl.zeros_like(x), "FullLike"),
    ],
)
def test_trivial_nodes_are_removed(make, gone):
    x = np.array([1.5, -2.0])
    graph = tl.function(make).get_graph(x)
    assert gone not in [n.op_type for n in graph.optimize().nodes]
    expected = make(tl.tensor(x))
    got = graph(x)
    assert expected.dtype == got.dtype
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_gradient_graphs_lose_trivial_nodes():
    def grad_of(x):
        return tl.grad(lambda v: tl.sum(tl.nn.relu(v) ** 2 + tl.abs(v)))(x)

    graph = tl.function(grad_of).get_graph(np.ones(3))
    optimized = [n.op_type for n in graph.optimize().nodes]
    assert "FullLike" not in optimized and optimized.count("Pow") <= 1
    np.testing.assert_allclose(
        graph(np.array([1.0, -2.0, 0.5])).numpy(), grad_of(tl.tensor(np.array([1.0, -2.0, 0.5]))).numpy()
    )


@settings(max_examples=10, deadline=None)
@given(**POOL_AND_FILTER)
def test_avg_pool_grad_folds_into_the_conv_backprops_exactly(kh, kw, sh, sw, fh, fw, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((2, 8, 7, 2)), rng.standard_normal((fh, fw, 2, 3))

    def loss(x, w):
        y = tl.nn.avg_pool(
            tl.nn.conv2d(x, w, strides=1, padding="VALID"), ksize=(kh, kw), strides=(sh, sw), padding="VALID"
        )
        return tl.sum(tl.sin(y))

    grads = tl.function(lambda x, w: tl.grad(loss, argnums=(0, 1))(x, w))
    optimized = [n.op_type for n in grads.get_graph(x, w).optimize().nodes]
    assert "AvgPoolGrad" not in optimized and "AvgPool" not in optimized
    for got, expected in zip(grads(x, w), tl.grad(loss, argnums=(0, 1))(tl.tensor(x), tl.tensor(w))):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    kh=st.integers(1, 3),
    kw=st.integers(1, 3),
    sh=st.integers(1, 3),
    sw=st.integers(1, 3),
    padding=st.sampled_from(["VALID", "SAME"]),
    dtype=st.sampled_from(FLOAT_DTYPES),
    nonfinite=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_relu_grad_before_max_pool_grad_is_exact_bit_for_bit(kh, kw, sh, sw, padding, dtype, nonfinite, seed):
    """The ReluGrad of a max pool's input gradient, moved to pooled size where no two windows share a
    cell: optimized == unoptimized == eager, bit for bit, with ties, all-zero windows, inf and NaN."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, (2, 7, 8, 2)).astype(dtype)  # after relu: ties and windows of zeros
    pooled = tl.nn.max_pool(np.zeros(a.shape, dtype), (kh, kw), (sh, sw), padding).shape
    g = rng.standard_normal(pooled).astype(dtype)
    if nonfinite:
        g.flat[:: rng.integers(2, 5)] = np.inf
        g.flat[1 :: rng.integers(2, 5)] = np.nan

    def input_gradient(a, g):
        with tl.GradientTape() as tape:
            tape.watch(a)
            p = tl.nn.max_pool(tl.nn.relu(a), (kh, kw), (sh, sw), padding)
        return tape.gradient(p, a, output_gradients=g)

    graph = tl.function(input_gradient).get_graph(a, g)
    producers = {id(o): n for n in graph.optimize().nodes for o in n.outputs}
    moved = [
        n
        for n in producers.values()
        if n.op_type == "MaxPoolGrad" and getattr(producers.get(id(n.inputs[2])), "op_type", None) == "ReluGrad"
    ]
    assert bool(moved) == (sh >= kh and sw >= kw)
    with np.errstate(invalid="ignore"):
        eager = input_gradient(tl.tensor(a), tl.tensor(g)).numpy()
        unoptimized = np.asarray(graph.executable().run([a, g], [])[0])
        optimized = graph(a, g).numpy()
    bits = np.dtype(f"i{eager.dtype.itemsize}")
    np.testing.assert_array_equal(unoptimized.view(bits), eager.view(bits))
    np.testing.assert_array_equal(optimized.view(bits), eager.view(bits))
