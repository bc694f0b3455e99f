"""Dynamic shapes on a real recording (tests/corpus/shapes.py, CPU Inductor): the analysis,
``dyn-inspect shapes``, the TUI's Shapes view and the LSP hover all name the user line that
specialized a dim. Expected lines come from the program's ``# SHAPES:`` markers; dims and
values from what the program passes (``torch.randn(n, 3)``, ``torch.randn(10)``)."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient
from textual.widgets import TabbedContent

from corpus_support import CORPUS, marker_line
from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.shapes import compile_shapes, dim_of, readable_expr, readable_source, specializations_at
from dyn_inspect.inspector.run import Run
from dyn_inspect.tui.app import InspectorApp
from lsp_support import corpus_options, lsp_client_fixture, open_doc, start
from tui_support import SIZE, cursor_row, flat, rows, settle, show_view, static_text

SHAPES = CORPUS / "shapes.py"
client = lsp_client_fixture()


def test_readable_sources_and_guards() -> None:
    assert readable_source("L['x'].size()[0]") == "x.shape[0]"
    assert readable_source("L['self']._modules['fc']._parameters['weight'].size()[1]") == "self.fc.weight.shape[1]"
    assert dim_of("L['x'].size()[1]") == ("x", 1)
    assert dim_of("L['n']") is None
    assert readable_expr("Eq(s27, 3)", {"s27": "x.shape[1]"}) == "x.shape[1] == 3"
    assert readable_expr("s17 > 8", {"s17": "y.shape[0]"}) == "y.shape[0] > 8"


def test_analysis_names_the_line_that_specialized_a_dim(shapes_run: Run) -> None:
    found = {cs.function: cs for cs in compile_shapes(shapes_run.model)}
    dyn = found["dyn"]
    (spec,) = dyn.specializations
    assert spec.loc is not None and spec.loc.file == str(SHAPES)
    assert spec.loc.line == marker_line(SHAPES, "SHAPES:specialize")
    assert dim_of(spec.source) == ("x", 1) and spec.value == "3"
    assert spec.describe("shapes.py:17").startswith("dim 1 of `x` became static (= 3) because of `if x.shape[1] == 3:`")
    by_name = {s.name: s for s in dyn.symbols}
    # dynamic=True: a symbol per input dim, created where tracing first touched the tensor
    assert set(by_name) == {"x.shape[0]", "x.shape[1]", "y.shape[0]"}
    assert by_name["x.shape[0]"].specialized is None and by_name["x.shape[0]"].value == "5"
    assert by_name["x.shape[0]"].loc is not None and by_name["x.shape[0]"].loc.line == marker_line(SHAPES, "SHAPES:symbol")
    assert by_name["x.shape[1]"].specialized is spec
    assert by_name["y.shape[0]"].value == "10"
    guards = {g.readable: g for g in dyn.guards}
    assert guards["y.shape[0] > 8"].loc is not None and guards["y.shape[0] > 8"].loc.line == marker_line(SHAPES, "SHAPES:guard")
    assert guards["x.shape[1] == 3"].loc is not None and guards["x.shape[1] == 3"].loc.line == marker_line(SHAPES, "SHAPES:specialize")
    # `auto` is static first, then recompiled with dim 0 dynamic (automatic dynamic)
    auto = found["auto"]
    assert auto.automatic_dynamic and [s.name for s in auto.dynamic] == ["x.shape[0]"]
    assert auto.symbols[0].value == "7"
    assert specializations_at(shapes_run.model, str(SHAPES), marker_line(SHAPES, "SHAPES:specialize")) == [spec]
    assert specializations_at(shapes_run.model, str(SHAPES), marker_line(SHAPES, "SHAPES:guard")) == []


def test_cli_shapes_text_and_json(shapes_run: Run, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    line = marker_line(SHAPES, "SHAPES:specialize")
    assert main(["shapes", str(shapes_run.path)]) == 0
    text = capsys.readouterr().out
    assert f"specialized: dim 1 of `x` became static (= 3) because of `if x.shape[1] == 3:` at shapes.py:{line}" in text
    assert "y.shape[0] > 8" in text and "(added by the compiler)" in text
    assert "automatic dynamic" in text
    assert main(["shapes", str(shapes_run.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    dyn = next(c for c in data["compiles"] if c["function"] == "dyn")
    assert [(s["name"], s["loc"]["line"]) for s in dyn["specializations"]] == [("x.shape[1]", line)]
    assert {s["name"]: s["specialized"] for s in dyn["symbols"]} == {"x.shape[0]": False, "x.shape[1]": True, "y.shape[0]": False}
    # the sizes the guard tree accepts: 2 and up from 0/1 specialization, 4096 from Inductor,
    # 9 from `y.shape[0] > 8`, and dim 1 fixed by the `if` (tests/inspector/test_differential.py
    # compares these with the tree torch itself printed)
    assert {d["name"]: d["text"] for d in dyn["accepts"]} == {"x.shape[0]": "2..4096", "x.shape[1]": "= 3", "y.shape[0]": "9..4096"}
    assert "reused for sizes (the guard tree): x.shape[0] 2..4096, x.shape[1] = 3, y.shape[0] 9..4096" in text


def test_a_logged_guard_said_another_way_in_the_tree_is_installed(shapes_run: Run) -> None:
    """torch logs `s17 > 8` and `Eq(s27, 3)`; its tree checks `9 <= L['y'].size()[0] <= 4096`
    and `size=[None, 3]`. Both were shown as "never checked when the code runs", which was
    false: a y of 8 rows recompiles."""
    dyn = next(cs for cs in compile_shapes(shapes_run.model, shapes_run) if cs.function == "dyn")
    assert {g.readable: g.installed for g in dyn.guards} == {
        "y.shape[0] > 8": True,
        "x.shape[1] == 3": True,
        "y.shape[0] <= 4096": True,
        "x.shape[0] <= 4096": True,
    }
    assert dyn.not_installed == []


def test_cli_shapes_on_a_bad_run_is_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shapes", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


async def test_tui_shapes_view_names_the_specializing_line(shapes_run: Run) -> None:
    app = InspectorApp(shapes_run.path, run=shapes_run, clock=lambda: 0.0)
    line = marker_line(SHAPES, "SHAPES:specialize")
    async with app.run_test(size=SIZE) as pilot:
        await show_view(pilot, "8")
        table = app.query_one("#shapes-table")
        got = rows(table)  # type: ignore[arg-type]
        # The tab counts the rows it lists (it said "Shapes (0)" over 8 rows: issue 28 #10).
        assert str(app.query_one(TabbedContent).get_tab("shapes").label) == f"Shapes ({len(got)})"
        static = [r for r in got if r[2] == "x.shape[1]"]
        assert len(static) == 1 and static[0][5] == "static = 3" and static[0][6].endswith(f"shapes.py:{line}")
        assert [r[5] for r in got if r[2] == "x.shape[0]"] == ["dynamic", "dynamic"]  # dyn, then auto's recompile
        while cursor_row(table)[2] != "x.shape[1]":  # type: ignore[arg-type]
            await pilot.press("down")
        await settle(pilot)
        detail = flat(static_text(app, "#shapes-detail"))
        assert "Specialized: dim 1 of `x` became static (= 3) because of `if x.shape[1] == 3:`" in detail
        assert "y.shape[0] > 8" in detail
        assert "Reused for sizes (the guard tree)" in detail and "9..4096" in detail
        loc = app.view("shapes").selected_location()
        assert loc is not None and loc.line == line


async def test_hover_on_the_specializing_line(client: LanguageClient, shapes_run: Run) -> None:
    await start(client, CORPUS, corpus_options(shapes_run))
    u = open_doc(client, SHAPES)

    async def hover(marker: str) -> str | None:
        position = types.Position(marker_line(SHAPES, marker) - 1, 6)
        result = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(u), position))
        if result is None:
            return None
        assert isinstance(result.contents, types.MarkupContent)
        return result.contents.value

    text = None
    for _ in range(200):  # the server loads the run in the background
        text = await hover("SHAPES:specialize")
        if text is not None:
            break
        await asyncio.sleep(0.05)
    assert text is not None, "no hover on the specializing line"
    assert "Dynamic shapes" in text and "dim 1 of `x` became static (= 3) because of `if x.shape[1] == 3:`" in text
    assert "compile `0/0` of `dyn`" in text
    # A line with a shape guard but no specialization (and no other finding) answers nothing.
    assert await hover("SHAPES:guard") is None


def test_symbols_on_the_example_name_user_lines_once_each(example_run: Run) -> None:
    """The example's automatic-dynamic recompiles: torch creates ``x.shape[0]`` while tracing
    inside nn.Linear, so its innermost stack frame is torch/nn/modules/linear.py; the line
    shown is the user's that led there, and a symbol torch logs twice is one row."""
    shapes = compile_shapes(example_run.model)
    symbols = [s for cs in shapes for s in cs.symbols]
    assert symbols, "the example's recompiles made dims dynamic"
    for cs in shapes:
        keys = [(s.symbol, s.source) for s in cs.symbols]
        assert len(keys) == len(set(keys)), keys
    located = [s for s in symbols if s.loc is not None]
    assert located and all("torch/" not in s.loc.file.replace("\\", "/") for s in located if s.loc is not None), [
        (s.name, s.loc) for s in located
    ]


CONTROL_FLOW = CORPUS / "control_flow.py"


def test_unbacked_symbols_name_the_users_line_never_the_recorder(control_flow_run: Run) -> None:
    """Issue 28 #5 on a real program: torch creates nonzero's unbacked size while our hook on
    trace_structured is on the stack; the symbol is created at the user's `x.nonzero()`, and
    no symbol, specialization or guard of any compile is placed in dyn-inspect's own files."""
    from dyn_inspect.engine.normalizers.locations import is_ours

    found = {cs.function: cs for cs in compile_shapes(control_flow_run.model)}
    unbacked = [s for s in found["positives"].symbols if s.symbol.startswith("u")]
    assert unbacked, [s.symbol for s in found["positives"].symbols]
    at_user = [s for s in unbacked if s.loc is not None and s.loc.file == str(CONTROL_FLOW)]
    assert at_user and {s.loc.line for s in at_user if s.loc} == {marker_line(CONTROL_FLOW, "UNBACKED:nonzero")}
    for cs in found.values():
        for loc in [s.loc for s in cs.symbols] + [s.loc for s in cs.specializations] + [g.loc for g in cs.guards]:
            assert loc is None or not is_ours(loc.file), loc
    # torch.cond's function recompiled on the length (the differential compares the count)
    assert "branchy" in found and found["branchy"].compile.cid == "0/1"


def test_a_guard_logged_twice_is_listed_once(hf_gpt2_run: Run) -> None:
    """GPT-2 with an attention mask (tests/corpus/hf_gpt2.py): while its forward is traced
    dynamic, torch logs transformers' two mask-length checks twice each; its guard tree
    holds each once, and so does ``shapes`` (CLI, TUI and hover render this list)."""
    (forward,) = [cs for cs in compile_shapes(hf_gpt2_run.model, hf_gpt2_run) if cs.function == "forward" and cs.symbols]
    assert len(forward.compile.shape_guards) > len(forward.guards)  # the log really holds repeats
    installed = [g.readable for g in forward.installed_guards]
    assert "attention_mask.shape[1] <= input_ids.shape[1]" in installed
    assert len(installed) == len(set(installed)), installed
