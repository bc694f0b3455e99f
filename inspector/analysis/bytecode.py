"""Dynamo's code, readable: per compile, the original and the transformed bytecode side by
side by user source line, the resume functions a graph break made (and the user line each
resumes at), and the compile's guards one per line, grouped by what they guard.

What the log holds: torch writes ``<fn>_ORIGINAL_BYTECODE`` / ``<fn>_MODIFIED_BYTECODE``
(``dis`` text) for the frames of resume functions only (``torch_dynamo_resume_in_<fn>_at_<N>``:
the code after the graph break at line N); for other frames the original is the user's
source itself. Decompiling the transformed code to Python (depyf) needs the live code
object, which the log does not keep, so the faces show the disassembly with its source
lines (see docs/tui.md, "Code").
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.analysis.guards import GuardLine, guard_lines
from dyn_inspect.inspector.model import CompileInfo, RunModel
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.source_files import source_line

RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")
# "  27           0 RESUME    0" / "         >>   48 CALL    1 (arg)" (3.11+ dis text)
_INSTR_RE = re.compile(r"^\s*(?P<line>\d+)?\s+(?P<target>>>)?\s*(?P<offset>\d+) (?P<op>[A-Z_][A-Z0-9_]*)\s*(?P<arg>.*)$")


@dataclass(frozen=True)
class Instr:
    offset: int
    op: str
    arg: str
    line: int | None  # the user source line this instruction belongs to (None: no line change seen yet)
    jump_target: bool = False

    def text(self) -> str:
        return f"{'>>' if self.jump_target else '  '} {self.offset:>4} {self.op:<22} {self.arg}".rstrip()


def parse_dis(text: str) -> list[Instr]:
    """``dis`` output as instructions, each with the source line it belongs to."""
    out: list[Instr] = []
    line: int | None = None
    for raw in text.splitlines():
        m = _INSTR_RE.match(raw)
        if m is None:
            continue
        if m["line"] is not None:
            line = int(m["line"])
        out.append(Instr(int(m["offset"]), m["op"], m["arg"].strip(), line, m["target"] is not None))
    return out


@dataclass(frozen=True)
class LineBlock:
    """One user source line with the instructions each version runs for it."""

    line: int | None
    original: list[Instr]
    modified: list[Instr]


def side_by_side(original: list[Instr], modified: list[Instr]) -> list[LineBlock]:
    """Both versions grouped by user line, in line order (Dynamo's code for a line may be
    much longer: the graph call, stack reconstruction, the call into the resume function)."""
    by_line: dict[int | None, tuple[list[Instr], list[Instr]]] = defaultdict(lambda: ([], []))
    for i in original:
        by_line[i.line][0].append(i)
    for i in modified:
        by_line[i.line][1].append(i)
    order = sorted(by_line, key=lambda n: (n is not None, n or 0))
    return [LineBlock(n, *by_line[n]) for n in order]


@dataclass(frozen=True)
class ResumeFunction:
    """A function Dynamo generated to run the rest of ``function`` after a graph break."""

    name: str
    function: str  # the user function it continues
    line: int  # the user line of the break it resumes after
    loc: Loc | None  # that line in the user's file (with its code when recorded)
    compiles: tuple[str, ...]  # compile ids of the resume function's own frame


@dataclass
class CompileCode:
    compile: CompileInfo
    original: list[Instr] = field(default_factory=list)
    modified: list[Instr] = field(default_factory=list)
    resume: ResumeFunction | None = None  # this compile's frame is a resume function
    creates: list[ResumeFunction] = field(default_factory=list)  # resume functions its graph breaks made
    guards: list[GuardLine] = field(default_factory=list)

    @property
    def function(self) -> str:
        cap = self.compile.capture
        return cap.co_name if cap and cap.co_name else "?"

    @property
    def blocks(self) -> list[LineBlock]:
        return side_by_side(self.original, self.modified)

    def guards_by_source(self) -> list[tuple[str, list[GuardLine]]]:
        """Guards grouped by what they guard (``L['x']``; "" for global state), in order."""
        groups: dict[str, list[GuardLine]] = {}
        for g in self.guards:
            groups.setdefault(g.path or _source_of(g), []).append(g)
        return list(groups.items())


def _source_of(g: GuardLine) -> str:
    m = re.search(r"\b([LG]\['[^']+'\](?:\.\w+|\[[^\]]*\])*)", g.expr)
    return m[1] if m else ""


def resume_functions(model: RunModel) -> list[ResumeFunction]:
    """Every resume function the run compiled, with the user line it resumes at."""
    break_code: dict[tuple[str, int], str] = {}
    for group in model.breaks.values():  # one pass: the break sites' recorded line texts
        for _, b in group.hits:
            if b.loc.code:
                break_code.setdefault((b.loc.file, b.loc.line), b.loc.code)
    out: dict[tuple[str, str], ResumeFunction] = {}
    for frame in model.frames_in_order():
        m = RESUME_RE.match(frame.name)
        if m is None:
            continue
        line = int(m["line"])
        loc = Loc(file=frame.filename, line=line, name=m["fn"]) if frame.filename else None
        code = break_code.get((frame.filename, line))
        if loc is not None and not code:
            code = source_line(loc.file, line).strip() or None  # a break inside an inlined call: the call's line
        if loc is not None and code:
            loc = Loc(file=loc.file, line=line, name=m["fn"], code=code)
        key = (frame.log, frame.name + "|" + frame.filename)
        prev = out.get(key)
        ids = tuple(c.cid for c in frame.compiles)
        out[key] = ResumeFunction(frame.name, m["fn"], line, loc, (prev.compiles if prev else ()) + ids)
    return list(out.values())


def compile_code(run: Run, c: CompileInfo) -> CompileCode:
    cc = CompileCode(c)
    for b in c.bytecode:
        instrs = parse_dis(run.blob_text(b.code))
        if b.which == "original":
            cc.original = instrs
        else:
            cc.modified = instrs
    resumes = resume_functions(run.model)
    name = cc.function
    cc.resume = next((r for r in resumes if c.cid in r.compiles and r.name == name), None)
    break_lines = {b.loc.line for b in c.breaks}
    base = RESUME_RE.match(name)
    own = base["fn"] if base else name
    cc.creates = [r for r in resumes if r.function == own and r.line in break_lines and c.cid not in r.compiles]
    cc.guards = guard_lines(run, c)
    return cc


def find(run: Run, cid: str) -> CompileInfo | None:
    """The compile with id ``cid`` (the first process's when several have it)."""
    return next((c for c in run.model.compiles_in_order() if c.cid == cid), None)
