"""The kinds of fix the inspector offers, and which of them are verified.

A fix plan (``inspector/reports/fix_plans.py``: a cause's fix, the editor's quick fixes,
``causes --fix``) is made only for a kind in ``VERIFIED``. A suggestion's snippet
(``Suggestion.code``: "try: torch.compile(model, dynamic=True)" in the summary, the TUI,
the hover, the report) is a fix we offer too. Issue 28: a fix kind without a
test that applies it to a real program and re-runs it is not offered. ``VERIFIED`` names,
for each kind that has one, the test that does that (tests/inspector/test_fix_corpus.py asserts each
entry names a test that exists and applies that kind); ``offered`` keeps a suggestion's
snippet only when its kind is verified, and its sentence always (it says what torch guarded
and why, which is true whatever the fix).
"""

from __future__ import annotations

from typing import Literal

FixKind = Literal[
    "mark_dynamic",  # torch._dynamo.mark_dynamic(x, d) before the first call (one line per input)
    "dynamic_true_resume",  # torch.compile(fn, dynamic=True): a resume function's size changed
    "dynamic_true_scalar",  # torch.compile(fn, dynamic=True): a Python number was specialized
    "dynamic_true_static",  # torch.compile(fn, dynamic=True) under dynamic=False, no input to mark
    "contiguous",  # x = x.contiguous(): a stride changed
    "cast_dtype",  # x = x.to(torch.float32): a dtype changed
    "mark_dynamic_every_call",  # the marking differed between calls
    "capture_scalar_outputs",  # a float from .item() crossed a break and changed
    "tensor_lr",  # a tensor lr for a compiled optimizer step
    "unspec_int_on_module",  # torch._dynamo.config.allow_unspec_int_on_nn_module = True
    "mark_unbacked",  # a size 0/1 arrived at a dynamic dim
    "mark_dynamic_range",  # a symbolic-shape guard failed
    "raise_recompile_limit",  # the recompile limit was hit
    # graph breaks (the editor's quick fixes, ``causes --fix``: inspector/reports/fix_plans.py)
    "reorder_logging",  # torch._dynamo.config.reorderable_logging_functions.add(print)
    "skip_while_compiling",  # if not torch.compiler.is_compiling(): print(...)
    "torch_where",  # a data-dependent `if` that assigns one name → torch.where(cond, a, b)
    "disable_helper",  # @torch.compiler.disable on an inlined helper (the break moves to its call)
]

# kind → the test that applies a snippet of that kind to a real program, re-runs it plainly
# and under dyn-inspect, and finds the recompiles it targets gone (exit code and, where
# kept, output unchanged).
VERIFIED: dict[FixKind, str] = {
    "mark_dynamic": "tests/inspector/test_fix_corpus.py::test_fix_is_applied_and_verified[mark_dynamic_several_inputs]",
    "dynamic_true_resume": "tests/inspector/test_fix_corpus.py::test_snippet_is_applied_and_verified[dynamic_true_resume]",
    "dynamic_true_scalar": "tests/lsp/test_lsp_quick_fixes.py::test_copy_a_fixes_remove_every_break_and_recompile_and_lose_only_what_they_say",
    "capture_scalar_outputs": "tests/inspector/test_fix_corpus.py::test_snippet_is_applied_and_verified[capture_scalar_outputs]",
    "cast_dtype": "tests/inspector/test_fix_corpus.py::test_snippet_is_applied_and_verified[cast_dtype]",
    "contiguous": "tests/inspector/test_fix_corpus.py::test_snippet_is_applied_and_verified[contiguous]",
    "tensor_lr": "tests/lsp/test_lsp_quick_fixes.py::test_tensor_lr_fix_removes_the_lr_recompiles_and_keeps_stdout",
    "reorder_logging": "tests/inspector/test_fix_corpus.py::test_break_fix_is_applied_and_verified[reorder_logging]",
    "skip_while_compiling": "tests/inspector/test_fix_corpus.py::test_break_fix_is_applied_and_verified[skip_while_compiling]",
    "torch_where": "tests/inspector/test_fix_corpus.py::test_break_fix_is_applied_and_verified[torch_where]",
    "disable_helper": "tests/inspector/test_fix_corpus.py::test_break_fix_is_applied_and_verified[disable_helper]",
}


def offered(kind: FixKind | None, code: str | None) -> str | None:
    """``code`` when a test verifies fixes of ``kind``, else None (the advice says less)."""
    if code is None or kind is None or kind not in VERIFIED:
        return None
    return code
