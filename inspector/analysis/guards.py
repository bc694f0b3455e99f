"""Guards of a cache entry as structured lines, and the diff between two cache entries.

Torch logs each cache entry's guards as a tree (``dynamo_cpp_guards_str``)::

    TREE_GUARD_MANAGER:
    +- RootGuardManager
    | +- GLOBAL_STATE: ___check_global_state() against {...}
    | +- GuardManager: source=L['x'], accessed_by=..., type=<class 'torch.Tensor'>, ...
    | | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, ..., size=[4, 8], stride=[8, 1])  # code  # t.py:8 in f
    +- LAMBDA_GUARD: 2 <= L['x'].size()[0] <= 4096  # code  # t.py:8 in f

``parse_guards`` turns the leaves into ``GuardLine``s (kind, expression, the source of the
manager they hang under, the user line); ``guard_diff`` pairs the lines of two entries by
what they guard (kind + source + the expression with its compared value blanked), so a
guard whose value changed is reported as *changed* (with field-level differences for
tensor checks) rather than as one removal plus one addition.

Public API: ``parse_guards(text)``, ``guard_lines(run, compile)``,
``guard_diff(run, compile_a, compile_b, ignore_ids=False) -> GuardDiff``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from dyn_inspect.inspector.model import CompileInfo
from dyn_inspect.inspector.run import Run

_LINE_RE = re.compile(r"^(?P<indent>[| ]*)\+- (?P<body>.*)$")
_MANAGER_RE = re.compile(r"^(?P<kind>\w*GuardManager)(?::\s*source=(?P<src>.*?)(?:, accessed_by=.*)?)?$")
_LEAF_RE = re.compile(r"^(?P<kind>[A-Z][A-Z0-9_]*): (?P<rest>.*)$", re.S)
_COMMENT_SPLIT_RE = re.compile(r"\s+# ")
_CALL_SRC_RE = re.compile(
    r"^(?:___check_obj_id|___check_type_id|check_tensor|___check_tensors|hasattr|len|isinstance|___dict_contains)\((?P<src>.+?),"
)
_CMP_RE = re.compile(r"^(?P<left>.+?) (?:==|!=|is not|is) ")
_NUM_RE = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_ID_RE = re.compile(r"(?<![\w.])\d{9,}(?![\w.])|0x[0-9a-fA-F]{6,}")


@dataclass(frozen=True)
class GuardLine:
    """One leaf guard of a cache entry."""

    kind: str  # TENSOR_MATCH, ID_MATCH, TYPE_MATCH, EQUALS_MATCH, LAMBDA_GUARD, GLOBAL_STATE, ...
    expr: str  # the check torch runs, without the trailing comment
    path: str = ""  # source of the GuardManager it hangs under ("L['x']"; "" at the root)
    depth: int = 0
    user_code: str | None = None  # the user line the guard was installed for
    where: str | None = None  # "t.py:8 in f" as torch prints it

    @property
    def anchor(self) -> str:
        """What the guard is about, without the value it compares to."""
        m = _CMP_RE.match(self.expr)
        if m:
            return m["left"]
        m = _CALL_SRC_RE.match(self.expr)
        if m:
            return f"{self.expr.split('(', 1)[0]}({m['src']})"
        return _NUM_RE.sub("#", _ID_RE.sub("#", self.expr))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.path, self.kind, self.anchor)

    def __str__(self) -> str:
        return f"{self.kind}: {self.expr}"


@dataclass(frozen=True)
class GuardChange:
    """The same guard (same kind, source and subject) with a different check."""

    before: GuardLine
    after: GuardLine
    fields: dict[str, tuple[str, str]] = field(default_factory=dict)  # tensor checks: name -> (before, after)


@dataclass
class GuardDiff:
    """Guards of cache entry ``b`` compared with those of ``a`` (usually ``b`` is the
    recompile): ``added`` are new in ``b``, ``removed`` only in ``a``."""

    a: str  # compile id
    b: str
    added: list[GuardLine] = field(default_factory=list)
    removed: list[GuardLine] = field(default_factory=list)
    changed: list[GuardChange] = field(default_factory=list)
    unchanged: int = 0
    problem: str | None = None  # set when one side has no recorded guards

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _split_comment(rest: str) -> tuple[str, str | None, str | None]:
    parts = _COMMENT_SPLIT_RE.split(rest.rstrip())
    expr = parts[0].strip()
    if len(parts) >= 3:
        return expr, parts[1].strip() or None, parts[-1].strip() or None
    if len(parts) == 2:
        return expr, None, parts[1].strip() or None
    return expr, None, None


def parse_guards(text: str) -> list[GuardLine]:
    """The leaf guards of one guard tree (``Guards.text``), in tree order. Lines that are
    not part of the tree (the header, ``Guard latency``) are ignored; never raises."""
    out: list[GuardLine] = []
    managers: dict[int, str] = {}  # depth -> source of the manager opened at that depth
    for raw in text.splitlines():
        m = _LINE_RE.match(raw)
        if m is None:
            continue
        depth = len(m["indent"]) // 2
        body = m["body"].strip()
        mgr = _MANAGER_RE.match(body)
        if mgr is not None:
            managers[depth] = mgr["src"] or ""
            for d in [d for d in managers if d > depth]:
                del managers[d]
            continue
        leaf = _LEAF_RE.match(body)
        if leaf is None:
            continue
        parent = max((d for d in managers if d < depth), default=None)
        path = managers.get(parent, "") if parent is not None else ""
        expr, code, where = _split_comment(leaf["rest"])
        out.append(GuardLine(leaf["kind"], expr, path, depth, code, where))
    return out


def _top_level_split(args: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in args:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return parts


def tensor_fields(expr: str) -> dict[str, str]:
    """``check_tensor(L['x'], Tensor, DispatchKeySet(...), torch.float32, device=None,
    requires_grad=False, size=[4, 8], stride=[8, 1])`` → {source, dispatch_keys, dtype,
    device, requires_grad, size, stride}."""
    if not expr.startswith("check_tensor(") or not expr.endswith(")"):
        return {}
    out: dict[str, str] = {}
    positional = ["source", "type", "dispatch_keys", "dtype"]
    for part in _top_level_split(expr[len("check_tensor(") : -1]):
        name, eq, value = part.partition("=")
        if eq and re.fullmatch(r"\w+", name.strip()):
            out[name.strip()] = value.strip()
        elif positional:
            out[positional.pop(0)] = part
    return out


def _field_changes(a: GuardLine, b: GuardLine) -> dict[str, tuple[str, str]]:
    fa, fb = tensor_fields(a.expr), tensor_fields(b.expr)
    return {k: (fa.get(k, ""), fb.get(k, "")) for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)}


def _norm(line: GuardLine, ignore_ids: bool) -> str:
    return _ID_RE.sub("<id>", line.expr) if ignore_ids else line.expr


def diff_lines(
    a: list[GuardLine], b: list[GuardLine], ignore_ids: bool = False
) -> tuple[list[GuardLine], list[GuardLine], list[GuardChange], int]:
    """(added, removed, changed, unchanged) between two lists of guard lines."""
    by_key_a: dict[tuple[str, str, str], list[GuardLine]] = defaultdict(list)
    by_key_b: dict[tuple[str, str, str], list[GuardLine]] = defaultdict(list)
    for g in a:
        by_key_a[g.key].append(g)
    for g in b:
        by_key_b[g.key].append(g)
    added: list[GuardLine] = []
    removed: list[GuardLine] = []
    changed: list[GuardChange] = []
    unchanged = 0
    for key in dict.fromkeys([*by_key_a, *by_key_b]):
        left, right = list(by_key_a.get(key, [])), list(by_key_b.get(key, []))
        # Identical checks first, then pair what is left in order: same subject, new value.
        for g in list(left):
            match = next((h for h in right if _norm(h, ignore_ids) == _norm(g, ignore_ids)), None)
            if match is not None:
                left.remove(g)
                right.remove(match)
                unchanged += 1
        # the longer side's rest is added/removed below
        for before, after in zip(left, right, strict=False):
            changed.append(GuardChange(before, after, _field_changes(before, after)))
        removed.extend(left[len(right) :])
        added.extend(right[len(left) :])
    return added, removed, changed, unchanged


def find_compile(run: Run, compile_id: CompileInfo | str, log: str | None = None) -> CompileInfo | None:
    """A compile by id ("0/1"), in ``log`` when given, else in the first log that has it."""
    if isinstance(compile_id, CompileInfo):
        return compile_id
    cid = compile_id.strip("[]")
    if log is not None:
        return run.model.compiles.get((log, cid))
    return next((c for (lg, c_id), c in run.model.compiles.items() if c_id == cid), None)


def guard_lines(run: Run, compile: CompileInfo) -> list[GuardLine]:
    """The parsed guards of one compile ([] when none were recorded)."""
    if compile.guards is None:
        return []
    return parse_guards(run.blob_text(compile.guards.text))


def guard_diff(run: Run, compile_a: CompileInfo | str, compile_b: CompileInfo | str, ignore_ids: bool = False) -> GuardDiff:
    """The guards of ``compile_b`` compared with ``compile_a`` (two cache entries of one
    frame, e.g. ``0/0`` and its recompile ``0/1``). ``ignore_ids`` treats object ids and
    addresses as equal — use it when comparing entries from different processes, where
    ids always differ; within one process an id change is real (a new object)."""
    a = find_compile(run, compile_a)
    b = find_compile(run, compile_b, log=a.log if a is not None else None) or find_compile(run, compile_b)
    a_id = a.cid if a is not None else str(compile_a)
    b_id = b.cid if b is not None else str(compile_b)
    missing = [cid for cid, c in ((a_id, a), (b_id, b)) if c is None]
    if missing:
        return GuardDiff(a_id, b_id, problem=f"no compile {' or '.join(missing)} in this run")
    assert a is not None and b is not None
    no_guards = [c.cid for c in (a, b) if c.guards is None]
    lines_a, lines_b = guard_lines(run, a), guard_lines(run, b)
    added, removed, changed, unchanged = diff_lines(lines_a, lines_b, ignore_ids)
    problem = None
    if no_guards:
        problem = f"no guards recorded for {', '.join(no_guards)} (a compile that produced no cache entry)"
    return GuardDiff(a_id, b_id, added, removed, changed, unchanged, problem)
