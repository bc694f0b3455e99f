"""Replay a ``break_truth.py --probe`` dump through the region profile and print each region's
split: what ``dyn-inspect cost`` would attribute, from the profiler's own events.

    python3 bench/gpu/check_region_profile.py break-truth-probe.json

(Run by ``bench/gpu/run_all.sh break-truth``; once a dump from the device is reviewed, it
becomes the fixture of a test that replays it on the CPU machine.)
"""

from __future__ import annotations

import json
import sys
from typing import Any

from dyn_inspect.engine.region_profile import step_profile


class _Range:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _Kernel:
    def __init__(self, duration: float) -> None:
        self.duration = duration


class _Event:
    """A profiler event as the region profile reads it (name, thread, range, tree, kernels)."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.name = row["name"]
        self.thread = row["thread"]
        self.device_type = "DeviceType.CPU"
        self.time_range = _Range(row["start"], row["end"])
        self.kernels = [_Kernel(d) for d in row["kernels"]]
        self.cpu_parent: _Event | None = None
        self.cpu_children: list[_Event] = []


def events_of(data: dict[str, Any]) -> list[_Event]:
    events = [_Event(r) for r in data["events"]]
    for e, row in zip(events, data["events"], strict=True):
        if row["parent"] is not None:
            e.cpu_parent = events[row["parent"]]
            events[row["parent"]].cpu_children.append(e)
    return events


def main(path: str) -> None:
    data = json.loads(open(path, encoding="utf-8").read())
    events = events_of(data)
    wall = max(e.time_range.end for e in events) - min(e.time_range.start for e in events)
    profile = step_profile(events, data["steps"], wall, cuda=True)
    steps = data["steps"]
    print(f"{data.get('device')} torch {data.get('torch')}: {steps} steps, {wall / steps / 1000:.3f} ms/step (profiled)")
    for r in profile.regions:
        per = {
            k: round(getattr(r, k) / steps, 1) for k in ("total_us", "compiled_us", "eager_us", "device_wait_us", "device_us", "lookup_us")
        }
        print(f"  region {r.cid} (top level: {r.top_level}, nested {r.nested}): {per}")
    waits = sorted({str(e.name) for e in events if "ynchronize" in str(e.name) or "Memcpy" in str(e.name)})
    print(f"  synchronizing calls seen: {waits}")


if __name__ == "__main__":
    main(sys.argv[1])
