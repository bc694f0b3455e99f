"""Read API: open a run, follow it, and the model and analyses every face reads.

from dyn_inspect.inspector import open_run
run = open_run()          # the latest run under ./.dyn-inspect/runs
run.model.break_groups()  # deduplicated graph breaks
run.refresh()             # read what a live run appended since

(The names are imported when first used: importing the package must not pull the model in.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dyn_inspect.inspector.errors import InspectorError
    from dyn_inspect.inspector.run import Run, open_run, resolve_run

__all__ = ["InspectorError", "Run", "open_run", "resolve_run"]


def __getattr__(name: str) -> Any:
    if name == "InspectorError":
        from dyn_inspect.inspector import errors

        return errors.InspectorError
    if name in ("Run", "open_run", "resolve_run"):
        from dyn_inspect.inspector import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
