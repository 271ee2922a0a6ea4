"""Nested structures: the one place that flattens and rebuilds them.

A *tree* is a leaf, or a list, tuple, named tuple or dict of trees.  Every
other value (a Tensor, an array, a number, ``None``) is a leaf, as in
TensorFlow's ``nest``: a ``None`` keeps its place, so a structure of
placeholders round-trips, and the gradient transforms pass ``None`` leaves
through untouched (a dict of parameters with ``None`` entries gets ``None``
back there).  Dicts keep their insertion order.  ``tl.grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``,
``hessian`` and ``GradientTape`` all walk structures with this module.

>>> import tensorlib as tl
>>> leaves, treedef = tl.tree.flatten({"w": 1.0, "layers": [2.0, (3.0, None)]})
>>> leaves
[1.0, 2.0, 3.0, None]
>>> tl.tree.unflatten(treedef, [10.0, 20.0, 30.0, None])
{'w': 10.0, 'layers': [20.0, (30.0, None)]}
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["TreeDef", "flatten", "unflatten", "leaves", "map", "structure_error"]

_LEAF, _LIST, _TUPLE, _NAMEDTUPLE, _DICT = range(5)


class TreeDef:
    """The shape of a tree without its leaves: what ``unflatten`` needs to rebuild it."""

    __slots__ = ("kind", "meta", "children", "num_leaves")

    def __init__(self, kind: int, meta, children: tuple):
        self.kind = kind
        self.meta = meta  # the named tuple's type, or the dict's keys
        self.children = children
        self.num_leaves = 1 if kind == _LEAF else sum(c.num_leaves for c in children)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TreeDef)
            and self.kind == other.kind
            and self.meta == other.meta
            and self.children == other.children
        )

    def __hash__(self):
        return hash((self.kind, self.meta if self.kind != _DICT else tuple(self.meta), self.children))

    def __repr__(self) -> str:
        if self.kind == _LEAF:
            return "*"
        inner = [repr(c) for c in self.children]
        if self.kind == _DICT:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.meta, inner)) + "}"
        if self.kind == _LIST:
            return "[" + ", ".join(inner) + "]"
        name = self.meta.__name__ if self.kind == _NAMEDTUPLE else ""
        return f"{name}(" + ", ".join(inner) + ("," if len(inner) == 1 and not name else "") + ")"


_LEAF_DEF = TreeDef(_LEAF, None, ())


def flatten(tree: Any) -> tuple[list, TreeDef]:
    """``(leaves, treedef)``: the leaves in order (lists and tuples by position, dicts by insertion order).

    >>> flatten((1, [2, 3]))[0]
    [1, 2, 3]
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeDef:
    cls = tree.__class__
    if cls is list:
        return TreeDef(_LIST, None, tuple(_flatten(t, leaves) for t in tree))
    if cls is tuple:
        return TreeDef(_TUPLE, None, tuple(_flatten(t, leaves) for t in tree))
    if cls is dict:
        return TreeDef(_DICT, tuple(tree), tuple(_flatten(v, leaves) for v in tree.values()))
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):
        return TreeDef(_NAMEDTUPLE, cls, tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):  # OrderedDict, defaultdict...: rebuilt as a plain dict
        return TreeDef(_DICT, tuple(tree), tuple(_flatten(v, leaves) for v in tree.values()))
    leaves.append(tree)
    return _LEAF_DEF


def unflatten(treedef: TreeDef, leaves) -> Any:
    """Rebuild the tree ``treedef`` describes from ``leaves`` (as many as it has)."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tl.tree.unflatten: {len(leaves)} leaves for a structure with {treedef.num_leaves} ({treedef!r})"
        )
    out, _ = _unflatten(treedef, leaves, 0)
    return out


def _unflatten(treedef, leaves, i):
    kind = treedef.kind
    if kind == _LEAF:
        return leaves[i], i + 1
    items = []
    for child in treedef.children:
        item, i = _unflatten(child, leaves, i)
        items.append(item)
    if kind == _LIST:
        return items, i
    if kind == _TUPLE:
        return tuple(items), i
    if kind == _NAMEDTUPLE:
        return treedef.meta(*items), i
    return dict(zip(treedef.meta, items)), i


def leaves(tree: Any) -> list:
    """The leaves of ``tree``, in ``flatten`` order."""
    return flatten(tree)[0]


def map(fn: Callable, tree: Any, *rest: Any) -> Any:  # noqa: A001 - the name JAX and TF use
    """``fn`` applied leaf by leaf to ``tree`` and the trees in ``rest`` (which must have its structure).

    >>> map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    """
    flat, treedef = flatten(tree)
    others = []
    for other in rest:
        other_flat, other_def = flatten(other)
        if other_def != treedef:
            raise structure_error("tl.tree.map", treedef, other_def)
        others.append(other_flat)
    return unflatten(treedef, [fn(*xs) for xs in zip(flat, *others)])


def structure_error(what: str, expected: TreeDef, got: TreeDef) -> ValueError:
    return ValueError(f"{what}: structures differ: expected {expected!r}, got {got!r}")
