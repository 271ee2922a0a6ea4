"""The NumPy backend: host arrays, contractions through opt_einsum and BLAS."""

from __future__ import annotations

import functools

import numpy as np
import opt_einsum

from .base import Backend, register
from .numpy_nn.blocks import _BLAS_SINGLE_THREAD_FLOPS


# opt_einsum's backend (a module name) whose tensordot products leave OpenBLAS's workers asleep.
_CONTRACT_BACKEND = "tensorlib.backends.numpy_nn.contract"


@functools.lru_cache(maxsize=4096)
def _contract_expression(subscripts: str, *shapes):
    """opt_einsum's contraction plan for one (subscripts, shapes) pair, built once.

    A contraction big enough for OpenBLAS to thread one of its products runs them through
    ``numpy_nn.blas.matmul`` (see :mod:`.numpy_nn.blas`: OpenBLAS's idle workers would spin
    and take a core from tensorlib's own kernel threads); a small one calls NumPy directly.
    """
    expression = opt_einsum.contract_expression(subscripts, *shapes, optimize="auto")
    cost = opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize="auto")[1].opt_cost
    if cost > _BLAS_SINGLE_THREAD_FLOPS:
        return functools.partial(expression, backend=_CONTRACT_BACKEND)
    return expression


class NumpyBackend(Backend):
    def __init__(self):
        super().__init__("numpy", np)

    def einsum(self, subscripts, *operands):
        expr = _contract_expression(subscripts, *(o.shape for o in operands))
        return expr(*operands)


numpy = register(NumpyBackend())
