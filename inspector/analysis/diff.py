"""Run A vs run B: graph breaks, recompiles, kernels and compile time added, removed,
changed — what ``dyn-inspect diff`` prints and ``check --baseline`` gates on.

Items are matched by identities that survive re-running the same code from another
checkout or after an edit above the line:

- a break site: type, file relative to the run's cwd, function, the line's text;
- a recompile cause: the frame (relative file, function) and the parsed guard failure
  (kind, guarded source, dim) — not the values, which differ from run to run;
- a kernel: backend, name and fused ATen ops;
- compile time: per frame (relative file, function) and per stage.

Kernels in both runs are also compared one compiled kernel at a time
(``RunDiff.kernel_changes``): what Triton made of it and what it cost — the config it runs
with, registers, spills, shared memory, the size of each IR stage, the target, and its
profiled time per step. Inductor numbers kernels per graph, so one name occurs in several
compiles (``triton_poi_fused_add_0`` in 0/0 and in 1/0); these pairs are keyed by the
identity above plus the compile id and the backward flag, and the n-th kernel of a key in
A pairs with the n-th in B. A kernel whose key the other run lacks (another compile id,
e.g. after a recompile earlier in the run) is not paired. A value is compared only where both runs recorded it (compile metadata,
``--profile``, an IR stage); a time per step changes when it moved by more than
``min_kernel_time_change`` of A's. These changes are informative: ``check --baseline``
gates on new breaks and recompile causes only.

Public API: ``diff_runs(model_a, model_b) -> RunDiff``, ``break_items(model)``,
``recompile_items(model)``, ``kernel_items(model)``, ``kernel_facts(kernel)``,
``kernel_changes(model_a, model_b)`` (the run's cwd: ``locations.run_cwd``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from dyn_inspect.inspector.analysis.breaks import identity
from dyn_inspect.inspector.analysis.costs import kernel_cost
from dyn_inspect.inspector.analysis.guard_failures import parse_reason
from dyn_inspect.inspector.analysis.kernel_compile import config_text
from dyn_inspect.inspector.analysis.recompiles import reasons_of
from dyn_inspect.inspector.locations import relative, run_cwd
from dyn_inspect.inspector.model import KernelInfo, RunModel

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
class KernelFacts:
    """What one compiled kernel was made into and cost; None (``ir_bytes``: no stage) where
    the run did not record it (no compile metadata, no ``--profile``, not a Triton kernel)."""

    config: str | None  # ``config_text`` of the chosen config
    registers: int | None  # per thread
    spills: int | None
    shared_bytes: int | None
    ir_bytes: dict[str, int]  # stage -> bytes
    target: str | None  # "cuda sm_90"
    us_per_step: float | None  # profiled time per step


def kernel_facts(k: KernelInfo) -> KernelFacts:
    meta = k.meta
    chosen = meta.chosen if meta is not None else None
    cost = kernel_cost(k)
    return KernelFacts(
        config=config_text(chosen) if chosen is not None else None,
        registers=chosen.n_regs if chosen is not None else None,
        spills=chosen.n_spills if chosen is not None else None,
        shared_bytes=chosen.shared if chosen is not None else None,
        ir_bytes=dict(meta.ir_bytes) if meta is not None else {},
        target=meta.target if meta is not None else None,
        us_per_step=cost.us_per_step if cost is not None else None,
    )


# The facts compared, in the order they are reported (then ``ir_bytes.<stage>``, then time).
FACTS = ("config", "registers", "spills", "shared_bytes", "target")
IR_NOISE = 0.05


@dataclass
class KernelChange:
    """A kernel in both runs (same identity, compile id and direction) whose compile
    metadata or cost differs. ``changed`` names what differs, in report order: fields of
    ``KernelFacts``, an IR stage as ``ir_bytes.<stage>`` (``ir_bytes.ptx``)."""

    item: KernelItem
    compile_id: str
    backward: bool
    a: KernelFacts
    b: KernelFacts
    changed: list[str]

    def __str__(self) -> str:
        return f"{self.item.name} ({self.compile_id}{' backward' if self.backward else ''})"


def changed_facts(a: KernelFacts, b: KernelFacts, min_time_change: float = 0.0) -> list[str]:
    """What differs between two kernels' facts, where both recorded it."""
    out = [f for f in FACTS if getattr(a, f) is not None and getattr(b, f) is not None and getattr(a, f) != getattr(b, f)]
    # An IR stage holds the kernel file's path (MLIR locs, PTX .file, LLVM DIFile), which
    # differs from run to run: a size counts as changed past 5% (the same kernel recorded
    # in two cache folders differed by 3%), or whatever the change once the config changed.
    config_changed = "config" in out
    out += [
        f"ir_bytes.{s}"
        for s, n in a.ir_bytes.items()
        if s in b.ir_bytes and b.ir_bytes[s] != n and (config_changed or abs(b.ir_bytes[s] - n) > IR_NOISE * n)
    ]
    ta, tb = a.us_per_step, b.us_per_step
    if ta is not None and tb is not None and tb != ta and abs(tb - ta) > min_time_change * ta:
        out.append("us_per_step")
    return out


def _kernels_by_key(model: RunModel) -> dict[tuple[object, ...], KernelInfo]:
    """(identity, compile id, backward, n-th of that key) -> kernel."""
    out: dict[tuple[object, ...], KernelInfo] = {}
    seen: dict[tuple[object, ...], int] = defaultdict(int)
    for k in model.kernels:
        key = (k.event.backend, k.name, tuple(k.event.fused_ops), k.compile.cid, k.event.backward)
        out[key + (seen[key],)] = k
        seen[key] += 1
    return out


def kernel_changes(a: RunModel, b: RunModel, min_time_change: float = 0.0) -> list[KernelChange]:
    """The kernels of both runs whose compile metadata or cost changed, in B's order.
    ``min_time_change``: the share of A's time per step a time must move by to count."""
    in_a = _kernels_by_key(a)
    out: list[KernelChange] = []
    for key, kb in _kernels_by_key(b).items():
        ka = in_a.get(key)
        if ka is None:
            continue
        fa, fb = kernel_facts(ka), kernel_facts(kb)
        changed = changed_facts(fa, fb, min_time_change)
        if changed:
            item = KernelItem(kb.event.backend, kb.name, tuple(kb.event.fused_ops))
            out.append(KernelChange(item, kb.compile.cid, kb.event.backward, fa, fb, changed))
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
    kernel_changes: list[KernelChange] = field(default_factory=list)  # kernels in both, metadata or cost changed

    @property
    def compile_time_delta_s(self) -> float:
        return self.compile_time_b_s - self.compile_time_a_s


def diff_runs(a: RunModel, b: RunModel, min_time_change_s: float = 0.0, min_kernel_time_change: float = 0.0) -> RunDiff:
    """Everything that differs between two runs (B relative to A). ``min_time_change_s``:
    how much a frame's compile time must move to be listed; ``min_kernel_time_change``: the
    share of A's time per step a kernel's must move by (0.05: 5%)."""
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
        kernel_changes=kernel_changes(a, b, min_kernel_time_change),
    )
