"""What the faces (tui, lsp) need from the engine, re-exported: the event-log record types
and the few facts of a run directory they read.

The faces import only ``dyn_inspect.inspector`` (and the TUI the engine's launcher, to
start runs); tests/test_layering.py checks it. The engine keeps the definitions: the
Structs are ``engine/schema.py``'s (one definition of the log), the helpers live beside
the writer whose files they read. A face that needs another engine name gets it added
here, not a direct import.
"""

from __future__ import annotations

from dyn_inspect.engine.eventlog import TOOL_VERSION, runs_root
from dyn_inspect.engine.schema import (
    SCHEMA_VERSION,
    Artifact,
    BackwardCapture,
    Blob,
    Bytecode,
    CacheEvent,
    Capture,
    Chromium,
    CompileStart,
    Event,
    ExceptionInfo,
    Graph,
    GraphBreak,
    Guards,
    Kernel,
    KernelProfile,
    KernelProvenance,
    Loc,
    LogHeader,
    OutputCode,
    PathAlias,
    ProcessEnd,
    ProcessStart,
    Raw,
    Recompile,
    RecompileLimit,
    RunEnd,
    RunStart,
    ShapeGuard,
    Specialization,
    StageTimes,
    Symbol,
    UnknownEvent,
)
from dyn_inspect.engine.stderr_tail import read_tail
from dyn_inspect.engine.torch_compat import degraded_notes

__all__ = [
    "SCHEMA_VERSION",
    "TOOL_VERSION",
    "Artifact",
    "BackwardCapture",
    "Blob",
    "Bytecode",
    "CacheEvent",
    "Capture",
    "Chromium",
    "CompileStart",
    "Event",
    "ExceptionInfo",
    "Graph",
    "GraphBreak",
    "Guards",
    "Kernel",
    "KernelProfile",
    "KernelProvenance",
    "Loc",
    "LogHeader",
    "OutputCode",
    "PathAlias",
    "ProcessEnd",
    "ProcessStart",
    "Raw",
    "Recompile",
    "RecompileLimit",
    "RunEnd",
    "RunStart",
    "ShapeGuard",
    "Specialization",
    "StageTimes",
    "Symbol",
    "UnknownEvent",
    "degraded_notes",
    "read_tail",
    "runs_root",
]
