"""Nested structures: the one place that flattens and rebuilds them.

A *tree* is a list, tuple, named tuple or dict of trees, ``None``, or a
leaf.  Every other value (a Tensor, an array, a number, any object) is a
leaf.  ``None`` is an empty subtree with no leaves, as in JAX: it keeps its
place when a tree is rebuilt, so a dict of parameters with ``None`` entries
gets ``None`` back there from ``tl.grad``, ``tape.gradient`` or
``tl.tree.map``.  Dicts keep their insertion order (a dict subclass is
rebuilt as a plain dict).  Other types are nodes once registered
(:func:`register_node`, :func:`register_dataclass`: JAX's
``register_pytree_node`` and ``register_dataclass``).  The gradient transforms, tapes, ``tl.function``
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

import dataclasses
from typing import Any, Callable

__all__ = [
    "KINDS",
    "TreeDef",
    "flatten",
    "flatten_as",
    "flatten_with_path",
    "unflatten",
    "leaves",
    "map",
    "ordered_as",
    "register_dataclass",
    "register_node",
    "structure_error",
]

# Node kinds (``TreeDef.kind``).  A constant is a leaf kept inside the TreeDef (``flatten(..., is_constant=)``):
# it is no leaf, compares by type and value, and comes back as it was (tl.function's Python results).
# A registered node's meta is ``(its type, its auxiliary data)``.
_LEAF, _NONE, _LIST, _TUPLE, _NAMEDTUPLE, _DICT, _CONSTANT, _CUSTOM = KINDS = (
    "leaf",
    "none",
    "list",
    "tuple",
    "namedtuple",
    "dict",
    "constant",
    "custom",
)


class _Rebuilt:
    """A constant of a TreeDef that ``unflatten`` rebuilds at each call (``rebuild()``): a mutable value, such as
    the float0 array a traced ``tl.grad(..., allow_int=True)`` returns, that no two results may share.  A subclass
    compares and hashes by value (TreeDefs compare their constants)."""

    __slots__ = ()

    def rebuild(self):
        raise NotImplementedError


# Registered node types: ``{type: (flatten, unflatten, names)}`` (see ``register_node``); tl.function's
# signature keys read it too, to walk a registered argument.
nodes: dict = {}


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

    # The structure is held as nested plain tuples ``(kind, meta, children)`` (see ``key``): flattening
    # builds no object per node, and comparing and hashing run in C (tl.function does both at each call).
    __slots__ = ("_key", "_num_leaves")

    def __init__(self, kind: str, meta, children: tuple):
        if kind not in KINDS:
            raise ValueError(f"tl.tree.TreeDef: kind {kind!r} is not one of {KINDS}")
        if kind == _LEAF:
            self._key = _LEAF_KEY  # the one leaf key: unflatten tests it by identity
        else:
            self._key = (kind, (type(meta), meta) if kind == _CONSTANT else meta, tuple([c._key for c in children]))
        self._num_leaves = None

    @classmethod
    def _of(cls, key, num_leaves=None) -> "TreeDef":
        treedef = cls.__new__(cls)
        treedef._key = key
        treedef._num_leaves = num_leaves
        return treedef

    @property
    def kind(self) -> str:
        return self._key[0]

    @property
    def meta(self):
        key = self._key
        return key[1][1] if key[0] == _CONSTANT else key[1]

    @property
    def children(self) -> tuple:
        return tuple([TreeDef._of(c) for c in self._key[2]])

    @property
    def num_leaves(self) -> int:
        """How many leaves the tree has (constants and ``None`` are none)."""
        n = self._num_leaves
        if n is None:
            n = self._num_leaves = _count(self._key)
        return n

    def key(self) -> tuple:
        """The structure as nested plain tuples ``(kind, meta, children)``: equal exactly for equal TreeDefs
        (a constant's meta is its type and value: True is not 1), and compared and hashed in C.

        >>> import tensorlib as tl
        >>> tl.tree.flatten({"a": [1, None]})[1].key()
        ('dict', ('a',), (('list', None, (('leaf', None, ()), ('none', None, ()))),))
        """
        return self._key

    def __eq__(self, other) -> bool:
        return isinstance(other, TreeDef) and self._key == other._key

    def __hash__(self):
        try:
            return hash(self._key)
        except TypeError:  # an unhashable constant: equal TreeDefs still hash alike
            return hash((self.kind, self.num_leaves))

    def __repr__(self) -> str:
        return _draw(self._key)

    def __reduce__(self):  # pickles as its key (tl.distributed ships TreeDefs to workers)
        return (TreeDef._of, (self._key,))


def _count(key) -> int:
    return 1 if key[0] == _LEAF else sum([_count(c) for c in key[2]])


def _draw(key) -> str:
    kind, meta, children = key
    if kind == _LEAF:
        return "*"
    if kind == _NONE:
        return "None"
    if kind == _CONSTANT:
        return f"={meta[1]!r}"
    inner = [_draw(c) for c in children]
    if kind == _DICT:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(meta, inner)) + "}"
    if kind == _LIST:
        return "[" + ", ".join(inner) + "]"
    if kind == _CUSTOM:
        names = _names(meta, len(inner))
        return (
            f"{meta[0].__name__}("
            + ", ".join(f"{n}={c}" if n != i else c for i, (n, c) in enumerate(zip(names, inner)))
            + ")"
        )
    name = meta.__name__ if kind == _NAMEDTUPLE else ""
    return f"{name}(" + ", ".join(inner) + ("," if len(inner) == 1 and not name else "") + ")"


_LEAF_KEY = (_LEAF, None, ())
_NONE_KEY = (_NONE, None, ())


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
        key = _flatten(tree, leaves)
    else:
        key = _flatten_with(tree, leaves, is_leaf, is_constant)
    return leaves, TreeDef._of(key, len(leaves))


def _flatten(tree, leaves) -> tuple:
    cls = tree.__class__
    if cls is list:
        return (_LIST, None, tuple([_flatten(t, leaves) for t in tree]))
    if cls is tuple:
        return (_TUPLE, None, tuple([_flatten(t, leaves) for t in tree]))
    if cls is dict:
        return (_DICT, tuple(tree), tuple([_flatten(v, leaves) for v in tree.values()]))
    if tree is None:
        return _NONE_KEY
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):
        return (_NAMEDTUPLE, cls, tuple([_flatten(t, leaves) for t in tree]))
    if isinstance(tree, dict):  # OrderedDict, defaultdict...: rebuilt as a plain dict
        return (_DICT, tuple(tree), tuple([_flatten(v, leaves) for v in tree.values()]))
    if nodes and cls in nodes:
        children, aux = nodes[cls][0](tree)
        return (_CUSTOM, (cls, aux), tuple([_flatten(t, leaves) for t in children]))
    leaves.append(tree)
    return _LEAF_KEY


def _flatten_with(tree, leaves, is_leaf, is_constant) -> tuple:
    """``_flatten`` with the predicates (a second function keeps the common call free of them)."""
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF_KEY
    kind, meta, items = _node(tree)
    if kind is not None:
        return (kind, meta, tuple([_flatten_with(t, leaves, is_leaf, is_constant) for t in items]))
    if tree is None:
        return _NONE_KEY
    if is_constant is not None and is_constant(tree):
        return (_CONSTANT, (type(tree), tree), ())
    leaves.append(tree)
    return _LEAF_KEY


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
    if nodes and cls in nodes:
        children, aux = nodes[cls][0](tree)
        return _CUSTOM, (cls, aux), children
    return None, None, None


def flatten_as(
    treedef: TreeDef, tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list | None, TreeDef]:
    """``(leaves, tree's treedef)``: the leaves of ``tree`` in the order of ``treedef``'s leaves, dicts
    matched by key whatever their order, lists and tuples by position; ``leaves`` is None when the two
    cannot match (the caller names what it was reading in its error).

    How a value given *for* a structure is read (a cotangent for a function's outputs, output gradients
    for a tape's targets, a gradient for an argument): zipping the leaves in insertion order paired
    ``{"b": gb, "a": ga}`` with ``{"a": ..., "b": ...}`` the wrong way round.  Where there are dicts the
    structures must be equal once the dicts are in order; without dicts only the number of leaves must
    agree (``[ct]`` for a single output is fine).

    >>> import tensorlib as tl
    >>> treedef = tl.tree.flatten({"a": 1, "b": (2, 3)})[1]
    >>> tl.tree.flatten_as(treedef, {"b": (20, 30), "a": 10})[0]
    [10, 20, 30]
    >>> tl.tree.flatten_as(treedef, {"a": 10, "c": (20, 30)})
    (None, {'a': *, 'c': (*, *)})
    """
    leaves, got = flatten(_ordered_as(treedef._key, tree), is_leaf)
    key, got_key = treedef._key, got._key
    if len(leaves) != treedef.num_leaves or got_key != key and (_has_dict(key) or _has_dict(got_key)):
        return None, got
    return leaves, got


def ordered_as(treedef: TreeDef, tree: Any) -> Any:
    """``tree`` with each dict's entries in the key order of the matching dict of ``treedef`` (where the keys
    agree; the rest as it is): how control flow reads a branch or loop body that builds its dicts in another
    order (JAX sorts dict keys, so there the order never matters).

    >>> import tensorlib as tl
    >>> tl.tree.ordered_as(tl.tree.flatten({"a": 1, "b": [2]})[1], {"b": [20], "a": 10})
    {'a': 10, 'b': [20]}
    """
    return _ordered_as(treedef._key, tree)


def _ordered_as(key, tree):
    """``tree`` with its dicts in the key order of the matching dicts of ``key`` (where the keys agree)."""
    kind, meta, children = key
    if kind == _DICT:
        if isinstance(tree, dict) and len(tree) == len(meta) and tree.keys() == set(meta):
            return {k: _ordered_as(c, tree[k]) for k, c in zip(meta, children)}
    elif kind in (_LIST, _TUPLE, _NAMEDTUPLE) and isinstance(tree, (list, tuple)) and len(tree) == len(children):
        items = [_ordered_as(c, t) for c, t in zip(children, tree)]
        return type(tree)(*items) if hasattr(tree.__class__, "_fields") else type(tree)(items)
    elif kind == _CUSTOM and tree.__class__ is meta[0]:
        flatten_fn, unflatten_fn, _ = nodes[meta[0]]
        items, aux = flatten_fn(tree)
        items = list(items)
        if len(items) == len(children):
            return unflatten_fn(aux, [_ordered_as(c, t) for c, t in zip(children, items)])
    return tree


def _has_dict(key) -> bool:
    return key[0] == _DICT or any(_has_dict(child) for child in key[2])


def flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, TreeDef]:
    """``([(path, leaf), ...], treedef)``: each leaf with the keys that reach it from the root.

    A path is a tuple of list/tuple positions (named tuples too: ``p[0]`` reads a named tuple's first
    field), dict keys and a registered node's child names (a dataclass's field names) or positions; the
    root leaf's path is ``()``.

    >>> import tensorlib as tl
    >>> tl.tree.flatten_with_path({"w": [1.0, 2.0], "b": 3.0})[0]
    [(('w', 0), 1.0), (('w', 1), 2.0), (('b',), 3.0)]
    """
    leaves, treedef = flatten(tree, is_leaf)
    return list(zip(_paths(treedef._key, (), []), leaves)), treedef


def _paths(key: tuple, prefix: tuple, out: list) -> list:
    kind, meta, children = key
    if kind == _LEAF:
        out.append(prefix)
    elif kind == _DICT or kind == _CUSTOM:
        for k, child in zip(meta if kind == _DICT else _names(meta, len(children)), children):
            _paths(child, prefix + (k,), out)
    else:
        for i, child in enumerate(children):
            _paths(child, prefix + (i,), out)
    return out


def unflatten(treedef: TreeDef, leaves) -> Any:
    """Rebuild the tree ``treedef`` describes from ``leaves`` (as many as it has).

    >>> import tensorlib as tl
    >>> _, treedef = tl.tree.flatten({"a": (1, 2), "b": None})
    >>> tl.tree.unflatten(treedef, ["x", "y"])
    {'a': ('x', 'y'), 'b': None}
    """
    if leaves.__class__ is not list:
        leaves = list(leaves)
    n = treedef._num_leaves
    if len(leaves) != (treedef.num_leaves if n is None else n):
        raise ValueError(
            f"tl.tree.unflatten: {len(leaves)} leaves for a structure with {treedef.num_leaves} ({treedef!r})"
        )
    key = treedef._key
    if key[0] == _LEAF:  # a single tensor: the common result of a tl.function
        return leaves[0]
    return _unflatten(key, iter(leaves))


def _unflatten(key, leaves):
    kind, meta, children = key
    if kind == _LEAF:
        return next(leaves)
    if kind == _NONE:
        return None
    if kind == _CONSTANT:
        return meta[1].rebuild() if isinstance(meta[1], _Rebuilt) else meta[1]
    # A leaf child is taken in place (the common case, and the one rebuilt at every tl.function call).
    items = [next(leaves) if child is _LEAF_KEY else _unflatten(child, leaves) for child in children]
    if kind == _LIST:
        return items
    if kind == _TUPLE:
        return tuple(items)
    if kind == _NAMEDTUPLE:
        return meta(*items)
    if kind == _CUSTOM:
        return _registered(meta[0], "unflatten")[1](meta[1], items)
    return dict(zip(meta, items))


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, in ``flatten`` order.

    >>> import tensorlib as tl
    >>> tl.tree.leaves({"a": [1, None], "b": (2,)})
    [1, 2]
    """
    return flatten(tree, is_leaf)[0]


def map(fn: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:  # noqa: A001 - the name JAX and TF use
    """``fn`` applied leaf by leaf to ``tree`` and the trees in ``rest`` (which must have its structure).

    ``None`` entries are empty subtrees, so ``fn`` never sees them and they stay ``None``.  Dicts pair
    by key whatever their order (as in JAX and ``tf.nest``); the result has ``tree``'s order.

    >>> import tensorlib as tl
    >>> tl.tree.map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"y": (20, 30), "x": 10})
    {'x': 11, 'y': (22, 33)}
    >>> tl.tree.map(lambda a: a * 2, [1, None])
    [2, None]
    """
    flat, treedef = flatten(tree, is_leaf)
    others = []
    for other in rest:
        other_flat, other_def = flatten(other, is_leaf)
        if other_def != treedef:  # dicts in another order pair by key (zipping the leaves mixed them up)
            other_flat, other_def = flatten(_ordered_as(treedef._key, other), is_leaf)
            if other_def != treedef:
                raise structure_error("tl.tree.map", treedef, other_def)
        others.append(other_flat)
    return unflatten(treedef, [fn(*xs) for xs in zip(flat, *others)])


def register_node(cls: type, flatten: Callable, unflatten: Callable) -> type:
    """Make instances of ``cls`` nodes of trees, as JAX's ``register_pytree_node`` does; returns ``cls``.

    ``flatten(x) -> (children, aux)`` gives the children (trees, walked in order) and the auxiliary data
    (hashable, compared with ``==``: it is part of the TreeDef, so a change of it retraces a
    ``tl.function``); ``unflatten(aux, children) -> x`` rebuilds one.  Paths name the children by position.
    Unregistered objects are leaves; a type is registered once (a second registration raises, as in JAX).

    >>> import tensorlib as tl
    >>> class Pair:
    ...     def __init__(self, a, b, tag):
    ...         self.a, self.b, self.tag = a, b, tag
    >>> _ = tl.tree.register_node(Pair, lambda p: ((p.a, p.b), p.tag), lambda tag, ab: Pair(*ab, tag))
    >>> leaves, treedef = tl.tree.flatten(Pair(1.0, [2.0, 3.0], "x"))
    >>> leaves, treedef
    ([1.0, 2.0, 3.0], Pair(*, [*, *]))
    >>> tl.tree.unflatten(treedef, [10.0, 20.0, 30.0]).b
    [20.0, 30.0]
    """
    return _register(cls, flatten, unflatten, None, "register_node")


def register_dataclass(cls: type, data_fields=None, meta_fields=()) -> type:
    """Make a dataclass a node (JAX's ``register_dataclass``); returns ``cls``, so it works as a decorator.

    ``data_fields`` are its children (by default every ``__init__`` field not in ``meta_fields``), named by
    the field in paths and checkpoints; ``meta_fields`` are static values kept in the TreeDef (hashable).
    Without registration a dataclass is a leaf, as in JAX.

    >>> import dataclasses, tensorlib as tl
    >>> @tl.tree.register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: object
    ...     b: object
    >>> grads = tl.grad(lambda p: tl.sum(p.w * 3.0 + p.b))(Params(tl.tensor([1.0, 2.0]), tl.tensor(0.5)))
    >>> type(grads).__name__, grads.w.numpy().tolist(), float(grads.b)
    ('Params', [3.0, 3.0], 2.0)
    >>> [path for path, _ in tl.tree.flatten_with_path(grads)[0]]
    [('w',), ('b',)]
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"tl.tree.register_dataclass: {cls!r} is not a dataclass type")
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    meta = tuple(meta_fields)
    data = tuple(f for f in fields if f not in meta) if data_fields is None else tuple(data_fields)
    if sorted(data + meta) != sorted(fields):
        raise ValueError(
            f"tl.tree.register_dataclass({cls.__name__}): data_fields {list(data)} and meta_fields {list(meta)} "
            f"must together name each __init__ field once: {fields}"
        )

    def flatten(x):
        return [getattr(x, n) for n in data], tuple([getattr(x, n) for n in meta])

    def unflatten(aux, children):
        return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))

    return _register(cls, flatten, unflatten, data, "register_dataclass")


def _register(cls, flatten_fn, unflatten_fn, names, who: str) -> type:
    if not isinstance(cls, type):
        raise TypeError(f"tl.tree.{who}: expected a type, got {cls!r}")
    if cls in nodes:
        raise ValueError(f"tl.tree.{who}: {cls.__name__} is already registered (a type is registered once)")
    if issubclass(cls, (list, tuple, dict)) or cls is type(None):
        raise ValueError(f"tl.tree.{who}: {cls.__name__} is a list, tuple or dict type, which tl.tree walks already")
    if not (callable(flatten_fn) and callable(unflatten_fn)):
        raise TypeError(f"tl.tree.{who}: flatten and unflatten must be callables")
    nodes[cls] = (flatten_fn, unflatten_fn, names)
    return cls


def _registered(cls: type, what: str) -> tuple:
    node = nodes.get(cls)
    if node is None:  # a TreeDef made in another process (or a file) whose type is not registered here
        raise ValueError(
            f"tl.tree.{what}: {cls.__name__} is not a registered node type in this process; register it "
            "(tl.tree.register_node or register_dataclass) first"
        )
    return node


def _names(meta: tuple, n: int):
    """A registered node's child names: its dataclass fields, or positions."""
    node = nodes.get(meta[0])
    return node[2] if node is not None and node[2] is not None else range(n)


def structure_error(what: str, expected: TreeDef, got: TreeDef) -> ValueError:
    """The one error for two structures that should match: it names the first place where they differ (in
    a big tree, comparing two drawings is no way to find it) and draws both.

    >>> import tensorlib as tl
    >>> tl.tree.structure_error("f", tl.tree.flatten([1])[1], tl.tree.flatten((1,))[1])
    ValueError('f: structures differ: expected [*], got (*,)')
    >>> tl.tree.structure_error("f", tl.tree.flatten({"a": [1, 2]})[1], tl.tree.flatten({"a": [1]})[1])
    ValueError("f: structures differ at ['a']: expected [*, *], got [*]; in full: expected {'a': [*, *]}, got {'a': [*]}")
    """
    path, a, b = _first_difference(expected._key, got._key, ())
    if not path:
        return ValueError(f"{what}: structures differ: expected {expected!r}, got {got!r}")
    where = "".join(f"[{k!r}]" for k in path)
    return ValueError(
        f"{what}: structures differ at {where}: expected {_draw(a)}, got {_draw(b)}; "
        f"in full: expected {expected!r}, got {got!r}"
    )


def _first_difference(a: tuple, b: tuple, path: tuple) -> tuple:
    """``(path, a's node, b's node)`` where the keys ``a`` and ``b`` first differ (dicts matched by key)."""
    (kind, meta, children), (kind_b, meta_b, children_b) = a, b
    if kind == kind_b and len(children) == len(children_b):
        if kind == _DICT and set(meta) == set(meta_b):
            at = dict(zip(meta_b, children_b))
            pairs = [(k, c, at[k]) for k, c in zip(meta, children)]
        elif kind != _DICT and meta == meta_b:
            names = _names(meta, len(children)) if kind == _CUSTOM else range(len(children))
            pairs = [(k, c, c_b) for k, c, c_b in zip(names, children, children_b)]
        else:
            pairs = None
        if pairs is not None:
            for k, c, c_b in pairs:
                if c != c_b:
                    return _first_difference(c, c_b, path + (k,))
    return path, a, b
