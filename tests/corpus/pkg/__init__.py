"""A small training package run as ``python -m pkg.train``: helpers live in several files and
the graph break happens inside one of them (metrics.py), called from the compiled step."""
