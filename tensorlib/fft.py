"""``tl.fft``: NumPy's ``fft`` module with gradients (``n``/``s``, ``axis``/``axes`` and ``norm`` as in NumPy).

Real inputs to ``fft`` become complex; ``rfft``/``irfft`` keep the half
spectrum.  Integers and bools transform in float64 (complex128); float16
(which has no complex partner) in float32, and the real results of
``irfft``/``hfft``/``irfftn`` stay float32, as in JAX: NumPy 2 rounds a 1-d
``irfft`` or ``hfft`` of float16 input back to float16 but not ``irfft2`` or
``irfftn`` of 2-d input, which give float32.  Gradients follow JAX's convention for complex values (see
``docs/complex.md``), so a real loss of a spectrum differentiates back to a
real signal:

>>> import tensorlib as tl
>>> x = tl.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64")
>>> power = lambda x: tl.sum(tl.abs(tl.fft.rfft(x)) ** 2)
>>> tl.grad(power)(x).numpy().round(6).tolist()
[12.0, 20.0, 20.0, 28.0]
"""

from .ops.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
