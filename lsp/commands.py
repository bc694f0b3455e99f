"""``workspace/executeCommand``: the contract with the VS Code extension (docs/editors.md).

Each handler takes its arguments as the client sends them, asks the server's parts or the
report layer, and answers the typed output of ``inspector/outputs/lsp.py`` (or
``VerifyReport``) as plain JSON (``command_result``):

- ``dynInspect.selectRun`` pins a run (or follows the latest again) and answers the summary;
- ``dynInspect.listRuns``: every run found, one ``LspRunInfo`` row each;
- ``dynInspect.verify`` re-runs the run's program under the recorder (``lsp.verify``);
- ``dynInspect.summary``, ``dynInspect.showDetails`` (the code lens command; also shown by
  the server itself, ``lsp.details_file``);
- ``dynInspect.showInTui`` and ``dynInspect.exportBugReport`` answer the terminal command
  to run (the latter is answered but not advertised: ``lsp.features.initialized``).

``register`` adds them to the server in this order.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types

from dyn_inspect.inspector.locations import inside
from dyn_inspect.inspector.outputs.lsp import SERVER_COMMANDS, LspFunctionDetails, LspSummary, LspVerifyError
from dyn_inspect.inspector.outputs.reports import VerifyReport
from dyn_inspect.inspector.run import Run
from dyn_inspect.inspector.workspace import Workspace
from dyn_inspect.lsp import code_actions as actions_mod
from dyn_inspect.lsp import code_lens as lens_mod
from dyn_inspect.lsp import verify as verify_mod
from dyn_inspect.lsp.details_file import present
from dyn_inspect.lsp.documents import uri_path
from dyn_inspect.lsp.placement import place_function
from dyn_inspect.lsp.server import DynInspectServer  # (at run time: pygls reads the handlers' annotations)
from dyn_inspect.lsp.wire import guarded

log = logging.getLogger(__name__)

SELECT_RUN = SERVER_COMMANDS["selectRun"]
LIST_RUNS = SERVER_COMMANDS["listRuns"]
SUMMARY = SERVER_COMMANDS["summary"]
SHOW_DETAILS = lens_mod.SHOW_DETAILS
SHOW_IN_TUI = actions_mod.SHOW_IN_TUI
EXPORT_BUG_REPORT = actions_mod.EXPORT_BUG_REPORT


def command_result(value: msgspec.Struct) -> dict[str, Any]:
    """A command's result as plain JSON data (what pygls sends), from its typed output."""
    data: dict[str, Any] = msgspec.to_builtins(value)
    return data


def summary_of(ls: DynInspectServer) -> dict[str, Any]:
    """``dynInspect.summary`` (``outputs.lsp.LspSummary``)."""
    return command_result(
        LspSummary(
            breaks=ls.index.unique_breaks,
            recompiles=ls.index.recompiles,
            run=ls.index.run_path,
            degraded=list(ls.index.degraded),
        )
    )


def details_of(ls: DynInspectServer, file: str, line: int) -> dict[str, Any]:
    """``dynInspect.showDetails`` (``outputs.lsp.LspFunctionDetails``)."""
    ff = ls.index.for_path(file)
    view = ls.docs.view_of_path(file)
    for fn in ff.functions if ff is not None else []:
        now = place_function(view.lines, fn) if view is not None else None
        if line in (now, fn.def_line):
            found = {"found": True, "run": ls.index.run_path, **lens_mod.details(fn, now or fn.def_line)}
            found["markdown"] = lens_mod.details_markdown(found)
            return command_result(msgspec.convert(found, LspFunctionDetails))
    return command_result(LspFunctionDetails(found=False, run=ls.index.run_path, file=file, line=line))


def run_arg(ls: DynInspectServer, args: tuple[Any, ...]) -> str | None:
    first = args[0] if args else None
    return first if isinstance(first, str) and first else ls.index.run_path


def show_verdict(ls: DynInspectServer, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
    """A verify's outcome is news the user asked for: a visible message, and the log."""
    log.info("%s", message)
    try:
        ls.window_show_message(types.ShowMessageParams(kind, message))
        ls.window_log_message(types.LogMessageParams(kind, message))
    except Exception:  # no client connected: the log above keeps it
        pass


def rerun_dir(ls: DynInspectServer, run_path: str) -> str:
    """Where verify re-runs ``run_path``'s program: the workspace folder its paths map to
    (a run recorded in another checkout re-runs the edits made here), else its own
    recorded directory when that is in the workspace."""
    shown = ls.source.run
    try:
        run = shown if shown is not None and Path(shown.path).resolve() == Path(run_path).resolve() else Run(run_path)
        ws = Workspace.for_run(ls.roots, run)
    except Exception:  # noqa: BLE001 - an unreadable run: the CLI says why
        return str(ls.roots[0])
    if ws.recorded_cwd and any(inside(ws.recorded_cwd, r) for r in ls.roots):
        return ws.recorded_cwd
    return str(ws.local_cwd or ls.roots[0])


# -- the handlers -----------------------------------------------------------------------


@guarded(dict)
async def select_run(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
    run = args[0] if args and isinstance(args[0], str) and args[0] else None
    ls.settings = replace(ls.settings, run=run)
    ls.source.configure(ls.settings.runs_dir, run)
    await ls.refresh()
    return summary_of(ls)


@guarded(list)
async def list_runs(ls: DynInspectServer, *args: Any) -> list[dict[str, Any]]:
    def rows() -> list[dict[str, Any]]:
        out = []
        for path in ls.source.list_runs():
            row = ls.listings.row(path, ls.source.run)
            if row is not None:
                out.append(command_result(row))
        return out

    async with ls.lock:
        return await asyncio.to_thread(rows)


@guarded(dict)
async def verify(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
    run_path = args[0] if args and isinstance(args[0], str) and args[0] else ls.index.run_path
    if not run_path:
        ls.say("no run to verify", types.MessageType.Warning)
        return {}
    ls.say(f"verifying — re-running the program of {Path(run_path).name}…")
    try:
        verdict = await asyncio.to_thread(verify_mod.run_verify, run_path, cwd=rerun_dir(ls, run_path))
    except Exception as exc:  # noqa: BLE001 - the re-run failed: say why, change nothing
        show_verdict(ls, f"dyn-inspect: verify failed: {exc}", types.MessageType.Error)
        return command_result(LspVerifyError(error=str(exc)))
    ls.publisher.verdict = verdict
    await ls.refresh()
    ls.publisher.publish_all()
    show_verdict(ls, verdict.message(), types.MessageType.Info if verdict.verified else types.MessageType.Warning)
    try:
        return command_result(msgspec.convert(verdict.data, VerifyReport))
    except msgspec.ValidationError:  # written by an older dyn-inspect: passed on as it is
        return verdict.data


@guarded(dict)
def summary(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
    return summary_of(ls)


@guarded(dict)
def show_details(ls: DynInspectServer, *args: Any) -> dict[str, Any]:
    if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], int):
        return command_result(LspFunctionDetails(found=False, error="expected arguments [file, line]"))
    file = uri_path(args[0]) if args[0].startswith("file:") else args[0]
    result = details_of(ls, file or args[0], args[1])
    present(ls, result)
    return result


@guarded(lambda: None)
def show_in_tui(ls: DynInspectServer, *args: Any) -> str | None:
    run = run_arg(ls, args)
    if run is None:
        ls.say("no run to show")
        return None
    command = f"dyn-inspect open {shlex.quote(run)}"
    ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"Open the inspector in a terminal: {command}"))
    return command


@guarded(lambda: None)
def export_bug_report(ls: DynInspectServer, *args: Any) -> str | None:
    run = run_arg(ls, args)
    if run is None:
        ls.say("no run to export")
        return None
    out = args[1] if len(args) > 1 and isinstance(args[1], str) and args[1] else os.path.join(str(ls.roots[0]), "dyn-inspect-report.zip")
    command = f"dyn-inspect export {shlex.quote(run)} -o {shlex.quote(out)}"
    ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, f"Export the bug report in a terminal: {command}"))
    return command


def register(server: DynInspectServer) -> None:
    """The advertised commands (``exportBugReport`` is added at ``initialized``)."""
    server.command(SELECT_RUN)(select_run)
    server.command(LIST_RUNS)(list_runs)
    server.command(verify_mod.VERIFY)(verify)
    server.command(SUMMARY)(summary)
    server.command(SHOW_DETAILS)(show_details)
    server.command(SHOW_IN_TUI)(show_in_tui)
