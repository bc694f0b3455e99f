"""Our events written back as a TORCH_TRACE log, so a bundle's recipient can also run
``tlparse`` (or ``dyn-inspect import``) on it.

The mapping is ``docs/event-log.md``'s table read backwards: ``compile_start`` →
``dynamo_start``, ``capture`` → ``compilation_metrics`` (torch's whole record, kept in the
metrics blob), ``graph`` → ``dynamo_output_graph`` / ``aot_*_graph`` / the pre/post-grad
artifacts, ``output_code`` → ``inductor_output_code``, ``graph_break`` → the
``dynamo_graph_break_reason`` artifact, ``recompile`` → ``recompile_reasons``, ``guards`` →
``dynamo_cpp_guards_str``, ``raw`` → its own metadata and payload, and so on. Each record is
torch's line shape: a glog prefix, a JSON envelope with the compile id, and the payload on
tab-indented lines with its md5 in ``has_payload``. File names in stacks are interned with
``str`` records, as torch does (tlparse requires it). Events that have no torch
counterpart (process lifetime, per-kernel splits of the output code, profiles) are left out.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

from dyn_inspect.engine.normalizers.graphs import STAGE_OF_ARTIFACT, STAGE_OF_KIND
from dyn_inspect.engine.schema import (
    Artifact,
    BackwardCapture,
    Blob,
    Bytecode,
    CacheEvent,
    Capture,
    Chromium,
    CompileStart,
    Event,
    Graph,
    GraphBreak,
    Guards,
    KernelProvenance,
    Loc,
    OutputCode,
    Raw,
    Recompile,
    ShapeGuard,
    Specialization,
    Symbol,
)
from dyn_inspect.inspector.export.redact import mode_for

# Our stage → torch's record: a kind of its own, or a named artifact. The first name wins
# where torch renamed a record between releases (after_post_grad_graph on 2.9).
_KIND_OF_STAGE: dict[str, str] = {}
for _kind, _stage in STAGE_OF_KIND.items():
    _KIND_OF_STAGE.setdefault(_stage, _kind)
_ARTIFACT_OF_STAGE: dict[str, str] = {}
for _name, _stage in STAGE_OF_ARTIFACT.items():
    _ARTIFACT_OF_STAGE.setdefault(_stage, _name)

_HANDLE_RE = re.compile(r"# \[Provenance debug handles\] ([\w.]+):(\d+)")

# Where the glog prefix says the record was logged from: us, not torch.
_SOURCE = "dyn_inspect/export/torch_trace.py:0"

# payload(blob, mode) -> text or None when the payload is missing from the run.
PayloadFn = Callable[[Blob | None, str], str | None]


def cid_fields(cid: str | None) -> dict[str, int]:
    """"3/1" → frame 3, compile 1; "!0/3/1" adds compiled autograd id 0."""
    if not cid:
        return {}
    out: dict[str, int] = {}
    rest = cid
    if rest.startswith("!"):
        ca, _, rest = rest[1:].partition("/")
        if ca.isdigit():
            out["compiled_autograd_id"] = int(ca)
    frame, _, n = rest.partition("/")
    if frame.isdigit() and n.isdigit():
        out["frame_id"] = int(frame)
        out["frame_compile_id"] = int(n)
    return out


def _glog_prefix(t: float, pid: int) -> str:
    tm = time.gmtime(t if t > 0 else 0)
    micros = int(round((t - int(t)) * 1e6)) % 1_000_000 if t > 0 else 0
    return f"V{tm.tm_mon:02d}{tm.tm_mday:02d} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{micros:06d} {pid} {_SOURCE}] "


class TraceWriter:
    """Writes one process's events as one TORCH_TRACE file."""

    def __init__(self, out: IO[str], payload: PayloadFn, pid: int = 0, rank: int | None = None) -> None:
        self.out = out
        self.payload = payload
        self.pid = pid
        self.rank = rank
        self.strings: dict[str, int] = {}
        self.attempts: dict[str, int] = {}
        self.records = 0
        self.missing: list[str] = []  # what could not be written (payload missing)
        self.handles: dict[str, dict[str, str]] = {}  # cid → kernel name → provenance handle

    # -- low level ---------------------------------------------------------------------

    def _emit(self, t: float, metadata: dict[str, Any], payload: str | None = None) -> None:
        if self.rank is not None and "rank" not in metadata:
            metadata = {**metadata, "rank": self.rank}
        if payload is not None:
            metadata = {**metadata, "has_payload": hashlib.md5(payload.encode("utf-8", "surrogatepass")).hexdigest()}
        self.out.write(_glog_prefix(t, self.pid) + json.dumps(metadata, default=str) + "\n")
        if payload is not None:
            for line in payload.split("\n"):
                self.out.write("\t" + line + "\n")
        self.records += 1

    def _envelope(self, kind: str, body: Any, cid: str | None) -> dict[str, Any]:
        md: dict[str, Any] = {kind: body}
        md.update(cid_fields(cid))
        if cid is not None and "frame_id" in md:
            md["attempt"] = self.attempts.get(cid, 0)
        return md

    def _intern(self, t: float, path: str) -> int:
        idx = self.strings.get(path)
        if idx is None:
            idx = self.strings[path] = len(self.strings)
            self._emit(t, {"str": [path, idx]})
        return idx

    def _stack(self, t: float, locs: Iterable[Loc]) -> list[dict[str, Any]]:
        return [
            {"line": loc.line, "name": loc.name or "", "filename": self._intern(t, loc.file), "loc": loc.code or ""}
            for loc in locs
        ]

    def _text(self, blob: Blob | None, mode: str, what: str) -> str | None:
        text = self.payload(blob, mode) if blob is not None else None
        if blob is not None and text is None:
            self.missing.append(what)
        return text

    # -- events ------------------------------------------------------------------------

    def write(self, event: Event) -> None:
        t, cid = event.t, event.cid
        if isinstance(event, CompileStart):
            if cid is not None:
                self.attempts[cid] = event.attempt
            self._emit(t, self._envelope("dynamo_start", {"stack": self._stack(t, event.stack)}, cid))
        elif isinstance(event, Capture):
            metrics = self._text(event.metrics, mode_for(event, "metrics"), f"compilation metrics of {cid}")
            body = _json_dict(metrics) or {
                "compile_id": cid,
                "co_name": event.co_name,
                "co_filename": event.co_filename,
                "co_firstlineno": event.co_firstlineno,
                "fail_type": event.fail_type,
                "fail_reason": event.fail_reason,
                "restart_reasons": event.restart_reasons,
                "graph_op_count": event.graph_op_count,
                "entire_frame_compile_time_s": event.times.total_s,
            }
            self._emit(t, self._envelope("compilation_metrics", body, cid))
        elif isinstance(event, BackwardCapture):
            body = _json_dict(self._text(event.metrics, mode_for(event, "metrics"), f"backward metrics of {cid}")) or {
                "inductor_compile_time_s": event.times.total_s,
                "code_gen_time_s": event.times.codegen_s,
            }
            self._emit(t, self._envelope("bwd_compilation_metrics", body, cid))
        elif isinstance(event, Graph):
            code = self._text(event.code, mode_for(event, "code"), f"{event.stage} graph of {cid}")
            if code is None:
                return
            stage = event.stage
            if stage not in _KIND_OF_STAGE and stage not in _ARTIFACT_OF_STAGE:
                stage = stage.removesuffix("_bw")  # Inductor's lazily compiled backward
            if stage in _KIND_OF_STAGE:
                self._emit(t, self._envelope(_KIND_OF_STAGE[stage], {}, cid), code)
            else:
                name = _ARTIFACT_OF_STAGE.get(stage, f"{stage}_graph")
                self._emit(t, self._envelope("artifact", {"name": name, "encoding": "string"}, cid), code)
        elif isinstance(event, OutputCode):
            code = self._text(event.code, mode_for(event, "code"), f"output code of {cid}")
            if code is not None:
                self.handles[cid or ""] = {m[1]: m[2] for m in _HANDLE_RE.finditer(code)}
                self._emit(t, self._envelope("inductor_output_code", {"filename": event.path}, cid), code)
        elif isinstance(event, GraphBreak):
            text = self._text(event.text, mode_for(event, "text"), f"graph break text of {cid}")
            if text is None:
                # Rebuild torch's message from the parsed fields (enough for tlparse).
                text = (
                    f"Graph break in user code at {event.loc.file}:{event.loc.line}\n"
                    f"Graph Break Reason: {event.reason or event.gb_type}\n"
                    + (f"  Explanation: {event.explanation}\n" if event.explanation else "")
                    + "".join(f"  Hint: {h}\n" for h in event.hints)
                )
            self._emit(t, self._envelope("artifact", {"name": "dynamo_graph_break_reason", "encoding": "string"}, cid), text)
        elif isinstance(event, Recompile):
            text = self._text(event.text, mode_for(event, "text"), f"recompile reasons of {cid}")
            if text is None:
                text = json.dumps(event.reasons)
            self._emit(t, self._envelope("artifact", {"name": "recompile_reasons", "encoding": "string"}, cid), text)
        elif isinstance(event, Guards):
            text = self._text(event.text, mode_for(event, "text"), f"guards of {cid}")
            if text is not None:
                self._emit(t, self._envelope("dynamo_cpp_guards_str", {}, cid), text)
        elif isinstance(event, Symbol):
            body = {"symbol": event.symbol, "val": event.value, "vr": event.range, "source": event.source,
                    "user_stack": self._stack(t, [event.loc] if event.loc else []), "stack": []}
            self._emit(t, self._envelope("create_symbol", body, cid))
        elif isinstance(event, Specialization):
            body = {"symbol": event.symbol, "sources": [event.source] if event.source else [], "value": event.value,
                    "reason": event.reason, "user_stack": self._stack(t, [event.loc] if event.loc else []), "stack": []}
            self._emit(t, self._envelope("symbolic_shape_specialization", body, cid))
        elif isinstance(event, ShapeGuard):
            body = {"expr": event.expr, "user_stack": self._stack(t, [event.loc] if event.loc else []), "stack": []}
            self._emit(t, self._envelope("guard_added_fast", body, cid))
        elif isinstance(event, Bytecode):
            text = self._text(event.code, mode_for(event, "code"), f"bytecode of {cid}")
            if text is not None:
                name = f"{event.function}_{event.which.upper()}_BYTECODE"
                self._emit(t, self._envelope("artifact", {"name": name, "encoding": "string"}, cid), text)
        elif isinstance(event, CacheEvent):
            detail = self._text(event.detail, mode_for(event, "detail"), f"{event.cache} cache record of {cid}") if event.detail else None
            name = f"{event.cache}_cache_{'hit' if event.hit else 'miss'}"
            self._emit(t, self._envelope("artifact", {"name": name, "encoding": "json"}, cid), detail or json.dumps({"key": event.key}))
        elif isinstance(event, Artifact):
            text = self._text(event.payload, mode_for(event, "payload"), f"artifact {event.name} of {cid}")
            if event.payload is not None and text is None:
                return
            self._emit(t, self._envelope("artifact", {"name": event.name, "encoding": event.encoding or "string"}, cid), text)
        elif isinstance(event, KernelProvenance):
            # torch's map: "<kernel>:<debug handle>" → one formatted stack per source line.
            # The handle numbers come from the output module just written (the importer
            # keeps only the handles that module uses).
            handles = self.handles.get(cid or "", {})
            traces = {
                f"{name}:{handles.get(name, i)}": [
                    f'  File "{loc.file}", line {loc.line}, in {loc.name or "?"}\n    {loc.code or ""}\n' for loc in locs
                ]
                for i, (name, locs) in enumerate(event.kernels.items(), start=1)
            }
            self._emit(t, self._envelope("artifact", {"name": "inductor_provenance_tracking_kernel_stack_traces", "encoding": "json"}, cid), json.dumps(traces))
        elif isinstance(event, Chromium):
            body = {"name": event.name, "ph": event.ph, "ts": event.ts, "cat": event.cat, "args": event.args,
                    "pid": self.pid, "tid": 0}
            self._emit(t, self._envelope("chromium_event", {}, cid), json.dumps(body, default=str))
        elif isinstance(event, Raw):
            md = dict(event.metadata) if event.metadata else {event.torch_kind: {}}
            payload = self._text(event.payload, mode_for(event, "payload"), f"{event.torch_kind} record of {cid}") if event.payload else None
            self._emit(t, md, payload)
        # Everything else (process lifetime, kernels split out of the output code,
        # recompile-limit notes derived from the metrics, profiles) has no torch record.


def _json_dict(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
