"""tl.function signatures: input_signature conversions, TensorSpec sizes, keyword forms of positional arguments."""

import functools

import numpy as np
import pytest

import tensorlib as tl

F32_INT = [tl.TensorSpec((None,), "float32"), tl.TensorSpec((), "int32")]


def test_input_signature_refuses_python_values_its_dtype_cannot_hold():
    f = tl.function(lambda x, n: x * tl.cast(n, "float32"), input_signature=F32_INT)
    x = np.ones(2, np.float32)
    assert f(x, 3).numpy().tolist() == [3.0, 3.0]
    # 2.5 was silently truncated to the spec's int32 (2): the result was [2, 2].
    with pytest.raises(
        ValueError, match=r"n has shape \(\) and dtype float64, which does not fit input_signature\[1\]"
    ):
        f(x, 2.5)
    with pytest.raises(ValueError, match=r"n has shape \(2,\) and dtype float32, which does not fit"):
        tl.function(lambda x, n: x, input_signature=[F32_INT[0], tl.TensorSpec((2,), "int32")])(x, [1.5, 2.5])
    with pytest.raises(OverflowError, match=r"tl.function <lambda>: n: .*1099511627776 does not fit in int32"):
        f(x, 2**40)
    g = tl.function(lambda x: x * 2.0, input_signature=[tl.TensorSpec((2,), "float64")])
    assert g([1, 2]).numpy().tolist() == [2.0, 4.0]  # ints fit a float spec
    assert g(np.float64(1.5) * np.ones(2)).dtype == np.float64


def test_input_signature_must_be_a_list_of_specs():
    with pytest.raises(TypeError, match=r"input_signature must be a list of tl.TensorSpec.*got TensorSpec"):
        tl.function(lambda x: x, input_signature=tl.TensorSpec((2,)))


@pytest.mark.parametrize("shape, size", [((2.5, 3), "2.5"), ((True, 3), "True"), (("3",), "'3'")])
def test_tensor_spec_sizes_must_be_integers(shape, size):
    # They were int()-ed: (2.5, 3) became (2, 3), True a size 1, "3" a 3.
    with pytest.raises(TypeError, match=f"TensorSpec: shape .* has a size {size}"):
        tl.TensorSpec(shape)


def test_tensor_spec_takes_integer_likes_and_none():
    assert tl.TensorSpec((np.int64(2), None)).shape == (2, None)
    assert tl.TensorSpec([3]).shape == (3,)
    with pytest.raises(TypeError, match="shape must be a tuple or list of sizes, got int 3"):
        tl.TensorSpec(3)


def test_positional_parameters_passed_by_keyword_share_the_graph():
    @tl.function
    def f(x, scale=1.0, *, offset=0):
        return x * scale + offset

    x = np.ones(2)
    assert f(x, 2.0).numpy().tolist() == [2.0, 2.0]
    assert f(x, scale=3.0).numpy().tolist() == [3.0, 3.0]
    assert f(scale=4.0, x=x).numpy().tolist() == [4.0, 4.0]
    assert f.trace_count == 1
    assert f(x, scale=1.0, offset=3).numpy().tolist() == [4.0, 4.0]
    assert f.retrace_reasons == ["first call", "offset: new argument (3)"]

    def g(a, /, b, **rest):  # a positional-only name given by keyword belongs to **rest
        return a * b + len(rest)

    traced = tl.function(g)
    assert traced(x, b=2.0).numpy().tolist() == g(x, b=2.0).tolist()
    assert traced(x, 2.0, a=1).numpy().tolist() == g(x, 2.0, a=1).tolist() == [3.0, 3.0]


def test_callable_objects_and_partials_can_be_traced():
    # update_wrapper copies no __name__ from them: the first call raised AttributeError.
    class Scale:
        def __call__(self, x, s=1.0):
            return x * s * 3.0

    partial = functools.partial(lambda x, s: x * s, s=2.0)
    for fn, expected, name in ((Scale(), [6.0, 12.0], "Scale"), (partial, [2.0, 4.0], "<lambda>")):
        f = tl.function(fn, static_argnames="s")
        assert f(np.array([1.0, 2.0]), s=2.0).numpy().tolist() == expected
        assert f.__name__ == name and f.get_graph(np.ones(2), s=2.0).name == name


@pytest.mark.parametrize(
    "value, where, kind",
    [
        (np.array([0, 1]), "idx", "ndarray"),  # was silently fed as a placeholder: `static` ignored
        (tl.tensor([0, 1]), "idx", "Tensor"),
        ((1, {"a": np.ones(2)}), r"idx\[1\]\['a'\]", "ndarray"),
        ({1, 2}, "idx", "set"),
    ],
)
def test_an_unhashable_static_argument_is_a_clear_error(value, where, kind):
    f = tl.function(lambda x, idx: x * 2.0, static_argnums=1)
    with pytest.raises(
        TypeError, match=rf"tl.function <lambda>: static argument {where} is a {kind}, which is not hash"
    ):
        f(np.ones(2), value)


def test_a_static_numpy_scalar_is_a_value():
    f = tl.function(lambda x, n: x[:n], static_argnums=1)
    x = np.arange(4.0)
    assert f(x, np.int64(2)).numpy().tolist() == [0.0, 1.0]
    assert f(x, np.int64(3)).numpy().tolist() == [0.0, 1.0, 2.0]
    assert f.trace_count == 2 and f.retrace_reasons[1] == "n: np.int64(2) -> np.int64(3)"
    v = tl.Variable(np.ones(4))
    g = tl.function(lambda x, v: x * v, static_argnums=1)  # a Variable stays keyed by identity
    assert g(x, v).numpy().tolist() == g(x, v).numpy().tolist() == [0.0, 1.0, 2.0, 3.0] and g.trace_count == 1
