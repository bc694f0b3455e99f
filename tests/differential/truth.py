"""Both sides of the differential, reduced to the same comparable shape.

``torch_side`` reads a plain run: torch's own log (``TORCH_LOGS=graph_breaks,recompiles,guards``,
plus the recompile-limit warning torch always prints) and the JSON that
``ground_truth.py`` dumped at exit (counters, compilation metrics, resets, output code).
``ours`` reads a recorded run through dyn-inspect's CLI JSON (``breaks``, ``recompiles``,
``summary``, ``kernels``, ``shapes``). Both become a ``Facts``; the tests compare them field by field.

Paths are made comparable by resolving them against the program's working directory
(torch prints the path as the program was started: ``breaks.py``; dyn-inspect keeps it
absolute) and shown relative to it when inside it.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# `V1201 09:53:23.525000 16116 torch/_dynamo/x.py:5124] [0/0] [__graph_breaks] message`;
# the compile id is missing outside a compile, and torchrun adds `[rank0]:` in front.
LOG_LINE = re.compile(
    r"^(?:\[rank\d+\]:)?(?P<head>[VIWEDC]\d{4} [\d:.]+ +\d+ \S+:\d+\]) (?:\[(?P<cid>[^\]\s]+)\] )?(?:\[__(?P<artifact>\w+)\] )?(?P<msg>.*)$"
)
BREAK_AT = re.compile(r"^Graph break (?:\(user stack suppressed due to duplicate graph break\) )?in user code at (?P<file>.+):(?P<line>\d+)$")
GB_ID = re.compile(r"/gb/gb(\d{4})\.html")
RECOMPILING = re.compile(r"^Recompiling function (?P<name>\S+) in (?P<file>.+):(?P<line>\d+)$")
LIMIT_HIT = re.compile(r"^torch\._dynamo hit config\.(?P<kind>\w+) \((?P<value>\d+)\)$")
LIMIT_FUNCTION = re.compile(r"^\s*function: '(?P<name>[^']+)' \((?P<file>.+):(?P<line>\d+)\)$")
# a guard failure as torch logs it: `- 0/0: tensor 'x' size mismatch ...`
REASON_ITEM = re.compile(r"^\s*- (?:(?P<entry>\d+/\d+): )?(?P<text>.*)$")


@dataclass(frozen=True, order=True)
class BreakSite:
    """Where a break happened and what it was: the gb id and its type as torch pairs them.
    When one break causes another (torch: "While handling this graph break, another graph
    break occurred", e.g. an ``.item()`` inside a loop -> "graph break in loop"), the break
    is the last of the chain: the one that decided what Dynamo did."""

    file: str
    line: int
    gb_id: str | None
    type: str | None = None


@dataclass(frozen=True, order=True)
class FrameKey:
    name: str
    file: str
    line: int


@dataclass(frozen=True, order=True)
class Reason:
    """One failed guard of one recompile: the cache entry it names and torch's text
    (without torch's trailing ``# user code`` comment, which dyn-inspect keeps apart)."""

    entry: str | None
    text: str


@dataclass(frozen=True, order=True)
class LimitHit:
    kind: str
    value: int
    frame: FrameKey


@dataclass
class Facts:
    """What one side says happened in one program."""

    breaks: Counter[BreakSite] = field(default_factory=Counter)  # site -> hits
    # frame -> one entry per recompile, in order: its failed guards
    recompiles: dict[FrameKey, list[list[Reason]]] = field(default_factory=dict)
    limit_hits: list[LimitHit] = field(default_factory=list)
    compiles: int = 0
    frames: int = 0
    graphs: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    kernels: Counter[str] = field(default_factory=Counter)  # kernel name -> graphs defining it
    failures: list[str] = field(default_factory=list)  # compile failures: "file:line" of the user line
    exit_code: int | None = None
    # compiles with a dynamic dim ("0/1#0": compile id, then its ordinal among compiles of
    # that id, as ids restart at a reset) -> each dim of each such input -> "2..4096" / "=3"
    size_bounds: dict[str, dict[str, str]] = field(default_factory=dict)


def norm_path(path: str, cwd: Path) -> str:
    p = Path(path)
    if not p.is_absolute():
        p = cwd / p
    try:
        p = p.resolve()
    except OSError:
        pass
    try:
        return str(p.relative_to(cwd.resolve()))
    except ValueError:
        return str(p)


def strip_user_comment(text: str) -> str:
    """Torch ends many guard texts with ``  # x.size()[0] ... in f at file.py:7``."""
    return re.sub(r"\s+#\s.*$", "", text).strip()


# ---------------------------------------------------------------------------------------
# torch's side
# ---------------------------------------------------------------------------------------


@dataclass
class _Record:
    head: str
    cid: str | None
    artifact: str | None
    lines: list[str]


def log_records(stderr: str) -> list[_Record]:
    """Group torch's log lines into records: one per log call (its lines share a header)."""
    records: list[_Record] = []
    for raw in stderr.splitlines():
        m = LOG_LINE.match(raw)
        if not m:
            continue
        msg = m["msg"]
        opener = BREAK_AT.match(msg) or RECOMPILING.match(msg) or LIMIT_HIT.match(msg)
        last = records[-1] if records else None
        if last is not None and not opener and last.head == m["head"] and last.artifact == m["artifact"]:
            last.lines.append(msg)
        else:
            records.append(_Record(m["head"], m["cid"], m["artifact"], [msg]))
    return records


def gb_pairs(lines: list[str]) -> list[tuple[str, str]]:
    """(gb id, type) for each break named in one graph-break message, in order: the type
    is the line above its "  Explanation:", the id the gbNNNN link that follows."""
    pairs: list[tuple[str, str]] = []
    kind: str | None = None
    previous = ""
    for line in lines:
        if line.startswith("  Explanation:"):
            kind = previous.removeprefix("Graph Break Reason: ").strip()
        elif (g := GB_ID.search(line)) and kind is not None:
            pairs.append((f"GB{g.group(1)}", kind))
            kind = None
        if line.strip():
            previous = line
    return pairs


def torch_side(truth_json: Path, stderr: str, cwd: Path, returncode: int | None) -> Facts:
    data = json.loads(truth_json.read_text())
    facts = Facts(exit_code=returncode)
    break_cids: set[str] = set()  # compiles whose failure torch handled as a graph break
    for rec in log_records(stderr):
        first = rec.lines[0]
        if m := BREAK_AT.match(first):
            if rec.cid:
                break_cids.add(rec.cid)
            pairs = gb_pairs(rec.lines)
            gb, kind = pairs[-1] if pairs else (None, None)
            facts.breaks[BreakSite(norm_path(m["file"], cwd), int(m["line"]), gb, kind)] += 1
        elif m := RECOMPILING.match(first):
            key = FrameKey(m["name"], norm_path(m["file"], cwd), int(m["line"]))
            # Torch prefixes every line of the failures with "- "; a guard failure starts
            # with its cache entry's id ("- 0/0: ..."), the lines after it (its user stack
            # trace) continue it. The guard's text is its first line.
            reasons = []
            for line in rec.lines[1:]:
                if "triggered by the following guard failure" in line:
                    continue
                r = REASON_ITEM.match(line)
                if r and (r["entry"] or not reasons):
                    reasons.append(Reason(r["entry"], strip_user_comment(r["text"])))
            facts.recompiles.setdefault(key, []).append(reasons)
        elif m := LIMIT_HIT.match(first):
            fn = next((f for line in rec.lines[1:] if (f := LIMIT_FUNCTION.match(line))), None)
            if fn is not None:
                frame = FrameKey(fn["name"], norm_path(fn["file"], cwd), int(fn["line"]))
                facts.limit_hits.append(LimitHit(m["kind"], int(m["value"]), frame))

    # Compiles and frames from the compilation metrics torch records per compile attempt.
    # Frame ids and compile ids restart at each torch._dynamo.reset(): count them per epoch.
    resets = data.get("resets", [])
    compiles: set[tuple[int, str]] = set()
    frames: set[tuple[int, str]] = set()
    for i, m in enumerate(data["metrics"]):
        cid = m.get("compile_id")
        if not cid:
            continue
        epoch = sum(1 for r in resets if r <= i)
        # "0/1" -> frame 0, attempt 1; restarts ("0/1_1") are the same compile
        base = cid.split("_")[0]
        # The call the recompile limit refused gets a compile id and a metrics record
        # (failed, "Dynamo recompile limit exceeded"), but torch compiled nothing for it: it
        # is a limit hit (compared as such), neither a compile (torch's frames.ok leaves it
        # out) nor a compile failure; nor is a failure torch logged as a graph break (a break
        # in a loop skips the frame: it runs eagerly, nothing raised)
        limit = (m.get("fail_reason") or "").startswith("Dynamo recompile limit exceeded")
        if not limit:
            compiles.add((epoch, base))
        frames.add((epoch, base.split("/")[0]))
        if m.get("fail_type") and not limit and cid not in break_cids:
            filename = m.get("fail_user_frame_filename")
            lineno = m.get("fail_user_frame_lineno")
            if not filename:
                # a failure outside the traced user code (the backend raising on a captured
                # graph): torch names only the frame that failed
                filename, lineno = m.get("co_filename"), m.get("co_firstlineno")
            facts.failures.append(f"{norm_path(filename, cwd)}:{lineno}" if filename else "?")
    facts.compiles = len(compiles)
    facts.frames = len(frames)
    counters = data["counters"]
    facts.graphs = counters.get("stats", {}).get("unique_graphs", 0)
    facts.cache_hits = counters.get("inductor", {}).get("fxgraph_cache_hit", 0)
    facts.cache_misses = counters.get("inductor", {}).get("fxgraph_cache_miss", 0)
    for load in data["loads"]:
        facts.kernels.update(load["kernels"])
    facts.size_bounds = tree_size_bounds(stderr)
    return facts


# `+- TENSOR_MATCH: check_tensor(L['x'], Tensor, ..., size=[None, 3], stride=[3, 1])  # ...`
TREE_TENSOR = re.compile(r"\+- TENSOR_MATCH: check_tensor\((?P<src>[^,]+), .*?size=\[(?P<sizes>[^\]]*)\]")
# `+- LAMBDA_GUARD: 2 <= L['x'].size()[0] <= 4096  # ...`
TREE_LAMBDA = re.compile(r"\+- LAMBDA_GUARD: (?P<expr>.*?)(?:  #.*)?$")
SIZE_TERM = re.compile(r"^(?P<src>[LG]\[\S*?\])\.size\(\)\[(?P<dim>\d+)\]$")


def tree_size_bounds(stderr: str) -> dict[str, dict[str, str]]:
    """From the guard trees torch printed (``TORCH_LOGS=guards``): for each compile with a
    dynamic dim (``None`` in a TENSOR_MATCH's sizes), every dim of those inputs with the
    bounds that the tree's LAMBDA_GUARDs comparing that one size with a number put on it."""
    trees: list[tuple[str, list[str]]] = []
    for raw in stderr.splitlines():
        m = LOG_LINE.match(raw)
        if not m or m["artifact"] != "guards" or not m["cid"]:
            continue
        cid = m["cid"].split("_")[0]
        if m["msg"].startswith("+- RootGuardManager"):
            trees.append((cid, []))
        elif trees and trees[-1][0] == cid:
            trees[-1][1].append(m["msg"])
    out: dict[str, dict[str, str]] = {}
    seen: Counter[str] = Counter()
    for cid, lines in trees:
        low: dict[str, int] = {}
        high: dict[str, int | None] = {}
        for line in lines:
            if t := TREE_TENSOR.search(line):
                sizes = [x.strip() for x in t["sizes"].split(",") if x.strip()]
                if "None" not in sizes:
                    continue
                for dim, size in enumerate(sizes):
                    key = f"{t['src']}.size()[{dim}]"
                    low[key], high[key] = (0, None) if size == "None" else (int(size), int(size))
        dynamic = {k for k in low if high[k] is None}
        for line in lines:
            if not (g := TREE_LAMBDA.search(line)):
                continue
            terms = re.split(r" (<=|>=|==|<|>) ", g["expr"].strip())
            for i in range(1, len(terms) - 1, 2):
                a, op, b = terms[i - 1], terms[i], terms[i + 1]
                if SIZE_TERM.match(b) and re.fullmatch(r"-?\d+", a):
                    a, b, op = b, a, {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(op, op)
                if not (SIZE_TERM.match(a) and a in dynamic and re.fullmatch(r"-?\d+", b)):
                    continue
                n = int(b)
                if op in (">=", ">", "=="):
                    low[a] = max(low[a], n + 1 if op == ">" else n)
                if op in ("<=", "<", "=="):
                    top = n - 1 if op == "<" else n
                    cur = high[a]
                    high[a] = top if cur is None else min(cur, top)
        if not low:
            continue
        key = f"{cid}#{seen[cid]}"
        seen[cid] += 1
        out[key] = {src: _bounds_text(low[src], high[src]) for src in low}
    return out


def _bounds_text(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}.."
    return f"={low}" if low == high else f"{low}..{high}"


# ---------------------------------------------------------------------------------------
# dyn-inspect's side
# ---------------------------------------------------------------------------------------


def cli_json(dyn_inspect: Path, command: str, run_dir: Path) -> dict:
    proc = subprocess.run([str(dyn_inspect), command, "--json", str(run_dir)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"dyn-inspect {command} --json exited {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


@dataclass
class Ours:
    """dyn-inspect's CLI JSON for one run, and the Facts read from it."""

    breaks: dict
    recompiles: dict
    summary: dict
    kernels: dict
    shapes: dict
    facts: Facts


def ours(dyn_inspect: Path, run_dir: Path, cwd: Path) -> Ours:
    breaks = cli_json(dyn_inspect, "breaks", run_dir)
    recompiles = cli_json(dyn_inspect, "recompiles", run_dir)
    summary = cli_json(dyn_inspect, "summary", run_dir)
    kernels = cli_json(dyn_inspect, "kernels", run_dir)
    shapes = cli_json(dyn_inspect, "shapes", run_dir)
    facts = Facts(exit_code=summary.get("exit_code"))
    for b in breaks["breaks"]:
        # torch logs the frame's own location (`loc`), which for a break in a library is
        # the library line; dyn-inspect adds the user line separately (user_frame).
        loc = b["loc"]
        facts.breaks[BreakSite(norm_path(loc["file"], cwd), int(loc["line"]), b.get("gb_id"), b.get("type"))] += int(b["count"])
    for frame in recompiles["frames"]:
        key = FrameKey(frame["function"], norm_path(frame["file"], cwd), int(frame["line"]))
        for entry in frame["timeline"]:
            if not entry["failures"] and entry["index"] == 0:
                continue  # the first compile of the frame: not a recompile
            reasons = [Reason(f.get("entry"), strip_user_comment(f["text"])) for f in entry["failures"]]
            facts.recompiles.setdefault(key, []).append(reasons)
        if frame.get("limit_reached"):
            # the limit in force when the frame hit it (torch prints that value)
            facts.limit_hits.append(LimitHit("recompile_limit", int(frame.get("recompile_limit") or 0), key))
    facts.compiles = summary["compiles"]
    facts.frames = summary["frames"]
    facts.graphs = summary["graphs"]
    cache = summary.get("cache") or {}
    facts.cache_hits = cache.get("fx_graph_hits", 0)
    facts.cache_misses = cache.get("fx_graph_misses", 0)
    for k in kernels["kernels"]:
        facts.kernels[k["name"]] += 1
    for f in summary.get("compile_failures", []) or []:
        loc = f.get("user_loc") or {}
        where = f"{norm_path(loc['file'], cwd)}:{loc['line']}" if loc.get("file") else "?"
        facts.failures.extend([where] * int(f.get("count", 1)))
    seen: Counter[str] = Counter()
    for c in shapes["compiles"]:
        if not c["accepts"]:
            continue
        cid = c["compile_id"].split("@")[0]  # ("0/1@r1": after a reset; torch's log has no epoch)
        facts.size_bounds[f"{cid}#{seen[cid]}"] = {d["source"]: _bounds_text(d["low"], d["high"]) for d in c["accepts"]}
        seen[cid] += 1
    return Ours(breaks, recompiles, summary, kernels, shapes, facts)
