"""opt_einsum's backend for tensorlib's NumPy einsum: NumPy's functions, with every tensordot
product run by :func:`.blas.matmul`, so a big contraction leaves OpenBLAS's workers asleep as a
matmul does. opt_einsum imports a backend by module name and takes ``tensordot``, ``transpose``
and ``einsum`` from it; ``einsum`` (the steps that are not a product of two matrices) runs no BLAS.

>>> import opt_einsum
>>> a, b = np.ones((2, 3, 4)), np.ones((4, 3, 5))
>>> opt_einsum.contract("ijk,kjl->il", a, b, backend=__name__).tolist()
[[12.0, 12.0, 12.0, 12.0, 12.0], [12.0, 12.0, 12.0, 12.0, 12.0]]
"""

from __future__ import annotations

import math

import numpy as np

from .blas import matmul

einsum = np.einsum
transpose = np.transpose


def tensordot(a: np.ndarray, b: np.ndarray, axes=2) -> np.ndarray:
    """``np.tensordot(a, b, axes)``, the product of the two reshaped operands by :func:`.blas.matmul`.

    >>> tensordot(np.arange(6.0).reshape(2, 3), np.ones((3, 2)), axes=1).tolist()
    [[3.0, 3.0], [12.0, 12.0]]
    """
    a, b = np.asarray(a), np.asarray(b)
    if isinstance(axes, (int, np.integer)):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = ([axis] if isinstance(axis, (int, np.integer)) else list(axis) for axis in axes)
    axes_a = [axis % a.ndim for axis in axes_a]
    axes_b = [axis % b.ndim for axis in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError(f"tensordot: shape mismatch for sum (shapes {a.shape} and {b.shape}, axes {axes})")
    free_a = [axis for axis in range(a.ndim) if axis not in axes_a]
    free_b = [axis for axis in range(b.ndim) if axis not in axes_b]
    depth = math.prod(a.shape[axis] for axis in axes_a)
    shape_a, shape_b = tuple(a.shape[axis] for axis in free_a), tuple(b.shape[axis] for axis in free_b)
    left = a.transpose(free_a + axes_a).reshape(math.prod(shape_a), depth)
    right = b.transpose(axes_b + free_b).reshape(depth, math.prod(shape_b))
    return matmul(left, right).reshape(shape_a + shape_b)
