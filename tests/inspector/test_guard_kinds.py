"""Every guard kind has a parser, a suggestion and a real torch 2.13 guard failure that the
parser reads as that kind (tests/fixtures/guard_failures_torch-2.13.0.json: reasons as torch
reported them in recorded runs, never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from dyn_inspect.inspector.analysis.guard_failures import PARSERS, GuardKind, parse_reason
from dyn_inspect.inspector.analysis.suggestions import _SUGGEST, suggest

EXAMPLES = json.loads((Path(__file__).parents[1] / "fixtures" / "guard_failures_torch-2.13.0.json").read_text())["examples"]
# Kinds with no recorded example, and why (a kind added without an example fails below).
NO_EXAMPLE = {
    "device": "a device index mismatch needs two devices of one type (CPU-only CI)",
    "deallocated": "torch 2.13 did not invalidate a cache line when the module was freed",
    "other": "what no parser recognises",
}
KINDS = get_args(GuardKind)


def test_every_kind_has_a_parser_and_a_suggestion() -> None:
    parsed = {k for kinds, _ in PARSERS for k in kinds}
    assert parsed | {"other"} == set(KINDS)
    assert set(_SUGGEST) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_a_real_example(kind: str) -> None:
    if kind not in EXAMPLES:
        assert kind in NO_EXAMPLE, f"{kind}: record a real guard failure into the fixture"
        return
    f = parse_reason(EXAMPLES[kind]["reason"])
    assert f.kind == kind
    assert f.entry is not None and f.entry.count("/") == 1
    s = suggest(f)
    assert s.text and "guard failed:" not in s.text  # a kind's own advice, not the fallback


def test_the_2_13_dynamic_marking_text() -> None:
    """torch 2.13 says "_has_dynamo_dim_marking is present on runtime tensor but was absent
    at compile time" (it was read as a constant before)."""
    f = parse_reason(EXAMPLES["dynamic_marking"]["reason"])
    assert (f.kind, f.expected, f.actual) == ("dynamic_marking", "absent when compiled", "present")
