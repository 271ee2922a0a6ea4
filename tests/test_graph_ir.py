"""The Graph IR as people read it: print(graph) and graph.to_dot()."""

import re

import numpy as np

import tensorlib as tl

WEIGHTS = np.ones((40, 2))  # closed over: a capture, whatever its size
TABLE = np.zeros((300, 2))


def _model(x):
    counter = tl.Variable(np.zeros(()), name="steps")

    def fn(x):
        # np.ones((2, 40)) is a temporary of the trace: a constant; WEIGHTS is closed over: a capture.
        left, right = tl.split(x @ np.ones((2, 40)) @ WEIGHTS, 2, axis=1)
        counter.assign_add(1.0)
        return tl.sum(left * right) + tl.sum(TABLE), right

    return fn, counter


def test_print_lists_one_line_per_node_with_types_and_attributes():
    fn, _ = _model(None)
    graph = tl.function(fn).get_graph(tl.TensorSpec((None, 2), "float64"))
    lines = str(graph).splitlines()
    assert lines[0] == "graph fn(%0: float64[?,2] x) {"
    assert re.fullmatch(
        r"  %1 = capture 'WEIGHTS': float64\[40,2\]  \[array, 640 B, from .*test_graph_ir\.py:\d+: "
        r"left, right = tl\.split\(x @ np\.ones\(\(2, 40\)\) @ WEIGHTS, 2, axis=1\)\]",
        lines[1],
    )
    assert re.fullmatch(
        r"  %2 = capture 'steps': float64\[\]  \[variable, 8 B, from .*test_graph_ir\.py:\d+: "
        r"counter\.assign_add\(1\.0\)\]",
        lines[2],
    )
    assert re.fullmatch(
        r"  %3 = capture 'TABLE': float64\[300,2\]  \[array, 4\.7 KiB, from .*: "
        r"return tl\.sum\(left \* right\) \+ tl\.sum\(TABLE\), right\]",
        lines[3],
    )
    assert lines[4:6] == [
        "  %4 = const float64[] 1.0",
        "  %5 = const float64[2,40] <80 values>",
    ]
    assert lines[6:] == [
        "  %6 = BatchMatMulV2(%0, %5) : float64[?,40]",
        "  %7 = BatchMatMulV2(%6, %1) : float64[?,2]",
        "  %8, %9 = SplitV(%7) sizes=(1,1) axis=1 : float64[?,1], float64[?,1]",
        # The update's read of the Variable is no differentiable read (as eagerly): a StopGradient.
        "  %10 = StopGradient(%2) : float64[]",
        "  %11 = Add(%10, %4) : float64[]",
        "  AssignVariable(%2, %11) how='assign_add'",
        "  %12 = Mul(%8, %9) : float64[?,1]",
        "  %13 = Sum(%12) axis=None keepdims=False : float64[]",
        "  %14 = Sum(%3) axis=None keepdims=False : float64[]",
        "  %15 = Add(%13, %14) : float64[]",
        "  return (%15, %9)",
        "}",
    ]
    assert repr(graph) == "<tl.Graph 'fn': 1 inputs, 3 captures, 2 constants, 10 nodes, 2 outputs>"
    sliced = tl.function(lambda x: x[..., None, 1:]).get_graph(tl.TensorSpec((3, 2), "float32"))
    assert "  %1 = StridedSlice(%0) index=(:,None,1:) : float32[3,1,1]" in str(sliced).splitlines()


def test_dot_output_labels_ops_and_puts_shapes_on_edges():
    fn, _ = _model(None)
    dot = tl.function(fn).get_graph(tl.TensorSpec((None, 2), "float64")).to_dot()
    assert dot.startswith('digraph "fn" {') and dot.endswith("}")
    declared = set(re.findall(r'^  "([^"]+)" \[', dot, flags=re.M))
    edges = re.findall(r'^  "([^"]+)" -> "([^"]+)" \[label="([^"]+)"\];', dot, flags=re.M)
    assert edges and all(a in declared and b in declared for a, b, _ in edges)
    # Node ids are the value names of print(graph).
    assert '  "%6" [label="%6 = BatchMatMulV2", fillcolor=' in dot
    assert '  "%3" [label="%3: capture TABLE\\nfloat64[300,2], 4.7 KiB", shape=ellipse, style=dashed];' in dot
    assert ("%0", "%6", "float64[?,2]") in edges and ("%3", "%14", "float64[300,2]") in edges
    assert ("%8", "%12", "%9: float64[?,1]") in edges  # SplitV's second output
    assert sum(1 for _, b, _ in edges if b.startswith("output")) == 2
