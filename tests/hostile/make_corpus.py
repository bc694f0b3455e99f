"""Write hostile copies of a recorded run (issue 29): one directory per scenario.

Each scenario is a name and a mutation of the copied event logs: Rich markup in names,
huge, infinite, NaN, negative numbers in every numeric field, wrong types, truncated
lines, binary garbage, very long strings, deep JSON, duplicated events, a javascript: url,
thousands of unknown event kinds. ``make_corpus(base, out)`` returns {name: directory};
``python tests/hostile/make_corpus.py RUN OUT`` does the same from a shell.

Scenarios in ``OWNED_ELSEWHERE`` exercise what another item of the issue fixes (integers
of 2**64 and more in the index writer); tests mark them so instead of hiding them.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKUP = "[/][bold]x[/bold][link=javascript:alert(1)]y[/link]"
# Markdown that would make a remote image and a javascript: link, after a fence that would
# close the hover's code block (the adversarial pass's 8t and 8u)
MARKDOWN = "```\n![px](https://attacker.example/p.png) [c](javascript:alert(1)) <img src=x onerror=alert(1)> `x` *y*"
NAME_KEYS = {"name", "co_name", "fn_name", "function", "gb_type", "file", "co_filename", "reason", "explanation",
             "code", "hints", "fused_ops", "path", "cache_bypass_reason", "torch_kind", "origin"}
# Fields whose damage makes the whole log (or run) unreadable by design: left intact so
# that the rest of the run is what is damaged.
KEEP = {"kind", "schema", "writer", "digest", "cid", "compile_id"}
OWNED_ELSEWHERE: dict[str, str] = {}

Event = dict[str, Any]
Mutation = Callable[[Path], None]


def _map(value: Any, key: str | None, leaf: Callable[[str | None, Any], Any]) -> Any:
    if isinstance(value, dict):
        return {k: (v if k in KEEP else _map(v, k, leaf)) for k, v in value.items()}
    if isinstance(value, list):
        return [_map(v, key, leaf) for v in value]
    return leaf(key, value)


def _events(log: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    lines = log.read_bytes().splitlines()
    log.write_bytes(b"\n".join(lines[:1] + change(lines[1:])) + b"\n")  # the header stays


def _leaves(leaf: Callable[[str | None, Any], Any]) -> Mutation:
    def mutate(run_dir: Path) -> None:
        for log in _logs(run_dir):
            def change(lines: list[bytes]) -> list[bytes]:
                out = []
                for line in lines:
                    event = json.loads(line)
                    out.append(json.dumps(_map(event, None, leaf), allow_nan=True).encode())
                return out
            _events(log, change)
    return mutate


def _numbers(new: Any) -> Mutation:
    return _leaves(lambda k, v: new if isinstance(v, int | float) and not isinstance(v, bool) else v)


def _names(new: Callable[[str], str]) -> Mutation:
    return _leaves(lambda k, v: new(v) if isinstance(v, str) and k in NAME_KEYS else v)


def _wrong_type(k: str | None, v: Any) -> Any:
    if isinstance(v, bool):
        return "yes"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return 7
    return v


def _lines(change: Callable[[list[bytes]], list[bytes]]) -> Mutation:
    def mutate(run_dir: Path) -> None:
        for log in _logs(run_dir):
            _events(log, change)
    return mutate


def _truncated(lines: list[bytes]) -> list[bytes]:
    return [line[: len(line) // 2] if i % 3 == 0 else line for i, line in enumerate(lines)]


def _garbage(lines: list[bytes]) -> list[bytes]:
    rnd = random.Random(29)
    out = []
    for line in lines:
        out += [line, bytes(rnd.randrange(256) for _ in range(200)).replace(b"\n", b"")]
    return out


def _deep(lines: list[bytes]) -> list[bytes]:
    deep = b'{"kind":"graph_break","gb_type":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    return lines[:2] + [deep] + lines[2:]


def _unknown_kinds(lines: list[bytes]) -> list[bytes]:
    return lines + [json.dumps({"kind": f"future_kind_{i}_" + "k" * 40, "t": 1.0}).encode() for i in range(20_000)]


def _url(run_dir: Path) -> None:
    _leaves(lambda k, v: "javascript:alert(document.cookie)" if k == "url" else v)(run_dir)


SCENARIOS: dict[str, Mutation] = {
    "markup_names": _names(lambda s: f"{s}{MARKUP}"),
    "markdown_text": _leaves(lambda k, v: f"{v} {MARKDOWN}" if isinstance(v, str) and k in NAME_KEYS | {"context"} else v),
    "javascript_url": _url,
    "numbers_1e300": _numbers(1e300),
    "numbers_infinity": _numbers(float("inf")),
    "numbers_nan": _numbers(float("nan")),
    "numbers_negative": _numbers(-1),
    "numbers_int64_max": _numbers(2**63 - 1),
    "int_2_64": _numbers(2**64),
    "wrong_types": _leaves(_wrong_type),
    "truncated_lines": _lines(_truncated),
    "binary_garbage": _lines(_garbage),
    "long_strings": _names(lambda s: s + "L" * 100_000),  # 1 MB each: summary took over 60 s (not looked into)
    "deep_json": _lines(_deep),
    "duplicate_events": _lines(lambda lines: [x for line in lines for x in (line, line)]),
    "unknown_kinds": _lines(_unknown_kinds),
}


def _logs(run_dir: Path) -> list[Path]:
    return sorted(p for p in run_dir.glob("*.jsonl") if p.is_file() and not p.is_symlink())


def make_corpus(base: Path, out: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Copy ``base`` (a recorded run directory) once per scenario under ``out`` and damage
    each copy; its index is not copied (a reader rebuilds it from the damaged logs)."""
    made = {}
    for name in names or list(SCENARIOS):
        dest = out / name
        shutil.copytree(base, dest, symlinks=True, ignore=shutil.ignore_patterns("index.dyn"))
        SCENARIOS[name](dest)
        made[name] = dest
    return made


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_corpus.py RUN_DIR OUT_DIR")
    for name, path in make_corpus(Path(sys.argv[1]), Path(sys.argv[2])).items():
        print(f"{name}: {path}")
