"""OpenBLAS held to the calling thread while tensorlib's NumPy kernels share work out between threads of their own.

After each call that it runs on several threads, OpenBLAS leaves its worker threads spinning
(busy-waiting for the next call) for about a tenth of a second: a 1024^3 float32 GEMM followed by
0.1 s of sleep costs 0.1 s of CPU on the machines we measured. On a machine with few cores that
spin holds a core the whole time, and the kernels that tensorlib shares out between its own
threads (pooling, activations, the conv transforms: :func:`.blocks._share_blocks`) run on what is
left. The traced LeNet training step of ``bench/traced_training_step.py`` took 85 ms with NumPy's
threaded matmul in it and 62 ms with the same products each run on one BLAS thread.

So while tensorlib's kernels share work out between threads (one did in the last
:data:`_SHARING_RECENT_S` seconds: a conv net's step), a product big enough for OpenBLAS to
thread runs under :data:`single_threaded`, and :func:`matmul` shares its pieces out between
tensorlib's threads itself. Otherwise (products and elementwise ops alone: a dense net's step)
the product is NumPy's own call, threaded by OpenBLAS, which shares its packed panels between
its threads and runs a mid-size product up to twice as fast as two independent pieces do.
Where NumPy's BLAS is not an OpenBLAS that says how to set its thread count (MKL, Accelerate, a
build without the symbols), nothing here changes anything and NumPy's own threading is used.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import math
import os
import threading

import numpy as np

from .blocks import (
    _BLAS_SINGLE_THREAD_FLOPS,
    _PARALLEL_MIN_FLOPS,
    _even_blocks,
    _share_blocks,
    _thread_count,
    _threads_shared_within,
)

# The (prefix, suffix) of the thread-count functions in the OpenBLAS builds NumPy ships with:
# scipy-openblas (NumPy's wheels, 64-bit integers and 32) and plain OpenBLAS (distributions).
_SYMBOLS = (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "64_"), ("openblas", ""))

# How recently a kernel must have shared work out between threads for products to keep OpenBLAS's
# workers asleep: longer than the workers' spin after a call (about 0.1 s), so that in a step that
# alternates kernels and products no product's spin overlaps a kernel.
_SHARING_RECENT_S = 0.15

# Pieces per thread when a product's rows are shared out: two, so a thread that gets less of a
# core hands its second piece to the other; more would shrink the GEMMs for little gain.
_PIECES_PER_THREAD = 2

# A product whose contraction is at least this many times longer than its rows and its columns (a
# dense layer's forward pass: (128, 3136) @ (3136, 128)) is cut along the contraction instead, one
# piece per thread, and the pieces' products are summed: each thread then packs half of each
# operand, where cutting rows or columns has every piece pack the whole of the other operand.
_DEPTH_SPLIT_RATIO = 4


def _loaded_openblas_paths() -> list[str]:
    """Paths of the OpenBLAS libraries this process has loaded (Linux), else those NumPy ships; NumPy's first.

    SciPy ships an OpenBLAS of its own (``scipy.libs``), mapped at whatever address: once SciPy was loaded,
    the first control (the one callers read NumPy's thread count from) could be SciPy's."""
    paths = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6 and "openblas" in os.path.basename(fields[5]).lower():
                    paths.append(fields[5].strip())
    except OSError:
        pass
    if not paths:
        numpy_dir = os.path.dirname(np.__file__)
        for folder in (os.path.join(numpy_dir, os.pardir, "numpy.libs"), os.path.join(numpy_dir, ".dylibs")):
            paths.extend(glob.glob(os.path.join(folder, "*openblas*")))
    numpy_libs = os.path.dirname(os.path.dirname(np.__file__))
    return sorted(dict.fromkeys(paths), key=lambda path: not _ships_with_numpy(path, numpy_libs))


def _ships_with_numpy(path: str, site: str) -> bool:
    """Whether ``path`` is in NumPy's own library folder (``numpy.libs`` or ``numpy/.dylibs``) under ``site``."""
    folder = os.path.dirname(os.path.abspath(path))
    return folder in (os.path.join(site, "numpy.libs"), os.path.join(site, "numpy", ".dylibs"))


@functools.lru_cache(maxsize=1)
def _openblas_controls() -> tuple:
    """``(set_num_threads, get_num_threads)`` of every OpenBLAS found; empty when there is none."""
    controls = []
    for path in _loaded_openblas_paths():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in _SYMBOLS:
            setter = getattr(library, f"{prefix}_set_num_threads{suffix}", None)
            getter = getattr(library, f"{prefix}_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                controls.append((setter, getter))
                break
    return tuple(controls)


def controls_openblas() -> bool:
    """Whether this process's OpenBLAS can be kept on one thread (else :data:`single_threaded` does nothing).

    >>> isinstance(controls_openblas(), bool)
    True
    """
    return bool(_openblas_controls())


class _SingleThreaded:
    """``with single_threaded:`` runs OpenBLAS on the calling thread only, and restores its thread count after.

    The thread count is one setting for the whole process: the first thread to enter saves it and
    sets 1, the last to leave restores it, so overlapping blocks in several threads nest.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: tuple = ()

    def __enter__(self):
        controls = _openblas_controls()
        if controls:
            with self._lock:
                if self._depth == 0:
                    self._saved = tuple(get() for _, get in controls)
                    for set_threads, _ in controls:
                        set_threads(1)
                self._depth += 1
        return self

    def __exit__(self, *exc_info) -> None:
        controls = _openblas_controls()
        if controls:
            with self._lock:
                if self._depth == 0:  # a block entered before a fork, left in the child: already given back
                    return
                self._depth -= 1
                if self._depth == 0:
                    for (set_threads, _), count in zip(controls, self._saved):
                        set_threads(count)

    def _reset_after_fork(self) -> None:
        """In a forked child: no other thread is inside a block any more, so give back the count it saved."""
        self._lock = threading.Lock()
        if self._depth:
            self._depth = 0
            for (set_threads, _), count in zip(_openblas_controls(), self._saved):
                set_threads(count)


single_threaded = _SingleThreaded()

if hasattr(os, "register_at_fork"):
    # A fork while another thread is inside a block would leave the child with OpenBLAS on one
    # thread for good, and the lock possibly held by a thread that does not exist there.
    os.register_at_fork(after_in_child=single_threaded._reset_after_fork)


def matmul(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.matmul(x, y, out=out)`` (at least 2-D operands) with OpenBLAS's threads left asleep.

    A product too small for OpenBLAS to thread is one plain call, and so is a bigger one while
    tensorlib's kernels have not been sharing work out (OpenBLAS threads it). Else it runs on one
    BLAS thread per piece: big products are cut into pieces along the stacked matrices, the rows
    or the columns (whichever has room), which tensorlib's own threads share out.

    >>> x, y = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    >>> matmul(x, y).tolist()
    [[3.0, 3.0], [12.0, 12.0]]
    """
    xs, columns = x.shape, y.shape[-1]
    rows, depth = xs[-2], xs[-1]
    if depth == 1 and x.dtype is y.dtype and x.dtype.kind == "f":
        # Outer products (a stack of them: per-example weight gradients): one product per cell, so the
        # broadcast multiply gives the same numbers, about 1.5x faster than NumPy's matmul loop.
        return np.multiply(x, y, out=out)
    if rows * depth * columns <= _BLAS_SINGLE_THREAD_FLOPS:  # first: small products are most calls
        return np.matmul(x, y, out=out)
    if (
        x.dtype.kind not in "fc"
        or y.dtype.kind not in "fc"
        or not _openblas_controls()
        or not _threads_shared_within(_SHARING_RECENT_S)
        # pieces would read what other pieces already wrote (one NumPy call copies an overlap first)
        or (out is not None and (np.may_share_memory(out, x) or np.may_share_memory(out, y)))
    ):
        return np.matmul(x, y, out=out)
    batch_shape = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    batch = math.prod(batch_shape)
    threads = _thread_count()
    with single_threaded:
        if threads == 1 or 2 * batch * rows * depth * columns < _PARALLEL_MIN_FLOPS:
            return np.matmul(x, y, out=out)
        if out is None:
            out = np.empty((*batch_shape, rows, columns), np.result_type(x, y))
        pieces = threads * _PIECES_PER_THREAD
        if batch >= pieces:
            x3 = np.broadcast_to(x, (*batch_shape, rows, depth)).reshape(batch, rows, depth)
            y3 = np.broadcast_to(y, (*batch_shape, depth, columns)).reshape(batch, depth, columns)
            o3 = out.reshape(batch, rows, columns)

            def run(blocks) -> None:
                for start, stop in blocks:
                    np.matmul(x3[start:stop], y3[start:stop], out=o3[start:stop])

            _share_blocks(run, _even_blocks(batch, batch, pieces), True, note=False)
        elif depth >= _DEPTH_SPLIT_RATIO * max(rows, columns):
            _depth_split_matmul(x, y, out, threads)
        elif rows >= columns:

            def run(blocks) -> None:
                for start, stop in blocks:
                    np.matmul(x[..., start:stop, :], y, out=out[..., start:stop, :])

            _share_blocks(run, _even_blocks(rows, rows, pieces), True, note=False)
        else:

            def run(blocks) -> None:
                for start, stop in blocks:
                    np.matmul(x, y[..., start:stop], out=out[..., start:stop])

            _share_blocks(run, _even_blocks(columns, columns, pieces), True, note=False)
    return out


def _depth_split_matmul(x: np.ndarray, y: np.ndarray, out: np.ndarray, pieces: int) -> None:
    """``out = x @ y`` as the sum of ``pieces`` products over consecutive parts of the contraction,
    shared out between threads, each on one BLAS thread. Each piece has its own target and they are
    added in order: the same bits whichever thread ran which piece."""
    parts = _even_blocks(x.shape[-1], x.shape[-1], pieces)
    targets = [out, *np.empty((len(parts) - 1, *out.shape), out.dtype)]

    def run(indices) -> None:
        for index in indices:
            start, stop = parts[index]
            np.matmul(x[..., start:stop], y[..., start:stop, :], out=targets[index])

    _share_blocks(run, range(len(parts)), True, note=False)
    for target in targets[1:]:
        out += target
