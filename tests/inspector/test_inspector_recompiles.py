"""Recompile analysis on real recordings: torch's reason text parsed into guard failures,
suggestions, per-frame timelines and the recompile limit."""

from __future__ import annotations

import pytest

import inspector_program
from corpus_support import CORPUS, EXAMPLES, marker_line
from dyn_inspect.inspector.analysis.guard_failures import parse_reason
from dyn_inspect.inspector.analysis.recompiles import frames_with_recompiles, recompile_limit_of, recompile_timeline
from dyn_inspect.inspector.analysis.suggestions import suggest_for
from dyn_inspect.inspector.model import FrameInfo, RunModel
from dyn_inspect.inspector.run import Run
from inspector_program import Recorded

program, program_run = inspector_program.program, inspector_program.program_run  # the shared fixtures


def _frame(model: RunModel, name: str) -> FrameInfo:
    found = [f for f in model.frames_in_order() if f.name == name]
    assert len(found) == 1, [f.name for f in model.frames_in_order()]
    return found[0]


def test_shape_change_is_a_size_failure_with_mark_dynamic(recompiles_run: Run) -> None:
    # recompiles.py calls by_shape with (4, 8) then (8, 8): dim 0 goes 4 → 8; the third
    # call (16, 8) hits the now-dynamic graph, so there are exactly two compiles.
    frame = _frame(recompiles_run.model, "by_shape")
    timeline = recompile_timeline(recompiles_run.model, frame)
    assert [e.index for e in timeline] == [0, 1]
    assert timeline[0].failures == [] and timeline[0].suggestion is None
    f = timeline[1].failures[0]
    assert (f.kind, f.source, f.dim, f.expected, f.actual) == ("size", "x", 0, "4", "8")
    assert f.entry == timeline[0].cid  # the cache entry that failed is the first compile
    assert timeline[1].suggestion is not None
    assert timeline[1].suggestion.code == "torch._dynamo.mark_dynamic(x, 0)"
    assert "dynamic=True" in timeline[1].suggestion.text
    assert frame.firstlineno == marker_line(CORPUS / "recompiles.py", "RECOMPILE:shape") - 1  # decorator line


def test_dtype_change_is_a_dtype_failure(recompiles_run: Run) -> None:
    timeline = recompile_timeline(recompiles_run.model, _frame(recompiles_run.model, "by_dtype"))
    f = timeline[1].failures[0]
    # float32 then float64 in the program; torch names them Float and Double.
    assert (f.kind, f.source, f.expected, f.actual) == ("dtype", "x", "Float", "Double")
    assert timeline[1].suggestion is not None and timeline[1].suggestion.code == "x = x.to(torch.float32)"


def test_recompile_limit_reached_and_eager_from_then_on(limit_run: Run) -> None:
    model = limit_run.model
    frame = _frame(model, "limited")
    assert recompile_limit_of(model, frame) == 2  # limit.py sets recompile_limit = 2
    timeline = recompile_timeline(model, frame)
    assert [e.limit_reached for e in timeline] == [False, False, True]
    # float32, float64, then float16 arrives: both cache entries fail, newest first.
    last = timeline[-1]
    assert [(f.entry, f.expected, f.actual) for f in last.failures] == [("0/1", "Double", "Half"), ("0/0", "Float", "Half")]
    assert last.suggestion is not None and "eagerly" in last.suggestion.text
    # raising the limit is not a verified fix (limit.py's dtypes would pass a doubled limit
    # too): the advice says why, with no snippet (inspector/analysis/fix_kinds.py)
    assert last.suggestion.code is None and "raise the limit only if" in last.suggestion.text
    assert frames_with_recompiles(model) == [frame]


@pytest.mark.parametrize(
    ("function", "kind", "source", "expected", "uses"),
    [
        ("by_int", "scalar", "n", "2", "USES:int"),
        ("by_float", "scalar", "s", "0.5", "RECOMPILE:float"),
        ("by_global", "global", "G['SCALE']", "1.0", "RECOMPILE:global"),
        ("forward", "attribute", "self.k", "3", "RECOMPILE:attr"),
    ],
)
def test_python_value_guards(program: Recorded, program_run: Run, function: str, kind: str, source: str, expected: str, uses: str) -> None:
    timeline = recompile_timeline(program_run.model, _frame(program_run.model, function))
    assert len(timeline) == 2
    f = timeline[1].failures[0]
    assert (f.kind, f.source, f.expected) == (kind, source, expected)
    # torch names the user line the guard came from; the marker's line or the one after it.
    line = marker_line(program.program, uses)
    assert f.where is not None and any(f.where.endswith(f"program.py:{n} in {function}") for n in (line, line + 1))


def test_python_value_suggestions(program_run: Run) -> None:
    model = program_run.model
    by = {f.name: recompile_timeline(model, f)[1].suggestion for f in frames_with_recompiles(model)}
    assert by["by_int"] is not None and "dynamic=True" in (by["by_int"].code or "") and "torch.tensor(n)" in by["by_int"].text
    assert by["by_global"] is not None and "`SCALE`" in by["by_global"].text
    # the flag is named in the text, but no test applies it: no snippet is offered
    assert by["forward"] is not None and by["forward"].code is None and "allow_unspec_int_on_nn_module" in by["forward"].text


def test_object_identity_guard(program_run: Run) -> None:
    # program.py passes two different lambdas, each created once: a __code__ identity guard
    # fails for a different function (a lambda re-created in a loop keeps its code object),
    # so "create it once" would be wrong advice.
    timeline = recompile_timeline(program_run.model, _frame(program_run.model, "by_fn"))
    f = timeline[1].failures[0]
    assert f.kind == "object_id" and f.source == "fn.__code__"
    s = timeline[1].suggestion
    assert s is not None and "different function" in s.text and "once" not in s.text and s.code is None


# -- faces_recompiles.py: advice that is specific, or nothing ------------------------------

FACES = CORPUS / "faces_recompiles.py"


def _faces_suggestion(run: Run, function: str):
    timeline = recompile_timeline(run.model, _frame(run.model, function))
    assert len(timeline) == 2, [e.cid for e in timeline]
    return timeline[1].failures[0], timeline[1].suggestion


def test_float_lr_guard_suggests_a_tensor_lr(faces_recompiles_run: Run) -> None:
    # The optimizer's param_groups[0]['lr'] == 0.01 guard (SGD.step compiled, lr changed).
    f, s = _faces_suggestion(faces_recompiles_run, "step")
    assert f.kind == "attribute" and f.source is not None and f.source.endswith("param_groups[0]['lr']") and f.expected == "0.01"
    assert s is not None and "allow_unspec_int_on_nn_module" not in s.text + (s.code or "")
    assert s.code is not None and "lr=torch.tensor(0.01)" in s.code and "tensor lr" in s.text


def test_new_keyword_argument(faces_recompiles_run: Run) -> None:
    f, s = _faces_suggestion(faces_recompiles_run, "with_kwargs")
    assert (f.kind, f.source, f.expected) == ("length", "kwargs", "1")
    assert s is not None and "new keyword argument" in s.text
    assert "unrolls" not in s.text and "Stack the items" not in s.text


def test_optional_keyword_argument_passed(faces_recompiles_run: Run) -> None:
    f, s = _faces_suggestion(faces_recompiles_run, "with_optional")
    assert (f.kind, f.source, f.expected) == ("dict_key", "kwargs", "'bias' absent")
    assert s is not None and s.text.startswith("a new keyword argument was passed: 'bias'")


def test_item_float_into_resume_function_gets_no_dynamic_true(faces_recompiles_run: Run) -> None:
    line = marker_line(FACES, "BREAK:item")
    f, s = _faces_suggestion(faces_recompiles_run, f"torch_dynamo_resume_in_item_float_at_{line}")
    assert f.kind == "scalar" and f.source == "___stack0"
    assert s is not None and "dynamic=True" not in (s.code or "") and "does not change that" in s.text
    assert s.code == "torch._dynamo.config.capture_scalar_outputs = True" and f"line {line}" in s.text


def test_float_attribute_gets_no_int_flag(faces_recompiles_run: Run) -> None:
    f, s = _faces_suggestion(faces_recompiles_run, "apply")
    assert (f.kind, f.source, f.expected) == ("attribute", "module.k", "2.0")
    assert s is not None and s.code is None and "allow_unspec_int" not in s.text


def test_distinct_functions_each_defined_once(faces_recompiles_run: Run) -> None:
    f, s = _faces_suggestion(faces_recompiles_run, "apply_fn")
    assert f.kind == "object_id" and f.source == "fn.__code__"
    assert s is not None and "once" not in s.text and "different function" in s.text


def test_mark_dynamic_names_the_keyword_argument(faces_recompiles_run: Run) -> None:
    f, s = _faces_suggestion(faces_recompiles_run, "embed")
    assert (f.kind, f.dim, f.expected, f.actual) == ("size", 1, "8", "16")
    assert s is not None and s.code is not None and s.code.startswith("torch._dynamo.mark_dynamic(input_ids, 1)")
    assert "`input_ids`" in s.text


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        # No frame context: a placeholder or a guessed fix is worse than no snippet.
        ("0/0: tensor '___stack0' size mismatch at index 0. expected 4, actual 8", "torch.compile(model, dynamic=True)"),
        ("0/0: tensor 'fn(x)[0]' size mismatch at index 0. expected 4, actual 8", None),
        ("0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 8, actual 16", "torch._dynamo.mark_dynamic(input_ids, 1)  # the tensor passed as input_ids="),
        ("0/0: ___stack0 == 0.25", None),
        ("0/0: self.scale == 0.5", None),
        ("0/0: self.k == 3", None),  # unverified fix kind: the text names the flag, no snippet
    ],
)
def test_suggestions_without_frame_context_say_less(reason: str, code: str | None) -> None:
    s = suggest_for(reason)
    assert s.code == code
    assert "dynamic=True" not in s.text or "___stack0 ==" not in reason


def test_resume_frame_stack_value_gets_no_bogus_snippet(example_run: Run) -> None:
    frames = [f for f in frames_with_recompiles(example_run.model) if any("___stack" in (x.source or "") for e in recompile_timeline(example_run.model, f) for x in e.failures)]
    assert frames, "train.py's resume frame after the helper call recompiles on a stack value"
    s = recompile_timeline(example_run.model, frames[0])[1].suggestion
    assert s is not None and "___stack" not in (s.code or "") and "dynamic=True" in (s.code or "")
    assert frames[0].filename == str(EXAMPLES / "train.py")


@pytest.mark.parametrize(
    ("reason", "kind", "source", "dim", "expected", "actual"),
    [
        # torch < 2.11 keeps L['...'] in the text; parsing gives the same answer.
        ("0/0: tensor 'L['x']' size mismatch at index 1. expected 4, actual 8", "size", "x", 1, "4", "8"),
        ("0/0: L['n'] == 3", "scalar", "n", None, "3", None),
        ("3/0: ___stack2 == 0.23", "scalar", "___stack2", None, "0.23", None),
        ("1/0: tensor 'x' stride mismatch at index 0. expected 4, actual 1", "stride", "x", 0, "4", "1"),
        ("1/0: tensor 'x' rank mismatch. expected 1, actual 2", "rank", "x", None, "1", "2"),
        ("1/0: tensor 'x' requires_grad mismatch. expected requires_grad=0", "requires_grad", "x", None, "False", "True"),
        ("2/1: GLOBAL_STATE changed: grad_mode ", "global_state", "grad_mode", None, None, None),
        ("0/0: len(xs) == 2", "length", "xs", None, "2", None),
        ("0/0: mode == 'a'", "constant", "mode", None, "'a'", None),
        ("0/0: hasattr(L['x'], '_dynamo_dynamic_indices') == False", "dynamic_marking", "x", None, "False", None),
        ("0/0: something torch has not said before", "other", None, None, None, None),
    ],
)
def test_reason_strings_torch_emits(reason: str, kind: str, source: str | None, dim: int | None, expected: str | None, actual: str | None) -> None:
    f = parse_reason(reason)
    assert (f.kind, f.source, f.dim, f.expected, f.actual) == (kind, source, dim, expected, actual)
    assert suggest_for(reason).text  # every kind gets a sentence, never an exception


def test_resume_function_local_gets_no_mark_dynamic_on_it(example_run: Run) -> None:
    # train.py's forward breaks at line 27; its resume function receives the live local `h`,
    # which the user cannot mark before a call: the advice names the compiled input instead.
    line = next(n for n, text in enumerate((EXAMPLES / "train.py").read_text().splitlines(), 1) if "if h.mean() > 0.5:" in text)
    frame = _frame(example_run.model, f"torch_dynamo_resume_in_forward_at_{line}")
    entry = recompile_timeline(example_run.model, frame)[1]
    f = entry.failures[0]
    assert (f.kind, f.source) == ("size", "h")
    assert entry.suggestion is not None and "mark_dynamic(h" not in (entry.suggestion.code or "")
    assert entry.suggestion.code == "torch.compile(model, dynamic=True)" and f"line {line}" in entry.suggestion.text


def test_object_identity_advice_to_create_once_needs_repeated_failures() -> None:
    from dyn_inspect.inspector.analysis.suggestions import SuggestContext, suggest

    f = parse_reason("3/1: ___check_obj_id(L['scale_fn'], 140001)")
    assert f.kind == "object_id" and f.source == "scale_fn"
    once = suggest(f, SuggestContext(repeats=1))
    assert "create it once" not in once.text and "each distinct object compiles its own graph" in once.text
    many = suggest(f, SuggestContext(repeats=4))
    assert "changed on 4 recompiles" in many.text and "create it once" in many.text
