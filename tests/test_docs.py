"""The docs site's tutorials run (each page in a fresh interpreter: pages define ops of their own)."""
import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "tutorials", "*.md")))


@pytest.mark.parametrize("page", PAGES, ids=os.path.basename)
def test_tutorial_examples_run(page):
    pytest.importorskip("hypothesis")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE", page],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_every_tutorial_is_in_the_site_navigation():
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        config = f.read()
    for page in PAGES:
        assert f"tutorials/{os.path.basename(page)}" in config, page
