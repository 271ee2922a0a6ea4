"""Embedding lookup: rows of a table picked by integer ids, built on GatherV2 (whose gradient, GatherV2Grad,
scatter-adds: an id that repeats gets the sum of its rows' gradients)."""

from __future__ import annotations

import numpy as np

from ...dispatch import as_tensor
from ...tensor import Tensor
from .. import shape as shape_ops
from ._common import _op_type


@_op_type("GatherV2", tensors=("params", "ids"))
def embedding_lookup(params, ids) -> Tensor:
    """Rows ``params[ids]``: shape ``ids.shape + params.shape[1:]`` (``tf.nn.embedding_lookup``).

    ``params`` may be a list of shards (TensorFlow's "div" partition: consecutive ids in each shard, so the
    table is their concatenation).  Ids must be integers in ``[0, len(table))``: a negative or too large id is
    an IndexError (``take`` would count a negative one from the end).  The gradient with respect to
    ``params`` adds up the gradients of repeated ids.

    >>> import numpy as np, tensorlib as tl
    >>> table = tl.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    >>> tl.nn.embedding_lookup(table, np.array([[2, 0], [1, 1]])).numpy().tolist()
    [[[2.0, 2.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]]]
    """
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("embedding_lookup: params is an empty list of shards")
        params = shape_ops.concat([as_tensor(p) for p in params], axis=0) if len(params) > 1 else as_tensor(params[0])
    params, ids = as_tensor(params), as_tensor(ids)
    where = f"(params shape {tuple(params.shape)} {params.dtype}, ids shape {tuple(ids.shape)} {ids.dtype})"
    if not params.ndim:
        raise ValueError(f"embedding_lookup: params must have at least one dimension {where}")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding_lookup: ids must be integers {where}")
    rows = params.shape[0]
    if rows is not None and ids._value is not None:
        values = np.asarray(ids.numpy())
        bad = values[(values < 0) | (values >= rows)]
        if bad.size:
            raise IndexError(f"embedding_lookup: id {int(bad[0])} is out of range [0, {rows}) {where}")
    elif ids._value is None:  # traced: checked when the graph runs (take would count -1 from the end)
        ids = shape_ops.check_ids(ids, params, 0, "embedding_lookup")
    return shape_ops.take(params, ids, 0)
