"""Graph breaks, deduplicated and attributed to the user's own code.

A break's innermost location may be inside a library (transformers, torch itself) or an
inlined helper; ``BreakSite.user_frame`` is the nearest frame of its stack inside the
workspace root (or, without a root, the innermost non-library frame) — the line the user
can change. A site hit from several callers lists each distinct caller line.

Public API: ``break_sites(model, root=None) -> list[BreakSite]``, ``attributed_loc(group)``
(the line a break site is listed at: the TUI's screens call it, and the summary, the
bundle's pages and the step costs show ``BreakSite.user_frame or BreakSite.loc``, the same
line; ``breaks --json`` and ``check`` give both lines; the language server places each
hit at its own nearest workspace frame instead, ``inspector/reports/findings.py``),
``identity(group, cwd)`` (the cross-run key used by ``diff`` and ``check --baseline``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from dyn_inspect.engine.schema import GraphBreak, Loc
from dyn_inspect.inspector.locations import is_library, nearest_user_frame, relative
from dyn_inspect.inspector.model import BreakGroup, RunModel


@dataclass
class BreakSite:
    """One deduplicated break site (``group``) and where it lands in the user's code."""

    group: BreakGroup
    user_frame: Loc | None  # nearest workspace frame of the first hit's stack
    user_frames: list[Loc] = field(default_factory=list)  # distinct ones over all hits

    @property
    def first(self) -> GraphBreak:
        return self.group.first

    @property
    def count(self) -> int:
        return self.group.count

    @property
    def loc(self) -> Loc:
        return self.group.loc

    @property
    def in_library(self) -> bool:
        """The innermost location is library code (the user line is ``user_frame``)."""
        return is_library(self.loc.file)

    @property
    def context(self) -> str:
        """torch's debug context for the break: what it actually hit (GB0112: the exception
        the call raised, "sin() takes 1 positional argument but 2 were given"), else ""."""
        return self.first.context

    @property
    def stack(self) -> list[Loc]:
        return list(self.first.user_stack) or [self.loc]

    @property
    def compile_ids(self) -> list[str]:
        return sorted({e.cid or "" for _, e in self.group.hits})


def _stack_of(event: GraphBreak) -> list[Loc]:
    return list(event.user_stack) or [event.loc]


def attributed_loc(group: BreakGroup, root: str | os.PathLike[str] | None = None) -> Loc:
    """Where a break site is shown: the nearest user frame of its first hit's stack, else
    torch's innermost location (``BreakSite.user_frame or BreakSite.loc``, the line the
    summary and the step costs show). The TUI's screens call it (``reports/screens.py``)."""
    frame = nearest_user_frame(_stack_of(group.first), root)
    if frame is None or (frame.file, frame.line) == (group.loc.file, group.loc.line):
        return group.loc  # (the same line: torch's location carries the columns)
    return frame


def break_sites(model: RunModel, root: str | os.PathLike[str] | None = None) -> list[BreakSite]:
    """Unique break sites, most hit first, each with its nearest user frame under ``root``."""
    out: list[BreakSite] = []
    for group in model.break_groups():
        frames: list[Loc] = []
        seen: set[tuple[str, int]] = set()
        for _, event in group.hits:
            f = nearest_user_frame(_stack_of(event), root)
            if f is not None and (f.file, f.line) not in seen:
                seen.add((f.file, f.line))
                frames.append(f)
        first = nearest_user_frame(_stack_of(group.first), root)  # (attributed_loc: this, else loc)
        out.append(BreakSite(group, first, frames))
    return out


def identity(group: BreakGroup, cwd: str | None) -> tuple[str, str, str, str]:
    """A break site's identity across runs: type, file (relative to the run's cwd), function
    and the line's text — not the line number, so an edit above it does not make it new."""
    loc = group.loc
    return (group.first.gb_type, relative(loc.file, cwd), loc.name or "", (loc.code or str(loc.line)).strip())
