"""What the faces (tui, lsp) need from the engine, re-exported: the event-log record types
they name and the few facts of a run directory they read.

The faces import only ``dyn_inspect.inspector`` (and the TUI the engine's launcher, to
start runs); tests/test_layering.py checks it. The engine keeps the definitions: the
Structs are ``engine/schema.py``'s (the one definition of the log), the helpers live
beside the writer whose files they read. Only the names a face uses are here, so adding an
event kind does not touch this file; a face that needs another engine name adds it here
rather than importing the engine.
"""

from __future__ import annotations

from dyn_inspect.engine.eventlog import TOOL_VERSION, runs_root
from dyn_inspect.engine.schema import Graph, GraphBreak, Kernel, Loc, OutputCode
from dyn_inspect.engine.stderr_tail import read_tail
from dyn_inspect.engine.torch_compat import degraded_notes

__all__ = ["TOOL_VERSION", "Graph", "GraphBreak", "Kernel", "Loc", "OutputCode", "degraded_notes", "read_tail", "runs_root"]
