"""The NumPy backend: host arrays, contractions through opt_einsum and BLAS."""

from __future__ import annotations

import functools

import numpy as np
import opt_einsum

from .base import Backend, register


@functools.lru_cache(maxsize=4096)
def _contract_expression(subscripts: str, *shapes):
    """opt_einsum's contraction plan for one (subscripts, shapes) pair, built once."""
    return opt_einsum.contract_expression(subscripts, *shapes, optimize="auto")


class NumpyBackend(Backend):
    def __init__(self):
        super().__init__("numpy", np)

    def einsum(self, subscripts, *operands):
        expr = _contract_expression(subscripts, *(o.shape for o in operands))
        return expr(*operands)


numpy = register(NumpyBackend())
