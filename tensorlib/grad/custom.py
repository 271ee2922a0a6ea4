"""custom_gradient, JAX's custom_vjp and custom_jvp, and remat (stop_gradient, an op, is defined with the other ops in :mod:`tensorlib.ops.math`)."""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import threading
import weakref

import numpy as np

from .. import dispatch
from ..ops.math import identity, zeros_like
from ..ops.math import stop_gradient  # noqa: F401  (tensorlib.grad.custom.stop_gradient, as before)
from ..ops import registry as registry_ops
from ..ops.registry import defop, spec
from ..tensor import Tensor, Variable, make
from . import registry
from .registry import Refused, once_per_pass
from .backprop import rule_site
from .. import tree
from .tape import GradientTape
from .checkpoint_policies import _optimization_barrier


def _custom_infer(*inputs, grad_fn, n_inputs, n_variables):
    outs = inputs[n_inputs + n_variables :]
    return tuple(spec(o.shape, o.dtype) for o in outs)


_custom = defop(
    "CustomGradient",
    inputs=("inputs",),
    attrs={"grad_fn": None, "n_inputs": 0, "n_variables": 0},
    infer=_custom_infer,
    variadic=True,
    doc="Passes its last outputs through; its gradient is the user's grad_fn.",
)


@_custom.generic
def _custom_kernel(xp, *arrays, grad_fn, n_inputs, n_variables):
    return tuple(arrays[n_inputs + n_variables :])


def _call_grad_fn(node, out_grads) -> list:
    """The user's gradients for the tensor inputs, then for the variables ``f`` read."""
    n, n_vars = node.attrs["n_inputs"], node.attrs["n_variables"]
    fn = node.attrs["grad_fn"]
    if n_vars:
        variables = list(node.inputs[n : n + n_vars])
        try:
            returned = fn(*out_grads, variables=variables)
        except TypeError as e:
            if "variables" not in str(e):
                raise
            raise TypeError(
                f"custom_gradient: the function reads {n_vars} trainable Variable(s) ({_described(variables)}), so "
                "its grad_fn must accept variables= and return (input_gradients, "
                f"variable_gradients); grad_fn defined at {rule_site(fn)}"
            ) from None
        if not (isinstance(returned, (list, tuple)) and len(returned) == 2):
            raise TypeError(
                f"custom_gradient: grad_fn called with variables= must return (input_gradients, variable_gradients), "
                f"got {_what(returned)}; grad_fn defined at {rule_site(fn)}"
            )
        result, var_grads = returned
        var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        if len(var_grads) != n_vars:
            raise ValueError(
                f"custom_gradient: grad_fn returned {len(var_grads)} variable gradients for {n_vars} variables "
                f"({_described(variables)}); grad_fn defined at {rule_site(fn)}"
            )
    else:
        result, var_grads = fn(*out_grads), []
    result = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(result) != n:
        # Count the user's: the refusals that stand for the closed-over tensors (the last inputs) are not theirs.
        closures = sum(1 for g in result if g.__class__ is Refused)
        raise ValueError(
            f"custom_gradient: grad_fn returned {len(result) - closures} gradients for {n - closures} tensor inputs "
            f"({_described(node.inputs[: n - closures])}); grad_fn defined at {rule_site(fn)}"
        )
    return result + var_grads


def _described(tensors) -> str:
    return ", ".join(f"shape {tuple(t.shape)} {t.dtype}" for t in tensors)


def _what(value) -> str:
    return (
        f"a {type(value).__name__} of length {len(value)}" if isinstance(value, (list, tuple)) else type(value).__name__
    )


def _custom_gradient_rule(node, *out_grads, index):
    if index >= node.attrs["n_inputs"] + node.attrs["n_variables"]:
        return None
    g = once_per_pass(node, out_grads, lambda: _call_grad_fn(node, out_grads))[index]
    if g.__class__ is Refused:
        raise TypeError(g.message)
    if g is not None and not isinstance(g, Tensor):
        g = dispatch.to_tensor(g, node.inputs[index].backend, node.inputs[index].dtype)
    return g


registry.register_gradient("CustomGradient", _custom_gradient_rule)


def _outputs_and_grad_fn(f, result):
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        got = (
            f"a tuple of {len(result)}"
            if isinstance(result, tuple)
            else f"{type(result).__name__}" + (f" of shape {tuple(result.shape)}" if hasattr(result, "shape") else "")
        )
        raise TypeError(
            f"custom_gradient: {getattr(f, '__qualname__', f)} must return (outputs, grad_fn) with "
            f"a callable grad_fn, got {got}"
        )
    return result


class _Reachable(set):
    """The ids a tape reached, seen together with those that the recording tapes differentiate (all of
    them while tracing: the graph may be differentiated later)."""

    __slots__ = ("outer", "everything")

    def __init__(self, outer, everything):
        super().__init__()
        self.outer, self.everything = tuple(outer), everything

    def __contains__(self, key) -> bool:
        return self.everything or set.__contains__(self, key) or self.outside(key)

    def outside(self, key) -> bool:
        return self.everything or any(key in watched for watched in self.outer)


class _Reads(GradientTape):
    """A tape around a custom-gradient function's run that records no one's gradient: it learns which
    trainable Variables the function reads and which tensors it closes over that the recording ``tapes``
    differentiate (a closure ``lambda u: u * a`` over the ``a`` of ``tl.grad``): their gradients flow
    through no input of the op, so they were a silent zero."""

    def __init__(self, tapes, tracing):
        super().__init__()
        self._watched = _Reachable([tape._watched for tape in tapes], tracing)

    def _watch_variable(self, var):
        if not set.__contains__(self._watched, var._id):
            set.add(self._watched, var._id)
            self._variables.append(var)

    def closed_over(self, inputs, variables) -> list:
        """The differentiated tensors the recorded ops read that are neither ``inputs``, ``variables``, nor
        made by the function."""
        reached = self._watched
        if not (reached.outer or reached.everything):
            return []
        skip = {t._id for t in inputs} | {v._id for v in variables}
        skip.update(o._id for node in self._nodes for o in node.outputs)
        found = {}
        for node in self._nodes:
            for t in node.inputs:
                if t._id not in skip and t._id not in found and t.dtype.kind in "fc" and reached.outside(t._id):
                    found[t._id] = t
        return list(found.values())


def _closure_refusal(what, name, tensor) -> str:
    return (
        f"{what}: {name} closes over a tensor (shape {tuple(tensor.shape)} {tensor.dtype}) that a gradient is "
        "asked for through, but its rule gives gradients for its arguments only (JAX refuses such closures); "
        "pass the tensor as an argument"
    )


def _refusing(grad_fn, messages):
    """``grad_fn`` giving, after its gradients, a refusal for each of the last ``len(messages)`` tensor inputs
    (the tensors at a custom_vjp's nondiff_argnums, those a function closes over)."""
    if not messages:
        return grad_fn

    @functools.wraps(grad_fn)
    def with_refusals(*out_grads, **variables):
        returned = grad_fn(*out_grads, **variables)
        if variables and not (isinstance(returned, (list, tuple)) and len(returned) == 2):
            return returned  # not (input_gradients, variable_gradients): _call_grad_fn says so
        result, var_grads = returned if variables else (returned, None)
        result = (list(result) if isinstance(result, (list, tuple)) else [result]) + [Refused(m) for m in messages]
        return (result, var_grads) if variables else result

    return with_refusals


def _none_leaf(x) -> bool:
    return x is None


_TENSOR = "tensor"


def _tensor_leaves(args):
    """The tensors among the positional arguments, nested ones too (a dict of tensors gets its gradient), and
    per argument ``_TENSOR``, None (no tensors in it) or ``(its treedef, where its tensors are)``."""
    tensors, layout = [], []
    for a in args:
        if isinstance(a, Tensor):
            tensors.append(a)
            layout.append(_TENSOR)
            continue
        leaves, treedef = tree.flatten(a, is_leaf=_none_leaf)
        where = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]
        tensors += [leaves[i] for i in where]
        layout.append((treedef, where) if where else None)
    return tensors, layout


def _flattening(layout):
    """A decorator making ``grad_fn`` return one gradient per tensor leaf: for an argument that nests
    tensors, ``grad_fn`` returns a gradient of that argument's structure (None leaves for no gradient)."""
    holding = [lay for lay in layout if lay is not None]

    def decorate(grad_fn):
        @functools.wraps(grad_fn)
        def flat(*out_grads, **variables):
            returned = grad_fn(*out_grads, **variables)
            result, var_grads = returned if variables else (returned, None)
            # One argument: its gradient may come bare, in the argument's structure (a list for a list).
            one = len(holding) == 1 and not (isinstance(result, (list, tuple)) and len(result) == 1)
            result = [result] if one or not isinstance(result, (list, tuple)) else list(result)
            if len(result) != len(holding):
                raise ValueError(
                    f"custom_gradient: grad_fn returned {len(result)} gradients for {len(holding)} positional "
                    "arguments holding tensors; an argument that nests tensors gets one gradient of its structure "
                    f"(grad_fn defined at {rule_site(grad_fn)})"
                )
            grads = []
            for g, lay in zip(result, holding):
                if lay is _TENSOR:
                    grads.append(g)
                    continue
                treedef, where = lay
                # Dicts by key: a gradient {"b": gb, "a": ga} for the argument {"a": .., "b": ..} gave ga to b.
                leaves, got = (
                    ([None] * treedef.num_leaves, None) if g is None else tree.flatten_as(treedef, g, _none_leaf)
                )
                if leaves is None:
                    raise ValueError(
                        f"custom_gradient: grad_fn returned a gradient with {got.num_leaves} leaves for an argument "
                        f"with {treedef.num_leaves} ({got!r} for {treedef!r}); give it the argument's structure "
                        f"(grad_fn defined at {rule_site(grad_fn)})"
                    )
                grads += [leaves[i] for i in where]
            return (grads, var_grads) if variables else grads

        return flat

    return decorate


def _no_watched_keywords(f, kwargs, tapes):
    """A tensor given by keyword is no input of the op: if a tape differentiates it, that is an error, not the
    silent zero gradient it would get (Variables are found by what ``f`` reads, so they are fine)."""
    for name, value in kwargs.items():
        for leaf in tree.leaves(value):
            if leaf.__class__ is Tensor and any(leaf._id in getattr(tape, "_watched", ()) for tape in tapes):
                raise TypeError(
                    f"custom_gradient: {getattr(f, '__qualname__', f)} got the differentiated tensor "
                    f"{name}= (shape {tuple(leaf.shape)} {leaf.dtype}) by keyword; pass it positionally so "
                    "that grad_fn gives its gradient"
                )


def custom_gradient(f):
    """Give ``f`` its own gradient: ``f`` returns ``(y, grad_fn)`` and ``grad_fn(dy)``
    returns one gradient per Tensor positional argument.  An argument that nests tensors (a list or
    dict of them) gets one gradient of its structure, as in JAX's ``custom_vjp``.

    If ``f`` reads trainable Variables, ``grad_fn(dy, variables=...)`` is
    given them and returns ``(input_gradients, variable_gradients)``, as in
    TensorFlow.  Works in eager and traced code; when ``grad_fn`` is written
    with tensorlib ops it is itself differentiable.  A straight-through
    estimator:

    >>> import tensorlib as tl
    >>> @tl.custom_gradient
    ... def round_ste(x):
    ...     return tl.round(x), lambda dy: dy
    >>> float(tl.grad(lambda x: round_ste(x) * 2.0)(1.3))
    2.0
    """

    return _with_gradient(f)


def _with_gradient(f, closures_as_variables: bool = False, what: str = "custom_gradient"):
    """:func:`custom_gradient`'s wrapper.  The tensors ``f`` closes over that a recording tape differentiates
    are inputs of the op too: with ``closures_as_variables`` (remat) ``grad_fn`` gets them with the Variables
    and gives their gradients; else their gradient is refused (``grad_fn`` cannot give it), never a zero."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        st = dispatch.current_state()
        if not st.tapes and not st.modes:  # traced graphs keep the rule: they may be differentiated later
            y, _ = _outputs_and_grad_fn(f, f(*args, **kwargs))
            return y
        tensor_args, layout = _tensor_leaves(args)
        _no_watched_keywords(f, kwargs, st.tapes)
        if any(lay not in (None, _TENSOR) for lay in layout):
            grad_fn_of = _flattening(layout)
        # f's own ops stay off the tapes, unless the gradient may be differentiated again: then a value that
        # grad_fn closes over (``y = exp(x); grad_fn = lambda dy: dy * y``) must stay a function of the inputs,
        # or the second derivative through it is a silent zero (JAX and PyTorch differentiate through it).
        higher_order = len(st.tapes) > 1 or any(getattr(tape, "_persistent", False) for tape in st.tapes)
        reads = _Reads(st.tapes, tracing=bool(st.modes))
        with contextlib.nullcontext() if higher_order else dispatch.tapes_paused():
            with reads:
                y, grad_fn = _outputs_and_grad_fn(f, f(*args, **kwargs))
        if any(lay not in (None, _TENSOR) for lay in layout):
            grad_fn = grad_fn_of(grad_fn)
        variables = [v for v in reads.watched_variables() if not any(v is a for a in tensor_args)]
        closed_over = reads.closed_over(tensor_args, variables)
        if closures_as_variables:
            variables += closed_over
        elif closed_over:
            name = getattr(f, "__qualname__", f)
            grad_fn = _refusing(grad_fn, [_closure_refusal(what, name, t) for t in closed_over])
            tensor_args = tensor_args + closed_over
        outs, out_def = tree.flatten(y)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(f"{what}: {f.__name__} must return tensors, got {type(o).__name__}")
        results = _custom(
            *tensor_args, *variables, *outs, grad_fn=grad_fn, n_inputs=len(tensor_args), n_variables=len(variables)
        )
        return tree.unflatten(out_def, results)

    return wrapper


class _CustomDerivative:
    """What ``custom_vjp`` and ``custom_jvp`` share: the arguments split at ``nondiff_argnums``, a
    :func:`custom_gradient` whose ``grad_fn`` asks the subclass for the cotangents, and the rule allowed to
    call the function itself (JAX's examples do), which then just runs it."""

    kind = ""

    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise TypeError(f"{self.kind}: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._inside_rule = threading.local()
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None

    @contextlib.contextmanager
    def _rule_running(self):
        self._inside_rule.active = True
        try:
            yield
        finally:
            self._inside_rule.active = False

    def _name(self) -> str:
        return getattr(self.fun, "__qualname__", "the function")

    def __call__(self, *args, **kwargs):
        if not self._has_rule():
            raise TypeError(f"{self.kind}: {self._name()} has no rule; call {self._name()}.{self._define} first")
        if getattr(self._inside_rule, "active", False):
            return self.fun(*args, **kwargs)
        args = self._positional(args, kwargs)
        fixed = self._fixed_positions(len(args))
        positions = [i for i in range(len(args)) if i not in fixed]
        constants = [args[i] for i in fixed]
        # The tensors at nondiff_argnums are inputs of the op too, whose gradient is refused, not a silent
        # zero: differentiated through them (``grad(lambda n: f(n, x))``), the result ignored them.
        held = [leaf for c in constants for leaf in tree.leaves(c) if isinstance(leaf, Tensor)]

        perturbed = self._perturbed([args[i] for i in positions])

        def with_(differentiated):
            full = list(args)
            for i, a in zip(positions, differentiated):
                full[i] = a
            return full

        def run(*inputs):
            differentiated = inputs[: len(positions)]
            with self._rule_running():
                outputs, residuals = self._forward(with_(differentiated))
            leaves, treedef = tree.flatten(outputs)

            def grad_fn(*cotangents, variables=None):
                if variables is not None:
                    raise TypeError(
                        f"{self.kind}: {self._name()} reads trainable Variables ({_described(variables)}), whose "
                        "gradients its rule cannot give; pass them as arguments"
                    )
                filled = [zeros_like(o) if c is None else c for c, o in zip(cotangents, leaves)]
                cotangents = tree.unflatten(treedef, filled)
                returned = self._cotangents(constants, differentiated, residuals, cotangents, perturbed)
                return [g for g, a in zip(returned, differentiated) if not _holds_no_tensor(a)]

            grad_fn.__wrapped__ = self._user_rule()  # errors about the gradients name the user's rule's file:line
            return outputs, _refusing(grad_fn, [self._refusal(t, fixed, constants) for t in held])

        run.__name__, run.__qualname__ = getattr(self.fun, "__name__", "the function"), self._name()
        return _with_gradient(run, what=self.kind)(*(args[i] for i in positions), *held)

    def _perturbed(self, differentiated):
        """Per differentiated argument, per leaf, whether a gradient may be asked through it (only custom_jvp's
        ``symbolic_zeros`` asks); None: all may."""
        return None

    def _positional(self, args, kwargs) -> tuple:
        """The arguments as positional ones, defaults filled in (JAX's ``resolve_kwargs``): the rules take
        them positionally, and ``nondiff_argnums`` may name an argument given by keyword or left to its default."""
        signature = self._signature
        if signature is None:  # no signature (a builtin): positional arguments only
            if kwargs:
                raise TypeError(f"{self.kind}: {self._name()} has no signature to place keyword arguments")
            return args
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.kind}: the arguments do not fit {self._name()}{signature}: {e}") from None
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(
                f"{self.kind}: {self._name()} takes keyword-only arguments {sorted(bound.kwargs)}, which its rules, "
                "called positionally, cannot take; make them positional"
            )
        return bound.args

    def _fixed_positions(self, nargs) -> list:
        """The positions of ``nondiff_argnums`` among ``nargs`` arguments (negative ones from the end)."""
        for i in self.nondiff_argnums:
            if not -nargs <= i < nargs:
                raise ValueError(
                    f"{self.kind}: nondiff_argnums {self.nondiff_argnums} out of range for {self._name()} called "
                    f"with {nargs} positional arguments"
                )
        return sorted({i % nargs for i in self.nondiff_argnums})

    def _refusal(self, tensor, fixed, constants) -> str:
        where = next(i for i, c in zip(fixed, constants) if any(leaf is tensor for leaf in tree.leaves(c)))
        return (
            f"{self.kind}: argument {where} of {self._name()} (shape {tuple(tensor.shape)} {tensor.dtype}) is at "
            f"nondiff_argnums {self.nondiff_argnums}, but a gradient was asked for through it (JAX refuses "
            "tensors there); make it a differentiated argument whose cotangent the rule gives"
        )


class custom_vjp(_CustomDerivative):
    """JAX's ``jax.custom_vjp``: ``fun`` with a vector-Jacobian product of its own.

    ``f.defvjp(fwd, bwd)`` gives it: ``fwd(*args)`` returns ``(outputs, residuals)`` (anything ``bwd``
    needs), and ``bwd(residuals, output_cotangents)`` returns a tuple with one cotangent per argument, each
    of its argument's structure (None for no gradient); the arguments at ``nondiff_argnums`` get none,
    and come first in ``bwd``'s arguments.  Outputs may be nested structures; their cotangents come in the
    same structure, zeros for an output that gets no gradient.  Built on :func:`custom_gradient`, so it
    works eagerly, traced and under ``tl.vmap``, and ``bwd`` written with tensorlib ops is differentiable.

    >>> import tensorlib as tl
    >>> @tl.custom_vjp
    ... def clip_gradient(x, limit):
    ...     return x
    >>> def fwd(x, limit):
    ...     return x, limit
    >>> def bwd(limit, g):
    ...     return tl.clip(g, -limit, limit), None
    >>> clip_gradient.defvjp(fwd, bwd)
    >>> float(tl.grad(lambda x: 10.0 * clip_gradient(x, 2.0))(tl.tensor(1.0)))
    2.0
    """

    kind, _define = "custom_vjp", "defvjp(fwd, bwd)"
    fwd = bwd = None

    def defvjp(self, fwd, bwd) -> None:
        if not (callable(fwd) and callable(bwd)):
            raise TypeError(f"custom_vjp: defvjp takes two functions, fwd and bwd, got {fwd!r:.40} and {bwd!r:.40}")
        self.fwd, self.bwd = fwd, bwd

    def _has_rule(self) -> bool:
        return self.fwd is not None

    def _user_rule(self):
        return self.bwd

    def _forward(self, args):
        returned = self.fwd(*args)
        if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
            raise TypeError(
                f"custom_vjp: fwd of {self._name()} must return a pair (outputs, residuals), got {_what(returned)}; "
                f"fwd defined at {rule_site(self.fwd)}"
            )
        return returned

    def _cotangents(self, constants, differentiated, residuals, g, perturbed=None) -> list:
        returned = self.bwd(*constants, residuals, g)
        if not isinstance(returned, (tuple, list)) or len(returned) != len(differentiated):
            raise TypeError(
                f"custom_vjp: bwd of {self._name()} must return a tuple with one cotangent per differentiated "
                f"argument ({len(differentiated)}), got {_what(returned)}; bwd defined at {rule_site(self.bwd)}"
            )
        return list(returned)


class custom_jvp(_CustomDerivative):
    """JAX's ``jax.custom_jvp``: ``fun`` with a Jacobian-vector product of its own.

    ``f.defjvp(rule)`` gives it: ``rule(primals, tangents)`` (the arguments at ``nondiff_argnums`` first)
    returns ``(outputs, output_tangents)``, linear in ``tangents``.  Reverse mode transposes that linear map
    (by a vjp of it, as JAX does), so ``tl.grad``, tapes and ``tl.jvp`` all follow the rule; a rule
    written with tensorlib ops is differentiable again.  An argument without tensors gets a zero tangent.
    ``symbolic_zeros=True`` (JAX's keyword, here or on :meth:`defjvp`) gives the rule a :class:`SymbolicZero`
    instead of a zero tensor for each input that no gradient is asked through (eagerly; traced or under
    ``tl.vmap``, where that is not known when the function is called, every float tensor gets a tangent).

    >>> import tensorlib as tl
    >>> @tl.custom_jvp
    ... def log1pexp(x):
    ...     return tl.log1p(tl.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * tl.sigmoid(x)
    >>> float(tl.grad(log1pexp)(tl.tensor(800.0)))  # exp(800) overflows; the rule's sigmoid does not
    1.0
    """

    kind, _define = "custom_jvp", "defjvp(rule)"
    jvp = None

    def __init__(self, fun, nondiff_argnums=(), symbolic_zeros: bool = False):
        super().__init__(fun, nondiff_argnums)
        self.symbolic_zeros = _checked_flag(symbolic_zeros, "symbolic_zeros")

    def defjvp(self, jvp, symbolic_zeros: bool | None = None):
        """Give the rule ``jvp(primals, tangents) -> (outputs, output_tangents)``; ``symbolic_zeros=True`` (JAX's
        keyword, here or on ``custom_jvp``) passes a :class:`SymbolicZero` for each input that no gradient is
        asked through (its ``shape`` and ``dtype`` say whose), and the rule may return one for an output tangent
        that is zero.  A rule then skips the work for inputs held fixed:

        >>> import tensorlib as tl
        >>> @tl.custom_jvp
        ... def g(x, y):
        ...     return tl.sin(x) * y
        >>> def g_jvp(primals, tangents):
        ...     (x, y), (tx, ty) = primals, tangents
        ...     out = g(x, y)
        ...     if isinstance(ty, tl.SymbolicZero):  # y is held fixed: no sin(x) * ty to compute
        ...         return out, tl.cos(x) * y * tx
        ...     return out, tl.cos(x) * y * tx + tl.sin(x) * ty
        >>> _ = g.defjvp(g_jvp, symbolic_zeros=True)
        >>> round(float(tl.grad(g)(tl.tensor(1.0), tl.tensor(2.0))), 6)
        1.080605
        """
        if not callable(jvp):
            raise TypeError(f"custom_jvp: defjvp takes a function, got {jvp!r:.40}")
        if symbolic_zeros is not None:
            self.symbolic_zeros = _checked_flag(symbolic_zeros, "symbolic_zeros")
        self.jvp = jvp
        return jvp

    def _perturbed(self, differentiated):
        if not self.symbolic_zeros:
            return None
        st = dispatch.current_state()
        if st.modes:  # traced or mapped: which tensors a gradient goes through is not known here
            return None
        tapes = st.tapes

        def moves(leaf):
            if not isinstance(leaf, Tensor) or leaf.dtype.kind not in "fc":
                return False
            if isinstance(leaf, Variable) and leaf.trainable:  # a tape watches it when the op reads it
                return bool(tapes)
            return any(leaf._id in tape._watched for tape in tapes)

        return [[moves(leaf) for leaf in tree.leaves(a)] for a in differentiated]

    def defjvps(self, *jvps) -> None:
        """JAX's ``defjvps``: one rule per argument, ``jvp_i(tangent_i, output, *primals)`` giving that
        argument's part of the output tangent (None: the output does not depend on it); the parts are summed.

        >>> import tensorlib as tl
        >>> @tl.custom_jvp
        ... def f(x, y):
        ...     return tl.sin(x) * y
        >>> f.defjvps(lambda t, out, x, y: tl.cos(x) * y * t, lambda t, out, x, y: tl.sin(x) * t)
        >>> [round(float(g), 6) for g in tl.grad(f, argnums=(0, 1))(tl.tensor(2.0), tl.tensor(3.0))]
        [-1.248441, 0.909297]
        """
        if self.nondiff_argnums:
            raise TypeError(f"custom_jvp: {self._name()} has nondiff_argnums; defjvps cannot take them, use defjvp")
        bad = [j for j in jvps if j is not None and not callable(j)]
        if bad:
            raise TypeError(f"custom_jvp: defjvps takes functions or None, got {bad[0]!r:.40}")

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise TypeError(
                    f"custom_jvp: {self._name()} was given {len(jvps)} rules by defjvps for {len(primals)} arguments"
                )
            out = self(*primals)
            parts = [
                rule(t, out, *primals)
                for rule, t in zip(jvps, tangents)
                if rule is not None and not isinstance(t, SymbolicZero)
            ]
            if not parts:
                return out, tree.map(zeros_like, out)
            return out, tree.map(lambda *leaves: functools.reduce(lambda a, b: a + b, leaves), *parts)

        self.jvp = jvp

    def _has_rule(self) -> bool:
        return self.jvp is not None

    def _user_rule(self):
        return self.jvp

    def _forward(self, args):
        return self.fun(*args), None

    def _cotangents(self, constants, differentiated, residuals, g, perturbed=None) -> list:
        from ..ops import creation
        from .api import vjp

        # Per argument its leaves; the float tensors among them have tangents to transpose for.  An integer or
        # bool tensor (indices, a mask) has a fixed zero tangent of its shape (JAX's float0), as an argument
        # without tensors has a zero; the transposition's vjp takes float primals only (an index argument
        # was "tl.vjp: cannot differentiate with respect to primal 1 of dtype int64").
        layouts = [tree.flatten(a) for a in differentiated]
        slots = [
            (k, i)
            for k, (leaves, _) in enumerate(layouts)
            if not _holds_no_tensor(differentiated[k])
            for i, leaf in enumerate(leaves)
            if isinstance(leaf, Tensor) and leaf.dtype.kind in "fc" and (perturbed is None or perturbed[k][i])
        ]
        # symbolic_zeros: a SymbolicZero for each leaf held fixed (not perturbed), as JAX passes.
        no_tangent = SymbolicZero.of if self.symbolic_zeros else _zero_tangent

        def tangents_out(*tangents):
            full = [[no_tangent(leaf) for leaf in leaves] for leaves, _ in layouts]
            for (k, i), t in zip(slots, tangents):
                full[k][i] = t
            given = tuple(
                creation.zeros((), dtype="float64")
                if _holds_no_tensor(a) and not self.symbolic_zeros
                else tree.unflatten(treedef, leaves)
                for a, (_, treedef), leaves in zip(differentiated, layouts, full)
            )
            with self._rule_running():
                returned = self.jvp(*constants, tuple(differentiated), given)
            if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
                raise TypeError(
                    f"custom_jvp: the rule of {self._name()} must return (outputs, output_tangents), got "
                    f"{_what(returned)}; rule defined at {rule_site(self.jvp)}"
                )
            return self._checked_tangents(*returned)

        grads = [[None] * len(leaves) for leaves, _ in layouts]
        if slots:
            zeros = [zeros_like(layouts[k][0][i]) for k, i in slots]
            _, transposed = vjp(tangents_out, *zeros)  # the rule is linear in the tangents: its vjp is the transpose
            for (k, i), c in zip(slots, transposed(g)):
                grads[k][i] = c
        return [
            None if _holds_no_tensor(a) else tree.unflatten(treedef, grads[k])
            for k, (a, (_, treedef)) in enumerate(zip(differentiated, layouts))
        ]

    def _checked_tangents(self, outputs, tangents):
        """The rule's output tangents, of its outputs' structure and shapes (else its transpose failed in
        vjp_fn, naming neither the function nor the rule)."""
        out_leaves, out_def = tree.flatten(outputs)
        leaves, got = tree.flatten_as(out_def, tangents)
        problem = None if leaves is not None else f"output tangents of structure {got!r} for outputs {out_def!r}"
        for k, (t, o) in enumerate(zip(leaves or (), out_leaves)):
            shape, want = tuple(getattr(t, "shape", ())), tuple(getattr(o, "shape", ()))
            if shape != want:
                problem = f"an output tangent of shape {shape} for output {k} of shape {want}"
                break
        if problem is not None:
            raise ValueError(
                f"custom_jvp: the rule of {self._name()} returned {problem}; rule defined at {rule_site(self.jvp)}"
            )
        if any(isinstance(t, SymbolicZero) for t in leaves):
            return tree.unflatten(
                out_def, [zeros_like(o) if isinstance(t, SymbolicZero) else t for t, o in zip(leaves, out_leaves)]
            )
        return tangents


class SymbolicZero:
    """A zero tangent known to be zero (JAX's ``jax.custom_derivatives.SymbolicZero``): what a
    ``custom_jvp(..., symbolic_zeros=True)`` rule gets for an input that no gradient is asked through, and may
    return for an output tangent that is zero.  It is not a tensor (tensorlib ops refuse it); ``shape`` and
    ``dtype`` are those of the primal it stands for.

    >>> import tensorlib as tl
    >>> tl.SymbolicZero.from_primal_value(tl.ones((2, 3)))
    SymbolicZero(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @staticmethod
    def from_primal_value(value) -> "SymbolicZero":
        """The symbolic zero tangent of ``value`` (a tensor, array or number)."""
        a = value if isinstance(value, (Tensor, np.ndarray)) else np.asarray(value)
        return SymbolicZero(a.shape, a.dtype)

    @staticmethod
    def of(leaf):
        """``from_primal_value`` for a tensor, array or number; None for anything else (a string, None)."""
        numeric = isinstance(leaf, (Tensor, np.ndarray, np.generic, int, float, complex)) and not isinstance(leaf, bool)
        return SymbolicZero.from_primal_value(leaf) if numeric else None

    def __repr__(self) -> str:
        return f"SymbolicZero(shape={self.shape}, dtype={self.dtype})"


def _checked_flag(value, name) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"custom_jvp: {name} must be a bool, got {value!r:.60}")
    return value


def _zero_tangent(leaf):
    """A leaf's fixed zero tangent: of its shape for a tensor, array or number; None for anything else."""
    numeric = isinstance(leaf, (Tensor, np.ndarray, np.generic, int, float)) and not isinstance(leaf, bool)
    return zeros_like(leaf) if numeric else None


def _holds_no_tensor(value) -> bool:
    """An argument without tensors, which ``custom_gradient`` gives no gradient slot."""
    return not isinstance(value, Tensor) and not any(isinstance(leaf, Tensor) for leaf in tree.leaves(value))


def remat(f=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """``f`` whose intermediates are not kept for its gradient: the backward pass runs ``f`` again
    (JAX's ``jax.checkpoint``/``jax.remat``, TensorFlow's ``tf.recompute_grad``; ``tl.checkpoint`` is the
    module that saves variables).  Gradients are those of ``f``, to every order, for the tensors in
    its arguments (nested ones too, keyword ones too) and the trainable Variables it reads.

    JAX's keywords are taken, so its code runs unchanged: ``static_argnums`` (positions whose values are
    Python values, checked hashable as in JAX; every non-tensor argument is static here anyway),
    ``prevent_cse`` (a bool) and ``policy``: which op results the forward pass keeps, so that the backward
    pass's run of ``f`` takes them instead of running those ops again (their kernels do not run; the ops
    between them do).  ``policy`` is one of :mod:`tl.checkpoint_policies <tensorlib.grad.checkpoint_policies>`
    (``dots_saveable``, ``save_only_these_names("h")`` with :func:`tl.checkpoint_name
    <tensorlib.grad.checkpoint_policies.checkpoint_name>`, ...) or a function ``policy(op_type, inputs, attrs)
    -> bool`` asked per op (JAX passes the primitive and its params); None keeps nothing (JAX's
    ``nothing_saveable``) and ``everything_saveable`` keeps all, as without remat.  Values and gradients are the
    same whatever the policy; only what is kept and what runs again differ.  ``tl.remat(static_argnums=1)``
    with no ``f`` is a decorator.

    Random draws repeat: the recomputation starts the global generator where the forward pass
    started it, and seeded ops draw the same numbers anyway.  A draw that cannot be repeated (from a
    ``tl.random.Generator`` object) or any other state that changed between the two runs makes
    the recomputed outputs differ from the forward ones, and that is a RuntimeError naming ``f``,
    never a gradient of other values.  Under nested or persistent tapes ``f``'s own ops are
    recorded too (as for any custom_gradient that may be differentiated again), so the memory is
    saved under one non-persistent tape (``tl.grad``, ``tl.value_and_grad``).

    Under ``tl.function`` (a gradient taken inside the traced function) the backward pass's nodes compute again
    what the policy does not keep, as in JAX: they read ``f``'s inputs and the kept values through
    ``OptimizationBarrier`` nodes, which the graph passes do not see through, so CSE cannot merge the
    recomputation back into the forward pass, and the memory plan frees the forward pass's intermediates as soon
    as the forward pass is done with them (``prevent_cse=False`` leaves the barriers out: the merge then keeps
    them, as without remat).  A traced random draw cannot be repeated, so random ops are kept whatever the
    policy; a Variable ``f`` assigns is assigned once.  Under ``tl.vmap``, and in a trace with no tape
    recording (``tl.grad(tl.function(f))``, which replays the graph under the tape), ``f`` runs as it is.

    >>> import tensorlib as tl
    >>> block = tl.remat(lambda x: tl.nn.dropout(tl.tanh(x), rate=0.5) * 3.0)
    >>> x = tl.tensor([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    >>> with tl.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = block(x)
    >>> g = tape.gradient(y, x)  # recomputed with the forward pass's dropout mask
    >>> bool(tl.all((g == 0) == (y == 0)))
    True
    """
    if f is None:
        return lambda fn: remat(fn, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)
    name = getattr(f, "__qualname__", repr(f))
    static = _remat_options(f, name, prevent_cse, policy, static_argnums)
    from . import checkpoint_policies

    if policy is checkpoint_policies.nothing_saveable:
        policy = None

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        for i in static:
            _hashable_static(name, args, i)
        st = dispatch.current_state()
        # Nothing records: nothing to save; everything kept: nothing to redo; under a mode that builds no graph
        # (tl.vmap's) f runs as it is.
        mode = st.modes[-1] if st.modes else None
        if (
            not st.tapes
            or policy is checkpoint_policies.everything_saveable
            or (mode is not None and not getattr(mode, "builds_graph", False))
        ):
            return f(*args, **kwargs)
        leaves, treedef = tree.flatten((args, kwargs))
        where = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]

        def call(tensors):
            filled = list(leaves)
            for i, t in zip(where, tensors):
                filled[i] = t
            a, k = tree.unflatten(treedef, filled)
            return f(*a, **k)

        if mode is not None:
            rematerialized = _traced_remat(call, name, policy, prevent_cse, mode)
            return _with_gradient(rematerialized, closures_as_variables=True)(*[leaves[i] for i in where])
        start = _global_random_state()

        def rematerialized(*tensors):
            kept = None if policy is None else _Kept(policy, name)
            with dispatch.assigns_logged() as assigned, _observing(kept):
                y = call(tensors)
            if kept is not None:
                kept.seal(tree.leaves(y))

            def grad_fn(*out_grads, variables=None):
                variables = list(variables or ())
                with _random_state_at(start), _variables_as_before(assigned):
                    tape = GradientTape(watch_accessed_variables=False)
                    with tape:
                        # Fresh tensors: the same tensor given twice gets a gradient per place, summed by the engine.
                        fresh = [identity(t) for t in tensors]
                        tape.watch(fresh + variables)
                        with _observing(kept and kept.replaying_from_start()):
                            again = tree.leaves(call(fresh))
                _check_recomputed(name, tree.leaves(y), again)
                # Integer and bool tensors (indices, masks) get no gradient.
                sources = [t for t in fresh if t.dtype.kind in "fc"] + variables
                found = iter(tape.gradient(again, sources, list(out_grads), unconnected_gradients="zero"))
                grads = [next(found) if t.dtype.kind in "fc" else None for t in fresh]
                return (grads, list(found)) if variables else grads

            return y, grad_fn

        rematerialized.__name__, rematerialized.__qualname__ = getattr(f, "__name__", name), name
        return _with_gradient(rematerialized, closures_as_variables=True)(*[leaves[i] for i in where])

    return wrapper


class _Kept:
    """The results a ``tl.remat`` policy keeps, an observer of the ops ``f`` runs: in the forward pass
    (``on_op``) it counts them and keeps the results of those the policy names; in the backward pass's run
    (``replaying``) it counts them again and gives the kept results instead of running their kernels
    (``replayed``, asked by dispatch before a kernel runs while observers are active).  Random ops are never
    kept: the recomputation repeats the forward pass's draws in their order."""

    def __init__(self, policy, name):
        self.policy, self.name = policy, name
        self.results: dict = {}  # the op's position in the run -> (its type, its outputs)
        self.made: dict = {}  # the _id of a result not kept -> (its op's position, type, several?, weak references)
        self.count = 0
        self.replaying = False
        self.reads: dict = {}  # an op's position -> the positions of the ops not kept whose results it reads
        self.not_kept: dict = {}  # an op's position -> the op, for those not kept
        self.deferred = frozenset()  # the positions of the ops whose kernels the backward pass's run defers

    def seal(self, outputs) -> None:
        """After the forward pass: the ops not kept whose results nothing needs in the backward pass's run but kept
        ops and ops nothing needs (not ``f``'s ``outputs``, not a random op: its draw must repeat, not a check) run
        their kernels there only if their results are read, by a gradient rule or Python (JAX's dead-code
        elimination)."""
        needed = {self.made[o._id][0] for o in outputs if isinstance(o, Tensor) and o._id in self.made}
        for k in sorted(self.not_kept, reverse=True):
            op = self.not_kept[k]
            if k in needed or op.stateful or op.side_effect:
                needed.add(k)
                needed.update(self.reads.get(k, ()))
        self.deferred = frozenset(k for k in self.not_kept if k not in needed and k not in self.results)

    def replaying_from_start(self):
        """A copy that gives the kept results from the run's first op on, for one run of ``grad_fn``: its own count,
        so that two runs at once (a persistent tape's gradients in two threads) do not take each other's steps."""
        replay = copy.copy(self)
        replay.replaying, replay.count = True, 0
        return replay

    def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
        if mode != "eager" or self.replaying:  # a tl.function's nodes run again whole
            return
        k, self.count = self.count, self.count + 1
        self.reads[k] = {made[0] for made in map(self.made.get, (t._id for t in inputs)) if made is not None}
        many = outputs if outputs.__class__ is tuple else (outputs,)
        if op.stateful or not self.policy(op.name, tuple(inputs), dict(attrs)):
            self.not_kept[k] = op
            for o in many:
                self.made[o._id] = (k, op.name, outputs.__class__ is tuple, [weakref.ref(p) for p in many])
            return
        self.results[k] = (op.name, outputs)
        # A named value is kept with the op that made it (``checkpoint_name(x @ w, "h")`` keeps the product:
        # naming it is asking not to compute it again); the same arrays, no more memory.
        made = self.made.get(inputs[0]._id) if op.name == "CheckpointName" else None
        if made is not None:
            j, op_type, multi, refs = made
            alive = [r() for r in refs]
            if None not in alive and not getattr(registry_ops.get(op_type), "stateful", True):
                self.results[j] = (op_type, tuple(alive) if multi else alive[0])

    def replayed(self, op, inputs, attrs, specs):
        if not self.replaying:
            return None
        k, self.count = self.count, self.count + 1
        found = self.results.get(k)
        if found is None:
            return dispatch.DEFERRED if k in self.deferred and not (op.stateful or op.side_effect) else None
        op_type, outputs = found
        many = outputs if outputs.__class__ is tuple else (outputs,)
        wanted = specs if specs.__class__ is tuple else (specs,)
        if op_type != op.name or [o.shape for o in many] != [tuple(s.shape) for s in wanted]:
            raise RuntimeError(
                f"tl.remat: running {self.name} again for its gradient ran another op at step {k} ({op.name} of "
                f"{[tuple(s.shape) for s in wanted]}) than the forward pass ({op_type} of {[o.shape for o in many]}): "
                "it reads state that changed in between, or its Python control flow depends on more than its "
                "arguments"
            )
        # New tensors of the same values (values are immutable): the recomputation's tape records them as this op's.
        fresh = tuple(make(o._value, o.backend, o.shape, o.dtype) for o in many)
        return fresh if outputs.__class__ is tuple else fresh[0]


def _traced_remat(call, name, policy, prevent_cse, mode):
    """``tl.remat``'s function for :func:`_with_gradient` under ``tl.function`` (``mode``, the trace): the
    backward pass traces ``f`` again on its inputs read through an OptimizationBarrier (``prevent_cse``: else
    simplify's CSE merges the recomputed nodes back into the forward pass's, which the memory plan then keeps
    alive for the gradient), taking the results ``policy`` keeps from the forward pass (through a barrier too)."""

    def rematerialized(*tensors):
        kept = _KeptTraced(policy, name, prevent_cse, mode)
        before = mode.variable_values()
        with _observing(kept):
            y = call(tensors)
        assigned = mode.assigned_since(before)

        def grad_fn(*out_grads, variables=None):
            variables = list(variables or ())
            here = dispatch.current_state().modes
            if assigned and not (here and here[-1] is mode):
                raise RuntimeError(
                    f"tl.remat({name}): it assigns Variables, and its traced graph is differentiated outside the "
                    "trace that made it (a graph called under a tape); call the remat function there instead"
                )
            tape = GradientTape(watch_accessed_variables=False)
            with tape:
                fresh = [kept.barrier(t) for t in tensors]
                tape.watch(fresh + variables)
                with mode.reading_as_before(before) if assigned else contextlib.nullcontext():
                    with _observing(kept.replaying_from_start()):
                        again = tree.leaves(call(fresh))
            sources = [t for t in fresh if t.dtype.kind in "fc"] + variables
            found = iter(tape.gradient(again, sources, list(out_grads), unconnected_gradients="zero"))
            grads = [next(found) if t.dtype.kind in "fc" else None for t in fresh]
            return (grads, list(found)) if variables else grads

        return y, grad_fn

    return rematerialized


_barriers = threading.local()  # busy: a _KeptTraced is making a barrier node


class _KeptTraced:
    """:class:`_Kept` under ``tl.function``: it sees the nodes ``f`` binds (``traced``), keeps the symbolic results
    of those the policy names (and of every random op: a traced draw cannot be repeated), and, in the backward
    pass's trace, stands in for them (``replayed_traced``) with those results read through a barrier.  A graph
    replayed eagerly under a tape runs ``f`` again whole (``on_op``: nothing kept)."""

    def __init__(self, policy, name, prevent_cse, mode):
        self.policy, self.name, self.prevent_cse = policy, name, prevent_cse
        self.mode = mode  # the trace whose nodes it counts (not those of a branch or loop body traced inside)
        self.results: dict = {}  # the op's position in the run -> (its type, its outputs)
        self.made: dict = {}  # the _id of a result not kept -> (its op's position, the op, its outputs)
        self.count = 0
        self.replaying = False

    def replaying_from_start(self):
        """A copy for one run of ``grad_fn`` (as :meth:`_Kept.replaying_from_start`), counting the nodes bound in the
        trace that runs it."""
        modes = dispatch.current_state().modes
        replay = copy.copy(self)
        replay.replaying, replay.count, replay.mode = True, 0, modes[-1] if modes else None
        return replay

    def on_op(self, op, inputs, outputs, attrs, seconds, kernel, backend, mode="eager", phase=None):
        pass

    def _counts(self) -> bool:
        """Whether the node being bound is one of ``f``'s: bound in its trace, not a barrier it makes."""
        modes = dispatch.current_state().modes
        return bool(modes) and modes[-1] is self.mode and not getattr(_barriers, "busy", False)

    def barrier(self, t):
        """``t`` read through an OptimizationBarrier (an Identity without ``prevent_cse``), a node that no
        ``_KeptTraced`` of this thread counts: it is none of ``f``'s ops."""
        _barriers.busy = True
        try:
            return _optimization_barrier(t) if self.prevent_cse else identity(t)
        finally:
            _barriers.busy = False

    def traced(self, op, inputs, outputs, attrs):
        if self.replaying or not self._counts():
            return
        k, self.count = self.count, self.count + 1
        many = outputs if outputs.__class__ is tuple else (outputs,)
        if not (op.stateful or self.policy is not None and self.policy(op.name, tuple(inputs), dict(attrs))):
            for o in many:
                self.made[o._id] = (k, op, outputs)
            return
        self.results[k] = (op.name, outputs)
        made = self.made.get(inputs[0]._id) if op.name == "CheckpointName" else None
        if made is not None:  # the named value's op is kept with it, as eagerly
            self.results[made[0]] = (made[1].name, made[2])

    def replayed_traced(self, op, inputs, attrs, specs):
        if not self.replaying or not self._counts():
            return None
        k, self.count = self.count, self.count + 1
        found = self.results.get(k)
        if found is None:
            return None
        op_type, outputs = found
        many = outputs if outputs.__class__ is tuple else (outputs,)
        wanted = specs if specs.__class__ is tuple else (specs,)
        if op_type != op.name or [tuple(o.shape) for o in many] != [tuple(s.shape) for s in wanted]:
            raise RuntimeError(
                f"tl.remat: tracing {self.name} again for its gradient bound another op at step {k} ({op.name} of "
                f"{[tuple(s.shape) for s in wanted]}) than the forward pass ({op_type} of "
                f"{[tuple(o.shape) for o in many]}): its Python control flow depends on more than its arguments"
            )
        with dispatch.tapes_paused():  # the tapes record this op, with these results
            fresh = tuple(self.barrier(o) for o in many)
        return fresh if outputs.__class__ is tuple else fresh[0]


@contextlib.contextmanager
def _observing(observer):
    """``observer`` (None: nothing) among this thread's observers in the block."""
    if observer is None:
        yield
        return
    observers = dispatch.local_state().observers
    observers.append(observer)
    try:
        yield
    finally:
        observers.remove(observer)


def _remat_options(f, name, prevent_cse, policy, static_argnums) -> tuple:
    """Check ``tl.remat``'s JAX keywords; the static positions as a tuple of ints."""
    if not callable(f):
        raise TypeError(f"tl.remat: f must be callable, got {type(f).__name__} {f!r:.60}")
    if not isinstance(prevent_cse, bool):
        raise TypeError(f"tl.remat({name}): prevent_cse must be a bool, got {prevent_cse!r:.60}")
    if policy is not None and not callable(policy):
        raise TypeError(f"tl.remat({name}): policy must be a callable or None, got {policy!r:.60}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if any(not isinstance(i, int) or isinstance(i, bool) for i in static):
        raise TypeError(f"tl.remat({name}): static_argnums must be ints, got {static_argnums!r:.60}")
    return static


def _hashable_static(name, args, i) -> None:
    """The static argument ``args[i]`` is a Python value (hashable), as JAX requires; a tensor or array is not
    (a NumPy scalar is a value)."""
    if not -len(args) <= i < len(args):
        raise ValueError(f"tl.remat({name}): static_argnums names argument {i}, but it was called with {len(args)}")
    try:
        leaves = tree.leaves(args[i])
        if any(isinstance(v, Tensor) or hasattr(v, "shape") and not isinstance(v, np.generic) for v in leaves):
            raise TypeError  # a tensor or array hashes by identity, but has no value to be static by
        hash(args[i])
    except TypeError:
        raise TypeError(
            f"tl.remat({name}): static argument {i} must be hashable (a Python value), got "
            f"{type(args[i]).__name__}; pass tensors as ordinary arguments"
        ) from None


@contextlib.contextmanager
def _variables_as_before(assigned):
    """The Variables the first run assigned hold, inside the block, their values from before it (the
    recomputation reads what that run read and assigns them again), and after it the values they hold now:
    the state changes once, not once per run (a BatchNorm's moving averages were updated twice)."""
    now = [(var, var._value) for var, _ in assigned.values()]
    for var, before in assigned.values():
        dispatch.put_value(var, before)
    try:
        yield
    finally:
        for var, value in now:
            dispatch.put_value(var, value)


def _global_random_state():
    from ..ops import random

    return copy.deepcopy(random.current_generator())


@contextlib.contextmanager
def _random_state_at(state):
    """Unseeded draws on this thread start from ``state`` inside the block (a copy: ``state`` can serve again);
    other threads keep drawing from the global generator (it was swapped for every thread before)."""
    from ..ops import random

    with random.drawing_from(copy.deepcopy(state)):
        yield


def _check_recomputed(name, forward, again) -> None:
    for k, (a, b) in enumerate(zip(forward, again)):
        if a.shape != b.shape or not np.array_equal(a.numpy(), b.numpy(), equal_nan=True):
            raise RuntimeError(
                f"tl.remat: running {name} again for its gradient gave another output {k} (shape {tuple(b.shape)} "
                f"{b.dtype}) than the forward pass: it draws from a tl.random.Generator or reads state that "
                "changed in between; seed its random ops (seed=) or draw them outside it"
            )
