"""What Dynamo made of one compile's code: original and transformed bytecode by user line,
the resume functions its graph breaks created, and its guards grouped by what they guard
(``inspector/analysis/bytecode.py``)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.bytecode import RESUME_RE, ResumeFunction, compile_code, find
from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import source_loc
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.source_files import source_line

__all__ = ["code_report", "find", "resumes_at"]  # find: the compile a CID names (first process's)


def resume_output(r: ResumeFunction) -> typed.ResumeFunction:
    return typed.ResumeFunction(name=r.name, function=r.function, line=r.line, loc=source_loc(r.loc), compiles=list(r.compiles))


def code_report(run: Run, c: CompileInfo) -> typed.CodeReport:
    """What ``code CID`` prints for compile ``c`` (and the TUI's Code view shows)."""
    cc = compile_code(run, c)
    cap = c.capture
    file = cap.co_filename if cap is not None and cap.co_filename else None

    def text_at(line: int | None) -> str | None:
        text = source_line(file, line).strip() if file and line else ""
        return text or None

    return typed.CodeReport(
        compile_id=c.cid,
        function=cc.function,
        resume=resume_output(cc.resume) if cc.resume else None,
        creates=[resume_output(r) for r in cc.creates],
        blocks=[
            typed.BytecodeBlock(
                line=b.line, original=[i.text() for i in b.original], modified=[i.text() for i in b.modified], source=text_at(b.line)
            )
            for b in cc.blocks
        ],
        guards=[typed.GuardGroup(source=src, guards=[g.expr for g in gs]) for src, gs in cc.guards_by_source()],
        file=file,
        line=cap.co_firstlineno if file and cap is not None else None,
        guard_count=len(cc.guards),
    )


def resumes_at(function: str) -> str | None:
    """For a resume function's name (``torch_dynamo_resume_in_forward_at_27``), what it
    resumes: "forward line 27"; None for any other function."""
    m = RESUME_RE.match(function)
    return f"{m['fn']} line {m['line']}" if m else None
