"""Optional dependencies, imported when first needed, with one clear ImportError when missing."""

from __future__ import annotations

import functools
import importlib


@functools.cache
def scipy_module(name: str, missing: str):
    """``scipy.<name>``; ``ImportError(missing)`` (the message says who needs it and how to install it)."""
    try:
        return importlib.import_module(f"scipy.{name}")
    except ImportError as e:
        raise ImportError(missing) from e
