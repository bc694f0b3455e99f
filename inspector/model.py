"""The run model every face reads: processes → frames → compiles → graphs → kernels, plus
deduplicated graph breaks and recompiles.

Built incrementally: ``RunModel.apply(event, log)`` is called once per event in log order,
so a live run's model grows with its log and is never rebuilt. Payloads stay on disk
(events hold ``Blob`` references; ``Run.blob_text`` loads them on demand).

Compile ids ("frame/n", with an ``@rN`` epoch after the N-th ``torch._dynamo.reset()``,
``engine/compile_ids.py``) are unique per process only, so compiles are keyed by
(log, compile id), and frames — one per code object torch compiled — by (log, torch's
frame id in its epoch): two resume functions with the same name and line are two frames.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.schema import (
    Artifact,
    BackwardCapture,
    Bytecode,
    CacheEvent,
    Capture,
    Chromium,
    CompileStart,
    DdpBucket,
    DdpSplit,
    Event,
    Graph,
    GraphBreak,
    Guards,
    Kernel,
    KernelMeta,
    KernelProfile,
    KernelProvenance,
    Loc,
    LogHeader,
    NotebookCell,
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
    StepProfile,
    Symbol,
)
from dyn_inspect.inspector import cell_names


@dataclass
class Process:
    log: str
    header: LogHeader | None = None
    start: ProcessStart | None = None
    end: ProcessEnd | None = None

    @property
    def pid(self) -> int | None:
        if self.start:
            return self.start.pid
        return self.header.pid if self.header else None

    @property
    def rank(self) -> int | None:
        return self.start.rank if self.start else None

    @property
    def devices(self) -> list[str]:
        """GPU names: from the start when known, else read at exit (after CUDA init)."""
        if self.start and self.start.devices:
            return list(self.start.devices)
        return list(self.end.devices) if self.end else []

    @property
    def cuda_driver(self) -> str | None:
        if self.start and self.start.cuda_driver:
            return self.start.cuda_driver
        return self.end.cuda_driver if self.end else None


@dataclass
class KernelInfo:
    event: Kernel
    compile: CompileInfo
    lines: list[Loc] = field(default_factory=list)
    profile: KernelProfile | None = None
    meta: KernelMeta | None = None  # Triton: compile metadata (config, registers, IR sizes)

    @property
    def name(self) -> str:
        return self.event.name


STAGES = ("dynamo", "aot", "inductor", "codegen")  # the compile pipeline's stages, in order


@dataclass
class CompileInfo:
    log: str
    cid: str
    start: CompileStart | None = None
    capture: Capture | None = None
    backward: BackwardCapture | None = None
    graphs: list[Graph] = field(default_factory=list)
    output_codes: list[OutputCode] = field(default_factory=list)
    kernels: list[KernelInfo] = field(default_factory=list)
    guards: Guards | None = None
    breaks: list[GraphBreak] = field(default_factory=list)
    recompile: Recompile | None = None
    symbols: list[Symbol] = field(default_factory=list)
    specializations: list[Specialization] = field(default_factory=list)
    shape_guards: list[ShapeGuard] = field(default_factory=list)
    bytecode: list[Bytecode] = field(default_factory=list)
    caches: list[CacheEvent] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    ddp_split: DdpSplit | None = None  # DDPOptimizer cut this compile's graph at DDP's buckets
    ddp_buckets: list[DdpBucket] = field(default_factory=list)  # its graphs, in graph order

    def artifact(self, name: str) -> Artifact | None:
        return next((a for a in self.artifacts if a.name == name), None)

    @property
    def frame_id(self) -> str:
        """Torch's frame id with its reset epoch ("3", "0@r1"): one code object."""
        return compile_ids.frame_of(self.cid)

    @property
    def torch_id(self) -> str:
        """The id as torch's own logs print it ("0/0" also after a reset)."""
        return compile_ids.torch_id(self.cid)

    unfinished: bool = False  # its process ended (or was killed) before torch finished it

    @property
    def outcome(self) -> str:
        if self.capture:
            return self.capture.outcome
        return "unfinished" if self.unfinished else "compiling"

    @property
    def compile_time_s(self) -> float:
        total = 0.0
        if self.capture and self.capture.times.total_s:
            total += self.capture.times.total_s
        if self.backward and self.backward.times.total_s:
            total += self.backward.times.total_s
        return total

    def stage_times(self) -> dict[str, float]:
        """Seconds per pipeline stage (dynamo, aot, inductor, codegen), the forward's and
        the backward's together; stages without time are left out."""
        out: dict[str, float] = {}
        for source in (self.capture, self.backward):
            if source is None:
                continue
            for stage in STAGES:
                value = getattr(source.times, f"{stage}_s")
                if value:
                    out[stage] = out.get(stage, 0.0) + value
        return out

    @property
    def refused(self) -> bool:
        """The recompile limit refused this call: torch gave it a compile id and metrics,
        but compiled nothing (the call ran eagerly). It is a limit hit, never a compile:
        torch made no graph for it and does not count it (``frames.ok``)."""
        return self.capture is not None and self.capture.outcome == "recompile_limit"

    @property
    def made_graph(self) -> bool:
        """Whether this compile produced a graph, as torch counts them (``unique_graphs``):
        Dynamo captured one and the backend compiled it — a compile that failed (Inductor
        raising on the captured graph) made none, although its Dynamo graph was logged; nor
        did one torch gave up on and ran eagerly (a backend's exception taken as a graph
        break, GB0219: no guarded code was installed)."""
        return self.graph("dynamo") is not None and self.outcome not in ("failed", "skipped")

    def graph(self, stage: str) -> Graph | None:
        for g in self.graphs:
            if g.stage == stage:
                return g
        return None

    @property
    def guard_count(self) -> int | None:
        """The compile's guards, one figure for every face: torch's own ``guard_count``
        (compilation metrics), else the leaf guards we counted in its guard tree. The
        compiles tree said "guards (282)" where the pane said torch's 412: the tree's text
        does not print every guard torch counts."""
        if self.capture is not None and self.capture.guard_count is not None:
            return self.capture.guard_count
        return self.guards.count if self.guards is not None else None

    def node_count(self, g: Graph) -> int:
        """One of its graphs' nodes, one figure for every face: for Dynamo's graph torch's
        own ``graph_node_count`` (every FX node, the output one included), else the nodes
        counted in the graph's code. The tree said "77 nodes" where the pane said torch's 78."""
        if g.stage == "dynamo" and self.capture is not None and self.capture.graph_node_count is not None:
            return self.capture.graph_node_count
        return g.node_count


@dataclass
class FrameInfo:
    """A code object that torch compiled, with every compile of it in order."""

    log: str
    filename: str
    firstlineno: int
    name: str
    compiles: list[CompileInfo] = field(default_factory=list)
    recompile_limit: RecompileLimit | None = None
    frame_id: str = ""  # torch's frame id in its reset epoch ("3", "0@r1")

    @property
    def key(self) -> str:
        """Unique within a run: the process log and torch's frame id."""
        return f"{self.log}|{self.frame_id}"

    @property
    def compile_count(self) -> int:
        """Its compiles as torch counts them: a call the recompile limit refused is none."""
        return sum(1 for c in self.compiles if not c.refused)

    @property
    def limit_in_force(self) -> int | None:
        """The recompile limit the program had set when this frame last compiled (read
        live at compile start; None for imported logs)."""
        for c in reversed(self.compiles):
            if c.start is not None and c.start.recompile_limit is not None:
                return c.start.recompile_limit
        return None

    @property
    def is_resume_function(self) -> bool:
        return self.name.startswith("torch_dynamo_resume_in_")


@dataclass
class BreakGroup:
    """One graph break site (deduplicated on type + innermost file:line), with hits."""

    key: str
    first: GraphBreak
    hits: list[tuple[str, GraphBreak]] = field(default_factory=list)  # (log, event)

    @property
    def count(self) -> int:
        return len(self.hits)

    @property
    def loc(self) -> Loc:
        return self.first.loc

    @property
    def logs(self) -> set[str]:
        return {log for log, _ in self.hits}


@dataclass
class LineProfile:
    """Steady-state kernel time attributed to one source line (``RunModel.line_profile``)."""

    file: str
    line: int
    us_per_step: float = 0.0
    kernels: list[KernelInfo] = field(default_factory=list)

    def describe(self) -> str:
        """ "this line: 0.80 ms/step in 2 kernels" — what hovers and tables show."""
        n = len({k.name for k in self.kernels})
        return f"this line: {self.us_per_step / 1000:.2f} ms/step in {n} kernel{'s' if n != 1 else ''}"


@dataclass
class RecompileInfo:
    log: str
    compile: CompileInfo
    event: Recompile


_TAGS: dict[type, str] = {}  # event class -> kind (cached: apply() runs once per event)


def is_launcher_log(log: str) -> bool:
    """``launcher.jsonl``, or a node's ``launcher-n<node>.jsonl`` in a multi-node run."""
    return log == "launcher.jsonl" or (log.startswith("launcher-") and log.endswith(".jsonl"))


@dataclass
class Launcher:
    """One launcher log: a node's ``dyn-inspect`` parent (several in a multi-node run)."""

    log: str
    start: RunStart | None = None
    end: RunEnd | None = None


def _combined_end(ends: list[RunEnd]) -> RunEnd:
    """Several nodes' launcher ends as one: the first failing node's code and signal."""
    failed = next((e for e in ends if e.signal or e.exit_code), None)
    last = max(ends, key=lambda e: e.t)
    chosen = failed or last
    return RunEnd(exit_code=chosen.exit_code, duration_s=max(e.duration_s for e in ends), signal=chosen.signal, t=last.t)


class RunModel:
    def __init__(self) -> None:
        self.run_start: RunStart | None = None
        self.run_end: RunEnd | None = None
        self.processes: dict[str, Process] = {}
        self.compiles: dict[tuple[str, str], CompileInfo] = {}
        self.frames: dict[tuple[str, str], FrameInfo] = {}  # (log, frame id) → frame
        self.breaks: dict[str, BreakGroup] = {}
        self.recompiles: list[RecompileInfo] = []
        self.recompile_limits: list[tuple[str, RecompileLimit]] = []
        self.kernels: list[KernelInfo] = []
        self.kernel_metas: dict[tuple[str, str | None, str, bool], KernelMeta] = {}
        self.kernel_profiles: list[tuple[str, KernelProfile]] = []  # (log, event), library kernels too
        self.step_profiles: list[tuple[str, StepProfile]] = []  # (log, event): one per profiled process
        # per process log: a path a cached artifact named → this run's file (PathAlias)
        self.path_aliases: dict[str, dict[str, str]] = {}
        self.launchers: dict[str, Launcher] = {}  # launcher log → its start and end
        self.cells: dict[str, NotebookCell] = {}  # a notebook cell's compiled file name → the cell
        self.kinds: Counter[str] = Counter()
        self.event_count = 0
        self.last_event_time = 0.0
        # Derived answers the analyses keep until the run grows (each entry stores the
        # event_count it was computed at): e.g. recompile timelines, asked per frame.
        self.memo: dict[str, Any] = {}

    # -- building ----------------------------------------------------------------------

    def compile(self, log: str, cid: str) -> CompileInfo:
        key = (log, cid)
        info = self.compiles.get(key)
        if info is None:
            info = self.compiles[key] = CompileInfo(log=log, cid=cid)
        return info

    def apply(self, event: Event, log: str) -> None:
        self.event_count += 1
        cls = type(event)
        kind = _TAGS.get(cls)
        if kind is None:
            kind = _TAGS[cls] = str(cls.__struct_config__.tag)  # type: ignore[attr-defined]
        self.kinds[kind] += 1
        t = event.t
        if t and t > self.last_event_time:
            self.last_event_time = t
        # One table lookup per event, not a chain of isinstance tests: this is the cost of
        # opening a run from its index (250k kept events at a million).
        handler = _HANDLERS[cls] if cls in _HANDLERS else handler_for(cls)
        if handler is not None:
            handler(self, event, log)

    def _run_start(self, event: RunStart, log: str) -> None:
        self.launchers.setdefault(log, Launcher(log)).start = event
        if self.run_start is None or event.t < self.run_start.t:
            self.run_start = event
        if self.launchers[log].end is None:
            self.run_end = None  # logs are read one after another: a node read later still runs

    def _run_end(self, event: RunEnd, log: str) -> None:
        self.launchers.setdefault(log, Launcher(log)).end = event
        ends = [la.end for la in self.launchers.values()]
        if any(e is None for e in ends):
            return  # another node's launcher is still running
        self.run_end = event if len(ends) == 1 else _combined_end([e for e in ends if e is not None])
        for c in self.compiles.values():  # the run is over: nothing is still compiling
            c.unfinished = c.capture is None

    def _log_header(self, event: LogHeader, log: str) -> None:
        if not is_launcher_log(log):
            self.processes.setdefault(log, Process(log)).header = event

    def _process_start(self, event: ProcessStart, log: str) -> None:
        self.processes.setdefault(log, Process(log)).start = event

    def _process_end(self, event: ProcessEnd, log: str) -> None:
        self.processes.setdefault(log, Process(log)).end = event
        for c in self.compiles.values():
            if c.log == log and c.capture is None:
                c.unfinished = True

    def _kernel_profile(self, event: KernelProfile, log: str) -> None:
        self.kernel_profiles.append((log, event))
        for k in self._profiled_kernels(event, log):
            k.profile = event

    def _step_profile(self, event: StepProfile, log: str) -> None:
        self.step_profiles.append((log, event))

    def _notebook_cell(self, event: NotebookCell, log: str) -> None:
        self.cells[event.file] = event
        cell_names.register(event.file, event.cell)

    def _path_alias(self, event: PathAlias, log: str) -> None:
        self.path_aliases.setdefault(log, {})[event.recorded] = event.here

    def _compile_start(self, event: CompileStart, log: str) -> None:
        if event.cid is None:
            return
        c = self.compile(log, event.cid)
        if c.start is None:
            c.start = event

    def _capture(self, event: Capture, log: str) -> None:
        if event.cid is None:
            return
        c = self.compile(log, event.cid)
        c.capture = event
        if event.co_filename is not None or (log, c.frame_id) in self.frames:
            frame = self.frames.get((log, c.frame_id))
            if frame is None:
                frame = self.frames[(log, c.frame_id)] = FrameInfo(
                    log, event.co_filename or "", event.co_firstlineno or 0, event.co_name or "?", frame_id=c.frame_id
                )
            frame.compiles.append(c)

    def _ddp_split(self, event: DdpSplit, log: str) -> None:
        if event.cid is None:
            return
        c = self.compile(log, event.cid)
        c.ddp_split, c.ddp_buckets = event, []  # a split made again (a restarted attempt) replaces the first

    def _graph_break(self, event: GraphBreak, log: str) -> None:
        if event.cid is None:
            return
        self.compile(log, event.cid).breaks.append(event)
        group = self.breaks.get(event.key)
        if group is None:
            group = self.breaks[event.key] = BreakGroup(event.key, event)
        group.hits.append((log, event))

    def _recompile(self, event: Recompile, log: str) -> None:
        if event.cid is None:
            return
        c = self.compile(log, event.cid)
        c.recompile = event
        self.recompiles.append(RecompileInfo(log, c, event))

    def _recompile_limit(self, event: RecompileLimit, log: str) -> None:
        if event.cid is None:
            return
        c = self.compile(log, event.cid)
        self.recompile_limits.append((log, event))
        frame = self.frames.get((log, c.frame_id))
        if frame is not None:
            frame.recompile_limit = event

    def _kernel(self, event: Kernel, log: str) -> None:
        if event.cid is None:
            return
        c = self.compile(log, event.cid)
        k = KernelInfo(event, c, meta=self.kernel_metas.get((log, event.cid, event.name, event.backward)))
        c.kernels.append(k)
        self.kernels.append(k)

    def _kernel_meta(self, event: KernelMeta, log: str) -> None:
        """The later event for a kernel replaces the earlier (the winner is known only
        once the first launch autotuned)."""
        key = (log, event.cid, event.name, event.backward)
        self.kernel_metas[key] = event
        if event.cid is None:
            return
        for k in self.compile(log, event.cid).kernels:
            if k.name == event.name and k.event.backward == event.backward:
                k.meta = event

    def _kernel_provenance(self, event: KernelProvenance, log: str) -> None:
        if event.cid is None:
            return
        for k in self.compile(log, event.cid).kernels:
            if k.event.backward == event.backward and k.name in event.kernels:
                if event.origin != "provenance" and k.lines:
                    continue  # Inductor's provenance beats the graph comments, they the call site
                k.lines = list(event.kernels[k.name])

    # -- questions every face asks -----------------------------------------------------

    @property
    def finished(self) -> bool:
        if self.run_end is not None:
            return True
        return bool(self.processes) and all(p.end is not None for p in self.processes.values())

    @property
    def status(self) -> str:
        """running / finished / exited / crashed / killed.

        ``exited``: the program ended itself with a non-zero code (``sys.exit(3)``);
        ``crashed``: an uncaught exception ended it; ``killed``: a signal did (or a
        process log has no end).
        """
        raised = any(p.end and p.end.exception for p in self.processes.values())
        if self.run_end is not None:
            if self.run_end.signal:
                return "killed"
            if self.run_end.exit_code == 0:
                return "finished"
            return "crashed" if raised else "exited"
        if self.run_start is None and self.processes:
            ended = all(p.end is not None for p in self.processes.values())
            if ended:
                if raised:
                    return "crashed"
                # exit_code > 128: a signal; a rank's launcher wrote the end (torchrun --no-python dyn-inspect)
                codes = [p.end.exit_code or 0 for p in self.processes.values() if p.end]
                if any(code > 128 for code in codes):
                    return "killed"
                return "exited" if any(codes) else "finished"
        return "running"

    @property
    def outcome_text(self) -> str:
        """What ended the program, in words: "finished", "exited with 3", "crashed (exit 1)",
        "killed by signal 9", "running"."""
        status, code = self.status, self.exit_code
        if status == "killed" and self.run_end is not None and self.run_end.signal:
            return f"killed by signal {self.run_end.signal}"
        if status == "exited":
            return f"exited with {code}" if code is not None else "exited"
        if status == "crashed" and code is not None:
            return f"crashed (exit {code})"
        return status

    @property
    def exit_code(self) -> int | None:
        return self.run_end.exit_code if self.run_end else None

    def compiles_in_order(self) -> list[CompileInfo]:
        return list(self.compiles.values())

    def compile_count(self, compiles: Iterable[CompileInfo] | None = None) -> int:
        """The compiles torch made (of every compile, or of ``compiles``: a scope of ranks),
        the one count every face shows: a call the recompile limit refused is a limit hit
        (``recompile_limits``), not a compile."""
        return sum(1 for c in (self.compiles.values() if compiles is None else compiles) if not c.refused)

    def frames_in_order(self) -> list[FrameInfo]:
        return list(self.frames.values())

    def break_groups(self) -> list[BreakGroup]:
        """Unique breaks, most hit first, then by location."""
        return sorted(self.breaks.values(), key=lambda g: (-g.count, g.loc.file, g.loc.line))

    def total_break_hits(self) -> int:
        return sum(g.count for g in self.breaks.values())

    def compile_time_by_stage(self, compiles: Iterable[CompileInfo] | None = None) -> dict[str, float]:
        """Seconds per stage over every compile (or over ``compiles``: the TUI's scope of
        ranks), what every face shows."""
        out: Counter[str] = Counter()
        for c in self.compiles.values() if compiles is None else compiles:
            out.update(c.stage_times())
        return dict(out)

    def total_compile_time(self, compiles: Iterable[CompileInfo] | None = None) -> float:
        return sum(c.compile_time_s for c in (self.compiles.values() if compiles is None else compiles))

    def cache_counts(self, compiles: Iterable[CompileInfo] | None = None) -> dict[str, int]:
        """FX graph and AOTAutograd cache hits/misses/bypasses over every compile (or over
        ``compiles``: the TUI's scope of ranks), what every face shows.

        The cache artifacts are counted, not only the capture's counters: a backward graph
        compiled lazily (at the first backward call, after torch's compilation_metrics for
        the frame) looks the cache up after the capture was written. The capture's counters
        stay a floor for logs whose torch emitted no cache artifacts.
        """
        out: Counter[str] = Counter()
        for c in self.compiles.values() if compiles is None else compiles:
            seen: Counter[str] = Counter()
            for ce in c.caches:
                prefix = {"fx_graph": "fx_graph", "aotautograd": "aot"}.get(ce.cache)
                if prefix is not None:
                    seen[f"{prefix}_{'bypasses' if ce.bypass else 'hits' if ce.hit else 'misses'}"] += 1
            cap = c.capture
            floors = {
                "fx_graph_hits": cap.fx_cache_hits if cap else 0,
                "fx_graph_misses": cap.fx_cache_misses if cap else 0,
                "aot_hits": cap.aot_cache_hits if cap else 0,
                "aot_misses": cap.aot_cache_misses if cap else 0,
            }
            for key in ("fx_graph_hits", "fx_graph_misses", "aot_hits", "aot_misses"):
                out[key] += max(seen[key], floors[key])
            for key in ("fx_graph_bypasses", "aot_bypasses"):
                out[key] += seen[key]
        return dict(out)

    def _profiled_kernels(self, event: KernelProfile, log: str) -> list[KernelInfo]:
        """The kernels a profile is about: same name in the same process, narrowed to the
        compile whose FX-graph cache key the profiler saw (names like ``cpp_fused_sum_0``
        repeat across graphs), else its compile id, then forward/backward."""
        found = [k for k in self.kernels if k.name == event.name and k.compile.log == log]
        narrowers = (
            lambda k: event.graph is not None and any(ce.cache == "fx_graph" and ce.key == event.graph for ce in k.compile.caches),
            lambda k: event.cid is not None and k.compile.cid == event.cid,
            lambda k: k.event.backward == event.backward,
        )
        for keep in narrowers:
            if len(found) <= 1:
                break
            narrowed = [k for k in found if keep(k)]
            if narrowed:
                found = narrowed
        return found

    def line_profile(self) -> list[LineProfile]:
        """Steady-state time per user source line (``--profile-kernels``): each profiled
        kernel's time per step goes to every line its provenance names, so a fused kernel
        counts on each of its lines. Most expensive first."""
        lines: dict[tuple[str, int], LineProfile] = {}
        seen: set[tuple[int, str, int]] = set()
        for k in self.kernels:
            p = k.profile
            if p is None or not p.steps:
                continue
            for loc in k.lines:
                key = (id(p), loc.file, loc.line)
                if key in seen:
                    continue
                seen.add(key)
                entry = lines.get((loc.file, loc.line))
                if entry is None:
                    entry = lines[(loc.file, loc.line)] = LineProfile(loc.file, loc.line)
                entry.us_per_step += p.total_us / p.steps
                entry.kernels.append(k)
        return sorted(lines.values(), key=lambda e: -e.us_per_step)

    def process_for(self, log: str) -> Process | None:
        return self.processes.get(log)

    def ranks(self) -> list[int]:
        return sorted({p.rank for p in self.processes.values() if p.rank is not None})


def _setter(attr: str) -> Callable[[RunModel, Event, str], None]:
    def handle(model: RunModel, event: Event, log: str) -> None:
        if event.cid is not None:
            setattr(model.compile(log, event.cid), attr, event)

    return handle


def _appender(attr: str) -> Callable[[RunModel, Event, str], None]:
    def handle(model: RunModel, event: Event, log: str) -> None:
        if event.cid is not None:
            getattr(model.compile(log, event.cid), attr).append(event)

    return handle


# Event class → what the model does with it. Kinds not here (``chromium``, ``raw``) are
# only counted. A subclass (the reader's ``LightChromium``) finds its base's entry.
_HANDLERS: dict[type, Callable[[RunModel, Any, str], None] | None] = {
    RunStart: RunModel._run_start,
    RunEnd: RunModel._run_end,
    LogHeader: RunModel._log_header,
    ProcessStart: RunModel._process_start,
    ProcessEnd: RunModel._process_end,
    KernelProfile: RunModel._kernel_profile,
    KernelMeta: RunModel._kernel_meta,
    StepProfile: RunModel._step_profile,
    PathAlias: RunModel._path_alias,
    NotebookCell: RunModel._notebook_cell,
    CompileStart: RunModel._compile_start,
    Capture: RunModel._capture,
    BackwardCapture: _setter("backward"),
    GraphBreak: RunModel._graph_break,
    Recompile: RunModel._recompile,
    RecompileLimit: RunModel._recompile_limit,
    Guards: _setter("guards"),
    Graph: _appender("graphs"),
    OutputCode: _appender("output_codes"),
    Kernel: RunModel._kernel,
    KernelProvenance: RunModel._kernel_provenance,
    Symbol: _appender("symbols"),
    Specialization: _appender("specializations"),
    ShapeGuard: _appender("shape_guards"),
    Bytecode: _appender("bytecode"),
    CacheEvent: _appender("caches"),
    Artifact: _appender("artifacts"),
    DdpSplit: RunModel._ddp_split,
    DdpBucket: _appender("ddp_buckets"),
    Chromium: None,
    Raw: None,
}


def handler_for(cls: type) -> Callable[[RunModel, Any, str], None] | None:
    """What ``RunModel.apply`` does with an event of ``cls`` besides counting it (None:
    only counted)."""
    if cls in _HANDLERS:
        return _HANDLERS[cls]
    for base in cls.__mro__[1:]:
        if base in _HANDLERS:
            _HANDLERS[cls] = _HANDLERS[base]
            return _HANDLERS[cls]
    _HANDLERS[cls] = None
    return None
