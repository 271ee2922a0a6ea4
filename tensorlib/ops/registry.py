"""OpDef and the public op-registration API (``tl.ops.defop``).

An op is a name, its inputs' names, its attributes with defaults, a pure
shape/dtype rule and one kernel per backend.  Built-in ops are defined with
exactly the API users get, so adding an op needs no rebuild::

    >>> import numpy as np, tensorlib as tl
    >>> scale = tl.ops.defop("ScaleDoc", inputs=("x",), attrs={"alpha": 1.0},
    ...                      infer=lambda x, *, alpha: x)
    >>> @scale.kernel("numpy")
    ... def _scale(x, *, alpha):
    ...     return x * np.asarray(alpha, x.dtype)
    >>> tl.grad.register_gradient("ScaleDoc", lambda node, g: g * node.attrs["alpha"])
    >>> scale(tl.tensor([1.0, 2.0]), alpha=3.0).numpy().tolist()
    [3.0, 6.0]
"""

from __future__ import annotations

import functools
import inspect
import sys

from .. import dispatch
from ..tensor import TensorSpec

_ops: dict[str, "OpDef"] = {}


class OpDef:
    """One op type: inputs, attributes, shape rule and kernels per backend."""

    def __init__(
        self,
        name,
        inputs,
        attrs,
        infer,
        *,
        promote=None,
        differentiable=True,
        variadic=False,
        stateful=False,
        side_effect=False,
        float_valued=False,
        shape_only=False,
        elementwise=False,
        doc="",
    ):
        self.name = name
        self.input_names = tuple(inputs)
        self.defaults = dict(attrs or {})
        self.infer = infer
        self.promote = promote
        self.differentiable = differentiable  # the one record of it (tl.grad.not_differentiable sets it)
        self.has_gradient = False  # a gradient rule is registered (set by tl.grad.register_gradient)
        self.variadic = variadic
        self.stateful = stateful  # results depend on more than inputs and attrs (random draws)
        self.side_effect = side_effect  # runs for more than its result (a check that raises): never dead code
        self.float_valued = float_valued  # integer/bool input x is cast to float64 first, as in NumPy
        self.shape_only = shape_only  # reads only its inputs' shapes and dtypes, never their values
        self.elementwise = elementwise  # maps elements (broadcasting its inputs); tl.vmap batches it in one call
        self.kernels: dict = {}
        self.out_kernels: dict = {}  # backend name -> (kernel writing into out=, whether out may be an input)
        self.generic_kernel = None
        self.generic_takes_backend = False  # the generic kernel's first argument: the Backend, not its xp
        self.kernels_reason = ""  # why the kernels are on these backends only (said where one has none)
        self.defined_at = "<unknown>"  # file:line of the defop call
        self.__doc__ = doc

    def __call__(self, *inputs, **attrs):
        return dispatch.apply(self, inputs, attrs)

    def bind_attrs(self, attrs: dict) -> dict:
        unknown = [k for k in attrs if k not in self.defaults]
        if unknown:
            raise TypeError(
                f"{self.name}: unknown attribute {unknown[0]!r} (attributes: {', '.join(self.defaults) or 'none'})"
            )
        return {**self.defaults, **attrs}

    def kernel(self, backend: str):
        """Decorator: register ``fn(*arrays, **attrs) -> array(s)`` as this op's kernel on ``backend``."""

        def register(fn):
            self.kernels[backend] = fn
            return fn

        return register

    def out_kernel(self, backend: str, *, inplace: bool | tuple = False):
        """Decorator: register ``fn(*arrays, out=buffer, **attrs) -> buffer``, the kernel writing its one
        result into ``out`` (of the rule's shape and dtype, C-contiguous) on ``backend``.

        Optional: the graph executor then writes into buffers it keeps across runs instead of
        allocating; without one (or on another backend) the plain kernel allocates.  For a
        multi-output op ``out`` is a tuple with, per output, the array to write that result into or
        None (the kernel allocates that one), and ``fn`` returns the tuple of results.
        ``inplace=True`` (single-output ops) says ``out`` may be the memory of an input of the same shape and dtype that is
        not needed afterwards (elementwise kernels such as NumPy ufuncs); a tuple of input positions
        says which inputs it may be.

        >>> import numpy as np, tensorlib as tl
        >>> halve = tl.ops.defop("HalveDoc", inputs=("x",), infer=lambda x: x)
        >>> _ = halve.kernel("numpy")(lambda x: x * 0.5)
        >>> @halve.out_kernel("numpy", inplace=True)
        ... def _halve_into(x, *, out):
        ...     return np.multiply(x, 0.5, out=out)
        >>> tl.function(lambda x: halve(x) + 1.0)(tl.tensor([2.0, 4.0])).numpy().tolist()
        [2.0, 3.0]
        """

        def register(fn):
            self.out_kernels[backend] = (fn, inplace)
            return fn

        return register

    def generic(self, fn):
        """Decorator: a kernel ``fn(xp, *arrays, **attrs)`` written against any backend's namespace."""
        self.generic_kernel = fn
        return fn

    def per_backend(self, fn):
        """Decorator: a generic kernel ``fn(backend, *arrays, **attrs)`` that needs the Backend itself, not
        only its namespace (``backend.xp``): random draws use the backend's own generator."""
        self.generic_kernel = fn
        self.generic_takes_backend = True
        return fn

    def resolve_kernel(self, backend):
        """The kernel for ``backend``: a registered one, else the generic kernel bound to its ``xp``."""
        if backend.name in self.kernels:
            return self.kernels[backend.name]
        if self.generic_kernel is None:
            raise LookupError(
                f"{self.name}: no kernel for backend {backend.name!r} "
                f"({self.kernels_note()}); register one with "
                f"tl.ops.get({self.name!r}).kernel({backend.name!r})"
            )
        bound = functools.partial(self.generic_kernel, backend if self.generic_takes_backend else backend.xp)
        self.kernels[backend.name] = bound
        return bound

    def kernels_note(self) -> str:
        """Where this op has kernels: said when a backend has none (tensors never go through the host)."""
        have = sorted(name for name, fn in self.kernels.items() if not isinstance(fn, functools.partial))
        if not have:
            return "kernels: none"
        only = "NumPy only" if have == ["numpy"] else f"{', '.join(have)} only"
        because = f" (needs {self.kernels_reason})" if self.kernels_reason else ""
        return f"kernels: {', '.join(have)}; it runs on {only}{because} and never copies through the host"

    def kernel_source(self, backend_name: str):
        """(qualified function name, ``file:line``) of the kernel that runs on ``backend_name``."""
        fn = self.kernels.get(backend_name)
        if fn is None and self.generic_kernel is not None:
            fn = self.generic_kernel
        if fn is None:
            return None
        fn = inspect.unwrap(fn.func if isinstance(fn, functools.partial) else fn)
        name = f"{getattr(fn, '__module__', None) or type(fn).__module__}.{getattr(fn, '__qualname__', fn.__name__)}"
        if not inspect.isfunction(fn) and not inspect.ismethod(fn):
            # A compiled callable such as a NumPy ufunc: the kernel is its C loop.
            return name, f"compiled ({type(fn).__name__}, no Python source)"
        try:
            where = f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
        except (OSError, TypeError):
            where = "<unknown>"
        return name, where

    def __repr__(self):
        return f"<OpDef {self.name}({', '.join(self.input_names)}) attrs={self.defaults}>"


def defop(
    name: str,
    inputs=("x",),
    attrs=None,
    infer=None,
    *,
    promote=None,
    differentiable=True,
    variadic=False,
    stateful=False,
    side_effect=False,
    float_valued=False,
    shape_only=False,
    elementwise=False,
    doc="",
) -> OpDef:
    """Define and register an op type.

    ``infer(*input_specs, **attrs)`` returns a :class:`TensorSpec` (or a tuple
    for several outputs) and must be pure.  ``promote`` lists the input
    positions cast to one common dtype (NumPy promotion, weak scalars).
    ``variadic=True`` makes the op take any number of inputs (``concat``);
    gradient functions of a variadic op receive ``index=`` the input position.
    ``differentiable=False`` declares it not differentiable (``argmax``).
    ``stateful=True`` marks an op whose results are not a function of its
    inputs and attributes alone (random draws): graph passes never fold or merge it.
    ``side_effect=True`` marks an op run for more than its result (a check that
    raises, ``CheckNumerics``): dead-node elimination keeps it, and the branch or
    loop body holding it, though nothing reads its result (eagerly it runs anyway).
    ``float_valued=True`` casts an integer or bool first input (with ``promote``:
    the promoted inputs, once promoted to an integer or bool dtype) to float64
    before the rule and kernel run, NumPy's rule for ``log``, ``exp``, ``hypot``...
    ``shape_only=True`` marks an op that reads only its inputs' shapes and
    dtypes (``zeros_like``): graph passes fold it when the shapes are known.
    ``elementwise=True`` declares that each result element is computed from the
    elements at its position in the inputs (NumPy broadcasting between them) and
    that no attribute names an axis or a shape: ``tl.vmap`` then computes the op
    on the whole batch in one call instead of once per element.
    """
    if name in _ops:
        raise ValueError(f"op type {name!r} is already defined ({_ops[name]!r})")
    if infer is None:
        raise TypeError(f"defop({name!r}): a shape/dtype rule `infer` is required")
    op = OpDef(
        name,
        inputs,
        attrs,
        infer,
        promote=promote,
        differentiable=differentiable,
        variadic=variadic,
        stateful=stateful,
        side_effect=side_effect,
        float_valued=float_valued,
        shape_only=shape_only,
        elementwise=elementwise,
        doc=doc,
    )
    caller = sys._getframe(1)
    op.defined_at = f"{caller.f_code.co_filename}:{caller.f_lineno}"
    _ops[name] = op
    return op


def get(name: str) -> OpDef:
    try:
        return _ops[name]
    except KeyError:
        raise LookupError(f"no op type {name!r} is defined") from None


def all_ops() -> dict[str, OpDef]:
    return dict(_ops)


def spec(shape, dtype) -> TensorSpec:
    """Shape rules return this: a TensorSpec without validation overhead."""
    s = object.__new__(TensorSpec)
    s.shape = tuple(shape)
    s.dtype = dtype
    return s
