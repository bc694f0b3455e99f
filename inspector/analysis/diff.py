"""Run A vs run B: graph breaks, recompiles, kernels and compile time added, removed,
changed — what ``dyn-inspect diff`` prints and ``check --baseline`` gates on.

Items are matched by identities that survive re-running the same code from another
checkout or after an edit above the line:

- a break site: type, file relative to the run's cwd, function, the line's text;
- a recompile cause: the frame (relative file, function) and the parsed guard failure
  (kind, guarded source, dim) — not the values, which differ from run to run;
- a kernel: backend, name and fused ATen ops;
- compile time: per frame (relative file, function) and per stage.

Public API: ``diff_runs(model_a, model_b) -> RunDiff``, ``break_items(model)``,
``recompile_items(model)``, ``kernel_items(model)`` (the run's cwd: ``locations.run_cwd``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from dyn_inspect.inspector.analysis.breaks import identity
from dyn_inspect.inspector.analysis.guard_failures import parse_reason
from dyn_inspect.inspector.analysis.recompiles import reasons_of
from dyn_inspect.inspector.locations import relative, run_cwd
from dyn_inspect.inspector.model import RunModel

K = TypeVar("K")


@dataclass(frozen=True)
class BreakItem:
    gb_type: str
    file: str  # relative to the run's cwd when inside it
    function: str
    code: str  # the line's text (or its number when the text was not recorded)
    line: int  # the line in the run it came from (informative, not part of the identity)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.gb_type, self.file, self.function, self.code)

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.gb_type}"


@dataclass(frozen=True)
class RecompileItem:
    file: str
    function: str
    kind: str
    source: str
    dim: int | None
    example: str  # one reason text, for display

    @property
    def key(self) -> tuple[str, str, str, str, int | None]:
        return (self.file, self.function, self.kind, self.source, self.dim)

    def __str__(self) -> str:
        return f"{self.function} ({self.file}): {self.example}"


@dataclass(frozen=True)
class KernelItem:
    backend: str
    name: str
    fused_ops: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.backend, self.name, self.fused_ops)

    def __str__(self) -> str:
        return f"{self.name} [{', '.join(self.fused_ops)}]"


def break_items(model: RunModel) -> dict[tuple[str, str, str, str], tuple[BreakItem, int]]:
    """identity → (item, hit count)."""
    cwd = run_cwd(model)
    out: dict[tuple[str, str, str, str], tuple[BreakItem, int]] = {}
    for g in model.break_groups():
        key = identity(g, cwd)
        item = BreakItem(key[0], key[1], key[2], key[3], g.loc.line)
        prev = out.get(key)
        out[key] = (item, g.count + (prev[1] if prev else 0))
    return out


def recompile_items(model: RunModel) -> dict[tuple[str, str, str, str, int | None], tuple[RecompileItem, int]]:
    """identity → (item, how many recompiles it caused). Only the newest cache entry's
    failure of each recompile counts (the one the new call changed)."""
    cwd = run_cwd(model)
    out: dict[tuple[str, str, str, str, int | None], tuple[RecompileItem, int]] = {}
    for r in model.recompiles:
        reasons = reasons_of(r.compile) or list(r.event.reasons)
        if not reasons:
            continue
        f = parse_reason(reasons[0])
        cap = r.compile.capture
        file = relative(cap.co_filename, cwd) if cap and cap.co_filename else "?"
        function = cap.co_name if cap and cap.co_name else "?"
        item = RecompileItem(file, function, f.kind, f.source or "", f.dim, f.text)
        prev = out.get(item.key)
        out[item.key] = (prev[0] if prev else item, 1 + (prev[1] if prev else 0))
    for _log, lim in model.recompile_limits:
        file = relative(lim.co_filename, cwd) if lim.co_filename else "?"
        item = RecompileItem(file, lim.co_name or "?", "recompile_limit", "", None, "recompile limit reached: runs eagerly from then on")
        prev = out.get(item.key)
        out[item.key] = (item, 1 + (prev[1] if prev else 0))
    return out


def kernel_items(model: RunModel) -> dict[tuple[str, str, tuple[str, ...]], tuple[KernelItem, int]]:
    out: dict[tuple[str, str, tuple[str, ...]], tuple[KernelItem, int]] = {}
    for k in model.kernels:
        item = KernelItem(k.event.backend, k.name, tuple(k.event.fused_ops))
        prev = out.get(item.key)
        out[item.key] = (item, 1 + (prev[1] if prev else 0))
    return out


@dataclass
class Changes(Generic[K]):
    """Items only in B (added), only in A (removed), in both with another count (changed)."""

    added: list[tuple[K, int]] = field(default_factory=list)
    removed: list[tuple[K, int]] = field(default_factory=list)
    changed: list[tuple[K, int, int]] = field(default_factory=list)  # (item, count in A, count in B)
    same: int = 0

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def compare(a: dict, b: dict) -> Changes:
    """Two identity → (item, count) maps compared."""
    out: Changes = Changes()
    for key, (item, n) in b.items():
        if key not in a:
            out.added.append((item, n))
        elif a[key][1] != n:
            out.changed.append((item, a[key][1], n))
        else:
            out.same += 1
    for key, (item, n) in a.items():
        if key not in b:
            out.removed.append((item, n))
    return out


@dataclass
class TimeChange:
    name: str  # a stage ("dynamo", "inductor", ...) or a frame ("train.py:forward")
    a_s: float
    b_s: float

    @property
    def delta_s(self) -> float:
        return self.b_s - self.a_s


def frame_times(model: RunModel) -> dict[str, float]:
    cwd = run_cwd(model)
    out: dict[str, float] = defaultdict(float)
    for frame in model.frames_in_order():
        out[f"{relative(frame.filename, cwd)}:{frame.name}"] += sum(c.compile_time_s for c in frame.compiles)
    return dict(out)


@dataclass
class RunDiff:
    breaks: Changes[BreakItem]
    recompiles: Changes[RecompileItem]
    kernels: Changes[KernelItem]
    compile_time_a_s: float
    compile_time_b_s: float
    stages: list[TimeChange]
    frames: list[TimeChange]  # frames whose compile time changed, biggest change first

    @property
    def compile_time_delta_s(self) -> float:
        return self.compile_time_b_s - self.compile_time_a_s


def diff_runs(a: RunModel, b: RunModel, min_time_change_s: float = 0.0) -> RunDiff:
    """Everything that differs between two runs (B relative to A)."""
    sa, sb = a.compile_time_by_stage(), b.compile_time_by_stage()
    stages = [TimeChange(s, sa.get(s, 0.0), sb.get(s, 0.0)) for s in dict.fromkeys([*sa, *sb])]
    fa, fb = frame_times(a), frame_times(b)
    frames = [TimeChange(f, fa.get(f, 0.0), fb.get(f, 0.0)) for f in dict.fromkeys([*fa, *fb])]
    frames = sorted(
        (f for f in frames if abs(f.delta_s) > min_time_change_s or (f.name in fa) != (f.name in fb)), key=lambda f: -abs(f.delta_s)
    )
    return RunDiff(
        breaks=compare(break_items(a), break_items(b)),
        recompiles=compare(recompile_items(a), recompile_items(b)),
        kernels=compare(kernel_items(a), kernel_items(b)),
        compile_time_a_s=a.total_compile_time(),
        compile_time_b_s=b.total_compile_time(),
        stages=stages,
        frames=frames,
    )
