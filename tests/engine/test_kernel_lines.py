"""engine.kernel_lines: stacks kept per output code text, read back only for that text."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyn_inspect.engine import kernel_lines, user_cache


@pytest.fixture
def key_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(user_cache.KEY_ENV, str(tmp_path))
    return tmp_path / kernel_lines.FOLDER


def test_recall_gives_back_what_was_kept_for_the_same_code_only(key_dir: Path) -> None:
    stacks = {"cpp_fused_add_0:1": ['  File "/a/train.py", line 20, in forward\n    return x + 1\n']}
    kernel_lines.keep("code one", stacks)
    assert kernel_lines.recall("code one") == stacks
    assert kernel_lines.recall("code one ") is None  # another output code
    assert len(list(key_dir.iterdir())) == 1


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"k": "not a list"}', b"\xff\xfe"])
def test_a_damaged_entry_is_no_entry(key_dir: Path, content: bytes) -> None:
    kernel_lines.keep("code", {"k:1": ["t"]})
    (entry,) = key_dir.iterdir()
    entry.write_bytes(content)
    assert kernel_lines.recall("code") is None


def test_an_unwritable_cache_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(user_cache.KEY_ENV, str(blocker))  # a file where the folder would be
    kernel_lines.keep("code", {"k:1": ["t"]})
    assert kernel_lines.recall("code") is None
