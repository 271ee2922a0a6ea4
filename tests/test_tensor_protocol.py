"""The Tensor's Python protocol against NumPy: bitwise operators, rounding, formatting, item assignment,
``mT``/``real``/``imag``, and NumPy 2's ``__array__(dtype, copy)``; eager and traced agree."""

import operator

import numpy as np
import pytest

import tensorlib as tl

INTS = np.array([-7, -2, -1, 0, 1, 5, 12, 2**40 + 3])
BOOLS = np.array([True, False, True, False, True, True, False, False])
OPERATORS = {"&": operator.and_, "|": operator.or_, "^": operator.xor}


@pytest.mark.parametrize("symbol", sorted(OPERATORS))
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_bitwise_operators_match_numpy_in_both_modes(symbol, dtype):
    # `&` and `|` on integer tensors were logical (int64 [12] & 10 gave [True], not [8]); `^` was missing.
    op = OPERATORS[symbol]
    a = (INTS if dtype != "bool" else BOOLS).astype(dtype)
    b = np.roll(a, 3)
    traced = tl.function(lambda x, y: op(x, y))
    for got, want in [
        (op(tl.tensor(a), tl.tensor(b)), op(a, b)),
        (traced(tl.tensor(a), tl.tensor(b)), op(a, b)),
        (op(a, tl.tensor(b)), op(a, b)),  # an ndarray on the left
        (op(tl.tensor(a), 10 if dtype != "bool" else True), op(a, 10 if dtype != "bool" else True)),
        (op(3 if dtype != "bool" else False, tl.tensor(a)), op(3 if dtype != "bool" else False, a)),
        (getattr(np, {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor"}[symbol])(tl.tensor(a), b), op(a, b)),
    ]:
        assert isinstance(got, tl.Tensor) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_invert_matches_numpy(dtype):
    # ~ on an integer tensor gave the logical not (bool); NumPy gives -x - 1.
    a = (INTS if dtype != "bool" else BOOLS).astype(dtype)
    for got in (~tl.tensor(a), tl.invert(a), np.invert(tl.tensor(a)), tl.function(lambda x: ~x)(tl.tensor(a))):
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got.numpy(), ~a)


@pytest.mark.parametrize(
    "call, op_type",
    [
        (lambda x: x & x, "BitwiseAnd"),
        (lambda x: x | 1, "BitwiseOr"),
        (lambda x: True ^ x, "BitwiseXor"),
        (lambda x: ~x, "Invert"),
    ],
)
def test_bitwise_operators_on_floats_raise_as_numpy_does(call, op_type):
    # They gave bools (a logical and/or/not of the floats); NumPy and PyTorch refuse floats.
    x = tl.tensor([0.5, 0.0])
    with pytest.raises(TypeError, match=rf"{op_type}: needs integer or bool inputs .* got float32 \(inputs x: shape"):
        call(x)


def test_divmod_with_an_array_on_the_left_runs_floor_divide_and_remainder():
    a, b = np.array([7.5, -7.0, 3.0]), np.array([2.0, 2.0, -4.0])
    q, r = divmod(a, tl.tensor(b))  # np.divmod, through __array_ufunc__: it raised "no implementation"
    np.testing.assert_array_equal(q.numpy(), a // b)
    np.testing.assert_array_equal(r.numpy(), a % b)
    x = tl.tensor(a)
    g = tl.grad(lambda x: tl.sum(np.divmod(x, b)[1] * b))(x)
    np.testing.assert_array_equal(g.numpy(), b)


def test_array_with_copy_false_raises_when_a_copy_is_needed():
    t = tl.tensor([1.0, 2.0])  # float32
    with pytest.raises(ValueError, match=r"np\.array\(t, copy=False\) of a tensor \(shape \(2,\), dtype float32\)"):
        np.array(t, dtype=np.float64, copy=False)  # silently gave a converted copy
    view = np.asarray(t, copy=False)
    assert view.dtype == np.float32 and not view.flags.writeable
    copied = np.array(t, dtype=np.float64, copy=True)
    copied[0] = 5.0
    assert copied.flags.writeable and t.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("decimals", [-2, -1, 1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_round_with_decimals_matches_numpy(decimals, dtype):
    rng = np.random.default_rng(decimals + 7)
    a = (rng.standard_normal(40) * 300).astype(dtype)
    if dtype != "int64":
        a[:4] = [0.125, 2.675, -1.5, 1250.0]
    want = np.round(a, decimals)
    for got in (
        round(tl.tensor(a), decimals),  # TypeError: Tensor doesn't define __round__
        np.round(tl.tensor(a), decimals),  # TypeError: decimals is not supported
        tl.function(lambda x: tl.round(x, decimals))(tl.tensor(a)),
    ):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    assert round(tl.tensor([0.5, 1.5, 2.5])).numpy().tolist() == [0.0, 2.0, 2.0]


def test_format_of_a_0d_tensor_and_refusals():
    assert f"{tl.tensor(3.14159):.2f}" == "3.14" and f"{tl.tensor(7):03d}" == "007"
    assert f"{tl.tensor([1.0])}" == str(tl.tensor([1.0]))
    with pytest.raises(TypeError, match=r"format spec '\.2f' needs a 0-d tensor, got \(shape \(2,\)"):
        f"{tl.tensor([1.0, 2.0]):.2f}"


def test_item_assignment_is_refused_naming_the_remedy():
    t, v = tl.tensor([1.0, 2.0]), tl.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match=r"\(shape \(2,\), dtype float32\) does not support item assignment.*tl\.where"):
        t[0] = 5.0
    with pytest.raises(TypeError, match=r"does not support item assignment.*v\.assign\(new_value\)"):
        v[0] = 5.0
    assert t.numpy().tolist() == [1.0, 2.0] and v.numpy().tolist() == [1.0, 2.0]


def test_matrix_transpose_real_and_imag_attributes():
    a = np.arange(24.0).reshape(2, 3, 4)
    z = np.array([1.0 + 2.0j, -3.0 - 0.5j])
    assert tl.tensor(a).mT.shape == (2, 4, 3)
    np.testing.assert_array_equal(tl.tensor(a).mT.numpy(), a.mT)
    np.testing.assert_array_equal(tl.tensor(z).real.numpy(), z.real)
    np.testing.assert_array_equal(tl.tensor(z).imag.numpy(), z.imag)
    np.testing.assert_array_equal(tl.tensor(a).imag.numpy(), np.zeros_like(a))
    with pytest.raises(ValueError, match=r"mT: the matrix transpose needs at least 2 dimensions, got shape \(3,\)"):
        tl.tensor([1.0, 2.0, 3.0]).mT
    g = tl.grad(lambda x: tl.sum(x.mT * np.arange(6.0).reshape(3, 2)))(tl.tensor(np.ones((2, 3))))
    np.testing.assert_array_equal(g.numpy(), np.arange(6.0).reshape(3, 2).T)


@pytest.mark.parametrize("update", ["v += 1.0", "v -= 1.0", "v *= 2.0", "v /= 2.0", "v **= 2", "v @= v"])
def test_augmented_assignment_on_a_variable_is_refused(update):
    # `v += 1.0` silently rebound v to a plain Tensor: the Variable kept its value and a tape or optimizer
    # holding it never saw the update (TensorFlow 2 raises here too).
    v = tl.Variable([1.0, 2.0], name="w")
    scope = {"v": v}
    with pytest.raises(TypeError, match=r"`v .*= x` on Variable 'w' \(shape \(2,\), dtype float32\) is not supported"):
        exec(update, scope)
    assert scope["v"] is v and v.numpy().tolist() == [1.0, 2.0]
    t = tl.tensor([1.0, 2.0])
    t += 1.0  # a Tensor is immutable: the name takes the new value, as in JAX
    assert t.numpy().tolist() == [2.0, 3.0]


def test_in_compares_every_element_as_numpy_does():
    # Python's fallback iterated the rows: `1.0 in tl.ones((2, 2))` raised "truth value ... ambiguous".
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    for value in (1.0, 4, 5.0, [3.0, 4.0], [9.0, 2.0], [[9.0, 9.0]]):
        assert (value in tl.tensor(a)) is (value in a), value


@pytest.mark.parametrize(
    "convert, use",
    [(float, r"float\(\)"), (int, r"int\(\)"), (complex, r"complex\(\)"), (lambda t: [0, 1][t], r"an index")],
)
def test_scalar_conversions_of_more_than_0d_name_the_shape(convert, use):
    t = tl.tensor([1, 2])
    with pytest.raises(TypeError, match=rf"tensorlib: {use}.* needs a 0-d tensor, got \(shape \(2,\), dtype int64\)"):
        convert(t)
    assert convert(tl.tensor(1)) == convert(np.int64(1))
    with pytest.raises(TypeError, match=r"iteration over a 0-d tensor \(shape \(\), dtype float32\)"):
        list(tl.tensor(1.0))


def _writes_through(array):
    array.flags.writeable = True
    array[...] = 99


@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.tensor([1.0, 2.0]),
        lambda: tl.Variable([1.0, 2.0]),
        lambda: tl.reshape(tl.tensor([[1.0, 2.0]]), (2,)),
        lambda: tl.function(lambda x: x * 1.0)(np.array([1.0, 2.0], np.float32)),
    ],
    ids=["tensor", "variable", "view", "traced"],
)
@pytest.mark.parametrize("read", [lambda t: t.numpy(), np.asarray], ids=["numpy", "asarray"])
def test_a_read_only_view_cannot_be_made_writable(make, read):
    # `a.flags.writeable = True` on t.numpy() was allowed (the view's owner, the tensor's value, is
    # writable), and a[0] = 99 then changed the tensor or the Variable; JAX refuses it too.
    t = make()
    with pytest.raises(ValueError, match="cannot set WRITEABLE flag"):
        _writes_through(read(t))
    assert t.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("a", [np.array([1, -2, 3]), np.array([1.5, 2.5, -0.5]), np.array([1.5, 2.5], np.float32)])
def test_np_rint_keeps_numpys_dtype(a):
    # np.rint of an int64 tensor gave int64 (tl.round keeps integers); NumPy's rint gives float64.
    got = np.rint(tl.tensor(a))
    assert got.dtype == np.rint(a).dtype
    np.testing.assert_array_equal(got.numpy(), np.rint(a))


def test_equality_with_none_or_a_string_is_false_not_an_error():
    # `t == None` raised "Equal: input 'y' expected a tensor ... got NoneType", so `None in [t]` did too.
    t = tl.tensor([1.0, 2.0])
    assert (t == None) is False and (t != None) is True  # noqa: E711
    assert None not in [t] and "SAME" not in (t,) and (t == "a") is False
    assert (t == 1.0).numpy().tolist() == [True, False]


@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_tl_tensor_of_a_watched_tensor_keeps_its_gradient_as_when_traced(dtype):
    # Eagerly tl.tensor(x) copied the value: d/dx sum(3 * tl.tensor(x)) was a silent 0 ([0, 0]) while
    # the same function under tl.function gave [3, 3].
    def f(x):
        return tl.sum(tl.tensor(x, dtype=dtype) * 3.0)

    x = tl.tensor([1.0, 2.0], dtype="float64")
    for g in (tl.grad(f)(x), tl.function(tl.grad(f))(x)):
        np.testing.assert_allclose(g.numpy(), [3.0, 3.0])
    v = tl.Variable([1.0, 2.0], dtype="float64")
    with tl.GradientTape() as tape:
        y = tl.sum(tl.tensor(v) ** 2)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])
    snapshot = tl.tensor(v)  # still a value of its own: a later assign does not reach it
    v.assign([5.0, 5.0])
    assert snapshot.numpy().tolist() == [1.0, 2.0]


def test_ndarray_methods_take_numpys_arguments():
    # clip, round, take, dot, nonzero and copy as ndarray's methods (take flattens by default, as
    # ndarray.take, where tl.take's default axis is 0); each records on the tape.
    a = np.arange(6.0).reshape(2, 3) - 2.5
    t = tl.tensor(a)
    np.testing.assert_array_equal(t.clip(-1, 1).numpy(), a.clip(-1, 1))
    np.testing.assert_array_equal(t.clip(max=0).numpy(), a.clip(max=0))
    np.testing.assert_array_equal(t.round().numpy(), a.round())
    np.testing.assert_array_equal(tl.tensor([1.25, 2.75]).round(1).numpy(), np.round(np.float32([1.25, 2.75]), 1))
    np.testing.assert_array_equal(t.take([1, 4]).numpy(), a.take([1, 4]))
    np.testing.assert_array_equal(t.take([1], axis=1).numpy(), a.take([1], axis=1))
    np.testing.assert_array_equal(t.dot(a.T).numpy(), a.dot(a.T))
    for got, want in zip(t.nonzero(), a.nonzero()):
        np.testing.assert_array_equal(got.numpy(), want)
    v = tl.Variable(a)
    c = v.copy()
    v.assign(np.zeros((2, 3)))
    assert type(c) is tl.Tensor and np.array_equal(c.numpy(), a)
    assert (t.itemsize, t.nbytes) == (8, 48) and tl.tensor(np.ones(3, np.float32)).nbytes == 12
    g = tl.grad(lambda x: tl.sum(x.clip(-1.0, 1.0) * x.take([0, 5])[0]))(t)
    np.testing.assert_allclose(
        g.numpy(), ((np.abs(a) < 1) * a[0, 0] + np.eye(1, 6).reshape(2, 3) * a.clip(-1, 1).sum())
    )
