"""Saving and loading graphs: JSON for the structure, ``.npz`` for the arrays, never pickle.

The JSON names a format and version, the op type of every node and its
attributes, each encoded with an explicit type tag (``{"$tuple": [...]}``,
``{"$slice": [...]}``, ``{"$dtype": "float32"}``, ``{"$complex": ["1.0", "2.0"]}``, ...), never a Python
callable.  Arrays (constants, and capture values when asked for) go to the
``.npz`` beside it, read with ``allow_pickle=False``.  Loading accepts
registered op types only, rebuilds every node through its shape rule, and
turns anything malformed into one :class:`GraphFormatError`; it runs no kernel.

>>> import os, tempfile, tensorlib as tl
>>> f = tl.function(lambda x: tl.sum(x * 3.0))
>>> path = os.path.join(tempfile.mkdtemp(), "f.json")
>>> f.save(path, tl.TensorSpec((None,), "float32"))
>>> g = tl.graph.load(path)
>>> float(g(tl.tensor([1.0, 2.0])))
9.0
"""

from __future__ import annotations

import collections
import io
import json
import os
import secrets
import zipfile
import zlib

import numpy as np

from .. import _files, dispatch
from .. import dtypes as _dtypes
from .. import tree
from ..backends import base as _backends
from ..ops.registry import _ops
from ..tensor import Tensor, Variable
from .ir import ASSIGN, UPDATES, Graph, _nbytes

FORMAT = "tensorlib.graph"
# 2: the JSON and the .npz share a token (a mix of two saves does not load).
# 3: named tuple outputs keep their type's name and fields (versions 1 and 2 saved them as tuples).
# 4: captures of kind "temporary" (a tensor the trace made, too big for a constant) are always saved.
VERSION = 4
_TOKEN = "__token__"
# A traced graph's constants are at most CONSTANT_BYTES, an optimized one's at most the passes' FOLD_BYTES:
# a file that declares a bigger constant is not one we wrote (and must not make us allocate it).
_MAX_CONSTANT_BYTES = 16 * 1024
_NPY_HEADER_MAX = 1 << 16
_CAPTURE_KINDS = ("variable", "tensor", "array", "temporary", "feed")
_UNLOADABLE = {"CustomGradient": "its gradient is a Python function"}
try:
    from lzma import LZMAError
except ImportError:  # a Python built without lzma reads no LZMA member either
    LZMAError = zlib.error
# What zipfile raises for a damaged archive: besides BadZipFile, a flipped bit in a header names an unknown
# compression method, flag or encryption (RuntimeError and its NotImplementedError), a damaged compressed
# member fails in its decompressor (zlib.error, LZMAError, OSError for bz2).
_ZIP_ERRORS = (
    ValueError,
    OSError,
    EOFError,
    zipfile.BadZipFile,
    RuntimeError,
    zlib.error,
    LZMAError,
)


class GraphFormatError(ValueError):
    """A graph file is corrupt, truncated, foreign, or uses an op this process does not know."""


def _paths(path) -> tuple[str, str]:
    path = _files.fspath(path)  # a bytes or PathLike path too (bytes failed at its .json suffix)
    base = path[:-5] if path.endswith(".json") else path
    return path, base + ".npz"


# ---------------------------------------------------------------- save
def save(graph: Graph, path, include_captures: bool = False) -> None:
    """Write ``graph`` to ``path`` (JSON) and ``<path without .json>.npz`` (constants, captures if asked)."""
    json_path, npz_path = _paths(path)
    # Both targets are checked before either is written: a folder at the JSON's path had its .npz replaced
    # first, and its rename then failed, leaving a pair that no longer loads.
    targets = [_files.resolve(p, "graph.save", "graph") for p in (npz_path, json_path)]
    arrays = {}
    doc = {"format": FORMAT, "version": VERSION, **_graph_doc(graph, arrays, include_captures, "")}
    token = secrets.token_hex(16)
    doc["token"] = token
    arrays[_TOKEN] = np.array(token)
    text = json.dumps(doc, indent=1, allow_nan=False).encode("utf-8")
    # Each file is written to a temporary beside it and renamed over the old one (atomic); a fault between
    # the two renames leaves files whose tokens differ, which load refuses rather than mixing two saves.
    temporaries = []
    try:
        for target, write in zip(targets, (lambda fh: np.savez(fh, **arrays), lambda fh: fh.write(text))):
            temporaries.append(_files.temporary(target, "graph.save"))
            with open(temporaries[-1], "wb") as fh:
                write(fh)
    except BaseException:
        _files.discard(temporaries)
        raise
    _files.commit(zip(temporaries, targets))


def reduce(graph: Graph):
    """``pickle`` and ``copy.deepcopy`` of a Graph: its file format in memory, captures' values included (a
    copy of a Variable capture is a new Variable, as a Module's copy has); a graph holding a Python function
    (``tl.custom_gradient``) is refused as :func:`save` refuses it."""
    arrays = {}
    doc = {"format": FORMAT, "version": VERSION, **_graph_doc(graph, arrays, True, "")}
    data = io.BytesIO()
    np.savez(data, **arrays)
    return _from_memory, (json.dumps(doc, allow_nan=False), data.getvalue())


def _from_memory(text: str, data: bytes) -> Graph:
    with _Arrays(io.BytesIO(data)) as arrays:
        return _build(json.loads(text), arrays, None)


def _graph_doc(graph: Graph, arrays: dict, include_captures: bool, prefix: str) -> dict:
    """The JSON of one graph; its arrays go to ``arrays`` under keys starting with ``prefix``.  A
    subgraph (a control-flow node's attribute) is nested as ``{"$graph": {...}}`` with its own ids."""
    ids = {t: int(n[1:]) for t, n in graph.value_names().items()}
    constants = []
    for k, (t, raw) in enumerate(graph.constants.values()):
        arrays[f"{prefix}const_{k}"] = np.asarray(t.backend.to_numpy(raw))
        constants.append({"id": ids[t._id], "key": f"{prefix}const_{k}", **_spec(t), "weak": t.__class__ is not Tensor})
    captures = []
    for c in graph.captures:
        saved = (include_captures or c.kind == "temporary") and c.source is not None
        if saved:
            arrays[f"capture_{c.name}"] = _host_value(c)
        captures.append(
            {
                "id": ids[c.tensor._id],
                "name": c.name,
                **_spec(c.tensor),
                "bytes": c.nbytes,
                "kind": c.kind,
                "site": c.site,
                "saved": saved,
                # A saved Variable comes back with its flag: loaded trainable, a BatchNorm's running statistics
                # were watched by every tape and trained by optimizers, and a tape refused their update.
                **({"trainable": c.source.trainable} if saved and isinstance(c.source, Variable) else {}),
            }
        )
    nodes = []
    for k, node in enumerate(graph.nodes):
        attrs = {}
        for name, value in node.attrs.items():
            if isinstance(value, Graph):
                attrs[name] = {"$graph": _graph_doc(value, arrays, include_captures, f"{prefix}n{k}.{name}.")}
            else:
                attrs[name] = encode(
                    value, f"graph.save: node {k} ({node.op_type}) attribute {name!r}{_inside(prefix)}"
                )
        nodes.append(
            {
                "op": node.op_type,
                "inputs": [ids[t._id] for t in node.inputs],
                "attrs": attrs,
                "outputs": [{"id": ids[o._id], **_spec(o)} for o in node.outputs],
                "site": node.site,
                **({"scope": list(node.scope)} if node.scope else {}),
            }
        )
    return {
        "name": graph.name,
        "backend": graph.backend.name,
        "inputs": [{"id": ids[t._id], "name": n, **_spec(t)} for t, n in zip(graph.inputs, graph.input_names)],
        "captures": captures,
        "constants": constants,
        "nodes": nodes,
        "outputs": [ids[t._id] for t in graph.outputs],
        "structure": _encode_structure(graph.structure),
        **_encode_signature(graph.signature),
        # a graph that calls tl.stats runs with NumPy's warnings off (Graph.quiet); files without the key: not quiet
        **({"quiet": True} if graph.quiet else {}),
    }


def _inside(prefix: str) -> str:
    """Where a subgraph's node is, for an error: ``" (in the body of node 3)"`` for the prefix ``"n3.body."`` (nested
    ones innermost first); nothing for the graph itself."""
    parts = prefix.split(".")[:-1]
    places = [f"the {parts[i + 1]} of node {parts[i][1:]}" for i in range(len(parts) - 2, -1, -2)]
    return f" (in {', in '.join(places)})" if places else ""


def _spec(t) -> dict:
    return {"shape": list(t.shape), "dtype": np.dtype(t.dtype).name}


def _host_value(capture) -> np.ndarray:
    src = capture.source
    raw = src._value if isinstance(src, Tensor) else src
    host = np.asarray(capture.tensor.backend.to_numpy(raw) if not isinstance(raw, np.ndarray) else raw)
    return host.astype(capture.dtype, copy=False)


def encode(value, where: str = "attribute"):
    """JSON for an attribute value, with explicit type tags; raises ValueError for callables and objects."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, np.integer):
        return value
    if isinstance(value, float) and not isinstance(value, np.floating):
        return {"$float": repr(value)}
    if isinstance(value, complex) and not isinstance(value, np.complexfloating):  # full_like(x, 1j), pad's value
        return {"$complex": [repr(value.real), repr(value.imag)]}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, where) for v in value]}
    if isinstance(value, list):
        return {"$list": [encode(v, where) for v in value]}
    if isinstance(value, dict):
        return {"$dict": [[encode(k, where), encode(v, where)] for k, v in value.items()]}
    if isinstance(value, slice):
        return {"$slice": [encode(value.start, where), encode(value.stop, where), encode(value.step, where)]}
    if value is Ellipsis:
        return {"$ellipsis": True}
    if isinstance(value, np.dtype):
        return {"$dtype": value.name}
    if isinstance(value, np.generic):
        return {"$scalar": [value.dtype.name, encode(value.item(), where)]}
    if callable(value):
        raise ValueError(
            f"{where} is a Python callable ({getattr(value, '__qualname__', value)!r}); graphs "
            "holding Python functions (such as tl.custom_gradient's grad_fn) cannot be saved"
        )
    raise ValueError(f"{where} has a value of type {type(value).__name__} that a graph file cannot hold")


def _encode_signature(signature) -> dict:
    """``{"signature": ...}`` for ``Graph.signature`` (the parameter names and the inputs' structure), or nothing
    where the function took what a file cannot hold (a registered tl.tree node): the graph then takes flat inputs."""
    if signature is None:
        return {}
    names, treedef = signature
    try:
        return {"signature": {"names": list(names), "structure": _encode_structure(treedef)}}
    except ValueError:
        return {}


def _encode_structure(treedef: tree.TreeDef, counter=None):
    """JSON for the outputs' TreeDef: ``{"tensor": i}`` for the i-th output, ``{"const": value}`` for a
    constant or None, and a tag per container (the encoding of versions 1 and 2, plus named tuples)."""
    counter = [0] if counter is None else counter
    kind, children = treedef.kind, treedef.children
    if kind == "leaf":
        counter[0] += 1
        return {"tensor": counter[0] - 1}
    if kind == "constant" and isinstance(treedef.meta, tree._Rebuilt):
        raise ValueError(
            f"graph.save: an output is a {treedef.meta!r} array (the gradient of an integer argument under "
            "tl.grad(..., allow_int=True)), which a graph file cannot hold; return the float gradients only"
        )
    if kind in ("none", "constant"):
        return {"const": encode(treedef.meta, "output constant")}
    if kind == "custom":  # a file never names a type to import (loading runs no code)
        raise ValueError(
            f"graph.save: an output is a {treedef.meta[0].__name__}, a registered tl.tree node, which a graph file "
            "cannot hold; return its fields as a tuple or dict"
        )
    items = [_encode_structure(c, counter) for c in children]
    if kind == "dict":
        return {"dict": [[encode(k, "output key"), s] for k, s in zip(treedef.meta, items)]}
    if kind == "namedtuple":
        return {"namedtuple": [treedef.meta.__name__, list(treedef.meta._fields), items]}
    return {kind: items}


# ---------------------------------------------------------------- load
def load(path, backend=None) -> Graph:
    """Load a graph saved by ``Graph.save`` / ``f.save``; nothing in the files is executed.

    Captures saved without their values become arguments: pass them as
    keyword arguments named as in ``graph.captures``.  ``backend`` overrides
    the backend the graph was saved on.
    """
    json_path, npz_path = _paths(path)
    if os.path.isdir(json_path):
        raise IsADirectoryError(f"graph.load: {json_path!r} is a folder, not a graph file")
    with open(json_path, "rb") as fh:
        raw_text = fh.read()
    try:
        doc = json.loads(raw_text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise GraphFormatError(
            f"{json_path}: not a tensorlib graph file (unreadable JSON: {type(e).__name__}: {e})"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GraphFormatError(
            f"{json_path}: not a tensorlib graph file (format "
            f"{doc.get('format') if isinstance(doc, dict) else type(doc).__name__!r}, "
            f"expected {FORMAT!r})"
        )
    version = doc.get("version")
    if type(version) is not int or not 1 <= version <= VERSION:  # JSON true is no version 1
        raise GraphFormatError(
            f"{json_path}: graph format version {version!r} is not supported "
            f"(this tensorlib reads versions 1 to {VERSION})"
        )
    try:
        with _Arrays(npz_path) as arrays:
            if version >= 2:
                token = arrays.token()
                if token != _get(doc, "token", str):
                    raise GraphFormatError(
                        f"the array file {npz_path} belongs to another save of the graph "
                        "(their tokens differ): the files were mixed or a save was interrupted"
                    )
            return _build(doc, arrays, backend)
    except GraphFormatError as e:
        raise GraphFormatError(f"{json_path}: {e}") from None
    except (KeyError, TypeError, ValueError, IndexError, LookupError, RecursionError, OverflowError, MemoryError) as e:
        raise GraphFormatError(f"{json_path}: malformed graph file ({type(e).__name__}: {e})") from None


class _Arrays:
    """The ``.npz`` read lazily: a member is decompressed only when the graph names it, and only after its
    header's shape and dtype (and its size in the archive) match what the graph declares."""

    def __init__(self, npz_path):
        self.path = npz_path
        try:
            self.zip = zipfile.ZipFile(npz_path)
        except FileNotFoundError:
            raise GraphFormatError(f"the array file {npz_path} is missing") from None
        except _ZIP_ERRORS as e:
            raise GraphFormatError(f"the array file {npz_path} is not an .npz archive ({e})") from None
        self.members = {
            name[:-4]: info for name, info in ((i.filename, i) for i in self.zip.infolist()) if name.endswith(".npy")
        }

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.zip.close()

    def __contains__(self, key):
        return key in self.members

    def token(self):
        info = self.members.get(_TOKEN)
        if info is None or info.file_size > _NPY_HEADER_MAX:
            return None
        value = self._read(info)
        return str(value) if value.dtype.kind == "U" and value.ndim == 0 else None

    def get(self, key, shape, dtype):
        info = self.members[key]
        try:
            with self.zip.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                read_header = {
                    (1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0,
                }.get(version)
                if read_header is None:
                    raise ValueError(f".npy format version {version} is not supported")
                header = read_header(fh, max_header_size=_NPY_HEADER_MAX)
        except (*_ZIP_ERRORS, SyntaxError) as e:
            raise GraphFormatError(f"array {key!r} in {self.path} is corrupt ({e})") from None
        stored_shape, _, stored_dtype = header
        if stored_dtype != dtype or tuple(stored_shape) != tuple(shape):
            raise GraphFormatError(
                f"array {key!r} is {stored_dtype}{list(stored_shape)}, the graph says "
                f"{np.dtype(dtype).name}{list(shape)}"
            )
        if not _nbytes(shape, dtype) <= info.file_size <= _nbytes(shape, dtype) + _NPY_HEADER_MAX:
            raise GraphFormatError(
                f"array {key!r} takes {info.file_size} bytes in {self.path}, not the "
                f"{_nbytes(shape, dtype)} its shape {list(shape)} needs"
            )
        # graph.save stores its arrays (np.savez): a compressed member is not one it wrote, and its declared size
        # is no bound on the bytes behind it (a 390 KB file decompressed into 381 MiB), so its body is never read.
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise GraphFormatError(
                f"array {key!r} in {self.path} is compressed ({info.compress_size} bytes for {info.file_size}), "
                "which graph.save never writes: the file is corrupt or foreign"
            )
        return self._read(info)

    def _read(self, info):
        try:
            with self.zip.open(info) as fh:
                return np.lib.format.read_array(fh, allow_pickle=False)
        except _ZIP_ERRORS as e:
            raise GraphFormatError(
                f"array {info.filename!r} in {self.path} is corrupt or holds pickled objects ({e})"
            ) from None


def _get(obj, key, kind):
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise GraphFormatError(f"field {key!r} is missing or not a {getattr(kind, '__name__', kind)}")
    return value


def _shape_dtype(entry):
    shape = _get(entry, "shape", list)
    if not all(d is None or (isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**63) for d in shape):
        raise GraphFormatError(f"bad shape {shape!r}")
    return tuple(shape), _dtypes.as_dtype(_get(entry, "dtype", str))


def _array(arrays, key, shape, dtype, what):
    if key not in arrays:
        raise GraphFormatError(f"{what}: array {key!r} is missing from the .npz file")
    try:
        return arrays.get(key, shape, dtype)
    except GraphFormatError as e:
        raise GraphFormatError(f"{what}: {e}") from None


def _build(doc, arrays, backend) -> Graph:
    if not hasattr(backend, "name"):
        backend = _backends.get(backend if backend is not None else _get(doc, "backend", str))
    graph = Graph(_get(doc, "name", str), backend)
    graph.quiet = _get(doc, "quiet", bool) if "quiet" in doc else False
    env: dict = {}

    def define(entry, tensor):
        key = _get(entry, "id", int)
        if key in env:
            raise GraphFormatError(f"value id {key} is defined twice")
        env[key] = tensor

    for entry in _get(doc, "inputs", list):
        define(entry, graph.add_input(*_shape_dtype(entry), _get(entry, "name", str)))
    for entry in _get(doc, "captures", list):
        shape, dtype = _shape_dtype(entry)
        if None in shape:
            raise GraphFormatError(f"capture {entry.get('name')!r} has an unknown dimension")
        name, kind, source = _get(entry, "name", str), _get(entry, "kind", str), None
        if kind not in _CAPTURE_KINDS:
            raise GraphFormatError(f"capture {name!r} has an unknown kind {kind!r}")
        if any(c.name == name for c in graph.captures):  # fed by name: a second one could never be fed
            raise GraphFormatError(f"two captures are named {name!r}")
        if _get(entry, "saved", bool):
            source = _array(arrays, f"capture_{name}", shape, dtype, f"capture {name!r}")
            if kind == "variable":  # files of tensorlib before the flag was saved: trainable, as before
                source = Variable(
                    source, name=name, trainable=_get(entry, "trainable", bool) if "trainable" in entry else True
                )
            else:
                source = backend.asarray(source)
        site = entry.get("site") if isinstance(entry.get("site"), str) else None
        graph.add_capture(name, shape, dtype, source, kind if source is not None else "feed", site)
        define(entry, graph.captures[-1].tensor)
    for entry in _get(doc, "constants", list):
        shape, dtype = _shape_dtype(entry)
        if None in shape or _nbytes(shape, dtype) > _MAX_CONSTANT_BYTES:
            raise GraphFormatError(
                f"a constant is declared as {dtype.name}{list(shape)}: graphs hold constants "
                f"of at most {_MAX_CONSTANT_BYTES} bytes"
            )
        value = backend.asarray(_array(arrays, _get(entry, "key", str), shape, dtype, "constant"))
        define(entry, graph.add_constant(value, dispatch.WeakScalar if entry.get("weak") is True else None))
    for k, entry in enumerate(_get(doc, "nodes", list)):
        op_type = _get(entry, "op", str)
        op = ASSIGN if op_type == ASSIGN.name else _ops.get(op_type)
        if op is None:
            raise GraphFormatError(
                f"node {k} uses op type {op_type!r}, which is not registered in this "
                "process (define it with tl.ops.defop before loading)"
            )
        if op_type in _UNLOADABLE:
            raise GraphFormatError(f"node {k} uses op type {op_type!r}: {_UNLOADABLE[op_type]}")
        ins = []
        for i in _get(entry, "inputs", list):
            if type(i) is not int or i not in env:  # JSON false is no id (False == 0 would find value 0)
                raise GraphFormatError(f"node {k} ({op_type}) uses value {i!r} before it is defined")
            ins.append(env[i])
        attrs = {
            name: _build(_get(v, "$graph", dict), arrays, backend)
            if isinstance(v, dict) and "$graph" in v
            else decode(v)
            for name, v in _get(entry, "attrs", dict).items()
        }
        site = entry.get("site") if isinstance(entry.get("site"), str) else None
        scope = entry.get("scope", [])
        if not isinstance(scope, list) or not all(isinstance(name, str) for name in scope):
            raise GraphFormatError(f"node {k} ({op_type}): scope must be a list of strings, got {scope!r:.60}")
        scope = tuple(scope)
        if op is ASSIGN:
            if len(ins) != 2 or not any(ins[0] is c.tensor and c.kind in ("variable", "feed") for c in graph.captures):
                raise GraphFormatError(f"node {k} (AssignVariable) must assign a Variable capture")
            if set(attrs) - {"how"} or attrs.get("how", "assign") not in ("assign", *UPDATES):
                raise GraphFormatError(
                    f"node {k} (AssignVariable): attributes must be how=assign|assign_add|assign_sub"
                )
            outs = graph.add_node(ASSIGN, ins, attrs, (), site, scope=scope)
        else:
            try:
                bound = op.bind_attrs(attrs) if attrs else dict(op.defaults)
                _check_attribute_kinds(op, bound)
                _check_subgraphs(op_type, ins, bound)
                outs = graph.add_node(op, ins, bound, site=site, scope=scope)
            except (ValueError, TypeError, IndexError, AttributeError) as e:
                raise GraphFormatError(f"node {k} ({op_type}) does not fit its inputs: {e}") from None
        recorded = _get(entry, "outputs", list)
        if len(recorded) != len(outs):
            raise GraphFormatError(
                f"node {k} ({op_type}) records {len(recorded)} outputs, its shape rule gives {len(outs)}"
            )
        for rec, out in zip(recorded, outs):
            if _shape_dtype(rec) != (tuple(out.shape), out.dtype):
                raise GraphFormatError(
                    f"node {k} ({op_type}) records output {_shape_dtype(rec)}, its shape rule "
                    f"gives {(tuple(out.shape), out.dtype)}"
                )
            define(rec, out)
    outputs = _get(doc, "outputs", list)
    if not all(type(i) is int and i in env for i in outputs):
        raise GraphFormatError("an output refers to an undefined value")
    graph.outputs = [env[i] for i in outputs]
    counter = [0]
    graph.structure = _decode_structure(doc.get("structure"), counter)
    if counter[0] != len(graph.outputs):
        raise GraphFormatError(
            f"the output structure {graph.structure!r} holds {counter[0]} tensors for {len(graph.outputs)} outputs"
        )
    if "signature" in doc:
        graph.signature = _decode_signature(doc["signature"], len(graph.inputs))
    return graph


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value) -> bool:
    return isinstance(value, (int, float, complex, np.number, np.bool_))


def _is_int_tuple(value) -> bool:
    return isinstance(value, tuple) and all(_is_int(v) for v in value)


def _is_number_tree(value) -> bool:
    return _is_number(value) or isinstance(value, tuple) and len(value) > 0 and all(_is_number_tree(v) for v in value)


# What an attribute whose default is None holds, by its name, as the op wrappers pass it (besides None); the
# control-flow ones by _check_subgraphs.  tests/test_graphleft.py checks every registered op's
# None-default attributes are named here.
NONE_DEFAULT_KINDS = {
    "axis": (_is_int_tuple, "an int or a tuple of ints"),
    "seed": (_is_int, "an int"),
    "fill_value": (_is_int, "an int"),
    "length": (_is_int, "an int"),
    "rcond": (_is_number, "a number"),
    "posinf": (_is_number, "a number"),
    "neginf": (_is_number, "a number"),
    "dtype": (lambda v: isinstance(v, np.dtype), "a dtype"),
    "rule": (lambda v: isinstance(v, str), "a str"),
    "noise_shape": (_is_int_tuple, "a tuple of ints"),
}
# The attributes _check_subgraphs checks (the control-flow nodes' subgraphs and loop bound).
SUBGRAPH_ATTRIBUTES = frozenset(("true_graph", "false_graph", "cond_graph", "body_graph", "body", "maximum_iterations"))


def _check_attribute_kinds(op, attrs) -> None:
    """An attribute holds the kind of value its default has, as the op wrappers pass it: a bool flag
    (``keepdims``, ``reverse``) a bool or 0/1 (``tl.scan(..., reverse=1)`` saves 1), a number (``alpha``,
    ``on_value``) a number (``constant_values`` also a tuple of them, per axis; an int also None, a size unknown
    when traced), a string a string (``padding``
    also explicit pairs), a tuple a tuple, a dtype a dtype, and one whose default is None what
    :data:`NONE_DEFAULT_KINDS` says (``axis``: None, an int or a tuple of ints).  Shape rules read flags by
    truthiness and skip value attributes, so a file breaking this would load and fail in a kernel when the
    graph runs (a list ``axis`` did: TypeError from the Sum kernel)."""
    for name, default in op.defaults.items():
        value = attrs[name]
        if type(default) is bool:
            if not (isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1))):
                raise ValueError(f"attribute {name} is {value!r:.80}, not a bool")
        elif isinstance(default, (int, float, complex)):
            # An int may be a size that is unknown when traced (tl.scan's length over a None dimension).
            if not (_is_number(value) or name == "constant_values" and _is_number_tree(value)) and (
                value is not None or type(default) is not int
            ):
                raise ValueError(f"attribute {name} is {value!r:.80}, not a number")
        elif isinstance(default, (str, tuple, list, np.dtype)):
            kinds = next(k for k in (str, tuple, list, np.dtype) if isinstance(default, k))
            if not isinstance(value, (str, tuple) if kinds is str else kinds):
                raise ValueError(f"attribute {name} is {value!r:.80}, not a {kinds.__name__}")
        elif default is None and value is not None and name not in SUBGRAPH_ATTRIBUTES:
            test, text = NONE_DEFAULT_KINDS.get(name, (None, "a value its op takes"))
            if (
                test is None
                and isinstance(value, (list, dict, slice, type(Ellipsis)))
                or test
                and not (test(value) or name == "axis" and _is_int(value))
            ):
                raise ValueError(f"attribute {name} is {value!r:.80}, not None or {text}")


def _check_subgraphs(op_type, ins, attrs) -> None:
    """A control-flow node's subgraphs take what the node gives them and return what it passes on: their shape
    rules read the subgraphs' outputs only, so a file that breaks this would load and fail in a kernel."""
    if op_type not in ("Cond", "While", "Scan"):
        return
    names = {"Cond": ("true_graph", "false_graph"), "While": ("cond_graph", "body_graph"), "Scan": ("body",)}[op_type]
    for name in names:
        if not isinstance(attrs[name], Graph):
            raise ValueError(f"attribute {name} is not a graph")
    graphs = {name: attrs[name] for name in names}
    if op_type == "Cond":
        if not ins or tuple(ins[0].shape) != ():
            raise ValueError("the predicate (the first input) is not a scalar")
        expected = {name: [_spec_of(t) for t in ins[1:]] for name in ("true_graph", "false_graph")}
        results = [("false_graph", "true_graph")]
    elif op_type == "While":
        expected = {name: [_spec_of(t) for t in ins] for name in ("cond_graph", "body_graph")}
        results = []
        n = attrs["n_vars"]
        if [_spec_of(o) for o in attrs["body_graph"].outputs] != [_spec_of(t) for t in ins[:n]]:
            raise ValueError("body_graph does not return the loop variables' shapes and dtypes")
        if [tuple(o.shape) for o in attrs["cond_graph"].outputs] != [()]:
            raise ValueError("cond_graph does not return one scalar")
        bound = attrs["maximum_iterations"]
        if bound is not None and (type(bound) is not int or bound < 0):
            raise ValueError(f"maximum_iterations {bound!r} is not a non-negative int")
    elif op_type == "Scan":
        n_carry, n_xs, length = attrs["n_carry"], attrs["n_xs"], attrs["length"]
        xs = ins[n_carry : n_carry + n_xs]
        if type(attrs["history"]) is not bool:
            raise ValueError(f"history {attrs['history']!r} is not a bool")
        if any(not x.shape or x.shape[0] != length for x in xs):
            raise ValueError(f"an xs input does not have the length {length}")
        steps = [_spec_of(t) for t in ins[:n_carry]] + [(tuple(x.shape[1:]), x.dtype) for x in xs]
        expected = {"body": steps + [_spec_of(t) for t in ins[n_carry + n_xs :]]}
        if [_spec_of(o) for o in attrs["body"].outputs[:n_carry]] != steps[:n_carry]:
            raise ValueError("body does not return the carry's shapes and dtypes")
        results = []
    for name, given in expected.items():
        got = [_spec_of(t) for t in graphs[name].inputs]
        if got != given:
            raise ValueError(f"subgraph {name} takes {got}, the node gives it {given}")
    for a, b in results:
        if [_spec_of(o) for o in graphs[a].outputs] != [_spec_of(o) for o in graphs[b].outputs]:
            raise ValueError(f"subgraphs {a} and {b} return different shapes or dtypes")


def _spec_of(t) -> tuple:
    return tuple(t.shape), np.dtype(t.dtype)


def decode(value):
    """The inverse of :func:`encode`; anything it would not produce raises GraphFormatError."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise GraphFormatError(f"attribute value {value!r:.80} has no type tag")
    ((tag, body),) = value.items()
    if tag == "$float" and isinstance(body, str):
        return float(body)
    if tag == "$complex" and isinstance(body, list) and len(body) == 2 and all(isinstance(b, str) for b in body):
        return complex(float(body[0]), float(body[1]))
    if tag in ("$tuple", "$list") and isinstance(body, list):
        items = [decode(v) for v in body]
        return tuple(items) if tag == "$tuple" else items
    if tag == "$dict" and isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body):
        return {decode(k): decode(v) for k, v in body}
    if tag == "$slice" and isinstance(body, list) and len(body) == 3:
        return slice(*(decode(v) for v in body))
    if tag == "$ellipsis" and body is True:
        return Ellipsis
    if tag == "$dtype" and isinstance(body, str):
        return _dtypes.as_dtype(body)
    if tag == "$scalar" and isinstance(body, list) and len(body) == 2 and isinstance(body[0], str):
        return _dtypes.as_dtype(body[0]).type(decode(body[1]))
    raise GraphFormatError(f"unknown attribute encoding {tag!r}")


def _decode_signature(doc, n_inputs: int) -> tuple:
    """The inverse of :func:`_encode_signature`: ``(parameter names, TreeDef of (args, kwargs))``."""
    names = doc.get("names") if isinstance(doc, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise GraphFormatError(f"bad signature {doc!r:.80}")
    counter = [0]
    treedef = _decode_structure(doc.get("structure"), counter)
    parts = treedef.children if treedef.kind == "tuple" else ()
    if (
        len(parts) != 2
        or parts[0].kind != "tuple"
        or len(parts[0].children) != len(names)
        or parts[1].kind != "dict"
        or not all(isinstance(k, str) for k in parts[1].meta)
        or counter[0] != n_inputs
    ):
        raise GraphFormatError(f"the signature {treedef!r:.80} does not fit the graph's {n_inputs} inputs")
    return names, treedef


def _decode_structure(s, counter) -> tree.TreeDef:
    """The inverse of :func:`_encode_structure`; output ``i`` must be the i-th tensor (as saves write it)."""
    if not isinstance(s, dict) or len(s) != 1:
        raise GraphFormatError(f"bad output structure {s!r:.80}")
    ((kind, body),) = s.items()
    if kind == "tensor" and type(body) is int and body == counter[0]:
        counter[0] += 1
        return tree.TreeDef("leaf", None, ())
    if kind == "const":
        value = decode(body)
        return tree.TreeDef("none", None, ()) if value is None else tree.TreeDef("constant", value, ())
    if kind in ("tuple", "list") and isinstance(body, list):
        return tree.TreeDef(kind, None, tuple(_decode_structure(x, counter) for x in body))
    if kind == "dict" and isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body):
        keys = tuple(decode(k) for k, _ in body)
        if not all(isinstance(k, (str, int, float, tuple)) or k is None for k in keys) or len(set(keys)) != len(keys):
            raise GraphFormatError(f"bad output dict keys {keys!r:.80}")
        return tree.TreeDef("dict", keys, tuple(_decode_structure(v, counter) for _, v in body))
    if kind == "namedtuple" and isinstance(body, list) and len(body) == 3:
        name, fields, items = body
        if isinstance(fields, list) and isinstance(items, list) and len(fields) == len(items):
            children = tuple(_decode_structure(x, counter) for x in items)
            return tree.TreeDef("namedtuple", _namedtuple_type(name, tuple(fields)), children)
    raise GraphFormatError(f"bad output structure {s!r:.80}")


_namedtuple_types: dict = {}


def _namedtuple_type(name, fields) -> type:
    """A named tuple type of this name and fields, one per pair (so loaded structures compare equal); the
    saved type itself is never imported from a file."""
    key = (name, fields)
    if key not in _namedtuple_types:
        if not isinstance(name, str) or not all(isinstance(f, str) for f in fields):
            raise GraphFormatError(f"bad named tuple {name!r:.40} with fields {fields!r:.80}")
        try:
            _namedtuple_types[key] = collections.namedtuple(name, fields)
        except ValueError as e:
            raise GraphFormatError(f"bad named tuple {name!r:.40}: {e}") from None
    return _namedtuple_types[key]
