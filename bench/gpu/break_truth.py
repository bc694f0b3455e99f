"""What a data-dependent branch really costs a GPU step, timed by hand (issue 57).

Two heavy compiled matmul chains with a branch on a tensor's value between them:
``if h.sum() > 0`` (a graph break: the host waits for the first chain, then runs the branch
and launches the second chain, the device idle meanwhile) against ``torch.where`` (one
graph, nothing waits). ``--time`` times both in one process with CUDA events, in alternating
blocks of steady-state steps, and prints each one's median step and the difference with its
spread: the cost the break really has. ``--program [--where]`` is the plain training loop
that ``dyn-inspect run --profile`` records, whose attributed break cost is checked against
that difference (bench/gpu/run_all.sh break-truth; docs/performance.md). ``--probe`` prints
the profiler's events under the compiled regions (what the region profile reads).
"""

from __future__ import annotations

import json
import statistics
import sys

import torch

N, LAYERS = 4096, 6
torch.manual_seed(0)
W = [torch.randn(N, N, device="cuda", dtype=torch.bfloat16) / N**0.5 for _ in range(2 * LAYERS)]


def chain(h: torch.Tensor, ws: list[torch.Tensor]) -> torch.Tensor:
    for w in ws:
        h = torch.tanh(h @ w)
    return h


def with_if(x: torch.Tensor) -> torch.Tensor:
    h = chain(x, W[:LAYERS])
    if h.sum() > 0:  # BREAK:gpu_if
        h = h * 2
    else:
        h = h - 1
    return chain(h, W[LAYERS:])


def with_where(x: torch.Tensor) -> torch.Tensor:
    h = chain(x, W[:LAYERS])
    h = torch.where(h.sum() > 0, h * 2, h - 1)
    return chain(h, W[LAYERS:])


def _steps(fn, x: torch.Tensor, n: int) -> list[float]:
    out = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(x)
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return out


def time_both(blocks: int = 10, per_block: int = 20) -> dict[str, object]:
    x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    fns = {"if": torch.compile(with_if), "where": torch.compile(with_where)}
    for fn in fns.values():
        _steps(fn, x, 10)  # compile, autotune, warm
    times: dict[str, list[float]] = {k: [] for k in fns}
    for i in range(blocks):
        for k in list(fns) if i % 2 == 0 else list(reversed(fns)):
            times[k] += _steps(fns[k], x, per_block)
    med = {k: statistics.median(v) for k, v in times.items()}
    # the difference's spread: the blocks' own differences
    diffs = []
    for i in range(blocks):
        s = slice(i * per_block, (i + 1) * per_block)
        diffs.append(statistics.median(times["if"][s]) - statistics.median(times["where"][s]))
    q = statistics.quantiles(diffs, n=4)
    return {
        "median_ms": med,
        "iqr_ms": {k: statistics.quantiles(v, n=4) for k, v in times.items()},
        "diff_ms": statistics.median(diffs),
        "diff_iqr_ms": [q[0], q[2]],
        "steps": blocks * per_block,
    }


def probe(steps: int = 3) -> None:
    """The profiler's CPU events of ``steps`` steady steps of the ``if`` program, as a tree
    (``tests/engine/test_region_profile.py`` replays it through the region profile)."""
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    fn = torch.compile(with_if)
    _steps(fn, x, 10)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn(x)
        torch.cuda.synchronize()
    events = [e for e in prof.events() if str(e.device_type).endswith("CPU")]
    index = {id(e): i for i, e in enumerate(events)}
    rows = [
        {
            "name": str(e.name),
            "thread": int(e.thread),
            "start": float(e.time_range.start),
            "end": float(e.time_range.end),
            "parent": index.get(id(e.cpu_parent)) if e.cpu_parent is not None else None,
            "kernels": [round(float(k.duration), 3) for k in (e.kernels or [])],
        }
        for e in events
    ]
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "steps": steps, "events": rows}))


if __name__ == "__main__":
    if "--time" in sys.argv:
        print(json.dumps(time_both()))
    elif "--probe" in sys.argv:
        probe()
    else:  # --program [--where]: the loop dyn-inspect records
        fn = with_where if "--where" in sys.argv else with_if
        compiled = torch.compile(fn)
        x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
        for _ in range(40):
            compiled(x)
        torch.cuda.synchronize()
        print("done")
