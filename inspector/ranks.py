"""Ranks of a distributed run: which process log is which rank, one rank's view of a run,
and the divergence report.

A run under ``torchrun`` (or an imported multi-rank TORCH_TRACE directory) holds one
process log per rank, tagged with its rank in ``process_start``. Every face shows all
ranks merged by default; ``filter_rank(run, R)`` gives the same ``Run`` API restricted to
rank R's processes, so a command's ``--rank R`` is one call (``select_rank``; the option
itself is the CLI's, ``cli/common.py``).

``divergence_report(model)`` compares what each rank compiled. Ranks of one SPMD job
should compile the same graphs: a rank that breaks the graph elsewhere, recompiles
differently or generates different kernels for the same compile id runs a different
program — the classic cause of collective hangs (one rank waits in an all_reduce the other
never issues, or issues in a different order). Compared per rank (all of a rank's process
logs together):

- graph breaks: the set of break sites (type + file:line) each rank hit;
- recompiles: recompiles per compiled function, and which functions hit the recompile limit;
- compile ids: which compile ids each rank has at all;
- per compile id present on several ranks: the Dynamo graph (function, outcome, op count
  and op histogram) and the kernels (name, forward/backward, fused ATen ops);
- compile time: flagged when the slowest rank took more than ``COMPILE_TIME_RATIO`` × the
  fastest AND more than ``COMPILE_TIME_MIN_GAP_S`` seconds longer (both: a 3× spread of
  0.2 s is noise, a 5 s gap on a 2-minute compile is not a divergence either).

``Divergence.ranks`` names the ranks that deviate from the majority (ties: the group that
holds the lowest rank is the reference), so a 2-rank run where rank 1 differs says (1,).
"""

from __future__ import annotations

import copy
import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.schema import Event, LogHeader, ProcessStart, RunEnd
from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.model import BreakGroup, CompileInfo, Process, RunModel, is_launcher_log
from dyn_inspect.inspector.run import Run

COMPILE_TIME_RATIO = 1.5
COMPILE_TIME_MIN_GAP_S = 1.0
LAUNCHER_LOG = "launcher.jsonl"

DivergenceKind = Literal[
    "graph_break",
    "recompile",
    "recompile_limit",
    "compile_ids",
    "graph",
    "kernels",
    "compile_time",
]
# The order the report lists them in: the likeliest cause of a hang first.
KIND_ORDER: tuple[str, ...] = ("graph_break", "recompile", "recompile_limit", "graph", "kernels", "compile_ids", "compile_time")


@dataclass(frozen=True)
class Divergence:
    """One way the ranks differ. ``ranks``: the ranks that deviate from the majority."""

    kind: DivergenceKind
    compile_id: str | None
    message: str
    ranks: tuple[int, ...]


# -- which log is which rank -------------------------------------------------------------


def rank_of_log(model: RunModel, log: str) -> int | None:
    process = model.processes.get(log)
    return process.rank if process else None


def logs_by_rank(model: RunModel) -> dict[int, list[str]]:
    """rank → its process logs (several when a rank restarted or spawned compiling
    subprocesses). Processes without a rank (the torchrun agent) are left out."""
    out: dict[int, list[str]] = defaultdict(list)
    for log, process in model.processes.items():
        if process.rank is not None:
            out[process.rank].append(log)
    return dict(sorted(out.items()))


def break_ranks(model: RunModel, group: BreakGroup) -> list[int]:
    """The ranks that hit this graph break (what the LSP shows on a break)."""
    ranks = {rank_of_log(model, log) for log in group.logs}
    return sorted(r for r in ranks if r is not None)


def format_ranks(ranks: Iterable[int]) -> str:
    """ "rank 1", "ranks 0, 2", "ranks 0-3", "ranks 0-62, 64-127": runs of three or more
    ranks are written as ranges (a 256-rank run stays one line)."""
    rs = sorted(set(ranks))
    if not rs:
        return "no rank"
    if len(rs) == 1:
        return f"rank {rs[0]}"
    parts: list[str] = []
    start = prev = rs[0]
    for r in [*rs[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        if prev - start >= 2:
            parts.append(f"{start}-{prev}")
        else:
            parts.extend(str(x) for x in range(start, prev + 1))
        if r is not None:
            start = prev = r
    return "ranks " + ", ".join(parts)


# -- nodes (multi-node runs) ---------------------------------------------------------------

_LAUNCHER_NODE = re.compile(r"launcher-n(\d+)\.jsonl")


@dataclass(frozen=True)
class NodeStatus:
    """One node of a multi-node run: its hosts, ranks and how it ended ("finished",
    "exited with 1", "crashed (exit 1)", "killed by signal 9", "running")."""

    node: int
    hosts: tuple[str, ...]
    ranks: tuple[int, ...]
    status: str
    from_launcher: bool  # its launcher's run_end said it (else its processes' own ends)


def node_of(process: Process) -> int | None:
    """torchrun's GROUP_RANK of the process (None outside a multi-node job)."""
    return process.start.node_rank if process.start is not None else None


def _status_text(end: RunEnd | None, processes: list[Process]) -> str:
    raised = any(p.end is not None and p.end.exception is not None for p in processes)
    if end is not None:
        if end.signal:
            return f"killed by signal {end.signal}"
        if end.exit_code == 0:
            return "finished"
        return f"crashed (exit {end.exit_code})" if raised else f"exited with {end.exit_code}"
    if not processes or any(p.end is None for p in processes):
        return "running"
    codes = [p.end.exit_code or 0 for p in processes if p.end is not None]
    if raised:
        return "crashed"
    if any(code > 128 for code in codes):
        return f"killed by signal {max(codes) - 128}"
    bad = next((code for code in codes if code), 0)
    return f"exited with {bad}" if bad else "finished"


_LAUNCHER_HOST_PID = re.compile(r"launcher-(.+)-(\d+)\.jsonl")


def _safe_host(host: str) -> str:
    """The host name as a node's launcher log name spells it (engine/launcher.py)."""
    return "".join(c if c.isalnum() or c in "-." else "_" for c in host)[:64] or "host"


def launcher_nodes(model: RunModel) -> dict[str, int]:
    """launcher log → its node. ``launcher-n<node>.jsonl`` (a merge) says it; a shared-disk
    node's ``launcher-<host>-<pid>.jsonl`` is its child's (the torchrun agent's) workers'
    node; a lone ``launcher.jsonl`` belongs to the node of every process, if one."""
    by_host_ppid: dict[tuple[str, int], list[Process]] = defaultdict(list)
    nodes_seen: set[int] = set()
    for p in model.processes.values():
        if p.start is not None:
            by_host_ppid[(_safe_host(p.start.hostname), p.start.ppid)].append(p)
            if p.start.node_rank is not None:
                nodes_seen.add(p.start.node_rank)
    out: dict[str, int] = {}
    for log in model.launchers:
        m = _LAUNCHER_NODE.fullmatch(log)
        if m:
            out[log] = int(m[1])
            continue
        hp = _LAUNCHER_HOST_PID.fullmatch(log)
        if hp:
            host, pid = hp[1], int(hp[2])
            children = by_host_ppid.get((host, pid), [])
            family = children + [g for c in children if c.pid is not None for g in by_host_ppid.get((host, c.pid), [])]
            found = {n for n in (node_of(p) for p in family) if n is not None}
            if len(found) == 1:
                out[log] = found.pop()
        elif len(nodes_seen) == 1:
            out[log] = next(iter(nodes_seen))
    return out


def node_statuses(model: RunModel) -> list[NodeStatus]:
    """Per node, in node order; empty unless the run's processes name two nodes or more."""
    by_node: dict[int, list[Process]] = defaultdict(list)
    for process in model.processes.values():
        node = node_of(process)
        if node is not None:
            by_node[node].append(process)
    launchers: dict[int, RunEnd | None] = {}
    for log, node in launcher_nodes(model).items():
        launchers[node] = model.launchers[log].end
    nodes = sorted(set(by_node) | set(launchers))
    if len(nodes) < 2:
        return []
    out = []
    for node in nodes:
        procs = by_node.get(node, [])
        has_launcher = node in launchers
        out.append(
            NodeStatus(
                node,
                tuple(sorted({p.start.hostname for p in procs if p.start is not None and p.start.hostname})),
                tuple(sorted({p.rank for p in procs if p.rank is not None})),
                _status_text(launchers.get(node), procs) if has_launcher else _status_text(None, procs),
                has_launcher and launchers[node] is not None,
            )
        )
    return out


# -- one rank's view ---------------------------------------------------------------------


class RankModel(RunModel):
    """A ``RunModel`` fed only the events of the process logs of some ranks (and the
    launchers').

    A log's rank is in its ``process_start``, the event right after its ``log_header``: the
    header waits for it, everything of a log of another rank is dropped. Works while a live
    run grows (``Run.refresh``)."""

    def __init__(self, rank: int | Iterable[int]) -> None:
        super().__init__()
        self.wanted = frozenset((rank,) if isinstance(rank, int) else rank)
        self.rank = min(self.wanted)  # the first (the only one for --rank R)
        self._log_rank: dict[str, int | None] = {}
        self._held_header: dict[str, LogHeader] = {}

    def apply(self, event: Event, log: str) -> None:
        if is_launcher_log(log):
            super().apply(event, log)
            return
        if log not in self._log_rank:
            if isinstance(event, LogHeader):
                self._held_header[log] = event
                return
            if not isinstance(event, ProcessStart):
                return  # a log that does not start with process_start: not attributable
            self._log_rank[log] = event.rank
            header = self._held_header.pop(log, None)
            if event.rank in self.wanted and header is not None:
                super().apply(header, log)
        if self._log_rank[log] in self.wanted:
            super().apply(event, log)


RankSelection = int | Sequence[int] | None


def filter_rank(run: Run, rank: int | Sequence[int]) -> Run:
    """The same run seen through some ranks only (one, or a list): a ``Run`` whose model
    (processes, frames, compiles, breaks, recompiles, kernels) holds those ranks'
    processes. Reads the logs again (the view refreshes on its own afterwards); ``run`` is
    left as it was."""
    view = copy.copy(run)
    view.logs = {}
    view.unknown = []
    view.model = RankModel(rank)
    view.refresh()
    return view


def select_rank(run: Run, rank: RankSelection) -> Run:
    """``--rank R`` → the ranks' view, or the run itself when R is None. A rank the run does
    not have is the user's mistake: one line naming the ranks it has."""
    if rank is None:
        return run
    wanted = [rank] if isinstance(rank, int) else sorted(set(rank))
    ranks = run.model.ranks()
    missing = [r for r in wanted if r not in set(ranks)]
    if missing:
        have = f"it has {format_ranks(ranks)}" if ranks else "it has no ranked processes (not a distributed run)"
        raise InspectorError(f"no {format_ranks(missing)} in {run.path.name}: {have}")
    return filter_rank(run, wanted[0] if len(wanted) == 1 else wanted)


# -- what each rank compiled -------------------------------------------------------------


@dataclass
class RankProfile:
    """What one rank compiled, in the terms the divergence report compares."""

    rank: int
    logs: list[str]
    breaks: dict[str, BreakGroup] = field(default_factory=dict)  # key → group (a hit on this rank)
    break_cids: dict[str, str] = field(default_factory=dict)  # key → first compile id it was hit in
    recompiles: Counter[str] = field(default_factory=Counter)  # function label → recompiles
    recompile_cids: dict[str, str] = field(default_factory=dict)
    limits: set[str] = field(default_factory=set)  # function labels that hit the recompile limit
    compiles: dict[str, CompileInfo] = field(default_factory=dict)  # cid → compile (first log wins)
    compile_time_s: float = 0.0


def _short_file(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _label(name: str | None, file: str | None, line: int | None) -> str:
    if file is None:
        return name or "?"
    return f"{name or '?'} ({_short_file(file)}:{line or 0})"


def rank_profiles(model: RunModel) -> dict[int, RankProfile]:
    by_rank = logs_by_rank(model)
    profiles = {r: RankProfile(r, logs) for r, logs in by_rank.items()}
    log_rank = {log: r for r, logs in by_rank.items() for log in logs}
    for key, group in model.breaks.items():
        for log, event in group.hits:
            r = log_rank.get(log)
            if r is None:
                continue
            p = profiles[r]
            p.breaks.setdefault(key, group)
            p.break_cids.setdefault(key, event.cid or "")
    for info in model.recompiles:
        r = log_rank.get(info.log)
        if r is None:
            continue
        cap = info.compile.capture
        label = _label(cap.co_name, cap.co_filename, cap.co_firstlineno) if cap else f"compile {info.compile.cid}"
        profiles[r].recompiles[label] += 1
        profiles[r].recompile_cids.setdefault(label, info.compile.cid)
    for log, limit in model.recompile_limits:
        r = log_rank.get(log)
        if r is not None:
            profiles[r].limits.add(_label(limit.co_name, limit.co_filename, limit.co_firstlineno))
    for (log, cid), compile_info in model.compiles.items():
        r = log_rank.get(log)
        if r is None:
            continue
        profiles[r].compiles.setdefault(cid, compile_info)
        profiles[r].compile_time_s += compile_info.compile_time_s
    return profiles


# -- the report --------------------------------------------------------------------------


def _groups(values: Mapping[int, Hashable]) -> list[tuple[Hashable, list[int]]]:
    """Ranks grouped by equal value, the reference group first (largest; ties: lowest rank)."""
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for rank, value in sorted(values.items()):
        groups[value].append(rank)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))


def _deviating(groups: list[tuple[Hashable, list[int]]]) -> tuple[int, ...]:
    return tuple(sorted(r for _, ranks in groups[1:] for r in ranks))


def _split(present: set[int], everyone: list[int]) -> tuple[list[int], list[int], tuple[int, ...]]:
    """(ranks with it, ranks without it, the deviating side)."""
    with_ = sorted(present)
    without = sorted(set(everyone) - present)
    # The reference side is the larger; a tie goes to the side holding the lowest rank
    # (what ``_groups`` decides, in one pass: called once per break site and rank set).
    if len(with_) != len(without):
        deviating = with_ if len(with_) < len(without) else without
    else:
        deviating = without if with_ and (not without or with_[0] < without[0]) else with_
    return with_, without, tuple(deviating)


def _graph_signature(c: CompileInfo) -> tuple[object, ...]:
    cap = c.capture
    g = c.graph("dynamo")
    return (
        cap.co_name if cap else None,
        c.outcome,
        cap.graph_op_count if cap else None,
        tuple(sorted(g.op_counts.items())) if g else None,
    )


def _describe_graph(c: CompileInfo) -> str:
    cap = c.capture
    g = c.graph("dynamo")
    ops = cap.graph_op_count if cap and cap.graph_op_count is not None else (sum(g.op_counts.values()) if g else None)
    name = cap.co_name if cap else "?"
    return f"{name}, {c.outcome}, {_plural(ops, 'op') if ops is not None else '? ops'}"


def _kernel_signature(c: CompileInfo) -> tuple[tuple[bool, str, tuple[str, ...]], ...]:
    return tuple(sorted((k.event.backward, k.name, tuple(k.event.fused_ops)) for k in c.kernels))


def _short_list(items: list[str], limit: int = 4) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def divergence_report(model: RunModel, profiles: dict[int, RankProfile] | None = None) -> list[Divergence]:
    """How the ranks of a run differ in what they compiled, one item per difference (the
    JSON and ``check``'s gate); ``rank_behaviours`` is the same grouped by rank. Empty for
    fewer than 2 ranks."""
    profiles = rank_profiles(model) if profiles is None else profiles
    everyone = sorted(profiles)
    if len(everyone) < 2:
        return []
    out: list[Divergence] = []

    # Graph breaks hit by some ranks only.
    all_keys: dict[str, BreakGroup] = {}
    for p in profiles.values():
        all_keys.update(p.breaks)
    for key, group in sorted(all_keys.items(), key=lambda kv: (kv[1].loc.file, kv[1].loc.line)):
        present = {r for r, p in profiles.items() if key in p.breaks}
        if len(present) == len(everyone):
            continue
        with_, without, deviating = _split(present, everyone)
        cid = profiles[with_[0]].break_cids.get(key) or None
        loc = group.loc
        out.append(
            Divergence(
                "graph_break",
                cid,
                f"graph break `{group.first.gb_type}` at {_short_file(loc.file)}:{loc.line} hit on {format_ranks(with_)}, "
                f"not on {format_ranks(without)}",
                deviating,
            )
        )

    # Recompiles per function.
    functions = sorted({label for p in profiles.values() for label in p.recompiles})
    for label in functions:
        counts = {r: p.recompiles.get(label, 0) for r, p in profiles.items()}
        groups = _groups(counts)
        if len(groups) == 1:
            continue
        deviating = _deviating(groups)
        cid = next((profiles[r].recompile_cids[label] for r in deviating if label in profiles[r].recompile_cids), None)
        spread = "; ".join(f"{format_ranks(ranks)}: {value}×" for value, ranks in sorted(groups, key=lambda g: g[1][0]))
        out.append(Divergence("recompile", cid, f"{label} recompiled a different number of times — {spread}", deviating))

    for label in sorted({label for p in profiles.values() for label in p.limits}):
        present = {r for r, p in profiles.items() if label in p.limits}
        if len(present) == len(everyone):
            continue
        with_, without, deviating = _split(present, everyone)
        out.append(
            Divergence(
                "recompile_limit",
                None,
                f"{label} hit the recompile limit (runs eagerly from then on) on {format_ranks(with_)}, not on {format_ranks(without)}",
                deviating,
            )
        )

    # Compile ids: present on some ranks only (grouped), and per shared id graph and kernels.
    cids = sorted({cid for p in profiles.values() for cid in p.compiles}, key=_cid_order)
    only_on: dict[frozenset[int], list[str]] = defaultdict(list)
    for cid in cids:
        have = {r: p.compiles[cid] for r, p in profiles.items() if cid in p.compiles}
        if len(have) < len(everyone):
            only_on[frozenset(have)].append(cid)
        if len(have) < 2:
            continue
        graph_groups = _groups({r: _graph_signature(c) for r, c in have.items()})
        if len(graph_groups) > 1:
            detail = "; ".join(
                f"{format_ranks(ranks)}: {_describe_graph(have[ranks[0]])}" for _, ranks in sorted(graph_groups, key=lambda g: g[1][0])
            )
            out.append(Divergence("graph", cid, f"compile {cid} captured different graphs — {detail}", _deviating(graph_groups)))
        kernel_groups = _groups({r: _kernel_signature(c) for r, c in have.items()})
        if len(kernel_groups) > 1:
            names = {r: {k.name for k in c.kernels} for r, c in have.items()}
            ref_ranks = kernel_groups[0][1]
            ref = names[ref_ranks[0]]
            parts = []
            for _, ranks in sorted(kernel_groups, key=lambda g: g[1][0]):
                mine = names[ranks[0]]
                if ranks == ref_ranks:
                    parts.append(f"{format_ranks(ranks)}: {_plural(len(mine), 'kernel')}")
                    continue
                extra, missing = sorted(mine - ref), sorted(ref - mine)
                bits = [_plural(len(mine), "kernel")]
                if extra:
                    bits.append("+" + _short_list(extra))
                if missing:
                    bits.append("−" + _short_list(missing))
                if not extra and not missing:
                    bits.append("same names, different fused ops")
                parts.append(f"{format_ranks(ranks)}: {' '.join(bits)}")
            out.append(
                Divergence("kernels", cid, f"compile {cid} generated different kernels — {'; '.join(parts)}", _deviating(kernel_groups))
            )
    for holders, missing_cids in only_on.items():
        with_, without, deviating = _split(set(holders), everyone)
        out.append(
            Divergence(
                "compile_ids",
                missing_cids[0],
                f"compile id{'s' if len(missing_cids) > 1 else ''} {_short_list(missing_cids, 6)} only on "
                f"{format_ranks(with_)}, not on {format_ranks(without)}",
                deviating,
            )
        )

    # Compile time spread.
    times = {r: p.compile_time_s for r, p in profiles.items()}
    fastest, slowest = min(times.values()), max(times.values())
    if slowest - fastest > COMPILE_TIME_MIN_GAP_S and (fastest <= 0 or slowest / fastest > COMPILE_TIME_RATIO):
        slow = tuple(
            r
            for r, t in sorted(times.items())
            if t - fastest > COMPILE_TIME_MIN_GAP_S and (fastest <= 0 or t / fastest > COMPILE_TIME_RATIO)
        )
        fast_rank = min(times, key=lambda r: (times[r], r))
        shown = ", ".join(f"rank {r} {times[r]:.1f}s" for r in slow[:4])
        out.append(
            Divergence(
                "compile_time",
                None,
                f"compile time differs widely: {shown} vs rank {fast_rank} {fastest:.1f}s "
                f"(flagged above ×{COMPILE_TIME_RATIO:g} and +{COMPILE_TIME_MIN_GAP_S:g}s)",
                slow,
            )
        )
    out.sort(key=lambda d: KIND_ORDER.index(d.kind))
    return out


# -- ranks grouped by behaviour ------------------------------------------------------------

BEHAVIOUR_DETAILS = 6  # differences listed per group before "(+N more)"


@dataclass(frozen=True)
class Behaviour:
    """Ranks that compiled exactly the same things. The reference (the largest group; ties:
    the one holding the lowest rank) has no ``differences``; every other group says how it
    differs from the reference, most likely cause of a hang first."""

    ranks: tuple[int, ...]
    reference: bool
    differences: tuple[str, ...] = ()

    def describe(self) -> str:
        """ "ranks 0-62: identical", "rank 63: extra graph break … at train.py:88 (GB0059)"."""
        if self.reference:
            return f"{format_ranks(self.ranks)}: identical"
        shown = list(self.differences[:BEHAVIOUR_DETAILS])
        more = len(self.differences) - len(shown)
        return f"{format_ranks(self.ranks)}: " + "; ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def _compile_signature(c: CompileInfo) -> tuple[object, ...]:
    return (_graph_signature(c), _kernel_signature(c))


def _signature(p: RankProfile, sigs: dict[int, tuple[object, ...]]) -> tuple[object, ...]:
    return (
        frozenset(p.breaks),
        frozenset(p.recompiles.items()),
        frozenset(p.limits),
        frozenset((cid, sigs[id(c)]) for cid, c in p.compiles.items()),
    )


def _break_text(group: BreakGroup) -> str:
    from dyn_inspect.inspector.analysis.messages import headline

    b, loc = group.first, group.loc
    gbid = f" ({b.gb_id})" if b.gb_id else ""
    what = headline(b)
    what = f"`{what}`" if what == b.gb_type else what  # torch's type, not our phrase: quoted
    return f"graph break {what} at {_short_file(loc.file)}:{loc.line}{gbid}"


def _differences(p: RankProfile, ref: RankProfile, sigs: dict[int, tuple[object, ...]]) -> list[str]:
    out: list[str] = []
    for key in sorted(set(p.breaks) - set(ref.breaks), key=lambda k: (p.breaks[k].loc.file, p.breaks[k].loc.line)):
        out.append("extra " + _break_text(p.breaks[key]))
    for key in sorted(set(ref.breaks) - set(p.breaks), key=lambda k: (ref.breaks[k].loc.file, ref.breaks[k].loc.line)):
        out.append("no " + _break_text(ref.breaks[key]))
    for label in sorted(set(p.recompiles) | set(ref.recompiles)):
        mine, theirs = p.recompiles.get(label, 0), ref.recompiles.get(label, 0)
        if mine != theirs:
            out.append(f"{label} recompiled {mine}× (the others {theirs}×)")
    for label in sorted(p.limits - ref.limits):
        out.append(f"{label} hit the recompile limit (runs eagerly from then on)")
    for label in sorted(ref.limits - p.limits):
        out.append(f"{label} did not hit the recompile limit")
    shared = sorted(set(p.compiles) & set(ref.compiles), key=_cid_order)
    for cid in shared:
        mine_c, ref_c = p.compiles[cid], ref.compiles[cid]
        if sigs[id(mine_c)][0] != sigs[id(ref_c)][0]:
            out.append(f"compile {cid} captured another graph ({_describe_graph(mine_c)}; the others {_describe_graph(ref_c)})")
        if sigs[id(mine_c)][1] != sigs[id(ref_c)][1]:
            names, ref_names = {k.name for k in mine_c.kernels}, {k.name for k in ref_c.kernels}
            bits = [f"+{_short_list(sorted(names - ref_names))}"] if names - ref_names else []
            bits += [f"−{_short_list(sorted(ref_names - names))}"] if ref_names - names else []
            out.append(f"compile {cid} generated other kernels ({' '.join(bits) or 'same names, different fused ops'})")
    extra = sorted(set(p.compiles) - set(ref.compiles), key=_cid_order)
    if extra:
        out.append(f"extra compile id{'s' if len(extra) > 1 else ''} {_short_list(extra, 6)}")
    missing = sorted(set(ref.compiles) - set(p.compiles), key=_cid_order)
    if missing:
        out.append(f"no compile id{'s' if len(missing) > 1 else ''} {_short_list(missing, 6)}")
    return out


def rank_behaviours(model: RunModel, profiles: dict[int, RankProfile] | None = None) -> list[Behaviour]:
    """The ranks grouped by what they compiled (breaks, recompiles per function, recompile
    limits, and per compile id the graph and kernels): the reference group first, then the
    others by their lowest rank. Compile time is not compared here (it is continuous: see
    ``divergence_report``'s ``compile_time``). Empty for fewer than 2 ranks.

    One pass over the ranks plus one comparison per group with the reference: 256
    identical ranks cost 256 signatures, not 256² pairwise comparisons."""
    profiles = rank_profiles(model) if profiles is None else profiles
    if len(profiles) < 2:
        return []
    sigs = {id(c): _compile_signature(c) for p in profiles.values() for c in p.compiles.values()}
    groups: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for r in sorted(profiles):
        groups[_signature(profiles[r], sigs)].append(r)
    ordered = sorted(groups.values(), key=lambda ranks: (-len(ranks), ranks[0]))
    ref_ranks = ordered[0]
    ref = profiles[ref_ranks[0]]
    out = [Behaviour(tuple(ref_ranks), True)]
    for ranks in sorted(ordered[1:], key=lambda rs: rs[0]):
        out.append(Behaviour(tuple(ranks), False, tuple(_differences(profiles[ranks[0]], ref, sigs))))
    return out


def _cid_order(cid: str) -> tuple[object, ...]:
    """ "0/0" < "0/1" < "1/0" < "10/0" < "0/0@r1"; compiled-autograd ids ("!0/1/0") after plain ones."""
    return compile_ids.order_key(cid)
