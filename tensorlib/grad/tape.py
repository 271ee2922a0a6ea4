"""GradientTape: records the ops that touch watched tensors, then runs the engine."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from .. import tree
from ..tensor import Tensor, Variable
from .backprop import backprop


def quiet(tape):
    """NumPy's floating-point warnings off for ``tape``'s backward pass if it recorded tl.stats (``tape._quiet``):
    those methods take their gradients at the support's ends on purpose (0 * inf in a branch not taken), and the
    forward already runs quiet."""
    return np.errstate(all="ignore") if tape._quiet else contextlib.nullcontext()


class GradientTape:
    """Records operations on watched tensors for reverse-mode differentiation.

    >>> import tensorlib as tl
    >>> x = tl.tensor(3.0)
    >>> with tl.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> float(tape.gradient(y, x))
    6.0
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._watched: set = set()
        self._variables: list = []
        self._nodes: list | None = []
        self._quiet = False  # set by tl.stats' methods recorded on it

    def __enter__(self):
        if self._nodes is None:
            raise RuntimeError("GradientTape: a non-persistent tape was already used for gradients; create a new one")
        dispatch.tapes.append(self)
        return self

    def __exit__(self, *exc):
        if self in dispatch.tapes:
            dispatch.tapes.remove(self)

    def watch(self, tensor) -> None:
        """Watch a Tensor, Variable, or a list/tuple/dict of them."""
        for t in tree.leaves(tensor):
            if not isinstance(t, Tensor):
                raise TypeError(f"GradientTape.watch: expected tensors, got {type(t).__name__}")
            if t.dtype.kind not in "fc":
                continue
            if isinstance(t, Variable):
                self._watch_variable(t)
            else:
                self._watched.add(t._id)

    def _watch_variable(self, var):
        if var._id not in self._watched:
            self._watched.add(var._id)
            self._variables.append(var)

    def watched_variables(self) -> tuple:
        return tuple(self._variables)

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops run inside this block are not recorded."""
        active = self in dispatch.tapes
        if active:
            dispatch.tapes.remove(self)
        try:
            yield
        finally:
            if active:
                dispatch.tapes.append(self)

    def _spend(self) -> None:
        """A non-persistent tape that gave its gradients stops recording, also inside its ``with`` block (as
        TensorFlow's): the next op on a Variable there crashed appending to the dropped record, and an
        optimizer step there was refused as if the gradient could still change."""
        self._nodes = None
        if self in dispatch.tapes:
            dispatch.tapes.remove(self)

    def reset(self) -> None:
        """Forget everything recorded so far."""
        self._watched = set()
        self._variables = []
        self._nodes = []

    def _nodes_or_raise(self, what):
        if self._nodes is None:
            raise RuntimeError(
                f"GradientTape.{what}: a non-persistent GradientTape can compute gradients "
                "only once; use GradientTape(persistent=True) to call it several times"
            )
        return self._nodes

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients: str = "none"):
        """Gradient of ``target`` (summed over its elements) with respect to ``sources``.

        ``sources`` may be a Tensor, a list/tuple or a dict of them; the result
        has the same structure.  Unconnected sources give None, or zeros with
        ``unconnected_gradients="zero"``.
        """
        nodes = self._nodes_or_raise("gradient")
        _check_unconnected(unconnected_gradients, "gradient")
        flat_sources, source_def = tree.flatten(sources)
        _check_sources(flat_sources, "gradient")
        targets, target_def = tree.flatten(target)
        for i, t in enumerate(targets):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"GradientTape.gradient: targets must be tensors computed under the tape, got "
                    f"{type(t).__name__} {t!r:.60} (target {i})"
                )
        from ..ops.math import ones_like

        if output_gradients is None:
            weights = [ones_like(t) for t in targets]
        else:
            # One weight per target, None meaning ones (TensorFlow's rule): never zipped short or shifted, and
            # dicts matched by key (zipped in insertion order, {"b": .., "a": ..} weighed the wrong targets).
            given, given_def = tree.flatten_as(target_def, output_gradients, is_leaf=lambda w: w is None)
            if given is None:
                raise ValueError(
                    f"GradientTape.gradient: {given_def.num_leaves} output_gradients for {len(targets)} targets "
                    f"(target shapes {[tuple(t.shape) for t in targets]}); give one per target, or None for ones "
                    f"(targets {target_def!r}, output_gradients {given_def!r})"
                )
            weights = [
                ones_like(t) if w is None else w if isinstance(w, Tensor) else dispatch.to_tensor(w, t.backend, t.dtype)
                for w, t in zip(given, targets)
            ]
            for w, t in zip(weights, targets):
                if tuple(w.shape) != tuple(t.shape):
                    raise ValueError(
                        f"GradientTape.gradient: output_gradients shape {w.shape} does not match target shape {t.shape}"
                    )
                check_cotangent_kind(w, t, "GradientTape.gradient: output_gradients")
        # Called inside its own context, a persistent tape records the gradient's ops, so that it can be
        # differentiated again (TensorFlow's rule); else it was a silent None for the second order.
        recording = self._persistent and self in dispatch.tapes
        # a tape that recorded tl.stats (GradientTape._quiet): its backward pass takes the formulas' gradients at the
        # support's ends on purpose (0 * inf in a branch not taken), with NumPy's warnings off as the forward
        with contextlib.nullcontext() if recording else self.stop_recording(), quiet(self):
            grads = self._watched_only(
                flat_sources,
                unconnected_gradients,
                lambda watched: backprop(nodes, targets, weights, watched, unconnected_gradients),
            )
        if not self._persistent:
            self._spend()
            self._watched = set()
        return tree.unflatten(source_def, grads)

    def _watched_only(self, sources, unconnected, run):
        """``run`` on the watched sources only; an unwatched source gets None (or zeros), as in TensorFlow."""
        watched = [s for s in sources if s._id in self._watched]
        found = dict(zip((s._id for s in watched), run(watched))) if watched else {}
        if len(found) == len(sources):
            return [found[s._id] for s in sources]
        from ..ops.math import zeros_like

        return [found[s._id] if s._id in found else zeros_like(s) if unconnected == "zero" else None for s in sources]

    def jacobian(self, target, sources, unconnected_gradients: str = "none"):
        """d target / d source, of shape ``target.shape + source.shape``, for each source.

        One backward pass mapped by ``tl.vmap`` over the rows (TensorFlow's pfor), not one per element of
        ``target``; a gradient rule that needs a cotangent's value makes it fall back to one pass per row."""
        from ..ops import creation
        from ..ops import shape as shape_ops

        nodes = self._nodes_or_raise("jacobian")
        _check_unconnected(unconnected_gradients, "jacobian")
        flat_sources, source_def = tree.flatten(sources)
        _check_sources(flat_sources, "jacobian")
        _check_target(target, "jacobian")
        size = math.prod(target.shape)
        cotangents = lambda: shape_ops.reshape(  # noqa: E731  (made where the tape may record it)
            creation.eye(size, dtype=target.dtype, backend=target.backend), (size, *target.shape)
        )
        stacked = self._stacked_rows(nodes, target, flat_sources, size, cotangents)
        result = [
            self._shaped(r, (*target.shape, *src.shape), nodes, target, src, unconnected_gradients)
            for src, r in zip(flat_sources, stacked)
        ]
        if not self._persistent:
            self._spend()
        return tree.unflatten(source_def, result)

    def batch_jacobian(self, target, source, unconnected_gradients: str = "none"):
        """TensorFlow's ``batch_jacobian``: ``d target[i] / d source[i]`` for each ``i`` of the first axis, of
        shape ``target.shape + source.shape[1:]``, where row ``i`` of ``target`` depends on row ``i`` of
        ``source`` only (per-example Jacobians; what other rows give is summed in, as in TensorFlow).  One
        backward pass per element of a row of ``target``, mapped by ``tl.vmap``.

        >>> import tensorlib as tl
        >>> x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> with tl.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.batch_jacobian(y, x).numpy().tolist()
        [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]
        """
        from ..ops import creation
        from ..ops import shape as shape_ops

        nodes = self._nodes_or_raise("batch_jacobian")
        _check_unconnected(unconnected_gradients, "batch_jacobian")
        _check_sources([source], "batch_jacobian")
        _check_target(target, "batch_jacobian")
        if not (target.shape and source.shape and target.shape[0] == source.shape[0]):
            raise ValueError(
                f"GradientTape.batch_jacobian: target shape {tuple(target.shape)} and source shape "
                f"{tuple(source.shape)} need the same first (batch) axis"
            )
        batch, rest = target.shape[0], tuple(target.shape[1:])
        size = math.prod(rest)

        def cotangents():
            eye = creation.eye(size, dtype=target.dtype, backend=target.backend)
            return shape_ops.broadcast_to(shape_ops.reshape(eye, (size, 1, *rest)), (size, batch, *rest))

        (stacked,) = self._stacked_rows(nodes, target, [source], size, cotangents)
        if stacked is not None:  # (row element, batch, *source row) -> (batch, row element, *source row)
            stacked = shape_ops.transpose(stacked, (1, 0, *range(2, len(source.shape) + 1)))
        result = self._shaped(stacked, (batch, *rest, *source.shape[1:]), nodes, target, source, unconnected_gradients)
        if not self._persistent:
            self._spend()
        return result

    def _stacked_rows(self, nodes, target, sources, size, cotangents) -> list:
        """Per source, the gradients for the ``size`` cotangents ``cotangents()`` (shape ``(size, *target.shape)``)
        stacked on a new first axis, or None where no cotangent reaches it."""
        from ..ops import shape as shape_ops

        # A real source of a complex target gets only the real part of a cotangent's gradient, Re(J), from one
        # pass; the cotangent i e_i gives -Im(J), so its Jacobian J = vjp(e_i) - i vjp(i e_i) (tl.jvp's, JAX's jacfwd).
        real_of_complex = target.dtype.kind == "c" and any(s.dtype.kind == "f" for s in sources)

        def row(weight) -> list:
            """One row of each Jacobian: the gradients for the output cotangent ``weight``."""
            with quiet(self):
                return _row(weight)

        def _row(weight) -> list:
            grads = self._watched_only(
                sources, "zero", lambda watched: backprop(nodes, [target], [weight], watched, "zero")
            )
            if real_of_complex:
                imag = self._watched_only(
                    sources, "zero", lambda watched: backprop(nodes, [target], [weight * 1j], watched, "zero")
                )
                grads = [g - h * 1j if s.dtype.kind == "f" else g for g, h, s in zip(grads, imag, sources)]
            return grads

        # As in gradient(): inside its own context a persistent tape records the Jacobian's ops (else the
        # derivative of the Jacobian from this tape was a silent None).
        recording = self._persistent and self in dispatch.tapes
        with contextlib.nullcontext() if recording else self.stop_recording():
            weights = cotangents()
            if size > 1:
                # Every row at once: the backward pass mapped over the cotangents (TensorFlow's pfor, JAX's
                # vmap of the vjp).  A gradient rule that needs a cotangent's value (a user's grad_fn with a
                # Python `if` on it) cannot run mapped: the rows are then computed one by one.
                from .vmap import Unmappable, vmap

                try:
                    return vmap(row)(weights)
                except Unmappable:
                    pass
            rows = [[] for _ in sources]
            for i in range(size):
                for k, g in enumerate(row(weights[i])):
                    rows[k].append(g)
            return [shape_ops.stack(r) if r else None for r in rows]

    def _shaped(self, stacked, shape, nodes, target, src, unconnected):
        """A Jacobian of ``shape`` from its stacked rows; None for an unconnected source unless ``"zero"``."""
        from ..ops import creation
        from ..ops import shape as shape_ops

        if unconnected == "none" and (src._id not in self._watched or not _connected(nodes, target, src)):
            return None
        if stacked is not None:
            return shape_ops.reshape(stacked, shape)
        # An empty target has an empty Jacobian (JAX's shape), not None.
        real_of_complex = target.dtype.kind == "c" and src.dtype.kind == "f"
        return creation.zeros(shape, _dt.complex_dtype(src.dtype) if real_of_complex else src.dtype, src.backend)


def check_cotangent_kind(cotangent, output, what) -> None:
    """A complex cotangent for a real output is a TypeError: the engine keeps only the real part of a complex
    gradient for a real tensor, so its imaginary part was dropped silently (``tl.jvp`` and JAX refuse it too)."""
    if cotangent.dtype.kind == "c" and output.dtype.kind != "c":
        raise TypeError(
            f"{what} is {cotangent.dtype} for a real output ({output.dtype}, shape {tuple(output.shape)}); "
            "a real output's cotangent is real (pass its real part, or make the output complex)"
        )


def _check_target(target, what) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(
            f"GradientTape.{what}: target must be a tensor computed under the tape, got "
            f"{type(target).__name__} {target!r:.60}"
        )
    if None in target.shape:
        raise ValueError(f"GradientTape.{what}: target shape {target.shape} must be fully known")


def _check_unconnected(unconnected, what):
    if unconnected not in ("none", "zero"):
        raise ValueError(f"GradientTape.{what}: unconnected_gradients must be 'none' or 'zero', got {unconnected!r}")


def _check_sources(sources, what):
    for i, s in enumerate(sources):
        if not isinstance(s, Tensor):
            raise TypeError(
                f"GradientTape.{what}: sources must be tensors or variables, got {type(s).__name__} (source {i})"
            )
        if s.dtype.kind not in "fc":
            raise TypeError(
                f"GradientTape.{what}: cannot differentiate with respect to source {i} of dtype "
                f"{s.dtype} (shape {tuple(s.shape)}); gradients need a float source"
            )


def _connected(nodes, target, source) -> bool:
    reach = {source._id}
    for node in nodes:
        if any(t._id in reach for t in node.inputs):
            reach.update(o._id for o in node.outputs)
    return target._id in reach
