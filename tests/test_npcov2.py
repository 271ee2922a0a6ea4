"""NumPy functions added in round 4 (tensorlib/ops/numpy_extra.py): values against NumPy itself, gradients
against float64 central differences (and PyTorch where installed), traced against eager, NumPy's dispatch,
and clear errors."""

import itertools

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(0)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    return x.numpy() if isinstance(x, tl.Tensor) else np.asarray(x)


def _same(got, want, dtype=True):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, dtype)
        return
    g, w = _np(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if dtype:
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-12, equal_nan=True)


def _t(x):
    return tl.tensor(x) if isinstance(x, np.ndarray) else x


@pytest.mark.parametrize("n,indexing,sparse", itertools.product(range(4), ["xy", "ij"], [False, True]))
def test_meshgrid_matches_numpy(n, indexing, sparse):
    arrs = [RNG.standard_normal(k + 2) for k in range(n)]
    _same(
        tl.meshgrid(*map(tl.tensor, arrs), indexing=indexing, sparse=sparse),
        np.meshgrid(*arrs, indexing=indexing, sparse=sparse),
    )


def test_broadcasting_helpers_match_numpy():
    for shapes in [((2, 1), (3,)), ((),), ((0, 3), (1, 3)), ((4, 1, 2), (3, 1), (1,))]:
        assert tl.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
        arrs = [RNG.standard_normal(s) for s in shapes]
        _same(tl.broadcast_arrays(*map(tl.tensor, arrs)), np.broadcast_arrays(*arrs))
    assert tl.broadcast_shapes(3, (2, 1)) == (2, 3)


@pytest.mark.parametrize("endpoint", [True, False])
def test_logspace_geomspace_match_numpy(endpoint):
    for s, e, n in itertools.product([0, 1.5, -2], [3, -1.0], [0, 1, 2, 5]):
        _same(tl.logspace(s, e, n, endpoint=endpoint, dtype="float64"), np.logspace(s, e, n, endpoint=endpoint))
        _same(tl.logspace(s, e, n, endpoint, 2.0, "float64"), np.logspace(s, e, n, endpoint, 2.0))
    for s, e, n in itertools.product([1, 0.5], [1000, 0.01], [0, 1, 2, 5]):
        _same(tl.geomspace(s, e, n, endpoint, "float64"), np.geomspace(s, e, n, endpoint))
        _same(tl.geomspace(-s, -e, n, endpoint, "float64"), np.geomspace(-s, -e, n, endpoint))
    assert tl.logspace(0, 1, 3).dtype == tl.float32  # tensorlib's default float, as linspace


def test_index_helpers_match_numpy():
    for N, M, k in itertools.product([0, 1, 4], [None, 0, 2, 5], [-2, 0, 1, 6]):
        _same(tl.tri(N, M, k, dtype="float64"), np.tri(N, M, k))
        _same(tl.triu_indices(N, k, M), np.triu_indices(N, k, M))
        _same(tl.tril_indices(N, k, M), np.tril_indices(N, k, M))
    for n, d in itertools.product([0, 3], [1, 3]):
        _same(tl.diag_indices(n, d), np.diag_indices(n, d))
    for dims in [(), (0,), (2, 3), (1, 2, 3)]:
        _same(tl.indices(dims), np.indices(dims))
        _same(tl.indices(dims, sparse=True), np.indices(dims, sparse=True))
    for shape, order in itertools.product([(2, 4), (3,), (2, 3, 4), (5, 1, 2)], "CF"):
        flat = RNG.integers(0, int(np.prod(shape)), (3, 2))
        coords = np.unravel_index(flat, shape, order)
        _same(tl.unravel_index(tl.tensor(flat), shape, order), coords)
        _same(tl.ravel_multi_index(tuple(map(tl.tensor, coords)), shape, order=order), flat)
        off = tuple(c + RNG.integers(-3, 4, c.shape) for c in coords)
        for mode in ("wrap", "clip"):
            want = np.ravel_multi_index(off, shape, mode=mode, order=order)
            _same(tl.ravel_multi_index(tuple(map(tl.tensor, off)), shape, mode=mode, order=order), want)


def test_splits_rollaxis_block_match_numpy():
    for shape in [(4,), (2, 6), (4, 2, 6)]:
        x = RNG.standard_normal(shape)
        for sections, name in itertools.product([1, 2, [1, 3], [0, 10], [-1]], ["hsplit", "vsplit", "dsplit"]):
            try:
                want = getattr(np, name)(x, sections)
            except ValueError:
                with pytest.raises(ValueError, match=name):
                    getattr(tl, name)(tl.tensor(x), sections)
                continue
            _same(getattr(tl, name)(tl.tensor(x), sections), want)
    x = RNG.standard_normal((2, 3, 4, 5))
    for axis, start in itertools.product(range(-4, 4), range(-4, 5)):
        _same(tl.rollaxis(tl.tensor(x), axis, start), np.rollaxis(x, axis, start))
    a, b, c = np.ones((2, 2)), np.zeros((2, 1)), np.full((1, 3), 2.0)
    for spec in [
        [a, b],
        [[a, b], [c]],
        [[[np.ones(1)]]],
        [np.arange(2.0), np.ones(1)],
        [[np.arange(3.0)], [np.ones(3)]],
    ]:

        def tens(s):
            return [tens(v) for v in s] if isinstance(s, list) else tl.tensor(s)

        _same(tl.block(tens(spec)), np.block(spec))


def test_insert_delete_match_numpy():
    for shape, axis in [((6,), None), ((3, 4), 0), ((3, 4), 1), ((3, 4), None), ((2, 3, 4), -1)]:
        x = np.arange(np.prod(shape)).reshape(shape)
        n = x.size if axis is None else shape[axis]
        for obj in [0, -1, [0, 2], slice(1, None, 2), [], [1, 1], np.arange(n) % 2 == 0]:
            _same(tl.delete(tl.tensor(x), obj, axis), np.delete(x, obj, axis))
        for obj, values in [(0, 99), (n, [7, 8]), (-1, 5), ([0, 2], [11, 12]), ([1], [7, 8]), ([n, 0], 3), (1, 2.7)]:
            try:
                want = np.insert(x, obj, values, axis)
            except ValueError:
                with pytest.raises(ValueError, match="insert"):
                    tl.insert(tl.tensor(x), obj, values, axis)
                continue
            _same(tl.insert(tl.tensor(x), obj, values, axis), want)


def test_calculus_helpers_match_numpy():
    for x in [np.arange(5.0) ** 2, np.array([[1, 5], [2, 9]]), np.array([3.0])]:
        _same(tl.ediff1d(tl.tensor(x)), np.ediff1d(x))
        _same(tl.ediff1d(tl.tensor(x), to_end=[1, 2], to_begin=-9), np.ediff1d(x, to_end=[1, 2], to_begin=-9))
    for shape in [(5,), (3, 4), (1,), (0,)]:
        y = RNG.standard_normal(shape)
        for ax in range(-len(shape), len(shape)):
            xs = np.sort(RNG.standard_normal(shape[ax]))
            _same(tl.trapezoid(tl.tensor(y), axis=ax), np.trapezoid(y, axis=ax))
            _same(tl.trapz(tl.tensor(y), dx=0.3, axis=ax), np.trapezoid(y, dx=0.3, axis=ax))
            _same(tl.trapezoid(tl.tensor(y), tl.tensor(xs), axis=ax), np.trapezoid(y, xs, axis=ax))
    for k in range(4):
        p, x = RNG.standard_normal(k), RNG.standard_normal((2, 3))
        _same(tl.polyval(tl.tensor(p), tl.tensor(x)), np.polyval(p, x))
    _same(tl.polyval(tl.tensor([2, 0, 1]), tl.tensor([1, 3])), np.polyval([2, 0, 1], [1, 3]))
    x = RNG.standard_normal(10)
    _same(
        tl.select([tl.tensor(x < 0), tl.tensor(x > 1)], [tl.tensor(x * 2), tl.tensor(x**2)], -1.0),
        np.select([x < 0, x > 1], [x * 2, x**2], -1.0),
    )
    _same(tl.select([tl.tensor(x < 0)], [tl.tensor(np.arange(10))]), np.select([x < 0], [np.arange(10)]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("shape", [(3, 5), (5,), (1, 4), (4, 1), (2, 2)])
def test_cov_corrcoef_match_numpy(shape):
    m, y = RNG.standard_normal(shape), RNG.standard_normal(shape)
    for rowvar, bias, ddof in itertools.product([True, False], [False, True], [None, 0, 2]):
        kw = {"rowvar": rowvar, "bias": bias, "ddof": ddof}
        nobs = m.shape[-1] if rowvar or m.ndim == 1 else m.shape[0]
        fw, aw = RNG.integers(1, 4, nobs), RNG.random(nobs)
        _same(tl.cov(tl.tensor(m), **kw), np.cov(m, **kw))
        _same(tl.cov(tl.tensor(m), fweights=fw, aweights=aw, **kw), np.cov(m, fweights=fw, aweights=aw, **kw))
        _same(tl.cov(tl.tensor(m.astype(np.float32)), **kw), np.cov(m.astype(np.float32), **kw))  # float64, as NumPy
        _same(tl.corrcoef(tl.tensor(m), rowvar=rowvar), np.corrcoef(m, rowvar=rowvar))
        if rowvar or shape[0] != 1:
            _same(tl.cov(tl.tensor(m), tl.tensor(y), **kw), np.cov(m, y, **kw))
            _same(tl.corrcoef(tl.tensor(m), tl.tensor(y), rowvar=rowvar), np.corrcoef(m, y, rowvar=rowvar))


@pytest.mark.filterwarnings("ignore:invalid value")
def test_interp_matches_numpy_including_edges():
    for trial in range(30):
        n = int(RNG.integers(1, 6))
        xp = np.sort(RNG.integers(-5, 5, n).astype(float)) if trial % 3 == 0 else np.sort(RNG.standard_normal(n))
        fp = RNG.standard_normal(n)
        x = np.concatenate([RNG.standard_normal(7) * 3, xp, [np.nan, np.inf, -np.inf]])
        kw = {} if trial % 2 else {"left": -7.0, "right": 9.0}
        _same(tl.interp(tl.tensor(x), tl.tensor(xp), tl.tensor(fp), **kw), np.interp(x, xp, fp, **kw))
        xr = RNG.standard_normal(n) * 4
        _same(
            tl.interp(tl.tensor(x[:7]), tl.tensor(xr), tl.tensor(fp), period=2.5), np.interp(x[:7], xr, fp, period=2.5)
        )
        fc = fp + 1j * RNG.standard_normal(n)
        _same(tl.interp(tl.tensor(x[:7]), tl.tensor(xp), tl.tensor(fc)), np.interp(x[:7], xp, fc))
    args = ([0.5, 1.5], [0.0, 1.0, 2.0], [0.0, np.inf, 1.0])  # an infinite slope: NumPy's fallback from the other end
    _same(tl.interp(*map(tl.tensor, args)), np.interp(*args))
    _same(tl.interp(tl.tensor([1, 2]), tl.tensor([0, 4]), tl.tensor([0, 8])), np.interp([1, 2], [0, 4], [0, 8]))


def test_convolve_correlate_match_numpy():
    for n, m in itertools.product(range(1, 6), range(1, 6)):
        a, v = RNG.standard_normal(n), RNG.standard_normal(m)
        ac, vc = a + 1j * RNG.standard_normal(n), v + 1j * RNG.standard_normal(m)
        ai, vi = RNG.integers(-3, 4, n), RNG.integers(-3, 4, m)
        for mode in ("full", "same", "valid"):
            _same(tl.convolve(tl.tensor(a), tl.tensor(v), mode), np.convolve(a, v, mode))
            _same(tl.correlate(tl.tensor(a), tl.tensor(v), mode), np.correlate(a, v, mode))
            _same(tl.convolve(tl.tensor(ac), tl.tensor(vc), mode), np.convolve(ac, vc, mode))
            _same(tl.correlate(tl.tensor(ac), tl.tensor(vc), mode), np.correlate(ac, vc, mode))
            _same(tl.convolve(tl.tensor(ai), tl.tensor(vi), mode), np.convolve(ai, vi, mode))
            _same(tl.correlate(tl.tensor(ai), tl.tensor(v), mode), np.correlate(ai, v, mode))


def test_sets_and_orderings_match_numpy():
    for trial in range(20):
        a, b = RNG.integers(-4, 5, RNG.integers(0, 8)), RNG.integers(-4, 5, RNG.integers(0, 8))
        if trial % 4 == 0:
            a = a.astype(float)
            a[:1] = np.nan
        _same(tl.isin(tl.tensor(a), tl.tensor(b)), np.isin(a, b))
        _same(tl.isin(tl.tensor(a.reshape(-1, 1)), b, invert=True), np.isin(a.reshape(-1, 1), b, invert=True))
        _same(tl.in1d(tl.tensor(a.reshape(-1, 1)), b), np.isin(a.ravel(), b))
        _same(tl.union1d(tl.tensor(a), tl.tensor(b)), np.union1d(a, b))
        _same(tl.intersect1d(tl.tensor(a), tl.tensor(b)), np.intersect1d(a, b))
        _same(
            tl.intersect1d(tl.tensor(a), tl.tensor(b), return_indices=True), np.intersect1d(a, b, return_indices=True)
        )
        _same(tl.setdiff1d(tl.tensor(a), tl.tensor(b)), np.setdiff1d(a, b))
        ua = np.unique(a)
        RNG.shuffle(ua)
        _same(tl.setdiff1d(tl.tensor(ua), tl.tensor(b), assume_unique=True), np.setdiff1d(ua, b, assume_unique=True))
    for shape in [(6,), (3, 5), (2, 3, 4)]:
        keys = [RNG.integers(0, 3, shape) for _ in range(3)]
        for ax in range(-len(shape), len(shape)):
            _same(tl.lexsort([tl.tensor(k) for k in keys], axis=ax), np.lexsort(keys, axis=ax))
            x = RNG.standard_normal(shape)
            kth = int(RNG.integers(0, shape[ax]))
            want = np.take(np.partition(x, kth, axis=ax), kth, axis=ax)
            _same(np.take(_np(tl.partition(tl.tensor(x), kth, axis=ax)), kth, axis=ax), want)
            order = _np(tl.argpartition(tl.tensor(x), [0, kth], axis=ax))
            _same(np.take(np.take_along_axis(x, order, ax), kth, axis=ax), want)
    _same(tl.lexsort(tl.tensor(np.array([[1, 0, 1], [0, 0, 1]]))), np.lexsort(np.array([[1, 0, 1], [0, 0, 1]])))


GRADS = {
    "meshgrid": (
        lambda a, b: tl.sum(tl.stack(tl.meshgrid(a, b)) ** 2 * np.arange(24.0).reshape(2, 4, 3)),
        [(3,), (4,)],
    ),
    "broadcast_arrays": (
        lambda a, b: tl.sum(tl.broadcast_arrays(a, b)[0] * tl.broadcast_arrays(a, b)[1] ** 2),
        [(2, 1), (3,)],
    ),
    "logspace": (lambda s, e: tl.sum(tl.logspace(s, e, 5, dtype="float64") * np.arange(5.0)), [(), ()]),
    "geomspace": (lambda s, e: tl.sum(tl.geomspace(s, e, 4, endpoint=False, dtype="float64") ** 2), [(), ()]),
    "splits": (lambda x: tl.sum(tl.hsplit(x, 2)[1] ** 2) + tl.sum(tl.vsplit(x, [1])[0] * 3), [(2, 4)]),
    "rollaxis_block": (
        lambda a, b: tl.sum(tl.block([[a, tl.rollaxis(b, 1)], [b, a]]) ** 2 * np.arange(16.0).reshape(4, 4)),
        [(2, 2), (2, 2)],
    ),
    "insert_delete": (
        lambda x, v: tl.sum(
            tl.delete(tl.insert(x, [1, 1, 3], v, axis=1), 0, axis=1) ** 2 * np.arange(12.0).reshape(2, 6)
        ),
        [(2, 4), (2, 3)],
    ),
    "ediff1d": (lambda x, b: tl.sum(tl.ediff1d(x, to_begin=b) ** 2), [(2, 3), (2,)]),
    "trapezoid": (lambda y, x: tl.sum(tl.trapezoid(y**2, x, axis=0) * np.arange(3.0)), [(4, 3), (4,)]),
    "cov": (
        lambda m, aw: tl.sum(tl.cov(m, rowvar=False, aweights=aw, fweights=np.array([1, 2, 1, 3, 1])) ** 2),
        [(5, 2), (5,)],
    ),
    "corrcoef": (lambda m: tl.sum(tl.corrcoef(m) * np.arange(9.0).reshape(3, 3)), [(3, 5)]),
    "interp": (lambda x, fp: tl.sum(tl.interp(x, np.array([-3.0, -1.0, 2.5, 3.0]), fp) ** 2), [(5,), (4,)]),
    "convolve": (lambda a, v: tl.sum(tl.convolve(a, v, "same") ** 2 * np.arange(6.0)), [(3,), (6,)]),
    "correlate": (lambda a, v: tl.sum(tl.correlate(a, v, "full") ** 2 * np.arange(7.0)), [(5,), (3,)]),
    "polyval_select": (lambda p, x: tl.sum(tl.select([x > 0], [tl.polyval(p, x)], x**3)), [(4,), (2, 3)]),
    "partition": (lambda x: tl.sum(tl.partition(x, 1) * np.arange(4.0)), [(4,)]),
    "choose": (lambda a, b: tl.sum(tl.choose(np.array([[0, 1, 1], [1, 0, 0]]), [a, b]) ** 3), [(2, 3), (3,)]),
    "compress": (lambda a: tl.sum(tl.compress([True, False, True], a, axis=1) ** 3), [(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_finite_differences_and_tracing(name):
    f, shapes = GRADS[name]
    rng = np.random.default_rng(1)
    args = [rng.random(s) + 0.5 if name in ("geomspace", "cov") else rng.standard_normal(s) for s in shapes]
    if name == "trapezoid":
        args[1] = np.sort(args[1])
    check_grads(f, args, order=2)
    tensors = [tl.tensor(a) for a in args]
    np.testing.assert_allclose(_np(tl.function(f)(*tensors)), _np(f(*tensors)), rtol=1e-12)
    argnums = tuple(range(len(args)))
    traced = tl.function(tl.grad(f, argnums=argnums))(*tensors)
    for t, e in zip(traced, tl.grad(f, argnums=argnums)(*tensors)):
        np.testing.assert_allclose(_np(t), _np(e), rtol=1e-12)


def test_interp_gradients_and_integer_helpers_trace():
    x, xp, fp = tl.tensor([0.5, 1.5]), tl.tensor([0.0, 1.0, 2.0]), tl.tensor([0.0, 2.0, 3.0])
    gx, gxp, gfp = tl.grad(lambda x, xp, fp: tl.sum(tl.interp(x, xp, fp)), argnums=(0, 1, 2))(x, xp, fp)
    # d/dxp of the interpolant (jax.grad(jnp.interp) too): -(1 - t) * slope at the left knot, -t * slope at the right
    assert gx.numpy().tolist() == [2.0, 1.0] and gxp.numpy().tolist() == [-1.0, -1.5, -0.5]
    assert gfp.numpy().tolist() == [0.5, 1.0, 0.5]

    @tl.function
    def f(flat, e, t):
        rows, cols = tl.unravel_index(flat, (3, 4))
        return tl.ravel_multi_index((rows, cols), (3, 4), mode="clip"), tl.isin(e, t), tl.lexsort([e, t])

    flat, e, t = tl.tensor([5, 11, 0]), tl.tensor([3, 1, 2]), tl.tensor([2, 2, 1])
    got = f(flat, e, t)
    _same(got, [np.array([5, 11, 0]), np.isin([3, 1, 2], [2, 2, 1]), np.lexsort([[3, 1, 2], [2, 2, 1]])])


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    m, y, x = rng.standard_normal((3, 6)), rng.standard_normal((4, 5)), np.sort(rng.standard_normal(5))
    a, v = rng.standard_normal(7), rng.standard_normal(3)
    w = rng.standard_normal((3, 3))

    def torch_grad(f, *arrays):
        ts = [torch.tensor(arr, requires_grad=True) for arr in arrays]
        f(*ts).backward()
        return [t.grad.numpy() for t in ts]

    pairs = [
        (lambda m: tl.sum(tl.cov(m) * w), lambda m: (torch.cov(m) * torch.tensor(w)).sum(), [m]),
        (lambda m: tl.sum(tl.corrcoef(m) * w), lambda m: (torch.corrcoef(m) * torch.tensor(w)).sum(), [m]),
        (lambda y, x: tl.sum(tl.trapezoid(y, x) ** 2), lambda y, x: (torch.trapezoid(y, x) ** 2).sum(), [y, x]),
        (
            lambda a, v: tl.sum(tl.convolve(a, v) ** 2),
            lambda a, v: (torch.nn.functional.conv1d(a[None, None], v.flip(0)[None, None], padding=2)[0, 0] ** 2).sum(),
            [a, v],
        ),
    ]
    for ours, theirs, arrays in pairs:
        grads = tl.grad(ours, argnums=tuple(range(len(arrays))))(*map(tl.tensor, arrays))
        for g, want in zip(grads, torch_grad(theirs, *arrays)):
            np.testing.assert_allclose(_np(g), want, rtol=1e-10, atol=1e-12)


def test_numpy_functions_dispatch_to_tensorlib():
    t = tl.tensor(np.array([3.0, 1.0, 2.0, 5.0]))
    m = tl.tensor(np.arange(12.0).reshape(3, 4))
    calls = [
        (np.meshgrid, (t, t), {"indexing": "ij"}),
        (np.broadcast_arrays, (t, m), {}),
        (np.hsplit, (m, 2), {}),
        (np.block, ([m, m],), {}),
        (np.ediff1d, (t,), {"to_begin": [0.0]}),
        (np.trapezoid, (t,), {"dx": 2.0}),
        (np.cov, (m,), {"rowvar": False}),
        (np.corrcoef, (m,), {}),
        (np.interp, (t, tl.tensor([0.0, 10.0]), tl.tensor([0.0, 1.0])), {}),
        (np.convolve, (t, t), {"mode": "same"}),
        (np.polyval, (t, t), {}),
        (np.insert, (t, 1, 9.0), {}),
        (np.delete, (t, 1), {}),
        (np.isin, (t, [1.0]), {}),
        (np.partition, (t, 1), {}),
    ]
    for fn, args, kwargs in calls:
        got = fn(*args, **kwargs)
        for g in got if isinstance(got, tuple) else (got,):
            assert isinstance(g, tl.Tensor), fn.__name__
        want = fn(*[_np(a) if isinstance(a, tl.Tensor) else a for a in args], **kwargs)
        _same(got, want)
    with tl.GradientTape() as tape:
        tape.watch(t)
        s = tl.sum(np.meshgrid(t, t)[0] * np.convolve(t, t, mode="same"))
    assert tape.gradient(s, t) is not None


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: tl.meshgrid(tl.zeros(2), indexing="xx"), ValueError, "meshgrid: indexing"),
        (lambda: tl.broadcast_arrays(tl.zeros((2, 3)), tl.zeros(4)), ValueError, r"broadcast_arrays: shapes \(2, 3\)"),
        (lambda: tl.vsplit(tl.zeros(4), 2), ValueError, "vsplit: works only on arrays of 2"),
        (lambda: tl.hsplit(tl.zeros((2, 5)), 2), ValueError, "hsplit: axis 1 of size 5"),
        (lambda: tl.rollaxis(tl.zeros((2, 3)), 0, 5), ValueError, "rollaxis: start 5"),
        (lambda: tl.block([[tl.zeros(2)], tl.zeros(2)]), ValueError, "block: list depths"),
        (lambda: tl.block([tl.zeros((2, 2)), tl.zeros((3, 3))]), ValueError, "block: the blocks"),
        (lambda: tl.delete(tl.zeros(3), 5), IndexError, "delete: index"),
        (lambda: tl.insert(tl.zeros(3), 5, 1.0), IndexError, "insert: index"),
        (lambda: tl.trapezoid(tl.zeros(3), tl.zeros(4)), ValueError, r"trapezoid: x of shape \(4,\)"),
        (lambda: tl.cov(tl.zeros((2, 2, 2))), ValueError, "cov: m has more than 2"),
        (lambda: tl.interp(tl.zeros(2), tl.zeros(3), tl.zeros(2)), ValueError, "interp: fp and xp"),
        (lambda: tl.convolve(tl.zeros(0), tl.zeros(2)), ValueError, "convolve: a cannot be empty"),
        (lambda: tl.correlate(tl.zeros(3), tl.zeros(2), mode="bad"), ValueError, "correlate: mode"),
        (lambda: tl.select([tl.zeros(2)], [tl.zeros(2)]), TypeError, "select: invalid entry 0"),
        (lambda: tl.partition(tl.zeros(3), 3), ValueError, "partition: kth 3 out of bounds"),
        (lambda: tl.unravel_index(tl.tensor([12]), (3, 4)), ValueError, "unravel_index: an index"),
        (lambda: tl.unravel_index(tl.tensor([1.0]), (3, 4)), TypeError, "unravel_index: indices must be integers"),
        (lambda: tl.ravel_multi_index((tl.tensor([3]), tl.tensor([0])), (3, 4)), ValueError, "ravel_multi_index"),
        (lambda: tl.geomspace(-1, 1), ValueError, "geomspace: start -1 and stop 1"),
        (lambda: tl.lexsort([tl.zeros(2), tl.zeros(3)]), ValueError, "lexsort: all keys"),
        (lambda: tl.ediff1d(tl.tensor([1, 2]), to_begin=0.5), TypeError, "ediff1d: dtype of to_begin"),
    ],
)
def test_bad_input_raises_one_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_inputs_are_not_modified():
    x = np.arange(6.0)
    keep = x.copy()
    t = tl.tensor(x)
    tl.insert(t, 2, 9.0), tl.delete(t, 2), tl.interp(t, t, t), tl.cov(t), tl.intersect1d(t, t, return_indices=True)
    np.testing.assert_array_equal(x, keep)
    np.testing.assert_array_equal(t.numpy(), keep)


# ------------------------------------------------------------------ choose and compress (session 9)
_CHOICES = [RNG.normal(size=(3, 4)), RNG.normal(size=(4,)), np.float64(2.5), RNG.normal(size=(3, 1))]


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy_in_every_mode(mode):
    index = RNG.integers(0, 4, (3, 4)) if mode == "raise" else RNG.integers(-6, 9, (3, 4))
    want = np.choose(index, _CHOICES, mode=mode)
    _same(tl.choose(index, _CHOICES, mode=mode), want)
    _same(np.choose(tl.tensor(index), _CHOICES, mode=mode), want)  # NumPy's dispatch
    traced = tl.function(lambda i, *c: tl.choose(i, c, mode=mode))
    _same(traced(index, *_CHOICES), want)
    # Each choice's gradient: 2 * the result where it was chosen, summed back to the choice's shape.
    grads = tl.grad(lambda *c: tl.sum(tl.choose(index, c, mode=mode) ** 2), argnums=(0, 1, 2, 3))(*_CHOICES)
    picked = np.choose(index, range(4), mode=mode)
    for k, g in enumerate(grads):
        full = np.where(picked == k, 2 * want, 0.0)
        summed = full.sum(axis=tuple(range(full.ndim - np.ndim(_CHOICES[k]))))
        summed = summed.sum(axis=tuple(i for i, d in enumerate(np.shape(_CHOICES[k])) if d == 1), keepdims=True)
        np.testing.assert_allclose(g.numpy(), summed.reshape(np.shape(_CHOICES[k])), rtol=1e-12)


def test_choose_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match=r"choose: invalid entry -1 in a: there are 2 choices"):
        tl.choose([0, -1], [[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="choose: a must hold integer indices, got float64"):
        tl.choose(np.array([0.0, 1.0]), [[1, 2], [3, 4]])
    traced = tl.function(
        lambda i: tl.choose(i, [np.zeros(2), np.ones(2)]), input_signature=[tl.TensorSpec((2,), "int64")]
    )
    np.testing.assert_array_equal(traced(np.array([1, 0])).numpy(), [1.0, 0.0])
    with pytest.raises(IndexError):
        traced(np.array([0, 2]))  # traced: checked when the graph runs


@pytest.mark.parametrize(
    "condition, axis",
    [([1, 0, 1], 1), ([True], 0), ([0, 1], None), ([0, 0, 0, 0], 1), ([True, False, False, False], -1), ([], 0)],
)
def test_compress_matches_numpy(condition, axis):
    a = RNG.normal(size=(2, 3))
    want = np.compress(condition, a, axis=axis)
    _same(tl.compress(condition, a, axis=axis), want)
    _same(np.compress(condition, tl.tensor(a), axis=axis), want)
    grad = tl.grad(lambda t: tl.sum(tl.compress(condition, t, axis=axis) ** 2))(tl.tensor(a))
    kept = np.zeros(a.size if axis is None else a.shape[axis], bool)
    kept[np.flatnonzero(condition)] = True
    mask = kept.reshape(a.shape) if axis is None else np.expand_dims(kept, tuple(i for i in range(2) if i != axis % 2))
    np.testing.assert_allclose(grad.numpy(), np.where(mask, 2 * a, 0.0), rtol=1e-12)


def test_compress_refuses_a_true_entry_past_the_end():
    with pytest.raises(IndexError, match=r"compress: condition is true at index 3, past the end of axis 1"):
        tl.compress([0, 0, 0, 1], np.zeros((2, 3)), axis=1)
    with pytest.raises(ValueError, match="compress: condition must be a 1-d array"):
        tl.compress([[True]], np.zeros((2, 3)))
