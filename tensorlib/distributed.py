"""tensorlib on a Dask cluster: functions over the blocks of a dask array, data-parallel gradients.

Dask (``dask.array`` + ``dask.distributed``) is the engine; tensorlib only says
what runs on each block.  A function is pickled once on the client, sent once
to each worker (``client.scatter(..., broadcast=True)``) and kept there in a
per-process cache keyed by its content, where a ``tl.function`` traces it once
per block signature: later blocks, later calls and later training steps reuse
the graph and the weights the function closes over, which are never re-sent
per block.  Without a distributed client the same graph runs on dask's local
scheduler.

dask and distributed are optional (``pip install "tensorlib[distributed]"``):
they are imported when a function of this module is called, never by
``import tensorlib``.

>>> import numpy as np, dask.array as da, tensorlib as tl
>>> x = da.from_array(np.linspace(-1.0, 1.0, 12).reshape(6, 2), chunks=(4, 2))
>>> y = tl.distributed.map_blocks(lambda b: tl.tanh(b) * 2.0, x)
>>> y.chunks
((4, 2), (2,))
>>> bool(np.allclose(y.compute(), 2.0 * np.tanh(x.compute())))
True
"""

from __future__ import annotations

import collections
import functools
import hashlib
import os
import io
import pickle
import string
import sys
import sysconfig
import threading
import types
import weakref
from typing import Any, Callable

import numpy as np

from . import dtypes as _dtypes, tree
from .tensor import Tensor, TensorSpec, Variable

__all__ = ["from_npy", "map_blocks", "value_and_grad"]

# How many shipped functions a worker process (and a client, per Client) keeps; the least recently used
# one is dropped first, and re-sent if it is used again.
CACHE_SIZE = 16
# ... and at most this many bytes of them (pickled): past it the oldest go first, down to the newest one
# however big (a loop that maps a function over new weights at every step would otherwise keep 16 copies).
CACHE_BYTES = 256 * 2**20

_worker_cache: collections.OrderedDict = collections.OrderedDict()  # token -> _Shipped, per process
_client_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Client -> {token: Future}
# (token of a shipped value_and_grad, parameter and block signatures) -> the dtype of its loss, the
# treedef and specs of its aux.
_step_signatures: collections.OrderedDict = collections.OrderedDict()
_cache_lock = threading.Lock()
# A worker's copy of a function is shared by the worker's threads, and a
# tl.function is not guarded against two threads tracing it at once; so a
# worker with several threads runs one shipped call at a time (BLAS and the
# kernels still use every core inside it).  One thread per worker process is
# the recommended setup.
_run_lock = threading.Lock()


def _dask_array():
    try:
        import dask.array as da
    except ImportError as e:  # pragma: no cover - the ci extra installs dask
        raise ImportError('tl.distributed needs dask: pip install "tensorlib[distributed]"') from e
    return da


def _default_client(client):
    """The given client, else the current distributed client, else None (dask's local scheduler)."""
    if client is not None:
        return client
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


# ---------------------------------------------------------------- shipping functions to workers
class _Slot:
    """Marks an argument that comes from a block (or per-call data) rather than from the shipped function."""

    def __repr__(self):
        return "<block>"

    def __reduce__(self):
        return "_SLOT"  # unpickles as this module's one instance, so ``is _SLOT`` holds on workers


_SLOT = _Slot()


def _rebuild_tensor(value, backend, variable, name, trainable):
    from .ops.creation import tensor

    if variable:
        return Variable(value, name=name, trainable=trainable, backend=backend)
    return tensor(value, backend=backend)


def _parameter_variable(shape, dtype, backend, name, trainable):
    """A worker's copy of a Variable that is also a parameter: its value comes with each call."""
    return Variable(np.zeros(shape, dtype), name=name, trainable=trainable, backend=backend)


@functools.cache
def _library_roots() -> tuple:
    """The folders of installed code (the standard library, site-packages, tensorlib itself)."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots.add(os.path.dirname(os.path.abspath(__file__)))
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots)


def _is_user_code(obj) -> bool:
    """A Python function, class or module from the caller's own code (a script, a notebook, a module of
    their project)."""
    if isinstance(obj, types.ModuleType):
        module = obj
    elif isinstance(obj, (types.FunctionType, type)):
        module = sys.modules.get(obj.__module__)
    else:
        return False
    path = getattr(module, "__file__", None)  # None: cloudpickle's own rule decides
    return path is not None and not os.path.realpath(path).startswith(_library_roots())


def _class_by_value(cls: type, reduced: tuple) -> tuple:
    """cloudpickle's reduction ``reduced`` of class ``cls`` by value, made to leave the caller's class alone.

    With the class's tracker id, a process that holds the class -- the caller's own, where the local
    scheduler's copy is made -- got that class back and had the pickled copies of its methods set on it,
    their globals frozen at the call: the caller's class changed under them.  So a class comes back as a
    new class, without its id; except an exception class, which must stay the caller's own so that
    ``except TheirError:`` catches what a block raised: it keeps its id, and a process that sent it skips
    the setting of its state (``_sent_class_setstate``)."""
    make, args, *rest = reduced
    if issubclass(cls, BaseException):
        with _cache_lock:
            _sent_classes.add(cls)
        return (make, args, *rest[:-1], _sent_class_setstate)
    return (make, args[:-2] + (None,) + args[-1:], *rest)


# The exception classes this process pickled by value: the caller's own, which unpickling leaves alone.
_sent_classes: weakref.WeakSet = weakref.WeakSet()


def _sent_class_setstate(cls: type, state) -> type:
    """cloudpickle's ``_class_setstate``, except on a class this process sent itself (found again by its
    tracker id), which stays as it is."""
    with _cache_lock:
        sent = cls in _sent_classes
    if sent:
        return cls
    import cloudpickle

    return cloudpickle.cloudpickle._class_setstate(cls, state)


def _dumps(obj, parameters=()) -> bytes:
    """cloudpickle, with Tensors and Variables sent as their values (a Tensor holds its backend module),
    and the caller's own functions, classes and modules sent by value, with the globals they read as they
    are now.
    The Variables in ``parameters`` go without their values, which each call sends (so the bytes, and the
    token, stay the same from one training step to the next).

    By reference (cloudpickle's rule for any function its module can be imported for), a worker would
    import the module itself (failing where it is not on the worker's path) and read its own copy of
    the module's globals; and the bytes, so the token that names the traced copy, would not change when
    a global changed or the module was reloaded with new code: the stale graph would run.  A function
    whose globals cannot be pickled (a lock, a client) goes by reference, as before.
    """
    import cloudpickle

    class Pickler(cloudpickle.CloudPickler):
        def reducer_override(self, value):
            if isinstance(value, Tensor):
                if value._value is None:
                    raise TypeError("tl.distributed: a symbolic Tensor cannot be sent to a worker")
                is_var = isinstance(value, Variable)
                if is_var and any(value is p for p in parameters):
                    return _parameter_variable, (
                        value.shape,
                        value.dtype.name,
                        value.backend.name,
                        value.name,
                        value.trainable,
                    )
                return _rebuild_tensor, (
                    value.numpy(),
                    value.backend.name,
                    is_var,
                    value.name if is_var else None,
                    value.trainable if is_var else None,
                )
            if isinstance(value, type):
                if self.by_value and _is_user_code(value):
                    return _class_by_value(value, cloudpickle.cloudpickle._dynamic_class_reduce(value))
                reduced = super().reducer_override(value)
                by_value = isinstance(reduced, tuple) and reduced[-1] is cloudpickle.cloudpickle._class_setstate
                return _class_by_value(value, reduced) if by_value else reduced
            if self.by_value and _is_user_code(value):
                if isinstance(value, types.ModuleType):  # read as ``module.name``: its namespace, by value
                    namespace = {k: v for k, v in vars(value).items() if k != "__builtins__"}
                    return cloudpickle.cloudpickle.dynamic_subimport, (value.__name__, namespace)
                return self._dynamic_function_reduce(value)
            return super().reducer_override(value)

    for by_value in (True, False):
        buf = io.BytesIO()
        pickler = Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.by_value = by_value
        try:
            pickler.dump(obj)
        except Exception:
            if not by_value:
                raise
            continue
        return buf.getvalue()


def _load_shipped(token: str, data: bytes) -> "_Shipped":
    """Unpickle on a worker, or return the copy this process already holds (with its traced graphs)."""
    with _cache_lock:
        shipped = _worker_cache.get(token)
        if shipped is not None:
            _worker_cache.move_to_end(token)
            return shipped
    fn, signature, args, kwargs = pickle.loads(data)
    shipped = _Shipped(fn, signature, args, kwargs, token=token, nbytes=len(data))
    with _cache_lock:
        shipped = _worker_cache.setdefault(token, shipped)
        _trim(_worker_cache, lambda s: s.nbytes)
    return shipped


def _trim(cache: collections.OrderedDict, nbytes: Callable) -> None:
    """Drop the oldest entries past CACHE_SIZE of them or CACHE_BYTES bytes (``nbytes(value)``); the newest
    stays.  Called under ``_cache_lock``."""
    while len(cache) > 1 and (len(cache) > CACHE_SIZE or sum(nbytes(v) for v in cache.values()) > CACHE_BYTES):
        cache.popitem(last=False)


class _Shipped:
    """A Python function with its fixed arguments; ``shipped(*dynamic)`` fills the ``_SLOT`` arguments
    in order and runs the function as a ``tl.function`` (one trace per signature, kept)."""

    def __init__(self, fn, signature, args, kwargs, token=None, nbytes=None):
        self.fn, self.signature, self.args, self.kwargs = fn, signature, tuple(args), dict(kwargs)
        self.data = None
        if token is None:
            self.data = self._dumps()
            token, nbytes = hashlib.sha1(self.data).hexdigest(), len(self.data)
        self.token, self.nbytes = token, nbytes  # nbytes: the size of the pickled function, for the caches
        self._function = None
        # Which arguments are containers with slots inside (the others are passed as they are, unflattened).
        self._nested_slots = [a is not _SLOT and any(b is _SLOT for b in tree.leaves(a)) for a in self.args]

    def __reduce__(self):
        # A worker's copy keeps no pickled bytes (its weights would be held twice); it pickles again
        # only when dask moves it to another worker, under the token it arrived with.
        data = self.data if self.data is not None else self._dumps()
        return _load_shipped, (self.token, data)

    def _dumps(self) -> bytes:
        return _dumps((self.fn, self.signature, self.args, self.kwargs), getattr(self.fn, "variables", ()))

    def __dask_tokenize__(self):
        # The token names the content already; without this dask pickled the function and its weights
        # twice more at every map_blocks call to name the tasks.
        return ("tl.distributed._Shipped", self.token)

    def function(self):
        if self._function is None:
            from .graph.tracing import Function

            self._function = Function(self.fn, self.signature)
        return self._function

    def arguments(self, dynamic) -> tuple:
        """The arguments with the ``_SLOT`` leaves (also inside nested arguments) filled from ``dynamic``."""
        dynamic = iter(dynamic)

        def fill(a):
            return next(dynamic) if a is _SLOT else a

        return tuple(tree.map(fill, a) if nested else fill(a) for a, nested in zip(self.args, self._nested_slots))

    def __call__(self, *dynamic):
        with _run_lock:
            return self.run(*dynamic)

    def run(self, *dynamic):
        """``self(*dynamic)`` for a caller that holds ``_run_lock``."""
        return self.function()(*self.arguments(dynamic), **self.kwargs)


def _shipped(fn, args, kwargs, what) -> _Shipped:
    if not callable(fn):
        raise TypeError(f"{what}: expected a function, got {type(fn).__name__}")
    from .graph.tracing import Function

    if isinstance(fn, Function):
        return _Shipped(fn.python_function, fn.input_signature, args, kwargs)
    return _Shipped(fn, None, args, kwargs)


def _traced(shipped: _Shipped, client) -> _Shipped:
    """What the client traces: without a cluster, the copy that dask's local scheduler will run (made from
    the bytes a worker gets, so that its arguments and closures are their values at this call there too,
    and kept with its graphs for later calls, as a worker keeps its own); with one, the function itself."""
    return _load_shipped(shipped.token, shipped.data) if client is None else shipped


def _reference(shipped: _Shipped, client):
    """What the block tasks take as the function: a future of the copy scattered once to every worker."""
    if client is None:
        return _traced(shipped, None)  # local scheduler: one object in the graph, shared by its threads
    with _cache_lock:
        futures = _client_cache.setdefault(client, collections.OrderedDict())
        future, _ = futures.get(shipped.token, (None, 0))
        if future is not None:
            futures.move_to_end(shipped.token)
    if future is None or future.status != "finished":
        future = client.scatter(shipped, broadcast=True, hash=False)
        with _cache_lock:
            futures[shipped.token] = future, shipped.nbytes
            _trim(futures, lambda entry: entry[1])
    return future


# ---------------------------------------------------------------- blocks along the batch axis
def _aligned(arrays, rows, what):
    """The dask arrays, chunked along axis 0 as ``rows`` and in one chunk along every other axis, in the
    dtypes tensorlib holds their values in."""
    da = _dask_array()
    out = []
    for i, a in enumerate(arrays):
        if not isinstance(a, da.Array):
            raise TypeError(f"{what}: data[{i}] must be a dask array chunked along axis 0, got {type(a).__name__}")
        if any(np.isnan(n) for n in a.shape):
            raise ValueError(
                f"{what}: data[{i}] has unknown chunk sizes (shape {a.shape}, as after boolean indexing); "
                "call its .compute_chunk_sizes() first"
            )
        dtype = _tensorlib_dtype(a.dtype, f"{what}: data[{i}]")
        if a.ndim == 0 or a.shape[0] != sum(rows):
            raise ValueError(
                f"{what}: data[{i}] has shape {a.shape} but the batch has {sum(rows)} rows "
                f"(every array must share axis 0)"
            )
        wanted = (tuple(rows),) + tuple((n,) for n in a.shape[1:])
        a = a if a.chunks == wanted else a.rechunk(wanted)
        out.append(a if a.dtype == dtype else a.astype(dtype))
    return out


def _tensorlib_dtype(dtype, what: str) -> np.dtype:
    """The dtype tensorlib holds values of ``dtype`` in (uint8 -> int32, in native byte order, as ``tl.tensor``: a
    big-endian array from a FITS or HDF5 source is converted block by block, as ``from_npy`` converts a big-endian
    file); ``what`` names the data in the error for a dtype it cannot hold."""
    try:
        return _dtypes.of_array(dtype)
    except TypeError:
        raise TypeError(
            f"{what} has dtype {dtype}, which tensorlib cannot hold "
            f"(supported: {', '.join(str(d) for d in _dtypes.SUPPORTED)})"
        ) from None


def _indexed(arrays, first_letter=0):
    """blockwise's (array, index) pairs: axis 0 is ``i``; every other axis its own letter, contracted."""
    letters = iter(string.ascii_letters[first_letter:].replace("i", ""))
    pairs = []
    for a in arrays:
        pairs += [a, "i" + "".join(next(letters) for _ in range(a.ndim - 1))]
    return pairs, letters


def _block_rows(rows):
    """A blockwise argument (index ``"i"``) that gives each task ``(slice of the rows its block holds,)``,
    so that an error can name the block."""
    from dask.layers import ArraySliceDep

    return ArraySliceDep((tuple(rows),))


def _block_name(rows: slice) -> str:
    return f"the block of rows {rows.start}:{rows.stop}"


def _run_on_block(what, fn, rows, run):
    """``run()``, with a note naming the function and the block on any exception it raises (the exception
    itself, its type and message, reach the caller unchanged)."""
    try:
        return run()
    except Exception as e:
        e.add_note(f"{what}: raised by {_name(fn)} on {_block_name(rows)}")
        raise


def _run_block(shipped, rows, *blocks, out_shape, out_dtype):
    (rows,) = rows
    if blocks[0].shape[0] == 0:  # no rows in, none out: f is not run on an empty block (a max of it fails)
        return np.empty((0,) + out_shape, out_dtype)
    what = "tl.distributed.map_blocks"
    out = _run_on_block(what, shipped.fn, rows, lambda: shipped(*blocks))
    if not isinstance(out, Tensor):
        raise TypeError(f"{what}: {_name(shipped.fn)} must return one Tensor per block, got {type(out).__name__}")
    n = blocks[0].shape[0]
    value = out.numpy()
    if value.shape != (n,) + out_shape or value.dtype != out_dtype:
        raise ValueError(
            f"{what}: {_name(shipped.fn)} returned shape {value.shape} dtype {value.dtype} for "
            f"{_block_name(rows)} ({n} rows); expected {(n,) + out_shape} {out_dtype}, as for the first block "
            "(the output must have one row per input row, its other axes and dtype the same for every block)"
        )
    return value


def _is_int(value) -> bool:
    """A Python or NumPy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def map_blocks(f: Callable, x, *args: Any, client=None, **kwargs: Any):
    """Evaluate ``f`` over the blocks of dask array ``x`` along axis 0; returns a lazy dask array.

    ``f`` is a ``tl.function`` or any function of tensorlib ops; it must map a
    block of ``rows`` rows to ``rows`` rows of output (an empty block gives
    an empty output without running ``f``).  Other dask arrays in
    ``args`` (also inside lists, tuples and dicts there) are cut into
    the same blocks along axis 0; all other arguments
    (weights, Tensors, NumPy arrays, Python values) and the arrays ``f``
    closes over (their values at this call) are sent once to each worker
    with the function and fed to its graph by reference at every block.
    Each worker traces ``f`` once per block
    signature (pass ``tl.function(f, input_signature=[tl.TensorSpec((None,
    ...))])`` for one trace for every block size) and keeps the graph.

    ``client``: a ``distributed.Client``; by default the current one, and
    dask's local scheduler when there is none.  The result's tasks hold
    the function as that client's data: compute it there
    (``client.compute(y)``, or ``y.compute()`` when it is the default
    client); another scheduler reports a missing ``_Shipped`` dependency.

    >>> import numpy as np, dask.array as da, tensorlib as tl
    >>> w = np.array([[1.0], [-1.0]])
    >>> x = da.from_array(np.arange(10.0).reshape(5, 2), chunks=(2, 2))
    >>> y = tl.distributed.map_blocks(lambda b, w: b @ w, x, w)
    >>> y.shape, y.compute().ravel().tolist()
    ((5, 1), [-1.0, -1.0, -1.0, -1.0, -1.0])
    """
    da = _dask_array()
    what = "tl.distributed.map_blocks"
    if not isinstance(x, da.Array):
        raise TypeError(f"{what}: x must be a dask array chunked along axis 0, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError(f"{what}: x must have a batch axis, got a 0-d array")
    for name, value in kwargs.items():
        if any(isinstance(leaf, da.Array) for leaf in tree.leaves(value)):
            raise TypeError(
                f"{what}: keyword argument {name!r} {'is' if isinstance(value, da.Array) else 'holds'} a dask "
                "array; pass the arrays to cut into blocks positionally (keyword arguments are sent whole "
                "to every worker)"
            )
    rows = x.chunks[0]
    blocked = [x] + [leaf for leaf in tree.leaves(args) if isinstance(leaf, da.Array)]
    template = [_SLOT] + [tree.map(lambda a: _SLOT if isinstance(a, da.Array) else a, arg) for arg in args]
    shipped = _shipped(f, template, kwargs, what)
    blocked = _aligned(blocked, rows, what)

    # The output's shape and dtype: traced for the first block with rows (an empty block never runs f).
    n = next((r for r in rows if r), 0)
    specs = [TensorSpec((n,) + a.shape[1:], a.dtype) for a in blocked]
    client = _default_client(client)
    graph = _traced(shipped, client).function().get_graph(*shipped.arguments(specs), **shipped.kwargs)
    if graph.structure.kind != "leaf":
        raise TypeError(
            f"{what}: {_name(shipped.fn)} must return one Tensor per block, got a {graph.structure.kind} "
            f"({graph.structure!r})"
        )
    out = graph.outputs[0]
    if None in tuple(out.shape):
        # f's input_signature leaves sizes open: the output's come from a trace for this block's shapes.
        from .graph.tracing import Function

        out = Function(shipped.fn).get_graph(*shipped.arguments(specs), **shipped.kwargs).outputs[0]
    if out.ndim == 0 or out.shape[0] != n:
        raise ValueError(
            f"{what}: {_name(shipped.fn)} maps a block of shape {specs[0].shape} to shape "
            f"{tuple(out.shape)}; the output must have one row per input row"
        )
    out_shape, out_dtype = tuple(out.shape[1:]), np.dtype(out.dtype.name)

    pairs, letters = _indexed(blocked)
    new = "".join(next(letters) for _ in out_shape)
    return da.blockwise(
        functools.partial(_run_block, out_shape=out_shape, out_dtype=out_dtype),
        "i" + new,
        _reference(shipped, client),
        None,
        _block_rows(rows),
        "i",
        *pairs,
        new_axes=dict(zip(new, out_shape)),
        concatenate=True,
        align_arrays=False,  # _aligned cut them already; the block slices are no array to align
        dtype=out_dtype,
        meta=np.empty((0,) * (1 + len(out_shape)), out_dtype),
    )


# ---------------------------------------------------------------- data-parallel gradients
def _block_value_and_grad(loss_fn, treedef, variables, has_aux):
    """The per-block step: ``(loss, aux, gradients of every parameter leaf)`` (``aux`` None without
    ``has_aux``, its leaves Tensors with it); traced on the worker.

    ``variables`` holds, per leaf, the Variable given as that parameter (else None).  As in
    ``tl.value_and_grad``, those are differentiated themselves, so a loss that reads them (a model's
    Variables, TensorFlow's style) gets their gradient: they travel with the function, the same objects
    that ``loss_fn`` reads there, and ``_weighted_partial`` gives them the call's values."""
    from .grad.api import value_and_grad as tl_value_and_grad

    argnums = tuple(range(treedef.num_leaves))

    what = "tl.distributed.value_and_grad"

    def block_value_and_grad(leaves, *batch):
        def loss_of_leaves(*values):
            loss = loss_fn(tree.unflatten(treedef, values), *batch)
            if has_aux:
                if not (isinstance(loss, (tuple, list)) and len(loss) == 2):
                    got = (
                        f"a {type(loss).__name__} of length {len(loss)}"
                        if isinstance(loss, (tuple, list))
                        else type(loss).__name__
                    )
                    raise TypeError(
                        f"{what}: with has_aux=True, {_name(loss_fn)} must return a pair (loss, aux), got {got}"
                    )
                loss, aux = loss
            if not isinstance(loss, Tensor) or loss.shape != ():
                got = f"a Tensor of shape {loss.shape}" if isinstance(loss, Tensor) else type(loss).__name__
                raise TypeError(
                    f"{what}: {_name(loss_fn)} must return the scalar loss of its batch "
                    f"(its mean, or its sum with reduction='sum'), got {got}"
                )
            if loss.dtype.kind != "f":  # tl.value_and_grad's rule, told in this function's name
                raise TypeError(
                    f"{what}: {_name(loss_fn)} must return a real float loss, got dtype {loss.dtype}; differentiate "
                    "a float (tl.real(loss) or tl.abs(loss) of a complex one, tl.cast an integer one)"
                )
            return (loss, tree.map(_aux_tensor, aux)) if has_aux else loss

        sources = [leaf if var is None else var for leaf, var in zip(leaves, variables)]
        value, grads = tl_value_and_grad(loss_of_leaves, argnums=argnums, has_aux=has_aux)(*sources)
        value, aux = value if has_aux else (value, None)
        return value, aux, grads

    def _aux_tensor(leaf):
        from .ops.creation import tensor

        if isinstance(leaf, Tensor):
            return leaf
        try:
            return tensor(leaf)
        except (TypeError, ValueError):
            raise TypeError(
                f"{what}: the aux of {_name(loss_fn)} must hold Tensors or numbers (reduced over the blocks as "
                f"the loss is), got a {type(leaf).__name__}"
            ) from None

    block_value_and_grad.__name__ = f"value_and_grad({_name(loss_fn)})"
    block_value_and_grad.variables = tuple(variables)
    return block_value_and_grad


def _weighted_partial(shipped, params, rows, *blocks, dtype, weighted, aux_shapes):
    """One row: the block's loss, flattened aux and flattened gradients, each times the block's number of
    rows when ``weighted`` (a mean loss).  ``aux_shapes``: the aux leaves' shapes, as traced for the first
    block; each block's must be the same."""
    (rows,) = rows
    n = blocks[0].shape[0]
    width = 1 + sum(int(np.prod(s)) for s in aux_shapes) + sum(np.size(p) for p in params)
    if n == 0:  # the mean loss of no rows is NaN; a block without rows adds nothing
        return np.zeros((1, width), dtype)

    def run():
        for var, value in zip(shipped.fn.variables, params):
            if var is not None:
                var.assign(value)
        return shipped.run(params, *blocks)

    with _run_lock:
        value, aux, grads = _run_on_block("tl.distributed.value_and_grad", shipped.fn, rows, run)
    aux = tree.leaves(aux)
    got = [tuple(a.shape) for a in aux]
    if got != list(aux_shapes):
        raise ValueError(
            f"tl.distributed.value_and_grad: the aux of {_name(shipped.fn)} has shapes {got} for "
            f"{_block_name(rows)} ({n} rows) but {list(aux_shapes)} for the first block: aux is reduced over the "
            "blocks as the loss is, so its shapes must not depend on the block's rows"
        )
    parts = [np.asarray(t.numpy(), dtype).ravel() for t in [value, *aux, *grads]]
    row = np.concatenate(parts)
    if weighted:
        row *= n
    return row[None, :]


def _node_sum(rows, axis, keepdims, dtype=None):
    """A node of the partial sums' tree: adds its rows in float64 (complex128) and rounds once to ``dtype``
    (the rows' own by default).  np.sum along axis 0 adds one row after the other, in the rows' dtype:
    float32 partial sums of many blocks drifted by ~n ulps where NumPy's pairwise float32 mean stays
    within a few; the rows still travel in their own dtype."""
    total = np.sum(rows, axis=axis, keepdims=keepdims, dtype=np.promote_types(rows.dtype, np.float64))
    return total.astype(rows.dtype if dtype is None else dtype, copy=False)


def value_and_grad(
    loss_fn: Callable,
    params,
    *data,
    client=None,
    split_every: int | None = None,
    reduction: str = "mean",
    has_aux: bool = False,
):
    """The mean (or sum) loss over all rows of ``data`` and its gradient with respect to ``params``, computed
    block by block on the workers and summed with dask's tree reduction.

    ``loss_fn(params, *batch)`` returns the mean loss over its batch (a
    scalar Tensor), or with ``reduction="sum"`` the sum over its batch;
    the loss must be such a mean (or sum) of per-row terms: for any other
    (a max over rows, batch statistics) the result is the rows-weighted mean
    (or the sum) of the blocks' losses, not the loss of all rows at once.
    ``params`` is a float or complex Tensor/array, or a
    nested list, tuple or dict of them (Python floats become float32, as in
    ``tl.value_and_grad``; a Variable is differentiated itself, as there, so
    a loss that reads a model's Variables given as ``params`` gets their
    gradients); each of ``data`` is a dask array whose axis 0 runs over the
    examples (chunked along it, the chunks of ``data[0]`` rule).  Each worker
    computes ``rows * value_and_grad`` for its blocks (``value_and_grad``
    with ``reduction="sum"``); dask sums those
    partial results in a tree of fan-in ``split_every`` (dask's default 4),
    and the client divides by the total rows (for a mean), so the result equals the
    single-machine gradient up to float rounding.  The parameters go to each
    worker once per call; the loss function once per worker and cluster.

    With ``has_aux=True`` (as in ``tl.value_and_grad``), ``loss_fn`` returns
    ``(loss, aux)``, ``aux`` a nested structure of Tensors or numbers whose
    shapes do not depend on the batch's rows (an accuracy, a count); it is
    reduced over the blocks as the loss is: the rows-weighted mean of the
    blocks' values (or their sum), so again a mean (or sum) of per-row
    terms comes out as over all rows at once.

    Returns ``(loss, grads)``, or ``((loss, aux), grads)`` with ``has_aux``: a
    scalar Tensor, Tensors nested like ``params`` (and like ``aux``: a float
    aux keeps its dtype; an integer or bool one becomes float64 for a mean,
    int64 for a sum).

    >>> import numpy as np, dask.array as da, tensorlib as tl
    >>> x = da.from_array(np.arange(6.0).reshape(6, 1), chunks=(4, 1))
    >>> loss, g = tl.distributed.value_and_grad(lambda p, x: tl.mean((x * p["w"]) ** 2), {"w": 2.0}, x)
    >>> float(loss), float(g["w"]), g["w"].dtype   # mean(4 x^2) = 4 * 55/6; d/dw = 2 w mean(x^2)
    (36.666666666666664, 36.66666793823242, dtype('float32'))
    >>> y = da.from_array(np.array([0, 1, 1, 0, 1, 1]), chunks=4)
    >>> def loss_fn(w, x, y):
    ...     p = tl.sigmoid(x[:, 0] * w)
    ...     return tl.mean((p - y) ** 2), {"accuracy": tl.mean(tl.cast((p > 0.5) == (y == 1), "float64"))}
    >>> (loss, aux), g = tl.distributed.value_and_grad(loss_fn, 0.5, x, y, has_aux=True)
    >>> float(aux["accuracy"])  # right on 5 of the 6 rows (x > 0 predicts 1), as over all rows at once
    0.8333333333333334
    """
    from .ops.creation import tensor

    what = "tl.distributed.value_and_grad"
    da = _dask_array()
    if not data:
        raise TypeError(f"{what}: pass at least one dask array of data after params")
    if not isinstance(data[0], da.Array):
        raise TypeError(f"{what}: data[0] must be a dask array chunked along axis 0, got {type(data[0]).__name__}")
    if data[0].ndim == 0:
        raise ValueError(f"{what}: data[0] must have a batch axis, got a 0-d array")
    if split_every is not None and (not _is_int(split_every) or split_every < 2):
        raise ValueError(f"{what}: split_every must be an int >= 2 (the fan-in of the sum's tree), got {split_every!r}")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"{what}: reduction must be 'mean' or 'sum', got {reduction!r}")
    if not callable(loss_fn):
        raise TypeError(f"{what}: expected a function, got {type(loss_fn).__name__}")
    loss_fn = getattr(loss_fn, "python_function", loss_fn)  # a tl.function: each worker traces its own
    leaves, treedef = tree.flatten(params)
    for i, v in enumerate(leaves):
        if isinstance(v, Tensor) and v._value is None:
            raise TypeError(
                f"{what}: parameter leaf {i} is a symbolic Tensor (shape {v.shape}, {v.dtype}): the workers need "
                "its value; call tl.distributed.value_and_grad outside tl.function"
            )
    # Converted as tl.value_and_grad converts its arguments: a Python float is a float32 parameter.
    values = [(v if isinstance(v, Tensor) else tensor(v)).numpy() for v in leaves]
    for i, v in enumerate(values):
        if v.dtype.kind not in "fc":
            raise TypeError(
                f"{what}: parameter leaf {i} has dtype {v.dtype}; gradients need float parameters (or complex)"
            )
    rows = data[0].chunks[0]
    blocked = _aligned(data, rows, what)
    if sum(rows) == 0 and reduction == "mean":
        raise ValueError(f"{what}: data[0] has shape {data[0].shape}: no rows to average the loss over")
    variables = [v if isinstance(v, Variable) else None for v in leaves]
    step = _block_value_and_grad(loss_fn, treedef, variables, bool(has_aux))
    shipped = _shipped(step, [_SLOT] * (1 + len(blocked)), {}, what)
    client = _default_client(client)
    loss_dtype, aux_treedef, aux_specs = _step_outputs(_traced(shipped, client), values, blocked, rows)
    # An integer or bool aux is added up as float64 (exact to 2**53), the others in their own dtypes.
    aux_dtypes = [s.dtype if s.dtype.kind in "fc" else np.dtype(np.float64) for s in aux_specs]
    # The partial sums carry the loss, the aux and every gradient in one dtype that holds them all.
    dtype = np.result_type(np.float32, loss_dtype, *aux_dtypes, *values)
    # Parameters go out with every call: once to each worker, not once per block.
    params_ref = client.scatter([values], broadcast=True, hash=False)[0] if client is not None else values
    pairs, _ = _indexed(blocked, first_letter=1)
    aux_shapes = tuple(tuple(s.shape) for s in aux_specs)
    size = 1 + sum(int(np.prod(s)) for s in aux_shapes) + sum(v.size for v in values)
    weighted = reduction == "mean"
    partial_sums = da.blockwise(
        functools.partial(_weighted_partial, dtype=dtype, weighted=weighted, aux_shapes=aux_shapes),
        "ij",
        _reference(shipped, client),
        None,
        params_ref,
        None,
        _block_rows(rows),
        "i",
        *pairs,
        new_axes={"j": size},
        adjust_chunks={"i": 1},
        concatenate=True,
        align_arrays=False,
        dtype=dtype,
        meta=np.empty((0, 0), dtype),
    )
    wide = np.promote_types(dtype, np.float64)
    total = da.reduction(
        partial_sums,
        chunk=_node_sum,
        combine=functools.partial(_node_sum, dtype=dtype),
        aggregate=functools.partial(_node_sum, dtype=wide),
        axis=0,
        split_every=split_every,
        dtype=wide,
        meta=np.empty((0,), wide),
    )
    if client is None:
        total = total.compute()
    else:
        future = client.compute(total)
        try:
            total = future.result()
        finally:
            # A failed key keeps its exception, whose traceback holds this frame and so these futures:
            # without this the cluster would keep every partial sum and the parameters of a failed call.
            future.release()
            params_ref.release()
    if reduction == "mean":
        total = total / sum(rows)
    parts = np.split(total[1:], np.cumsum([int(np.prod(s)) for s in aux_shapes] + [v.size for v in values])[:-1])
    aux = [_aux_result(part, spec, weighted) for part, spec in zip(parts, aux_specs)]
    grads = [tensor(part.reshape(v.shape).astype(v.dtype)) for part, v in zip(parts[len(aux) :], values)]
    # The loss is real; its row is complex only when a parameter (or the aux) is.
    loss = tensor(total[0].real.astype(loss_dtype))
    grads = tree.unflatten(treedef, grads)
    return ((loss, tree.unflatten(aux_treedef, aux)), grads) if has_aux else (loss, grads)


def _aux_result(total: np.ndarray, spec: TensorSpec, weighted: bool) -> Tensor:
    """An aux leaf of the whole batch from its sum over the blocks (already divided by the rows for a mean):
    in its own dtype when float or complex; an integer or bool one in float64 for a mean, int64 for a sum."""
    from .ops.creation import tensor

    if spec.dtype.kind in "fc":
        dtype = spec.dtype
    else:
        dtype, total = (np.dtype(np.float64), total.real) if weighted else (np.dtype(np.int64), np.rint(total.real))
    return tensor(total.reshape(spec.shape).astype(dtype))


def _step_outputs(shipped: _Shipped, values, blocked, rows):
    """``(loss dtype, aux treedef, aux specs)`` as the single-process ``tl.value_and_grad`` gives them: from a
    trace of the block step on the client, once per signature (the training loop's later steps find them
    here); a ``loss_fn`` that fails to trace fails here, before any task runs."""
    n = next((r for r in rows if r), 0)
    specs = _step_specs(values, blocked, n)
    key = (shipped.token, tuple((s.shape, s.dtype) for s in specs[0]), tuple((s.shape, s.dtype) for s in specs[1:]))
    with _cache_lock:
        outputs = _step_signatures.get(key)
    if outputs is None:
        loss, aux = _traced_step(shipped.function(), specs)
        aux_specs, aux_treedef = tree.flatten(aux)
        aux_specs = [TensorSpec(tuple(a.shape), np.dtype(a.dtype.name)) for a in aux_specs]
        if aux_specs:
            # Blocks of one size would not show it: an aux with a row per example (predictions) summed over
            # blocks of the same size adds up the predictions of different rows.
            from .graph.tracing import Function

            _, other = _traced_step(Function(shipped.fn), _step_specs(values, blocked, n + 1))
            other = [tuple(a.shape) for a in tree.leaves(other)]
            if other != [s.shape for s in aux_specs]:
                raise ValueError(
                    f"tl.distributed.value_and_grad: the aux of {_name(shipped.fn)} has shapes "
                    f"{[s.shape for s in aux_specs]} for a block of {n} rows but {other} for {n + 1} rows: aux is "
                    "reduced over the blocks as the loss is, so its shapes must not depend on the block's rows "
                    "(compute per-row outputs with tl.distributed.map_blocks)"
                )
        outputs = np.dtype(loss.dtype.name), aux_treedef, aux_specs
        with _cache_lock:
            _step_signatures[key] = outputs
            _trim(_step_signatures, lambda outputs: 0)
    return outputs


def _step_specs(values, blocked, n: int) -> tuple:
    """The block step's argument specs: the parameters, and each data array as a block of ``n`` rows."""
    return ([TensorSpec(v.shape, v.dtype) for v in values], *(TensorSpec((n,) + a.shape[1:], a.dtype) for a in blocked))


def _traced_step(function, specs) -> tuple:
    """``(loss, aux)`` of the block step's graph for ``specs`` (symbolic)."""
    graph = function.get_graph(*specs)
    loss, aux, _ = tree.unflatten(graph.structure, graph.outputs)
    return loss, aux


# ---------------------------------------------------------------- data that does not fit in memory
class _NpyFile:
    """A ``.npy`` file that dask reads block by block: each task maps the file where it runs and copies
    only its slice (pickling sends the path, never the data), in native byte order."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)  # tasks may run in another working directory
        header = self._map()
        self.shape, self.file_dtype = header.shape, header.dtype
        self.dtype = header.dtype.newbyteorder("=")  # tensorlib holds no big-endian arrays
        self.ndim = len(self.shape)
        _tensorlib_dtype(self.dtype, f"tl.distributed.from_npy: {self.path}")

    def _map(self):
        try:
            mapped = np.load(self.path, mmap_mode="r", allow_pickle=False)
        except Exception as e:
            if isinstance(e, OSError) and e.errno is not None:  # no file, a folder, no permission: the same
                raise type(e)(e.errno, f"tl.distributed.from_npy: {e.strerror}", self.path) from None  # error
            raise ValueError(
                f"tl.distributed.from_npy: {self.path} is not a .npy file NumPy can memory-map ({e})"
            ) from None
        if not isinstance(mapped, np.ndarray):  # an .npz archive
            mapped.close()
            raise ValueError(f"tl.distributed.from_npy: {self.path} is not a .npy file (a {type(mapped).__name__})")
        return mapped

    def __getitem__(self, index):
        mapped = self._map()
        if mapped.shape != self.shape or mapped.dtype != self.file_dtype:
            # The dask array's blocks were laid out for the old contents: reading on would give blocks of
            # the wrong size, or another dtype, without a word.
            raise ValueError(
                f"tl.distributed.from_npy: {self.path} changed since its dask array was made: it holds "
                f"{mapped.shape} {mapped.dtype}, the array was made for {self.shape} {self.file_dtype}; "
                "call from_npy again"
            )
        return np.array(mapped[index], dtype=self.dtype)


def from_npy(path, rows_per_block: int):
    """A dask array over a ``.npy`` file, read by memory map in the task that needs each block.

    Blocks are ``rows_per_block`` rows along axis 0 (whole along the other
    axes); no process ever holds more of the file than the blocks it works
    on, so the file may be far larger than any worker's memory.

    >>> import numpy as np, tempfile, os, tensorlib as tl
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npy"); np.save(path, np.arange(10.0).reshape(5, 2))
    >>> x = tl.distributed.from_npy(path, rows_per_block=2)
    >>> x.chunks, float(x.sum().compute())
    (((2, 2, 1), (2,)), 45.0)
    """
    da = _dask_array()
    source = _NpyFile(path)
    if source.ndim == 0:
        raise ValueError(f"tl.distributed.from_npy: {path} holds a 0-d array; it needs a batch axis")
    if not _is_int(rows_per_block):  # int() truncated 2.7 to 2 and read "2" and True as numbers
        raise TypeError(f"tl.distributed.from_npy: rows_per_block must be an int, got {rows_per_block!r}")
    if rows_per_block < 1:
        raise ValueError(f"tl.distributed.from_npy: rows_per_block must be >= 1, got {rows_per_block}")
    chunks = (int(rows_per_block),) + source.shape[1:]
    stat = os.stat(source.path)
    # The name is dask's cache key: the path and the file's size and mtime, so a rewritten file is re-read,
    # and the blocks, so that two arrays of one file cut differently never share a key.
    key = f"{source.path}:{stat.st_size}:{stat.st_mtime_ns}:{chunks[0]}"
    name = "npy-" + hashlib.sha1(key.encode()).hexdigest()[:16]
    return da.from_array(source, chunks=chunks, asarray=False, fancy=False, name=name)
