"""tl.signal's linear filters against scipy.signal: lfilter, its gradient, sosfilt and filtfilt.

Rows: signal length (1e3..1e6 samples), filter order (2, 8; a Butterworth low-pass from SciPy's ``butter``)
and batch (1, 64 signals, filtered along the last axis).  Columns: SciPy (``scipy.signal.lfilter``: one C loop),
tensorlib (its NumPy kernels are SciPy's loop when SciPy is importable), tensorlib with its own blocked kernels
(as without SciPy), and tensorlib's forward + backward (``tl.grad`` in ``x`` and ``a``).  Medians of repeated
calls, milliseconds, threads pinned to 2 (``common``).  PyTorch and JAX have no lfilter outside torchaudio
(``torchaudio.functional.lfilter``, not installed here) and ``jax.scipy.signal`` (which has none).

    python bench/signal_filters.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: F401  (sets thread env vars before numpy is imported)
import numpy as np
import scipy.signal as scipy_signal

import tensorlib as tl
from tensorlib.ops import iir


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _own_kernels(fn):
    """``fn`` run with the kernels' own loops (SciPy hidden from them)."""

    def run():
        saved = iir._scipy_lfilter, iir._scipy_sosfilt
        iir._scipy_lfilter = iir._scipy_sosfilt = lambda: None
        try:
            return fn()
        finally:
            iir._scipy_lfilter, iir._scipy_sosfilt = saved

    return run


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    args = parser.parse_args(argv)
    lengths = (1_000, 100_000) if args.quick else (1_000, 10_000, 100_000, 1_000_000)
    repeats = 3 if args.quick else 7
    rng = np.random.default_rng(0)
    header = f"{'workload':<34}{'SciPy':>10}{'tensorlib':>11}{'own loops':>11}{'fwd+bwd':>10}{'tl / SciPy':>12}"
    print(header)
    print("-" * len(header))
    for n in lengths:
        for order in (2, 8):
            for batch in (1, 64):
                if n * batch > 8_000_000:
                    continue
                b, a = scipy_signal.butter(order, 0.2)
                x = rng.standard_normal((batch, n))
                ref = _median_ms(lambda: scipy_signal.lfilter(b, a, x), repeats)
                ours = _median_ms(lambda: tl.signal.lfilter(b, a, x), repeats)
                own = _median_ms(_own_kernels(lambda: tl.signal.lfilter(b, a, x)), repeats)
                grad = tl.grad(lambda x, a: tl.sum(tl.signal.lfilter(b, a, x)), argnums=(0, 1))
                both = _median_ms(lambda: grad(x, a), repeats)
                name = f"lfilter n={n} order={order} batch={batch}"
                print(f"{name:<34}{ref:>10.2f}{ours:>11.2f}{own:>11.2f}{both:>10.2f}{ours / ref:>12.1f}")
    for n in lengths[-1:]:
        sos = scipy_signal.butter(8, 0.2, output="sos")
        b, a = scipy_signal.butter(4, 0.2)
        x = rng.standard_normal((8, n))
        for name, ref_fn, our_fn in (
            ("sosfilt", lambda: scipy_signal.sosfilt(sos, x), lambda: tl.signal.sosfilt(sos, x)),
            ("filtfilt", lambda: scipy_signal.filtfilt(b, a, x), lambda: tl.signal.filtfilt(b, a, x)),
            ("sosfiltfilt", lambda: scipy_signal.sosfiltfilt(sos, x), lambda: tl.signal.sosfiltfilt(sos, x)),
        ):
            ref, ours = _median_ms(ref_fn, repeats), _median_ms(our_fn, repeats)
            own = _median_ms(_own_kernels(our_fn), repeats)
            label = f"{name} n={n} batch=8"
            print(f"{label:<34}{ref:>10.2f}{ours:>11.2f}{own:>11.2f}{'':>10}{ours / ref:>12.1f}")
    # sosfiltfilt: one op per pass (SosFilterFrom); forward + backward in x and in sos
    sos = scipy_signal.butter(8, 0.2, output="sos")
    for batch in (1, 64):
        x = rng.standard_normal((batch, 100_000))
        ref = _median_ms(lambda: scipy_signal.sosfiltfilt(sos, x), repeats)
        ours = _median_ms(lambda: tl.signal.sosfiltfilt(sos, x), repeats)
        own = _median_ms(_own_kernels(lambda: tl.signal.sosfiltfilt(sos, x)), repeats)
        grad = tl.grad(lambda x, s: tl.sum(tl.signal.sosfiltfilt(s, x, padlen=51) ** 2), argnums=(0, 1))
        both = _median_ms(lambda: grad(x, tl.tensor(sos)), repeats)
        label = f"sosfiltfilt order=8 n=1e5 batch={batch}"
        print(f"{label:<34}{ref:>10.2f}{ours:>11.2f}{own:>11.2f}{both:>10.2f}{ours / ref:>12.1f}")


if __name__ == "__main__":
    main()
