"""What could not be read of a run: corrupted or truncated lines, events of kinds this
version does not know — as the one-line notes the report commands print first."""

from __future__ import annotations

from dyn_inspect.inspector.reader import safe_name
from dyn_inspect.inspector.run import Run

UNKNOWN_KINDS_NAMED = 5  # the unknown event kinds a warning names (then "and N more")


def read_warnings(run: Run) -> list[str]:
    """What could not be read, as at most two one-line notes (corrupted/truncated lines;
    events of kinds this version does not know)."""
    out: list[str] = []
    name = safe_name(run.path.name)  # a run folder named with escapes is the run's data too
    problems = run.problems
    if problems:
        where = ", ".join(f"{p.file}:{p.line}" for p in problems[:3]) + (", ..." if len(problems) > 3 else "")
        what = problems[0].message if len(problems) == 1 else f"{len(problems)} unreadable lines skipped"
        out.append(f"{name}: {what} ({where}); the rest was read")
    if run.unknown:
        kinds = sorted({u.kind for u in run.unknown})
        # Bounded: a crafted log with 200k distinct kinds made this one line 10 MB.
        named = ", ".join(repr(k[:60] + "…" if len(k) > 60 else k) for k in kinds[:UNKNOWN_KINDS_NAMED])
        more = f" and {len(kinds) - UNKNOWN_KINDS_NAMED} more" if len(kinds) > UNKNOWN_KINDS_NAMED else ""
        out.append(f"{name}: ignored {len(run.unknown)} event(s) of unknown kind {named}{more} (written by a newer dyn-inspect?)")
    return out
