"""tl.distributed attacked as an adversary, second round: the same computations done eagerly in one piece
(tensorlib, NumPy float64), block by block on dask's local schedulers and on a LocalCluster of two
one-thread worker processes.

What it attacks: errors raised on one block (which block, and does the exception reach the caller whole,
as the caller's own class), blocks whose output differs from the first block's, auxiliary outputs of a
loss (``has_aux``: means, sums, nested, integer, per-row shapes hidden by blocks of one size), losses that
are not real floats, big-endian dask arrays, ``from_npy`` of missing or deleted files.
References: NumPy formulas in float64, eager ``tl.value_and_grad`` and eager calls of the function on all
rows at once.
"""

import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")  # the LocalCluster
# This module's functions and classes travel by value, as a script's would: the workers cannot import it.
pytest.importorskip("cloudpickle").register_pickle_by_value(sys.modules[__name__])

import tensorlib as tl  # noqa: E402
from _helpers import local_cluster  # noqa: E402

TIMEOUT = 60


@pytest.fixture(scope="module")
def client():
    with local_cluster(2, "1GiB", timeout=TIMEOUT) as c:
        yield c


def compute(y, client):
    return client.compute(y).result(timeout=TIMEOUT) if client is not None else y.compute(scheduler="sync")


class BlockError(Exception):
    def describe(self):
        return f"BlockError({self})"


ORIGINAL_DESCRIBE = BlockError.__dict__["describe"]


def one_row_fails(b):
    if b.shape[0] == 1:
        raise BlockError("this block has one row")
    return b * 2.0


def one_row_doubles(b):
    return tl.concat([b, b], axis=0) if b.shape[0] == 1 else b * 2.0


@pytest.mark.parametrize("on_cluster", [False, True])
def test_an_exception_of_the_callers_class_raised_on_a_block_is_caught_as_that_class(on_cluster, request):
    c = request.getfixturevalue("client") if on_cluster else None
    x = da.from_array(np.arange(14.0).reshape(7, 2), chunks=(3, 2))
    for _ in range(2):  # the second call finds the shipped function cached
        with pytest.raises(BlockError, match="this block has one row") as info:
            compute(tl.distributed.map_blocks(one_row_fails, x, client=c), c)
        assert type(info.value) is BlockError and info.value.describe() == "BlockError(this block has one row)"
        with pytest.raises(BlockError, match="this block has one row"):
            tl.distributed.value_and_grad(lambda p, x: tl.mean(one_row_fails(x) * p), 1.0, x, client=c)
    if not on_cluster:  # the caller's class was left alone by the local scheduler's copy
        assert BlockError.__dict__["describe"] is ORIGINAL_DESCRIBE


@pytest.mark.parametrize("on_cluster", [False, True])
def test_an_error_on_one_block_reaches_the_caller_whole_naming_the_block(on_cluster, request):
    c = request.getfixturevalue("client") if on_cluster else None
    x = da.from_array(np.arange(14.0).reshape(7, 2), chunks=(3, 2))  # blocks of rows 0:3, 3:6, 6:7
    with pytest.raises(BlockError, match="this block has one row") as info:
        compute(tl.distributed.map_blocks(one_row_fails, x, client=c), c)
    assert "tl.distributed.map_blocks: raised by one_row_fails on the block of rows 6:7" in info.value.__notes__
    with pytest.raises(ValueError, match=r"one_row_doubles returned shape \(2, 2\) .* the block of rows 6:7"):
        compute(tl.distributed.map_blocks(one_row_doubles, x, client=c), c)

    def loss(p, x):
        return tl.mean(one_row_fails(x) * p)

    with pytest.raises(BlockError, match="this block has one row") as info:
        tl.distributed.value_and_grad(loss, 1.0, x, client=c)
    assert "tl.distributed.value_and_grad: raised by value_and_grad(loss) on the block of rows 6:7" in (
        info.value.__notes__
    )


# ---------------------------------------------------------------- has_aux
def classifier_loss(params, x, y):
    """A mean loss with aux terms that are means (accuracy), sums (counts, with reduction='sum') and nested."""
    logits = x @ params["w"] + params["b"]
    p = tl.sigmoid(logits)
    loss = tl.mean(-(y * tl.log(p) + (1 - y) * tl.log(1 - p)))
    right = (logits > 0) == (y > 0.5)
    return loss, {"accuracy": tl.mean(tl.cast(right, "float64")), "stats": [tl.mean(x, axis=0), tl.mean(p)]}


def numpy_classifier(params, x, y):
    logits = x @ params["w"] + params["b"]
    p = 1 / (1 + np.exp(-logits))
    loss = np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p)))
    grad_logits = (p - y) / len(y)
    grads = {"w": x.T @ grad_logits, "b": np.sum(grad_logits)}
    aux = {"accuracy": np.mean((logits > 0) == (y > 0.5)), "stats": [x.mean(axis=0), p.mean()]}
    return loss, aux, grads


@pytest.mark.parametrize(
    "chunks, split_every, on_cluster", [(13, None, False), (4, 2, False), (1, 3, False), (5, 100, False), (4, 2, True)]
)
def test_value_and_grad_with_has_aux_reduces_the_aux_as_over_all_rows(chunks, split_every, on_cluster, request):
    c = request.getfixturevalue("client") if on_cluster else None
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((13, 3)), (rng.random(13) > 0.4).astype(np.float64)
    params = {"w": rng.standard_normal(3), "b": np.float64(0.1)}
    want_loss, want_aux, want_grads = numpy_classifier(params, x, y)
    (loss, aux), grads = tl.distributed.value_and_grad(
        classifier_loss,
        params,
        da.from_array(x, chunks=(chunks, 3)),
        da.from_array(y, chunks=chunks),
        split_every=split_every,
        has_aux=True,
        client=c,
    )
    np.testing.assert_allclose(loss.numpy(), want_loss, rtol=1e-12)
    np.testing.assert_allclose(aux["accuracy"].numpy(), want_aux["accuracy"], rtol=1e-12)
    np.testing.assert_allclose(aux["stats"][0].numpy(), want_aux["stats"][0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(aux["stats"][1].numpy(), want_aux["stats"][1], rtol=1e-12)
    for k in params:
        np.testing.assert_allclose(grads[k].numpy(), want_grads[k], rtol=1e-12, atol=1e-15)
    # and as the single-process tl.value_and_grad gives them, dtypes included
    (eager_loss, eager_aux), eager_grads = tl.value_and_grad(classifier_loss, has_aux=True)(
        params, tl.tensor(x), tl.tensor(y)
    )
    for got, want in zip(tl.tree.leaves(((loss, aux), grads)), tl.tree.leaves(((eager_loss, eager_aux), eager_grads))):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-15)


def test_has_aux_integer_aux_is_a_count_for_a_sum_and_a_fraction_for_a_mean(sync_scheduler):
    x = np.array([[-2.0], [1.0], [3.0], [-1.0], [0.5]])

    def loss(w, x):
        return tl.sum(x * w), tl.sum(tl.cast(x > 0, "int32"))  # the count of positive rows, per block

    (value, positives), _ = tl.distributed.value_and_grad(
        loss, 2.0, da.from_array(x, chunks=(2, 1)), reduction="sum", has_aux=True
    )
    assert positives.dtype == np.int64 and int(positives) == 3
    (value, one), _ = tl.distributed.value_and_grad(
        lambda w, x: (tl.mean(x * w), tl.ones((), "int32")), 2.0, da.from_array(x, chunks=(2, 1)), has_aux=True
    )
    assert one.dtype == np.float64 and float(one) == 1.0  # the rows-weighted mean of the blocks' 1s


def test_has_aux_refuses_a_loss_that_is_not_a_pair_and_an_aux_that_depends_on_the_rows(sync_scheduler):
    x = da.from_array(np.arange(10.0).reshape(5, 2), chunks=(2, 2))
    with pytest.raises(TypeError, match=r"with has_aux=True, <lambda> must return a pair \(loss, aux\), got Tensor"):
        tl.distributed.value_and_grad(lambda w, x: tl.mean(x * w), 1.0, x, has_aux=True)
    with pytest.raises(TypeError, match="aux of <lambda> must hold Tensors or numbers .* got a str"):
        tl.distributed.value_and_grad(lambda w, x: (tl.mean(x * w), "text"), 1.0, x, has_aux=True)
    with pytest.raises(
        ValueError, match=r"aux .* shapes \[\(1,\)\] for the block of rows 4:5 .* \[\(2,\)\] for the first"
    ):
        # the first two rows' values: of shape (2,) for blocks of 2 or 3 rows, (1,) for the last block of 1
        tl.distributed.value_and_grad(lambda w, x: (tl.mean(x * w), x[:2, 0]), 1.0, x, has_aux=True)


def test_has_aux_refuses_an_aux_with_a_row_per_example_even_when_the_blocks_are_of_one_size(sync_scheduler):
    # Blocks of 2, 2 and 2 rows: summing the blocks' per-row predictions would add those of different rows.
    x = da.from_array(np.arange(12.0).reshape(6, 2), chunks=(2, 2))
    with pytest.raises(ValueError, match=r"aux .* shapes \[\(2,\)\] for a block of 2 rows but \[\(3,\)\] for 3 rows"):
        tl.distributed.value_and_grad(lambda w, x: (tl.mean(x * w), x[:, 0] * w), 1.0, x, has_aux=True)


@pytest.mark.parametrize("make_loss", [lambda x, w: tl.mean(tl.cast(x, "complex128") * w), lambda x, w: tl.sum(x > w)])
def test_a_loss_that_is_not_real_float_is_refused_naming_the_distributed_function(make_loss, sync_scheduler):
    x = da.from_array(np.arange(6.0).reshape(6, 1), chunks=(4, 1))
    with pytest.raises(TypeError, match=r"^tl.distributed.value_and_grad: <lambda> must return a real float loss, got"):
        tl.distributed.value_and_grad(lambda w, x: make_loss(x, w), 1.0, x)


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i4", ">i2", ">c16"])
def test_big_endian_dask_arrays_are_taken_in_native_byte_order(dtype, sync_scheduler):
    a = (np.arange(12).reshape(6, 2) - 5).astype(dtype)  # as a FITS or big-endian HDF5 dataset gives them
    native = a.astype(a.dtype.newbyteorder("="))
    x = da.from_array(a, chunks=(4, 2))
    y = tl.distributed.map_blocks(lambda b: b * 3, x).compute()
    np.testing.assert_array_equal(y, (tl.tensor(native) * 3).numpy())
    w = np.array([0.5, -2.0])
    loss, grad = tl.distributed.value_and_grad(lambda w, x: tl.mean(tl.abs(x @ w) ** 2), w, x)
    want = native.astype(np.complex128) @ w
    np.testing.assert_allclose(loss.numpy(), np.mean(np.abs(want) ** 2), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), 2 * np.real(native.conj().T @ want) / 6, rtol=1e-12)


def test_from_npy_of_a_missing_file_or_a_folder_names_the_function_and_keeps_the_error_type(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"tl.distributed.from_npy: No such file or directory: .*nope.npy"):
        tl.distributed.from_npy(tmp_path / "nope.npy", 2)
    with pytest.raises(IsADirectoryError, match=r"tl.distributed.from_npy: Is a directory"):
        tl.distributed.from_npy(tmp_path, 2)
    np.save(tmp_path / "gone.npy", np.arange(6.0).reshape(3, 2))
    x = tl.distributed.from_npy(tmp_path / "gone.npy", 2)
    (tmp_path / "gone.npy").unlink()  # deleted after the dask array was made: the block task says so
    with pytest.raises(FileNotFoundError, match=r"tl.distributed.from_npy: No such file or directory: .*gone.npy"):
        x.compute(scheduler="sync")
