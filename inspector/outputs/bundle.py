"""The export bundle's ``manifest.json`` and what ``dyn-inspect export --json`` prints
(docs/export.md describes the bundle)."""

from __future__ import annotations

from typing import Any

from dyn_inspect.engine.schema import StageTimes
from dyn_inspect.inspector.outputs.common import Environment, Output


class Tool(Output):
    name: str
    version: str
    command: list[str]


class ManifestRun(Output):
    id: str
    command: list[str]
    cwd: str | None
    mode: str | None
    status: str
    exit_status: int | None
    exit_code: int | None  # the same: the name `summary --json` and the processes use
    signal: int | None
    duration_s: float | None
    source: str | None  # "live" or "import"
    recorded_by: str | None


class ManifestProcess(Output):
    log: str
    pid: int | None
    rank: int | None
    argv: list[str] | None
    exit_code: int | None
    exception: str | None
    environment: Environment


class ConfigSet(Output):
    compile_ids: list[str]
    relevant: dict[str, dict[str, Any]]  # group ("dynamo", "inductor", ...) → setting → value
    file: str


class ManifestConfig(Output):
    recorded_at_start: dict[str, Any]
    at_compile_time: list[ConfigSet]


class ManifestSelection(Output):
    whole_run: bool
    compile_ids: list[str]
    at: str | None
    compiles: list[str]


class ManifestCompile(Output):
    compile_id: str
    log: str
    function: str | None
    outcome: str | None
    dir: str


class GraphPictures(Output):
    dot: bool
    svg: bool
    svg_note: str | None


class BundleSize(Output):
    payload_bytes: int
    unique_payloads: int
    estimate_bytes: int


class Skipped(Output):
    what: str
    why: str


class Manifest(Output):
    """The bundle's ``manifest.json``."""

    format: str  # "dyn-inspect-bundle"
    format_version: int
    created: str  # UTC, ISO 8601
    tool: Tool
    run: ManifestRun
    environment: Environment
    processes: list[ManifestProcess]
    config: ManifestConfig
    selection: ManifestSelection
    redacted: bool
    contains_source: bool
    compiles: list[ManifestCompile]
    graph_pictures: GraphPictures
    size: BundleSize
    skipped: list[Skipped]  # every item (the pages group missing payloads into one line)
    incomplete: list[str]
    unknown_events: int  # events of kinds newer than this version, kept as written in events/
    payloads: dict[str, str]  # payload digest → its path in the bundle
    files: dict[str, str]  # path → what it is


# -- the export bundle's compile.json ----------------------------------------------------


class CompileFile(Output):
    role: str  # "graph:dynamo", "picture:aot_fw", "repro:forward", "guards", "kernel:NAME", ...
    path: str


class BundleCompile(Output):
    """A bundle's ``compiles/<log>/<cid>/compile.json``."""

    compile_id: str
    log: str
    function: str | None
    file: str | None
    line: int | None
    outcome: str | None
    compile_time_s: float
    stage_times_s: StageTimes
    graph_breaks: int
    guards: int | None
    kernels: list[str]
    files: list[CompileFile]
    dir: str = ""


class ExportResult(Output):
    """``dyn-inspect export --json``."""

    path: str
    size_bytes: int
    payload_bytes: int
    estimate_bytes: int
    files: int
    compiles: int
    redacted: bool
    skipped: list[Skipped]
    incomplete: list[str]
    contains_source: bool
