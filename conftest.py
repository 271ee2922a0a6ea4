"""Every test and doctest runs with the global registries isolated: the backends, op types, kernels and
gradient rules it registers are removed when it ends (see tensorlib.testing.isolation)."""

import ctypes
import os

import pytest

from tensorlib.testing.isolation import isolated_registries


def _scipy_blas_on_one_thread() -> None:
    """Run SciPy's own OpenBLAS (``scipy.libs``, apart from NumPy's, which tensorlib's ``numpy_nn.blas`` manages
    and its tests exercise threaded) on one thread for the whole run.

    The tests call SciPy on matrices of a few rows, and its OpenBLAS threads even a 3x3 triangular solve: on a
    2-core machine running other work, each call then waits for a descheduled worker thread.  Measured here
    (load 9 on 2 cores): ``scipy.linalg.solve_triangular`` of a 3x3 took 36 ms on two threads, 0.16 ms on one;
    ``tl.linalg.logm``'s gradient check took 27 s and 5 s.  No test is about SciPy's threads.
    """
    try:
        import scipy.linalg  # noqa: F401  (loads SciPy's OpenBLAS)
    except ImportError:
        return
    try:
        with open("/proc/self/maps") as maps:
            paths = {fields[5].strip() for fields in (line.split(None, 5) for line in maps) if len(fields) == 6}
    except OSError:
        return
    for path in paths:
        if "scipy.libs" not in path or "openblas" not in os.path.basename(path).lower():
            continue
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_"):
            setter = getattr(library, name, None)
            if setter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                setter(1)
                break


_scipy_blas_on_one_thread()


@pytest.fixture(autouse=True)
def _isolated_registries():
    with isolated_registries():
        yield
