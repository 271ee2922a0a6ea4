"""Shape ops: reshape, transpose, expand_dims, squeeze, broadcast, concat, stack, split,
tile, pad, indexing (``x[...]``), take/gather and one_hot."""

from __future__ import annotations

import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..dispatch import apply, as_tensor, as_tensors
from ..grad.registry import not_differentiable, register_gradient
from ..tensor import Tensor
from ._shapes import as_int, as_ints, broadcast_shapes, normalize_axes, normalize_axis
from .registry import defop, spec


def _known(shape):
    return None not in shape


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# ------------------------------------------------------------------ reshape
def _require_axes(x, what):
    if not x.shape:
        raise ValueError(f"cannot {what} of a 0-d tensor (shape ())")


def _reshape_infer(x, *, shape):
    if any(d < -1 for d in shape):
        raise ValueError(f"negative dimension in {shape} (only -1, one unknown dimension, is allowed)")
    if list(shape).count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension (-1) in {shape}")
    if not _known(x.shape):
        return spec(tuple(None if d == -1 else d for d in shape), x.dtype)
    total = _prod(x.shape)
    rest = _prod(d for d in shape if d != -1)
    if -1 in shape:
        if rest == 0 or total % rest:
            raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
        shape = tuple(total // rest if d == -1 else d for d in shape)
    elif rest != total:
        raise ValueError(f"cannot reshape a tensor of shape {x.shape} ({total} elements) into {shape}")
    return spec(shape, x.dtype)


_reshape = defop(
    "Reshape",
    inputs=("x",),
    attrs={"shape": ()},
    infer=_reshape_infer,
    doc="Same elements, new shape (one -1 allowed).",
)
_reshape.generic(lambda xp, x, *, shape: xp.reshape(x, shape))
register_gradient("Reshape", lambda node, g: reshape_like(g, node.inputs[0]))

_reshape_like = defop(
    "ReshapeLike",
    inputs=("x", "like"),
    infer=lambda x, like: spec(like.shape, x.dtype),
    doc="Reshape x to like's (possibly symbolic) shape.",
)
_reshape_like.generic(lambda xp, x, like: xp.reshape(x, like.shape))
register_gradient("ReshapeLike", lambda node, g: reshape_like(g, node.inputs[0]), None)


# ------------------------------------------------------------------ transpose
def _transpose_infer(x, *, perm):
    if sorted(perm) != list(range(len(x.shape))):
        raise ValueError(f"perm {perm} is not a permutation of the axes of a rank-{len(x.shape)} tensor")
    return spec(tuple(x.shape[p] for p in perm), x.dtype)


_transpose = defop("Transpose", inputs=("x",), attrs={"perm": ()}, infer=_transpose_infer, doc="Permute axes.")
_transpose.generic(lambda xp, x, *, perm: xp.permute_dims(x, perm))
register_gradient("Transpose", lambda node, g: transpose(g, tuple(int(i) for i in np.argsort(node.attrs["perm"]))))


# ------------------------------------------------------------------ expand_dims / squeeze
def _expand_infer(x, *, axis):
    ndim = len(x.shape) + len(axis)
    axes = normalize_axes(axis, ndim)
    dims = iter(x.shape)
    return spec(tuple(1 if i in axes else next(dims) for i in range(ndim)), x.dtype)


_expand = defop(
    "ExpandDims",
    inputs=("x",),
    attrs={"axis": (0,)},
    infer=_expand_infer,
    doc="Insert size-1 axes at the given output positions.",
)
_expand.generic(lambda xp, x, *, axis: xp.expand_dims(x, axis))
register_gradient("ExpandDims", lambda node, g: squeeze(g, normalize_axes(node.attrs["axis"], len(g.shape))))


def _squeeze_infer(x, *, axis):
    axes = tuple(i for i, d in enumerate(x.shape) if d == 1) if axis is None else normalize_axes(axis, len(x.shape))
    for a in axes:
        if x.shape[a] not in (1, None):
            raise ValueError(f"cannot squeeze axis {a} of size {x.shape[a]}")
    return spec(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


_squeeze = defop("Squeeze", inputs=("x",), attrs={"axis": None}, infer=_squeeze_infer, doc="Remove size-1 axes.")
_squeeze.generic(
    lambda xp, x, *, axis: xp.squeeze(x, tuple(i for i, d in enumerate(x.shape) if d == 1) if axis is None else axis)
)
register_gradient("Squeeze", lambda node, g: reshape_like(g, node.inputs[0]))


# ------------------------------------------------------------------ broadcasting
_broadcast_to = defop(
    "BroadcastTo",
    inputs=("x",),
    attrs={"shape": ()},
    infer=lambda x, *, shape: spec(_check_broadcast(x.shape, shape), x.dtype),
    doc="Broadcast to a shape (NumPy rules); the gradient sums back.",
)
_broadcast_to.generic(lambda xp, x, *, shape: xp.broadcast_to(x, shape))
register_gradient("BroadcastTo", lambda node, g: g)


def _check_broadcast(shape, target):
    # A size unknown when traced may be 1 or the target's: the kernel checks it at run time.
    if broadcast_shapes(tuple(1 if d is None else d for d in shape), target) != tuple(target):
        raise ValueError(f"cannot broadcast shape {shape} to {tuple(target)}")
    return tuple(target)


_broadcast_like = defop(
    "BroadcastLike",
    inputs=("x", "like"),
    infer=lambda x, like: spec(broadcast_shapes(x.shape, like.shape), x.dtype),
    doc="Broadcast x to the shape of x and like together.",
)
_broadcast_like.generic(lambda xp, x, like: xp.broadcast_to(x, np.broadcast_shapes(x.shape, like.shape)))
register_gradient("BroadcastLike", lambda node, g: g, None)

_sum_to_like = defop(
    "SumToLike",
    inputs=("x", "like"),
    infer=lambda x, like: spec(like.shape, x.dtype),
    doc="Sum x over the axes along which like was broadcast to it (shapes known only at run time).",
)


@_sum_to_like.generic
def _sum_to_like_kernel(xp, x, like):
    lead = x.ndim - like.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(like.shape) if d == 1 and x.shape[lead + i] != 1)
    return xp.reshape(xp.sum(x, axis=axes), like.shape) if axes else x


register_gradient("SumToLike", lambda node, g: broadcast_like(g, node.inputs[0]), None)


def _size_infer(x, *, axis):
    return spec((), _dt.int64)


_size = defop(
    "Size",
    inputs=("x",),
    attrs={"axis": None},
    infer=_size_infer,
    differentiable=False,
    doc="Number of elements along axes (for shapes only known at run time).",
)
_size.generic(lambda xp, x, *, axis: xp.asarray(_prod(x.shape[a] for a in axis), dtype=xp.int64))


# ------------------------------------------------------------------ concat / stack / split
def _concat_infer(*xs, axis):
    if not xs:
        raise ValueError("needs at least one tensor")
    _require_axes(xs[0], "concatenate")
    rank = len(xs[0].shape)
    ax = normalize_axis(axis, rank)
    for x in xs[1:]:
        if len(x.shape) != rank or any(
            a != b and None not in (a, b) for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != ax
        ):
            raise ValueError(f"shapes {[tuple(t.shape) for t in xs]} differ outside axis {axis}")
    sizes = [x.shape[ax] for x in xs]
    total = None if None in sizes else sum(sizes)
    return spec(xs[0].shape[:ax] + (total,) + xs[0].shape[ax + 1 :], xs[0].dtype)


_concat = defop(
    "ConcatV2",
    inputs=("values",),
    attrs={"axis": 0},
    infer=_concat_infer,
    promote="all",
    variadic=True,
    doc="Join tensors along an existing axis.",
)
_concat.generic(lambda xp, *xs, axis: xp.concat(xs, axis=axis))


def _concat_grad(node, g, index):
    ax = normalize_axis(node.attrs["axis"], len(g.shape))
    before = [t.shape[ax] for t in node.inputs[:index]]
    own = node.inputs[index].shape[ax]
    after = [t.shape[ax] for t in node.inputs[index + 1 :]]
    if None not in before + [own]:
        start = sum(before)
        part = slice(start, start + own)
    elif None not in after + [own]:  # traced with unknown sizes before it: counted from the end
        stop = -sum(after)
        part = slice(stop - own, stop or None)
    elif None not in before + after:
        part = slice(sum(before), -sum(after) or None)
    else:  # unknown sizes on both sides: the positions, from the sizes at run time
        return take(g, _concat_positions(node.inputs, index, ax), axis=ax)
    return g[(slice(None),) * ax + (part,)]


def _concat_positions(inputs, index, ax):
    """The positions along ``ax`` of input ``index`` of a concat: its own shifted by the sizes of the
    inputs before it."""
    start = [shape_size(t, (ax,)) for t in inputs[:index]]
    return positions_along(inputs[index], ax) + (sum(start[1:], start[0]) if start else 0)


def positions_along(x, axis):
    """0, 1, ..., n - 1 (int64) for the n positions of ``x`` along ``axis``, n read at run time (a
    cumulative count of ones): for rules traced with sizes unknown."""
    from .array import cumsum
    from .math import zeros_like
    from .reduce import sum as reduce_sum

    others = tuple(i for i in range(x.ndim) if i != axis)
    ones = reduce_sum(zeros_like(x, _dt.int64), axis=others) + 1  # (1s even where another axis is empty)
    return cumsum(ones) - 1


def _broadcast_against(a, arrays):
    for other in arrays:
        a = broadcast_like(a, other) if other is not a else a
    return a


register_gradient("ConcatV2", _concat_grad)


def _stack_infer(*xs, axis):
    if not xs:
        raise ValueError("needs at least one tensor")
    for x in xs[1:]:
        if len(x.shape) != len(xs[0].shape) or any(a != b and None not in (a, b) for a, b in zip(x.shape, xs[0].shape)):
            raise ValueError(f"all shapes must be equal, got {[tuple(t.shape) for t in xs]}")
    ax = normalize_axis(axis, len(xs[0].shape) + 1)
    return spec(xs[0].shape[:ax] + (len(xs),) + xs[0].shape[ax:], xs[0].dtype)


_stack = defop(
    "Pack",
    inputs=("values",),
    attrs={"axis": 0},
    infer=_stack_infer,
    promote="all",
    variadic=True,
    doc="Join tensors along a new axis.",
)
_stack.generic(lambda xp, *xs, axis: xp.stack(xs, axis=axis))


def _stack_grad(node, g, index):
    ax = normalize_axis(node.attrs["axis"], len(g.shape))
    return g[(slice(None),) * ax + (index,)]


register_gradient("Pack", _stack_grad)


def _split_infer(x, *, sizes, axis):
    ax = normalize_axis(axis, len(x.shape))
    if x.shape[ax] is not None and sum(sizes) != x.shape[ax]:
        raise ValueError(f"split sizes {sizes} do not add up to {x.shape[ax]} along axis {axis}")
    return tuple(spec(x.shape[:ax] + (s,) + x.shape[ax + 1 :], x.dtype) for s in sizes)


_split = defop(
    "SplitV",
    inputs=("x",),
    attrs={"sizes": (), "axis": 0},
    infer=_split_infer,
    doc="Split along an axis into pieces of the given sizes.",
)


@_split.generic
def _split_kernel(xp, x, *, sizes, axis):
    ax = axis % x.ndim
    starts = np.cumsum((0,) + tuple(sizes)).tolist()
    return tuple(x[(slice(None),) * ax + (slice(a, b), ...)] for a, b in zip(starts, starts[1:]))


register_gradient("SplitV", lambda node, *gs: concat(list(gs), axis=node.attrs["axis"]))


# ------------------------------------------------------------------ tile / pad
def _tile_infer(x, *, reps):
    if any(r < 0 for r in reps):
        raise ValueError(f"reps {reps} must not be negative")
    if len(reps) != len(x.shape):
        raise ValueError(f"reps {reps} must have one entry per axis of shape {x.shape}")
    return spec(tuple(None if d is None else d * r for d, r in zip(x.shape, reps)), x.dtype)


_tile = defop(
    "Tile", inputs=("x",), attrs={"reps": ()}, infer=_tile_infer, doc="Repeat the whole tensor along each axis."
)
_tile.generic(lambda xp, x, *, reps: xp.tile(x, reps))


def _tile_grad(node, g):
    from .reduce import sum as reduce_sum

    x, reps = node.inputs[0], node.attrs["reps"]
    if 0 in reps:  # no copies at all: x reaches nothing
        from .math import zeros_like

        return zeros_like(x)
    if None in x.shape:
        return _sum_tiles(g, reps)
    split = tuple(v for r, d in zip(reps, x.shape) for v in (r, d))
    return reduce_sum(reshape(g, split), axis=tuple(range(0, 2 * len(reps), 2)))


def _sum_tiles(g, reps):
    """Tile's gradient for sizes unknown when traced: per tiled axis (moved first), the r tiles summed
    through a (r, -1) reshape, and given back the shape of every r-th row (one tile's shape)."""
    from .reduce import sum as reduce_sum

    for axis, r in enumerate(reps):
        if r == 1:
            continue
        moved = transpose(g, (axis,) + tuple(i for i in range(g.ndim) if i != axis))
        tile_sum = reshape_like(reduce_sum(reshape(moved, (r, -1)), axis=0), moved[::r])
        g = transpose(tile_sum, tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, g.ndim)))
    return g


register_gradient("Tile", _tile_grad)


def _pad_infer(x, *, paddings, constant_values):
    if len(paddings) != len(x.shape) or any(len(p) != 2 or min(p) < 0 for p in paddings):
        raise ValueError(f"paddings {paddings} must be one non-negative (before, after) pair per axis of {x.shape}")
    return spec(tuple(None if d is None else d + a + b for d, (a, b) in zip(x.shape, paddings)), x.dtype)


_pad = defop(
    "PadV2", inputs=("x",), attrs={"paddings": (), "constant_values": 0}, infer=_pad_infer, doc="Pad with a constant."
)


@_pad.generic
def _pad_kernel(xp, x, *, paddings, constant_values):
    # The Array API has no pad: fill a new array and write x into its middle.
    shape = tuple(d + a + b for d, (a, b) in zip(x.shape, paddings))
    out = xp.full(shape, constant_values, dtype=x.dtype)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, paddings))] = x
    return out


_pad.kernel("numpy")(
    lambda x, *, paddings, constant_values: (
        np.pad(x, paddings, constant_values=constant_values) if paddings else x.copy()
    )
)
register_gradient(
    "PadV2",
    lambda node, g: g[
        tuple(
            slice(a, a + d if d is not None else (-b or None))
            for (a, b), d in zip(node.attrs["paddings"], node.inputs[0].shape)
        )
    ],
)


# ------------------------------------------------------------------ indexing
def _expand_index(shape, index):
    """Replace Ellipsis and add trailing full slices, checking the index against ``shape``."""
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices ({n_real}) for a tensor of shape {shape}")
    if index.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis")
    fill = (slice(None),) * (len(shape) - n_real)
    if Ellipsis in index:
        k = index.index(Ellipsis)
        return index[:k] + fill + index[k + 1 :]
    return index + fill


def _getitem_infer(x, *, index):
    out, dim = [], 0
    for i in index:
        if i is None:
            out.append(1)
            continue
        d = x.shape[dim]
        if isinstance(i, slice):
            out.append(None if d is None else len(range(*i.indices(d))))
        elif d is not None and not -d <= i < d:
            raise IndexError(f"index {i} is out of bounds for axis {dim} with size {d}")
        dim += 1
    return spec(tuple(out), x.dtype)


_getitem = defop(
    "StridedSlice",
    inputs=("x",),
    attrs={"index": ()},
    infer=_getitem_infer,
    doc="Basic indexing: ints, slices, None, Ellipsis.",
)


@_getitem.generic
def _getitem_kernel(xp, x, *, index):
    try:
        return x[index]
    except IndexError as e:  # an int beyond an axis whose size was unknown when the function was traced
        raise IndexError(f"StridedSlice: {e} (x shape {tuple(x.shape)} {x.dtype})") from None


register_gradient("StridedSlice", lambda node, g: _getitem_grad(g, node.inputs[0], index=node.attrs["index"]))

_getitem_grad = defop(
    "StridedSliceGrad",
    inputs=("dy", "like"),
    attrs={"index": ()},
    infer=lambda dy, like, *, index: spec(like.shape, dy.dtype),
    doc="Scatter dy into zeros shaped like the sliced input.",
)


@_getitem_grad.generic
def _getitem_grad_kernel(xp, dy, like, *, index):
    out = xp.zeros(like.shape, dtype=dy.dtype)
    out[index] = dy
    return out


register_gradient("StridedSliceGrad", lambda node, g: getitem(g, node.attrs["index"]), None)


def check_integer_indices(indices) -> None:
    """Index rules' check: a float or bool index would be truncated or read as 0/1 by a scatter's kernel."""
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {indices.dtype}")


def _take_infer(x, indices, *, axis):
    check_integer_indices(indices)
    _require_axes(x, "take along an axis")
    ax = normalize_axis(axis, len(x.shape))
    return spec(x.shape[:ax] + tuple(indices.shape) + x.shape[ax + 1 :], x.dtype)


_take = defop(
    "GatherV2",
    inputs=("params", "indices"),
    attrs={"axis": 0},
    infer=_take_infer,
    doc="Pick slices along an axis by integer indices (negative indices count from the end).",
)


@_take.generic
def _take_kernel(xp, x, indices, *, axis):
    size = x.shape[axis]
    flat = xp.reshape(indices, (-1,))
    if flat.shape[0] and (int(xp.min(flat)) < -size or int(xp.max(flat)) >= size):
        bad = flat[int(xp.argmax(xp.astype((flat < -size) | (flat >= size), xp.int8)))]
        raise IndexError(
            f"GatherV2: index {int(bad)} is out of bounds for axis {axis} with size {size} "
            f"(params shape {tuple(x.shape)} {x.dtype}, indices shape {tuple(indices.shape)} {indices.dtype})"
        )
    # The Array API's take wants 1-d, non-negative indices.
    picked = xp.take(x, xp.where(flat < 0, flat + size, flat), axis=axis)
    axis %= x.ndim
    return xp.reshape(picked, x.shape[:axis] + tuple(indices.shape) + x.shape[axis + 1 :])


register_gradient(
    "GatherV2", lambda node, g: _take_grad(g, node.inputs[1], node.inputs[0], axis=node.attrs["axis"]), None
)


def _ids_infer(ids, params, *, axis, who):
    check_integer_indices(ids)
    _require_axes(params, "hold rows to pick")
    normalize_axis(axis, len(params.shape))
    return spec(ids.shape, ids.dtype)


_check_ids = defop(
    "CheckIds",
    inputs=("ids", "params"),
    attrs={"axis": 0, "who": ""},
    infer=_ids_infer,
    doc="Identity of integer ids that raises IndexError when one is outside [0, params' size along axis).",
)


@_check_ids.generic
def _check_ids_kernel(xp, ids, params, *, axis, who):
    size = params.shape[axis]
    flat = xp.reshape(ids, (-1,))
    if flat.shape[0] and (int(xp.min(flat)) < 0 or int(xp.max(flat)) >= size):
        bad = flat[int(xp.argmax(xp.astype((flat < 0) | (flat >= size), xp.int8)))]
        raise IndexError(
            f"{who}: id {int(bad)} is out of range [0, {size}) (params shape {tuple(params.shape)} {params.dtype}, "
            f"ids shape {tuple(ids.shape)} {ids.dtype})"
        )
    return ids


not_differentiable("CheckIds")


def check_ids(ids, params, axis: int = 0, who: str = "take") -> Tensor:
    """``ids`` unchanged, checked when they run to lie in ``[0, params.shape[axis])``: an IndexError naming
    ``who`` otherwise, where ``take`` would count a negative id from the end (traced, the ids' values are
    known only then)."""
    return _check_ids(ids, params, axis=axis, who=who)


_take_grad = defop(
    "GatherV2Grad",
    inputs=("dy", "indices", "like"),
    attrs={"axis": 0},
    infer=lambda dy, indices, like, *, axis: check_integer_indices(indices) or spec(like.shape, dy.dtype),
    doc="Scatter-add dy at the gathered indices (repeated indices add up).",
)


def scatter_sum_dtype(xp, dtype):
    """The dtype a scatter-add of ``dtype`` values sums in: float32 for float16 (DESIGN §6, as the reductions;
    added one by one in float16, 5000 gradients of 1 stop at 2048 and 5000 values of 0.1 at 256), else ``dtype``."""
    return xp.float32 if getattr(xp, "float16", None) is not None and dtype == xp.float16 else dtype


@_take_grad.generic
def _take_grad_generic(xp, dy, indices, like, *, axis):
    # The Array API has no scatter-add: repeated indices are summed by a one-hot matrix product.
    axis %= like.ndim
    size = like.shape[axis]
    flat = xp.reshape(indices, (-1,)) % size if size else xp.reshape(indices, (-1,))
    summing = scatter_sum_dtype(xp, dy.dtype)
    hot = xp.astype(flat[:, None] == xp.arange(size, dtype=flat.dtype)[None, :], summing)
    src = xp.moveaxis(xp.astype(dy, summing), tuple(range(axis, axis + indices.ndim)), tuple(range(indices.ndim)))
    rest = like.shape[:axis] + like.shape[axis + 1 :]
    summed = xp.matmul(xp.matrix_transpose(hot), xp.reshape(src, (flat.shape[0], _prod(rest))))
    return xp.astype(xp.moveaxis(xp.reshape(summed, (size,) + rest), 0, axis), dy.dtype)


@_take_grad.kernel("numpy")
def _take_grad_kernel(dy, indices, like, *, axis):
    xp = np
    axis %= like.ndim  # the moveaxis below counts dy's axes from the gather axis
    out = xp.zeros(like.shape, dtype=scatter_sum_dtype(xp, dy.dtype))
    moved = xp.moveaxis(out, axis, 0)
    size = like.shape[axis]
    flat = (indices.reshape(-1) % size) if size else indices.reshape(-1)
    src = xp.moveaxis(dy, tuple(range(axis, axis + indices.ndim)), tuple(range(indices.ndim)))
    src = src.reshape((flat.size,) + moved.shape[1:])  # not -1: empty arrays
    if src.size >= _SLICE_LOOP_SIZE * flat.size:
        # np.add.at adds a slice per index at ~100 ns an element (measured: 21 slices of 26624 float32, 9.2 ms),
        # a loop of in-place slice additions at ~5 us an index (0.16 ms); from 64 elements a slice the loop wins.
        for i, j in enumerate(flat.tolist()):
            moved[j] += src[i]
    else:
        xp.add.at(moved, flat, src)
    return out.astype(dy.dtype, copy=False)


_SLICE_LOOP_SIZE = 64


register_gradient("GatherV2Grad", lambda node, g: take(g, node.inputs[1], axis=node.attrs["axis"]), None, None)


# ------------------------------------------------------------------ GatherNd, GatherNdGrad
def _gather_nd_infer(params, indices):
    check_integer_indices(indices)
    if not indices.shape or indices.shape[-1] is None:
        raise ValueError(
            f"indices (shape {indices.shape}) must have a last axis of known length: how many leading axes of "
            f"params (shape {params.shape}) each index names"
        )
    depth = indices.shape[-1]
    if depth > len(params.shape):
        raise ValueError(
            f"indices (shape {indices.shape}) name {depth} axes, but params (shape {params.shape}) has "
            f"{len(params.shape)}"
        )
    return spec(tuple(indices.shape[:-1]) + tuple(params.shape[depth:]), params.dtype)


_gather_nd = defop(
    "GatherNd",
    inputs=("params", "indices"),
    attrs={},
    infer=_gather_nd_infer,
    doc="Gather slices of params at indices whose last axis lists positions along params' leading axes "
    "(negative positions count from the end).",
)


def _linear_indices(xp, op: str, shape: tuple, indices):
    """Each index of ``indices`` (its last axis listing positions along the leading axes of ``shape``) as one
    non-negative position in those axes flattened; a position outside its axis is an IndexError."""
    depth = indices.shape[-1]
    linear = xp.zeros(indices.shape[:-1], dtype=xp.int64)
    for axis in range(depth):
        size = shape[axis]
        column = xp.astype(indices[..., axis], xp.int64)
        if column.size and (int(xp.min(column)) < -size or int(xp.max(column)) >= size):
            bad = xp.reshape(column, (-1,))[int(xp.argmax(xp.reshape((column < -size) | (column >= size), (-1,))))]
            raise IndexError(
                f"{op}: index {int(bad)} is out of bounds for axis {axis} with size {size} (params shape "
                f"{tuple(shape)}, indices shape {tuple(indices.shape)} {indices.dtype})"
            )
        linear = linear * size + xp.where(column < 0, column + size, column)
    return linear


@_gather_nd.generic
def _gather_nd_kernel(xp, params, indices):
    depth = indices.shape[-1]
    linear = _linear_indices(xp, "GatherNd", params.shape, indices)
    rest = tuple(params.shape[depth:])
    flat = xp.reshape(params, (_prod(params.shape[:depth]),) + rest)
    picked = xp.take(flat, xp.reshape(linear, (-1,)), axis=0)
    return xp.reshape(picked, tuple(indices.shape[:-1]) + rest)


register_gradient("GatherNd", lambda node, g: _gather_nd_grad(g, node.inputs[1], node.inputs[0]), None)

_gather_nd_grad = defop(
    "GatherNdGrad",
    inputs=("dy", "indices", "like"),
    attrs={},
    infer=lambda dy, indices, like: _check_scatter_shapes(like, indices, dy) or spec(like.shape, dy.dtype),
    doc="Scatter-add dy at the gathered positions into zeros shaped like params (repeated positions add up).",
)


def _check_updates(op: str, updates, indices, shape: tuple) -> None:
    """A ValueError naming ``op`` where ``updates`` is not shaped ``indices.shape[:-1] + shape[depth:]`` (the
    shape rules check the sizes known when traced; the others are known here)."""
    expected = tuple(indices.shape[:-1]) + tuple(shape[indices.shape[-1] :])
    if tuple(updates.shape) != expected:
        raise ValueError(
            f"{op}: updates of shape {tuple(updates.shape)} must have shape indices.shape[:-1] + "
            f"shape[indices.shape[-1]:] = {expected} (indices shape {tuple(indices.shape)}, shape {tuple(shape)})"
        )


def _gather_nd_grad_rows(xp, dy, indices, like):
    """``(dy, linear positions, like)`` flattened over the indexed axes: GatherV2Grad's operands along axis 0
    (``like``, whose shape alone is read, is an unwritten buffer)."""
    depth = indices.shape[-1]
    _check_updates("GatherNdGrad", dy, indices, like.shape)
    linear = _linear_indices(xp, "GatherNdGrad", like.shape, indices)
    rest = tuple(like.shape[depth:])
    flat_like = xp.empty((_prod(like.shape[:depth]),) + rest, dtype=dy.dtype)
    return xp.reshape(dy, tuple(linear.shape) + rest), linear, flat_like


@_gather_nd_grad.generic
def _gather_nd_grad_generic(xp, dy, indices, like):
    summed = _take_grad_generic(xp, *_gather_nd_grad_rows(xp, dy, indices, like), axis=0)
    return xp.reshape(summed, like.shape)


@_gather_nd_grad.kernel("numpy")
def _gather_nd_grad_kernel(dy, indices, like):
    return _take_grad_kernel(*_gather_nd_grad_rows(np, dy, indices, like), axis=0).reshape(like.shape)


register_gradient("GatherNdGrad", lambda node, g: _gather_nd(g, node.inputs[1]), None, None)


# ------------------------------------------------------------------ ScatterNdUpdate
def _scatter_update_infer(tensor, indices, updates):
    _check_scatter_shapes(tensor, indices, updates)
    return spec(tensor.shape, tensor.dtype)


def _check_scatter_shapes(tensor, indices, updates) -> None:
    """The shape rule of a scatter of ``updates`` at ``indices`` into a tensor shaped like ``tensor``."""
    check_integer_indices(indices)
    if not indices.shape or indices.shape[-1] is None or indices.shape[-1] > len(tensor.shape):
        raise ValueError(
            f"indices (shape {indices.shape}) need a last axis of known length, at most the rank of tensor "
            f"(shape {tensor.shape})"
        )
    expected = tuple(indices.shape[:-1]) + tuple(tensor.shape[indices.shape[-1] :])
    if len(updates.shape) != len(expected) or any(
        a is not None and b is not None and a != b for a, b in zip(updates.shape, expected)
    ):
        raise ValueError(
            f"updates (shape {updates.shape}) must have shape indices.shape[:-1] + tensor.shape[indices.shape[-1]:] "
            f"= {expected}"
        )


_scatter_update = defop(
    "ScatterNdUpdate",
    inputs=("tensor", "indices", "updates"),
    attrs={},
    infer=_scatter_update_infer,
    promote=(0, 2),
    doc="tensor with the slices at indices (as GatherNd reads them) replaced by updates; where a position is "
    "written more than once, the last update in indices' order wins (NumPy's assignment).",
)


def _last_writers(xp, linear):
    """Per update (flat), whether no later update writes its position: the one NumPy's assignment keeps."""
    flat = xp.reshape(linear, (-1,))
    if not flat.shape[0]:
        return xp.zeros((0,), dtype=xp.bool)
    order = xp.argsort(flat, stable=True)  # equal positions keep their order: the last of a run wrote last
    ordered = xp.take(flat, order)
    last = xp.concat([ordered[1:] != ordered[:-1], xp.ones((1,), dtype=xp.bool)])
    return xp.take(last, xp.argsort(order, stable=True))  # back to the updates' order


def _winning_updates(xp, linear, rows: int):
    """Per row of the flattened tensor, the index of the update it ends up with, -1 where none writes it."""
    positions = xp.reshape(linear, (-1,))
    if not positions.shape[0]:
        return xp.full((rows,), -1, dtype=xp.int64)
    kept = xp.astype(xp.nonzero(_last_writers(xp, positions))[0], xp.int64)
    kept_rows = xp.take(positions, kept)
    order = xp.argsort(kept_rows)
    sorted_rows, sorted_updates = xp.take(kept_rows, order), xp.take(kept, order)
    every = xp.arange(rows, dtype=xp.int64)
    at = xp.minimum(xp.searchsorted(sorted_rows, every), sorted_rows.shape[0] - 1)
    return xp.where(xp.take(sorted_rows, at) == every, xp.take(sorted_updates, at), -1)


@_scatter_update.generic
def _scatter_update_kernel(xp, tensor, indices, updates):
    _check_updates("ScatterNdUpdate", updates, indices, tensor.shape)
    depth = indices.shape[-1]
    rest = tuple(tensor.shape[depth:])
    rows = _prod(tensor.shape[:depth])
    linear = _linear_indices(xp, "ScatterNdUpdate", tensor.shape, indices)
    winner = _winning_updates(xp, linear, rows)
    flat = xp.reshape(tensor, (rows, _prod(rest)))
    flat_updates = xp.reshape(xp.astype(updates, tensor.dtype), (-1, _prod(rest)))
    if not flat_updates.shape[0]:
        return tensor
    picked = xp.take(flat_updates, xp.where(winner >= 0, winner, 0), axis=0)  # a gather: exact, inf and NaN too
    return xp.reshape(xp.where((winner >= 0)[:, None], picked, flat), tensor.shape)


@_scatter_update.kernel("numpy")
def _scatter_update_numpy(tensor, indices, updates):
    _check_updates("ScatterNdUpdate", updates, indices, tensor.shape)
    depth = indices.shape[-1]
    linear = _linear_indices(np, "ScatterNdUpdate", tensor.shape, indices).reshape(-1)
    out = np.array(tensor, copy=True, order="C")  # C order: the reshape below must be a view to write through
    rows = out.reshape((_prod(tensor.shape[:depth]),) + tuple(tensor.shape[depth:]))
    keep = _last_writers(np, linear)
    rows[linear[keep]] = updates.reshape((linear.size,) + tuple(tensor.shape[depth:]))[keep]
    return out


_kept_updates = defop(
    "ScatterNdKept",
    inputs=("indices", "like"),
    attrs={},
    infer=lambda indices, like: check_integer_indices(indices) or spec(tuple(indices.shape[:-1]), np.dtype(bool)),
    differentiable=False,
    doc="Per update of a ScatterNdUpdate into a tensor shaped like `like`, whether it is kept (no later update "
    "writes its position).",
)


@_kept_updates.generic
def _kept_updates_kernel(xp, indices, like):
    linear = _linear_indices(xp, "ScatterNdKept", like.shape, indices)
    return xp.reshape(_last_writers(xp, linear), tuple(indices.shape[:-1]))


def _scatter_update_grad_tensor(node, g):
    from .math import zeros_like

    return _scatter_update(g, node.inputs[1], zeros_like(node.inputs[2], g.dtype))


def _scatter_update_grad_updates(node, g):
    from .math import cast

    tensor, indices, _ = node.inputs
    kept = cast(_kept_updates(indices, tensor), g.dtype)
    gathered = _gather_nd(g, indices)
    for _ in range(gathered.ndim - kept.ndim):  # the kept flag of each update, over its slice
        kept = expand_dims(kept, -1)
    return gathered * kept


register_gradient(
    "ScatterNdUpdate", tensor=_scatter_update_grad_tensor, indices=None, updates=_scatter_update_grad_updates
)


def _one_hot_infer(indices, *, depth, on_value, off_value, axis, dtype):
    if depth < 0:
        raise ValueError(f"depth must not be negative, got {depth}")
    check_integer_indices(indices)
    shape = list(indices.shape)
    shape.insert(normalize_axis(axis, len(shape) + 1), depth)
    return spec(tuple(shape), _dt.as_dtype(dtype))


_one_hot = defop(
    "OneHot",
    inputs=("indices",),
    attrs={"depth": 1, "on_value": 1.0, "off_value": 0.0, "axis": -1, "dtype": _dt.float32},
    infer=_one_hot_infer,
    differentiable=False,
    doc="One-hot encoding of integer indices.",
)


@_one_hot.generic
def _one_hot_kernel(xp, indices, *, depth, on_value, off_value, axis, dtype):
    hot = indices[..., None] == xp.arange(depth)
    out = xp.where(hot, xp.asarray(on_value, dtype=dtype), xp.asarray(off_value, dtype=dtype))
    return xp.moveaxis(out, -1, axis)


# ------------------------------------------------------------------ public functions
def _shape_attr(shape, what):
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    return as_ints(shape, what)


def reshape(x, shape, order: str = "C") -> Tensor:
    """Same elements in a new shape; one dimension may be -1.  ``order="F"`` reads and writes the elements
    with the first index fastest, as ``numpy.reshape``: the C-order reshape of the transposed tensor to the
    reversed shape, transposed back (``"A"`` is C's order for a Tensor, which has no memory layout, and F's for a
    Fortran-contiguous NumPy array, as ``numpy.reshape``).

    >>> import tensorlib as tl
    >>> tl.reshape(tl.arange(6), (2, -1)).shape
    (2, 3)
    >>> tl.reshape(tl.arange(6), (2, 3), order="F").numpy().tolist()
    [[0, 2, 4], [1, 3, 5]]
    """
    shape = _shape_attr(shape, "reshape: shape")
    if fortran_order(order, "reshape", ("C", "F", "A"), x):
        return transpose(apply(_reshape, (transpose(x),), {"shape": shape[::-1]}))
    return apply(_reshape, (x,), {"shape": shape})


def fortran_order(order, name: str, orders: tuple, x=None) -> bool:
    """Whether NumPy's ``order`` argument asks for Fortran order; ``'A'`` and ``'K'`` follow the memory
    layout, which is C's for a Tensor and Fortran's for a NumPy array ``x`` that is Fortran- and not C-contiguous
    (``numpy.reshape``'s ``'A'``)."""
    if order not in orders:
        raise ValueError(f"{name}: order must be one of {', '.join(map(repr, orders))}, got {order!r}")
    if order in ("A", "K") and isinstance(x, np.ndarray):
        return x.flags.f_contiguous and not x.flags.c_contiguous
    return order == "F"


def reshape_like(x, like) -> Tensor:
    return apply(_reshape_like, (x, like))


def transpose(x, perm=None) -> Tensor:
    """Permute axes (reverse them by default); negative axes count from the end, as in NumPy."""
    ndim = len(x.shape) if hasattr(x, "shape") else np.ndim(x)
    if perm is None:
        return apply(_transpose, (x,), {"perm": tuple(reversed(range(ndim)))})
    perm = as_ints(perm, "transpose: perm")
    return apply(_transpose, (x,), {"perm": tuple(p + ndim if -ndim <= p < 0 else p for p in perm)})


def expand_dims(x, axis) -> Tensor:
    return apply(_expand, (x,), {"axis": as_ints(axis, "expand_dims: axis")})


def squeeze(x, axis=None) -> Tensor:
    if axis is not None:
        one = not isinstance(axis, (tuple, list))
        axis = as_ints(axis, "squeeze: axis")
        if one and axis in ((0,), (-1,)) and (x.ndim if isinstance(x, Tensor) else np.ndim(x)) == 0:
            axis = None  # NumPy squeezes an int axis 0 or -1 of a 0-d array (not a tuple of it): nothing
    return apply(_squeeze, (x,), {"axis": axis})


def broadcast_to(x, shape) -> Tensor:
    return apply(_broadcast_to, (x,), {"shape": _shape_attr(shape, "broadcast_to: shape")})


def broadcast_like(x, like) -> Tensor:
    return apply(_broadcast_like, (x, like))


def sum_to_like(x, like) -> Tensor:
    return apply(_sum_to_like, (x, like))


def shape_size(x, axis) -> Tensor:
    return apply(_size, (x,), {"axis": tuple(axis)})


def concat(values, axis: int = 0) -> Tensor:
    """Join a sequence of tensors along ``axis``."""
    return apply(_concat, tuple(values), {"axis": as_int(axis, "concat: axis")})


def stack(values, axis: int = 0) -> Tensor:
    """Join tensors of equal shape along a new ``axis``."""
    return apply(_stack, tuple(values), {"axis": as_int(axis, "stack: axis")})


dispatch._stack_op = stack


def split(x, indices_or_sections, axis: int = 0) -> tuple:
    """NumPy's split: a number of equal sections or a list of split points."""

    x = as_tensor(x)
    if not x.ndim:
        raise ValueError(f"SplitV: cannot split a 0-d tensor (shape {x.shape}, {x.dtype})")
    ax = normalize_axis(axis, x.ndim, f"split (shape {x.shape}): axis")
    size = x.shape[ax]
    if not np.ndim(indices_or_sections):
        n = as_int(indices_or_sections, "split: sections")
        if size is None:
            raise ValueError(
                f"SplitV: axis {axis} has an unknown size under tl.function (shape {x.shape}, {x.dtype}), so it "
                f"cannot be split into {n} equal sections; give its size in the TensorSpec, or split at points"
            )
        if n <= 0 or size % n:
            raise ValueError(
                f"SplitV: axis {axis} of size {size} (shape {x.shape}) cannot be split into {n} equal sections"
            )
        sizes = (size // n,) * n
    elif size is None:  # unknown when traced: NumPy's own slices a[p_i:p_i+1], whatever the size turns out to be
        bounds = [None, *as_ints(indices_or_sections, "split: points"), None]
        return tuple(getitem(x, (slice(None),) * ax + (slice(a, b),)) for a, b in zip(bounds[:-1], bounds[1:]))
    else:
        # NumPy's slicing semantics: negative points count from the end, points past the end clip.
        points = (
            [0]
            + [min(max(p + size if p < 0 else p, 0), size) for p in as_ints(indices_or_sections, "split: points")]
            + [size]
        )
        if any(b < a for a, b in zip(points[:-1], points[1:])):
            raise ValueError(
                f"SplitV: split points {list(indices_or_sections)} must be increasing along axis "
                f"{axis} of size {size} (shape {x.shape})"
            )
        sizes = tuple(b - a for a, b in zip(points[:-1], points[1:]))
    return apply(_split, (x,), {"sizes": sizes, "axis": ax})


def tile(x, reps) -> Tensor:
    """``numpy.tile``: repeat x ``reps`` times per axis; fewer reps than axes repeat the last axes,
    more reps than axes give x leading size-1 axes first.

    >>> import tensorlib as tl
    >>> tl.tile(tl.tensor([[1, 2]]), 2).numpy().tolist()
    [[1, 2, 1, 2]]
    """

    x = as_tensor(x)
    reps = _shape_attr(reps, "tile: reps")
    if len(reps) > x.ndim:
        x = expand_dims(x, tuple(range(len(reps) - x.ndim)))  # (a reshape took one unknown size at most)
    reps = (1,) * (x.ndim - len(reps)) + reps
    return apply(_tile, (x,), {"reps": reps})


def pad(x, paddings, constant_values=0, *, mode: str = "constant", **kwargs) -> Tensor:
    """Pad each axis by (before, after) with ``constant_values``; ``paddings`` takes NumPy's forms of
    ``pad_width`` too (n, (n,), (before, after) for every axis).  A constant that x's dtype cannot hold
    exactly (2.5 for an integer x, a complex one for a real x) is a TypeError, as in TensorFlow; NumPy
    truncates it.  ``mode`` is NumPy's (``"reflect"``, ``"symmetric"``, ``"edge"``, ``"wrap"``,
    ``"linear_ramp"``, the statistics, with their keyword arguments) or TensorFlow's upper-case one
    (``"CONSTANT"``, ``"REFLECT"``, ``"SYMMETRIC"``).

    >>> import tensorlib as tl
    >>> tl.pad(tl.ones((1, 2)), 1).shape
    (3, 4)
    >>> tl.pad(tl.tensor([1, 2, 3]), 2, mode="reflect").numpy().tolist()
    [3, 2, 1, 2, 3, 2, 1]
    """
    if not isinstance(mode, str):
        raise TypeError(f"pad: mode must be a string, got {mode!r}")
    mode = mode.lower() if mode.upper() in ("CONSTANT", "REFLECT", "SYMMETRIC") else mode  # TensorFlow's names
    if mode != "constant" or kwargs:
        if not (isinstance(constant_values, (int, float)) and constant_values == 0):
            raise TypeError(f"pad: constant_values is for mode='constant', got mode={mode!r}")
        from .numpy_more import pad_with_mode

        return pad_with_mode(x, paddings, mode, "pad", **kwargs)
    x = as_tensor(x)
    given = paddings.numpy() if isinstance(paddings, Tensor) else paddings
    table = np.asarray(given)
    if table.size and table.dtype.kind not in "iu":  # int() would truncate 1.5 silently
        raise TypeError(f"pad: paddings must be integers, got {given!r} (x shape {x.shape})")
    if not table.size:  # no pairs at all: right for a 0-d x only
        table = table.reshape(0, 2)
    try:
        table = np.broadcast_to(table, (x.ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: paddings {given!r} must be one (before, after) pair per axis of shape {x.shape}, or broadcast to them"
        ) from None
    pairs = tuple((int(a), int(b)) for a, b in table.tolist())
    if isinstance(constant_values, Tensor) and constant_values.ndim == 0 and any(a or b for a, b in pairs):
        return _pad_with_tensor(x, pairs, constant_values)
    constant_values = _check_pad_value(x, constant_values)
    return apply(_pad, (x,), {"paddings": pairs, "constant_values": constant_values})


def _pad_with_tensor(x, pairs, value) -> Tensor:
    """x padded with a 0-d tensor: selected into the padding, so the result differentiates in it (as jax.lax.pad
    does; read as a number it got no gradient, and traced it had no value to read)."""
    from . import math as math_ops

    if not value.is_symbolic:
        _check_pad_value(x, value)
    elif value.dtype.kind == "c" and x.dtype.kind != "c" or value.dtype.kind in "fc" and x.dtype.kind in "biu":
        raise TypeError(
            f"pad: constant_values of dtype {value.dtype} cannot be held exactly by x's dtype {x.dtype} (x shape "
            f"{x.shape}); cast x to a wider dtype first"
        )
    inside = apply(_pad, (math_ops.ones_like(x, dtype=_dt.bool_),), {"paddings": pairs, "constant_values": False})
    padded = apply(_pad, (x,), {"paddings": pairs, "constant_values": 0})
    return math_ops.where(inside, padded, math_ops.cast(value, x.dtype))


def _check_pad_value(x, value):
    """The constant to pad x with, refused when x's dtype cannot hold it exactly."""
    # NumPy casts the constant to x's dtype: 2.7 padded an int tensor with 2, 1+2j a real one with 1.
    dispatch.check_int_range(value, x.dtype, "pad: constant_values")
    given = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    lossy = given.dtype.kind == "c" and x.dtype.kind != "c" or given.dtype.kind in "fc" and x.dtype.kind in "biu"
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # the TypeError below says it
        if lossy and not np.array_equal(given.astype(x.dtype), given):
            raise TypeError(
                f"pad: constant_values {value!r} cannot be held exactly by x's dtype {x.dtype} (x shape "
                f"{x.shape}); cast x to a wider dtype first, or pass a value of its own"
            )
    # A complex constant with no imaginary part pads a real x with its real part (the kernel's cast warned).
    return given.real.item() if given.dtype.kind == "c" and x.dtype.kind != "c" and given.ndim == 0 else value


def integer_indices(indices):
    """A Python list, tuple or range of indices as NumPy reads it: an empty one is an empty integer index
    (``np.asarray([])`` alone is float64, which a gather rejects); a uint64 NumPy array, a dtype tensors do
    not have, as int64 where its values fit (a larger one is out of bounds anyway: the gather says so);
    anything else is left as it is."""
    if isinstance(indices, (list, tuple, range)):
        array = np.asarray(indices)
        return array.astype(np.int64) if array.size == 0 else array
    if isinstance(indices, (np.ndarray, np.unsignedinteger)) and indices.dtype == np.uint64:
        if not indices.size or indices.max() <= np.iinfo(np.int64).max:
            return indices.astype(np.int64)
    return indices


def take(x, indices, axis: int | None = None, mode: str = "raise") -> Tensor:
    """Gather slices of ``x`` along ``axis`` at integer ``indices`` (``numpy.take``); by default
    (``axis=None``) from the flattened ``x``, as NumPy does (TensorFlow's ``gather`` takes axis 0 by
    default: ``tl.gather``).  Negative indices count from the end; ``mode`` says what an index outside the
    axis does: ``"raise"`` an IndexError, ``"wrap"`` wraps it around, ``"clip"`` clips it to the axis (a
    negative one to 0), as in NumPy.

    >>> import tensorlib as tl
    >>> tl.take(tl.tensor([[1, 2], [3, 4]]), [3, 0]).numpy().tolist()
    [4, 1]
    >>> tl.take(tl.tensor([[1, 2], [3, 4]]), [1], axis=0).numpy().tolist()
    [[3, 4]]
    >>> tl.take(tl.tensor([1, 2, 3]), [-1, 5], mode="clip").numpy().tolist()
    [1, 3]
    """
    if axis is None:
        x = as_tensor(x)
        return take(x if x.ndim == 1 else reshape(x, (-1,)), indices, 0, mode)
    indices = integer_indices(indices)
    if mode != "raise":
        indices = _indices_in_range(x, indices, as_int(axis, "take: axis"), mode)
    return apply(_take, (x, indices), {"axis": as_int(axis, "take: axis")})


def _indices_in_range(x, indices, axis: int, mode: str) -> Tensor:
    """``indices`` wrapped around or clipped to ``x``'s axis (numpy.take's modes)."""
    from .math import cast, clip

    if mode not in ("wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    x, indices = as_tensor(x), as_tensor(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {indices.dtype} (x shape {x.shape} {x.dtype})")
    ax = normalize_axis(axis, x.ndim, f"take (x shape {x.shape}): axis")
    size = x.shape[ax] if x.shape[ax] is not None else cast(shape_size(x, (ax,)), indices.dtype)
    if isinstance(size, int) and size == 0:  # nothing to wrap or clip to: an index is out of bounds (GatherV2 says so)
        return indices
    if mode == "wrap":
        return indices % size
    return clip(indices, 0, size - 1)


def gather(params, indices, axis: int | None = None, batch_dims: int = 0) -> Tensor:
    """TensorFlow's ``gather``: slices of ``params`` along ``axis`` at integer ``indices``, the first
    ``batch_dims`` axes of ``params`` and ``indices`` shared (each batch gathers with its own indices).  The
    result has shape ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.
    ``axis=None`` is ``batch_dims`` as given (TensorFlow's default, not :func:`take`'s flattening); a negative
    ``batch_dims`` counts from the end of ``indices``' axes; negative indices count from the end.  The
    gradient scatter-adds into ``params``, repeated indices summing.

    >>> import tensorlib as tl
    >>> params = tl.tensor([[1, 2, 3], [4, 5, 6]])
    >>> tl.gather(params, [2, 0], axis=1).numpy().tolist()
    [[3, 1], [6, 4]]
    >>> tl.gather(params, [[2, 0], [1, 1]], axis=1, batch_dims=1).numpy().tolist()
    [[3, 1], [5, 5]]
    """
    params, indices = as_tensor(params), as_tensor(integer_indices(indices))
    where = f"(params shape {params.shape} {params.dtype}, indices shape {indices.shape} {indices.dtype})"
    given = as_int(batch_dims, "gather: batch_dims")
    batch_dims = given + indices.ndim if given < 0 else given
    if not 0 <= batch_dims <= indices.ndim or batch_dims > params.ndim:
        raise ValueError(f"gather: batch_dims {given} is outside [-rank, rank] of indices {where}")
    # TensorFlow's default axis is batch_dims as given: a negative one counts from the end of params' axes.
    axis = given if axis is None else as_int(axis, "gather: axis")
    axis = normalize_axis(axis, params.ndim, f"gather {where}: axis")
    if axis < batch_dims:
        raise ValueError(f"gather: axis {axis} must not be less than batch_dims {batch_dims} {where}")
    if any(a is not None and b is not None and a != b for a, b in zip(params.shape[:batch_dims], indices.shape)):
        raise ValueError(f"gather: the {batch_dims} batch axes of params and indices must have equal sizes {where}")
    if not batch_dims:
        return take(params, indices, axis)
    lookups = tuple(indices.shape[batch_dims:])
    if len(lookups) <= 1 and None in tuple(params.shape[:batch_dims]) + tuple(indices.shape):
        # Sizes unknown when traced: take_along_axis broadcasts the indices, given size-1 axes for params' axes
        # around the gathered one, over them at run time.
        from .array import take_along_axis

        spread = indices if lookups else expand_dims(indices, -1)
        spread = _with_unit_axes(spread, batch_dims, axis - batch_dims, params.ndim - axis - 1)
        out = take_along_axis(params, spread, axis)
        return out if lookups else squeeze(out, axis)
    # The gathered axis goes after the batch axes, one gather_nd with batch_dims picks each index, and the
    # axes between the batch axes and the gathered one go back in front of the indices' own axes.
    before = tuple(range(batch_dims, axis))
    moved = transpose(params, tuple(range(batch_dims)) + (axis,) + before + tuple(range(axis + 1, params.ndim)))
    out = gather_nd(moved, expand_dims(indices, -1), batch_dims)
    own, after = tuple(range(batch_dims, indices.ndim)), indices.ndim + len(before)
    between = tuple(range(indices.ndim, after))
    return transpose(out, tuple(range(batch_dims)) + between + own + tuple(range(after, out.ndim)))


def _concrete_bounds(op: str, indices, shape: tuple, first_axis: int = 0) -> None:
    """An IndexError naming ``op`` for a position outside its axis, where the indices are known now (a traced
    function's are checked by the kernel when it runs)."""
    if isinstance(indices, Tensor):
        if indices.is_symbolic:
            return
        indices = indices.numpy()
    indices = np.asarray(indices)
    for j in range(indices.shape[-1] if indices.ndim else 0):
        size, column = shape[first_axis + j], indices[..., j]
        if size is not None and column.size and (column.min() < -size or column.max() >= size):
            bad = column[(column < -size) | (column >= size)].flat[0]
            raise IndexError(
                f"{op}: index {int(bad)} is out of bounds for axis {first_axis + j} with size {size} (shape "
                f"{tuple(shape)}, indices shape {indices.shape} {indices.dtype})"
            )


def gather_nd(params, indices, batch_dims: int = 0) -> Tensor:
    """TensorFlow's ``gather_nd``: ``indices[..., :k]`` are positions along the first ``k`` axes of ``params``
    (after ``batch_dims`` leading axes that ``params`` and ``indices`` share); the result has shape
    ``indices.shape[:-1] + params.shape[batch_dims + k:]``.  Negative positions count from the end (NumPy's
    rule; TensorFlow rejects them); one outside its axis is an IndexError.  The gradient scatter-adds into
    ``params``' shape, repeated positions summing.

    >>> import tensorlib as tl
    >>> tl.gather_nd(tl.tensor([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).numpy().tolist()
    [3, 2]
    >>> tl.gather_nd(tl.tensor([[1, 2], [3, 4]]), [[1]]).numpy().tolist()
    [[3, 4]]
    """
    params = as_tensor(params)
    indices = as_tensor(integer_indices(indices))
    batch_dims = as_int(batch_dims, "gather_nd: batch_dims")
    if batch_dims:
        return _batched_gather_nd(params, indices, batch_dims)
    return _gather_nd(params, indices)


def _with_unit_axes(x, at: int, before: int, after: int) -> Tensor:
    """``x`` with ``before`` size-1 axes inserted at axis ``at`` and ``after`` ones appended."""
    for _ in range(before):
        x = expand_dims(x, at)
    for _ in range(after):
        x = expand_dims(x, -1)
    return x


def _batched_gather_nd(params, indices, batch_dims: int) -> Tensor:
    """gather_nd with ``batch_dims`` shared leading axes: each index gets its batch position prepended."""
    if not 0 < batch_dims < min(params.ndim, indices.ndim):
        raise ValueError(
            f"gather_nd: batch_dims {batch_dims} must be less than the ranks of params (shape {params.shape}) and "
            f"of indices (shape {indices.shape})"
        )
    batch = tuple(indices.shape[:batch_dims])
    if None in batch or batch != tuple(params.shape[:batch_dims]):
        raise ValueError(
            f"gather_nd: the {batch_dims} batch axes of params (shape {params.shape}) and indices (shape "
            f"{indices.shape}) must have equal, known sizes"
        )
    lookups = tuple(indices.shape[batch_dims:-1])
    if None in lookups:
        raise ValueError(f"gather_nd: batch_dims needs indices of known shape, got {indices.shape}")
    grid = np.indices(batch + lookups, dtype=np.int64)[:batch_dims]  # each cell's batch position
    prefix = as_tensor(np.moveaxis(grid, 0, -1).astype(np.dtype(indices.dtype)))
    return _gather_nd(params, concat([prefix, indices], axis=-1))


def _scatter_operands(name: str, indices, updates) -> tuple:
    """``indices`` and ``updates`` as tensors, the indices integers (GatherNdGrad's rule would name itself)."""
    indices, updates = as_tensor(integer_indices(indices)), as_tensor(updates)
    if indices.dtype.kind not in "iu":
        raise TypeError(
            f"{name}: indices must be integers, got {indices.dtype} (indices shape {indices.shape}, updates "
            f"shape {updates.shape} {updates.dtype})"
        )
    return indices, updates


def scatter_nd(indices, updates, shape) -> Tensor:
    """TensorFlow's ``scatter_nd``: zeros of ``shape`` with each slice of ``updates`` added at its position
    in ``indices`` (as in :func:`gather_nd`; repeated positions add up).  Differentiable in ``updates``.

    >>> import tensorlib as tl
    >>> tl.scatter_nd([[1], [3], [1]], tl.tensor([1.0, 2.0, 3.0]), [5]).numpy().tolist()
    [0.0, 4.0, 0.0, 2.0, 0.0]
    """
    return _scatter_nd("scatter_nd", indices, updates, _shape_attr(shape, "scatter_nd: shape"))


def _scatter_nd(name: str, indices, updates, shape: tuple) -> Tensor:
    indices, updates = _scatter_operands(name, indices, updates)
    depth = indices.shape[-1] if indices.ndim else None
    expected = None if depth is None else tuple(indices.shape[:-1]) + shape[depth:]
    if (
        depth is None
        or depth > len(shape)
        or len(updates.shape) != len(expected)
        or any(a is not None and b is not None and a != b for a, b in zip(updates.shape, expected))
    ):  # sizes unknown when traced are checked by GatherNdGrad when it runs
        raise ValueError(
            f"{name}: updates of shape {updates.shape} {updates.dtype} must have shape indices.shape[:-1] + "
            f"shape[indices.shape[-1]:] = {expected} for indices of shape {indices.shape} and shape {shape}"
        )
    _concrete_bounds(name, indices, shape)
    like = as_tensor(np.zeros((), np.dtype(updates.dtype)))
    return _gather_nd_grad(updates, indices, broadcast_to(like, shape))


def tensor_scatter_nd_add(tensor, indices, updates) -> Tensor:
    """TensorFlow's ``tensor_scatter_nd_add``: ``tensor`` plus :func:`scatter_nd` of ``updates`` at ``indices``
    (repeated positions add up); differentiable in ``tensor`` and ``updates``.

    >>> import tensorlib as tl
    >>> tl.tensor_scatter_nd_add(tl.ones(4), [[0], [0], [2]], tl.tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [4.0, 1.0, 4.0, 1.0]
    """
    tensor, updates = as_tensors(tensor, updates)  # a list of updates next to float64 is float64, as in TF
    if None in tensor.shape:  # sizes traced as unknown: GatherNdGrad reads the tensor's shape at run time
        indices, updates = _scatter_operands("tensor_scatter_nd_add", indices, updates)
        return tensor + _gather_nd_grad(updates, indices, tensor)
    return tensor + _scatter_nd("tensor_scatter_nd_add", indices, updates, tuple(tensor.shape))


def tensor_scatter_nd_update(tensor, indices, updates) -> Tensor:
    """TensorFlow's ``tensor_scatter_nd_update``: ``tensor`` with the slices at ``indices`` (as in
    :func:`gather_nd`) replaced by ``updates``.  Where ``indices`` name one position more than once, the last
    update wins, as NumPy's assignment (TensorFlow leaves it unspecified); the gradient reaches that update
    only, and ``tensor`` everywhere it is not overwritten.

    >>> import tensorlib as tl
    >>> tl.tensor_scatter_nd_update(tl.zeros(4), [[1], [3], [1]], tl.tensor([1.0, 2.0, 3.0])).numpy().tolist()
    [0.0, 3.0, 0.0, 2.0]
    """
    tensor, updates = as_tensors(tensor, updates)
    indices, updates = _scatter_operands("tensor_scatter_nd_update", indices, updates)
    _concrete_bounds("tensor_scatter_nd_update", indices, tensor.shape)
    return _scatter_update(tensor, indices, updates)


_positions_like = defop(
    "PositionsLike",
    inputs=("x",),
    attrs={},
    infer=lambda x: spec(x.shape, _dt.int64),
    differentiable=False,
    doc="Each element's position in x flattened (int64, x's shape): an index's positions, for Tensor.at.",
)
_positions_like.generic(lambda xp, x: xp.reshape(xp.arange(_prod(x.shape), dtype=xp.int64), x.shape))


def _check_lossless(values, t) -> None:
    """A TypeError where casting ``values`` to ``t``'s dtype would change them (2.7 into an int tensor, a complex
    value into a real one): NumPy's assignment truncates silently, JAX warns; cast explicitly instead."""
    kind, target = values.dtype.kind, t.dtype.kind
    lossy = (kind == "c" and target != "c") or (kind in "fc" and target in "biu") or (kind in "iu" and target == "b")
    # int64 values into an int32 tensor wrapped around (2**40 became 0; NumPy raises OverflowError)
    lossy = lossy or kind in "iu" and target in "iu" and not np.can_cast(values.dtype, t.dtype)
    if kind == target == "f" and not values.is_symbolic:  # rounding is fine, overflowing to inf is not
        raw = values.numpy()
        with np.errstate(over="ignore"):
            if np.any(np.isfinite(raw) & ~np.isfinite(raw.astype(t.dtype))):
                raise TypeError(
                    f"Tensor.at[...]: values of dtype {values.dtype} (shape {values.shape}) overflow the tensor's "
                    f"dtype {t.dtype} (shape {t.shape}); cast them (or the tensor) explicitly first"
                )
    if not lossy:
        return
    exact = not values.is_symbolic
    if exact:
        raw = values.numpy()
        if kind == "c" and target != "c":  # the imaginary parts must be 0, then the real parts fit
            exact, raw = bool(np.all(raw.imag == 0)), raw.real
        with np.errstate(invalid="ignore", over="ignore"):
            exact = exact and bool(np.array_equal(raw.astype(t.dtype), raw))
    if not exact:
        raise TypeError(
            f"Tensor.at[...]: values of dtype {values.dtype} (shape {values.shape}) cannot be held exactly by the "
            f"tensor's dtype {t.dtype} (shape {t.shape}); cast them (or the tensor) explicitly first"
        )


class _IndexUpdates:
    """``t.at``: ``t.at[index].set(values)``, ``.add(values)`` and ``.get()``, JAX's functional index updates
    (tensors are immutable: each returns a new tensor), and JAX's ``.subtract``, ``.multiply`` (``.mul``),
    ``.divide``, ``.power``, ``.min`` and ``.max``.  ``index`` is anything ``t[index]`` takes; ``values``
    broadcast to ``t[index]``'s shape and are cast to ``t``'s dtype (a value it cannot hold exactly, such as 2.7
    for an int tensor, is a TypeError: NumPy truncates it, JAX warns).  Where the index reads a position more
    than once, ``set`` keeps the last value (NumPy's assignment), ``add`` adds them all (``np.add.at``), and the
    others combine them all as JAX's scatters do: ``multiply`` by their product, ``divide`` and ``power`` by it
    too (``t / prod``, ``t ** prod``), ``min`` and ``max`` with their min and max.  An index out of bounds is an
    IndexError unless ``mode`` (JAX's, keyword) says otherwise: ``"clip"`` moves it into the axis (after counting a
    negative one from the end), ``"drop"`` and ``"fill"`` drop its update, and ``get(mode="fill", fill_value=...)``
    reads ``fill_value`` there (NaN for floats by default); ``"promise_in_bounds"`` is the default's check.

    >>> import tensorlib as tl
    >>> x = tl.zeros(5)
    >>> x.at[1:3].set(7.0).numpy().tolist()
    [0.0, 7.0, 7.0, 0.0, 0.0]
    >>> x.at[[0, 0, 4]].add(1.0).numpy().tolist()
    [2.0, 0.0, 0.0, 0.0, 1.0]
    >>> y = tl.tensor([1.0, 2.0, 3.0])
    >>> y.at[[0, 0, 2]].multiply(tl.tensor([2.0, 5.0, -1.0])).numpy().tolist()
    [10.0, 2.0, -3.0]
    >>> y.at[1:].max(2.5).numpy().tolist()
    [1.0, 2.5, 3.0]
    >>> y.at[[0, 5]].add(10.0, mode="drop").numpy().tolist()
    [11.0, 2.0, 3.0]
    >>> y.at[[-1, 5]].get(mode="fill", fill_value=0.0).numpy().tolist()
    [3.0, 0.0]
    """

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def __getitem__(self, index):
        return _IndexUpdate(self._tensor, index)


# Products of updates at repeated positions whose values are unknown (traced, or per element of tl.vmap) compare
# every update with every other: at most this many updates (an n x n matrix of them).
_PAIRWISE_UPDATES = 2048


class _IndexUpdate:
    __slots__ = ("_index", "_tensor")

    def __init__(self, tensor, index):
        self._tensor, self._index = tensor, index

    def get(self, *, mode: str | None = None, fill_value=None) -> Tensor:
        """``t[index]``; with ``mode="fill"`` (or ``"drop"``) ``fill_value`` where an integer index is out of bounds
        (JAX's default fill: NaN for floats, the most negative value for ints, True for bools), with ``"clip"`` the
        nearest element."""
        t = self._tensor
        index, padded = _bounded_index(t, self._index, mode, "get")
        if not padded:
            return getitem(t, index)
        if fill_value is None:
            kind = np.dtype(t.dtype).kind
            fill_value = np.nan if kind in "fc" else True if kind == "b" else np.iinfo(np.dtype(t.dtype)).min
        fill = dispatch.to_tensor(fill_value, t.backend, t.dtype)
        if fill.dtype != t.dtype:
            _check_lossless(fill, t)
        from .math import cast

        cells = concat([reshape(t, (-1,)), reshape(cast(fill, t.dtype), (1,))], axis=0)
        return take(cells, getitem(_positions_beyond(t, padded), index))

    def set(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` with ``t[index]`` replaced by ``values``."""
        return self._update(values, "set", mode)

    def add(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` with ``values`` added at ``t[index]`` (repeated positions add up)."""
        return self._update(values, "add", mode)

    def subtract(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` with ``values`` subtracted at ``t[index]`` (repeated positions subtract them all)."""
        return self._update(values, "subtract", mode)

    def multiply(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` multiplied by ``values`` at ``t[index]`` (repeated positions by all of them)."""
        return self._update(values, "multiply", mode)

    mul = multiply

    def divide(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` divided by ``values`` at ``t[index]`` (repeated positions by the product of them)."""
        return self._update(values, "divide", mode)

    def power(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` raised to ``values`` at ``t[index]`` (repeated positions to the product of them)."""
        return self._update(values, "power", mode)

    def min(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` with ``t[index]`` replaced by its minimum with ``values`` (repeated positions: with all of them)."""
        return self._update(values, "min", mode)

    def max(self, values, *, mode: str | None = None) -> Tensor:
        """``t`` with ``t[index]`` replaced by its maximum with ``values`` (repeated positions: with all of them)."""
        return self._update(values, "max", mode)

    def _update(self, values, how: str, mode: str | None = None) -> Tensor:
        from .math import cast

        t = self._tensor
        index, padded = _bounded_index(t, self._index, mode, how)
        try:
            positions = getitem(_positions_beyond(t, padded), index)
        except (IndexError, TypeError) as e:  # it read the int64 positions: say whose index it is
            raise type(e)(f"Tensor.at[...]: {e} (tensor shape {t.shape} {t.dtype})") from None
        dispatch.check_int_range(values, t.dtype, "Tensor.at[...]: values")
        # Python numbers and lists are made on the tensor's backend and weakly typed, as an op makes its Python
        # inputs: next to a float64 tensor 0.1 is float64 (it was float32 first: 0.10000000149011612 was stored)
        values = as_tensor(values) if hasattr(values, "dtype") else dispatch.to_tensor(values, t.backend, t.dtype)
        if values.dtype != t.dtype:
            _check_lossless(values, t)
            values = cast(values, t.dtype)
        try:
            if None in positions.shape:  # sizes traced as unknown: broadcast at run time
                if len(values.shape) > len(positions.shape):
                    raise ValueError
                values = broadcast_like(values, positions)
            else:
                values = broadcast_to(values, positions.shape)
        except ValueError:
            raise ValueError(
                f"Tensor.at[...]: values of shape {values.shape} do not broadcast to the indexed shape "
                f"{positions.shape} (tensor shape {t.shape})"
            ) from None
        flat, where = reshape(t, (-1,)), reshape(positions, (-1, 1))
        values = reshape(values, (-1,))
        if padded:  # the dropped updates land on one cell past the end, cut off after
            out = _combined(pad(flat, [(0, 1)]), where, values, how)[:-1]
        else:
            out = _combined(flat, where, values, how)
        return reshape(out, t.shape) if None not in t.shape else reshape_like(out, t)


_INDEX_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


def _bounded_index(t, index, mode, how: str) -> tuple:
    """``(index, padded axes)`` for JAX's ``mode`` of ``t.at[index].<how>``: the integer items of ``index`` (ints,
    integer arrays) counted from the end where negative, then clipped into their axis (``"clip"``) or, out of
    bounds, sent one past its end (``"drop"``, ``"fill"``: the axes padded by :func:`_positions_beyond`).  ``None``
    and ``"promise_in_bounds"`` leave ``index`` as it is (out of bounds is an IndexError)."""
    if mode not in _INDEX_MODES:
        raise ValueError(
            f"Tensor.at[...].{how}: mode must be one of {_INDEX_MODES}, got {mode!r} (tensor shape {t.shape} {t.dtype})"
        )
    if mode in (None, "promise_in_bounds"):
        return index, ()
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(integer_indices(i) if isinstance(i, (list, range)) else i for i in items)
    fill = t.ndim - sum(_consumed(i) for i in items)
    bounded, padded, axis = [], [], 0
    for i in items:
        integer = not (i is None or i is Ellipsis or isinstance(i, (slice, bool, np.bool_)) or _is_mask(i))
        if integer:
            size = t.shape[axis] if axis < t.ndim else None
            if size is None or (mode != "clip" and None in t.shape):
                raise ValueError(
                    f"Tensor.at[...].{how}: mode={mode!r} needs the sizes of the indexed axes, unknown until run "
                    f"time here (tensor shape {t.shape} {t.dtype})"
                )
            i = _bounded_integers(i, size, mode)
            padded += [] if mode == "clip" else [axis]
        bounded.append(i)
        axis += fill if i is Ellipsis else _consumed(i)
    return tuple(bounded), tuple(padded)


def _bounded_integers(i, size: int, mode: str):
    """Integer indices ``i`` into an axis of ``size``: from the end where negative, then clipped into it
    (``"clip"``) or, where out of bounds, ``size`` (one past its end)."""
    if isinstance(i, Tensor):
        from . import math as math_ops

        i = math_ops.where(i < 0, i + size, i)
        if mode == "clip":
            return math_ops.minimum(math_ops.maximum(i, 0), size - 1)
        return math_ops.where(math_ops.logical_and(i >= 0, i < size), i, size)
    j = np.asarray(i)
    j = np.where(j < 0, j + size, j)
    j = np.clip(j, 0, size - 1) if mode == "clip" else np.where((j >= 0) & (j < size), j, size)
    return int(j) if np.ndim(i) == 0 and not isinstance(i, np.ndarray) else j.astype(np.asarray(i).dtype)


def _positions_beyond(t, padded: tuple) -> Tensor:
    """The flat positions of ``t``'s elements, in its shape, with one more cell at the end of each ``padded`` axis
    holding ``t.size``: the position past the end where ``.at[]`` drops its out-of-bounds updates."""
    positions = _positions_like(t)
    if not padded:
        return positions
    size = int(np.prod(t.shape))
    return pad(positions, [(0, 1) if a in padded else (0, 0) for a in range(t.ndim)], constant_values=size)


def _combined(flat, where, values, how: str) -> Tensor:
    """The flat tensor with the flat ``values`` combined at ``where`` (``(n, 1)`` positions) as ``how`` says."""
    from . import math as math_ops
    from . import reduce as reduce_ops

    if how == "set":
        return _scatter_update(flat, where, values)
    if how in ("add", "subtract"):
        added = _gather_nd_grad(values, where, flat)
        return flat + added if how == "add" else flat - added
    if how in ("min", "max"):
        from .segment import segment_max, segment_min

        if flat.shape[0] is None:
            raise ValueError(f"Tensor.at[...].{how}: the tensor's size is unknown until run time (traced); give it")
        # Each element is one more row of its own position: ties between it and the values share the gradient
        # equally, all of them (DESIGN's rule, JAX's scatter_min), as one reduction.
        from .creation import arange

        size = flat.shape[0]
        ids = concat([arange(size, dtype=where.dtype, backend=flat.backend), reshape(where, (-1,))], axis=0)
        rows = concat([flat, values], axis=0)
        return (segment_min if how == "min" else segment_max)(rows, ids, num_segments=size)
    # multiply, divide, power: by the product of the values at each position, ones elsewhere (JAX's scatter_mul)
    scale = _scatter_update(math_ops.ones_like(flat), where, _product_per_update(values, reshape(where, (-1,)), how))
    if how == "multiply":
        return flat * scale
    return flat / scale if how == "divide" else flat**scale


def _product_per_update(values, ids, how: str) -> Tensor:
    """For each update, the product of every update at its position (itself alone where positions are unique)."""
    from . import math as math_ops
    from . import reduce as reduce_ops

    if ids._value is not None:  # known positions: one product per repeat, exact
        known = ids.numpy()
        _, group, counts = np.unique(known, return_inverse=True, return_counts=True)
        if counts.size == known.size:
            return values
        order = np.argsort(group, kind="stable")
        repeat = np.empty(known.size, np.int64)  # which occurrence of its position each update is
        repeat[order] = np.arange(known.size) - np.repeat(np.cumsum(counts) - counts, counts)
        ones, product = math_ops.ones_like(values[: counts.size]), None
        for r in range(int(counts.max())):
            at = np.nonzero(repeat == r)[0]
            layer = _scatter_update(ones, group[at].reshape(-1, 1), take(values, at))
            product = layer if product is None else product * layer
        return take(product, group)
    n = values.shape[0]
    if n is None or n > _PAIRWISE_UPDATES:
        raise ValueError(
            f"Tensor.at[...].{how}: {n} updates at positions unknown until run time (traced, or per element of "
            f"tl.vmap): at most {_PAIRWISE_UPDATES} are combined (each compared with each); give static indices"
        )
    same = math_ops.equal(expand_dims(ids, 1), expand_dims(ids, 0))
    ones = math_ops.ones_like(values)
    return reduce_ops.prod(math_ops.where(same, expand_dims(values, 0), expand_dims(ones, 1)), axis=1)


def boolean_mask(tensor, mask, axis: int = 0) -> Tensor:
    """TensorFlow's ``boolean_mask``: the cells (or slices) of ``tensor`` where ``mask`` is True, ``mask``
    covering the axes ``axis .. axis + mask.ndim - 1``; ``tensor[mask]`` for ``axis=0``.  The result's length
    depends on the mask's values, so a mask computed inside ``tl.function`` is an IndexError (use
    :func:`tl.where`).

    >>> import tensorlib as tl
    >>> tl.boolean_mask(tl.tensor([[1, 2], [3, 4], [5, 6]]), [True, False, True]).numpy().tolist()
    [[1, 2], [5, 6]]
    """
    tensor = as_tensor(tensor)
    mask = mask if isinstance(mask, Tensor) else np.asarray(mask)
    if mask.dtype != np.bool_ or _index_ndim(mask) == 0:
        raise TypeError(
            f"boolean_mask: mask must be a boolean array of at least one axis, got {_index_shape(mask)} "
            f"{mask.dtype} (tensor shape {tensor.shape})"
        )
    axis = normalize_axis(as_int(axis, "boolean_mask: axis"), tensor.ndim)
    return getitem(tensor, (slice(None),) * axis + (mask,))


def one_hot(indices, depth: int, on_value=1.0, off_value=0.0, axis: int = -1, dtype=_dt.float32) -> Tensor:
    """TensorFlow's ``one_hot``: ``on_value`` where an index equals the position along the new ``axis`` of
    length ``depth``, ``off_value`` elsewhere (an index outside ``[0, depth)`` gives a row of ``off_value``).
    The values are numbers that ``dtype`` holds exactly (2.5 for int32 is a TypeError, as in TensorFlow).

    >>> import tensorlib as tl
    >>> tl.one_hot([2, -1], 3, on_value=5, off_value=0, dtype="int32").numpy().tolist()
    [[0, 0, 5], [0, 0, 0]]
    """
    dtype = _dt.as_dtype(dtype)
    return apply(
        _one_hot,
        (indices,),
        {
            "depth": as_int(depth, "one_hot: depth"),
            "on_value": _one_hot_value(on_value, dtype, "on_value"),
            "off_value": _one_hot_value(off_value, dtype, "off_value"),
            "axis": as_int(axis, "one_hot: axis"),
            "dtype": dtype,
        },
    )


def _one_hot_value(value, dtype, what: str):
    """``value`` as the Python number the kernel fills with; a TypeError where it is not one number that
    ``dtype`` holds (the cast truncated 2.5 to 2 for int32, made 2 True, 1e300 inf in float32, and a list
    filled each class with its own value)."""
    if type(value) in (float, int, bool) and value in (0, 1):  # the defaults: every dtype holds them
        return value
    given = value
    if isinstance(value, Tensor):
        if value.is_symbolic:
            for mode in dispatch.modes:  # tl.vmap says why a batched value has none
                mode.needs_value(value)
            raise TypeError(f"one_hot: {what} must be a number known when tl.function traces, got {value!r}")
        value = value.numpy()
    dispatch.check_int_range(value, dtype, f"one_hot: {what}")
    array = np.asarray(value)
    exact = array.ndim == 0 and array.dtype.kind in "biufc"
    if exact and array.dtype.kind == "c" and dtype.kind != "c":  # the imaginary part must be 0
        exact, array = bool(array.imag == 0), array.real
    if exact:
        with np.errstate(invalid="ignore", over="ignore"):
            cast = array.astype(dtype)
            if array.dtype.kind != dtype.kind:
                exact = bool(cast == array)
            elif array.dtype.kind in "fc":
                exact = bool(np.isfinite(cast) or not np.isfinite(array))
    if not exact:
        raise TypeError(f"one_hot: {what} {given!r} is not a number that dtype {dtype} holds exactly")
    return cast.item()


def _is_advanced(i):
    return isinstance(i, (Tensor, np.ndarray, list))


def _boolean_positions(mask, where: str) -> tuple:
    """The integer arrays (one per axis of ``mask``) of a boolean index's True cells, as NumPy reads ``x[mask]``;
    a mask a traced function computes has no known count of True cells."""
    if isinstance(mask, Tensor):
        if mask.is_symbolic:
            for mode in dispatch.modes:  # tl.vmap says why a batched mask has no value
                mode.needs_value(mask)
            raise IndexError(
                f"{where}: a boolean mask (shape {mask.shape}) computed inside a traced function gives a "
                "data-dependent shape; use tl.where(mask, x, 0), or index with the mask outside tl.function"
            )
        mask = mask.numpy()
    return tuple(np.nonzero(np.asarray(mask)))


def _consumed(i) -> int:
    """How many axes of the indexed tensor one index item reads (Ellipsis: 0 here, the rest is its fill)."""
    if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)):
        return 0
    if _is_advanced(i) and _is_mask(i):
        return _index_ndim(i)
    return 1


def _index_ndim(i) -> int:
    return i.ndim if isinstance(i, Tensor) else np.ndim(i)


def _index_shape(i) -> tuple:
    return tuple(i.shape) if isinstance(i, Tensor) else np.shape(i)


def _is_mask(i) -> bool:
    return (i.dtype if isinstance(i, Tensor) else np.asarray(i).dtype) == np.bool_


def _output_axis(ndim: int, index: tuple, k: int) -> int:
    """The output axis of a new axis (None or a boolean scalar) at position ``k`` of an index without arrays."""
    fill = ndim - sum(_consumed(i) for i in index)
    axis = 0
    for i in index[:k]:
        if i is Ellipsis:
            axis += fill
        elif i is None or isinstance(i, (bool, np.bool_, slice)):
            axis += 1
    return axis


def _masks_as_positions(x, index: tuple) -> tuple:
    """``index`` with each boolean array replaced by the integer arrays of its True cells, one per axis it
    covers (NumPy's rule), after checking its shape against those axes of ``x``."""
    fill = x.ndim - sum(_consumed(i) for i in index)
    out, axis = [], 0
    for i in index:
        if i is Ellipsis:
            axis += fill
        elif _is_advanced(i) and _is_mask(i):
            ndim, shape = _index_ndim(i), _index_shape(i)
            covered = tuple(x.shape[axis : axis + ndim])
            if len(covered) < ndim or any(d is not None and d != m for d, m in zip(covered, shape)):
                raise IndexError(
                    f"StridedSlice: a boolean index of shape {shape} does not match the axes "
                    f"{tuple(range(axis, axis + ndim))} of shape {covered} that it covers in a tensor of shape "
                    f"{x.shape}"
                )
            out.extend(_boolean_positions(i, "StridedSlice"))
            axis += ndim
            continue
        else:
            axis += _consumed(i)
        out.append(i)
    return tuple(out)


def _bool_scalar_or_self(i):
    """A 0-d boolean array (or concrete tensor) as the Python bool NumPy reads it as."""
    if _is_advanced(i) and _index_ndim(i) == 0 and _is_mask(i):
        if isinstance(i, Tensor) and i.is_symbolic:
            for mode in dispatch.modes:
                mode.needs_value(i)
            raise IndexError(
                "StridedSlice: a 0-d boolean index computed inside a traced function gives a "
                "data-dependent shape; use tl.where"
            )
        return bool(np.asarray(i))
    return i


def _index_array(i):
    """An index array as it is (a Tensor) or as a NumPy array."""
    return i if isinstance(i, Tensor) else np.asarray(i)


def _is_bool(i) -> bool:
    return isinstance(i, (bool, np.bool_))


def _gather_arrays(x, index: tuple, advanced: list) -> Tensor:
    """``x[index]`` for several array indices (boolean scalars among them, which NumPy reads as arrays of shape
    (1,) or (0,) indexing no axis): the other items first, then one gather_nd of the indexed axes (moved to the
    front) at the broadcast indices, whose axes go where NumPy puts them."""
    base = getitem(
        x,
        tuple(slice(None) if k in advanced else i for k, i in enumerate(index) if not (k in advanced and _is_bool(i))),
    )
    fill = x.ndim - sum(_consumed(i) for i in index)
    axes, first, axis, x_axis = [], None, 0, 0
    for k, i in enumerate(index):
        if k in advanced:
            first = axis if first is None else first
            if not _is_bool(i):
                axes.append(axis)
                _concrete_bounds("StridedSlice", _index_array(i)[..., None], x.shape, x_axis)
        x_axis += fill if i is Ellipsis else _consumed(i)
        if i is Ellipsis:
            axis += fill
        elif i is None or isinstance(i, slice) or k in advanced and not _is_bool(i):
            axis += 1
    arrays, shapes, scalars = [], [], []
    for k in advanced:
        i = index[k]
        if _is_bool(i):
            shapes.append((1,) if i else (0,))
            scalars.append(as_tensor(np.zeros(shapes[-1], np.int64)))
            continue
        dtype = i.dtype if isinstance(i, Tensor) else np.asarray(i).dtype
        if np.dtype(dtype).kind not in "iu":
            raise IndexError(
                f"StridedSlice: arrays used as indices must be of integer or boolean type, got {np.dtype(dtype)} "
                f"(index {k} of {len(index)}, tensor shape {x.shape})"
            )
        arrays.append(i if isinstance(i, Tensor) else as_tensor(np.asarray(i, np.int64)))
        shapes.append(arrays[-1].shape)
    try:
        shape = broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            f"StridedSlice: shape mismatch: the index arrays of shapes {shapes} cannot be broadcast together "
            f"(tensor shape {x.shape})"
        ) from None
    if arrays:
        dtype = np.result_type(*(a.dtype for a in arrays))
        arrays = [a.astype(dtype) if a.dtype != dtype else a for a in arrays]
        if None in shape:  # sizes unknown when traced: each array broadcast against the others (and False's 0)
            positions = stack([_broadcast_against(a, arrays + scalars) for a in arrays], axis=-1)
        else:
            positions = stack([broadcast_to(a, shape) for a in arrays], axis=-1)
    else:
        positions = as_tensor(np.zeros((*shape, 0), np.int64))
    rest = [a for a in range(base.ndim) if a not in axes]
    out = _gather_nd(transpose(base, tuple(axes + rest)), positions)
    ints = [k for k, i in enumerate(index) if isinstance(i, (int, np.integer)) and not _is_bool(i)]
    at = sorted(ints + advanced)
    if at[-1] - at[0] + 1 == len(at) and first:  # adjacent: the broadcast axes replace the indexed ones
        n = len(shape)
        out = transpose(out, tuple(range(n, n + first)) + tuple(range(n)) + tuple(range(n + first, out.ndim)))
    return out


def _separated(index: tuple, scalars: list) -> bool:
    """Whether a slice, None or Ellipsis separates the boolean scalars at ``scalars`` from an int of ``index``."""
    at = sorted(scalars + [k for k, i in enumerate(index) if isinstance(i, (int, np.integer)) and not _is_bool(i)])
    return at[-1] - at[0] + 1 != len(at)


def getitem(x, index) -> Tensor:
    """``x[index]`` with NumPy's rules: ints, slices, None, Ellipsis, integer arrays (several broadcast together,
    gathered with take or gather_nd), boolean arrays (their True cells) and boolean scalars."""
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(_bool_scalar_or_self(integer_indices(i) if isinstance(i, (list, range)) else i) for i in index)
    scalars = [k for k, i in enumerate(index) if isinstance(i, (bool, np.bool_))]
    # A boolean scalar is an advanced index, and so are the ints beside it: where a slice, None or Ellipsis
    # separates them, their axes go first (x[1, :, True] has shape (1,) + x.shape[1:]).
    if scalars and (len(scalars) > 1 or _separated(index, scalars) or any(_is_advanced(i) for i in index)):
        index = _masks_as_positions(x, index) if any(_is_advanced(i) and _is_mask(i) for i in index) else index
        return _gather_arrays(x, index, [k for k, i in enumerate(index) if _is_advanced(i) or _is_bool(i)])
    if scalars:
        # NumPy reads True as a new axis of length 1, False as one of length 0.
        out = getitem(x, tuple(None if isinstance(i, (bool, np.bool_)) else i for i in index))
        emptied = {
            _output_axis(x.ndim, index, k) for k, i in enumerate(index) if isinstance(i, (bool, np.bool_)) and not i
        }
        if not emptied:
            return out
        return getitem(out, tuple(slice(0, 0) if a in emptied else slice(None) for a in range(out.ndim)))
    if any(_is_advanced(i) and _is_mask(i) for i in index):
        index = _masks_as_positions(x, index)
    advanced = [k for k, i in enumerate(index) if _is_advanced(i)]
    if len(advanced) > 1:
        return _gather_arrays(x, index, advanced)
    if advanced:
        k = advanced[0]
        indices = index[k]
        before = index[:k]
        axis = sum(1 for i in before if i is None or isinstance(i, slice))
        if Ellipsis in before:
            n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
            axis += x.ndim - n_real
        base = getitem(x, index[:k] + (slice(None),) + index[k + 1 :])
        out = take(base, indices, axis=axis)
        # NumPy: when a slice, None or Ellipsis separates the array from an integer index (both are
        # "advanced"), the gathered dimensions go first.
        ints = [
            j
            for j, i in enumerate(index)
            if isinstance(i, (int, np.integer)) and not isinstance(i, bool) or isinstance(i, Tensor) and i.ndim == 0
        ]
        positions = sorted(ints + [k])
        if axis and positions[-1] - positions[0] + 1 != len(positions):
            n = np.ndim(indices)
            out = transpose(out, tuple(range(axis, axis + n)) + tuple(range(axis)) + tuple(range(axis + n, out.ndim)))
        return out
    clean = []
    for i in index:
        if isinstance(i, (int, np.integer)):
            clean.append(int(i))
        elif isinstance(i, Tensor) and i.ndim == 0:
            clean.append(int(i))
        elif isinstance(i, slice):
            clean.append(
                slice(
                    *(
                        None if v is None else as_int(v, "StridedSlice: a slice bound")
                        for v in (i.start, i.stop, i.step)
                    )
                )
            )
        elif i is None or i is Ellipsis:
            clean.append(i)
        else:
            raise IndexError(f"StridedSlice: unsupported index {i!r}")
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    try:
        full = _expand_index(tuple(shape), tuple(clean))
    except IndexError as e:
        raise IndexError(f"StridedSlice: {e}") from None
    return apply(_getitem, (x,), {"index": full})


# ---------------------------------------------------------------- run-time shape checks
def _named_sizes(shapes, dims, dtypes) -> dict:
    """The size of each named dimension across ``shapes`` (``None`` entries: not known yet, under tracing);
    raises naming the input, its shape and what it had to match."""
    named: dict = {}
    for i, (shape, want, dtype) in enumerate(zip(shapes, dims, dtypes)):
        if len(shape) != len(want):
            raise ValueError(
                f"input {i} (shape {tuple(shape)}, {dtype}) has rank {len(shape)}, expected "
                f"{len(want)} dimensions {tuple(want)}"
            )
        for axis, (got, dim) in enumerate(zip(shape, want)):
            if got is None or dim is None:
                continue
            if isinstance(dim, str):
                seen = named.setdefault(dim, (got, i, shape))
                if seen[0] == got:
                    continue
                raise ValueError(
                    f"dimension {axis} ({dim!r}) of input {i} (shape {tuple(shape)}, {dtype}) is {got}, "
                    f"but {dim!r} is {seen[0]} in input {seen[1]} (shape {tuple(seen[2])})"
                )
            if got != dim:
                raise ValueError(
                    f"dimension {axis} of input {i} (shape {tuple(shape)}, {dtype}) is {got}, expected "
                    f"{dim} (shape {tuple(want)})"
                )
    return {name: seen[0] for name, seen in named.items()}


def _ensure_infer(*xs, dims, message):
    try:
        named = _named_sizes([x.shape for x in xs], dims, [x.dtype for x in xs])
    except ValueError as e:
        raise ValueError(f"{message}: {e}" if message else str(e)) from None
    # Each result's shape knows what the checks pin down: an int, or a named size some input has.
    return tuple(
        spec(
            tuple(
                got if got is not None else dim if isinstance(dim, int) else named.get(dim)
                for got, dim in zip(x.shape, want)
            ),
            x.dtype,
        )
        for x, want in zip(xs, dims)
    )


_ensure = defop(
    "EnsureShapes",
    inputs=("xs",),
    attrs={"dims": (), "message": ""},
    infer=_ensure_infer,
    variadic=True,
    doc="Identity of each input that raises at run time when its shape breaks dims (ints, names, None).",
)


@_ensure.generic
def _ensure_kernel(xp, *xs, dims, message):
    try:  # run by a traced graph, with the sizes the trace did not know
        _named_sizes([x.shape for x in xs], dims, [x.dtype for x in xs])
    except ValueError as e:
        raise ValueError(f"EnsureShapes: {message}: {e}" if message else f"EnsureShapes: {e}") from None
    return xs


register_gradient("EnsureShapes", lambda node, *gs, index: gs[index])


def ensure_dims(*xs, dims: tuple, message: str = "") -> tuple:
    """``xs`` unchanged, each checked when it runs against its entry of ``dims`` (ints, names shared
    across the inputs, ``None``): the op under ``tl.ensure_shape`` and ``tl.debugging.assert_shapes``,
    and under gradients that hold only for some sizes unknown when traced."""
    return _ensure(*xs, dims=dims, message=message)
