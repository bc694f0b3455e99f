"""The startup hook directory put on the child's PYTHONPATH (see sitecustomize.py)."""
