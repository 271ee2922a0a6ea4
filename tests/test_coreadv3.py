"""Adversarial tests of the core contracts (DESIGN.md §6, third round): conversions that must never wrap or
truncate silently, ...

References: NumPy's integer ranges (``np.iinfo``) and the library's own contract for Python ints and
``Variable.assign`` (an integer that does not fit is an OverflowError, never a wrapped value).
"""

import numpy as np
import pytest

import tensorlib as tl

BIG = 2**40  # outside int32


@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.tensor(np.array([1, BIG]), dtype="int32"),
        lambda: tl.tensor(np.int64(BIG), dtype="int32"),
        lambda: tl.tensor(np.array([-BIG]), dtype=np.int32),
        lambda: tl.tensor(np.array([2**32 - 1], np.uint32), dtype="int32"),
        lambda: tl.tensor(tl.tensor([BIG]), dtype="int32"),
        lambda: tl.Variable(np.array([BIG]), dtype="int32"),
        lambda: tl.Variable(tl.tensor([BIG]), dtype="int32"),
        lambda: tl.full((2,), np.int64(BIG), dtype="int32"),
    ],
    ids=["array", "numpy-scalar", "negative", "uint32", "tensor", "variable", "variable-of-tensor", "full"],
)
def test_integer_data_outside_the_requested_dtype_is_an_overflow_error_not_wrapped(make):
    # NumPy's astype wraps 2**40 to 0 in int32; a Python int or list was already refused, and so is
    # Variable.assign of the same array: the array and tensor paths gave a silent 0.
    with pytest.raises(OverflowError, match=r"does not fit in int32 \(range -2147483648\.\.2147483647\)"):
        make()


def test_integer_data_inside_the_requested_dtype_converts_exactly():
    data = np.array([np.iinfo(np.int32).min, -1, 0, np.iinfo(np.int32).max], dtype=np.int64)
    for t in (
        tl.tensor(data, dtype="int32"),
        tl.tensor(tl.tensor(data), dtype="int32"),
        tl.Variable(data, dtype="int32"),
    ):
        assert t.dtype == np.int32
        np.testing.assert_array_equal(t.numpy(), data)
    assert tl.full((2,), np.int64(7), dtype="int32").numpy().tolist() == [7, 7]
    assert tl.tensor(np.array([True, False]), dtype="int32").numpy().tolist() == [1, 0]


class _MyVariable(tl.Variable):
    """A user's subclass of Variable (as torch.nn.Parameter subclasses Tensor)."""


def _square_sum_tape(v):
    with tl.GradientTape(persistent=True) as tape:
        y = tl.sum(v * v)
    return tape, y


def test_a_variable_subclass_is_watched_automatically_like_a_variable():
    # A trainable subclass instance gave a silent None gradient: the tape matched the exact class only.
    v = _MyVariable(np.array([1.0, 2.0]))
    tape, y = _square_sum_tape(v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])
    assert tape.watched_variables() == (v,)


def test_a_variable_subclass_keeps_its_value_at_record_time_in_the_tape():
    # Assigned after the tape read it, the subclass's gradient used the new value ([10, 10] instead of 2 * [1, 2]).
    v = _MyVariable(np.array([1.0, 2.0]))
    tape, y = _square_sum_tape(v)
    v.assign([5.0, 5.0])
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])


def test_assigning_a_variable_subclass_that_a_recording_tape_read_is_refused():
    v = _MyVariable(np.array([1.0, 2.0]))
    with tl.GradientTape():
        _ = v * 2.0
        with pytest.raises(RuntimeError, match=r"read by a GradientTape that is still recording"):
            v.assign([5.0, 5.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def _vjp_of_double(x, ct):
    _, vjp_fn = tl.vjp(lambda x: x * 2.0, x)
    return vjp_fn(ct)[0]


def _tape_of_double(x, ct):
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    return tape.gradient(y, x, output_gradients=ct)


@pytest.mark.parametrize("pullback", [_vjp_of_double, _tape_of_double], ids=["vjp", "tape"])
@pytest.mark.parametrize("tensor", [True, False], ids=["tensor", "array"])
def test_a_complex_cotangent_for_a_real_output_is_a_type_error_not_its_real_part(pullback, tensor):
    # The imaginary part was dropped silently (the result was 2 * Re(ct) = [2, 2]); a complex tangent for a real
    # primal is refused by tl.jvp, and JAX's vjp refuses a cotangent of the wrong dtype too.
    x = tl.tensor(np.array([0.5, 2.0]))
    with pytest.raises(TypeError, match=r"complex128 for a real output \(float64, shape \(2,\)\)"):
        ct = np.array([1 + 1j, 1.0])
        pullback(x, tl.tensor(ct) if tensor else ct)


@pytest.mark.parametrize("pullback", [_vjp_of_double, _tape_of_double], ids=["vjp", "tape"])
def test_real_cotangents_of_any_real_dtype_still_weigh_the_output(pullback):
    x = tl.tensor(np.array([0.5, 2.0]))
    for ct in (tl.tensor([1, 3]), tl.tensor(np.float32([1.0, 3.0])), np.array([1.0, 3.0])):
        np.testing.assert_allclose(pullback(x, ct).numpy(), [2.0, 6.0])


def test_a_complex_cotangent_for_a_complex_output_is_kept():
    z = tl.tensor(np.array([1.0 + 2.0j]))
    _, vjp_fn = tl.vjp(lambda z: z * (3.0 - 1.0j), z)
    (g,) = vjp_fn(tl.tensor(np.array([1.0j])))
    # tensorlib's (JAX's) convention: the cotangent times the derivative, 1j * (3 - 1j)
    np.testing.assert_allclose(g.numpy(), [1.0j * (3.0 - 1.0j)])


def test_a_tape_records_the_variable_value_that_the_kernel_computed_with():
    # Another thread assigned the Variable while an op read it: the kernel computed with the old value, but the
    # tape read the Variable again after the kernel and recorded the new one, so x * v's gradient for x was the
    # new value (a silent wrong answer: a tape must record the values its op computed with, as TF's reads do).
    import threading

    v = tl.Variable(np.array([2.0, 3.0]))
    op = tl.ops.defop("CoreAdv3MulWhileAssigned", inputs=("x", "y"), infer=lambda x, y: x)

    @op.kernel("numpy")
    def _kernel(x, y):
        other = threading.Thread(target=v.assign, args=([100.0, 100.0],))  # another thread's concurrent assign
        other.start()
        other.join()
        return x * y

    tl.grad.register_gradient(
        "CoreAdv3MulWhileAssigned", lambda node, g: g * node.inputs[1], lambda node, g: g * node.inputs[0]
    )
    x = tl.tensor(np.array([1.0, 1.0]))
    with tl.GradientTape() as tape:
        tape.watch(x)
        y = tl.sum(op(x, v))
    np.testing.assert_allclose(y.numpy(), 5.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 3.0])  # d(x * v)/dx = v as the kernel read it


def test_assign_checks_its_readers_while_other_threads_add_theirs():
    # check_assignable listed the Variable's readers while tapes of other threads added themselves:
    # RuntimeError('Set changed size during iteration') from a plain assign.
    import weakref

    class _GrowingReaders(weakref.WeakSet):
        """A reader set that another thread's tape joins while it is iterated."""

        joined: list = []

        def __iter__(self):
            for tape in super().__iter__():
                self.joined.append(tl.GradientTape())
                self.add(self.joined[-1])
                yield tape

    v = tl.Variable(np.array([1.0]))
    with tl.GradientTape() as tape:
        _ = v * 2.0
    kept = tl.GradientTape()
    v._readers = _GrowingReaders([tape, kept])
    v.assign([4.0])
    np.testing.assert_array_equal(v.numpy(), [4.0])


def _cumprod_second_directional(x, w, u):
    """NumPy reference: D^2 f(x)[u, u] for f(x) = sum_j w_j prod_{i <= j} x_i, exactly, from the polynomial
    f(x + t u) in t (twice its t^2 coefficient)."""
    poly, total = np.array([1.0]), np.zeros(3)
    for xi, ui, wj in zip(x, u, w):
        poly = np.polynomial.polynomial.polymul(poly, [xi, ui])
        total[: min(3, poly.size)] += wj * poly[:3]
    return 2.0 * total[2]


@pytest.mark.parametrize(
    "x",
    [[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 3.0, 0.0], [0.5, 0.0, -2.0, 0.0, 0.0, 1.5]],
)
def test_third_derivative_of_cumprod_at_three_or_more_zeros(x):
    # The rule handled the first two zeros along the axis exactly and gave later zeros a constant 0 gradient,
    # right to second order only: the third derivative at [0, 0, 0, 0] was off by up to 0.16 (JAX agrees with
    # the reference below).  D^2 f[u, u] is linear in each x_k, so its central difference is exact.
    x = np.array(x)
    rng = np.random.default_rng(len(x))
    w, u = rng.standard_normal(len(x)), rng.standard_normal(len(x))

    def second(z):
        inner = lambda z: tl.sum(tl.grad(lambda v: tl.sum(tl.cumprod(v) * tl.tensor(w)))(z) * tl.tensor(u))
        return tl.sum(tl.grad(inner)(z) * tl.tensor(u))

    np.testing.assert_allclose(float(second(tl.tensor(x))), _cumprod_second_directional(x, w, u), atol=1e-12)
    eye = np.eye(len(x))
    ref = [(_cumprod_second_directional(x + e, w, u) - _cumprod_second_directional(x - e, w, u)) / 2.0 for e in eye]
    np.testing.assert_allclose(tl.grad(second)(tl.tensor(x)).numpy(), ref, rtol=1e-10, atol=1e-10)
