"""The docs' Markdown pages are doctested by the suite; the mkdocs extension in _ext/ is build tooling (needs griffe)."""
collect_ignore_glob = ["_ext/*"]
