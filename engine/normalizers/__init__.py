"""Turning torch's structured-trace records into schema events: one normalizer per kind.

Both the live recorder (records arrive from the ``torch.__trace`` logger) and the
TORCH_TRACE importer (records parsed from a file) feed ``Normalizer.feed``, so a run
looks the same however it was captured. Each module of this package registers the kinds
it owns with ``@handles`` / ``@handles_artifact``; the dispatch here knows none of them.
A record nobody handles becomes a ``Raw`` event: nothing torch emits is dropped.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.eventlog import BlobStore
from dyn_inspect.engine.normalizers.locations import is_library_file, package_path
from dyn_inspect.engine.schema import (
    Event,
    GraphBreak,
    KernelMeta,
    KernelProfile,
    Loc,
    LogHeader,
    NotebookCell,
    PathAlias,
    ProcessEnd,
    ProcessStart,
    Raw,
    RunEnd,
    RunStart,
    StepProfile,
)
from dyn_inspect.engine.source_files import source_line

# Keys torch puts beside the kind in every record's metadata.
COMMON_KEYS = frozenset({"rank", "frame_id", "frame_compile_id", "attempt", "has_payload", "compiled_autograd_id"})


class Deferred:
    """Metadata torch handed over as a function (``tracehook.DEFERRED``): computed by
    ``TraceRecord.resolve`` on the recorder's writer thread, off the compiling thread."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn


@dataclass(slots=True)
class TraceRecord:
    """One structured-trace record: torch's metadata dict and its (optional) payload."""

    metadata: dict[str, Any]
    payload: str | None = None
    t: float = 0.0
    epoch: int = 0  # resets of Dynamo seen before this record (``compile_ids``); set by Normalizer
    # torch state read on the compiling thread (``on_torch_thread``): Dynamo's config is
    # thread-local, so the recorder's writer thread would read the defaults.
    recompile_limit: int | None = None
    ddp_caps: tuple[int | None, int | None] | None = None  # DDP's bucket caps (bytes): all, first

    def resolve(self) -> bool:
        """Compute the metadata left ``Deferred``; False when torch's function raised (the
        record is dropped, as torch drops one whose formatting fails)."""
        for key, value in self.metadata.items():
            if isinstance(value, Deferred):
                try:
                    self.metadata[key] = value.fn()
                except Exception:  # noqa: BLE001 - torch's own formatting
                    return False
        return True

    @property
    def kind(self) -> str:
        for key in self.metadata:
            if key not in COMMON_KEYS:
                return key
        return "unknown"

    @property
    def body(self) -> Any:
        return self.metadata.get(self.kind)

    @property
    def torch_compile_id(self) -> str | None:
        """The id as torch prints it ("0/0"), the same again after ``torch._dynamo.reset()``."""
        md = self.metadata
        frame, n = md.get("frame_id"), md.get("frame_compile_id")
        if frame is None or n is None:
            return None
        cid = f"{frame}/{n}"
        if md.get("compiled_autograd_id") is not None:
            cid = f"!{md['compiled_autograd_id']}/{cid}"
        return cid

    @property
    def compile_id(self) -> str | None:
        """Unique for the process's life: torch's id qualified by the reset epoch."""
        cid = self.torch_compile_id
        return compile_ids.qualify(cid, self.epoch) if cid is not None else None


def on_torch_thread(record: TraceRecord) -> None:
    """Called by the live recorder on torch's own thread, before the record is queued:
    copies into it what only that thread can read (the recompile limit in force now, the
    DDP module being compiled)."""
    if "optimize_ddp_split_graph" in record.metadata:
        record.ddp_caps = _ddp_caps()
    if "dynamo_start" in record.metadata:
        config = sys.modules.get("torch._dynamo.config")
        for name in ("recompile_limit", "cache_size_limit"):
            value = getattr(config, name, None)
            if isinstance(value, int) and not isinstance(value, bool):
                record.recompile_limit = value
                break


def _ddp_caps() -> tuple[int | None, int | None]:
    """The bucket caps DDPOptimizer split with: the DDP module whose forward is running
    (``_active_ddp_module``, where Dynamo reads it) and torch's first-bucket default."""
    module_class = getattr(sys.modules.get("torch.nn.parallel.distributed"), "DistributedDataParallel", None)
    cap = getattr(getattr(module_class, "_active_ddp_module", None), "bucket_bytes_cap", None)
    first = getattr(sys.modules.get("torch.distributed"), "_DEFAULT_FIRST_BUCKET_BYTES", None)
    return (cap if isinstance(cap, int) else None, first if isinstance(first, int) else None)


@dataclass
class PendingBreak:
    """What the live hook on Dynamo's log_graph_break saw before torch logged the text."""

    gb_type: str | None
    stack: list[Any]  # traceback.FrameSummary, outermost first


@dataclass
class Context:
    """State normalizers share within one process's stream of records."""

    blobs: BlobStore
    strings: dict[int, str] = field(default_factory=dict)
    captured: set[str] = field(default_factory=set)
    breaks_in_compile: Counter[str] = field(default_factory=Counter)
    cache_counts: dict[str, Counter[str]] = field(default_factory=dict)
    output_code: dict[str, tuple[str, bool]] = field(default_factory=dict)
    frames: dict[Any, tuple[Any, Any, Any]] = field(default_factory=dict)  # frame_id → code object
    has_backward: set[str] = field(default_factory=set)  # compiles with an AOT backward graph
    forward_done: set[str] = field(default_factory=set)  # compiles whose forward module is out
    pending_break: PendingBreak | None = None
    # compile id → the break torch warned of ("WON'T CONVERT ...", GB0219) and has not logged yet
    pending_warning: dict[str, GraphBreak] = field(default_factory=dict)
    # Older torch's breaks known only from a compile's restart reasons (no graph-break
    # record): (epoch, file, function) of the frame that broke → its breaks, placed at the
    # line its resume function names when that function compiles (``restart_breaks``)
    pending_restarts: dict[tuple[int, str, str], list[GraphBreak]] = field(default_factory=dict)
    break_records: int = 0  # graph-break records this stream carried
    epoch: int = 0  # Dynamo resets seen so far (compile ids restart at 0/0 after each)
    begun: dict[str, set[str]] = field(default_factory=dict)  # torch id → begin signals seen this epoch
    live: bool = False  # records come from this very process (its files are on this disk)
    # Files this process's fresh records name (Dynamo's stacks and graphs, never cached):
    # cached Inductor artifacts may name another checkout's copies of them.
    source_files: set[str] = field(default_factory=set)
    # (cid, backward) → post-grad graph node name → the user line its "# File:" comment names
    node_lines: dict[tuple[str, bool], dict[str, Loc]] = field(default_factory=dict)
    call_sites: dict[str, Loc] = field(default_factory=dict)  # cid → innermost user frame that called it
    aliases: dict[str, str] = field(default_factory=dict)  # a cached artifact's path → this run's file
    unannounced: list[tuple[str, str]] = field(default_factory=list)

    def qualify(self, torch_id: object) -> str | None:
        """A compile id found inside a payload ("0/0"), in the current reset epoch."""
        if torch_id in (None, "", "None"):
            return None
        return compile_ids.qualify(str(torch_id), self.epoch)

    def note_begin(self, torch_id: object, signal: str) -> None:
        """A compile begins. torch signals it twice (the "dynamo" timing span, then the
        ``dynamo_start`` record): the same signal again for the same id means torch's
        counters restarted, i.e. ``torch._dynamo.reset()`` ran — a new epoch."""
        if torch_id in (None, "", "None"):
            return
        seen = self.begun.setdefault(str(torch_id), set())
        if signal in seen:
            self.epoch += 1
            self.begun = {str(torch_id): {signal}}
        else:
            seen.add(signal)

    def local_loc(self, loc: Loc) -> Loc | None:
        """``loc`` as this run's file. Cached Inductor artifacts (provenance, post-grad
        graphs from a warm FX/AOT cache) carry the paths of the process that filled the
        cache — another checkout, another venv: a path this run never traced maps onto the
        traced file with the longest common path tail (the same file name at least, and
        the same line text where both are known). In a live run, a path that does not
        exist here and maps onto nothing is dropped rather than shown as the user's line.
        Each mapping is announced once as a ``PathAlias`` (``new_aliases``)."""
        if loc.file in self.source_files or not self.source_files:
            return loc
        here = self.aliases.get(loc.file)
        if here is None:
            here = _tail_match(loc, self.source_files)
            if here is None and self.live and is_library_file(loc.file):
                here = _library_here(loc.file)
            if here is not None:
                self.aliases[loc.file] = here
                self.unannounced.append((loc.file, here))
        if here is not None:
            return Loc(file=here, line=loc.line, name=loc.name, col=loc.col, end_col=loc.end_col, code=loc.code)
        if self.live and not os.path.exists(loc.file):
            return None
        return loc

    def new_aliases(self) -> list[Event]:
        out: list[Event] = [PathAlias(recorded=a, here=b) for a, b in self.unannounced]
        self.unannounced.clear()
        return out

    def is_backward_phase(self, cid: str) -> bool:
        """Is Inductor now compiling the backward of this compile? Lazily (the usual case)
        it happens after compilation_metrics; with dynamic shapes AOTAutograd compiles it
        right after the forward, before the metrics."""
        return cid in self.captured or (cid in self.has_backward and cid in self.forward_done)

    def filename(self, ref: Any) -> str:
        """Resolve torch's interned filename (an int index) to the path."""
        if isinstance(ref, int):
            return self.strings.get(ref, f"<unknown file #{ref}>")
        return str(ref)


def _tail_match(loc: Loc, known_files: set[str]) -> str | None:
    parts = loc.file.replace("\\", "/").split("/")
    best, best_len = None, 0
    for known in known_files:
        kparts = known.replace("\\", "/").split("/")
        n = 0
        while n < min(len(parts), len(kparts)) and parts[-1 - n] == kparts[-1 - n]:
            n += 1
        if n > best_len and _same_text(known, loc):
            best, best_len = known, n
    return best


def _same_text(path: str, loc: Loc) -> bool:
    """Does ``path`` hold ``loc``'s recorded line text (or is there nothing to compare)?"""
    if not loc.code:
        return True
    text = source_line(path, loc.line)
    return not text or text.strip() == loc.code.strip()


def _library_here(path: str) -> str | None:
    """A site-packages path of another environment → the same module in this one."""
    tail = package_path(path)
    if tail is None:
        return None
    for entry in sys.path:
        candidate = os.path.join(entry, tail)
        if os.path.isfile(candidate):
            return candidate
    return None


Handler = Callable[[TraceRecord, Context], Iterable[Event]]

_BY_KIND: dict[str, Handler] = {}
_BY_ARTIFACT: dict[str, Handler] = {}
_BY_ARTIFACT_PATTERN: list[tuple[re.Pattern[str], Handler]] = []


def handles(*kinds: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for kind in kinds:
            _BY_KIND[kind] = fn
        return fn

    return register


def handles_artifact(*names: str, pattern: str | None = None) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            _BY_ARTIFACT[name] = fn
        if pattern:
            _BY_ARTIFACT_PATTERN.append((re.compile(pattern), fn))
        return fn

    return register


# -- the way back: our events as TORCH_TRACE records ----------------------------------------
#
# Each normalizer module also says how its events are written back (``@emits``, next to the
# ``@handles`` that reads torch's record), so an event kind is added in one file. The
# writer (inspector/export/torch_trace.py) provides ``TraceOut``; payloads go through it, so
# redaction stays the exporter's business.


class TraceOut(Protocol):
    """What an emitter writes with: one TORCH_TRACE file of one process."""

    pid: int
    attempts: dict[str, int]  # cid → the attempt its dynamo_start had
    handles: dict[str, dict[str, str]]  # cid → kernel name → provenance debug handle

    def emit(self, t: float, metadata: dict[str, Any], payload: str | None = None) -> None: ...

    def envelope(self, kind: str, body: Any, cid: str | None) -> dict[str, Any]: ...

    def stack(self, t: float, locs: Iterable[Loc]) -> list[dict[str, Any]]: ...

    def text(self, event: Event, field: str, what: str) -> str | None:
        """The payload in ``event.<field>`` as the export writes it (None: not in the run)."""
        ...


Emitter = Callable[[Any, TraceOut], None]
EMITTERS: dict[type[Event], Emitter] = {}
# Kinds with no torch record: process lifetime, kernels split out of the output code,
# recompile-limit notes derived from the metrics, profiles, our path aliases, notebook cells.
NOT_EMITTED: set[type[Event]] = {
    LogHeader,
    ProcessStart,
    ProcessEnd,
    RunStart,
    RunEnd,
    PathAlias,
    KernelProfile,
    KernelMeta,
    StepProfile,
    NotebookCell,
}


def emits(*types: type[Event]) -> Callable[[Emitter], Emitter]:
    """Registers how events of ``types`` are written as TORCH_TRACE records."""

    def register(fn: Emitter) -> Emitter:
        for t in types:
            EMITTERS[t] = fn
        return fn

    return register


def emitter_for(event: Event) -> Emitter | None:
    for t in type(event).__mro__:  # LightChromium is a Chromium
        if t in EMITTERS:
            return EMITTERS[t]
    return None


def json_dict(text: str | None) -> dict[str, Any] | None:
    """``text`` as a JSON object, or None (no text, not JSON, not an object)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


@emits(Raw)
def emit_raw(event: Raw, out: TraceOut) -> None:
    md = dict(event.metadata) if event.metadata else {event.torch_kind: {}}
    payload = out.text(event, "payload", f"{event.torch_kind} record of {event.cid}") if event.payload else None
    out.emit(event.t, md, payload)


def _handler_for(record: TraceRecord) -> Handler | None:
    kind = record.kind
    if kind == "artifact":
        name = (record.body or {}).get("name", "")
        if name in _BY_ARTIFACT:
            return _BY_ARTIFACT[name]
        for pattern, fn in _BY_ARTIFACT_PATTERN:
            if pattern.match(name):
                return fn
    return _BY_KIND.get(kind)


def raw_event(record: TraceRecord, ctx: Context) -> Raw:
    payload = ctx.blobs.put(record.payload) if record.payload else None
    return Raw(
        t=record.t,
        cid=record.compile_id,
        torch_kind=record.kind,
        metadata=record.metadata,
        payload=payload,
    )


class Normalizer:
    """Feeds records through the registered handlers; never raises on odd input."""

    def __init__(self, blobs: BlobStore, live: bool = False) -> None:
        self.ctx = Context(blobs=blobs, live=live)
        self.failures = 0

    def feed(self, record: TraceRecord) -> list[Event]:
        if record.metadata.get("dynamo_start") is not None:
            self.ctx.note_begin(record.torch_compile_id, f"dynamo_start/{record.metadata.get('attempt') or 0}")
        record.epoch = self.ctx.epoch
        handler = _handler_for(record)
        if handler is None:
            return [raw_event(record, self.ctx)]
        try:
            events = list(handler(record, self.ctx))
        except Exception:  # noqa: BLE001 - a format we misread must not lose the record
            self.failures += 1
            return [raw_event(record, self.ctx)]
        for event in events:
            if not event.t:
                event.t = record.t
            if event.cid is None:
                event.cid = record.compile_id
        return events

    def finish(self) -> list[Event]:
        """What the stream's end decides: the breaks of an older torch known only from
        restart reasons whose frame never resumed, at the frame's first line — only where
        the stream carried no graph-break record at all (a torch that writes them wrote
        one for each of its breaks)."""
        from dyn_inspect.engine.normalizers.graph_breaks import unresumed_restart_breaks

        return list(unresumed_restart_breaks(self.ctx))


# Register every handler module (import for side effects; order does not matter).
from dyn_inspect.engine.normalizers import (  # noqa: E402,F401
    compiles,
    ddp,
    graph_breaks,
    graphs,
    guards,
    kernels,
    misc,
    recompiles,
    shapes,
)
