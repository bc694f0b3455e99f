"""Dynamo's code on a real recording (examples/train.py --steps 4: its `forward` breaks at
the data-dependent `if`, and Dynamo resumes after it in a generated function): the resume
function tied to the user line it resumes at, its transformed bytecode by source line,
guards grouped by what they guard; ``dyn-inspect code CID`` and the TUI's Code view."""

from __future__ import annotations

import json

import pytest

from corpus_support import EXAMPLES, marker_line
from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.bytecode import compile_code, parse_dis, resume_functions
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from tui_support import SIZE, cursor_row, flat, settle, show_view, static_text

TRAIN = EXAMPLES / "train.py"
BRANCH = "# data-dependent branch: graph break"


def _resume_compile(run: Run):
    line = marker_line(TRAIN, BRANCH)
    name = f"torch_dynamo_resume_in_forward_at_{line}"
    return next(c for c in run.model.compiles_in_order() if c.capture and c.capture.co_name == name)


def test_parse_dis_keeps_source_lines() -> None:
    text = "  7           0 RESUME                   0\n\n  8           2 LOAD_FAST                0 (x)\n        >>    4 RETURN_VALUE\n"
    instrs = parse_dis(text)
    assert [(i.line, i.offset, i.op, i.arg) for i in instrs] == [(7, 0, "RESUME", "0"), (8, 2, "LOAD_FAST", "0 (x)"), (8, 4, "RETURN_VALUE", "")]
    assert instrs[2].jump_target


def test_resume_function_tied_to_its_user_line(example_run: Run) -> None:
    line = marker_line(TRAIN, BRANCH)
    resumes = {r.name: r for r in resume_functions(example_run.model)}
    r = resumes[f"torch_dynamo_resume_in_forward_at_{line}"]
    assert r.function == "forward" and r.line == line
    assert r.loc is not None and r.loc.file == str(TRAIN) and r.loc.code is not None and r.loc.code.startswith("if h.mean() > 0.5:")
    c = _resume_compile(example_run)
    cc = compile_code(example_run, c)
    assert cc.resume == r
    assert cc.original and cc.modified
    # The transformed code hands over to what Dynamo generated: the next resume function
    # (the rest of `forward` breaks again in log_stats) or a compiled graph; the original never does.
    generated = ("__resume_at_", "__compiled_fn")
    assert any(g in i.arg for i in cc.modified for g in generated)
    assert not any(g in i.arg for i in cc.original for g in generated)
    by_line = {b.line: b for b in cc.blocks}
    assert by_line[line].modified  # its transformed bytecode starts at the break's line
    assert all(b.line is None or b.line >= line - 2 for b in cc.blocks)
    # `forward`'s first compile broke at that line and so created it.
    forward = next(c for c in example_run.model.compiles_in_order() if c.capture and c.capture.co_name == "forward")
    assert r in compile_code(example_run, forward).creates
    groups = dict(cc.guards_by_source())
    assert sum(len(gs) for gs in groups.values()) == len(cc.guards) > 0
    assert any(src.startswith("L['") for src in groups)
    for src, gs in groups.items():
        if src.startswith("L['"):
            assert all(src in g.expr or g.path == src for g in gs)


def test_cli_code(example_run: Run, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    line = marker_line(TRAIN, BRANCH)
    c = _resume_compile(example_run)
    assert main(["code", c.cid, str(example_run.path)]) == 0
    text = capsys.readouterr().out
    assert f"resumes `forward` after the graph break at train.py:{line}: `if h.mean() > 0.5:`" in text
    assert "transformed by Dynamo" in text and "guards (" in text
    assert main(["code", c.cid, str(example_run.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["resume"]["line"] == line and data["resume"]["loc"]["file"] == str(TRAIN)
    assert any(b["line"] == line and b["modified"] for b in data["blocks"])
    # the user line's text and the guard count come with the report (the TUI prints the same)
    assert any(b["line"] == line and (b["source"] or "").startswith("if h.mean() > 0.5:") for b in data["blocks"])
    assert data["guard_count"] == sum(len(g["guards"]) for g in data["guards"]) > 0
    assert f"guards ({data['guard_count']})" in text
    assert main(["code", "99/9", str(example_run.path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no compile 99/9" in err


async def test_tui_code_view(example_run: Run) -> None:
    line = marker_line(TRAIN, BRANCH)
    c = _resume_compile(example_run)
    app = InspectorApp(example_run.path, run=example_run, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "0")
        table = app.query_one("#code-table")
        for _ in range(len(example_run.model.compiles)):
            if cursor_row(table)[0] == c.cid:  # type: ignore[arg-type]
                break
            await pilot.press("down")
        assert cursor_row(table)[0] == c.cid  # type: ignore[arg-type]
        assert cursor_row(table)[2] == f"forward line {line}"  # type: ignore[arg-type]
        await settle(pilot)
        detail = flat(static_text(app, "#code-detail"))
        assert f"resume function: runs the rest of `forward` after the graph break at train.py:{line}: if h.mean() > 0.5:" in detail
        assert "transformed by Dynamo" in detail and "Guards (" in detail
        loc = app.view("code").selected_location()
        assert loc is not None and loc.line == line and loc.file == str(TRAIN)
