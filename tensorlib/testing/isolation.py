"""Undo registrations: backends, op types, kernels and gradient rules added inside a block go away.

tensorlib's registries are global, as they must be for user ops to work
everywhere; a test or doctest that registers something would otherwise leak
it into every later one (a backend registered by one doctest shows up in
another's ``tl.ops.explain`` output).  The repository's ``conftest.py`` runs
every test and doctest inside :func:`isolated_registries`.

>>> import numpy as np, tensorlib as tl
>>> with isolated_registries():
...     _ = tl.ops.defop("IsolatedDoc", inputs=("x",), infer=lambda x: x)
...     "IsolatedDoc" in tl.ops.all_ops()
True
>>> "IsolatedDoc" in tl.ops.all_ops()
False
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..backends import base as backends
from ..grad import registry as grad_registry
from ..ops import registry as op_registry


@contextlib.contextmanager
def isolated_registries() -> Iterator[None]:
    """On exit, restore the backends, the current backend, the op types with their kernels (plain,
    ``out_kernel`` and ``generic``) and the gradient rules (registered and not-differentiable
    declarations) to what they were on entry."""
    saved_backends = dict(backends._backends)
    current = backends.current()
    saved_ops = dict(op_registry._ops)
    saved_kernels = {name: _registrations(op) for name, op in saved_ops.items()}
    saved_rules = dict(grad_registry.rules)
    try:
        yield
    finally:
        _restore(backends._backends, saved_backends)
        if backends.current() is not current:
            backends.set_backend(current)
        _restore(op_registry._ops, saved_ops)
        for name, op in saved_ops.items():
            for attr, value in saved_kernels[name].items():
                if isinstance(value, dict):
                    _restore(getattr(op, attr), value)
                else:
                    setattr(op, attr, value)
        _restore(grad_registry.rules, saved_rules)


# What registering on an existing op can change: its kernels (plain, writing into out=, generic) and
# its gradient flags.
_KERNEL_DICTS = ("kernels", "out_kernels")
_KERNEL_ATTRS = ("generic_kernel", "generic_takes_backend", "kernels_reason", "differentiable", "has_gradient")


def _registrations(op) -> dict:
    return {
        **{attr: dict(getattr(op, attr)) for attr in _KERNEL_DICTS},
        **{attr: getattr(op, attr) for attr in _KERNEL_ATTRS},
    }


def _restore(registry: dict, saved: dict) -> None:
    if registry != saved:
        registry.clear()
        registry.update(saved)
