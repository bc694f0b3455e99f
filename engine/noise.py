"""What else the machine does while ``--profile`` times steps: the load, CPU steal and the
threads a kernel may use against the CPUs left free (``ProfileNoise``, engine/schema.py).

Two readings, at the profiled window's start and at the unprofiled steps' end, of
``/proc/stat`` (all CPUs' busy, idle and steal time) and of this process's own CPU time:
what the CPUs did beyond this process is what other processes did. Linux only; elsewhere
the figures are None and only the threads are said. Nothing here imports torch at module
level (the profiler hands it in)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from dyn_inspect.engine.schema import ProfileNoise


@dataclass(frozen=True)
class Reading:
    wall: float
    own_cpu_s: float  # this process's CPU time, all its threads
    busy_s: float | None  # all CPUs' non-idle time (/proc/stat), steal not counted
    steal_s: float | None
    total_s: float | None
    host_cpus: int | None


def _proc_stat() -> tuple[float, float, float, int] | None:
    """(busy, steal, total) seconds summed over all CPUs, and how many CPUs."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    tick = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
    head = next((ln.split() for ln in lines if ln.startswith("cpu ")), None)
    if head is None or len(head) < 5:
        return None
    # user nice system idle iowait irq softirq steal (guest time is inside user already)
    v = [float(x) for x in head[1:9]] + [0.0] * max(0, 9 - len(head))
    idle = v[3] + v[4]
    steal = v[7]
    total = sum(v[:8])
    cpus = sum(1 for ln in lines if ln.startswith("cpu") and ln[3:4].isdigit())
    return (total - idle - steal) / tick, steal / tick, total / tick, cpus


def read() -> Reading:
    stat = _proc_stat()
    return Reading(
        wall=time.perf_counter(),
        own_cpu_s=time.process_time(),
        busy_s=stat[0] if stat else None,
        steal_s=stat[1] if stat else None,
        total_s=stat[2] if stat else None,
        host_cpus=stat[3] if stat else None,
    )


def noise(start: Reading, end: Reading, torch: Any) -> ProfileNoise:
    wall = max(0.0, end.wall - start.wall)
    others: float | None = None
    steal: float | None = None
    if start.busy_s is not None and end.busy_s is not None and wall > 0:
        busy = end.busy_s - start.busy_s
        own = end.own_cpu_s - start.own_cpu_s
        others = round(max(0.0, busy - own) / wall, 2)
    if start.total_s is not None and end.total_s is not None and start.steal_s is not None and end.steal_s is not None:
        total = end.total_s - start.total_s
        steal = round((end.steal_s - start.steal_s) / total, 4) if total > 0 else None
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load: float | None = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        load = None
    try:
        threads = int(torch.get_num_threads())
    except Exception:  # noqa: BLE001
        threads = 1
    compile_threads: int | None = None
    try:
        import torch._inductor.config as inductor_config

        value: Any = inductor_config.compile_threads
        compile_threads = int(value) if value is not None else None
    except Exception:  # noqa: BLE001 - no such key in this torch
        compile_threads = None
    return ProfileNoise(
        cpus=cpus,
        threads=threads,
        omp_num_threads=os.environ.get("OMP_NUM_THREADS", ""),
        compile_threads=compile_threads,
        load_avg=load,
        host_cpus=end.host_cpus,
        others_busy_cpus=others,
        steal_share=steal,
        wall_s=round(wall, 3),
    )
