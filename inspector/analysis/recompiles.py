"""A frame's recompiles in order: ``recompile_timeline`` gives each compile of a frame with
the guard failures that caused it (inspector/analysis/guard_failures.py) and what to do
about them (inspector/analysis/suggestions.py), and where the recompile limit was hit.

    recompile_timeline(model, frame) -> list[TimelineEntry]
    recompile_limit_of(model, frame) -> int | None
    frames_with_recompiles(model) -> list[FrameInfo]
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from dyn_inspect.inspector.analysis.guard_failures import GuardFailure, parse_reason
from dyn_inspect.inspector.analysis.suggestions import RESUME_RE, SuggestContext, Suggestion, is_stack_value, limit_suggestion, suggest
from dyn_inspect.inspector.locations import functions_in
from dyn_inspect.inspector.model import CompileInfo, FrameInfo, RunModel


@dataclass
class TimelineEntry:
    """One compile of a frame, in order: the first compile, then each recompile with the
    guard failures that caused it, and (last) whether the frame gave up and runs eagerly."""

    index: int  # 0 for the first compile
    compile: CompileInfo
    failures: list[GuardFailure] = field(default_factory=list)  # newest cache entry first
    suggestion: Suggestion | None = None
    limit_reached: bool = False  # the recompile limit was hit here: eager from now on
    limit: int | None = None

    @property
    def cid(self) -> str:
        return self.compile.cid

    @property
    def t(self) -> float:
        c = self.compile
        if c.start is not None and c.start.t:
            return c.start.t
        return c.capture.t if c.capture is not None else 0.0

    @property
    def is_recompile(self) -> bool:
        return self.index > 0


# -- timeline ------------------------------------------------------------------------------

_LIMIT_RE = re.compile(r"currently set to (\d+)")


def recompile_limit_of(model: RunModel, frame: FrameInfo) -> int | None:
    """The recompile limit that applied to ``frame``: from torch's message when it was hit,
    else the value in force at its last compile, else the process's config at start."""
    if frame.recompile_limit is not None:
        m = _LIMIT_RE.search(frame.recompile_limit.reason)
        if m:
            return int(m[1])
    if frame.limit_in_force is not None:  # what the program had set when it compiled
        return frame.limit_in_force
    proc = model.processes.get(frame.log)
    if proc is not None and proc.start is not None:
        value = proc.start.config.get("dynamo.recompile_limit", proc.start.config.get("dynamo.cache_size_limit"))
        if isinstance(value, int):
            return value
    return None


def reasons_of(c: CompileInfo) -> list[str]:
    """The guard-failure reasons that caused compile ``c`` (empty for a first compile)."""
    if c.recompile is not None and c.recompile.reasons:
        return list(c.recompile.reasons)
    if c.capture is not None and c.capture.recompile_reason:
        return [c.capture.recompile_reason]
    return []


def varkw_of(frame: FrameInfo) -> str | None:
    """The frame's ``**kwargs`` parameter name, read from its source (None when unknown)."""
    for node in functions_in(frame.filename):
        starts = [node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]
        if frame.firstlineno in starts:
            return node.args.kwarg.arg if node.args.kwarg is not None else None
    return None


def suggest_context(
    model: RunModel, frame: FrameInfo, failure: GuardFailure | None = None, compile: CompileInfo | None = None
) -> SuggestContext:
    """What ``suggest`` may rely on for a failure of ``frame``."""
    resume_line, item_break = None, False
    m = RESUME_RE.match(frame.name)
    if m is not None:
        resume_line = int(m["line"])
        item_break = (frame.filename, resume_line) in _item_break_sites(model)
    repeats = 1
    if failure is not None and failure.source:
        repeats = sum(
            1
            for c in frame.compiles
            for r in reasons_of(c)[:1]
            if (p := parse_reason(r)).kind == failure.kind and p.source == failure.source
        )
    function = m["fn"] if m is not None else frame.name
    static = False
    dims: tuple[tuple[str, int], ...] = ()
    if failure is not None and compile is not None:
        dims = dynamic_dims_of(compile)
        # A size/scalar guard that failed again on a later recompile of this frame, whose
        # recompile created no symbol: torch stayed static (automatic dynamic goes
        # dynamic on the first recompile, so the same dim never fails twice there).
        static = failure.kind in ("size", "scalar") and repeats >= 2 and not compile.symbols and not is_stack_value(failure.source)
    return SuggestContext(
        varkw=varkw_of(frame),
        resume_line=resume_line,
        item_break=item_break,
        repeats=repeats,
        function=function if function.isidentifier() and not function.startswith("<") else None,
        static=static,
        dynamic_dims=dims,
    )


def dynamic_dims_of(c: CompileInfo) -> tuple[tuple[str, int], ...]:
    """The input dims compile ``c`` made dynamic (its symbols' size sources), as the user
    names them: (("input_ids", 1), ("attention_mask", 1))."""
    out: list[tuple[str, int]] = []
    for sym in c.symbols:
        m = _SYMBOL_SOURCE_RE.match(sym.source or "")
        if m is None:
            continue
        name = m["name"] + (f"[{m['key']!r}]" if m["key"] else "")
        if (name, int(m["dim"])) not in out:
            out.append((name, int(m["dim"])))
    return tuple(out)


# L['x'].size()[0], and L['kwargs']['input_ids'].size()[1] for a ``**kwargs`` entry
_SYMBOL_SOURCE_RE = re.compile(r"""^L\[['"](?P<name>[^'"\]]+)['"]\](?:\[['"](?P<key>[^'"\]]+)['"]\])?\.size\(\)\[(?P<dim>\d+)\]$""")


def _item_break_sites(model: RunModel) -> set[tuple[str, int]]:
    """(file, line) of every ``.item()`` graph break (asked once per resume function)."""
    found = model.memo.get("item_break_sites")
    if found is None or found[0] != model.event_count:
        sites = {(g.loc.file, g.loc.line) for g in list(model.breaks.values()) if "item()" in g.first.gb_type or g.first.gb_id == "GB0124"}
        found = model.memo["item_break_sites"] = (model.event_count, sites)
    return found[1]


def recompile_timeline(model: RunModel, frame: FrameInfo) -> list[TimelineEntry]:
    """Every compile of ``frame`` in order, each recompile with its parsed guard failures and
    a suggestion (for the newest cache entry's failure, the one the user just changed), and
    the entry where the recompile limit was hit marked ``limit_reached``.

    Kept until the run grows or the frame's source changes (the suggestion reads it):
    the language server asks twice per frame per rebuild, for thousands of frames. The
    entries are shared: callers read them, never change them."""
    try:
        version = os.stat(frame.filename).st_mtime_ns
    except (OSError, ValueError):
        version = None
    key = (model.event_count, version)
    memo = model.memo.setdefault("recompile_timeline", {})
    known = memo.get(frame.key)
    if known is not None and known[0] == key:
        return known[1]
    out = _timeline(model, frame)
    memo[frame.key] = (key, out)
    return out


def _timeline(model: RunModel, frame: FrameInfo) -> list[TimelineEntry]:
    limit = recompile_limit_of(model, frame)
    out: list[TimelineEntry] = []
    for index, c in enumerate(frame.compiles):
        failures = [parse_reason(r) for r in reasons_of(c)]
        entry = TimelineEntry(index=index, compile=c, failures=failures, limit=limit)
        hit = c.outcome == "recompile_limit" or (
            frame.recompile_limit is not None and frame.recompile_limit.cid == c.cid and index == len(frame.compiles) - 1
        )
        if hit:
            entry.limit_reached = True
            entry.suggestion = limit_suggestion(limit)
        elif failures:
            entry.suggestion = suggest(failures[0], suggest_context(model, frame, failures[0], c))
        out.append(entry)
    return out


def frames_with_recompiles(model: RunModel) -> list[FrameInfo]:
    """Frames compiled more than once or that hit the limit, in first-compile order."""
    return [f for f in model.frames_in_order() if len(f.compiles) > 1 or f.recompile_limit is not None]
