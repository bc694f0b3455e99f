"""Where a profiled step's time goes: one ``StepProfile`` from the profiler's events.

Called by ``StepProfiler`` (engine/profiler.py) with the events of its window of steady-state
steps. torch marks what we need on the CPU timeline:

- ``Torch-Compiled Region: <cid>`` spans the transformed bytecode of a frame Dynamo
  compiled: the call of its graph (``CompiledFunction``, or ``## Call CompiledFxGraph <key>
  ##`` without autograd), Dynamo's and AOTAutograd's wrappers (``Pregraph bytecode``,
  ``AOTDispatcher Runtime Wrapper …``), and whatever Python Dynamo left in the frame. After a
  graph break that is the instruction the break stopped at, run eagerly, then the call of the
  resume function: a new frame, so a region *nested* in this one, after its own
  ``TorchDynamo Cache Lookup``. A region's time less its graph, wrappers, nested regions and
  lookups is therefore the eager code between two graphs: what the break costs per step.
- ``TorchDynamo Cache Lookup`` is the guard check before a frame runs; it is followed by the
  region of the compile whose guards passed, or by nothing (the frame runs eagerly).
- ``CompiledFunctionBackward`` is a compiled backward graph, run by the autograd engine.
- ``dyn-inspect call: <callable>`` is ours (profiler.py): each outermost call of a callable
  ``torch.compile`` returned — compiled, or eagerly under ``--disable-compile`` — so one
  callable's time compares between the two runs.

Everything is host time — on a GPU the graph's span is the launches, which is what the
Python thread spends — except ``device_us``: the GPU time of the kernels a region's graph (or
a backward graph) launched. On a GPU the eager code of a break that reads a tensor's value
(``if t.sum() > 0``, ``.item()``) first waits for the device to finish what was queued: the
graph before the break, whose time the step pays with or without the break. That wait
(``device_wait_us``: the synchronizing CUDA calls under the eager code) is not the break's
cost and is kept out of ``eager_us``; what is left is the host gap during which the device
has nothing queued (bench/gpu/break_truth.py checks it against a hand-timed difference).
Nothing here imports torch.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import Any

from dyn_inspect.engine.schema import BackwardTime, CallTime, RegionTime, StepProfile, StepSlice

REGION_PREFIX = "Torch-Compiled Region: "
CALL_PREFIX = "dyn-inspect call: "  # our range around each outermost compiled call (profiler.py)
LOOKUP = "TorchDynamo Cache Lookup"
BACKWARD = "CompiledFunctionBackward"
_GRAPH_RE = re.compile(r"^## Call CompiledFxGraph (?P<key>\S+) ##$")
_WRAPPERS = ("Pregraph bytecode", "AOTDispatcher Runtime Wrapper")


def _us(event: Any) -> float:
    return float(event.time_range.elapsed_us())


def _start(event: Any) -> float:
    return float(event.time_range.start)


def _is_region(event: Any) -> bool:
    return str(event.name).startswith(REGION_PREFIX)


def _graph_keys(event: Any, depth: int = 4) -> list[str]:
    """FX-graph cache keys of the graph calls at or below ``event`` (a few levels down)."""
    m = _GRAPH_RE.match(str(event.name))
    if m:
        return [] if m["key"] == "None" else [m["key"]]
    if depth == 0:
        return []
    out: list[str] = []
    for child in event.cpu_children:
        out += _graph_keys(child, depth - 1)
    return out


def _device_us(event: Any) -> float:
    """GPU time of the kernels ``event`` and everything under it launched (0 on CPU)."""
    total = sum(float(k.duration) for k in getattr(event, "kernels", None) or ())
    return total + sum(_device_us(child) for child in event.cpu_children)


# CUDA runtime calls that block the host until the device has run what was queued: an
# explicit synchronize, or the device-to-host copy of a tensor's value (``.item()``,
# ``bool(t)``, ``if t.sum() > 0``: ``aten::_local_scalar_dense``).
_SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize", "cuCtxSynchronize")
_COPIES = ("cudaMemcpy", "cudaMemcpyAsync", "cuMemcpyDtoH", "cuMemcpyDtoHAsync", "cuMemcpyAsync")
_SCALAR = "aten::_local_scalar_dense"


def _wait_us(event: Any, under_scalar: bool = False) -> float:
    """Host time ``event`` and its children spent waiting for the device (0 on CPU)."""
    name = str(event.name)
    if name.startswith(_SYNCS) or (under_scalar and name.startswith(_COPIES)):
        return _us(event)
    under_scalar = under_scalar or name == _SCALAR
    return sum(_wait_us(child, under_scalar) for child in event.cpu_children)


def _is_compiled(event: Any) -> bool:
    name = str(event.name)
    return name == "CompiledFunction" or bool(_GRAPH_RE.match(name))


def _in_region(event: Any) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if _is_region(parent):
            return True
        parent = parent.cpu_parent
    return False


def _next_sibling(lookup: Any, by_parent: dict[int, list[Any]]) -> Any:
    """The event that starts right after ``lookup`` under the same parent (same thread at
    the top level): the region its guards let in, if any."""
    parent = lookup.cpu_parent
    siblings = by_parent.get(id(parent) if parent is not None else -int(lookup.thread) - 1, [])
    end = float(lookup.time_range.end)
    later = [e for e in siblings if e is not lookup and _start(e) >= end]
    return min(later, key=_start) if later else None


def step_profile(
    events: Iterable[Any], steps: int, wall_us: float, cuda: bool, anchor: str | None = None, samples_us: list[float] | None = None
) -> StepProfile:
    """The breakdown of ``steps`` profiled steps that took ``wall_us`` in all. With
    ``anchor`` (our ``dyn-inspect call:`` range of the callable whose calls are the steps)
    and each step's wall time (``samples_us``), also each step's own breakdown
    (``per_step``): the events split at the anchor's entries."""
    cpu = [e for e in events if str(getattr(e, "device_type", "")).split(".")[-1] == "CPU"]
    out = _breakdown(cpu, steps, wall_us, cuda)
    if samples_us:
        out.step_samples_us = [round(s, 3) for s in samples_us]
    if anchor is not None and samples_us and len(samples_us) == steps:
        parts = split_steps(cpu, anchor, steps)
        if parts is not None:
            for part, wall in zip(parts, samples_us, strict=True):
                one = _breakdown(part, 1, wall, cuda)
                out.per_step.append(
                    StepSlice(
                        step_us=round(wall, 3),
                        regions=one.regions,
                        backward=one.backward,
                        outside_us=one.outside_us,
                        missed_lookup_us=one.missed_lookup_us,
                        calls=one.calls,
                    )
                )
    return out


def split_steps(cpu: list[Any], anchor: str, steps: int) -> list[list[Any]] | None:
    """The events of each step: a step begins where the anchor's range does (each entry of
    the callable whose calls are the steps); an event belongs, with everything under it, to
    the step it began in. An event that spans a step's start (the user's own range around
    the loop) gives its children to their steps. None when the window holds another number
    of anchor entries than ``steps``."""
    starts = sorted(_start(e) for e in cpu if e.name == anchor and not _has_ancestor(e, anchor))
    if len(starts) != steps or not starts:
        return None
    parts: list[list[Any]] = [[] for _ in range(steps)]

    def place(e: Any) -> None:
        s, end = _start(e), float(e.time_range.end)
        i = max(0, bisect.bisect_right(starts, s) - 1)
        if i + 1 < len(starts) and end > starts[i + 1] and e.cpu_children:
            for child in e.cpu_children:
                place(child)
            return
        stack = [e]
        while stack:
            x = stack.pop()
            parts[i].append(x)
            stack.extend(x.cpu_children)

    for e in cpu:
        if e.cpu_parent is None:
            place(e)
    return parts


def _has_ancestor(event: Any, name: str) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name == name:
            return True
        parent = parent.cpu_parent
    return False


def _breakdown(cpu: list[Any], steps: int, wall_us: float, cuda: bool) -> StepProfile:
    by_parent: dict[int, list[Any]] = {}
    for e in cpu:
        parent = e.cpu_parent
        by_parent.setdefault(id(parent) if parent is not None else -int(e.thread) - 1, []).append(e)

    regions: dict[str, RegionTime] = {}
    top_us = 0.0
    for e in cpu:
        if not _is_region(e):
            continue
        cid = str(e.name)[len(REGION_PREFIX) :].strip()
        r = regions.get(cid)
        if r is None:
            r = regions[cid] = RegionTime(cid=cid, calls=0, total_us=0.0, top_level=False)
        total = _us(e)
        inside = compiled = overhead = wait = 0.0
        for child in e.cpu_children:
            if _is_region(child):
                inside += _us(child)
                ccid = str(child.name)[len(REGION_PREFIX) :].strip()
                if ccid not in r.nested:
                    r.nested.append(ccid)
            elif child.name == LOOKUP:
                inside += _us(child)
            elif _is_compiled(child):
                compiled += _us(child)
                r.graphs += [k for k in _graph_keys(child) if k not in r.graphs]
                if cuda:
                    r.device_us += _device_us(child)
            elif str(child.name).startswith(_WRAPPERS):
                overhead += _us(child)
            elif cuda:
                wait += _wait_us(child)
        r.calls += 1
        r.total_us += total
        r.compiled_us += compiled
        r.overhead_us += overhead
        r.device_wait_us += wait
        r.eager_us += max(0.0, total - compiled - overhead - inside - wait)
        if not _in_region(e):
            r.top_level = True
            top_us += total

    missed_us, missed = 0.0, 0
    top_lookup_us = 0.0
    for e in cpu:
        if e.name != LOOKUP:
            continue
        if not _in_region(e):  # (under our call range or none: not inside any region)
            top_lookup_us += _us(e)
        nxt = _next_sibling(e, by_parent)
        if nxt is not None and _is_region(nxt):
            r = regions[str(nxt.name)[len(REGION_PREFIX) :].strip()]
            r.lookup_us += _us(e)
            r.lookups += 1
        else:
            missed_us += _us(e)
            missed += 1

    calls: dict[str, CallTime] = {}
    for e in cpu:
        if str(e.name).startswith(CALL_PREFIX):
            name = str(e.name)[len(CALL_PREFIX) :]
            c = calls.get(name)
            if c is None:
                c = calls[name] = CallTime(function=name, calls=0, total_us=0.0)
            c.calls += 1
            c.total_us += _us(e)

    backward: dict[str | None, BackwardTime] = {}
    backward_us = 0.0
    for e in cpu:
        if e.name != BACKWARD:
            continue
        keys = _graph_keys(e)
        key = keys[0] if keys else None
        b = backward.get(key)
        if b is None:
            b = backward[key] = BackwardTime(graph=key, calls=0, total_us=0.0)
        b.calls += 1
        b.total_us += _us(e)
        b.compiled_us += sum(_us(c) for c in e.cpu_children if _is_compiled(c))
        if cuda:
            b.device_us += _device_us(e)
        backward_us += _us(e)

    def rounded(r: RegionTime) -> RegionTime:
        for f in ("total_us", "compiled_us", "overhead_us", "eager_us", "lookup_us", "device_us", "device_wait_us"):
            setattr(r, f, round(getattr(r, f), 3))
        return r

    return StepProfile(
        steps=steps,
        step_us=round(wall_us / steps, 3) if steps else 0.0,
        device="cuda" if cuda else "cpu",
        regions=[rounded(r) for r in sorted(regions.values(), key=lambda r: -r.total_us)],
        backward=[
            BackwardTime(
                graph=b.graph,
                calls=b.calls,
                total_us=round(b.total_us, 3),
                compiled_us=round(b.compiled_us, 3),
                device_us=round(b.device_us, 3),
            )
            for b in sorted(backward.values(), key=lambda b: -b.total_us)
        ],
        outside_us=round(max(0.0, wall_us - top_us - top_lookup_us - backward_us), 3),
        missed_lookup_us=round(missed_us, 3),
        missed_lookups=missed,
        calls=[CallTime(function=c.function, calls=c.calls, total_us=round(c.total_us, 3)) for c in calls.values()],
    )
