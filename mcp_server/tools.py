"""The MCP server's tools: each one's arguments (a msgspec Struct: the input schema is
generated from it, and a call's arguments are decoded into it, so a missing or mistyped
argument is one clear error), its typed answer (the Struct the CLI's ``--json`` prints for
the same question: the output schema is generated from it) and the function that answers
it from the report layer (``inspector/reports/``, never ``inspector.analysis``).

Where the tools read and run is confined to the workspace (``Workspace``: the roots the
client declares, else the server's directory): a run, a runs directory, a script, a
directory to record or verify in must be inside one of them.

Nothing here imports the MCP SDK: ``server.py`` wires these tools to the protocol.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.ranks import select_rank
from dyn_inspect.inspector.run import Run, latest_run, list_runs, open_run

# -- the workspace ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Workspace:
    """The directories the tools may read and run in (real paths)."""

    roots: tuple[str, ...]
    # where a tool reads when it names no runs directory: the one this session last
    # recorded into, else the first root's .dyn-inspect/runs
    default_runs: str | None = None

    @classmethod
    def of(cls, folders: list[str], default_runs: str | None = None) -> Workspace:
        return cls(tuple(dict.fromkeys(os.path.realpath(f) for f in folders)), default_runs)

    @property
    def home(self) -> str:
        """Where a relative path is resolved: the first root."""
        return self.roots[0]

    def path(self, given: str, what: str) -> Path:
        """``given`` (relative to the first root) as a real path inside a root; an error
        naming the roots otherwise. Symlinks are followed first: a link inside a root
        that leads out of it is outside."""
        if "\x00" in given:
            raise InspectorError(f"{what} {given!r} is not a path")
        real = os.path.realpath(os.path.join(self.home, os.path.expanduser(given)))
        if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in self.roots):
            raise InspectorError(f"{what} {given} is outside the workspace ({', '.join(self.roots)}): the server reads and runs only there")
        return Path(real)

    def runs_dir(self, given: str | None, base: Path | None = None) -> Path:
        """The runs directory a tool reads: ``given``, else ``<base>/.dyn-inspect/runs``, else
        the session's last (``default_runs``), else the first root's."""
        if given is not None:
            return self.path(given, "runs_dir")
        if base is None and self.default_runs is not None:
            return self.path(self.default_runs, "runs_dir")
        return self.path(str((base or Path(self.home)) / ".dyn-inspect" / "runs"), "runs_dir")

    def run(self, run: str | None, runs_dir: str | None) -> Run:
        """The run a reading tool names (an id in the runs directory, or a run directory;
        default: the latest), inside the workspace, holding events."""
        root = self.runs_dir(runs_dir)
        if run is not None and (os.sep in run or run in (".", "..")):
            target: str | None = str(self.path(run, "run"))
        elif run is not None:
            target = str(self.path(str(root / run), "run"))
        else:
            target = None
        if target is None and not root.is_dir():
            raise InspectorError(f"no runs in {root}: record one with the `record` tool")
        r = open_run(target, str(root))
        self.path(str(r.path), "run")  # `latest` is a link: where it leads must be inside too
        if r.model.event_count == 0:
            raise InspectorError(f"{r.path} holds no events (an empty or unstarted run)")
        return r


# -- arguments -------------------------------------------------------------------------------


class Args(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every tool's arguments."""


class RunArgs(Args, kw_only=True):
    run: Annotated[str | None, msgspec.Meta(description="a run id (as `runs` lists them) or a run directory; default: the latest")] = None
    runs_dir: Annotated[
        str | None, msgspec.Meta(description="default: where this session last recorded, else .dyn-inspect/runs of the first root")
    ] = None
    rank: Annotated[int | None, msgspec.Meta(description="a distributed run: only this rank's processes")] = None


class RunsArgs(Args, kw_only=True):
    runs_dir: Annotated[
        str | None, msgspec.Meta(description="default: where this session last recorded, else .dyn-inspect/runs of the first root")
    ] = None


class BreaksArgs(RunArgs, kw_only=True):
    root: Annotated[str | None, msgspec.Meta(description="attribute breaks to the first frame under this directory")] = None


class RecompilesArgs(RunArgs, kw_only=True):
    every_frame: Annotated[bool, msgspec.Meta(description="every frame's timeline, not only those that recompiled")] = False


class KernelsArgs(RunArgs, kw_only=True):
    at: Annotated[str | None, msgspec.Meta(description="FILE:LINE: only kernels generated from this line")] = None
    sort: Annotated[str | None, msgspec.Meta(description="time, calls, bandwidth, flops, registers, spills, shared, name, compile")] = None


class KernelArgs(RunArgs, kw_only=True):
    name: Annotated[str, msgspec.Meta(description="as `kernels` lists it")]
    compile: Annotated[str | None, msgspec.Meta(description="the compile id, when several made a kernel of this name")] = None
    backward: Annotated[bool, msgspec.Meta(description="the backward graph's kernel of this name")] = False
    stage: Annotated[str | None, msgspec.Meta(description="the kernel's source, or an IR kept by `run --kernel-ir`")] = None


class CostArgs(RunArgs, kw_only=True):
    eager: Annotated[str | None, msgspec.Meta(description="a run of the same program recorded with --disable-compile --profile N")] = None


class GraphArgs(RunArgs, kw_only=True):
    compile_id: Annotated[str, msgspec.Meta(description="such as 0/1")]
    stage: Annotated[str, msgspec.Meta(description="dynamo, aot_fw, aot_bw, aot_inference, aot_joint, pre_grad, joint, post_grad, ...")] = (
        "dynamo"
    )
    format: Annotated[Literal["json", "dot"], msgspec.Meta(description="json: nodes and op histogram; dot: Graphviz text")] = "json"
    log: Annotated[str | None, msgspec.Meta(description="the process log when several processes share compile ids")] = None


class CodeArgs(RunArgs, kw_only=True):
    compile_id: Annotated[str, msgspec.Meta(description="such as 0/1, as the other tools give it")]


class FixPlansArgs(RunArgs, kw_only=True):
    cause: Annotated[int | None, msgspec.Meta(description="the cause's number (1-based, as `causes` lists them); default: every cause")] = (
        None
    )


class RecordArgs(Args, kw_only=True):
    script: Annotated[str | None, msgspec.Meta(description="a Python file (inside the workspace)")] = None
    module: Annotated[str | None, msgspec.Meta(description="a module, as python -m")] = None
    command: Annotated[list[str] | None, msgspec.Meta(description="any command (dyn-inspect run -- CMD)")] = None
    args: Annotated[list[str], msgspec.Meta(description="the script's or module's own arguments")] = []
    cwd: Annotated[str | None, msgspec.Meta(description="where it runs; default: the workspace's first root")] = None
    runs_dir: Annotated[str | None, msgspec.Meta(description="default: <cwd>/.dyn-inspect/runs")] = None
    timeout_s: Annotated[float, msgspec.Meta(description="the program is killed after this many seconds")] = 600.0
    profile: Annotated[int | None, msgspec.Meta(description="also profile N steady-state steps (cost per step)")] = None
    disable_compile: Annotated[bool, msgspec.Meta(description="run it eagerly (recorded as such)")] = False


class VerifyArgs(RunArgs, kw_only=True):
    in_dir: Annotated[str | None, msgspec.Meta(description="re-run here when the program's file is here (a copy with the fix applied)")] = (
        None
    )
    timeout_s: Annotated[float, msgspec.Meta(description="the re-run is stopped after this many seconds")] = 600.0
    settle_s: Annotated[float | None, msgspec.Meta(description="stop once nothing new compiled for this long (shown, never verified)")] = (
        None
    )


# -- answers ---------------------------------------------------------------------------------


def _runs(ws: Workspace, a: RunsArgs) -> typed.RunsReport:
    from dyn_inspect.inspector.reports.runs import runs_report

    root = ws.runs_dir(a.runs_dir)
    return runs_report(root, list_runs(root), latest_run(root))


def _summary(ws: Workspace, a: RunArgs) -> typed.Summary:
    from dyn_inspect.inspector.reports import summary

    return summary(_read(ws, a))


def _read(ws: Workspace, a: RunArgs) -> Run:
    return select_rank(ws.run(a.run, a.runs_dir), (a.rank,) if a.rank is not None else None)


def _breaks(ws: Workspace, a: BreaksArgs) -> typed.BreaksReport:
    from dyn_inspect.inspector.reports.breaks import breaks_report

    return breaks_report(_read(ws, a), str(ws.path(a.root, "root")) if a.root else None)


def _recompiles(ws: Workspace, a: RecompilesArgs) -> typed.RecompilesReport:
    from dyn_inspect.inspector.reports.recompiles import frame_timelines, recompiles_report

    r = _read(ws, a)
    return recompiles_report(r, frame_timelines(r.model, every_frame=a.every_frame))


def _causes(ws: Workspace, a: RunArgs) -> typed.CausesReport:
    from dyn_inspect.inspector.reports.causes import causes_of

    return causes_of(_read(ws, a))


def _failures(ws: Workspace, a: RunArgs) -> typed.FailuresReport:
    from dyn_inspect.inspector.reports.failures import failures_report

    return failures_report(_read(ws, a))


def _shapes(ws: Workspace, a: RunArgs) -> typed.ShapesReport:
    from dyn_inspect.inspector.reports.shapes import shapes_report

    return shapes_report(_read(ws, a))


def _kernels(ws: Workspace, a: KernelsArgs) -> typed.KernelsReport:
    from dyn_inspect.inspector.locations import parse_file_line
    from dyn_inspect.inspector.reports.kernels import SORTS, kernels_report, listed_kernels

    if a.sort is not None and a.sort not in SORTS:
        raise InspectorError(f"sort {a.sort!r}: one of {', '.join(SORTS)}")
    r = _read(ws, a)
    found, order = listed_kernels(r.model, parse_file_line(a.at, "at") if a.at else None, a.sort)
    return kernels_report(r, found, a.at, order)


def _kernel(ws: Workspace, a: KernelArgs) -> typed.KernelReport:
    from dyn_inspect.inspector.reports.kernels import KERNEL_STAGES, find_kernel, kernel_report, kernel_stage

    if a.stage is not None and a.stage not in KERNEL_STAGES:
        raise InspectorError(f"stage {a.stage!r}: one of {', '.join(KERNEL_STAGES)}")
    r = _read(ws, a)
    k = find_kernel(r.model, a.name, a.compile, a.backward)
    source = r.blob_text(k.event.source)
    return kernel_report(r, k, source, a.stage, kernel_stage(r, k, a.stage) if a.stage else None)


def _cost(ws: Workspace, a: CostArgs) -> typed.CostReport:
    from dyn_inspect.inspector.reports import cost

    eager = ws.run(a.eager, a.runs_dir) if a.eager else None
    if eager is not None and (eager.model.run_start is None or not eager.model.run_start.compile_disabled):
        raise InspectorError(f"{eager.path.name} compiled: eager takes a run recorded with `dyn-inspect run --disable-compile --profile N`")
    return cost(_read(ws, a), eager)


def _graph(ws: Workspace, a: GraphArgs) -> typed.GraphReport | typed.GraphDotReport:
    from dyn_inspect.inspector.reports.graph import compile_named, graph_dot_report, graph_report, stage_graph

    r = _read(ws, a)
    c = compile_named(r, a.compile_id, a.log)
    g = stage_graph(r, c, a.stage)
    return graph_dot_report(r, c, a.stage, g) if a.format == "dot" else graph_report(r, c, a.stage, g)


def _code(ws: Workspace, a: CodeArgs) -> typed.CodeReport:
    from dyn_inspect.inspector.reports.code import code_report, find

    r = _read(ws, a)
    c = find(r, a.compile_id)
    if c is None:
        known = ", ".join(c.cid for c in r.model.compiles_in_order()[:12])
        raise InspectorError(f"no compile {a.compile_id} in {r.path.name} (compiles: {known or 'none'})")
    return code_report(r, c)


def _fix_plans(ws: Workspace, a: FixPlansArgs) -> typed.FixPlansReport:
    from dyn_inspect.inspector.reports.fix_plans import fix_plans

    return fix_plans(_read(ws, a), a.cause)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[Args]
    output: Any  # a Struct type, or a union of them
    answer: Callable[[Workspace, Any], msgspec.Struct] | None  # None: the server runs it (record, verify)
    read_only: bool = True


_RUN = "Reads a recorded run (default: the latest in the workspace's .dyn-inspect/runs)."

TOOLS: dict[str, Tool] = {
    t.name: t
    for t in [
        Tool(
            "record",
            "Run a Python script (script + args), a module (module + args) or any command (command) under the dyn-inspect recorder "
            "(real torch.compile), in cwd, killed after timeout_s. Returns the new run's summary (its `run` is the run directory; "
            "pass its name as `run` to the other tools). Sends progress notifications while the program runs.",
            RecordArgs,
            typed.Summary,
            None,
            read_only=False,
        ),
        Tool("runs", "The recorded runs of a runs directory, newest first (`dyn-inspect runs --json`).", RunsArgs, typed.RunsReport, _runs),
        Tool(
            "summary",
            f"The run at a glance: counts, breaks, recompiles, failures (`dyn-inspect summary --json`). {_RUN}",
            RunArgs,
            typed.Summary,
            _summary,
        ),
        Tool(
            "breaks",
            f"Graph breaks, deduplicated, each at the user line it comes from (`dyn-inspect breaks --json`). {_RUN}",
            BreaksArgs,
            typed.BreaksReport,
            _breaks,
        ),
        Tool(
            "recompiles",
            f"Why each function recompiled: failed guards, guard diffs, suggestions (`dyn-inspect recompiles --json`). {_RUN}",
            RecompilesArgs,
            typed.RecompilesReport,
            _recompiles,
        ),
        Tool(
            "causes",
            f"Recompiles and breaks grouped by root cause, most expensive first, each with its one fix (`dyn-inspect causes --json`). {_RUN}",
            RunArgs,
            typed.CausesReport,
            _causes,
        ),
        Tool(
            "failures",
            f"Compiles torch gave up on (fullgraph errors, backend exceptions), at the user's line. {_RUN}",
            RunArgs,
            typed.FailuresReport,
            _failures,
        ),
        Tool(
            "shapes",
            f"Dynamic shapes: symbols, the line that specialized a dim, shape guards (`dyn-inspect shapes --json`). {_RUN}",
            RunArgs,
            typed.ShapesReport,
            _shapes,
        ),
        Tool(
            "kernels",
            f"The generated kernels, their source lines and costs (`dyn-inspect kernels --json`). {_RUN}",
            KernelsArgs,
            typed.KernelsReport,
            _kernels,
        ),
        Tool(
            "kernel",
            f"One kernel: source, config, autotuning, IR (`dyn-inspect kernel NAME --json`). {_RUN}",
            KernelArgs,
            typed.KernelReport,
            _kernel,
        ),
        Tool(
            "cost",
            f"Where a profiled step's time goes, each break's cost per step (`dyn-inspect cost --json`). {_RUN}",
            CostArgs,
            typed.CostReport,
            _cost,
        ),
        Tool(
            "graph",
            f"One compile's FX graph at a stage: nodes and op histogram (format json, `dyn-inspect graph --json`) or Graphviz DOT (format dot). {_RUN}",
            GraphArgs,
            typed.GraphReport | typed.GraphDotReport,
            _graph,
        ),
        Tool(
            "code",
            f"What Dynamo made of a compile's code: original vs transformed bytecode, resume functions, guards (`dyn-inspect code CID --json`). {_RUN}",
            CodeArgs,
            typed.CodeReport,
            _code,
        ),
        Tool(
            "fix_plans",
            "The fixes offered for a run's causes (one cause by its number in `causes`, or all): each edit as a unified diff "
            "(apply it with `git apply` or `patch -p1` in `cwd` or a copy of it), whether the program keeps its behaviour, "
            f"the test that proves fixes of its kind, and how to verify it. {_RUN}",
            FixPlansArgs,
            typed.FixPlansReport,
            _fix_plans,
        ),
        Tool(
            "verify",
            "Re-run a recorded program after a fix, under the recorder, and compare breaks, recompiles, failures and causes "
            "before → after: state `verified` or `not_verified` with the reason (`dyn-inspect verify --json`). Re-runs in in_dir "
            "when the program's file is there (a copy with the fix applied), else where it was recorded. Follows verify's consent "
            "rule (docs/security.md): a run recorded as a command, or whose program is not a Python file of the directory it "
            "re-runs in, is not re-run by the server (run `dyn-inspect verify --yes RUN` yourself after checking it).",
            VerifyArgs,
            typed.VerifyReport,
            None,
            read_only=False,
        ),
    ]
}


def output_schema(output: Any) -> dict[str, Any]:
    """The JSON Schema of a tool's answer, generated from its Struct (or union of Structs):
    an object at the root (MCP asks for one) with the parts in ``$defs``."""
    members = list(getattr(output, "__args__", (output,)))
    refs, defs = msgspec.json.schema_components(members, ref_template="#/$defs/{name}")
    if len(refs) == 1:
        name = refs[0]["$ref"].removeprefix("#/$defs/")
        root = dict(defs[name])
        return {**root, "$defs": defs}
    return {"type": "object", "anyOf": list(refs), "$defs": defs}


def input_schema(args: type[Args]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, generated from its Struct."""
    return output_schema(args)


def decode_args(tool: Tool, arguments: dict[str, Any] | None) -> Args:
    """The call's arguments as the tool's Struct; one clear error when one is missing,
    unknown or of the wrong type."""
    try:
        return msgspec.convert(arguments or {}, tool.args)
    except msgspec.ValidationError as err:
        raise InspectorError(f"{tool.name}: bad arguments: {err}") from None
