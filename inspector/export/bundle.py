"""``export_run``: one self-describing zip for a bug report.

Two steps: ``plan_export`` decides what goes in (the selected compiles' events, the
payloads they reference, redaction) and estimates the size without writing anything;
``write_bundle`` writes the zip. The zip is built under a hidden temporary name next to
the output and renamed into place when complete, so a failed export leaves nothing behind
and never a half-written bundle under the chosen name; nothing else is written anywhere.

Layout (``docs/export.md``)::

    index.md                    what every file is
    manifest.json               versions, hardware, OS, command, exit status, config, skipped
    summary.md, report.html     breaks, recompiles (+ suggestions), kernels, compile time
    compiles/<proc>/<cid>/      per compile: graphs/ (code, .dot, .svg), repro/ (fx_graph_runnable),
                                guards.txt, output_code/, kernels/, graph_breaks/, compile.json
    config/                     torch/Inductor configuration at compile time (one file per distinct set)
    events/<log>.jsonl          the run's events (or the selected subset), dyn-inspect schema
    blobs/<digest>.txt          payloads the events reference that have no readable home above
    torch_trace/<proc>.log      the same as a TORCH_TRACE log, for tlparse
    trace.json                  the compile timeline as a Chrome/Perfetto trace (``dyn-inspect trace``)

Every payload is stored once: a payload that several compiles (or events) share is
written at its first readable path and referenced from the others (``compile.json`` and
``manifest.json["payloads"]`` map digests to paths). The TORCH_TRACE log necessarily
repeats payloads, as torch's own log does.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import secrets
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import msgspec

from dyn_inspect.engine.eventlog import TOOL_VERSION
from dyn_inspect.engine.schema import (
    Blob,
    Capture,
    Event,
    KernelProfile,
    LogHeader,
    ProcessEnd,
    ProcessStart,
    RecompileLimit,
    RunEnd,
    RunStart,
    StageTimes,
    UnknownEvent,
)
from dyn_inspect.inspector import outputs
from dyn_inspect.inspector.analysis import graphs as fx_graphs
from dyn_inspect.inspector.analysis import kernel_repro
from dyn_inspect.inspector.console import safe_text
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.export import pictures, report
from dyn_inspect.inspector.export.environment import ConfigSet, config_sets, environment, first_start
from dyn_inspect.inspector.export.pictures import PictureOptions
from dyn_inspect.inspector.export.redact import Redactor, mode_for
from dyn_inspect.inspector.export.selection import Selection, select
from dyn_inspect.inspector.export.torch_trace import TraceWriter
from dyn_inspect.inspector.locations import is_library
from dyn_inspect.inspector.model import CompileInfo, RunModel, is_launcher_log
from dyn_inspect.inspector.outputs import bundle as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.outputs.bundle import BundleCompile, CompileFile
from dyn_inspect.inspector.reader import map_strings, read_blob
from dyn_inspect.inspector.run import Run

BUNDLE_FORMAT = 1
_LIFECYCLE = (LogHeader, ProcessStart, ProcessEnd, RunStart, RunEnd)
_KERNEL_EXT = {"cpp": ".cpp", "triton": ".py", "cuda": ".cu"}
_SAFE = re.compile(r"[^A-Za-z0-9_.=-]+")
# torch writes the recording machine's cache directory into every runnable repro; on the
# recipient's machine that path is at best meaningless and at worst not writable.
_REPRO_CACHE_DIR = re.compile(r"^(os\.environ\[['\"]TORCHINDUCTOR_CACHE_DIR['\"]\]\s*=.*)$", re.M)
# Transformed payloads are cached for the TORCH_TRACE pass up to this many bytes in all.
_CACHE_BUDGET = 128 * 1024 * 1024


def _entry(path: str) -> zipfile.ZipInfo:
    """A zip entry for a streamed file (``writestr`` sets these itself)."""
    info = zipfile.ZipInfo(path, date_time=time.localtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o600 << 16  # like writestr's: the bundle holds model code
    return info


def safe_name(text: str) -> str:
    """A path component that cannot escape its folder (names come from the log)."""
    name = _SAFE.sub("_", text).strip("._") or "_"
    return name[:120]


def cid_dir(cid: str) -> str:
    return safe_name(cid.replace("!", "ca").replace("/", "_"))


def log_stem(log: str) -> str:
    return safe_name(log.removesuffix(".jsonl"))


@dataclass
class Skipped:
    what: str
    why: str

    def __str__(self) -> str:
        return f"{self.what}: {self.why}"


_MISSING = "is missing from the run directory"


def group_missing(skipped: list[Skipped]) -> list[Skipped]:
    """Missing payloads as one entry ("116 payloads missing ..."): a run without its blobs
    would otherwise list hundreds of lines. ``manifest.json["skipped"]`` keeps each."""
    missing = [s for s in skipped if s.why.endswith(_MISSING)]
    if len(missing) <= 1:
        return list(skipped)
    kinds: dict[str, int] = {}
    for s in missing:
        kind = s.what.split(" of compile ")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    top = ", ".join(f"{k} ×{n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:5])
    more = ", ..." if len(kinds) > 5 else ""
    grouped = Skipped(f"{len(missing)} payloads", f"missing from the run directory ({top}{more}); each is listed in manifest.json skipped")
    return [s for s in skipped if not s.why.endswith(_MISSING)] + [grouped]


@dataclass
class ExportPlan:
    run: Run
    out: Path
    force: bool
    selection: Selection
    events: dict[str, list[Event | UnknownEvent]]  # per log, selected (and redacted)
    blobs: dict[str, Blob]  # unique payloads the selected events reference
    payload_bytes: int  # their sum: the size estimate printed before writing
    estimate_bytes: int  # the whole bundle uncompressed (payloads + trace + events)
    redactor: Redactor | None
    problems: list[str]  # lines of the log that could not be read
    incomplete: list[str]  # what the run never finished (killed process, unfinished compile)
    command: list[str]
    pictures: PictureOptions = field(default_factory=PictureOptions)

    @property
    def redacted(self) -> bool:
        return self.redactor is not None

    @property
    def compile_count(self) -> int:
        return len(self.selection.keys)


@dataclass
class ExportResult:
    path: Path
    size_bytes: int
    payload_bytes: int
    estimate_bytes: int
    files: int
    compiles: int
    redacted: bool
    skipped: list[Skipped] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    # Seconds each part of the export took, in order (``export -v`` prints them).
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def contains_source(self) -> bool:
        return not self.redacted

    def output(self) -> typed.ExportResult:
        """What ``export --json`` prints."""
        return typed.ExportResult(
            path=str(self.path),
            size_bytes=self.size_bytes,
            payload_bytes=self.payload_bytes,
            estimate_bytes=self.estimate_bytes,
            files=self.files,
            compiles=self.compiles,
            redacted=self.redacted,
            skipped=[typed.Skipped(what=s.what, why=s.why) for s in self.skipped],
            incomplete=list(self.incomplete),
            contains_source=self.contains_source,
        )


# -- planning ----------------------------------------------------------------------------


def resolve_output(run: Run, out: str | os.PathLike[str] | None, force: bool) -> Path:
    name = f"dyn-inspect-{safe_name(run.path.name)}.zip"
    path = Path(out) if out is not None else Path.cwd() / name
    if path.is_dir():
        path = path / name
    path = path.absolute()
    if not path.parent.is_dir():
        raise InspectorError(f"cannot write {path}: {path.parent} is not a directory")
    if path.is_dir():
        raise InspectorError(f"{path} is a directory")
    if path.exists() and not force:
        raise InspectorError(f"{path} exists; pass --force to overwrite it")
    return path


def _blobs_of(event: Event | UnknownEvent) -> Iterator[Blob]:
    if isinstance(event, UnknownEvent):
        return
    for name in event.__struct_fields__:
        value = getattr(event, name)
        if isinstance(value, Blob):
            yield value


def _locations(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if "file" in value and "line" in value:
            yield value
        for v in value.values():
            yield from _locations(v)
    elif isinstance(value, list):
        for v in value:
            yield from _locations(v)


def build_redactor(events: dict[str, list[Event | UnknownEvent]]) -> Redactor:
    """Every non-library file the run points at, plus the code lines the log recorded, plus
    the recording machines' host names."""
    files: set[str] = set()
    code: set[str] = set()
    hosts: set[str] = set()
    for evs in events.values():
        for ev in evs:
            if isinstance(ev, UnknownEvent):
                continue
            if isinstance(ev, ProcessStart) and ev.hostname:
                hosts.add(ev.hostname)
            if isinstance(ev, (Capture, RecompileLimit)) and ev.co_filename:
                files.add(ev.co_filename)
            if isinstance(ev, (RunStart, ProcessStart)):
                argv = ev.command if isinstance(ev, RunStart) else ev.argv
                base = ev.cwd or ""
                for arg in argv:
                    if arg.endswith(".py") and base:
                        files.add(os.path.normpath(os.path.join(base, arg)))
                continue
            for loc in _locations(msgspec.to_builtins(ev)):
                file = str(loc["file"])
                if is_library(file):
                    continue
                files.add(file)
                if isinstance(loc.get("code"), str) and loc["code"]:
                    code.add(loc["code"])
    return Redactor.for_sources(files, code, hosts=hosts)


def _redact_event(event: Event | UnknownEvent, r: Redactor) -> Event | UnknownEvent:
    if isinstance(event, UnknownEvent):
        return UnknownEvent(kind=event.kind, data=r.value(event.data), t=event.t, cid=event.cid)
    if isinstance(event, _LIFECYCLE) and not isinstance(event, ProcessEnd):
        # Commands, versions, config: no source text, but paths with the user name and the
        # host name.
        data = map_strings(msgspec.to_builtins(event), r.identity)
        return msgspec.convert(data, type(event))
    data = r.value(msgspec.to_builtins(event))
    return msgspec.convert(data, type(event))


def incomplete_parts(model: RunModel, selection: Selection) -> list[str]:
    out: list[str] = []
    if model.run_start is not None and model.run_end is None:
        out.append("the run has no end record: it was still running or its launcher was killed")
    for p in model.processes.values():
        if p.start is not None and p.end is None:
            out.append(f"process {p.log} (pid {p.pid}) has no end record: killed or still running")
    for key, c in model.compiles.items():
        if key in selection and c.start is not None and c.capture is None:
            out.append(f"compile {c.cid} ({c.log}) never finished: no compilation metrics")
    return out


def plan_export(
    run: Run,
    out: str | os.PathLike[str] | None = None,
    *,
    compile_ids: Sequence[str] | None = None,
    at: str | None = None,
    redact_source: bool = False,
    force: bool = False,
    command: Sequence[str] | None = None,
    pictures: PictureOptions | None = None,
    kernels: Sequence[str] | None = None,
) -> ExportPlan:
    path = resolve_output(run, out, force)
    run.refresh()
    model = run.model
    cwd = model.run_start.cwd if model.run_start else None
    selection = select(
        model,
        compile_ids,
        at,
        lambda c: run.blob_text(g.code) if (g := c.graph("dynamo")) is not None else "",
        cwd=cwd,
        kernels=kernels,
    )
    all_events: dict[str, list[Event | UnknownEvent]] = {}
    for log, ev in run.events():
        all_events.setdefault(log, []).append(ev)
    kernel_names = {(k.compile.log, k.name) for k in model.kernels if (k.compile.log, k.compile.cid) in selection}

    def keep(log: str, ev: Event | UnknownEvent) -> bool:
        if selection.whole_run or isinstance(ev, _LIFECYCLE):
            return True
        if isinstance(ev, KernelProfile):
            return (log, ev.name) in kernel_names
        return ev.cid is not None and (log, ev.cid) in selection

    events = {log: [ev for ev in evs if keep(log, ev)] for log, evs in all_events.items()}
    redactor = build_redactor(all_events) if redact_source else None
    if redactor is not None:
        events = {log: [_redact_event(ev, redactor) for ev in evs] for log, evs in events.items()}
    blobs: dict[str, Blob] = {}
    occurrences = 0
    for evs in events.values():
        for ev in evs:
            for b in _blobs_of(ev):
                blobs.setdefault(b.digest, b)
                occurrences += b.size
    payload_bytes = sum(b.size for b in blobs.values())
    log_bytes = 0
    for log, evs in events.items():
        try:
            size = (run.path / log).stat().st_size
        except OSError:
            size = 0
        total = len(all_events.get(log, [])) or 1
        log_bytes += size * len(evs) // total
    problems = [str(p) for p in run.problems]
    incomplete = incomplete_parts(model, selection)
    return ExportPlan(
        run=run,
        out=path,
        force=force,
        selection=selection,
        events=events,
        blobs=blobs,
        payload_bytes=payload_bytes,
        estimate_bytes=payload_bytes + occurrences + 2 * log_bytes,
        redactor=redactor,
        problems=problems,
        incomplete=incomplete,
        command=list(command) if command is not None else ["export_run"],
        pictures=pictures if pictures is not None else PictureOptions(),
    )


# -- writing -----------------------------------------------------------------------------


@dataclass
class Entry:
    """A streamed file of the bundle: its path, the open stream, and what it is (set by the
    writer of the stream, for index.md and the manifest's file list)."""

    path: str
    stream: IO[bytes]
    what: str = ""


class _Writer:
    """Writes entries into the open zip; remembers where each payload went. Callers use
    ``put`` / ``payload`` / ``write_text`` / ``open_entry`` / ``list_last`` + ``write_last``
    and read the public records (``files``, ``skipped``, ``path_of``, ``blob_of``, …)."""

    def __init__(self, zf: zipfile.ZipFile, plan: ExportPlan) -> None:
        self.zf = zf
        self.plan = plan
        self.run = plan.run
        self.redactor = plan.redactor
        self.files: dict[str, str] = {}  # path → what it is
        self.skipped: list[Skipped] = []
        self.path_of: dict[str, str] = {}  # recorded digest → bundle path
        self.blob_of: dict[str, Blob] = {}  # recorded digest → stored payload (after redaction)
        self.stored: dict[str, str] = {}  # stored digest → bundle path
        self.pictures: dict[str, list[str]] = {}  # stored digest of a graph → its picture paths
        self._missing: set[str] = set()
        self._cache: dict[tuple[str, str], str] = {}
        self._cache_bytes = 0
        self.svg_note: str | None = None
        self._picture_jobs: list[tuple[pictures.Job, str, str, str]] = []  # job, stem, stage, code path
        self.svg_of: dict[str, str] = {}  # a graph's DOT path → its SVG's
        self.timings: dict[str, float] = {}
        self.kernel_paths: dict[tuple[str, str, str, bool], str] = {}
        self.repro_paths: dict[tuple[str, str], list[str]] = {}

    @contextlib.contextmanager
    def timed(self, part: str) -> Iterator[None]:
        """Adds the time the block takes to ``timings[part]``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[part] = self.timings.get(part, 0.0) + time.perf_counter() - start

    # payloads

    def _raw(self, blob: Blob) -> bytes | None:
        # A digest is a file name under blobs/: read_blob follows none that could leave it,
        # and reads only regular files, bounded.
        data = read_blob(self.run.path, blob)
        if data is None:
            self._missing.add(blob.digest)
        return data

    def _transforms(self, mode: str) -> bool:
        # Text payloads always: terminal control characters are shown, not kept.
        return self.redactor is not None or mode in ("repro", "text")

    def payload(self, blob: Blob | None, mode: str) -> str | None:
        """A payload as the bundle stores it (redacted, repro fixed); None if missing."""
        if blob is None:
            return None
        key = (blob.digest, mode)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        raw = self._raw(blob)
        if raw is None:
            return None
        text = raw.decode("utf-8", "replace")
        if self.redactor is not None:
            text = self.redactor.payload(text, mode)  # type: ignore[arg-type]
        if mode == "text":
            text = safe_text(text)
        if mode == "repro":
            text = _REPRO_CACHE_DIR.sub(lambda m: "# " + m[1] + "  # the recording machine's cache; left out by dyn-inspect export", text)
        if len(text) < 4_000_000 and self._cache_bytes + len(text) < _CACHE_BUDGET:
            self._cache[key] = text
            self._cache_bytes += len(text)
        return text

    def payload_bytes(self, blob: Blob, mode: str) -> bytes | None:
        """What the bundle stores: the recorded bytes as they are, unless transformed."""
        if not self._transforms(mode):
            return self._raw(blob)
        text = self.payload(blob, mode)
        return None if text is None else text.encode("utf-8", "surrogatepass")

    def _unique(self, path: str) -> str:
        if path not in self.files:
            return path
        stem, dot, ext = path.rpartition(".")
        if not dot or "/" in ext:
            stem, ext = path, ""
        n = 2
        while True:
            candidate = f"{stem}-{n}.{ext}" if ext else f"{stem}-{n}"
            if candidate not in self.files:
                return candidate
            n += 1

    def write_text(self, path: str, text: str, what: str) -> str:
        path = self._unique(path)
        self.zf.writestr(path, text.encode("utf-8", "surrogatepass"))
        self.files[path] = what
        return path

    @contextlib.contextmanager
    def open_entry(self, path: str) -> Iterator[Entry]:
        """A file written as a stream (events, TORCH_TRACE) at a free path near ``path``;
        listed with the ``what`` the caller sets on it once it is complete."""
        path = self._unique(path)
        with self.zf.open(_entry(path), "w") as raw:
            entry = Entry(path, raw)
            yield entry
        self.files[path] = entry.what

    def list_last(self, path: str, what: str) -> None:
        """List a file that ``write_last`` writes after the list is taken (the manifest
        lists itself and the index)."""
        self.files[path] = what

    def write_last(self, path: str, text: str) -> None:
        # Our own pages quote the run's file names, which may hold bytes that are no UTF-8
        # (surrogate escapes): written as \udcff escapes rather than failing the bundle.
        self.zf.writestr(path, text.encode("utf-8", "backslashreplace"))

    def missing_payloads(self) -> list[str]:
        """Digests of the payloads a read found missing from the run directory, sorted."""
        return sorted(self._missing)

    def put(self, blob: Blob | None, path: str, mode: str, what: str) -> tuple[str | None, bool]:
        """Store a payload once: (its path in the bundle or None if missing, newly written)."""
        if blob is None:
            return None, False
        if blob.digest in self.path_of:
            return self.path_of[blob.digest], False
        data = self.payload_bytes(blob, mode)
        if data is None:
            self.skipped.append(Skipped(what, f"payload {blob.digest} is missing from the run directory"))
            return None, False
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if not self._transforms(mode) and digest != blob.digest:
            self.skipped.append(Skipped(what, f"payload {blob.digest} is corrupted (content does not match its digest); exported as found"))
        stored = Blob(digest=digest, size=len(data))
        self.blob_of[blob.digest] = stored
        if digest in self.stored:
            self.path_of[blob.digest] = self.stored[digest]
            return self.stored[digest], False
        path = self._unique(path)
        self.zf.writestr(path, data)
        self.files[path] = what
        self.path_of[blob.digest] = path
        self.stored[digest] = path
        return path, True

    # per compile

    def compile_files(self, model: RunModel, c: CompileInfo, base: str) -> BundleCompile:
        label = f"{c.cid}" + (f" ({c.log})" if len(model.processes) > 1 else "")
        items: list[CompileFile] = []

        def add(role: str, blob: Blob | None, path: str, mode: str, what: str) -> tuple[str | None, bool]:
            stored, new = self.put(blob, path, mode, f"{what} of compile {label}")
            if stored is not None:
                items.append(CompileFile(role=role, path=stored))
            return stored, new

        with self.timed("graphs"):
            for i, g in enumerate(c.graphs, start=1):
                stage = safe_name(g.stage)
                path, new = add(f"graph:{g.stage}", g.code, f"{base}/graphs/{i:02d}-{stage}.py", "code", f"{g.stage} FX graph")
                if path is None:
                    continue
                stored = self.blob_of[g.code.digest].digest
                if new:
                    self.pictures[stored] = self._pictures(path, self.payload(g.code, "code") or "", g.stage, label)
                # The SVGs are drawn once every graph is known (``draw_pictures``): the DOT
                # is listed now, its SVG after it then (``with_svgs``).
                for pic in self.pictures.get(stored, []):
                    items.append(CompileFile(role=f"picture:{g.stage}", path=pic))
        runnable = [a for a in c.artifacts if a.name == "fx_graph_runnable"]
        for a in runnable:
            text = self.payload(a.payload, "repro") or ""
            kind = "backward" if "tangents_" in text else "forward"
            add(
                f"repro:{kind}",
                a.payload,
                f"{base}/repro/fx_graph_runnable_{kind}.py",
                "repro",
                f"runnable repro ({kind}) — run it with python",
            )
        if c.guards is not None:
            add("guards", c.guards.text, f"{base}/guards.txt", "text", "guards")
        with self.timed("kernels"):
            for oc in c.output_codes:
                which = "backward" if oc.backward else "forward"
                add(f"output_code:{which}", oc.code, f"{base}/output_code/{which}.py", "code", f"Inductor output module ({which})")
            for k in c.kernels:
                ev = k.event
                which = "backward" if ev.backward else "forward"
                ext = _KERNEL_EXT.get(ev.backend, ".txt")
                path, _ = add(
                    f"kernel:{ev.name}",
                    ev.source,
                    f"{base}/kernels/{which}/{safe_name(ev.name)}{ext}",
                    "code",
                    f"{ev.backend} kernel {ev.name}",
                )
                if path:
                    self.kernel_paths[(c.log, c.cid, ev.name, ev.backward)] = path
                if ev.backend == "triton" and (source := self.payload(ev.source, "code")):
                    # The kernel alone, on inputs of its recorded launch (kernel_repro.py).
                    stem = f"{base}/kernels/{which}/{safe_name(ev.name)}.repro"
                    made = kernel_repro.repro(k, source, self.run.path.name, f"{safe_name(ev.name)}.repro.py")
                    if made.script is not None:
                        stored = self.write_text(
                            f"{stem}.py", made.script, f"standalone repro of {ev.backend} kernel {ev.name} of compile {label}"
                        )
                        items.append(CompileFile(role=f"kernel_repro:{ev.name}", path=stored))
        for n, b in enumerate(c.breaks, start=1):
            add("graph_break", b.text, f"{base}/graph_breaks/{n}.txt", "text", f"graph break at line {b.loc.line}")
        if c.recompile is not None:
            add("recompile_reasons", c.recompile.text, f"{base}/recompile_reasons.txt", "text", "recompile reasons")
        repro = [i.path for i in items if i.role.startswith("repro:")]
        self.repro_paths[(c.log, c.cid)] = repro
        cap = c.capture
        return BundleCompile(
            compile_id=c.cid,
            log=c.log,
            function=cap.co_name if cap else None,
            file=cap.co_filename if cap else None,
            line=cap.co_firstlineno if cap else None,
            outcome=c.outcome,
            compile_time_s=round(c.compile_time_s, 4),
            stage_times_s=cap.times if cap else StageTimes(),
            graph_breaks=len(c.breaks),
            guards=c.guards.count if c.guards else None,
            kernels=[k.name for k in c.kernels],
            files=items,
            dir=base,
        )

    def _pictures(self, code_path: str, text: str, stage: str, label: str) -> list[str]:
        g = fx_graphs.parse_fx(text)
        stem = code_path.removesuffix(".py")
        title = f"{stage} graph of compile {label}"
        if g.number_of_nodes() == 0:
            unreadable = "the graph code is not a readable FX module; see the .py file"
            self.skipped.append(Skipped(f"picture of {code_path}", unreadable))
            return [self.write_text(f"{stem}.dot", fx_graphs.unparsed_dot(title, unreadable), f"{stage} graph (no picture)")]
        dot = fx_graphs.to_dot(g, title)
        dot_path = self.write_text(f"{stem}.dot", dot, f"{stage} graph picture (Graphviz DOT)")
        self._picture_jobs.append((pictures.Job(dot_path, dot, g.number_of_nodes()), stem, stage, code_path))
        return [dot_path]

    def draw_pictures(self) -> None:
        """The SVGs of every graph ``_pictures`` queued, drawn together under the plan's
        budget; what was not drawn is listed in ``skipped`` (the DOT is there)."""
        jobs, self._picture_jobs = self._picture_jobs, []
        if not jobs:
            return
        options = self.plan.pictures
        if not options.draw:
            self.svg_note = "not drawn (--no-pictures); each graph's DOT file is in the bundle"
            return
        if fx_graphs.graphviz() is None:
            self.svg_note = "Graphviz `dot` is not installed"
            return
        drawn = pictures.draw_all([job for job, *_ in jobs], options)
        for job, stem, stage, code_path in jobs:
            d = drawn[job.key]
            if d.svg is not None:
                self.svg_of[job.key] = self.write_text(f"{stem}.svg", d.svg, f"{stage} graph picture (SVG)")
            elif d.why:
                self.skipped.append(Skipped(f"SVG of {code_path}", d.why))

    def with_svgs(self, items: list[CompileFile]) -> list[CompileFile]:
        """``items`` with each drawn graph's SVG listed after its DOT."""
        out: list[CompileFile] = []
        for item in items:
            out.append(item)
            svg = self.svg_of.get(item.path) if item.role.startswith("picture:") else None
            if svg is not None:
                out.append(CompileFile(role=item.role, path=svg))
        return out


def _blob_rewriter(w: _Writer) -> Callable[[Any], Any]:
    def rewrite(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"digest", "size"}:
                stored = w.blob_of.get(str(value["digest"]))
                return msgspec.to_builtins(stored) if stored is not None else value
            return {k: rewrite(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        return value

    return rewrite


def write_bundle(plan: ExportPlan) -> ExportResult:
    out = plan.out
    if out.exists() and not plan.force:
        raise InspectorError(f"{out} exists; pass --force to overwrite it")
    tmp = out.with_name(f".{out.name}.{os.getpid()}-{secrets.token_hex(3)}.partial")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            w = _Writer(zf, plan)
            _write_contents(w, plan)
            zip_start = time.perf_counter()
        if plan.force:
            os.replace(tmp, out)
        else:
            # Refuse to replace a file that appeared meanwhile: link fails if it exists.
            try:
                os.link(tmp, out)
            except FileExistsError:
                raise InspectorError(f"{out} exists; pass --force to overwrite it") from None
            except OSError:
                os.replace(tmp, out)  # a filesystem without hard links
        try:
            os.chmod(out, 0o600)  # the bundle holds model code and paths, like the run
        except OSError:
            pass
        # Compression happens as each file is written (inside the parts above); this is the
        # zip's directory and moving it into place.
        w.timings["zip"] = time.perf_counter() - zip_start
    finally:
        tmp.unlink(missing_ok=True)
    return ExportResult(
        path=out,
        size_bytes=out.stat().st_size,
        payload_bytes=plan.payload_bytes,
        estimate_bytes=plan.estimate_bytes,
        files=len(w.files),
        compiles=plan.compile_count,
        redacted=plan.redacted,
        skipped=group_missing(w.skipped) + [Skipped("event log line", p) for p in plan.problems],
        incomplete=plan.incomplete,
        timings=dict(w.timings),
    )


def _write_contents(w: _Writer, plan: ExportPlan) -> None:
    """The bundle's files, in the order later ones depend on: compiles first (they give
    payloads their readable homes), then the rest of the payloads, the event log and the
    TORCH_TRACE that point at them, the pages, and last the manifest and index that list
    everything."""
    with w.timed("model"):
        model = _bundle_model(plan)
    compile_dirs, compile_index = _write_compiles(w, model)  # times graphs, kernels, pictures
    with w.timed("events, TORCH_TRACE, timeline"):
        configs = _write_configs(w, model)
        _write_loose_payloads(w, plan)
        _write_events(w, plan)
        _write_torch_trace(w, plan, model)
        _write_timeline(w, plan)
        _write_cost(w, plan)
    missing = w.missing_payloads()
    with w.timed("report.html, summary.md"):
        env = _write_pages(w, plan, model, compile_dirs)
    with w.timed("manifest, index"):
        manifest = _manifest(w, plan, model, env, configs, compile_index, missing)
        _write_manifest_and_index(w, plan, manifest)


def _bundle_model(plan: ExportPlan) -> RunModel:
    """The bundle's own model: built from the selected (and redacted) events, so every page
    shows exactly what the bundle holds."""
    model = RunModel()
    for log, evs in plan.events.items():
        for ev in evs:
            if not isinstance(ev, UnknownEvent):
                model.apply(ev, log)
    return model


def _write_compiles(w: _Writer, model: RunModel) -> tuple[dict[tuple[str, str], str], list[typed.ManifestCompile]]:
    """Per compile: its files and compile.json. Returns each compile's directory and the
    manifest's compile index."""
    compile_dirs: dict[tuple[str, str], str] = {}
    compile_index: list[typed.ManifestCompile] = []
    written: list[tuple[tuple[str, str], str, BundleCompile]] = []
    for key, c in model.compiles.items():
        base = f"compiles/{log_stem(c.log)}/{cid_dir(c.cid)}"
        written.append((key, base, w.compile_files(model, c, base)))
    # All graphs at once: one budget, drawn in parallel, before compile.json lists them.
    with w.timed("pictures"):
        w.draw_pictures()
    for key, base, info in written:
        info.files = w.with_svgs(info.files)
        w.write_text(f"{base}/compile.json", to_json(info) + "\n", f"compile {c.cid}: summary and where its files are")
        compile_dirs[key] = base
        compile_index.append(
            typed.ManifestCompile(compile_id=info.compile_id, log=info.log, function=info.function, outcome=info.outcome, dir=base)
        )
    return compile_dirs, compile_index


def _write_configs(w: _Writer, model: RunModel) -> list[ConfigSet]:
    """The configuration at compile time: one file per distinct set of values."""
    with_metrics: list[tuple[str, CompileInfo, dict[str, Any]]] = []
    for c in model.compiles.values():
        if c.capture is not None and c.capture.metrics is not None:
            text = w.payload(c.capture.metrics, "json")
            try:
                metrics = json.loads(text) if text else None
            except json.JSONDecodeError:
                metrics = None
            if isinstance(metrics, dict):
                with_metrics.append((c.cid, c, metrics))
    configs = config_sets(with_metrics)
    for n, cs in enumerate(configs, start=1):
        cs.path = w.write_text(
            f"config/compile-config-{n}.json",
            json.dumps({"compile_ids": cs.compile_ids, **cs.values}, indent=2, sort_keys=True, default=str) + "\n",
            "torch configuration (dynamo, inductor, functorch) the listed compiles ran under",
        )
    return configs


def _write_loose_payloads(w: _Writer, plan: ExportPlan) -> None:
    """Payloads the events reference that have no readable home yet, under blobs/."""
    for log, evs in plan.events.items():
        for ev in evs:
            if isinstance(ev, UnknownEvent):
                continue
            for name in ev.__struct_fields__:
                blob = getattr(ev, name)
                if isinstance(blob, Blob) and blob.digest not in w.path_of:
                    kind = type(ev).__struct_config__.tag  # type: ignore[attr-defined]
                    mode = mode_for(ev, name)
                    ext = ".json" if mode == "json" else ".txt"
                    w.put(blob, f"blobs/{blob.digest}{ext}", mode, f"{kind} payload ({ev.cid or log})")


def _write_events(w: _Writer, plan: ExportPlan) -> None:
    """The events themselves, blob references pointing at what the bundle stores."""
    rewrite = _blob_rewriter(w)
    encoder = msgspec.json.Encoder()
    for log, evs in plan.events.items():
        with w.open_entry(f"events/{safe_name(log)}") as entry:
            for ev in evs:
                data = ev.data if isinstance(ev, UnknownEvent) else rewrite(msgspec.to_builtins(ev))
                entry.stream.write(encoder.encode(data) + b"\n")
            entry.what = f"events of {log} (dyn-inspect event-log schema; payload digests → manifest.json payloads)"


def _write_torch_trace(w: _Writer, plan: ExportPlan, model: RunModel) -> None:
    """TORCH_TRACE, one file per process (not the launcher's)."""
    for log, evs in plan.events.items():
        if is_launcher_log(log):
            continue
        proc = model.processes.get(log)
        pid = (proc.pid or 0) if proc else 0
        rank = proc.rank if proc else None
        name = (f"rank_{rank}_" if rank is not None else "") + f"{log_stem(log)}.log"
        with w.open_entry(f"torch_trace/{name}") as entry:
            with io.TextIOWrapper(entry.stream, encoding="utf-8", errors="surrogatepass", newline="\n") as trace_text:
                tw = TraceWriter(trace_text, lambda b, mode: w.payload(b, mode), pid=pid, rank=rank)
                for ev in evs:
                    if not isinstance(ev, UnknownEvent):
                        tw.write(ev)
            entry.what = f"TORCH_TRACE log of {log} ({tw.records} records) — `tlparse {entry.path}`"


def _write_timeline(w: _Writer, plan: ExportPlan) -> None:
    """The compile timeline as a Chrome/Perfetto trace (what `dyn-inspect trace` writes)."""
    from dyn_inspect.inspector.analysis.timeline import trace_for_bundle

    selected = None if plan.selection.whole_run else {cid for _, cid in plan.selection.keys}
    scrub = plan.redactor.text if plan.redactor is not None else None
    w.write_text(
        "trace.json", trace_for_bundle(plan.run, selected, scrub), "compile timeline as a Chrome trace — open it in https://ui.perfetto.dev"
    )


def _write_cost(w: _Writer, plan: ExportPlan) -> None:
    """``cost.json`` (what `dyn-inspect cost --json` prints) for a run recorded with
    ``--profile``: where its steps' time goes. Left out of a redacted bundle — its break
    lines and function names are the user's — and of a selection (it is the whole run's)."""
    if not plan.run.model.step_profiles or plan.redactor is not None or not plan.selection.whole_run:
        return
    from dyn_inspect.inspector.reports import cost

    w.write_text(
        "cost.json", to_json(cost(plan.run)) + "\n", "where each profiled step's time goes, and what each break costs — `dyn-inspect cost`"
    )


def _write_pages(w: _Writer, plan: ExportPlan, model: RunModel, compile_dirs: dict[tuple[str, str], str]) -> dict[str, Any]:
    """summary.md and report.html. Returns the run's environment (the manifest's too)."""
    start = first_start(model)
    skipped_lines = (
        [str(s) for s in group_missing(w.skipped)]
        + [f"unreadable log line: {p}" for p in plan.problems]
        + [f"incomplete: {i}" for i in plan.incomplete]
    )
    env = environment(start, next((p.end for p in model.processes.values() if p.end and p.end.devices), None))
    selection_text = (
        "the whole run"
        if plan.selection.whole_run
        else "compiles "
        + ", ".join(c for _, c in plan.selection.keys)
        + (f" (selected by --at {plan.selection.at})" if plan.selection.at else "")
    )
    data = report.build(
        model,
        run_id=plan.run.path.name,
        cwd=model.run_start.cwd if model.run_start else None,
        environment=env,
        redacted=plan.redacted,
        selection=selection_text,
        compile_dirs=compile_dirs,
        kernel_paths=w.kernel_paths,
        repro_paths=w.repro_paths,
        skipped=skipped_lines,
        scrub=plan.redactor.text if plan.redactor is not None else (lambda s: s),
    )
    # Log text may hold terminal escapes (a graph_break message): shown, never sent.
    w.write_text("summary.md", safe_text(report.summary_markdown(data)), "summary: breaks, recompiles, kernels, compile time")
    w.write_text("report.html", safe_text(report.report_html(data)), "the same as a single offline HTML page")
    return env


def _manifest(
    w: _Writer,
    plan: ExportPlan,
    model: RunModel,
    env: dict[str, Any],
    configs: list[ConfigSet],
    compile_index: list[typed.ManifestCompile],
    missing: list[str],
) -> typed.Manifest:
    """manifest.json, without its file list (``_write_manifest_and_index`` adds it)."""
    run = plan.run
    start = first_start(model)
    rs, re_ = model.run_start, model.run_end
    header = next((p.header for p in model.processes.values() if p.header is not None), None)
    manifest = typed.Manifest(
        format="dyn-inspect-bundle",
        format_version=BUNDLE_FORMAT,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        tool=typed.Tool(name="dyn-inspect", version=TOOL_VERSION, command=list(plan.command)),
        run=typed.ManifestRun(
            id=run.path.name,
            command=list(rs.command) if rs else (list(start.argv) if start else []),
            cwd=rs.cwd if rs else (start.cwd if start else None),
            mode=rs.mode if rs else None,
            status=model.status,
            exit_status=re_.exit_code if re_ else None,
            exit_code=re_.exit_code if re_ else None,
            signal=re_.signal if re_ else None,
            duration_s=re_.duration_s if re_ else None,
            source=header.source if header else None,
            recorded_by=rs.tool_version if rs else None,
        ),
        environment=msgspec.convert(env, outputs.Environment),
        processes=[
            typed.ManifestProcess(
                log=p.log,
                pid=p.pid,
                rank=p.rank,
                argv=list(p.start.argv) if p.start else None,
                exit_code=p.end.exit_code if p.end else None,
                exception=p.end.exception.type if p.end and p.end.exception else None,
                environment=outputs.environment(p.start, p.end),
            )
            for p in model.processes.values()
        ],
        config=typed.ManifestConfig(
            recorded_at_start=dict(start.config) if start else {},
            at_compile_time=[typed.ConfigSet(compile_ids=cs.compile_ids, relevant=cs.relevant, file=cs.path) for cs in configs],
        ),
        selection=typed.ManifestSelection(
            whole_run=plan.selection.whole_run,
            compile_ids=list(plan.selection.compile_ids),
            at=plan.selection.at,
            compiles=[c for _, c in plan.selection.keys],
        ),
        redacted=plan.redacted,
        contains_source=not plan.redacted,
        compiles=compile_index,
        graph_pictures=typed.GraphPictures(dot=True, svg=w.svg_note is None, svg_note=w.svg_note),
        size=typed.BundleSize(payload_bytes=plan.payload_bytes, unique_payloads=len(plan.blobs), estimate_bytes=plan.estimate_bytes),
        # Every item (the pages and the command group missing payloads into one line).
        skipped=[typed.Skipped(what=s.what, why=s.why) for s in w.skipped]
        + [typed.Skipped(what="event log line", why=p) for p in plan.problems]
        + [
            typed.Skipped(what=f"payload {d}", why="missing from the run directory")
            for d in missing
            if not any(d in s.why for s in w.skipped)
        ],
        incomplete=list(plan.incomplete),
        # Events of kinds newer than this version: kept as written in events/, not interpreted.
        unknown_events=sum(isinstance(ev, UnknownEvent) for evs in plan.events.values() for ev in evs),
        payloads={w.blob_of[d].digest: p for d, p in w.path_of.items() if d in w.blob_of},
        files={},
    )
    return manifest


def _write_manifest_and_index(w: _Writer, plan: ExportPlan, manifest: typed.Manifest) -> None:
    """manifest.json and index.md, which list every file, themselves included."""
    w.list_last("manifest.json", "this file: versions, hardware, command, status, config, what was skipped")
    w.list_last("index.md", "the list of files")
    manifest.files = dict(sorted(w.files.items()))
    w.write_last("manifest.json", to_json(manifest, default=str) + "\n")
    grouped = [asdict(s) for s in group_missing(w.skipped)] + [{"what": "event log line", "why": p} for p in plan.problems]
    w.write_last("index.md", safe_text(_index(msgspec.to_builtins(manifest), plan, grouped)))


def _index(manifest: dict[str, Any], plan: ExportPlan, skipped: list[dict[str, str]]) -> str:
    run = manifest["run"]
    lines = [
        f"# dyn-inspect bundle — run {run['id']}",
        "",
        f"`{' '.join(run['command'])}` — {run['status']}" + (f", exit {run['exit_status']}" if run["exit_status"] is not None else ""),
        "",
        "Start with `report.html` (open it in a browser; it loads nothing from the network) or `summary.md`.",
        "Each compile's directory holds its FX graphs at every stage (with pictures), the runnable repro",
        "torch emitted (`repro/fx_graph_runnable_*.py`: `python` it, no model needed), guards, the Inductor",
        "output module and each kernel's source. `torch_trace/` opens with `tlparse`; `events/` is the",
        "dyn-inspect event log (payload digests → paths in `manifest.json` → `payloads`).",
        "",
        "Source code: "
        + ("redacted (--redact-source)." if plan.redacted else "INCLUDED — graph comments, guards and tracebacks quote the model's code."),
        "",
        "## Files",
        "",
    ]
    lines += [f"- `{path}` — {what}" for path, what in manifest["files"].items()]
    if skipped or manifest["incomplete"]:
        lines += ["", "## Skipped or incomplete", ""]
        lines += [f"- {s['what']}: {s['why']}" for s in skipped]
        lines += [f"- incomplete: {i}" for i in manifest["incomplete"]]
    return "\n".join(lines) + "\n"


def export_run(
    run: Run,
    out: str | os.PathLike[str] | None = None,
    *,
    compile_ids: Sequence[str] | None = None,
    at: str | None = None,
    redact_source: bool = False,
    force: bool = False,
    on_plan: Callable[[ExportPlan], None] | None = None,
    command: Sequence[str] | None = None,
    pictures: PictureOptions | None = None,
    kernels: Sequence[str] | None = None,
) -> ExportResult:
    """Write ``run`` (or the selected compiles) as one bug-report zip at ``out``.

    ``out`` defaults to ``./dyn-inspect-<run-id>.zip``; an existing file is refused unless
    ``force``. ``on_plan`` sees the plan (size estimate, whether source is included) before
    anything is written. ``pictures`` sets how the graphs' SVGs are drawn (default: in
    parallel, ``pictures.BUDGET_S`` seconds in all, graphs up to ``pictures.MAX_NODES``
    nodes). ``kernels``: only the compiles that made these kernels (``--kernel NAME``).
    Raises ``InspectorError`` for bad input.
    """
    plan = plan_export(
        run,
        out,
        compile_ids=compile_ids,
        at=at,
        redact_source=redact_source,
        force=force,
        command=command,
        pictures=pictures,
        kernels=kernels,
    )
    if on_plan is not None:
        on_plan(plan)
    return write_bundle(plan)
