"""What Dynamo made of one compile's code: original and transformed bytecode by user line,
the resume functions its graph breaks created, and its guards grouped by what they guard
(``inspector/analysis/bytecode.py``)."""

from __future__ import annotations

from dyn_inspect.inspector.analysis.bytecode import CompileCode, ResumeFunction
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import source_loc


def resume_output(r: ResumeFunction) -> typed.ResumeFunction:
    return typed.ResumeFunction(name=r.name, function=r.function, line=r.line, loc=source_loc(r.loc), compiles=list(r.compiles))


def code_report(cc: CompileCode) -> typed.CodeReport:
    """What ``code CID --json`` prints: ``cc`` (``compile_code(run, compile)``)."""
    return typed.CodeReport(
        compile_id=cc.compile.cid,
        function=cc.function,
        resume=resume_output(cc.resume) if cc.resume else None,
        creates=[resume_output(r) for r in cc.creates],
        blocks=[
            typed.BytecodeBlock(
                line=b.line, original=[i.text().strip() for i in b.original], modified=[i.text().strip() for i in b.modified]
            )
            for b in cc.blocks
        ],
        guards=[typed.GuardGroup(source=src, guards=[g.expr for g in gs]) for src, gs in cc.guards_by_source()],
    )
