"""Nested structures: the one place that flattens and rebuilds them.

A *tree* is a list, tuple, named tuple or dict of trees, ``None``, or a
leaf.  Every other value (a Tensor, an array, a number, any object) is a
leaf.  ``None`` is an empty subtree with no leaves, as in JAX: it keeps its
place when a tree is rebuilt, so a dict of parameters with ``None`` entries
gets ``None`` back there from ``tl.grad``, ``tape.gradient`` or
``tl.tree.map``.  Dicts keep their insertion order (a dict subclass is
rebuilt as a plain dict).  The gradient transforms, tapes, ``tl.function``
(arguments, results and saved graph files), ``cond``/``while_loop``/``scan``,
modules, optimizers, checkpoints and the testing kit all walk structures
with this module.

>>> import tensorlib as tl
>>> leaves, treedef = tl.tree.flatten({"w": 1.0, "layers": [2.0, (3.0, None)]})
>>> leaves
[1.0, 2.0, 3.0]
>>> treedef
{'w': *, 'layers': [*, (*, None)]}
>>> tl.tree.unflatten(treedef, [10.0, 20.0, 30.0])
{'w': 10.0, 'layers': [20.0, (30.0, None)]}
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["KINDS", "TreeDef", "flatten", "flatten_with_path", "unflatten", "leaves", "map", "structure_error"]

# Node kinds (``TreeDef.kind``).  A constant is a leaf kept inside the TreeDef (``flatten(..., is_constant=)``):
# it is no leaf, compares by type and value, and comes back as it was (tl.function's Python results).
_LEAF, _NONE, _LIST, _TUPLE, _NAMEDTUPLE, _DICT, _CONSTANT = KINDS = (
    "leaf",
    "none",
    "list",
    "tuple",
    "namedtuple",
    "dict",
    "constant",
)


class TreeDef:
    """The shape of a tree without its leaves: what ``unflatten`` needs to rebuild it.

    ``kind`` is one of ``KINDS``; ``meta`` is the named tuple's type, the dict's keys or the constant;
    ``children`` are the TreeDefs of the items.  ``TreeDef(kind, meta, children)`` builds one (as graph
    files do when they load).  Two TreeDefs are equal when their trees have the same containers, dict
    keys (in order), named tuple types and constants; ``repr`` draws the tree with ``*`` for each leaf.

    >>> import tensorlib as tl
    >>> tl.tree.flatten((1, {"a": 2}))[1] == tl.tree.flatten((5, {"a": 6}))[1]
    True
    >>> tl.tree.flatten((1, {"a": 2}))[1].num_leaves
    2
    """

    __slots__ = ("kind", "meta", "children", "_num_leaves", "_key")

    def __init__(self, kind: str, meta, children: tuple):
        self.kind = kind
        self.meta = meta  # the named tuple's type, the dict's keys, or the constant
        self.children = children
        # Both computed when first asked for: flattening (at every tl.grad or tl.function call) only builds.
        self._num_leaves = self._key = None

    @property
    def num_leaves(self) -> int:
        """How many leaves the tree has (constants and ``None`` are none)."""
        n = self._num_leaves
        if n is None:
            n = self._num_leaves = 1 if self.kind == _LEAF else sum([c.num_leaves for c in self.children])
        return n

    def _structure_key(self):
        """The whole structure as nested plain tuples, so comparing and hashing TreeDefs runs in C once built;
        a constant compares by type and value (True is not 1)."""
        key = self._key
        if key is None:
            kind, meta = self.kind, self.meta
            if kind == _CONSTANT:
                meta = (type(meta), meta)
            key = self._key = (kind, meta, tuple([c._structure_key() for c in self.children]))
        return key

    def __eq__(self, other) -> bool:
        return self is other or isinstance(other, TreeDef) and self._structure_key() == other._structure_key()

    def __hash__(self):
        try:
            return hash(self._structure_key())
        except TypeError:  # an unhashable constant: equal TreeDefs still hash alike
            return hash((self.kind, self.num_leaves))

    def __repr__(self) -> str:
        kind = self.kind
        if kind == _LEAF:
            return "*"
        if kind == _NONE:
            return "None"
        if kind == _CONSTANT:
            return f"={self.meta!r}"
        inner = [repr(c) for c in self.children]
        if kind == _DICT:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.meta, inner)) + "}"
        if kind == _LIST:
            return "[" + ", ".join(inner) + "]"
        name = self.meta.__name__ if kind == _NAMEDTUPLE else ""
        return f"{name}(" + ", ".join(inner) + ("," if len(inner) == 1 and not name else "") + ")"


_LEAF_DEF = TreeDef(_LEAF, None, ())
_NONE_DEF = TreeDef(_NONE, None, ())


def flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None, is_constant: Callable[[Any], bool] | None = None
) -> tuple[list, TreeDef]:
    """``(leaves, treedef)``: the leaves in order (lists and tuples by position, dicts by insertion order).

    ``is_leaf(node)`` true makes a container (or ``None``) a leaf as it is, as JAX's ``is_leaf``.
    ``is_constant(leaf)`` true keeps that leaf inside the TreeDef instead of the leaves: ``unflatten``
    puts it back, and TreeDefs compare it by value (how ``tl.function`` keeps the Python numbers and
    strings a function returns).

    >>> import tensorlib as tl
    >>> tl.tree.flatten((1, [2, None]))[0]
    [1, 2]
    >>> tl.tree.flatten((1, [2, None]), is_leaf=lambda x: x is None)[0]
    [1, 2, None]
    >>> leaves, treedef = tl.tree.flatten((1, "tag"), is_constant=lambda x: isinstance(x, str))
    >>> leaves, treedef, tl.tree.unflatten(treedef, [7])
    ([1], (*, ='tag'), (7, 'tag'))
    """
    leaves: list = []
    if is_leaf is None and is_constant is None:
        return leaves, _flatten(tree, leaves)
    return leaves, _flatten_with(tree, leaves, is_leaf, is_constant)


def _flatten(tree, leaves) -> TreeDef:
    cls = tree.__class__
    if cls is list:
        return TreeDef(_LIST, None, tuple([_flatten(t, leaves) for t in tree]))
    if cls is tuple:
        return TreeDef(_TUPLE, None, tuple([_flatten(t, leaves) for t in tree]))
    if cls is dict:
        return TreeDef(_DICT, tuple(tree), tuple([_flatten(v, leaves) for v in tree.values()]))
    if tree is None:
        return _NONE_DEF
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):
        return TreeDef(_NAMEDTUPLE, cls, tuple([_flatten(t, leaves) for t in tree]))
    if isinstance(tree, dict):  # OrderedDict, defaultdict...: rebuilt as a plain dict
        return TreeDef(_DICT, tuple(tree), tuple([_flatten(v, leaves) for v in tree.values()]))
    leaves.append(tree)
    return _LEAF_DEF


def _flatten_with(tree, leaves, is_leaf, is_constant) -> TreeDef:
    """``_flatten`` with the predicates (a second function keeps the common call free of them)."""
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF_DEF
    kind, meta, items = _node(tree)
    if kind is not None:
        return TreeDef(kind, meta, tuple([_flatten_with(t, leaves, is_leaf, is_constant) for t in items]))
    if tree is None:
        return _NONE_DEF
    if is_constant is not None and is_constant(tree):
        return TreeDef(_CONSTANT, tree, ())
    leaves.append(tree)
    return _LEAF_DEF


def _node(tree) -> tuple:
    """``(kind, meta, children)`` of a container, or ``(None, None, None)`` for ``None`` and leaves."""
    cls = tree.__class__
    if cls is list:
        return _LIST, None, tree
    if cls is tuple:
        return _TUPLE, None, tree
    if isinstance(tree, dict):
        return _DICT, tuple(tree), tree.values()
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):
        return _NAMEDTUPLE, cls, tree
    return None, None, None


def flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """``([(path, leaf), ...], treedef)``: each leaf with the keys that reach it from the root.

    A path is a tuple of list/tuple positions (named tuples too: ``p[0]`` reads a named tuple's first
    field) and dict keys; the root leaf's path is ``()``.

    >>> import tensorlib as tl
    >>> tl.tree.flatten_with_path({"w": [1.0, 2.0], "b": 3.0})[0]
    [(('w', 0), 1.0), (('w', 1), 2.0), (('b',), 3.0)]
    """
    leaves, treedef = flatten(tree, is_leaf)
    return list(zip(_paths(treedef, (), []), leaves)), treedef


def _paths(treedef: TreeDef, prefix: tuple, out: list) -> list:
    kind = treedef.kind
    if kind == _LEAF:
        out.append(prefix)
    elif kind == _DICT:
        for k, child in zip(treedef.meta, treedef.children):
            _paths(child, prefix + (k,), out)
    else:
        for i, child in enumerate(treedef.children):
            _paths(child, prefix + (i,), out)
    return out


def unflatten(treedef: TreeDef, leaves) -> Any:
    """Rebuild the tree ``treedef`` describes from ``leaves`` (as many as it has).

    >>> import tensorlib as tl
    >>> _, treedef = tl.tree.flatten({"a": (1, 2), "b": None})
    >>> tl.tree.unflatten(treedef, ["x", "y"])
    {'a': ('x', 'y'), 'b': None}
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(
            f"tl.tree.unflatten: {len(leaves)} leaves for a structure with {treedef.num_leaves} ({treedef!r})"
        )
    if treedef.kind == _LEAF:
        return leaves[0]
    return _unflatten(treedef, iter(leaves))


def _unflatten(treedef, leaves):
    kind = treedef.kind
    if kind == _LEAF:
        return next(leaves)
    if kind == _NONE:
        return None
    if kind == _CONSTANT:
        return treedef.meta
    items = [_unflatten(child, leaves) for child in treedef.children]
    if kind == _LIST:
        return items
    if kind == _TUPLE:
        return tuple(items)
    if kind == _NAMEDTUPLE:
        return treedef.meta(*items)
    return dict(zip(treedef.meta, items))


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, in ``flatten`` order.

    >>> import tensorlib as tl
    >>> tl.tree.leaves({"a": [1, None], "b": (2,)})
    [1, 2]
    """
    return flatten(tree, is_leaf)[0]


def map(fn: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:  # noqa: A001 - the name JAX and TF use
    """``fn`` applied leaf by leaf to ``tree`` and the trees in ``rest`` (which must have its structure).

    ``None`` entries are empty subtrees, so ``fn`` never sees them and they stay ``None``.

    >>> import tensorlib as tl
    >>> tl.tree.map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    >>> tl.tree.map(lambda a: a * 2, [1, None])
    [2, None]
    """
    flat, treedef = flatten(tree, is_leaf)
    others = []
    for other in rest:
        other_flat, other_def = flatten(other, is_leaf)
        if other_def != treedef:
            raise structure_error("tl.tree.map", treedef, other_def)
        others.append(other_flat)
    return unflatten(treedef, [fn(*xs) for xs in zip(flat, *others)])


def structure_error(what: str, expected: TreeDef, got: TreeDef) -> ValueError:
    """The one error for two structures that should match: it draws both.

    >>> import tensorlib as tl
    >>> tl.tree.structure_error("f", tl.tree.flatten([1])[1], tl.tree.flatten((1,))[1])
    ValueError('f: structures differ: expected [*], got (*,)')
    """
    return ValueError(f"{what}: structures differ: expected {expected!r}, got {got!r}")
