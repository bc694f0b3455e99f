"""After record.sh: what our live recorder said under this torch (recorded.json) and a
row for docs/compatibility.md. Usage: summarize.py SCRATCH DEST VERSION DEVICE."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from digest import digest  # noqa: E402

from dyn_inspect.inspector.run import Run  # noqa: E402


def main() -> None:
    scratch, dest, version, device = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    merge = "--merge" in sys.argv[5:]
    out: dict[str, object] = {"torch": version, "device": device, "recorded": datetime.date.today().isoformat()}
    if merge and (dest / "recorded.json").exists():
        out = {**json.loads((dest / "recorded.json").read_text()), "profile_recorded": out["recorded"]}
    for name in ("breaks", "recompiles", "train", "profile"):
        if not (scratch / f"{name}.rc").exists():
            continue
        runs = sorted(p for p in (scratch / f"runs-{name}").glob("2*") if p.is_dir())
        rc = (scratch / f"{name}.rc").read_text().strip() if (scratch / f"{name}.rc").exists() else "?"
        if not runs:
            out[name] = {"exit": rc, "error": "no run recorded"}
            continue
        run = Run(runs[0])
        start = next((p.start for p in run.model.processes.values() if p.start), None)
        end = next((p.end for p in run.model.processes.values() if p.end and p.end.hooks), None)
        out[name] = {
            "exit": rc,
            "hooks": (end.hooks if end else None) or (start.hooks if start else {}),
            "torch_full": start.torch if start else None,
            "triton": start.triton if start else None,
            "live": digest(run),
        }
        if name == "profile":
            profiles = sum(1 for p in run.model.kernel_profiles)
            out[name] = {k: v for k, v in out[name].items() if k != "live"} | {"kernel_profiles": profiles}
    (dest / "recorded.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
