"""Shapes several outputs share: a source location, the environment, a run's rank
behaviours and divergences, and how an output is written as JSON."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from dyn_inspect.engine.schema import Loc, ProcessEnd, ProcessStart


class Output(msgspec.Struct, kw_only=True):
    """Base of every typed output. A field without a default is always present (``null``
    where its type allows); one that defaults to ``msgspec.UNSET`` is left out while unset
    (the outputs whose keys depend on the case: ``RunRow``, ``LspFunctionDetails``)."""


def to_json(value: msgspec.Struct | Any, *, default: Any = None, sort_keys: bool = False) -> str:
    """The output as JSON text, indented by 2, keys in field order (what the commands
    printed before they were typed: ``json.dumps`` of the same values, ASCII-escaped so a
    terminal of any encoding can print it)."""
    data = msgspec.to_builtins(value, enc_hook=default)  # ``default``: for values JSON has no type for (str)
    return json.dumps(data, indent=2, default=default, sort_keys=sort_keys)


class SourceLoc(Output):
    """A source location as the reports print it: every key present (``null`` when torch
    did not say). ``code``: the line's text when recorded."""

    file: str
    line: int
    col: int | None
    end_col: int | None
    name: str | None
    code: str | None


def loc_of(loc: SourceLoc | None) -> Loc | None:
    """The event log's ``Loc`` of an output's location (what the faces' renderers take)."""
    if loc is None:
        return None
    return Loc(file=loc.file, line=loc.line, name=loc.name, col=loc.col, end_col=loc.end_col, code=loc.code)


def source_loc(loc: Loc | None) -> SourceLoc | None:
    if loc is None:
        return None
    return SourceLoc(file=loc.file, line=loc.line, col=loc.col, end_col=loc.end_col, name=loc.name, code=loc.code)


class Environment(Output):
    """Where a run happened (from its first process's start, completed by its end).

    Keys are only ever added: where two outputs used two names for one value (the
    summary's ``cpu_isa``/``devices``/``platform``, the manifest's
    ``cpu_vector_isa``/``gpus``/``os``), both carry both names with the same value."""

    python: str | None = None
    torch: str | None = None
    triton: str | None = None
    cuda: str | None = None
    cuda_driver: str | None = None
    cpu: str | None = None
    cpu_isa: str | None = None  # torch's CPU capability ("AVX512", "DEFAULT")
    cpu_vector_isa: str | None = None  # the same: the manifest's name for it
    devices: list[str] = []  # GPU names
    gpus: list[str] = []  # the same: the manifest's name for them
    platform: str | None = None  # platform.platform()
    os: str | None = None  # the same: the manifest's name for it
    executable: str | None = None


def environment(start: ProcessStart | None, end: ProcessEnd | None = None) -> Environment:
    """GPU names and the driver come from the process end when the start could not read
    them (CUDA is only queried once the program initialized it)."""
    s = start
    devices = (list(s.devices) if s else []) or (list(end.devices) if end else [])
    isa = s.cpu_isa if s else None
    system = s.platform if s else None
    return Environment(
        python=s.python if s else None,
        torch=s.torch if s else None,
        triton=s.triton if s else None,
        cuda=s.cuda if s else None,
        cuda_driver=(s.cuda_driver if s else None) or (end.cuda_driver if end else None),
        cpu=s.cpu if s else None,
        cpu_isa=isa,
        cpu_vector_isa=isa,
        devices=devices,
        gpus=list(devices),
        platform=system,
        os=system,
        executable=s.executable if s else None,
    )


class Counts(Output):
    """Graph breaks: unique sites and total hits."""

    unique: int
    total: int


class NodeStatus(Output):
    """One node of a multi-node run and how it ended."""

    node: int
    hosts: list[str]
    ranks: list[int]
    status: str


class Divergence(Output):
    """One way the ranks differ; ``ranks``: those that deviate from the majority."""

    kind: str
    compile_id: str | None
    message: str
    ranks: list[int]


class RankGroup(Output):
    """Ranks that compiled the same things; the reference group has no differences."""

    ranks: list[int]
    reference: bool
    differences: list[str]
    text: str
