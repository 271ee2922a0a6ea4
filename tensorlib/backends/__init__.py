"""Backends: NumPy (always); array_api_strict and CuPy (optional, imported on first use)."""

from .base import Backend, backend, current, get, names, register, set_backend
from .numpy_backend import numpy
from .array_api_strict_backend import array_api_strict
from .cupy_backend import cupy
from . import base as _base

_base._default.append(numpy)

__all__ = [
    "Backend",
    "backend",
    "current",
    "get",
    "names",
    "register",
    "set_backend",
    "numpy",
    "array_api_strict",
    "cupy",
]
