"""dyn-inspect in IPython and Jupyter: ``%load_ext dyn_inspect``.

This is the ``dyn_inspect`` package's own module, imported before every ``dyn_inspect.*``
import: it holds only the extension's entry points, and imports the notebook face
(``dyn_inspect.magics``) when a kernel loads it.
"""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    from dyn_inspect import magics

    magics.load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from dyn_inspect import magics

    magics.unload(ipython)
