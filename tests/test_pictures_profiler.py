"""graph.render / _repr_svg_ / to_dot ids and colours; the profiler's modes, phases, kernels and trace."""

import json
import re
import shutil

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import visualize

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def _training_graph():
    big = np.ones((100, 3), np.float32)
    w = tl.Variable(np.ones((3, 2), np.float32), name="w")

    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.sum(tl.exp(x @ w)) + tl.sum(big)
        return tape.gradient(loss, w)

    return tl.function(step).get_graph(tl.TensorSpec((None, 3), tl.float32))


def test_dot_ids_are_the_printed_value_names():
    graph = _training_graph()
    dot = graph.to_dot()
    printed = str(graph)
    node_lines = re.findall(r'^  "(%\d+)" \[label="(%\d+(?:, %\d+)*) = (\w+)"', dot, flags=re.M)
    assert node_lines
    for node_id, outs, op_type in node_lines:
        assert node_id == outs.split(", ")[0]
        assert f"  {outs} = {op_type}(" in printed
    declared = set(re.findall(r'^  "([^"]+)" \[', dot, flags=re.M))
    for a, b in re.findall(r'^  "([^"]+)" -> "([^"]+)"', dot, flags=re.M):
        assert a in declared and b in declared


def test_forward_and_gradient_nodes_are_coloured_apart():
    graph = _training_graph()
    phases = {n.op_type: n.phase for n in graph.nodes}
    assert phases["Exp"] == "forward" and graph.nodes[-1].phase == "gradient"
    dot = graph.to_dot()
    exp_line = next(line for line in dot.splitlines() if '= Exp"' in line)
    assert visualize.FORWARD_COLOR in exp_line
    assert sum(visualize.GRADIENT_COLOR in line for line in dot.splitlines() if " -> " not in line) >= 3
    assert "legend" in dot


def test_captures_are_inputs_with_their_size():
    dot = _training_graph().to_dot()
    assert re.search(r'label="%\d+: capture big\\nfloat32\[100,3\], 1\.2 KiB", shape=ellipse, style=dashed', dot)
    assert re.search(r'label="%\d+: capture w\\nfloat32\[3,2\], 24 B"', dot)


def test_phase_survives_the_optimizer_passes():
    graph = _training_graph().optimize()
    assert {n.phase for n in graph.nodes} == {"forward", "gradient"}


@needs_dot
@pytest.mark.parametrize("suffix,magic", [(".svg", b"<svg"), (".png", b"\x89PNG")])
def test_render_writes_the_file(tmp_path, suffix, magic):
    path = tmp_path / f"graph{suffix}"
    written = _training_graph().render(path)
    assert str(written) == str(path)
    data = path.read_bytes()
    assert magic in data[:400]
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


@needs_dot
def test_repr_svg_for_notebooks():
    svg = _training_graph()._repr_svg_()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg[:400]
    assert "Exp" in svg


def test_render_without_dot_says_how_to_install(tmp_path, monkeypatch):
    graphviz = pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(
        RuntimeError,
        match=r"Graph.render: Graphviz's `dot` program was not found; install "
        r"Graphviz's `dot` program \(Debian/Ubuntu: apt-get install graphviz",
    ):
        _training_graph().render(tmp_path / "g.svg")
    assert _training_graph()._repr_svg_() is None
    assert graphviz is not None


def test_render_needs_a_format(tmp_path):
    with pytest.raises(ValueError, match="cannot tell the format"):
        _training_graph().render(tmp_path / "graph")


def test_profile_separates_modes_and_phases_and_names_the_real_kernel(tmp_path):
    x = np.random.default_rng(0).normal(size=(2, 6, 6, 1)).astype(np.float32)
    w = tl.Variable(np.ones((3, 3, 1, 2), np.float32))

    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.sum(tl.nn.conv2d(x, w, 1, "SAME"))
        return tape.gradient(loss, w)

    traced = tl.function(step)
    traced(x)
    with tl.profile() as prof:
        step(x)
        traced(x)
    seen = {(e.op_type, e.mode, e.phase) for e in prof.events}
    assert {
        ("Conv2D", "eager", "forward"),
        ("Conv2DBackpropFilter", "eager", "gradient"),
        ("Conv2D", "graph", "forward"),
        ("Conv2DBackpropFilter", "graph", "gradient"),
    } <= seen
    conv = next(e for e in prof.events if e.op_type == "Conv2D")
    assert conv.kernel == "tensorlib.backends.numpy_nn.conv.conv2d"
    table = prof.table()
    assert re.search(r"Conv2DBackpropFilter\s+graph\s+gradient\s+1 ", table)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())["traceEvents"]
    rows = {e["tid"]: e["args"]["name"] for e in trace if e["ph"] == "M"}
    assert sorted(rows.values()) == ["eager forward", "eager gradient", "graph forward", "graph gradient"]
    boxes = [e for e in trace if e["ph"] == "X"]
    assert len(boxes) == len(prof.events)
    assert all(rows[b["tid"]] == b["cat"].replace(",", " ") for b in boxes)
    assert all(b["dur"] >= 0 and "kernel" in b["args"] for b in boxes)


def test_nodes_rewritten_by_the_pool_folding_keep_their_phase():
    w = tl.Variable(np.ones((3, 3, 1, 2)))

    def f(x):
        with tl.GradientTape() as tape:
            loss = tl.sum(tl.nn.avg_pool(tl.nn.conv2d(x, w, 1, "VALID"), 2, 2, "VALID"))
        return tape.gradient(loss, w)

    nodes = tl.function(f).get_graph(np.ones((1, 8, 8, 1))).optimize().nodes
    types = [n.op_type for n in nodes]
    assert "AvgPool" not in types and "AvgPoolGrad" not in types  # both folded into the convs
    conv, backprop = types.index("Conv2D"), types.index("Conv2DBackpropFilter")
    assert all(n.phase == "forward" for n in nodes[: conv + 1])  # the box-filtered filter and the conv
    assert all(n.phase == "gradient" for n in nodes[backprop:])  # the filter gradient and its box correlation
