"""Helpers for the fix tests (no tests here): a program recorded in a folder of its own (or
reused from ``DYN_INSPECT_CORPUS_CACHE``), the quick fixes the language server offers on a
line of it, and the text after one of them is applied."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec

from corpus_support import CACHE_ENV, CORPUS, DYN_INSPECT
from dyn_inspect.inspector.reports.findings import RunIndex, build_index
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp import diagnostics as diag_mod
from dyn_inspect.lsp.code_actions import code_actions
from dyn_inspect.lsp.documents import TextView, path_uri
from dyn_inspect.lsp.placement import place
from dyn_inspect.lsp.settings import Settings
from inductor_pool import seed
from lsp_support import apply_edit

PROGRAM = CORPUS / "quick_fixes.py"
NAME = PROGRAM.name


@dataclass
class Recorded:
    folder: Path
    run: Run
    stdout: str
    name: str = NAME

    @property
    def path(self) -> Path:
        return self.folder / self.name

    def index(self) -> RunIndex:
        return build_index(self.run, Workspace.for_run([self.folder], self.run))

    def breaks(self) -> list[tuple[int, str | None, str]]:
        """(line, gb id, line text) of each unique break in the program's file."""
        out = []
        for g in self.run.model.break_groups():
            if Path(g.loc.file).name == self.name:
                out.append((g.loc.line, g.first.gb_id, (g.loc.code or "").strip()))
        return sorted(out)

    def recompiles(self) -> int:
        return len(self.run.model.recompiles)


def record(text: str, base: Path, name: str = NAME, inductor: Path | None = None) -> Recorded:
    """``text`` as ``name`` in its own folder, recorded (or reused from the cache), in a
    fresh Inductor cache of its own or, given ``inductor``, in that one (seeded either way
    with the session's built C++)."""
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    cache = os.environ.get(CACHE_ENV)
    folder = (Path(cache) / "quick-fixes" if cache else base) / key
    done = folder / "result.json"
    if not done.is_file():
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        (folder / name).write_text(text)
        env = {k: v for k, v in os.environ.items() if k not in ("DYN_INSPECT_RUNS_DIR", "TORCH_LOGS", "TORCH_TRACE")}
        env.update(DYN_INSPECT_NO_TUI="1", TORCHINDUCTOR_CACHE_DIR=seed(inductor or folder / "inductor"))
        proc = subprocess.run(
            [str(DYN_INSPECT), "--no-tui", "--runs-dir", str(folder / "runs"), name],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        done.write_text(json.dumps({"stdout": proc.stdout}))
    runs = [p for p in (folder / "runs").iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(runs) == 1
    return Recorded(folder, Run(runs[0]), json.loads(done.read_text())["stdout"], name)


def fixes_on(rec: Recorded, text: str, line1: int) -> list[types.CodeAction]:
    """The quick fixes the server offers on ``line1`` of ``text`` (the recording's file as
    edited so far), for the findings of ``rec``'s run."""
    lines = text.splitlines()
    view = TextView(str(rec.path), path_uri(str(rec.path)), lines, PositionCodec())
    index = rec.index()
    placed = place(index.for_path(str(rec.path)), lines, Settings())
    diags = diag_mod.build(placed, view, Settings())
    rng = types.Range(types.Position(line1 - 1, 0), types.Position(line1 - 1, len(lines[line1 - 1])))
    params = types.CodeActionParams(
        types.TextDocumentIdentifier(view.uri),
        rng,
        types.CodeActionContext(diagnostics=[d for d in diags if d.range.start.line == line1 - 1]),
    )

    def view_of(path: str) -> TextView | None:
        return view if Path(path).name == rec.name else None

    acts = code_actions(view, placed, params, index.run_path, view_of, index.inlined_logging)
    return [a for a in acts if isinstance(a, types.CodeAction)]


def line_with(text: str, needle: str) -> int:
    found = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


def apply(rec: Recorded, text: str, marker: str, pick: str) -> str:
    """``text`` after the fix whose title contains ``pick`` on the line marked ``marker``."""
    acts = fixes_on(rec, text, line_with(text, f"# {marker}"))
    chosen = [a for a in acts if pick in a.title]
    assert len(chosen) == 1, (marker, pick, [a.title for a in acts])
    assert chosen[0].edit is not None
    return apply_edit(text, chosen[0].edit, path_uri(str(rec.path)))
