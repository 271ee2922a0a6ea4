"""Node: one op application, recorded by a tape or added to a graph."""
from __future__ import annotations


class Node:
    """One application of an op: what a gradient function receives as ``op``.

    ``type`` is the op type name, ``inputs``/``outputs`` are Tensors (symbolic
    under tracing), ``attrs`` the op's attributes, ``site`` the user's
    ``file:line`` when it was captured (only for ops without a gradient rule).
    """

    __slots__ = ("op", "inputs", "outputs", "attrs", "site", "__weakref__")

    def __init__(self, op, inputs, outputs, attrs, site=None):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.site = site

    @property
    def type(self) -> str:
        return self.op.name

    @property
    def name(self) -> str:
        return self.op.name

    def __repr__(self):
        ins = ", ".join(f"{t.shape}" for t in self.inputs)
        return f"<Node {self.op.name}({ins}) attrs={self.attrs}>"
