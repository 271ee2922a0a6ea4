"""Autodiff: the gradient registry, tapes, the engine and the functional API.

``tl.grad`` is both this namespace (``tl.grad.register_gradient``,
``tl.grad.override``, ...) and JAX's ``grad`` function: calling the module
calls :func:`tensorlib.grad.api.grad`.
"""

import sys
import types

from .api import grad as _grad_function
from .api import hessian, jacobian, jvp, value_and_grad, vjp
from .backprop import backprop
from .registry import audit, get, is_differentiable, not_differentiable, override, register_gradient
from .tape import GradientTape

__all__ = [
    "register_gradient",
    "not_differentiable",
    "get",
    "override",
    "audit",
    "is_differentiable",
    "GradientTape",
    "backprop",
    "value_and_grad",
    "vjp",
    "jvp",
    "jacobian",
    "hessian",
]


class _CallableModule(types.ModuleType):
    def __call__(self, f, argnums=0, has_aux=False):
        return _grad_function(f, argnums, has_aux)


sys.modules[__name__].__class__ = _CallableModule
