"""tl.distributed attacked as an adversary, second round: the same computations done eagerly in one piece
(tensorlib, NumPy float64), block by block on dask's local schedulers and on a LocalCluster of two
one-thread worker processes.

What it attacks: errors raised on one block (which block, and does the exception reach the caller whole),
blocks whose output differs from the first block's, auxiliary outputs of a loss (``has_aux``), ...
References: NumPy formulas in float64, eager ``tl.value_and_grad`` and eager calls of the function on all
rows at once.
"""

import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

import tensorlib as tl  # noqa: E402
from _helpers import local_cluster  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])
TIMEOUT = 60


@pytest.fixture(scope="module")
def client():
    with local_cluster(2, "1GiB", timeout=TIMEOUT) as c:
        yield c


@pytest.fixture
def sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


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
