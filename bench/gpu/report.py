"""What a recorded GPU run holds, checked and printed (run on the device by run_all.sh).

    python bench/gpu/report.py RUN_DIR [--root DIR] [--json PATH]

Per run: Triton kernels with source / fused ops / provenance lines (counts and the ones
missing any), autotuning records, graph breaks with the library line and the nearest user
line, recompiles, and --profile-kernels figures per kernel and per source line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from dyn_inspect.inspector.locations import is_library, nearest_user_frame
from dyn_inspect.inspector.run import open_run


def report(run_dir: str, root: str | None) -> dict[str, Any]:
    run = open_run(run_dir)
    m = run.model
    triton = [k for k in m.kernels if k.event.backend == "triton"]
    with_src = [k for k in triton if "@triton.jit" in run.blob_text(k.event.source)]
    with_ops = [k for k in triton if k.event.fused_ops]
    with_lines = [k for k in triton if k.lines]
    autotune = Counter()
    for c in m.compiles_in_order():
        for a in c.artifacts:
            if "autotun" in a.name or a.name == "triton_kernel_info":
                autotune[a.name] += 1
    chromium_autotune = 0
    raw_kinds: Counter[str] = Counter()
    for _, e in run.events():
        kind = getattr(e, "kind", None) or type(e).__name__
        if type(e).__name__ == "Chromium" and "autotune_choices_stats" in json.dumps(getattr(e, "args", {})):
            chromium_autotune += 1
        if type(e).__name__ == "Raw":
            raw_kinds[e.torch_kind] += 1  # type: ignore[union-attr]
        del kind
    breaks = []
    for g in m.break_groups():
        user = nearest_user_frame(g.first.user_stack, root)
        breaks.append(
            {
                "type": g.first.gb_type,
                "gb_id": g.first.gb_id,
                "count": g.count,
                "loc": f"{g.loc.file}:{g.loc.line}",
                "library": is_library(g.loc.file),
                "user": f"{user.file}:{user.line}" if user else None,
                "user_code": user.code if user else None,
            }
        )
    profiles = sorted((p for _, p in m.kernel_profiles), key=lambda p: -p.total_us)
    steps = profiles[0].steps if profiles else 0
    start = next((p.start for p in m.processes.values() if p.start), None)
    return {
        "run": run_dir,
        "status": m.status,
        "torch": start.torch if start else None,
        "triton": start.triton if start else None,
        "devices": start.devices if start else None,
        "compiles": len(m.compiles),
        "compile_time_s": round(m.total_compile_time(), 3),
        "kernels": dict(Counter(k.event.backend for k in m.kernels)),
        "triton_kernels": len(triton),
        "triton_with_source": len(with_src),
        "triton_with_fused_ops": len(with_ops),
        "triton_with_lines": len(with_lines),
        "triton_without_lines": sorted({k.name for k in triton if not k.lines})[:20],
        "sample_kernel": {
            "name": with_lines[0].name,
            "fused_ops": with_lines[0].event.fused_ops,
            "lines": [f"{l.file}:{l.line}" for l in with_lines[0].lines],
        }
        if with_lines
        else None,
        "autotune_artifacts": dict(autotune),
        "chromium_events_with_autotune": chromium_autotune,
        "raw_kinds": dict(raw_kinds),
        "graph_breaks": breaks,
        "recompiles": [
            {
                "function": r.compile.capture.co_name if r.compile.capture else None,
                "reason": r.event.reasons[0] if r.event.reasons else None,
            }
            for r in m.recompiles
        ],
        "profile_steps": steps,
        "profile_step_ms": round(profiles[0].step_us / 1000, 3) if profiles and profiles[0].step_us else None,
        "profile_kernels": [
            {
                "name": p.name,
                "op": p.op,
                "backward": p.backward,
                "calls": p.calls,
                "ms_per_step": round(p.total_us / p.steps / 1000, 4),
                "gb": p.gb,
                "gbps": p.bandwidth_gbps,
                "launch": p.launch,
                "peak_gbps": p.peak_gbps,
                "tflops": p.tflops,
                "peak_tflops": p.peak_tflops,
            }
            for p in profiles[:25]
        ],
        "profiled_total_ms_per_step": round(sum(p.total_us for p in profiles) / steps / 1000, 3) if steps else None,
        "profiled_inductor_kernels_joined": sum(1 for k in m.kernels if k.profile is not None),
        "line_profile": [{"loc": f"{lp.file}:{lp.line}", "text": lp.describe()} for lp in m.line_profile()[:15]],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--root", help="the user's workspace (for the nearest user line)")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    out = []
    for r in args.runs:
        try:
            out.append(report(r, args.root))
        except Exception as exc:  # noqa: BLE001 - report what failed and go on
            out.append({"run": r, "error": repr(exc)})
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
