"""Which compiles a bundle holds: the whole run, ``--compile-id ID ...`` and/or
``--at FILE:LINE`` (every compile that touched that source line)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.locations import is_library, parse_file_line, same_file
from dyn_inspect.inspector.model import CompileInfo, RunModel
from dyn_inspect.inspector.source_files import read_source

_FX_FILE_RE = re.compile(r"# File: (?P<file>.+?):(?P<line>\d+) in ")

CompileKey = tuple[str, str]  # (log, compile id)


@dataclass
class Selection:
    keys: list[CompileKey] = field(default_factory=list)  # in run order
    whole_run: bool = True
    compile_ids: list[str] = field(default_factory=list)
    at: str | None = None
    kernels: list[str] = field(default_factory=list)  # --kernel NAME: the compiles that made it

    def __contains__(self, key: CompileKey) -> bool:
        return self.whole_run or key in self._set

    def __post_init__(self) -> None:
        self._set = set(self.keys)


@functools.lru_cache(maxsize=128)
def _function_span(path: str, first_line: int) -> tuple[int, int] | None:
    """Lines of the function whose code object starts at ``first_line`` (decorators
    included), read from the source when it is still there."""
    text = read_source(path)
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            if first_line in (start, node.lineno):
                return start, node.end_lineno or node.lineno
    return None


def _locs(c: CompileInfo) -> list[Loc]:
    out: list[Loc] = []
    for b in c.breaks:
        out.append(b.loc)
        out.extend(b.user_stack)
    for k in c.kernels:
        out.extend(k.lines)
    for shape_loc in [*(e.loc for e in c.symbols), *(e.loc for e in c.specializations), *(e.loc for e in c.shape_guards)]:
        if shape_loc is not None:
            out.append(shape_loc)
    if c.start is not None:
        user = [f for f in c.start.stack if not is_library(f.file)]
        if user:
            out.append(user[-1])  # the call that triggered the compile
    if c.capture is not None and c.capture.fail_loc is not None:
        out.append(c.capture.fail_loc)
    return out


def touches(c: CompileInfo, file: str, line: int, graph_text: str, cwd: str | None) -> bool:
    """Did this compile capture, break at, or generate code from ``file:line``?"""
    if any(loc.line == line and same_file(loc.file, file, cwd) for loc in _locs(c)):
        return True
    for m in _FX_FILE_RE.finditer(graph_text):
        if int(m["line"]) == line and same_file(m["file"], file, cwd):
            return True
    cap = c.capture
    # The compiled function spans the line (resume functions share their parent's first
    # line but only run its tail, so they are matched by their graphs and breaks only).
    if (
        cap is not None
        and cap.co_filename
        and cap.co_firstlineno
        and not (cap.co_name or "").startswith("torch_dynamo_resume_in_")
        and same_file(cap.co_filename, file, cwd)
    ):
        span = _function_span(cap.co_filename, cap.co_firstlineno)
        if span is not None and span[0] <= line <= span[1]:
            return True
    return False


def _parse_id(raw: str) -> tuple[str | None, str]:
    """ "0/1" (any process) or "p123.jsonl:0/1" / "p123:0/1" (one process log)."""
    if ":" in raw:
        log, _, cid = raw.rpartition(":")
        return (log if log.endswith(".jsonl") else f"{log}.jsonl"), cid
    return None, raw


def select(
    model: RunModel,
    compile_ids: Sequence[str] | None,
    at: str | None,
    graph_text: Callable[[CompileInfo], str],
    cwd: str | None = None,
    kernels: Sequence[str] | None = None,
) -> Selection:
    """``graph_text(c)``: the compile's Dynamo graph code (its ``# File:`` comments say
    which lines it came from); called only for ``--at``."""
    if not compile_ids and not at and not kernels:
        return Selection(keys=list(model.compiles), whole_run=True)
    chosen: list[CompileKey] = []
    for raw in compile_ids or []:
        log, cid = _parse_id(raw.strip())
        found = [k for k in model.compiles if k[1] == cid and (log is None or k[0] == log)]
        if not found:
            known = ", ".join(sorted({k[1] for k in model.compiles})) or "none"
            raise InspectorError(f"no compile {raw} in this run (compile ids: {known})")
        chosen.extend(k for k in found if k not in chosen)
    if at:
        file, line = parse_file_line(at)
        hits = [k for k, c in model.compiles.items() if touches(c, file, line, graph_text(c), cwd)]
        if not hits:
            raise InspectorError(f"nothing in this run was compiled at {file}:{line}")
        chosen.extend(k for k in hits if k not in chosen)
    for name in kernels or []:
        made = [(k.compile.log, k.compile.cid) for k in model.kernels if k.name == name]
        if not made:
            raise InspectorError(f"no kernel named {name!r} in this run (`dyn-inspect kernels` lists them)")
        chosen.extend(k for k in dict.fromkeys(made) if k not in chosen)
    order = {k: i for i, k in enumerate(model.compiles)}
    chosen.sort(key=order.__getitem__)
    return Selection(keys=chosen, whole_run=False, compile_ids=list(compile_ids or []), at=at, kernels=list(kernels or []))
