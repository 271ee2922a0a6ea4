"""The README's first command runs examples/demo.py: every example must keep running."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED = {
    "demo.py": [
        "finite-difference check of the whole pipeline: ok",
        "strategy    shifted_gemm",
        "traced loss equals eager: True",
        "captures: [('big', (6000, 32, 32, 1), '47 MiB')]",
    ],
    "graph_mode.py": [],
    "conv_where_does_it_run.py": ["Conv2DBackpropInput", "Conv2DBackpropFilter"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", name)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for line in EXPECTED[name]:
        assert line in done.stdout, f"{name}: {line!r} missing from its output"


def _run_example(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300, cwd=cwd)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_train_digits_trains_eager_and_traced_and_plots(tmp_path):
    for module in ("sklearn", "tqdm", "matplotlib"):
        pytest.importorskip(module)
    png = tmp_path / "curve.png"
    out = _run_example(
        [os.path.join(ROOT, "examples", "train_digits.py"), "--epochs", "2", "--no-progress", "--plot", str(png)],
        tmp_path,
    )
    accuracies = {}
    for line in out.splitlines():
        if " test accuracy " in line:
            mode, rest = line.split(": test accuracy ")
            accuracies[mode] = float(rest.split()[0])
    assert set(accuracies) == {"eager", "traced"}, out
    assert accuracies["eager"] == accuracies["traced"] and accuracies["eager"] >= 0.85, out
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_mlp_digits_example(tmp_path):
    pytest.importorskip("sklearn")
    out = _run_example([os.path.join(ROOT, "examples", "mlp_digits.py")], tmp_path)
    assert float(out.split("training accuracy: ")[1]) >= 0.9
