"""Compile failures at the top level (tlparse's "Failures and Restarts"): every compile torch
gave up on — a ``fullgraph=True`` break, a backend exception — with the user line it failed
on and torch's own exception text.

A failed compile is one whose ``compilation_metrics`` carry a ``fail_type`` that is not a
skip or the recompile limit (``Capture.outcome == "failed"``). The frame then ran eagerly,
or the exception reached the program, which may have caught it: either way nothing else
in the counts (breaks, recompiles) shows it.

Public API: ``compile_failures(model, root=None) -> list[CompileFailure]``,
``failure_sites(model, root=None) -> list[FailureSite]`` (deduplicated on type, user line
and torch's first message line, most hit first).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.locations import def_line, is_library, nearest_user_frame
from dyn_inspect.inspector.model import CompileInfo, RunModel
from dyn_inspect.inspector.source_files import source_line


@dataclass
class CompileFailure:
    """One failed compile: torch's exception type and text, and where the user can act."""

    compile: CompileInfo
    fail_type: str  # torch's exception class name ("Unsupported", "BackendCompilerFailed")
    reason: str  # torch's exception text as it logged it
    user_loc: Loc | None  # the user line: torch's failing frame, else the compiled function's def
    at_def: bool = False  # user_loc is the function's def line (torch named no line of it)

    @property
    def cid(self) -> str:
        return self.compile.cid

    @property
    def function(self) -> str:
        cap = self.compile.capture
        return (cap.co_name if cap is not None else None) or "?"

    @property
    def headline(self) -> str:
        """The first line of torch's text ("Data-dependent branching"); a line that only
        introduces the next ("backend='x' raised:") is joined with it."""
        lines = [line.strip() for line in self.reason.splitlines() if line.strip()]
        if not lines:
            return self.fail_type
        if lines[0].endswith(":") and len(lines) > 1:
            return f"{lines[0]} {lines[1]}"
        return lines[0]


@dataclass
class FailureSite:
    """Failures with one cause at one user line (a failing function called in a loop)."""

    first: CompileFailure
    failures: list[CompileFailure] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.failures)

    @property
    def compile_ids(self) -> list[str]:
        return [f.cid for f in self.failures]


def line_text(loc: Loc | None) -> str | None:
    """The recorded text of ``loc``'s line, else the file's line now (torch records only
    file and line for a failure)."""
    if loc is None:
        return None
    if loc.code:
        return loc.code.strip()
    text = source_line(loc.file, loc.line)
    return text.strip() or None


def _user_loc(c: CompileInfo, root: str | os.PathLike[str] | None) -> tuple[Loc | None, bool]:
    cap = c.capture
    assert cap is not None
    loc = cap.fail_loc
    if loc is not None and not is_library(loc.file):
        return loc, False
    # Torch named no user line (a backend exception) or a library one: the nearest user
    # frame of the compile's stack, else the compiled function's def line.
    stack = list(c.start.stack) if c.start is not None else []
    if loc is not None:
        stack.append(loc)
    near = nearest_user_frame(stack, root)
    if near is not None and near != loc:
        return near, False
    if cap.co_filename and not is_library(cap.co_filename):
        return Loc(file=cap.co_filename, line=def_line(cap.co_filename, cap.co_firstlineno or 1), name=cap.co_name), True
    return loc, False


def compile_failures(model: RunModel, root: str | os.PathLike[str] | None = None) -> list[CompileFailure]:
    """Every failed compile, in compile order."""
    out: list[CompileFailure] = []
    for c in model.compiles_in_order():
        cap = c.capture
        if cap is None or cap.outcome != "failed":
            continue
        loc, at_def = _user_loc(c, root)
        out.append(CompileFailure(c, cap.fail_type or "compile failure", (cap.fail_reason or "").strip(), loc, at_def))
    return out


def failure_sites(model: RunModel, root: str | os.PathLike[str] | None = None) -> list[FailureSite]:
    """Failures deduplicated on (type, user line, first message line), most hit first."""
    sites: dict[tuple[str, str, int, str], FailureSite] = {}
    for f in compile_failures(model, root):
        loc = f.user_loc
        key = (f.fail_type, loc.file if loc else "", loc.line if loc else 0, f.headline)
        site = sites.get(key)
        if site is None:
            site = sites[key] = FailureSite(f)
        site.failures.append(f)
    return sorted(sites.values(), key=lambda s: -s.count)
