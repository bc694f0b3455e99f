"""Read API: open a run, follow it, and the model and analyses every face reads.

from dyn_inspect.inspector import open_run
run = open_run()          # the latest run under ./.dyn-inspect/runs
run.model.break_groups()  # deduplicated graph breaks
run.refresh()             # read what a live run appended since
"""

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.run import Run, open_run, resolve_run

__all__ = ["InspectorError", "Run", "open_run", "resolve_run"]
