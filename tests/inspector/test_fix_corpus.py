"""Every fix kind we offer, applied and re-run (issue 28): ``fixes: N/N verified``.

Each entry of ``FIXES`` is a realistic program under ``tests/corpus/fixes/`` where the fix
applies. The program is recorded under dyn-inspect (CPU Inductor); the quick fix the
language server offers on the marked line (``code_actions()`` on the recording's real
findings, the function ``textDocument/codeAction`` calls) is applied to a copy exactly as
the editor would (its TextEdit); the copy is then run

- plainly, with ``TORCH_LOGS=recompiles``: torch's own log has no "Recompiling function"
  line, the exit code is the original's and stdout is the original's (the same losses);
- under dyn-inspect: the recording has no recompile and the same exit code.

The suggestion text of each (``recompiles``) names the same snippet the fix inserts.
``SNIPPETS`` are suggestions' snippets written in by hand; ``BREAK_FIXES`` are the graph-break
plans (``inspector/reports/fix_plans.py``), one small program per kind, applied as the editor
applies them and re-run: the break is gone from its line (or, for a fix that says it moves
the break, at the call site as GB0098), the exit code is the original's and stdout is the
original's less exactly what the title says is lost.
Recordings are kept in ``DYN_INSPECT_CORPUS_CACHE`` when it is set.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from corpus_support import CORPUS
from dyn_inspect.inspector.analysis.causes import recompile_causes
from dyn_inspect.inspector.analysis.recompiles import frames_with_recompiles, recompile_timeline
from dyn_inspect.inspector.reports.fix_plans import apply_plan, break_plans
from fix_support import Recorded, apply, line_with, record
from inductor_pool import seed

pytestmark = pytest.mark.corpus

FIX_CORPUS = CORPUS / "fixes"
HF_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@dataclass(frozen=True)
class FixCase:
    program: str
    marker: str  # the line whose quick fix is applied ("FIX:x")
    pick: str  # a part of the fix's title that picks it
    snippet: str  # what the fix inserts (and the suggestion names)
    env: dict[str, str] = field(default_factory=dict)


# fix kind → the program that verifies it
FIXES: dict[str, FixCase] = {
    # a Hugging Face model: the recompiling frame is transformers' `wrapped_func`; the fix
    # goes on the user's call and marks every input the recompile made dynamic (the mask
    # too: marking input_ids alone crashes with ConstraintViolationError)
    "mark_dynamic_several_inputs": FixCase(
        "hf_llama_mask.py",
        "FIX:hf_call",
        "Insert `torch._dynamo.mark_dynamic(input_ids, 1); torch._dynamo.mark_dynamic(attention_mask, 1)` before the call",
        "torch._dynamo.mark_dynamic(input_ids, 1)\ntorch._dynamo.mark_dynamic(attention_mask, 1)",
        HF_ENV,
    ),
    # @torch.compile(dynamic=False): every length recompiles; mark_dynamic is honoured there
    "mark_dynamic_under_dynamic_false": FixCase(
        "static_sizes.py", "FIX:static_x", "Insert `torch._dynamo.mark_dynamic(x, 0)` where `x` is made", "torch._dynamo.mark_dynamic(x, 0)"
    ),
}

_originals: dict[tuple[str, tuple[tuple[str, str], ...]], Recorded] = {}


def original_of(program: str, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The unfixed ``program``'s recording (under ``env``, set by the caller), made once for
    every test of this module that reads it: ``static_sizes.py``'s fix and its advice read
    one recording (one torch process fewer). Nothing writes into its folder: each fixed
    copy is made in a folder of its test."""
    key = (program, tuple(sorted(env.items())))
    if key not in _originals:
        _originals[key] = record((FIX_CORPUS / program).read_text(), tmp_path_factory.mktemp(f"original-{Path(program).stem}"), program)
    return _originals[key]


def plain(folder: Path, name: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The program run plainly (no dyn-inspect) with torch's recompile log on."""
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("DYN_INSPECT", "TORCH_TRACE"))}
    run_env.update(env, TORCH_LOGS="recompiles", TORCHINDUCTOR_CACHE_DIR=seed(folder / "inductor-plain"))
    return subprocess.run([sys.executable, name], cwd=folder, env=run_env, capture_output=True, text=True, timeout=900)


def recompile_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Recompiling function" in line]


@pytest.mark.parametrize("kind", sorted(FIXES))
def test_fix_is_applied_and_verified(kind: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, record_property: Callable[[str, object], None]) -> None:
    case = FIXES[kind]
    record_property("fix_verified", (kind, case.program))  # conftest's summary: passed = verified
    for k, v in case.env.items():
        monkeypatch.setenv(k, v)
    base = tmp_path_factory.mktemp(kind)
    original = original_of(case.program, case.env, tmp_path_factory)
    assert original.recompiles() > 0, "the program must recompile before the fix"
    if case.program == "hf_llama_mask.py":
        _shape_guards_are_the_installed_ones(original)
        _tui_and_cli_count_the_cache_alike(original)
    # the advice (recompiles/summary) names the same snippet the fix inserts
    codes = [
        e.suggestion.code
        for fr in frames_with_recompiles(original.run.model)
        for e in recompile_timeline(original.run.model, fr)
        if e.suggestion is not None and e.suggestion.code
    ]
    assert any(case.snippet in c for c in codes), codes
    # the root cause's fix is in the user's file, even where the frame is a library's
    fixes = [c.fix for c in recompile_causes(original.run.model) if c.fix is not None]
    assert any(Path(f.file).name == case.program and f.code == case.snippet for f in fixes), fixes
    fixed_text = apply(original, original.path.read_text(), case.marker, case.pick)
    assert case.snippet.splitlines()[0] in fixed_text

    folder = base / "fixed"
    folder.mkdir()
    (folder / case.program).write_text(fixed_text)
    proc = plain(folder, case.program, case.env)
    assert proc.returncode == 0, proc.stderr[-3000:]  # the original's exit code (record asserts 0)
    assert recompile_lines(proc.stderr) == [], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout == original.stdout  # the same losses / results

    # recorded on the cache the plain run filled (the same graphs: FX/AOT hits, no second
    # lowering), as a user re-running a fix would; the recompiles are Dynamo's either way
    again: Recorded = record(fixed_text, base, case.program, inductor=folder / "inductor-plain")
    assert again.recompiles() == 0
    assert again.run.model.exit_code in (0, None) and again.stdout == original.stdout
    assert again.run.model.cache_counts().get("fx_graph_hits", 0) > 0  # it was warm


def _shape_guards_are_the_installed_ones(rec: Recorded) -> None:
    """Issue 28 item 4, on the same recording: lengths 8, 12, 16 recompile once (16 reuses
    the dynamic graph), so the ``input_ids.shape[1] == 12`` torch logged while compiling
    the backward was never a guard; ``shapes`` says so and keeps the installed ones."""
    from dyn_inspect.inspector.analysis.shapes import compile_shapes

    assert rec.recompiles() == 1
    (cs,) = [cs for cs in compile_shapes(rec.run.model, rec.run) if cs.guards]
    assert cs.not_installed and all("==" in g.readable for g in cs.not_installed), [g.readable for g in cs.guards]
    assert "kwargs['input_ids'].shape[1] == 12" in [g.readable for g in cs.not_installed]
    assert cs.installed_guards and not any("== 12" in g.readable for g in cs.installed_guards)


def _tui_and_cli_count_the_cache_alike(rec: Recorded) -> None:
    """Issue 30, on the same recording: the Llama's backward is compiled lazily, after the
    capture's counters were written, so they miss its FX-cache lookup; the TUI overview
    summed those counters (3 misses) where ``summary`` counts the cache artifacts (4)."""
    from dyn_inspect.inspector.reports import summary
    from dyn_inspect.inspector.reports.screens import overview

    m = rec.run.model
    captured = sum(c.capture.fx_cache_misses for c in m.compiles.values() if c.capture is not None)
    cli = summary(rec.run).cache
    assert cli["fx_graph_misses"] > captured  # the case: a lookup only the artifacts show
    tui = overview(m).cache
    shown = (tui["fx hits"], tui["fx misses"], tui["aot hits"], tui["aot misses"])
    assert shown == (cli["fx_graph_hits"], cli["fx_graph_misses"], cli["aot_hits"], cli["aot_misses"])


def _suggestions(rec: Recorded) -> list[tuple[str, str, str | None]]:
    """(frame, text, code) of each recompile's suggestion."""
    m = rec.run.model
    return [
        (fr.name, e.suggestion.text, e.suggestion.code)
        for fr in frames_with_recompiles(m)
        for e in recompile_timeline(m, fr)
        if e.suggestion is not None
    ]


def test_dynamic_false_advice_does_not_promise_automatic_dynamic(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Under @torch.compile(dynamic=False) torch never goes dynamic (4 recompiles here)."""
    rec = original_of("static_sizes.py", {}, tmp_path_factory)  # the recording its fix test reads
    said = _suggestions(rec)
    assert len(said) == 4
    for _frame, text, code in said:
        assert "recompiles once and then goes dynamic" not in text and "dynamic=False" in text, text
        assert code == "torch._dynamo.mark_dynamic(x, 0)"


# -- snippets: suggestions with code but no quick fix ----------------------------------------
# Shown as "try: <code>" by summary, recompiles, the TUI, the hover and the report. Each case
# writes the snippet into the program the way a user would (``old`` → ``new``, reviewed by
# hand), re-runs it plainly and under dyn-inspect, and checks the recompiles are gone.


@dataclass(frozen=True)
class SnippetCase:
    program: str
    frame: str  # the frames (name prefix) whose suggestion carries the snippet
    snippet: str  # Suggestion.code, exactly
    old: str  # the program text the user changes ...
    new: str  # ... into this
    output_kept: bool  # the fix's text promises the same values


# fix kind (inspector/analysis/fix_kinds.py) → the program that verifies it
SNIPPETS: dict[str, SnippetCase] = {
    # a resume function of `gn` was once told `torch.compile(model, dynamic=True)` (another
    # function of the file): the snippet names `gn`, and compiling gn dynamic removes the recompile
    "dynamic_true_resume": SnippetCase(
        "resume_gn.py", "torch_dynamo_resume_in_gn_at_", "torch.compile(gn, dynamic=True)",
        "@torch.compile\ndef gn(", "@torch.compile(dynamic=True)\ndef gn(", True,
    ),
    "contiguous": SnippetCase(
        "layout_stride.py", "by_layout", "x = x.contiguous()",
        "    print(by_layout(x)", "    x = x.contiguous()\n    print(by_layout(x)", True,
    ),
    # a float from .item() crosses a break into the resume function, which is guarded on
    # its value; capturing .item() removes the break and the recompiles (same values)
    "capture_scalar_outputs": SnippetCase(
        "item_scale.py", "torch_dynamo_resume_in_scale_by_mean_at_", "torch._dynamo.config.capture_scalar_outputs = True",
        "import torch\n", "import torch\n\ntorch._dynamo.config.capture_scalar_outputs = True\n", True,
    ),
    # the cast changes the dtype of the result ("if the change is unintended"): not kept
    "cast_dtype": SnippetCase(
        "dtype_mix.py", "by_dtype", "x = x.to(torch.float32)",
        "    y = by_dtype(x)", "    x = x.to(torch.float32)\n    y = by_dtype(x)", False,
    ),
}


@pytest.mark.parametrize("kind", sorted(SNIPPETS))
def test_snippet_is_applied_and_verified(kind: str, tmp_path_factory: pytest.TempPathFactory, record_property: Callable[[str, object], None]) -> None:
    case = SNIPPETS[kind]
    record_property("fix_verified", (kind, case.program))
    base = tmp_path_factory.mktemp(kind)
    text = (FIX_CORPUS / case.program).read_text()
    original = record(text, base, case.program)
    assert original.recompiles() > 0, "the program must recompile before the fix"
    said = [(text_, code) for frame, text_, code in _suggestions(original) if frame.startswith(case.frame)]
    assert said and all(code == case.snippet for _, code in said), _suggestions(original)
    if kind == "dynamic_true_resume":
        assert all("`gn`" in text_ for text_, _ in said), said
    m = original.run.model
    kinds = {e.suggestion.kind for fr in frames_with_recompiles(m) for e in recompile_timeline(m, fr) if e.suggestion is not None and e.suggestion.code}
    assert kind in kinds, kinds
    assert text.count(case.old) == 1
    fixed_text = text.replace(case.old, case.new)

    folder = base / "fixed"
    folder.mkdir()
    (folder / case.program).write_text(fixed_text)
    proc = plain(folder, case.program, {})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert recompile_lines(proc.stderr) == [], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    if case.output_kept:
        assert proc.stdout == original.stdout
    again: Recorded = record(fixed_text, base, case.program, inductor=folder / "inductor-plain")  # warm, as above
    assert again.recompiles() == 0
    assert again.run.model.exit_code in (0, None) and again.stdout == proc.stdout


# -- graph-break fixes: plans the editor offers as quick fixes --------------------------------


@dataclass(frozen=True)
class BreakFixCase:
    program: str
    marker: str  # the break's line ("BREAK:print")
    pick: str  # a part of the fix's title that picks it
    lost: str | None = None  # the title says "output lost": exactly stdout's lines starting with this go
    moves_to: str | None = None  # the title says "moves the break": the marker of the line it moves to (GB0098)


# fix kind (inspector/analysis/fix_kinds.py) → the program that verifies it
BREAK_FIXES: dict[str, BreakFixCase] = {
    "reorder_logging": BreakFixCase("log_reorder.py", "BREAK:print", "Let Dynamo reorder `print`: output kept"),
    "skip_while_compiling": BreakFixCase("log_skip.py", "BREAK:print", "Skip `print(...)` while compiling: output lost", lost="debug "),
    "torch_where": BreakFixCase("branch_where.py", "BREAK:branch", "Rewrite the `if` as `h = torch.where(...)`: same result"),
    "disable_helper": BreakFixCase(
        "helper_disable.py", "BREAK:helper", "Add `@torch.compiler.disable` to `report`: moves the break", moves_to="CALLS:helper"
    ),
}


def _without(stdout: str, prefix: str) -> str:
    return "".join(line for line in stdout.splitlines(keepends=True) if not line.startswith(prefix))


@pytest.mark.parametrize("kind", sorted(BREAK_FIXES))
def test_break_fix_is_applied_and_verified(kind: str, tmp_path_factory: pytest.TempPathFactory, record_property: Callable[[str, object], None]) -> None:
    case = BREAK_FIXES[kind]
    record_property("fix_verified", (kind, case.program))
    base = tmp_path_factory.mktemp(kind)
    text = (FIX_CORPUS / case.program).read_text()
    original = record(text, base, case.program)
    line = line_with(text, f"# {case.marker}")
    code = text.splitlines()[line - 1].strip()
    assert (line, code) in [(n, c) for n, _, c in original.breaks()], original.breaks()
    # the inspector's plan for the break (what the editor offers) is of this kind, and says
    # what it does to the program as this case checks it
    index = original.index()
    ff = index.for_path(str(original.path))
    assert ff is not None
    (finding,) = [b for b in ff.breaks if b.loc.line == line]
    plans = [p for p in break_plans(finding, text.splitlines(), line, index.inlined_logging) if case.pick in p.title]
    assert [p.kind for p in plans] == [kind], plans
    assert plans[0].keeps_behaviour == (case.lost is None and case.moves_to is None)
    assert plans[0].verified_by.endswith(f"test_break_fix_is_applied_and_verified[{kind}]")
    fixed_text = apply(original, text, case.marker, case.pick)  # the quick fix, as the editor applies it
    assert fixed_text.splitlines() == apply_plan(text.splitlines(), plans[0])
    assert fixed_text != text

    folder = base / "fixed"
    folder.mkdir()
    (folder / case.program).write_text(fixed_text)
    proc = plain(folder, case.program, {})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    expected = original.stdout if case.lost is None else _without(original.stdout, case.lost)
    assert expected.count("out ") == original.stdout.count("out ") > 0  # the results are all there
    if case.lost is not None:
        assert expected != original.stdout  # the lines the title says are lost were printed before
    assert proc.stdout == expected
    again: Recorded = record(fixed_text, base, case.program, inductor=folder / "inductor-plain")
    assert again.run.model.exit_code in (0, None) and again.stdout == expected
    before, after = original.breaks(), again.breaks()
    assert code not in [c for _, _, c in after], after  # no break at the fixed line any more
    if case.moves_to is None:
        assert len(after) == len(before) - 1, after  # removed, and nothing else changed
    else:
        call = text.splitlines()[line_with(text, f"# {case.moves_to}") - 1].strip()
        assert (call, "GB0098") in [(c, gb) for _, gb, c in after], after
        assert len(after) == len(before), after  # moved, not removed: as the title says


def test_every_verified_fix_kind_names_a_test_that_applies_it() -> None:
    """fix_kinds.VERIFIED is the gate: a kind is offered only with a test that applies it."""
    import ast

    from dyn_inspect.inspector.analysis.fix_kinds import VERIFIED

    cases: dict[str, Mapping[str, object]] = {
        "test_fix_is_applied_and_verified": FIXES,
        "test_snippet_is_applied_and_verified": SNIPPETS,
        "test_break_fix_is_applied_and_verified": BREAK_FIXES,
    }
    for kind, node in VERIFIED.items():
        path, _, name = node.partition("::")
        name, _, param = name.partition("[")
        tree = ast.parse((Path(__file__).parents[2] / path).read_text())
        assert name in {f.name for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}, node
        if param:
            assert param.rstrip("]") in cases[name], node
        if name in ("test_snippet_is_applied_and_verified", "test_break_fix_is_applied_and_verified"):
            assert param.rstrip("]") == kind, node  # the case applies this kind's snippet / plan
    # the LSP's own quick fixes are covered by test_lsp_quick_fixes; every snippet case's
    # kind is in the gate (a case without an entry would verify nothing anyone sees)
    assert set(SNIPPETS) | set(BREAK_FIXES) <= set(VERIFIED)
