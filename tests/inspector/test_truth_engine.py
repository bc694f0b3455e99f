"""What the model says equals what torch did, on the programs where it used not to
(issue 12, defects 2-8 and 10): Dynamo resets, resume functions sharing a name and line,
a recompile limit set at run time, nested break messages, a backward that never compiled,
a warm Inductor cache filled from another checkout, sys.exit(3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.normalizers.graph_breaks import block_for, parse_break_text
from dyn_inspect.inspector.analysis.graphs import compile_graph
from dyn_inspect.inspector.analysis.recompiles import recompile_limit_of
from dyn_inspect.inspector.reports import summary_dict
from dyn_inspect.inspector.run import Run

FIXTURES = Path(__file__).parents[1] / "fixtures"
RESET = CORPUS / "reset.py"


# -- compile ids -------------------------------------------------------------------------


def test_compile_id_helpers_keep_torchs_id_readable() -> None:
    assert compile_ids.qualify("3/1", 0) == "3/1"
    assert compile_ids.qualify("3/1", 2) == "3/1@r2"
    assert compile_ids.torch_id("3/1@r2") == "3/1"
    assert compile_ids.frame_of("3/1@r2") == "3@r2" and compile_ids.frame_of("!1/0/2") == "!1/0"
    ordered = sorted(["0/0@r1", "10/0", "!0/1/0", "1/0", "0/1", "0/0"], key=compile_ids.order_key)
    assert ordered == ["0/0", "0/1", "1/0", "10/0", "!0/1/0", "0/0@r1"]


# -- torch._dynamo.reset() -----------------------------------------------------------------


@pytest.mark.corpus
def test_reset_keeps_every_compile_apart(reset_run: Run) -> None:
    m = reset_run.model
    by_name: dict[str, list[str]] = {}
    for f in m.frames_in_order():
        by_name.setdefault(f.name, []).append(f.frame_id)
    # warm ×2 (before the reset), chatty, its two resume functions, limited ×4 (the last
    # refused by the limit): 9 compiles of 5 code objects, none merged across the reset.
    assert len(m.compiles) == 9
    assert sorted(len(f.compiles) for f in m.frames_in_order()) == [1, 1, 1, 2, 4]
    assert len({c.cid for c in m.compiles.values()}) == 9
    after = [c for c in m.compiles.values() if compile_ids.epoch_of(c.cid) == 1]
    assert {c.capture.co_name for c in after if c.capture} >= {"chatty", "limited"}
    assert all(compile_ids.epoch_of(c.cid) == 0 for f in m.frames_in_order() if f.name == "warm" for c in f.compiles)
    # torch's own id is still readable: chatty is "0/0" in torch's log, after the reset
    chatty = next(f for f in m.frames_in_order() if f.name == "chatty")
    assert chatty.compiles[0].torch_id == "0/0" and chatty.compiles[0].cid == "0/0@r1"
    data = summary_dict(reset_run)
    # the call the limit refused is a limit hit, not a compile (torch compiled 8)
    assert data["compiles"] == 8 and data["frames"] == 5
    assert [h["function"] for h in data["recompile_limit_hit"]] == ["limited"]


@pytest.mark.corpus
def test_resume_functions_with_one_name_and_line_are_two_frames(reset_run: Run) -> None:
    m = reset_run.model
    line = marker_line(RESET, "BREAK:reset_two")
    resumes = [f for f in m.frames_in_order() if f.name == f"torch_dynamo_resume_in_chatty_at_{line}"]
    assert len(resumes) == 2, [f.name for f in m.frames_in_order()]
    assert [len(f.compiles) for f in resumes] == [1, 1]  # two first compiles, no recompile
    assert not any(r.compile.capture and r.compile.capture.co_name == resumes[0].name for r in m.recompiles)


@pytest.mark.corpus
def test_two_breaks_on_one_line_keep_their_own_columns(reset_run: Run) -> None:
    line = marker_line(RESET, "BREAK:reset_two")
    groups = [g for g in reset_run.model.break_groups() if g.loc.line == line]
    # one site (type + file:line, as torch's log and a TORCH_TRACE round trip see it) hit
    # twice — once per print, in two different frames — each hit with its own expression
    assert len(groups) == 1 and groups[0].count == 2
    text = RESET.read_text().splitlines()[line - 1]
    assert sorted(text[e.loc.col : e.loc.end_col] for _, e in groups[0].hits) == ['print("a")', 'print("b")']
    assert len({e.cid for _, e in groups[0].hits}) == 2


@pytest.mark.corpus
def test_recompile_limit_is_the_one_the_program_set(reset_run: Run) -> None:
    m = reset_run.model
    limited = next(f for f in m.frames_in_order() if f.name == "limited")
    warm = next(f for f in m.frames_in_order() if f.name == "warm")
    assert recompile_limit_of(m, limited) == 3
    assert limited.recompile_limit is not None
    # warm never hit the limit: the value comes from its compiles, set before them (not 8)
    assert warm.limit_in_force == 3 and recompile_limit_of(m, warm) == 3


# -- break messages ------------------------------------------------------------------------


def test_each_break_type_keeps_its_own_gb_id() -> None:
    text = (FIXTURES / "torch213_nested_break.txt").read_text()
    parsed = parse_break_text(text)
    assert [(b["gb_type"], b["gb_id"]) for b in parsed["blocks"]] == [
        ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "GB0124"),
        ("graph break in loop", "GB7000"),
    ]
    loop = block_for(parsed, "graph break in loop")
    assert loop["gb_id"] == "GB7000" and "for/while loop" in str(loop["explanation"])
    assert parsed["gb_id"] == "GB0124"


# -- kernels and their lines ---------------------------------------------------------------


@pytest.mark.corpus
def test_kernels_have_lines_when_the_backward_never_compiled(first_forward_fail_run: Run) -> None:
    program = CORPUS / "first_forward_fail.py"
    kernels = [k for k in first_forward_fail_run.model.kernels if k.event.fused_ops or k.event.source_nodes]
    assert kernels
    for k in kernels:
        assert k.lines, f"{k.name} has no source line"
        assert all(Path(loc.file).is_file() for loc in k.lines)
    lines = {(loc.file, loc.line) for k in kernels for loc in k.lines}
    # the user's module: the lines its ops are on (from the graph, provenance never came)
    assert (str(program), marker_line(program, "KERNEL:ffail_gate")) in lines
    # nn.Sequential, traced inside torch: the line that called it
    assert (str(program), marker_line(program, "FORWARD:ffail_mlp")) in lines


@pytest.mark.corpus
def test_warm_cache_lines_name_this_checkout(warm_cache_run: Run) -> None:
    m = warm_cache_run.model
    program = CORPUS / "warm" / "train.py"
    assert m.cache_counts().get("fx_graph_hits", 0) > 0  # the kernels did come from the warm cache
    lines = set()
    for k in m.kernels:
        for loc in k.lines:
            assert "other-checkout" not in loc.file, f"{k.name}: {loc.file}"
            assert Path(loc.file).is_file(), loc.file
            lines.add((loc.file, loc.line))
    assert (str(program), marker_line(program, "KERNELS:warm")) in lines
    # the cached post-grad graphs' "# File:" comments name the other checkout: node sources
    # (graph command, TUI, export) show this one
    shown = 0
    for c in m.compiles.values():
        for g in c.graphs:
            graph = compile_graph(warm_cache_run, c, g.stage)
            for _, data in (graph.nodes(data=True) if graph is not None else ()):
                if data.get("file"):
                    assert "other-checkout" not in str(data["file"]), (g.stage, data)
                    shown += 1
    assert shown


# -- how the program ended -----------------------------------------------------------------


@pytest.mark.corpus
def test_sys_exit_is_not_a_crash(exit3_run: Run, raises_run: Run) -> None:
    assert exit3_run.model.status == "exited" and exit3_run.model.exit_code == 3
    assert exit3_run.model.outcome_text == "exited with 3"
    assert raises_run.model.status == "crashed"
