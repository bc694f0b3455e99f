"""An event kind is added in one place: its schema entry and its normalizer module, which
reads torch's record (``@handles``) and writes it back for TORCH_TRACE (``@emits``) — or
says it has no torch record (``NOT_EMITTED``). docs/event-log.md, "Adding an event kind"."""

from __future__ import annotations

from dyn_inspect.engine.normalizers import EMITTERS, NOT_EMITTED
from dyn_inspect.engine.schema import EVENT_TYPES


def test_every_kind_is_written_back_or_says_why_not() -> None:
    kinds = set(EVENT_TYPES.values())
    assert not set(EMITTERS) & NOT_EMITTED
    missing = sorted(t.__name__ for t in kinds - set(EMITTERS) - NOT_EMITTED)
    assert missing == [], f"no @emits and not in NOT_EMITTED: {missing}"
    assert set(EMITTERS) | NOT_EMITTED == kinds


def test_emitters_live_beside_the_normalizers() -> None:
    for kind, fn in EMITTERS.items():
        assert fn.__module__.startswith("dyn_inspect.engine.normalizers"), (kind, fn.__module__)
