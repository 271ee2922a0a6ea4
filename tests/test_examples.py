"""The README's first command runs examples/demo.py: every example must keep running."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED = {
    "demo.py": ["finite-difference check of the whole pipeline: ok", "strategy    shifted_gemm",
                "traced loss equals eager: True", "captures: [('big', (6000, 32, 32, 1), '47 MiB')]"],
    "graph_mode.py": [],
    "conv_where_does_it_run.py": ["Conv2DBackpropInput", "Conv2DBackpropFilter"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for line in EXPECTED[name]:
        assert line in done.stdout, f"{name}: {line!r} missing from its output"
