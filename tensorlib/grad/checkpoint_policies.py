"""``tl.checkpoint_policies``: which op results :func:`tl.remat <tensorlib.grad.custom.remat>` keeps for the gradient
(JAX's ``jax.checkpoint_policies``), and :func:`checkpoint_name`, which names a value for them.

A policy is a function ``policy(op_type, inputs, attrs) -> bool``: ``op_type`` is the op's type name
(``"BatchMatMulV2"``, ``"Einsum"``, ``"Conv2D"``, ``"CheckpointName"``...), ``inputs`` its input Tensors (their
shapes and dtypes may be read), ``attrs`` its attributes as a dict (``attrs["name"]`` for a
:func:`checkpoint_name`).  It is asked once per op that ``f`` runs in the forward pass; True keeps that op's
results, and the backward pass's run of ``f`` uses them instead of running the op again (JAX passes the
primitive and its params; this is tensorlib's form of the same question).  A random op (one that draws, such as
``dropout``) is never kept, so the draws repeat in their order; ``policy=None`` keeps nothing, as in JAX.

>>> import tensorlib as tl
>>> def block(x, w):
...     h = tl.checkpoint_name(tl.tanh(x @ w), "hidden")
...     return tl.sum(tl.sin(h) @ w)
>>> x, w = tl.ones((4, 3), dtype="float64"), tl.eye(3, dtype="float64") * 0.5
>>> keep = tl.remat(block, policy=tl.checkpoint_policies.save_only_these_names("hidden"))
>>> bool(tl.allclose(tl.grad(keep, argnums=1)(x, w), tl.grad(block, argnums=1)(x, w)))
True
"""

from __future__ import annotations

from typing import Callable

from ..ops.registry import defop, spec
from ..tensor import Tensor
from . import registry

__all__ = [
    "everything_saveable",
    "nothing_saveable",
    "dots_saveable",
    "checkpoint_dots",
    "dots_with_no_batch_dims_saveable",
    "checkpoint_dots_with_no_batch_dims",
    "save_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "checkpoint_name",
]

_checkpoint_name = defop(
    "CheckpointName",
    inputs=("x",),
    attrs={"name": ""},
    infer=lambda x, *, name: spec(x.shape, x.dtype),
    elementwise=True,
    doc="x, named for tl.remat's policies (jax.ad_checkpoint.checkpoint_name); its gradient passes through.",
)
_checkpoint_name.generic(lambda xp, x, *, name: x)
registry.register_gradient("CheckpointName", lambda node, g: g)

_optimization_barrier = defop(
    "OptimizationBarrier",
    inputs=("x",),
    infer=lambda x: spec(x.shape, x.dtype),
    elementwise=True,
    doc="x, which graph passes do not see through (jax.lax.optimization_barrier): tl.remat's recomputation under "
    "tl.function reads its inputs through it, so common-subexpression elimination cannot merge the recomputed ops "
    "back into the forward pass's; its gradient passes through.",
)
_optimization_barrier.generic(lambda xp, x: x)
registry.register_gradient("OptimizationBarrier", lambda node, g: g)


def checkpoint_name(x, name: str) -> Tensor:
    """``x``, named ``name`` for :func:`tl.remat <tensorlib.grad.custom.remat>`'s policies
    (JAX's ``jax.ad_checkpoint.checkpoint_name``): :func:`save_only_these_names` keeps the values named so.
    Outside ``tl.remat`` it is an identity; its gradient passes through.  A nested structure names each tensor.

    >>> import tensorlib as tl
    >>> tl.checkpoint_name(tl.tensor([1.0, 2.0]), "h").numpy().tolist()
    [1.0, 2.0]
    """
    from .. import tree

    if not isinstance(name, str):
        raise TypeError(f"tl.checkpoint_name: name must be a str, got {type(name).__name__} {name!r:.60}")
    return tree.map(lambda t: _checkpoint_name(t, name=name), x)


def everything_saveable(op_type: str, inputs: tuple, attrs: dict) -> bool:
    """Keep every result: the backward pass runs nothing again, as without ``tl.remat`` (JAX's policy of the same
    name)."""
    return True


def nothing_saveable(op_type: str, inputs: tuple, attrs: dict) -> bool:
    """Keep nothing: the backward pass runs ``f`` again whole (``policy=None``; JAX's policy of the same name)."""
    return False


_DOTS = frozenset({"BatchMatMulV2", "Einsum", "Conv2D"})


def dots_saveable(op_type: str, inputs: tuple, attrs: dict) -> bool:
    """Keep the results of matrix products, einsums and convolutions (``@``, ``tl.matmul``, ``tl.einsum``,
    ``tl.tensordot``, ``tl.nn.conv2d``...); recompute the elementwise ops between them (JAX's ``dots_saveable``,
    also named ``checkpoint_dots``)."""
    return op_type in _DOTS and len(inputs) > 1


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(op_type: str, inputs: tuple, attrs: dict) -> bool:
    """Keep the results of matrix products and einsums that have no batch dimension, an axis that every operand
    and the result share without summing over it (``x @ w`` of matrices, ``einsum("bi,ij->bj")``); recompute
    batched ones (``einsum("bij,bjk->bik")``) and everything else (JAX's ``dots_with_no_batch_dims_saveable``)."""
    if op_type == "BatchMatMulV2":
        return all(len(t.shape) <= 2 for t in inputs)
    if op_type == "Einsum" and len(inputs) > 1:
        operands, _, result = attrs["equation"].replace(" ", "").partition("->")
        if "." in operands or not _:
            return False  # an ellipsis or an implicit result: leave it to be recomputed
        shared = set.intersection(*(set(term) for term in operands.split(",")))
        return not shared & set(result)
    return False


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def _names(names, what) -> frozenset:
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"tl.checkpoint_policies.{what}: names must be str, got {bad[0]!r:.60}")
    return frozenset(names)


def save_only_these_names(*names: str) -> Callable:
    """Keep only the values that :func:`checkpoint_name` named with one of ``names`` (JAX's policy of the same
    name).

    >>> import tensorlib as tl
    >>> policy = tl.checkpoint_policies.save_only_these_names("a")
    >>> policy("CheckpointName", (), {"name": "a"}), policy("CheckpointName", (), {"name": "b"})
    (True, False)
    """
    kept = _names(names, "save_only_these_names")

    def policy(op_type, inputs, attrs):
        return op_type == "CheckpointName" and attrs["name"] in kept

    return policy


def save_any_names_but_these(*names: str) -> Callable:
    """Keep the values that :func:`checkpoint_name` named, except those named with one of ``names``; nothing
    unnamed (JAX's policy of the same name)."""
    left = _names(names, "save_any_names_but_these")

    def policy(op_type, inputs, attrs):
        return op_type == "CheckpointName" and attrs["name"] not in left

    return policy


def save_anything_except_these_names(*names: str) -> Callable:
    """Keep every result except the values that :func:`checkpoint_name` named with one of ``names`` (JAX's policy
    of the same name)."""
    left = _names(names, "save_anything_except_these_names")

    def policy(op_type, inputs, attrs):
        return not (op_type == "CheckpointName" and attrs["name"] in left)

    return policy


def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
    """Keep what either policy keeps (JAX's policy of the same name).

    >>> import tensorlib as tl
    >>> both = tl.checkpoint_policies.save_from_both_policies(
    ...     tl.checkpoint_policies.dots_saveable, tl.checkpoint_policies.save_only_these_names("h"))
    >>> both("Einsum", (1, 2), {"equation": "ij,jk->ik"}), both("Tanh", (1,), {})
    (True, False)
    """
    for p in (policy_1, policy_2):
        if not callable(p):
            raise TypeError(f"tl.checkpoint_policies.save_from_both_policies: policies must be callable, got {p!r:.60}")

    def policy(op_type, inputs, attrs):
        return bool(policy_1(op_type, inputs, attrs)) or bool(policy_2(op_type, inputs, attrs))

    return policy
