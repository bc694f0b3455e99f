"""Apply-and-verify in the editor: the ``dynInspect.verify`` command re-runs the recorded
program under the recorder (``dyn-inspect verify --json``, in a worker thread) and keeps
its verdict; the server then follows the new run, so the diagnostics of what the fix
removed disappear, and ``verified_hints`` marks where they were: "fixed ✓ (verified run
<id>)". What is still there keeps its diagnostic, with "still there after the fix (verified
run <id>)" appended by ``annotate``.

The verdict is the one ``dyn-inspect verify`` writes into the new run as ``verify.json``,
so a server that starts later (or another editor) shows the same marks for that run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from dyn_inspect.inspector.outputs.lsp import DIAGNOSTIC_CODES, SERVER_COMMANDS
from dyn_inspect.inspector.source_files import read_source
from dyn_inspect.inspector.workspace import norm_path
from dyn_inspect.lsp.documents import TextView
from dyn_inspect.lsp.source_lines import relocate

VERIFY = SERVER_COMMANDS["verify"]
SOURCE = "dyn-inspect"


@dataclass
class Verdict:
    """``verify.json``: what one verify run found, and where the fixed causes showed."""

    data: dict[str, Any]
    fixed_sites: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # file → [(line, title)]
    # not verified: where the re-run crashed or newly failed to compile, file → [(line, what)]
    unverified_sites: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    # (file, line) → the line's text when the verdict was read: a hint follows its line
    # through later edits (``relocate``), as the warnings do, instead of staying put
    anchors: dict[tuple[str, int], str | None] = field(default_factory=dict)

    @property
    def after_run(self) -> str:
        return str(self.data.get("after_run", ""))

    @property
    def run_id(self) -> str:
        return Path(self.after_run).name

    @property
    def verified(self) -> bool:
        """The report's own state (a verify.json of an older dyn-inspect, which had none, is not)."""
        return self.data.get("state") == "verified"

    def message(self) -> str:
        b, a = self.data.get("before", {}), self.data.get("after", {})
        counts = self.data.get("changes") or (  # a verify.json of an older dyn-inspect has no `changes`
            f"recompiles {b.get('recompiles')} → {a.get('recompiles')}, graph breaks {b.get('breaks_unique')} → {a.get('breaks_unique')}, "
            f"compile failures {b.get('failures', '?')} → {a.get('failures', '?')}"
        )
        where = f" (re-ran in {self.data['rerun_cwd']})" if self.data.get("rerun_cwd_note") else ""
        if not self.verified:
            why = self.data.get("reason") or "the report has no verdict (written by an older dyn-inspect)"
            return f"dyn-inspect: not verified — {why}. Re-run {self.run_id}{where}: {counts}"
        fixed = len(self.data.get("fixed", []))
        return f"dyn-inspect verified run {self.run_id}{where}: {counts}, {fixed} cause(s) fixed ✓"


def run_verify(run_path: str, timeout_s: float = 3600.0, settle_s: float | None = None, cwd: str | None = None) -> Verdict:
    """``dyn-inspect verify --json`` for ``run_path``, re-run in ``cwd`` when the program is
    there (blocking: call it in a thread)."""
    argv = [sys.executable, "-m", "dyn_inspect.cli", "verify", run_path, "--json", "--timeout", str(timeout_s)]
    if settle_s is not None:
        argv += ["--settle", str(settle_s)]
    if cwd is not None:
        argv += ["--in", cwd]
    # stdin: the server's is the editor's protocol stream; a program calling input() would eat a request.
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s + 60)
    # 1 with a report: the re-run did not verify the fix (the report says why); else an error line
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise RuntimeError(last)
    return load(json.loads(proc.stdout))


def load(data: dict[str, Any]) -> Verdict:
    """The verdict plus the lines of its fixed causes (the report's ``marks``: where the
    user saw them, in the run before the fix)."""
    verdict = Verdict(data)
    if not verdict.verified:
        _unverified_sites(verdict)
        _anchor(verdict, verdict.unverified_sites)
        return verdict  # nothing is marked fixed by a re-run that did not verify the fix
    for c in data.get("fixed", []):
        for mark in c.get("marks", []):
            verdict.fixed_sites.setdefault(norm_path(mark["file"]), []).append((mark["line"], c["title"]))
    _anchor(verdict, verdict.fixed_sites)
    return verdict


def _anchor(verdict: Verdict, sites: dict[str, list[tuple[int, str]]]) -> None:
    """Keep the text of each marked line as the file is now, right after the re-run."""
    for file, entries in sites.items():
        text = read_source(file)
        lines = text.splitlines() if text is not None else []
        for line, _ in entries:
            verdict.anchors[(file, line)] = lines[line - 1] if 1 <= line <= len(lines) else None


def _unverified_sites(verdict: Verdict) -> None:
    """The re-run's uncaught exception and its new compile failures, at their lines (the
    report names them relative to the directory it re-ran in)."""
    base = str(verdict.data.get("rerun_cwd") or "")

    def add(file: object, line: object, what: str) -> None:
        if isinstance(file, str) and file and isinstance(line, int) and line > 0:
            full = file if os.path.isabs(file) or not base else os.path.join(base, file)
            verdict.unverified_sites.setdefault(norm_path(full), []).append((line, what))

    exc = verdict.data.get("exception")
    if isinstance(exc, dict) and verdict.data.get("exit_code"):
        add(
            exc.get("file"),
            exc.get("line"),
            f"the re-run exited {verdict.data.get('exit_code')} here: {exc.get('type')}: {exc.get('message')}",
        )
    for f in verdict.data.get("failures_new", []):
        if isinstance(f, dict):
            add(f.get("file"), f.get("line"), f"a compile failure the recorded run did not have: {f.get('fail_type')}: {f.get('headline')}")


def from_run(run_path: str | None) -> Verdict | None:
    """The verdict saved in a run by an earlier verify (``verify.json``), if any."""
    if not run_path:
        return None
    path = Path(run_path) / "verify.json"
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 1 << 20:
            return None
        return load(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def verified_hints(verdict: Verdict | None, path: str, view: TextView | None) -> list[types.Diagnostic]:
    """A Hint on each line where a fixed cause showed: "fixed ✓ (verified run <id>)"; for a
    report that is not verified, a Warning where the re-run crashed or newly failed to
    compile instead ("not verified (re-run <id>): …")."""
    if verdict is None or view is None:
        return []
    key = norm_path(path)
    if not verdict.verified:
        placed = [(_now(verdict, key, line, view), what) for line, what in verdict.unverified_sites.get(key, [])]
        return [
            _line_diagnostic(
                view,
                now,
                f"not verified (re-run {verdict.run_id}): {what}",
                types.DiagnosticSeverity.Warning,
                DIAGNOSTIC_CODES["notVerified"],
            )
            for now, what in placed
            if now is not None
        ]
    out = []
    for line, title in verdict.fixed_sites.get(key, []):
        now = _now(verdict, key, line, view)
        if now is not None:
            out.append(
                _line_diagnostic(
                    view,
                    now,
                    f"fixed ✓ (verified run {verdict.run_id}): {title}",
                    types.DiagnosticSeverity.Hint,
                    DIAGNOSTIC_CODES["verified"],
                )
            )
    return out


def _now(verdict: Verdict, file: str, line: int, view: TextView) -> int | None:
    """Where the marked line is in the document now; None when it cannot be told (gone,
    or several lines like it nearby: no guess)."""
    if (file, line) not in verdict.anchors:
        return line if 1 <= line <= len(view.lines) else None
    return relocate(view.lines, line, verdict.anchors[(file, line)])


def _line_diagnostic(view: TextView, line: int, message: str, severity: types.DiagnosticSeverity, code: str) -> types.Diagnostic:
    text = view.lines[line - 1]
    start = len(text) - len(text.lstrip())
    return types.Diagnostic(
        range=types.Range(types.Position(line - 1, start), types.Position(line - 1, len(text.rstrip()))),
        message=message,
        severity=severity,
        source=SOURCE,
        code=code,
    )


def annotate(diagnostics: list[types.Diagnostic], verdict: Verdict | None, run_path: str | None) -> list[types.Diagnostic]:
    """Diagnostics of the verified run itself: say the fix did not remove them."""
    if verdict is None or not run_path or Path(run_path).resolve() != Path(verdict.after_run).resolve():
        return diagnostics
    note = (
        f"still there after the fix — verified run {verdict.run_id}"
        if verdict.verified
        else f"in re-run {verdict.run_id}, which did not verify the fix: {verdict.data.get('reason') or 'no verdict'}"
    )
    for d in diagnostics:
        if d.source == SOURCE and d.code not in (DIAGNOSTIC_CODES["verified"], DIAGNOSTIC_CODES["notVerified"]) and note not in d.message:
            d.message += f"\n({note})"
    return diagnostics
