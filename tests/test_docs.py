"""The docs site lists every tutorial (their examples run as doctests with the rest of docs/)."""

import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "tutorials", "*.md")))


def test_every_tutorial_is_in_the_site_navigation():
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        config = f.read()
    for page in PAGES:
        assert f"tutorials/{os.path.basename(page)}" in config, page
