"""Root causes: the findings of a run grouped by what causes them, each with one fix.

A changing batch size recompiles the compiled function *and* every resume function and
helper frame that the change flows into: torch reports five recompiles, each naming a
different local (``x``, ``h``, ``___stack0``), and suggests a fix for each. They have one
cause and one fix — mark the dim dynamic where the batch is made. ``recompile_causes``
groups recompiles whose guard failures say the same thing (same kind, dim and
expected → actual values) in the same call (consecutive in capture order), takes the
outermost frame whose failing guard names one of its own parameters as the root, and
traces that parameter to the caller's variable and the line that made it (the compile's
own stack names the calling line; the caller's source says which argument it passed and
where that variable was last assigned).

A fix is offered only where it is known to be right: a dim change (``size`` guard) of a
tensor the user passes in. Other groups say what changed and suggest nothing specific.
Graph breaks are causes too (one per break site), with their time per step when the run was
profiled (``--profile``, analysis/step_costs.py). ``causes(model)`` returns both, most
expensive first (recompiles, then compile time, then time per step, then graph fragments).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dyn_inspect.engine import compile_ids
from dyn_inspect.engine.normalizers.locations import is_library_file
from dyn_inspect.engine.schema import Loc
from dyn_inspect.inspector.analysis.guard_failures import GuardFailure
from dyn_inspect.inspector.analysis.messages import label
from dyn_inspect.inspector.analysis.recompiles import dynamic_dims_of, frames_with_recompiles, recompile_timeline
from dyn_inspect.inspector.analysis.step_costs import BreakCost, GuardCost, break_costs, guard_cost
from dyn_inspect.inspector.analysis.suggestions import LR_SOURCE_RE, mark_dynamic_code
from dyn_inspect.inspector.locations import def_file_line, def_line, file_line, functions_in, parsed_source
from dyn_inspect.inspector.model import BreakGroup, CompileInfo, FrameInfo, RunModel
from dyn_inspect.inspector.source_files import read_source
from dyn_inspect.inspector.units import time_text


def one_line(code: str) -> str:
    """Code of several lines on one (``a; b``), as the reports print a fix or a suggestion."""
    return "; ".join(code.splitlines())


@dataclass(frozen=True)
class Fix:
    """An edit that removes the cause: insert ``code`` (indented) on a new line after
    ``after_line`` of ``file`` — right after the variable is made."""

    code: str
    file: str
    after_line: int
    indent: str
    why: str  # "where `x` is made"
    keeps_behaviour: bool = True
    # a fix that rewrites part of a line instead of inserting one (a tensor lr): the
    # recorded text it replaces on line ``after_line`` and what it becomes
    replaces: str | None = None
    replacement: str | None = None

    @property
    def text(self) -> str:
        """What is inserted: each line of ``code`` indented (several mark_dynamic lines)."""
        return "".join(self.indent + line + "\n" for line in self.code.splitlines())

    @property
    def one_line(self) -> str:
        """``code`` on one line (``a; b``), as the reports print it."""
        return one_line(self.code)

    @property
    def site_line(self) -> int:
        """The line the fix is about: the statement that makes the variable, or the call
        it goes before."""
        return self.after_line + 1 if self.why.startswith("before the call") else self.after_line


def describe_fix(fix: Fix, gap: str = " ") -> str:
    """A fix as the reports print it: ``torch._dynamo.mark_dynamic(x, 0) after train.py:46
    (where `x` is made)``. ``gap`` goes between the code and "after" (``summary`` lines
    them up with two spaces)."""
    if fix.replaces is not None:
        return f"{fix.one_line}{gap}at {file_line(fix.file, fix.after_line)} ({fix.why}: `{fix.replaces}` → `{fix.replacement}`)"
    return f"{fix.one_line}{gap}after {file_line(fix.file, fix.after_line)} ({fix.why})"


@dataclass
class Cause:
    kind: Literal["recompile", "graph_break"]
    title: str
    detail: str
    recompiles: list[CompileInfo] = field(default_factory=list)  # the compiles it caused
    frames: list[FrameInfo] = field(default_factory=list)
    sites: list[Loc] = field(default_factory=list)  # where it shows: def lines of frames, break lines
    fix: Fix | None = None
    break_group: BreakGroup | None = None
    values: list[str] = field(default_factory=list)  # for a dim: the sizes seen, in order
    step_cost: BreakCost | None = None  # a break's time per profiled step (``--profile``)
    guard_cost: GuardCost | None = None  # a recompile's frames' guard checks per profiled step

    @property
    def recompile_count(self) -> int:
        return len(self.recompiles)

    @property
    def no_fix(self) -> str | None:
        """What every face says where a recompile cause has no fix (None: it has one, or it
        is a break site, whose headline already says what torch suggests)."""
        if self.fix is not None or self.kind != "recompile":
            return None
        return "no fix known to be right for this change: see `dyn-inspect recompiles`"

    @property
    def compile_time_s(self) -> float:
        if self.break_group is not None:
            return 0.0
        return sum(c.compile_time_s for c in self.recompiles)

    @property
    def fragments(self) -> int:
        return self.break_group.count if self.break_group is not None else 0

    @property
    def step_us(self) -> float:
        """Time per profiled step it costs (0 without ``--profile``): a break's eager code,
        a recompile's frames' guard checks."""
        if self.step_cost is not None:
            return self.step_cost.us
        return self.guard_cost.us if self.guard_cost is not None else 0.0

    @property
    def run_time(self) -> str | None:
        """The sentence every face shows after "at run time:" (None without ``--profile``)."""
        if self.step_cost is not None:
            return self.step_cost.text
        return self.guard_cost.text if self.guard_cost is not None else None

    @property
    def cost_label(self) -> str:
        """The cost in a few words, as the cause lists show it: "3 recompiles", "110 µs/step",
        "2 hits"."""
        if self.kind == "recompile":
            return f"{self.recompile_count} recompile{'s' if self.recompile_count != 1 else ''}"
        if self.step_cost is not None:
            return f"{time_text(self.step_cost.us)}/step"
        return f"{self.fragments} hit{'s' if self.fragments != 1 else ''}"

    @property
    def cost(self) -> tuple[int, float, float, int]:
        return (self.recompile_count, self.compile_time_s, self.step_us, self.fragments)


# -- recompiles ------------------------------------------------------------------------------


def _signature(f: GuardFailure) -> tuple[object, ...]:
    """What the failure says changed, without the local's name (it differs per frame)."""
    if f.kind in ("size", "stride", "dtype", "device", "rank", "requires_grad", "dispatch_key"):
        return (f.kind, f.dim, f.expected, f.actual)
    return (f.kind, f.source, f.expected, f.actual)


@dataclass
class _Recompile:
    frame: FrameInfo
    compile: CompileInfo
    failure: GuardFailure

    @property
    def t(self) -> float:
        c = self.compile
        return c.start.t if c.start is not None and c.start.t else (c.capture.t if c.capture else 0.0)


def recompile_causes(model: RunModel, logs: Collection[str] | None = None) -> list[Cause]:
    """The run's recompile root causes; ``logs``: only those processes' (a cause never
    spans processes, and a summary of a 256-rank job needs the causes of the ranks it
    prints, not 256 copies of one)."""
    items: list[_Recompile] = []
    for frame in frames_with_recompiles(model):
        if logs is not None and frame.log not in logs:
            continue
        for entry in recompile_timeline(model, frame):
            if entry.is_recompile and entry.failures:
                items.append(_Recompile(frame, entry.compile, entry.failures[0]))
    compiles = [c for c in model.compiles_in_order() if logs is None or c.log in logs]
    order = {id(c): i for i, c in enumerate(compiles)}
    items.sort(key=lambda r: order.get(id(r.compile), 0))
    # First compiles of resume functions may sit between a call's recompiles (a frame
    # that only now broke the graph); any other compile ends the call.
    between_ok = {id(c) for c in compiles if c.capture and (c.capture.co_name or "").startswith("torch_dynamo_resume_in_")}
    groups: list[list[_Recompile]] = []
    for item in items:
        # Same process, same change, and nothing else compiled since the group's last
        # recompile: the change flowing through one call's frames.
        last = groups[-1] if groups else None
        if (
            last is not None
            and last[-1].compile.log == item.compile.log
            and _signature(last[-1].failure) == _signature(item.failure)
            and all(r.frame is not item.frame for r in last)
            and all(
                id(c) in between_ok or c.log != item.compile.log
                for c in compiles[order[id(last[-1].compile)] + 1 : order[id(item.compile)]]
            )
        ):
            last.append(item)
        else:
            groups.append([item])
    # The same change through the same frames again later is the same cause.
    merged: dict[tuple[str, str, int | None, str], list[_Recompile]] = {}
    for group in groups:
        f = group[0].failure
        # ... also with other values: a dtype that takes Float, Double, Half is one cause
        merged.setdefault((group[0].compile.log, f.kind, f.dim, group[0].frame.key), []).extend(group)
    return [_cause(group, model) for group in merged.values()]


def _cause(group: list[_Recompile], model: RunModel) -> Cause:
    f = group[0].failure
    frames = list({id(r.frame): r.frame for r in group}.values())
    root = next((r for r in group if not r.frame.is_resume_function and _param_of(r.frame, r.failure.source) is not None), None)
    shown = root or group[0]
    name = shown.failure.source or "a value"
    others = len(frames) - 1
    head = frames[0]
    # file:line of the frame: two functions of one name read alike without it
    at = def_file_line(head.filename, head.firstlineno)
    where = f"{head.name} ({at})" + (f" and {others} more frame{'s' if others != 1 else ''}" if others else "")
    call = _call_site(shown.compile) or _call_site(head.compiles[0])
    if is_library_file(head.filename) and call is not None:
        where += f", called from {file_line(call.file, call.line)}"
    epoch = compile_ids.epoch_of(group[0].compile.cid)
    if epoch:
        # the same function recompiling the same way before and after a reset: two causes
        # that would otherwise read identically
        where += f", after torch._dynamo.reset() #{epoch}"
    values: list[str] = []
    for r in group:
        for v in (r.failure.expected, r.failure.actual):
            if v is not None and v not in values:
                values.append(v)
    n = len(group)
    plural = "s" if n != 1 else ""
    if f.kind == "size" and f.dim is not None:
        what = f"`{name}.shape[{f.dim}]` takes {', '.join(values)}"
    elif f.kind == "attribute" and LR_SOURCE_RE.search(f.source or ""):
        # torch's optimizer step guards on the float lr: say what the user changed
        what = f"the optimizer's float lr changes (compiled for {f.expected or '?'})"
    elif len(values) > 2:
        what = f"{f.kind} of `{name}` takes {', '.join(values)}"
    elif f.expected is not None and f.actual is not None:
        what = f"{f.kind} of `{name}` changes ({f.expected} → {f.actual})"
    else:
        what = f"guard `{f.text}` fails"
    fix = _mark_dynamic_fix(shown, model) if f.kind == "size" and root is not None else None
    if fix is None and f.kind == "attribute" and LR_SOURCE_RE.search(f.source or ""):
        fix = _tensor_lr_fix(group)
    detail = f"{n} recompile{plural} in {where}"
    limit = _limit_hit(group, model)
    if limit is not None:
        # the costlier half of the story: from then on, calls that fail the guards run eagerly
        detail += f"; then the recompile limit ({limit}): later calls that fail its guards run eagerly"
    if fix is not None:
        detail += f"; 1 fix: `{fix.one_line}` at {Path(fix.file).name}:{fix.after_line} ({fix.why})"
    sites = [Loc(file=fr.filename, line=def_line(fr.filename, fr.firstlineno), name=fr.name) for fr in frames]
    if call is not None and all(is_library_file(fr.filename) for fr in frames):
        # a library's frame (a Hugging Face model's forward): the user's call is the site
        sites = [call, *sites]
    return Cause(
        kind="recompile",
        title=f"{what} → {n} recompile{plural}",
        detail=detail,
        recompiles=[r.compile for r in group],
        frames=frames,
        sites=sites,
        fix=fix,
        values=values,
        guard_cost=guard_cost(model, frames),
    )


_LIMIT_RE = re.compile(r"currently set to (\d+)")


def _limit_hit(group: list[_Recompile], model: RunModel) -> str | None:
    """The recompile limit a frame of the group hit (its value as torch gave it, else
    "hit"), or None."""
    frames = {compile_ids.frame_of(r.compile.cid) for r in group}
    for _, event in model.recompile_limits:
        if event.cid is not None and compile_ids.frame_of(event.cid) in frames:
            m = _LIMIT_RE.search(event.reason or "")
            return m[1] if m else "hit"
    return None


# -- tracing a parameter to the caller's variable ------------------------------------------------


def _tree(path: str) -> ast.Module | None:
    return parsed_source(path)


_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _function_at(path: str, line: int) -> _Function | None:
    best = None
    for node in functions_in(path):  # (parsed and walked once per file version)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if start <= line <= (node.end_lineno or node.lineno) and (best is None or start >= best[0]):
                best = (start, node)
    return best[1] if best else None


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return names


def _param_index(frame: FrameInfo, source: str | None) -> int | None:
    if not source or not source.isidentifier():
        return None
    fn = _function_at(frame.filename, def_line(frame.filename, frame.firstlineno))
    if fn is None:
        return None
    names = _params(fn)
    kwonly = [a.arg for a in fn.args.kwonlyargs]
    if source in names:
        return names.index(source)
    if source in kwonly:
        return -1  # keyword-only: matched by name at the call
    return None


def _call_site(c: CompileInfo) -> Loc | None:
    """The user line that called the compiled frame (from the compile's own stack)."""
    if c.start is None or len(c.start.stack) < 2:
        return None
    return next((loc for loc in reversed(c.start.stack[:-1]) if not is_library_file(loc.file)), None)


def _argument_name(call_line: Loc, index: int, param: str, arity: int, callee: str | None = None) -> str | None:
    """The caller's variable passed as the frame's parameter on ``call_line``: the call
    there whose positional arity matches the frame's (the one calling ``callee`` by name
    when several fit), or that passes ``param=`` by name."""
    tree = _tree(call_line.file)
    if tree is None:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= call_line.line <= (n.end_lineno or n.lineno)]
    for call in calls:
        for kw in call.keywords:
            if kw.arg == param and isinstance(kw.value, ast.Name):
                return kw.value.id
    fitting = [c for c in calls if len(c.args) == arity and not any(isinstance(a, ast.Starred) for a in c.args)]
    named = [c for c in fitting if isinstance(c.func, ast.Name) and c.func.id == callee]
    if len(named) == 1:  # `print(f"{fn(x)}")`: the call of the function itself, not print's
        fitting = named
    if len(fitting) == 1 and 0 <= index < len(fitting[0].args):
        arg = fitting[0].args[index]
        if isinstance(arg, ast.Name):
            return arg.id
    return None


def _assigned_at(path: str, before_line: int, name: str) -> ast.stmt | None:
    """The last statement before ``before_line`` in the same function that binds ``name``."""
    fn = _function_at(path, before_line)
    tree = _tree(path)
    scope = fn if fn is not None else tree
    if scope is None:
        return None
    best: ast.stmt | None = None
    for node in ast.walk(scope):
        if not isinstance(node, ast.stmt):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            targets = [node.target]
        if not targets or (node.end_lineno or node.lineno) >= before_line:
            continue
        bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if name in bound and (best is None or node.lineno > best.lineno):
            best = node
    return best


NEARBY = 30  # lines searched on each side for a recorded line that moved


def _now(call: Loc) -> Loc:
    """The recorded call line where it is in the file now: the source may have been edited
    since the run (a fix inserted above it, before ``verify`` reads this run again)."""
    if not call.code:
        return call
    lines = _lines(call.file)
    want = call.code.strip()
    if 1 <= call.line <= len(lines) and lines[call.line - 1].strip() == want:
        return call
    lo, hi = max(0, call.line - 1 - NEARBY), min(len(lines), call.line + NEARBY)
    near = [i + 1 for i in range(lo, hi) if lines[i].strip() == want]
    if len(near) != 1:
        return call
    return Loc(file=call.file, line=near[0], name=call.name, code=call.code)


def _param_of(frame: FrameInfo, source: str | None) -> tuple[str, int] | None:
    """(parameter name, positional index or -1) that a guard source names in ``frame``'s
    function: ``x`` → ("x", 0); ``kwargs['input_ids']`` of ``def f(*args, **kwargs)`` →
    ("input_ids", -1) (passed by keyword)."""
    index = _param_index(frame, source)
    if index is not None and source is not None:
        return source, index
    m = _KWARG_SOURCE.match(source or "")
    if m is None:
        return None
    fn = _function_at(frame.filename, def_line(frame.filename, frame.firstlineno))
    if fn is None or fn.args.kwarg is None or fn.args.kwarg.arg != m["base"] or not m["key"].isidentifier():
        return None
    return m["key"], -1


_KWARG_SOURCE = re.compile(r"""^(?P<base>[A-Za-z_]\w*)\[\s*['"](?P<key>[^'"]+)['"]\s*\]$""")


def _mark_dynamic_fix(r: _Recompile, model: RunModel) -> Fix | None:
    """mark_dynamic for every input dim the recompile involves (the failed one and each
    one torch made dynamic with it), at the user's call: all of them or none (marking
    only `input_ids` of a Hugging Face model crashes it: its mask changes length too)."""
    f = r.failure
    first = _param_of(r.frame, f.source)
    if first is None or f.source is None or f.dim is None:
        return None
    wanted: list[tuple[str, int, int]] = [(first[0], first[1], f.dim)]
    for source, dim in dynamic_dims_of(r.compile):
        p = _param_of(r.frame, source)
        if p is None:
            return None  # an input dim we cannot name at the call: a partial fix may crash
        if (p[0], p[1], dim) not in wanted:
            wanted.append((p[0], p[1], dim))
    recorded = _call_site(r.frame.compiles[0])
    fn = _function_at(r.frame.filename, def_line(r.frame.filename, r.frame.firstlineno))
    arity = len(_params(fn)) if fn is not None else 0
    call = _now(recorded) if recorded is not None else None
    names = _argument_names(call, wanted, arity, r.frame.name) if call is not None else None
    if names is None:
        # torch's compile stack (dynamo_start, checked on 2.13) leaves out the frame that
        # called a @torch.compile function directly — it names the frame above (`main()`
        # in <module>). The one call of the function in its own file is the call.
        call = _only_call(r.frame)
        names = _argument_names(call, wanted, arity, r.frame.name) if call is not None else None
    if names is None or call is None:
        return None
    code = mark_dynamic_code(names)
    lines = _lines(call.file)
    var = names[0][0]
    made = _assigned_at(call.file, call.line, var) if len(names) == 1 else None
    if made is not None and made.lineno <= len(lines):
        stmt_line = lines[made.lineno - 1]
        indent = stmt_line[: len(stmt_line) - len(stmt_line.lstrip())]
        if isinstance(made, (ast.For, ast.AsyncFor)):  # the loop variable: first thing in the body
            body = made.body[0]
            first_line = lines[body.lineno - 1]
            return Fix(code, call.file, body.lineno - 1, first_line[: len(first_line) - len(first_line.lstrip())], f"where `{var}` is made")
        return Fix(code, call.file, made.end_lineno or made.lineno, indent, f"where `{var}` is made")
    if call.line <= len(lines):  # several inputs, or a parameter/global of the caller: right before the call
        text = lines[call.line - 1]
        return Fix(code, call.file, call.line - 1, text[: len(text) - len(text.lstrip())], f"before the call at line {call.line}")
    return None


def _argument_names(call: Loc, wanted: list[tuple[str, int, int]], arity: int, callee: str) -> list[tuple[str, int]] | None:
    """The caller's variable for each (parameter, index, dim), or None unless every one is
    a plain name at the call."""
    out: list[tuple[str, int]] = []
    for param, index, dim in wanted:
        var = _argument_name(call, index, param, arity, callee)
        if var is None:
            return None
        if (var, dim) not in out:
            out.append((var, dim))
    return out


def _tensor_lr_fix(group: list[_Recompile]) -> Fix | None:
    """A compiled optimizer step recompiling on its float lr: ``lr=torch.tensor(0.01)`` at
    the one ``lr=<float>`` of a ``*.optim.*(...)`` constructor in the user files of the
    compile's stack (a tensor lr is read at run time; torch's schedulers update it in
    place). Not offered where the file assigns ``[...]["lr"] = ...`` itself: that would
    put a float back."""
    stack: list[Loc] = next((r.compile.start.stack for r in group if r.compile.start is not None and r.compile.start.stack), [])
    candidates = list(dict.fromkeys(loc.file for loc in reversed(stack) if not is_library_file(loc.file)))
    for path in candidates:
        tree = _tree(path)
        if tree is None:
            continue
        kws: list[ast.keyword] = []
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
            if any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == "lr" for t in targets):
                return None
            if isinstance(node, ast.Call) and "optim." in ast.unparse(node.func) + ".":
                kws.extend(
                    kw
                    for kw in node.keywords
                    if kw.arg == "lr" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, float)
                )
        if len(kws) != 1:
            continue
        value = kws[0].value
        literal = ast.get_source_segment("\n".join(_lines(path)) + "\n", value) or repr(getattr(value, "value", ""))
        return Fix(
            f"lr=torch.tensor({literal})",
            path,
            value.lineno,
            "",
            "in the optimizer's constructor",
            replaces=literal,
            replacement=f"torch.tensor({literal})",
        )
    return None


def _only_call(frame: FrameInfo) -> Loc | None:
    """The line of the one plain call ``name(...)`` of ``frame``'s function in its own file
    (not ``obj.name(...)``: another object's method of that name is not this function)."""
    tree = _tree(frame.filename)
    if tree is None:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == frame.name]
    return Loc(file=frame.filename, line=calls[0].lineno, name=frame.name) if len(calls) == 1 else None


def _lines(path: str) -> list[str]:
    text = read_source(path)
    return [] if text is None else text.splitlines()


# -- graph breaks --------------------------------------------------------------------------------


def break_causes(model: RunModel) -> list[Cause]:
    out: list[Cause] = []
    per_step = break_costs(model)
    for g in model.break_groups():
        e = g.first
        user = next((loc for loc in reversed(e.user_stack) if not is_library_file(loc.file)), None)
        site = g.loc if not is_library_file(g.loc.file) or user is None else user
        out.append(
            Cause(
                kind="graph_break",
                # what the user wrote first ("`print(...)` can't be traced (GB0059)"), as every face
                title=f"graph break: {label(e)}",
                detail=f"{Path(site.file).name}:{site.line}, hit {g.count}×",
                sites=[site],
                break_group=g,
                step_cost=per_step.get(g.key),
            )
        )
    return out


def causes(model: RunModel) -> list[Cause]:
    """Every cause, most expensive first: recompiles caused, compile time, time per
    profiled step, graph fragments."""
    return sorted(recompile_causes(model) + break_causes(model), key=lambda c: c.cost, reverse=True)
