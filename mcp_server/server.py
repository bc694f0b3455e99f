"""The MCP server (the official SDK's low-level ``Server`` over stdio): the tools of
``tools.py``, a resource per run (its summary), and the prompt that walks an agent through
"find the costliest cause, apply its plan, verify".

Every tool answers with the Struct the CLI's ``--json`` prints for the same question, as the
result's structured content (its output schema is generated from that Struct) and as JSON
text. A tool that cannot answer (an unknown run, a missing argument, a program that timed
out, a run directory ``verify`` will not re-run) returns one error result with one line;
the server keeps serving. ``record`` and ``verify`` start programs in child processes
(``dyn-inspect run`` / ``dyn-inspect verify --json``), with ``/dev/null`` as their stdin
(the server's is the protocol stream) and their output kept off the server's stdout,
sending progress notifications while they run.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
import mcp_types as types
import msgspec
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from dyn_inspect.inspector.errors import InspectorError
from dyn_inspect.inspector.outputs import reports as typed
from dyn_inspect.inspector.outputs import to_json
from dyn_inspect.inspector.run import Run, list_runs
from dyn_inspect.mcp.tools import TOOLS, RecordArgs, VerifyArgs, Workspace, decode_args, input_schema, output_schema

NAME = "dyn-inspect"
RESOURCE = "dyn-inspect://runs/{run}/summary"
PROMPT = "fix_costliest_cause"
OUTPUT_TAIL = 4000  # characters of a failed program's output kept for its error

Context = ServerRequestContext[Any, Any]


class _Failed(Exception):
    """A tool's one-line error result."""


def _error(text: str) -> types.CallToolResult:
    """One error line (a message of several lines is joined into one)."""
    line = "; ".join(part.strip() for part in text.splitlines() if part.strip())
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"dyn-inspect: {line}")], is_error=True)


def _answer(report: msgspec.Struct) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=to_json(report))], structured_content=msgspec.to_builtins(report)
    )


async def _progress(ctx: Context, done: float, total: float | None, message: str) -> None:
    try:
        await ctx.session.report_progress(done, total, message)
    except Exception:  # a client that went away: the tool's answer says the rest
        pass


class Session:
    """What the server keeps between calls: the runs directory ``record`` last wrote to
    (the other tools' default)."""

    runs: str | None = None


async def _workspace(ctx: Context, folders: list[str], session: Session) -> Workspace:
    """The roots the client declares (MCP roots, file:// only), else ``folders`` (the
    server's ``--root`` options, or its directory)."""
    caps = ctx.session.client_capabilities
    if caps is not None and caps.roots is not None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the 2026-07-28 protocol; older clients still send them
                with anyio.fail_after(10):
                    listed = await ctx.session.list_roots()
            declared = [unquote(urlparse(str(r.uri)).path) for r in listed.roots if str(r.uri).startswith("file://")]
            if declared:
                return Workspace.of(declared, session.runs)
        except Exception:
            pass
    return Workspace.of(folders, session.runs)


async def _wait(ctx: Context, proc: asyncio.subprocess.Process, timeout_s: float, what: str, status: Any = None) -> tuple[int, str, str]:
    """Waits for ``proc`` (its own process group), sending progress every second; kills
    the group after ``timeout_s`` and fails with one line. Returns (exit code, stdout, stderr)."""
    out: list[bytes] = []
    err: list[bytes] = []

    async def drain(stream: asyncio.StreamReader | None, into: list[bytes]) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            into.append(chunk)

    readers = [asyncio.ensure_future(drain(proc.stdout, out)), asyncio.ensure_future(drain(proc.stderr, err))]
    start = time.monotonic()
    try:
        while True:
            try:
                await asyncio.wait_for(asyncio.shield(proc.wait()), timeout=1.0)
                break
            except asyncio.TimeoutError:
                pass
            elapsed = time.monotonic() - start
            if elapsed > timeout_s:
                _kill_group(proc)
                await proc.wait()
                raise _Failed(f"{what} did not finish within {timeout_s:g}s: stopped (its process group was killed)")
            note = status() if status is not None else None
            await _progress(ctx, round(elapsed, 1), timeout_s, f"{what}: {elapsed:.0f}s" + (f", {note}" if note else ""))
    except BaseException:
        _kill_group(proc)  # cancelled (the client went away) or timed out: nothing is left running
        raise
    finally:
        await asyncio.gather(*readers, return_exceptions=True)
    code = proc.returncode if proc.returncode is not None else -1
    return code, b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace")


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _env() -> dict[str, str]:
    return dict(os.environ, DYN_INSPECT_NO_TUI="1")


async def _record(ctx: Context, ws: Workspace, a: RecordArgs, session: Session) -> typed.Summary:
    from dyn_inspect.inspector.reports import summary

    given = [x for x in (a.script, a.module, a.command) if x]
    if len(given) != 1:
        raise InspectorError("record takes exactly one of script, module or command")
    if a.timeout_s <= 0:
        raise InspectorError("timeout_s must be positive")
    cwd = ws.path(a.cwd or ws.home, "cwd")
    if not cwd.is_dir():
        raise InspectorError(f"cwd {cwd} is not a directory")
    runs = ws.runs_dir(a.runs_dir, base=cwd)
    argv = [sys.executable, "-m", "dyn_inspect.cli", "run", "--no-tui", "--runs-dir", str(runs)]
    if a.disable_compile:
        argv.append("--disable-compile")
    if a.profile is not None:
        argv.append(f"--profile={a.profile}")
    if a.script is not None:
        script = ws.path(str(cwd / a.script), "script")
        if not script.is_file():
            raise InspectorError(f"script {a.script}: no such file in {cwd}")
        argv += [str(script), *a.args]
    elif a.module is not None:
        if a.module.startswith("-"):
            raise InspectorError(f"module {a.module!r} is not a module name")
        argv += ["-m", a.module, *a.args]
    else:
        assert a.command is not None
        if a.args:
            raise InspectorError("record: a command carries its own arguments (put them in command)")
        argv += ["--", *a.command]
    before = set(list_runs(runs)) if runs.is_dir() else set()

    def newest() -> Path | None:
        fresh = set(list_runs(runs)) - before if runs.is_dir() else set()
        return max(fresh, key=lambda p: p.name) if fresh else None

    def status() -> str | None:
        new = newest()
        return f"recording into {new.name}" if new is not None else None

    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    what = f"`{shlex.join(a.command or [a.script or f'-m {a.module}', *a.args])}`"
    code, out, err = await _wait(ctx, proc, a.timeout_s, what, status)
    new = newest()
    if new is None:
        tail = (out + err)[-OUTPUT_TAIL:].strip().splitlines()
        raise InspectorError(f"{what} (exit {code}) recorded no run" + (f": {tail[-1]}" if tail else ""))
    session.runs = str(runs)
    await _progress(ctx, a.timeout_s, a.timeout_s, f"{what} exited {code}; reading {new.name}")
    return await anyio.to_thread.run_sync(lambda: summary(Run(new)))


async def _verify(ctx: Context, ws: Workspace, a: VerifyArgs) -> typed.VerifyReport:
    from dyn_inspect.inspector.reports.verify import plan_rerun

    if a.timeout_s <= 0:
        raise InspectorError("timeout_s must be positive")
    run = await anyio.to_thread.run_sync(lambda: ws.run(a.run, a.runs_dir))
    here = ws.path(a.in_dir or ws.home, "in_dir")
    if not here.is_dir():
        raise InspectorError(f"in_dir {here} is not a directory")
    start = run.model.run_start
    if start is None or start.mode in ("import", "notebook"):
        raise InspectorError(f"{run.path.name} has no recorded command to re-run (an imported log, a worker's or a notebook cell's run)")
    plan = plan_rerun(start, str(here))
    if plan.confirm is not None:
        # verify's consent rule (docs/security.md): never re-run without the user's --yes
        raise InspectorError(
            f"{run.path.name} {plan.confirm}: `{shlex.join(plan.command)}` in {plan.cwd}; the server never re-runs it — "
            f"check it, then run `dyn-inspect verify --yes {run.path}` yourself"
        )
    ws.path(plan.cwd, "the directory verify re-runs in")
    argv = [sys.executable, "-m", "dyn_inspect.cli", "verify", str(run.path), "--json", "--timeout", str(a.timeout_s), "--in", str(here)]
    if a.settle_s is not None:
        argv += ["--settle", str(a.settle_s)]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(here),
        env=_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    code, out, err = await _wait(ctx, proc, a.timeout_s + 60, f"verify: re-running {shlex.join(plan.command)} in {plan.cwd}")
    if code not in (0, 1) or not out.strip():  # 1 with a report: not verified (it says why)
        lines = err.strip().splitlines()
        raise InspectorError((lines[-1] if lines else f"verify exited {code}").removeprefix("dyn-inspect: "))
    try:
        return msgspec.json.decode(out, type=typed.VerifyReport)  # (the program's own output is in the new run, not here)
    except msgspec.DecodeError as e:
        raise InspectorError(f"verify printed no report ({e})") from None


def create_server(folders: list[str]) -> Server[Any]:
    """The server; ``folders``: the workspace when the client declares no roots."""
    session = Session()

    async def list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=input_schema(t.args),
                    output_schema=output_schema(t.output),
                    annotations=types.ToolAnnotations(read_only_hint=t.read_only, open_world_hint=False),
                )
                for t in TOOLS.values()
            ]
        )

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            return _error(f"no tool {params.name!r} (tools: {', '.join(TOOLS)})")
        try:
            args = decode_args(tool, params.arguments)
            ws = await _workspace(ctx, folders, session)
            if isinstance(args, RecordArgs):
                report: msgspec.Struct = await _record(ctx, ws, args, session)
            elif isinstance(args, VerifyArgs):
                report = await _verify(ctx, ws, args)
            else:
                assert tool.answer is not None
                answer = tool.answer
                report = await anyio.to_thread.run_sync(lambda: answer(ws, args))
        except (InspectorError, _Failed) as e:
            return _error(str(e))
        except OSError as e:
            return _error(f"{params.name}: {e.strerror or e}")
        except Exception as e:  # a bug of ours: one line, and the server keeps serving
            return _error(f"{params.name} failed: {type(e).__name__}: {e}")
        return _answer(report)

    async def list_resources(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        ws = await _workspace(ctx, folders, session)
        try:
            root = ws.runs_dir(None)
            paths = list_runs(root) if root.is_dir() else []
        except InspectorError:
            paths = []
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=RESOURCE.format(run=p.name),
                    name=f"{p.name} summary",
                    mime_type="application/json",
                    description=f"summary of run {p.name}",
                )
                for p in paths
            ]
        )

    async def list_templates(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=RESOURCE,
                    name="run summary",
                    mime_type="application/json",
                    description="a recorded run's summary (the `summary` tool's answer): run is its id, or `latest`",
                )
            ]
        )

    async def read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        from dyn_inspect.inspector.reports import summary

        uri = str(params.uri)
        prefix, suffix = RESOURCE.split("{run}")
        run_id = uri[len(prefix) : -len(suffix)] if uri.startswith(prefix) and uri.endswith(suffix) else ""
        if not run_id or "/" in run_id:
            raise ValueError(f"unknown resource {uri} (resources: {RESOURCE})")
        ws = await _workspace(ctx, folders, session)
        try:
            report = await anyio.to_thread.run_sync(lambda: summary(ws.run(None if run_id == "latest" else run_id, None)))
        except InspectorError as e:
            raise ValueError(str(e)) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=to_json(report))])

    async def list_prompts(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=PROMPT,
                    description="Find the costliest root cause of a recorded run, apply its fix plan, verify it by a re-run",
                    arguments=[types.PromptArgument(name="run", description="the run id (default: the latest)", required=False)],
                )
            ]
        )

    async def get_prompt(ctx: Context, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise ValueError(f"no prompt {params.name!r} (prompts: {PROMPT})")
        run = (params.arguments or {}).get("run")
        return types.GetPromptResult(
            description="find the costliest cause, apply its plan, verify",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=prompt_text(run)))],
        )

    return Server(
        NAME,
        version=_version(),
        instructions=(
            "dyn-inspect records torch.compile runs and answers where they graph-break, why they recompiled and what it costs. "
            "Record with `record`, read with `summary`/`breaks`/`recompiles`/`causes`, get an edit with `fix_plans`, "
            "prove it with `verify`. Paths must be inside the workspace roots."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def prompt_text(run: str | None) -> str:
    """The steps of "find the costliest cause, apply its plan, verify"."""
    which = f'"run": "{run}"' if run else "no `run` (the latest run)"
    return "\n".join(
        [
            f"Fix the costliest root cause of a torch.compile run with the dyn-inspect tools ({which}).",
            "1. Call `causes`. Causes come most expensive first (recompiles, then compile time, then time per step); "
            "take the first one with a `fix`. If none has one, say so with each cause's `no_fix` or `detail` and stop.",
            "2. Call `fix_plans` with that cause's number (`cause`: its 1-based position). Read `why` and `keeps_behaviour`: "
            "if the fix does not keep the program's behaviour, say what changes before applying it.",
            "3. Apply the plan's `diff` (a unified diff relative to the plan's `cwd`: `git apply` or `patch -p1` there, "
            "or in a copy of that directory). If `diff` is null, `no_diff` says why: stop.",
            "4. Call `verify` with the same run (and `in_dir`: the directory where you applied the diff). "
            'Report `changes` (before → after). Only `state: "verified"` proves the fix; otherwise give `reason` '
            "and undo the edit.",
        ]
    )


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("dyn-inspect")
    except Exception:
        return "0"


async def serve_stdio(folders: list[str]) -> None:
    server = create_server(folders)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
