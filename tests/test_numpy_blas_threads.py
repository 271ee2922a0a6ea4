"""The NumPy backend's BLAS thread policy (numpy_nn.blas) and its column sums (numpy_nn.sums).

OpenBLAS leaves its worker threads spinning for about 0.1 s after every threaded call, which takes
a core from tensorlib's own kernel threads; tensorlib's matmul therefore runs OpenBLAS on one
thread per piece and shares the pieces out itself. The products and sums must equal NumPy's to
rounding, checked against float64 references.
"""

import os
import threading
import time

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends.numpy_nn import blas, blocks, contract
from tensorlib.backends.numpy_nn.sums import column_sums

needs_openblas = pytest.mark.skipif(not blas.controls_openblas(), reason="NumPy's BLAS is not a controllable OpenBLAS")


def _reference_product(x, y):
    wide = np.complex128 if np.result_type(x, y).kind == "c" else np.float64
    return np.matmul(x.astype(wide), y.astype(wide))


# (x shape, y shape): every way matmul cuts a product (stacked matrices, rows, columns), broadcast
# batch axes, products too small to cut, and ragged piece sizes.
PRODUCT_CASES = [
    ((128, 3136), (3136, 128)),  # a contraction over 4x longer than rows and columns: cut along it
    ((2, 64, 4001), (4001, 50)),  # the same, stacked against one matrix, with ragged parts
    ((512, 700), (700, 128)),  # rows >= columns: cut along the rows
    ((7, 3000), (3000, 401)),  # fewer rows than columns: cut along the columns
    ((9, 64, 300), (9, 300, 70)),  # enough stacked matrices: cut along them
    ((3, 1, 200, 301), (5, 301, 90)),  # broadcast batch axes
    ((2, 500, 400), (400, 300)),  # stacked against one matrix, too few to cut along: rows
    ((4, 3), (3, 5)),  # too small for OpenBLAS to thread: one plain call
    ((1, 60000), (60000, 1)),  # one row and one column, a long contraction
]


@pytest.fixture
def sharing(monkeypatch):
    """As among kernels that share work out: products are cut into pieces (see numpy_nn.blas)."""
    monkeypatch.setattr(blas, "_threads_shared_within", lambda seconds: True)
    monkeypatch.setattr(blas, "_thread_count", lambda: 2)
    monkeypatch.setattr(blocks, "_thread_count", lambda: 2)


@pytest.mark.parametrize("x_shape, y_shape", PRODUCT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_matmul_equals_the_float64_product(x_shape, y_shape, dtype, sharing):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(dtype)
    y = rng.standard_normal(y_shape).astype(dtype)
    if dtype == np.complex64:
        x = x + 1j * rng.standard_normal(x_shape).astype(np.float32)
        y = y - 1j * rng.standard_normal(y_shape).astype(np.float32)
    got = blas.matmul(x, y)
    want = _reference_product(x, y)
    assert got.shape == want.shape and got.dtype == np.result_type(x, y)
    depth = x_shape[-1]
    tol = (1e-5 if np.dtype(dtype).itemsize <= 8 and dtype != np.float64 else 1e-12) * np.sqrt(depth)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_matmul_writes_into_out_and_reads_strided_operands(sharing):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 256)).astype(np.float32).T  # a transposed view: (256, 300)
    y = rng.standard_normal((300, 500)).astype(np.float32)[:, ::2]  # every other column: (300, 250)
    out = np.full((256, 250), np.nan, np.float32)
    result = blas.matmul(x, y, out=out)
    assert result is out
    np.testing.assert_allclose(out, _reference_product(x, y), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "x_shape, y_shape, depth_split", [((128, 3136), (3136, 128), True), ((128, 500), (500, 128), False)]
)
def test_a_long_contraction_is_cut_along_it_into_one_piece_per_thread(
    x_shape, y_shape, depth_split, sharing, monkeypatch
):
    calls = []
    real = blas._depth_split_matmul
    monkeypatch.setattr(blas, "_depth_split_matmul", lambda *args: calls.append(args[-1]) or real(*args))
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = rng.standard_normal(y_shape).astype(np.float32)
    results = [blas.matmul(x, y) for _ in range(6)]
    assert calls == ([2] * 6 if depth_split else [])
    # the pieces' products are added in order: the same bits on every call, whichever thread ran which
    assert all(np.array_equal(r, results[0]) for r in results)
    np.testing.assert_allclose(results[0], _reference_product(x, y), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("cut", ["depth", "rows", "columns"])
def test_matmul_into_an_operands_own_memory_equals_the_product_of_the_operands_before(cut, sharing):
    rng = np.random.default_rng(3)
    rows, depth, columns = {"depth": (64, 1024, 64), "rows": (512, 512, 128), "columns": (128, 512, 512)}[cut]
    buffer = rng.standard_normal((max(rows, depth), max(depth, columns))).astype(np.float32)
    x = buffer[:rows, :depth]
    y = rng.standard_normal((depth, columns)).astype(np.float32)
    want = _reference_product(x, y)
    out = buffer[:rows, :columns]  # the result overwrites the operand it is computed from
    blas.matmul(x, y, out=out)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


def test_matmul_of_integers_is_numpys_exact_product():
    x = np.arange(200 * 300, dtype=np.int64).reshape(200, 300) % 7
    y = np.arange(300 * 100, dtype=np.int64).reshape(300, 100) % 5
    assert np.array_equal(blas.matmul(x, y), x @ y)


def _cpu_seconds_while_sleeping(seconds: float) -> float:
    start = time.process_time()
    time.sleep(seconds)
    return time.process_time() - start


PRODUCTS = {
    "matmul": lambda x: tl.matmul(x, x),
    "einsum": lambda x: tl.einsum("ij,jk->ki", x, x),
    "tensordot": lambda x: tl.tensordot(x.reshape((32, 32, 1024)), x.reshape((32, 32, 1024)), axes=([0, 1], [1, 0])),
}


@pytest.fixture
def two_threads(monkeypatch):
    """tensorlib's kernels on two threads, even where the process was held to one (dask's in-process
    workers set OPENBLAS_NUM_THREADS=1, after OpenBLAS itself was loaded with more)."""
    (_, get_threads), *_ = blas._openblas_controls()
    if get_threads() < 2:
        pytest.skip("OpenBLAS runs on one thread here: it has no workers to spin")
    monkeypatch.setattr(blocks, "_thread_count", lambda: 2)
    monkeypatch.setattr(blas, "_thread_count", lambda: 2)


@needs_openblas
@pytest.mark.parametrize("product", sorted(PRODUCTS))
def test_a_big_product_among_kernels_sharing_work_leaves_no_blas_thread_spinning(product, two_threads):
    """After NumPy's own threaded product OpenBLAS's workers busy-wait (CPU time while this thread
    sleeps); after tensorlib's, of the same size, right after a kernel that shared its work out
    between threads (as in a conv net's step), they stay asleep."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    time.sleep(0.3)  # let workers woken by earlier tests fall asleep
    np.matmul(a, a)
    spun = _cpu_seconds_while_sleeping(0.1)
    if spun < 0.03:
        pytest.skip(f"this OpenBLAS does not spin after a threaded call ({spun:.3f} s of CPU in 0.1 s)")
    time.sleep(0.3)
    big = tl.tensor(rng.standard_normal((64, 64, 64, 16)).astype(np.float32))  # 16 MiB: relu shares it out
    tl.nn.relu(big).numpy()
    PRODUCTS[product](tl.tensor(a)).numpy()
    assert _cpu_seconds_while_sleeping(0.1) < 0.03


@needs_openblas
@pytest.mark.parametrize("recently_shared", [False, True])
def test_a_product_is_threaded_by_openblas_unless_kernels_share_work(recently_shared, monkeypatch, two_threads):
    """Products alone (a dense net) keep NumPy's call, which OpenBLAS threads (faster for a mid-size
    product than two pieces); among kernels that share work out, each piece runs on one BLAS thread."""
    (_, get_threads), *_ = blas._openblas_controls()
    seen = []
    real_matmul = np.matmul

    class Numpy:  # blas.np with a matmul that notes OpenBLAS's thread count at each call
        def __getattr__(self, name):
            return getattr(np, name)

        def matmul(self, *args, **kwargs):
            seen.append(get_threads())
            return real_matmul(*args, **kwargs)

    monkeypatch.setattr(blas, "np", Numpy())
    monkeypatch.setattr(blocks, "_shared_at", time.monotonic() if recently_shared else -np.inf)
    x = np.random.default_rng(3).standard_normal((400, 500)).astype(np.float32)
    got = blas.matmul(x, x.T)
    np.testing.assert_allclose(got, _reference_product(x, x.T), rtol=1e-4, atol=1e-3)
    if recently_shared:
        assert len(seen) >= 2 and set(seen) == {1}
    else:
        assert len(seen) == 1 and seen[0] >= 2


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(300, 400), (400, 500)]),
        ("bij,bjk->bik", [(8, 60, 70), (8, 70, 50)]),
        ("ijk,kjl->li", [(20, 30, 40), (40, 30, 70)]),  # contracted axes in another order
        ("abc,cd,db->a", [(50, 60, 70), (70, 80), (80, 60)]),  # three operands: two products
        ("ij,jk->ik", [(0, 400), (400, 500)]),  # empty
        ("ij,jk->ik", [(300, 0), (0, 500)]),  # empty contraction: zeros
    ],
)
def test_big_einsums_through_the_threaded_products_match_float64(equation, shapes, sharing):
    rng = np.random.default_rng(6)
    operands = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    got = tl.einsum(equation, *map(tl.tensor, operands)).numpy()
    want = np.einsum(equation, *(o.astype(np.float64) for o in operands))
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max(initial=0)))


def test_contract_tensordot_matches_numpys_and_names_a_mismatch():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 4, 2))
    for axes in (1, ([1, 2], [1, 0]), ([-1], [0]), 0):
        np.testing.assert_allclose(contract.tensordot(a, b, axes), np.tensordot(a, b, axes), rtol=1e-12)
    with pytest.raises(ValueError, match=r"tensordot: shape mismatch .*\(3, 4, 5\).*\(5, 4, 2\)"):
        contract.tensordot(a, b, axes=([0], [0]))


@needs_openblas
def test_single_threaded_nests_across_threads_and_restores_the_count():
    (_, get_threads), *_ = blas._openblas_controls()
    before = get_threads()
    inside = []
    entered, release = threading.Barrier(2), threading.Event()

    def hold():
        with blas.single_threaded:
            entered.wait()
            release.wait()
            inside.append(get_threads())

    worker = threading.Thread(target=hold)
    worker.start()
    with blas.single_threaded:
        entered.wait()
        inside.append(get_threads())
    # This thread left first: the other still holds the setting.
    inside.append(get_threads())
    release.set()
    worker.join()
    assert inside == [1, 1, 1]
    assert get_threads() == before


@needs_openblas
def test_single_threaded_restores_the_count_when_the_block_raises():
    (_, get_threads), *_ = blas._openblas_controls()
    before = get_threads()
    with pytest.raises(ValueError, match="mismatch"):
        with blas.single_threaded:
            blas.matmul(np.ones((300, 400), np.float32), np.ones((300, 400), np.float32))
    assert get_threads() == before


@needs_openblas
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_inside_a_block_gets_its_blas_threads_back():
    (_, get_threads), *_ = blas._openblas_controls()
    before = get_threads()
    with blas.single_threaded:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report the count it sees, and after leaving its block and one more
            seen = get_threads()
            blas.single_threaded.__exit__(None, None, None)
            with blas.single_threaded:
                inner = get_threads()
            os.write(write, bytes([seen, inner, get_threads()]))
            os._exit(0)
        os.waitpid(pid, 0)
        seen, inner, after = os.read(read, 3)
        os.close(read), os.close(write)
        assert get_threads() == 1  # the parent is still inside its block
    assert (seen, inner, after) == (before, 1, before)
    assert get_threads() == before


# ---------------------------------------------------------------------------
# column sums and the Sum kernel
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [1, 3, 32, 64, 700, 2048, 5000])
@pytest.mark.parametrize("extra_rows", [0, 1, 37])
def test_column_sums_match_the_float64_sums(columns, extra_rows):
    rng = np.random.default_rng(columns)
    fold = max(1, 2048 // columns)
    rows = 3 * fold + extra_rows
    matrix = (rng.standard_normal((rows, columns)) + 1).astype(np.float32)
    got = column_sums(matrix)
    want = matrix.astype(np.float64).sum(axis=0)
    assert got.shape == (columns,) and got.dtype == np.float32
    # Rounding can cost at most a few float32 epsilons per addition, relative to the sum of |values|.
    bound = 8 * np.finfo(np.float32).eps * np.sqrt(rows) * np.abs(matrix).astype(np.float64).sum(axis=0)
    assert np.all(np.abs(got - want) <= bound)


def test_column_sums_are_more_accurate_than_numpys_row_by_row_sum():
    matrix = (np.random.default_rng(3).standard_normal((100_352, 32)) + 1).astype(np.float32)
    want = matrix.astype(np.float64).sum(axis=0)
    folded_error = np.abs(column_sums(matrix) - want).max()
    numpy_error = np.abs(matrix.sum(axis=0) - want).max()
    assert folded_error < numpy_error


def test_column_sums_accumulate_half_precision_in_the_given_dtype():
    matrix = np.full((20_000, 4), 0.1, np.float16)  # a float16 running sum would stall at 256
    got = column_sums(matrix, np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 20_000 * np.float32(np.float16(0.1)), rtol=1e-5)


@pytest.mark.parametrize(
    "shape, axis, keepdims",
    [
        ((64, 14, 14, 8), (0, 1, 2), False),  # the bias gradient
        ((64, 14, 14, 8), (-4, -3, -2), True),
        ((500, 3), 0, False),
        ((2000, 5, 3), (0,), True),
        ((40, 30, 6), (0, 2), False),  # not leading axes: NumPy's sum
        ((0, 5), 0, False),  # empty
        ((6, 0), 0, False),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64"])
def test_sum_kernel_over_leading_axes_matches_numpy(shape, axis, keepdims, dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(dtype)
    got = tl.sum(tl.tensor(x), axis=axis, keepdims=keepdims).numpy()
    wide = np.complex128 if dtype == "complex64" else np.float64
    want = np.sum(x.astype(wide), axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(max(1, x.size)))


def test_sum_over_leading_axes_of_a_strided_view_is_right():
    x = np.random.default_rng(5).standard_normal((300, 40, 6)).astype(np.float32)[:, ::2]  # not contiguous
    got = tl.sum(tl.tensor(x), axis=(0, 1)).numpy()
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=(0, 1)), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128, np.int64])
@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((5, 1), (1, 4)), ((3, 5, 1), (3, 1, 4)), ((3, 5, 1), (1, 4)), ((5, 1), (2, 1, 4)), ((0, 1), (1, 3))],
)
def test_outer_product_matmuls_equal_numpys_bit_for_bit(a_shape, b_shape, dtype):
    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=s).astype(dtype) for s in (a_shape, b_shape))
    expected = np.matmul(a, b)
    got = blas.matmul(a, b)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    out = np.empty_like(expected)
    assert blas.matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out, expected)


def test_numpys_openblas_is_the_first_control_once_scipy_is_loaded():
    """SciPy's wheels ship an OpenBLAS of their own; where it was mapped at a lower address, the first control
    (the one the tests and callers read NumPy's thread count from) was SciPy's."""
    pytest.importorskip("scipy.linalg")
    paths = blas._loaded_openblas_paths()
    numpy_own = [p for p in paths if os.path.basename(os.path.dirname(p)) in ("numpy.libs", ".dylibs")]
    if not numpy_own:
        pytest.skip("NumPy's BLAS is not an OpenBLAS it ships")
    assert paths[0] == numpy_own[0]
