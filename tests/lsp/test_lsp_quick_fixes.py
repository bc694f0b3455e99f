"""Every quick fix the language server offers, checked by a re-run (issue 14, done-when).

tests/corpus/quick_fixes.py has one of each graph break and recompile the server has a fix
for. It is recorded once; the fixes come from ``code_actions()`` on the real findings of
that recording (the function the server's ``textDocument/codeAction`` handler calls), are
applied to copies, and the copies are recorded with the real recorder (CPU Inductor); each
title's claim is checked against the copy's breaks, recompiles and stdout:

- copy A takes every fix that keeps what the program computes (torch.where, capture
  scalars, mark_dynamic, dynamic=True) and the reorder fix, whose title says the inlined
  helper's prints are lost: no break or recompile left, stdout = the original's without
  exactly the helper's lines;
- copy B takes "Skip `print(...)` while compiling: output lost" (exactly that print's
  lines go) and ``@torch.compiler.disable`` on the helper, which "moves the break to the
  call site (GB0098)" and keeps the helper's output;
- copy C is B plus the reorder fix offered from B's run (no inlined print left there):
  "output kept", preferred, and stdout is B's.

With ``DYN_INSPECT_CORPUS_CACHE`` set the recordings are kept there, keyed by the
program's text, and reused by later sessions.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from lsprotocol import types

from corpus_support import CORPUS, marker_line
from dyn_inspect.inspector.reports.findings import build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp.documents import path_uri
from fix_support import NAME, PROGRAM, Recorded, apply, fixes_on, line_with, record
from lsp_support import apply_edit

pytestmark = pytest.mark.corpus

KEEPS = ("output kept", "behaviour kept", "same result")
CHANGES = ("output lost", "moves the break")


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return record(PROGRAM.read_text(), tmp_path_factory.mktemp("quick-fixes"))


HELPER_LOST = "output kept here, output lost in inlined `noisy`"
# Which fixes each finding gets, by marker: (title fragment, preferred).
EXPECTED = {
    "BREAK:print": [(f"Let Dynamo reorder `print`: {HELPER_LOST}", False), ("Skip `print(...)` while compiling: output lost", False)],
    "BREAK:talky": [(f"Let Dynamo reorder `print`: {HELPER_LOST}", False), ("Skip `print(...)` while compiling: output lost", False)],
    "BREAK:helper_print": [
        ("Skip `print(...)` while compiling: output lost", False),
        ("Add `@torch.compiler.disable` to `noisy`: moves the break to the call site (GB0098)", False),
    ],
    "BREAK:branch": [("Rewrite the `if` as `h = torch.where(...)`: same result, both branches computed (review", False)],
    "BREAK:item": [("Let Dynamo trace `.item()`: behaviour kept", True)],
    # the root cause of by_shape's recompile, at the line that makes `rows` (not on the def)
    "FIX:rows": [("Insert `torch._dynamo.mark_dynamic(rows, 0)` where `rows` is made: one graph for every size, behaviour kept", True)],
    "RECOMPILE:shape": [],
    "RECOMPILE:int": [("Compile `scaled` with `dynamic=True`: one graph for every value of `n`, behaviour kept", True)],
}


def honest(act: types.CodeAction) -> None:
    """The title says what the fix does to the program; only a fix that changes nothing
    the program does, and needs no review, is the preferred one."""
    changes = any(c in act.title for c in CHANGES)
    assert changes or any(k in act.title for k in KEEPS), act.title
    if act.is_preferred:
        assert not changes and "review" not in act.title, act.title
    assert act.kind == types.CodeActionKind.QuickFix and act.diagnostics, act.title


def without(stdout: str, prefix: str) -> str:
    return "".join(line for line in stdout.splitlines(keepends=True) if not line.startswith(prefix))


def test_each_finding_gets_honest_fixes_with_the_expected_edits(original: Recorded) -> None:
    text = PROGRAM.read_text()
    for name in ("chatty", "talky", "noisy"):
        assert original.stdout.count(f"{name} ") == 2, original.stdout
    assert original.stdout.endswith("quick_fixes done\n")
    breaks = original.breaks()
    for marker in ("BREAK:print", "BREAK:talky", "BREAK:helper_print", "BREAK:branch", "BREAK:item"):
        assert any(line == marker_line(PROGRAM, marker) for line, _, _ in breaks), (marker, breaks)
    assert original.recompiles() == 2  # by_shape (4 → 8) and scaled (n == 2 → 3)
    for marker, wanted in EXPECTED.items():
        acts = fixes_on(original, text, marker_line(PROGRAM, marker))
        titles = [a.title for a in acts]
        assert len(acts) == len(wanted), (marker, titles)
        for fragment, preferred in wanted:
            (act,) = [a for a in acts if fragment in a.title]
            honest(act)
            assert bool(act.is_preferred) == preferred, act.title

    def edited(marker: str, pick: str) -> str:
        return apply(original, text, marker, pick)

    # The edits, as written by hand.
    assert edited("BREAK:branch", "torch.where") == text.replace(
        "    if h.mean() > 0.5:  # BREAK:branch\n        h = h * 0.5\n", "    h = torch.where(h.mean() > 0.5, h * 0.5, h)\n"
    )
    assert edited("BREAK:item", "capture_scalar_outputs") == text.replace(
        "import torch\n", "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n", 1
    )
    assert edited("RECOMPILE:int", "dynamic=True") == text.replace(
        "@torch.compile\ndef scaled(", "@torch.compile(dynamic=True)\ndef scaled("
    )
    assert edited("FIX:rows", "mark_dynamic") == text.replace(
        "        rows = torch.rand(n, 4)  # FIX:rows\n",
        "        rows = torch.rand(n, 4)  # FIX:rows\n        torch._dynamo.mark_dynamic(rows, 0)\n",
    )
    assert edited("BREAK:print", "reorder") == text.replace(
        "import torch\n", "import torch\ntorch._dynamo.config.reorderable_logging_functions.add(print)\n", 1
    )
    assert edited("BREAK:helper_print", "disable") == text.replace("\ndef noisy(", "\n@torch.compiler.disable\ndef noisy(")


def test_copy_a_fixes_remove_every_break_and_recompile_and_lose_only_what_they_say(
    original: Recorded, tmp_path_factory: pytest.TempPathFactory, record_property: Callable[[str, object], None]
) -> None:
    # the fix kind (inspector/analysis/fix_kinds.py) this test verifies, for `fixes: N/N verified`
    record_property("fix_verified", ("dynamic_true_scalar", NAME))
    text = PROGRAM.read_text()
    for marker, pick in [
        ("BREAK:print", "reorder"),  # registers print for the whole program: talky's and noisy's too
        ("BREAK:branch", "torch.where"),
        ("BREAK:item", "capture_scalar_outputs"),
        ("FIX:rows", "mark_dynamic"),
        ("RECOMPILE:int", "dynamic=True"),
    ]:
        text = apply(original, text, marker, pick)
    fixed = record(text, tmp_path_factory.mktemp("quick-fixes-a"))
    assert fixed.breaks() == []
    assert fixed.recompiles() == 0
    # kept: the results and the compiled functions' own prints; lost, as the reorder fix's
    # title says: the inlined helper's print (torch drops reordered calls in inlined code)
    assert "noisy " in original.stdout
    assert fixed.stdout == without(original.stdout, "noisy ")


@pytest.fixture(scope="module")
def copy_b(original: Recorded, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    text = PROGRAM.read_text()
    text = apply(original, text, "BREAK:print", "Skip `print")
    text = apply(original, text, "BREAK:helper_print", "moves the break")
    return record(text, tmp_path_factory.mktemp("quick-fixes-b"))


def test_copy_b_fixes_that_say_they_change_behaviour_do_what_they_say(original: Recorded, copy_b: Recorded) -> None:
    # output lost: exactly the skipped print's lines are gone, the helper's output stays
    assert copy_b.stdout == without(original.stdout, "chatty ")
    text = copy_b.path.read_text()
    codes = {(code, gb) for _, gb, code in copy_b.breaks()}
    assert not any('print("chatty"' in code or 'print("noisy"' in code for code, _ in codes), codes
    # the helper's break moved to its call (GB0098, calling a disabled function): not gone
    call = text.splitlines()[line_with(text, "# CALLS:helper") - 1].strip()
    assert (call, "GB0098") in codes
    before = {(code, gb) for _, gb, code in original.breaks() if 'print("chatty"' not in code and 'print("noisy"' not in code}
    assert before | {(call, "GB0098")} == codes  # talky's print, the branch and .item() untouched
    assert copy_b.recompiles() == original.recompiles()


def test_copy_c_reorder_without_inlined_prints_keeps_the_output(copy_b: Recorded, tmp_path_factory: pytest.TempPathFactory) -> None:
    text = copy_b.path.read_text()
    (act,) = [a for a in fixes_on(copy_b, text, line_with(text, "# BREAK:talky")) if "reorder" in a.title]
    assert act.title.startswith("Let Dynamo reorder `print`: output kept (add it to torch._dynamo.config.reorderable_logging_functions)")
    assert act.is_preferred
    honest(act)
    text = apply(copy_b, text, "BREAK:talky", "reorder")
    fixed = record(text, tmp_path_factory.mktemp("quick-fixes-c"))
    assert not any("print(" in code for _, _, code in fixed.breaks())
    assert fixed.stdout == copy_b.stdout
    assert len(fixed.breaks()) == len(copy_b.breaks()) - 1


OPTIM = CORPUS / "optim_fix.py"


def test_tensor_lr_fix_removes_the_lr_recompiles_and_keeps_stdout(tmp_path_factory: pytest.TempPathFactory, record_property: Callable[[str, object], None]) -> None:
    record_property("fix_verified", ("tensor_lr", OPTIM.name))
    text = OPTIM.read_text()
    before = record(text, tmp_path_factory.mktemp("optim-fix"), OPTIM.name)
    assert before.recompiles() == 2  # torch's SGD.step: lr 0.01 → 0.005 → 0.0025
    (act,) = fixes_on(before, text, marker_line(OPTIM, "FIX:lr"))
    honest(act)
    assert act.is_preferred and act.title.startswith("Give the optimizer a tensor lr (`lr=torch.tensor(0.01)`)")
    # the note it fixes: the compiled step (torch's SGD.step inlined in `opt_step`) recompiled, shown where the lr is set
    assert act.diagnostics and act.diagnostics[0].message.startswith(
        "Recompiled 2× in 1 frame from one cause: the optimizer's float lr changes (compiled for 0.01) → 2 recompiles\nFix: `lr=torch.tensor(0.01)` in the optimizer's constructor"
    )
    assert act.edit is not None
    fixed_text = apply_edit(text, act.edit, path_uri(str(before.path)))
    assert fixed_text == text.replace("lr=0.01)  # FIX:lr", "lr=torch.tensor(0.01))  # FIX:lr")
    after = record(fixed_text, tmp_path_factory.mktemp("optim-fix-after"), OPTIM.name)
    assert after.recompiles() == 0
    assert after.stdout == before.stdout and before.stdout.count("step ") == 3


def test_details_still_list_the_recompiles_a_root_cause_explains(example_run: Run) -> None:
    """The example's recompiles are one cause, noted once at its fix site; the `forward`
    lens's details (dynInspect.showDetails) still list each recompile, pointing at it."""
    from corpus_support import EXAMPLES
    from dyn_inspect.lsp.code_lens import details, details_markdown

    index = build_index(example_run, Workspace.for_run([EXAMPLES], example_run))
    ff = index.for_path(str(EXAMPLES / "train.py"))
    assert ff is not None and ff.causes, "the root cause is noted in train.py"
    (forward,) = [fn for fn in ff.functions if fn.name == "forward"]
    assert forward.steps == []  # no note of its own on the def line
    d = details(forward, forward.def_line)
    assert d["recompiles"], d
    assert all(r["suggestion"].startswith("its root cause: `x.shape[0]` takes 16, 32") for r in d["recompiles"])
    assert "## " in details_markdown(d) and "its root cause" in details_markdown(d)
