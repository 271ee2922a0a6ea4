"""Last session's new APIs attacked as an adversary and as a SciPy / PyTorch / JAX user would use them:
``tl.linalg.null_space`` / ``funm``, ``tl.scan`` (and ``tl.nn.torch``'s recurrent layers) traced with a length known
only at run time, and ``Variable.assign_add`` from several threads.

References: ``scipy.linalg`` values and float64 central differences of them (no torch/jax/tensorflow needed),
Python loops written out by hand, and ``torch.nn.LSTM``/``GRU`` with the same weights where torch is installed
(importorskip).
"""

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl

L = tl.linalg


def _rng(seed=0):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- null_space's gradient
@pytest.mark.parametrize("shape", [(4, 5), (3, 5), (2, 6)])
def test_null_space_gradient_matches_differences_of_scipys_projector(shape):
    # The projector z z^T onto the null space is smooth where the rank is constant; its gradient was 0 (the
    # basis came from svd's full_matrices rows, whose gradient svd ignores).
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(1)
    a, w = rng.normal(size=shape), rng.normal(size=(shape[1], shape[1]))

    def projected(z):
        return z @ z.T

    got = tl.grad(lambda x: tl.sum(projected(L.null_space(x)) * tl.tensor(w)))(tl.tensor(a)).numpy()
    want = central_differences(lambda x: np.sum(projected(sl.null_space(x)) * w), a)
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert np.abs(want).max() > 0.1


def test_null_space_gradient_of_a_basis_dependent_loss_moves_it_out_of_the_row_space():
    # d z = -pinv(a) da z (the minimal change keeping a z = 0 and z orthonormal to first order): for the loss
    # sum(g * z) the gradient is -pinv(a)^T g z^T; the value stays SciPy's basis.
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(2)
    a, g = rng.normal(size=(2, 4)), rng.normal(size=(4, 2))
    z = sl.null_space(a)
    np.testing.assert_allclose(L.null_space(a).numpy(), z, atol=1e-12)
    got = tl.grad(lambda x: tl.sum(L.null_space(x) * tl.tensor(g)))(tl.tensor(a)).numpy()
    np.testing.assert_allclose(got, -np.linalg.pinv(a).T @ g @ z.T, atol=1e-10)


def test_null_space_gradient_complex_projector():
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(3)
    a = rng.normal(size=(2, 4)) + 1j * rng.normal(size=(2, 4))
    w = rng.normal(size=(4, 4))

    def loss_np(re, im):
        z = sl.null_space(re + 1j * im)
        return np.sum(np.real(z @ z.conj().T) * w)

    got = tl.grad(lambda x: tl.sum(tl.real(L.null_space(x) @ tl.conj(tl.transpose(L.null_space(x)))) * w))(
        tl.tensor(a)
    ).numpy()
    d_re = central_differences(lambda re: loss_np(re, a.imag), a.real)
    d_im = central_differences(lambda im: loss_np(a.real, im), a.imag)
    # JAX's convention for a real loss of a complex input: the gradient is d/d re - i d/d im.
    np.testing.assert_allclose(got, d_re - 1j * d_im, atol=1e-6)


def test_null_space_projector_second_derivative_matches_differences():
    rng = _rng(5)
    a, w = rng.normal(size=(2, 4)), rng.normal(size=(4, 4))
    tl.testing.check_grads(lambda x: tl.sum((lambda z: z @ tl.transpose(z))(L.null_space(x)) * w), (a,), order=2)


# ---------------------------------------------------------------- tl.scan over a length known only at run time
def _running(c, x):
    c = c * 0.5 + tl.sin(x)
    return c, c * x


def _running_reference(c, xs):
    ys = []
    for x in xs:
        c = c * 0.5 + np.sin(x)
        ys.append(c * x)
    return c, np.array(ys).reshape((len(xs),) + np.shape(c))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_traced_with_unknown_length_runs_every_length(reverse):
    # TF's tf.scan runs over a leading size known only at run time; tl.scan refused ("needs the same known
    # leading size"), so an LSTM could not be traced for sequences of any length.
    f = tl.function(lambda c, xs: tl.scan(_running, c, xs, reverse=reverse))
    graph = f.get_graph(tl.TensorSpec((2,), tl.float64), tl.TensorSpec((None, 2), tl.float64))
    assert sum(node.op_type == "Scan" for node in graph.nodes) == 1
    rng = _rng(4)
    for steps in (0, 1, 5):
        c0, xs = rng.normal(size=2), rng.normal(size=(steps, 2))
        c, ys = f(c0, xs)
        order = xs[::-1] if reverse else xs
        want_c, want_ys = _running_reference(c0, order)
        np.testing.assert_allclose(c.numpy(), want_c, atol=1e-12)
        np.testing.assert_allclose(ys.numpy(), want_ys[::-1] if reverse else want_ys, atol=1e-12)


def test_scan_traced_with_unknown_length_gradient_matches_differences():
    def loss(c, xs):
        c, ys = tl.scan(_running, c, xs)
        return tl.sum(ys) + tl.sum(c * c)

    grad = tl.function(tl.grad(loss, argnums=(0, 1)))
    grad.get_graph(tl.TensorSpec((2,), tl.float64), tl.TensorSpec((None, 2), tl.float64))
    rng = _rng(5)

    def loss_np(c, xs):
        c, ys = _running_reference(c, xs)
        return ys.sum() + (c * c).sum()

    for steps in (1, 4):
        c0, xs = rng.normal(size=2), rng.normal(size=(steps, 2))
        g_c, g_xs = grad(c0, xs)
        np.testing.assert_allclose(g_c.numpy(), central_differences(lambda c: loss_np(c, xs), c0), atol=1e-7)
        np.testing.assert_allclose(g_xs.numpy(), central_differences(lambda x: loss_np(c0, x), xs), atol=1e-7)


def test_scan_traced_with_unknown_length_refuses_xs_of_different_lengths():
    f = tl.function(lambda xs, ys: tl.scan(lambda c, x: (c + x[0] * x[1], c), 0.0, (xs, ys)))
    graph = f.get_graph(tl.TensorSpec((None,), tl.float64), tl.TensorSpec((None,), tl.float64))
    np.testing.assert_allclose(graph(np.arange(3.0), np.ones(3))[0].numpy(), 3.0)
    with pytest.raises(ValueError, match=r"tl.scan: every leaf of xs needs the same leading size.*\(3,\).*\(4,\)"):
        graph(np.arange(3.0), np.ones(4))
    with pytest.raises(ValueError, match=r"tl.scan: every leaf of xs needs the same leading size.*\[3\].*\[4\]"):
        f(np.arange(3.0), np.ones(4))


def _numpy_gru(x, weights, hidden):
    """torch.nn.GRU's equations for one layer, one direction, (time, batch, features), written in NumPy."""
    w_ih, w_hh, b_ih, b_hh = weights
    h = np.zeros((x.shape[1], hidden))
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    out = []
    for x_t in x:
        gi, gh = x_t @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        r, z = (
            sigmoid(gi[:, :hidden] + gh[:, :hidden]),
            sigmoid(gi[:, hidden : 2 * hidden] + gh[:, hidden : 2 * hidden]),
        )
        n = np.tanh(gi[:, 2 * hidden :] + r * gh[:, 2 * hidden :])
        h = (1 - z) * n + z * h
        out.append(h)
    return np.array(out).reshape(len(x), x.shape[1], hidden), h


@pytest.mark.parametrize("batch_first", [False, True])
def test_torch_gru_traced_with_unknown_time_and_batch_matches_numpy(batch_first):
    gru = tl.nn.torch.GRU(3, 4, batch_first=batch_first, dtype=tl.float64, seed=0)
    weights = [getattr(gru, f"{w}_l0").numpy() for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    f = tl.function(lambda x: gru(x))
    f.get_graph(tl.TensorSpec((None, None, 3), tl.float64))
    rng = _rng(6)
    for time, batch in ((5, 2), (1, 3), (7, 1)):
        x = rng.normal(size=(time, batch, 3))
        output, h_n = f(np.swapaxes(x, 0, 1) if batch_first else x)
        want_output, want_h = _numpy_gru(x, weights, 4)
        np.testing.assert_allclose(output.numpy(), np.swapaxes(want_output, 0, 1) if batch_first else want_output)
        np.testing.assert_allclose(h_n.numpy(), want_h[None], atol=1e-12)


def test_torch_lstm_traced_with_unknown_time_matches_torch_with_gradients():
    torch = pytest.importorskip("torch")
    torch_lstm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    lstm = tl.nn.torch.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=tl.float64)
    lstm.load_state_dict({k: v.detach().numpy() for k, v in torch_lstm.state_dict().items()})
    names = [name for name, _ in torch_lstm.named_parameters()]

    def loss_and_grads(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            output, (h_n, c_n) = lstm(x)
            loss = tl.sum(output * output) + tl.sum(c_n)
        return loss, tape.gradient(loss, [x] + [getattr(lstm, n) for n in names])

    f = tl.function(loss_and_grads)
    f.get_graph(tl.TensorSpec((None, None, 3), tl.float64))
    x = _rng(7).normal(size=(2, 6, 3))
    loss, grads = f(x)
    tx = torch.tensor(x, requires_grad=True)
    output, (h_n, c_n) = torch_lstm(tx)
    want = (output * output).sum() + c_n.sum()
    want_grads = torch.autograd.grad(want, [tx] + list(torch_lstm.parameters()))
    np.testing.assert_allclose(float(loss), want.item(), rtol=1e-12)
    for name, got, expected in zip(["input"] + names, grads, want_grads):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-10, err_msg=name)


# ---------------------------------------------------------------- Variable.assign_add from several threads
@pytest.mark.parametrize("method", ["assign_add", "assign_sub"])
def test_eager_assign_add_from_threads_loses_no_update(method):
    # TF's assign_add is one atomic read-modify-write; here another thread's update between the read and the
    # write was lost (8 threads x 300 adds of 1 ended short of 2400).
    import sys
    import threading

    counter = tl.Variable(np.float64(0.0))

    def work():
        for _ in range(300):
            getattr(counter, method)(1.0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert float(counter.numpy()) == (2400.0 if method == "assign_add" else -2400.0)


# ---------------------------------------------------------------- funm
def test_funm_of_empty_matrices_is_empty_not_a_reduction_error():
    # SciPy's funm raises IndexError on a 0x0 matrix; expm, sqrtm, cosm and tl.linalg's other matrix functions
    # return it (an empty matrix's function is empty).  funm raised "Max: zero-size array ...", naming no funm.
    for shape in [(0, 0), (2, 0, 0)]:
        out = L.funm(np.zeros(shape), tl.exp)
        assert out.shape == shape and out.dtype == tl.float64
        value, errest = L.funm(np.zeros(shape, np.complex128), tl.exp, disp=False)
        assert value.shape == shape and value.dtype == tl.complex128 and errest.shape == shape[:-2]
        np.testing.assert_array_equal(errest.numpy(), 0.0)
        grad = tl.grad(lambda a: tl.sum(L.funm(a, tl.exp)))(tl.tensor(np.zeros(shape)))
        assert grad.shape == shape


def test_funm_gradient_is_nan_where_its_value_is_undefined_not_a_finite_wrong_number():
    # At a defective matrix (a Jordan block) funm's value is NaN (documented: the eigenvector basis is
    # singular); its gradient was finite and wrong (8.6 off float64 differences of scipy.linalg.expm).
    jordan = np.array([[2.0, 1.0], [0.0, 2.0]])
    assert np.isnan(L.funm(jordan, tl.exp).numpy()).all()
    grad = tl.grad(lambda a: tl.sum(L.funm(a, tl.exp)))(tl.tensor(jordan)).numpy()
    assert np.isnan(grad).all()
    # batched: only the defective matrix's gradient is NaN; the other's matches differences of expm
    sl = pytest.importorskip("scipy.linalg")
    other = np.array([[0.5, 0.2], [0.1, -0.3]])
    grads = tl.grad(lambda a: tl.sum(L.funm(a, tl.exp)))(tl.tensor(np.stack([jordan, other]))).numpy()
    assert np.isnan(grads[0]).all()
    np.testing.assert_allclose(grads[1], central_differences(lambda a: sl.expm(a).sum(), other), atol=1e-7)


# ---------------------------------------------------------------- tl.nn.torch.LSTM's proj_size
def _numpy_projected_lstm(x, weights, h, c):
    """torch.nn.LSTM's equations with proj_size for one layer, one direction, (time, batch, features), in NumPy:
    gates i, f, g, o; c = f c + i g; h = (o tanh(c)) W_hr^T."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    hidden, out = w_hr.shape[1], []
    for x_t in x:
        z = x_t @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = (z[:, k * hidden : (k + 1) * hidden] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = (sigmoid(o) * np.tanh(c)) @ w_hr.T
        out.append(h)
    return np.array(out), h, c


def test_torch_lstm_proj_size_matches_numpy_equations_with_gradients():
    lstm = tl.nn.torch.LSTM(3, 5, proj_size=2, dtype=tl.float64, seed=0)
    assert lstm.weight_hr_l0.shape == (2, 5) and lstm.weight_hh_l0.shape == (20, 2)
    weights = [getattr(lstm, f"{w}_l0").numpy() for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
    rng = _rng(8)
    x, h0, c0 = rng.normal(size=(4, 2, 3)), rng.normal(size=(1, 2, 2)), rng.normal(size=(1, 2, 5))
    output, (h_n, c_n) = lstm(x, (h0, c0))
    want_output, want_h, want_c = _numpy_projected_lstm(x, weights, h0[0], c0[0])
    np.testing.assert_allclose(output.numpy(), want_output, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), want_h[None], atol=1e-12)
    np.testing.assert_allclose(c_n.numpy(), want_c[None], atol=1e-12)

    def loss_np(w_hr):
        out, _, c = _numpy_projected_lstm(x, weights[:4] + [w_hr], h0[0], c0[0])
        return (out**2).sum() + c.sum()

    with tl.GradientTape() as tape:
        output, (_, c_n) = lstm(x, (h0, c0))
        loss = tl.sum(output * output) + tl.sum(c_n)
    np.testing.assert_allclose(
        tape.gradient(loss, lstm.weight_hr_l0).numpy(), central_differences(loss_np, weights[4]), atol=1e-7
    )


@pytest.mark.parametrize("proj_size", [0, -1, 5, 7, 1.5])
def test_torch_lstm_proj_size_must_be_below_hidden_size(proj_size):
    if proj_size == 0:
        assert tl.nn.torch.LSTM(3, 5, proj_size=0).weight_hh_l0.shape == (20, 5)
        return
    with pytest.raises(
        ValueError, match=rf"LSTM: proj_size must be an integer in \[0, hidden_size=5\), got {proj_size}"
    ):
        tl.nn.torch.LSTM(3, 5, proj_size=proj_size)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_torch_lstm_proj_size_matches_torch_stacked(bidirectional):
    torch = pytest.importorskip("torch")
    kw = dict(num_layers=2, bidirectional=bidirectional, batch_first=True, proj_size=3)
    torch_lstm = torch.nn.LSTM(4, 6, **kw).double()
    lstm = tl.nn.torch.LSTM(4, 6, dtype=tl.float64, **kw)
    assert sorted(lstm.state_dict()) == sorted(torch_lstm.state_dict())
    lstm.load_state_dict({k: v.detach().numpy() for k, v in torch_lstm.state_dict().items()})
    directions = 2 if bidirectional else 1
    rng = _rng(9)
    x, h0, c0 = (
        rng.normal(size=(2, 5, 4)),
        rng.normal(size=(2 * directions, 2, 3)),
        rng.normal(size=(2 * directions, 2, 6)),
    )
    for hx in (None, (h0, c0)):
        output, (h_n, c_n) = lstm(x, hx)
        want, (want_h, want_c) = torch_lstm(torch.tensor(x), None if hx is None else tuple(map(torch.tensor, hx)))
        for got, expected in ((output, want), (h_n, want_h), (c_n, want_c)):
            np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), atol=1e-12)
    tx = torch.tensor(x, requires_grad=True)
    want, _ = torch_lstm(tx)
    want_grads = torch.autograd.grad((want**2).sum(), [tx] + list(torch_lstm.parameters()))
    names = [name for name, _ in torch_lstm.named_parameters()]
    xt = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        loss = tl.sum(lstm(xt)[0] ** 2)
    grads = tape.gradient(loss, [xt] + [getattr(lstm, n) for n in names])
    for name, got, expected in zip(["input"] + names, grads, want_grads):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-10, err_msg=name)


# ---------------------------------------------------------------- solve_banded, solve_continuous_lyapunov: errors
@pytest.mark.parametrize(
    "call, match",
    [
        # the error named MatrixSolve, an op the caller never called
        (
            lambda: L.solve_banded((1, 1), np.ones((3, 5)), np.ones(4)),
            r"solve_banded: b must have n = 5 rows .*ab shape \(3, 5\) float64, b shape \(4,\) float64",
        ),
        # "ab must have l + u + 1 = 1 rows ..., got ab shape (1, 5)": it has 1 row
        (
            lambda: L.solve_banded((-1, 1), np.ones((1, 5)), np.ones(5)),
            r"solve_banded: \(l, u\) must be two non-negative integers, got \(-1, 1\)",
        ),
        # int(1.5) read (1.5, 1) as (1, 1)
        (
            lambda: L.solve_banded((1.5, 1), np.ones((3, 5)), np.ones(5)),
            r"solve_banded: \(l, u\) must be two non-negative integers, got \(1.5, 1\)",
        ),
        # the error named SylvesterSolve
        (
            lambda: L.solve_continuous_lyapunov(np.ones((3, 3)), np.ones((2, 2))),
            r"solve_continuous_lyapunov: a and q must have the same size, got a shape \(3, 3\) float64, q shape "
            r"\(2, 2\) float64",
        ),
        (
            lambda: L.solve_continuous_lyapunov(np.ones((3, 2)), np.ones((3, 3))),
            r"solve_continuous_lyapunov: expected square matrices .*\(3, 2\)",
        ),
    ],
)
def test_banded_and_lyapunov_bad_inputs_raise_one_error_naming_the_function(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_solve_banded_and_lyapunov_match_scipy():
    sl = pytest.importorskip("scipy.linalg")
    rng = _rng(10)
    ab, b = rng.normal(size=(4, 6)), rng.normal(size=(6, 2))
    ab[2] += 6.0
    np.testing.assert_allclose(L.solve_banded((2, 1), ab, b).numpy(), sl.solve_banded((2, 1), ab, b), atol=1e-12)
    np.testing.assert_allclose(L.solve_banded((2, 1), ab, b[:, 0]).numpy(), sl.solve_banded((2, 1), ab, b[:, 0]))
    a, q = rng.normal(size=(3, 3)) - 3 * np.eye(3), rng.normal(size=(3, 3))
    np.testing.assert_allclose(
        L.solve_continuous_lyapunov(a, q).numpy(), sl.solve_continuous_lyapunov(a, q), atol=1e-12
    )
