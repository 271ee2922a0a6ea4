"""Autodiff: the gradient registry, tapes, the engine and the functional API.

``tl.grad`` is both this namespace (``tl.grad.register_gradient``,
``tl.grad.override``, ...) and JAX's ``grad`` function: calling the module
calls :func:`tensorlib.grad.api.grad`.

The op families import ``tensorlib.grad.registry``, which runs this file first; so it loads only
the registry (the layer below the families, docs/architecture.md "Layers"), and the engine, the
tapes and the functional API above them load on first use of their names here (``import
tensorlib`` uses them at once).

>>> import tensorlib as tl
>>> float(tl.grad(lambda x: x * x)(tl.tensor(3.0))), tl.grad.GradientTape.__module__
(6.0, 'tensorlib.grad.tape')
"""

import importlib
import sys
import types

from .registry import audit, get, is_differentiable, not_differentiable, override, register_gradient

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
    "linearize",
    "linear_transpose",
    "jacobian",
    "jacrev",
    "jacfwd",
    "hessian",
]

# Names re-exported from the modules above the registry: name -> module.
_LAZY = {
    "backprop": ".backprop",
    "GradientTape": ".tape",
    "value_and_grad": ".api",
    "vjp": ".api",
    "jvp": ".api",
    "linearize": ".api",
    "linear_transpose": ".api",
    "jacobian": ".api",
    "jacrev": ".api",
    "jacfwd": ".api",
    "hessian": ".api",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is not None:
        # Importing a module of the package sets the package's attribute of that name to the module: the
        # engine's module first, so that ``backprop`` then names its function, as the other names do.
        engine = importlib.import_module(".backprop", __name__)
        globals()["backprop"] = engine.backprop
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f".{name}", __name__)  # a module of the package: tl.grad.custom
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    def __call__(self, f, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
        from .api import grad

        return grad(f, argnums, has_aux, holomorphic, allow_int)

    def __reduce__(self):
        # By name, as pickle and cloudpickle send a plain module: a function that calls ``tl.grad(...)``
        # failed to pickle ("cannot pickle '_CallableModule' object"), so tl.distributed could not ship it.
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _CallableModule
