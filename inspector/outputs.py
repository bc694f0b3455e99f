"""Typed outputs: the shapes the CLI's ``--json`` reports and the bundle's manifest share,
as msgspec Structs, so that one name means one thing everywhere (``dyn-inspect schema
--outputs`` prints their JSON Schema).

Keys are only ever added: where two outputs used two names for one value (the summary's
``cpu_isa``/``devices``/``platform``, the manifest's ``cpu_vector_isa``/``gpus``/``os``),
both outputs now carry both names with the same value.
"""

from __future__ import annotations

from typing import Any

import msgspec

from dyn_inspect.engine.schema import ProcessEnd, ProcessStart


class Environment(msgspec.Struct, kw_only=True):
    """Where a run happened (from its first process's start, completed by its end)."""

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


OUTPUTS: tuple[type[msgspec.Struct], ...] = (Environment,)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every typed output (``$defs`` by name)."""
    _, defs = msgspec.json.schema_components(OUTPUTS)
    return {"$defs": defs}
