"""Cost of NumPy's own functions on Tensors (NEP 13/18) next to the tensorlib calls they run.

Each row times one call on a 4-element float64 tensor, median of 15 repeats of 2000 calls, in
microseconds, all in one run: the tensorlib function, the same through NumPy's dispatch
(``np.exp(t)`` -> ``Tensor.__array_ufunc__`` -> ``tl.exp``), and their ratio.
``np.asarray(t)`` (``__array__``) does not go through the protocol and is shown for reference.

    python bench/numpy_protocol.py
"""

from __future__ import annotations

import statistics
import timeit

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tensorlib as tl  # noqa: E402

T = tl.tensor(np.array([0.1, 0.2, 0.3, 0.4]))
A = np.array([1.0, 2.0, 3.0, 4.0])
U = tl.tensor(A)
ROWS = [
    ("exp", lambda: tl.exp(T), lambda: np.exp(T)),
    ("sum", lambda: tl.sum(T), lambda: np.sum(T)),
    ("mean(axis=0)", lambda: tl.mean(T, axis=0), lambda: np.mean(T, axis=0)),
    ("concatenate", lambda: tl.concat([T, U]), lambda: np.concatenate([T, U])),
    ("ndarray + Tensor", lambda: T.__radd__(A), lambda: A + T),
    ("asarray (no protocol)", lambda: T.numpy(), lambda: np.asarray(T)),
]


def median_us(fn, number=2000, repeat=15) -> float:
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main():
    print(f"{'call':24} {'tensorlib us':>13} {'via NumPy us':>13} {'ratio':>7}")
    for name, direct, via_numpy in ROWS:
        a, b = median_us(direct), median_us(via_numpy)
        print(f"{name:24} {a:13.2f} {b:13.2f} {b / a:7.2f}")


if __name__ == "__main__":
    main()
