"""``dyn-inspect mcp`` driven by the MCP SDK's own client over stdio (issue 59): the server
is the installed console script, the client is ``mcp.client.stdio`` + ``ClientSession``,
declaring the test's folder as its workspace root. Real programs, real compiles (CPU
Inductor): an agent records a corpus program, reads its breaks (they equal the CLI's
``breaks --json``), gets the recompile cause's fix plan, applies its diff to a copy with
``git apply``, and ``verify`` says "verified" with the recompiles gone; a program whose
offered fix crashes it is "not verified". Bad input (an unknown run, a missing argument, a
program that hangs, a hostile run directory, a path outside the workspace) gets one error
result each while the server keeps serving.

The client validates each structured answer against the tool's output schema
(``ClientSession.validate_tool_result``), so every answer here is also checked against
the schema generated from the CLI's Struct."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import msgspec
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from corpus_support import CORPUS, DYN_INSPECT, marker_line
from crafted_runs import crafted_run
from dyn_inspect.inspector.outputs import reports as typed
from inductor_pool import seed

AGENT = CORPUS / "agent"
TOOLS = {
    "record", "runs", "summary", "breaks", "recompiles", "causes", "failures", "shapes",
    "kernels", "kernel", "cost", "graph", "code", "fix_plans", "verify",
}  # fmt: skip
# where a transcript of the agent loop is written when set (docs/agents.md shows one)
TRANSCRIPT_ENV = "DYN_INSPECT_MCP_TRANSCRIPT"


class Client:
    """A session with the server, keeping what was said (for docs/agents.md)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.transcript: list[dict[str, Any]] = []
        self.progress: list[str] = []

    async def call(self, name: str, /, **arguments: Any) -> types.CallToolResult:
        said: list[str] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            said.append(message or "")

        result = await self.session.call_tool(name, arguments, progress_callback=progress)
        assert isinstance(result, types.CallToolResult)
        self.progress += said
        self.transcript.append(
            {"call": name, "arguments": arguments, "progress": said, "is_error": result.is_error,
             "result": result.structured_content if not result.is_error else _text(result)}
        )  # fmt: skip
        return result

    async def answer(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        result = await self.call(name, **arguments)
        assert not result.is_error, _text(result)
        assert isinstance(result.structured_content, dict)
        assert json.loads(_text(result)) == result.structured_content  # the text is the same JSON
        return result.structured_content

    async def error(self, name: str, /, **arguments: Any) -> str:
        """The one line of an error result."""
        result = await self.call(name, **arguments)
        assert result.is_error, result.structured_content
        text = _text(result)
        assert len(text.splitlines()) == 1 and "Traceback" not in text, text
        assert text.startswith("dyn-inspect: ")
        return text


def _text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def _env(workspace: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DYN_INSPECT_RUNS_DIR", "TORCH_LOGS", "TORCH_TRACE")}
    return {**env, "DYN_INSPECT_NO_TUI": "1", "TORCHINDUCTOR_CACHE_DIR": seed(workspace.parent / "inductor")}


@asynccontextmanager
async def serving(workspace: Path, roots: list[Path] | None = None, cwd: Path | None = None) -> AsyncIterator[Client]:
    """``dyn-inspect mcp`` started in ``cwd`` (default: ``workspace``) by the SDK's stdio
    client, which declares ``roots`` (default: ``workspace``) as its workspace roots."""
    declared = roots if roots is not None else [workspace]

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=r.as_uri(), name=r.name) for r in declared])  # type: ignore[arg-type]

    params = StdioServerParameters(command=str(DYN_INSPECT), args=["mcp"], env=_env(workspace), cwd=str(cwd or workspace))
    with open(workspace.parent / "server-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, list_roots_callback=list_roots if declared else None) as session:
                await session.initialize()
                yield Client(session)


def _project(workspace: Path, program: str) -> Path:
    project = workspace / "project"
    project.mkdir(parents=True)
    shutil.copy(AGENT / program, project / program)
    return project


def _cli_json(*args: str, cwd: Path) -> Any:
    p = subprocess.run([str(DYN_INSPECT), *args, "--json"], cwd=cwd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _git_apply(diff: str, where: Path) -> None:
    p = subprocess.run(["git", "apply", "--verbose", "-"], input=diff, cwd=where, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


# -- the tools --------------------------------------------------------------------------------


async def test_tools_are_listed_with_the_cli_structs_schemas(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with serving(workspace) as client:
        listed = (await client.session.list_tools()).tools
        prompts = (await client.session.list_prompts()).prompts
    assert {t.name for t in listed} == TOOLS
    by_name = {t.name: t for t in listed}
    # each answer's schema is the CLI's Struct's, as msgspec generates it
    for name, struct in [
        ("summary", typed.Summary), ("breaks", typed.BreaksReport), ("recompiles", typed.RecompilesReport),
        ("causes", typed.CausesReport), ("shapes", typed.ShapesReport), ("kernels", typed.KernelsReport),
        ("kernel", typed.KernelReport), ("cost", typed.CostReport), ("code", typed.CodeReport),
        ("runs", typed.RunsReport), ("verify", typed.VerifyReport), ("record", typed.Summary),
        ("fix_plans", typed.FixPlansReport), ("failures", typed.FailuresReport),
    ]:  # fmt: skip
        (ref,), defs = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
        schema = by_name[name].output_schema
        assert schema is not None and schema["$defs"] == defs, name
        assert schema["properties"] == defs[ref["$ref"].rsplit("/", 1)[1]]["properties"], name
    graph = by_name["graph"].output_schema
    assert graph is not None and {r["$ref"] for r in graph["anyOf"]} == {"#/$defs/GraphReport", "#/$defs/GraphDotReport"}
    assert by_name["kernel"].input_schema["required"] == ["name"]
    assert by_name["breaks"].annotations is not None and by_name["breaks"].annotations.read_only_hint
    assert [p.name for p in prompts] == ["fix_costliest_cause"]


async def test_without_declared_roots_the_workspace_is_the_servers_directory(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "runs").mkdir(parents=True)
    async with serving(workspace, roots=[]) as client:
        assert (await client.answer("runs", runs_dir="runs"))["runs"] == []
        assert "outside the workspace" in await client.error("runs", runs_dir=str(tmp_path))
        assert "outside the workspace" in await client.error("runs", runs_dir="../")


def test_a_missing_root_is_one_line_and_exit_2(tmp_path: Path) -> None:
    p = subprocess.run(
        [str(DYN_INSPECT), "mcp", "--root", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == f"dyn-inspect: --root {tmp_path / 'nope'}: no such directory"


# -- the agent loop, on real compiles --------------------------------------------------------


@pytest.mark.corpus
async def test_record_breaks_fix_plan_apply_verify(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    project = _project(workspace, "agent_fix.py")
    async with serving(workspace) as client:
        recorded = await client.answer("record", script="agent_fix.py", cwd="project", timeout_s=600)
        assert any("agent_fix.py" in p for p in client.progress), client.progress  # progress while it ran
        run_id = Path(recorded["run"]).name
        assert Path(recorded["run"]).parent == project / ".dyn-inspect" / "runs"
        assert (recorded["graph_breaks"]["unique"], recorded["recompiles"], recorded["exit_code"]) == (1, 1, 0)

        # the breaks are the CLI's, location for location
        breaks = await client.answer("breaks", run=run_id, runs_dir="project/.dyn-inspect/runs")
        cli = _cli_json("breaks", run_id, cwd=project)
        assert [(b["user_frame"], b["loc"], b["type"], b["count"]) for b in breaks["breaks"]] == [
            (b["user_frame"], b["loc"], b["type"], b["count"]) for b in cli["breaks"]
        ]
        (site,) = breaks["breaks"]
        assert (Path(site["user_frame"]["file"]).name, site["user_frame"]["line"]) == ("agent_fix.py", marker_line(AGENT / "agent_fix.py", "BREAK:print"))

        # without runs_dir: where this session recorded
        causes = await client.answer("causes", run=run_id)
        await _every_reading_tool_answers(client, run_id, project, causes)
        number = next(i for i, c in enumerate(causes["causes"], 1) if c["kind"] == "recompile")
        plans = await client.answer("fix_plans", cause=number)  # the latest run
        (plan,) = plans["plans"]
        assert plan["fix_kind"] == "mark_dynamic" and plan["keeps_behaviour"] is True and plan["path"] == "agent_fix.py"
        assert plan["cwd"] == str(project) and plan["verified_by"].startswith("tests/inspector/test_fix_corpus.py::")
        assert plan["line"] == marker_line(AGENT / "agent_fix.py", "FIX:rows")
        assert "+    torch._dynamo.mark_dynamic(rows, 0)\n" in plan["diff"]

        copy = workspace / "copy"
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".dyn-inspect"))
        _git_apply(plan["diff"], copy)
        assert (project / "agent_fix.py").read_text() == (AGENT / "agent_fix.py").read_text()  # the original is untouched

        verdict = await client.answer("verify", run=run_id, runs_dir="project/.dyn-inspect/runs", in_dir="copy")
        assert any(p.startswith("verify: re-running") for p in client.progress), client.progress
        assert verdict["state"] == "verified", verdict["reason"]
        assert verdict["rerun_cwd"] == str(copy)
        assert (verdict["before"]["recompiles"], verdict["after"]["recompiles"]) == (1, 0)
        assert verdict["after"]["breaks_unique"] == 1  # the break was not the fix's
        assert [c["kind"] for c in verdict["fixed"]] == ["recompile"] and not verdict["new"]
        # the same verdict the CLI keeps in the new run
        assert json.loads((Path(verdict["after_run"]) / "verify.json").read_text())["state"] == "verified"

        # the run's summary is a resource too
        read = await client.session.read_resource(f"dyn-inspect://runs/{run_id}/summary")
    if os.environ.get(TRANSCRIPT_ENV):
        Path(os.environ[TRANSCRIPT_ENV]).write_text(json.dumps(client.transcript, indent=2))
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert json.loads(contents.text)["run"] == recorded["run"]


async def _every_reading_tool_answers(client: Client, run_id: str, project: Path, causes: dict[str, Any]) -> None:
    """The other reading tools on the same run: each answer passed the client's check
    against its output schema (``Client.answer``) and says what the CLI's JSON says."""
    (recompile,) = [c for c in causes["causes"] if c["kind"] == "recompile"]
    cid = recompile["compile_ids"][0]
    for name, extra, cli_args in [
        ("summary", {}, ["summary", run_id]),
        ("recompiles", {}, ["recompiles", run_id]),
        ("shapes", {}, ["shapes", run_id]),
        ("kernels", {}, ["kernels", run_id]),
        ("cost", {}, ["cost", run_id]),
        ("code", {"compile_id": cid}, ["code", cid, run_id]),
        ("graph", {"compile_id": cid}, ["graph", run_id, cid]),
    ]:
        answer = await client.answer(name, run=run_id, **extra)
        cli = _cli_json(*cli_args, cwd=project)
        cli.pop("environment", None), answer.pop("environment", None)  # (the same machine, read twice)
        assert answer == cli, name
    kernels = await client.answer("kernels", run=run_id)
    first = kernels["kernels"][0]
    kernel = await client.answer("kernel", run=run_id, name=first["name"], compile=first["compile_id"])
    assert kernel == _cli_json("kernel", first["name"], run_id, "--compile", first["compile_id"], cwd=project)
    dot = await client.answer("graph", run=run_id, compile_id=cid, format="dot")
    assert dot["dot"].startswith("digraph") and dot["compile_id"] == cid
    assert (await client.answer("failures", run=run_id))["failures"] == []
    runs = await client.answer("runs")
    assert [r["id"] for r in runs["runs"]] == [run_id]


@pytest.mark.corpus
async def test_a_fix_that_crashes_the_program_is_not_verified(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    project = _project(workspace, "agent_crash.py")
    async with serving(workspace) as client:
        recorded = await client.answer("record", script="agent_crash.py", cwd="project")
        run_id = Path(recorded["run"]).name
        runs = "project/.dyn-inspect/runs"
        assert (recorded["recompiles"], recorded["exit_code"]) == (1, 0)
        (plan,) = (await client.answer("fix_plans", run=run_id, runs_dir=runs))["plans"]
        assert plan["code"] == "torch._dynamo.mark_dynamic(x, 0)"
        _git_apply(plan["diff"], project)  # in place this time
        verdict = await client.answer("verify", run=run_id, runs_dir=runs)
    assert verdict["state"] == "not_verified"
    assert verdict["exit_code"] != 0 and verdict["before_exit_code"] == 0
    assert verdict["reason"].startswith(f"the re-run exited {verdict['exit_code']}"), verdict["reason"]
    assert verdict["exception"] is not None and "ConstraintViolation" in verdict["exception"]["type"], verdict["exception"]


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.corpus
async def test_bad_input_gets_one_error_each_and_the_server_keeps_serving(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hang.py").write_text("import time\nimport torch\n\nprint('hanging', flush=True)\ntime.sleep(600)\n")
    marker = tmp_path / "PWNED"
    crafted = crafted_run(workspace, "command", ["sh", "-c", f"touch {marker}"])  # ws/runs/<id>
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "prog.py").write_text("print('not in the workspace')\n")
    async with serving(workspace) as client:
        assert "no runs in" in await client.error("summary")
        unknown = await client.error("breaks", run="20990101-000000-ffffff", runs_dir="runs")
        assert "20990101-000000-ffffff" in unknown
        missing = await client.error("kernel", runs_dir="runs")
        assert "bad arguments" in missing and "name" in missing
        assert "bad arguments" in await client.error("summary", runs_dir="runs", colour="red")
        assert "no tool 'nope'" in await client.error("nope")

        # a program that hangs: stopped at the timeout, its processes gone
        hang = await client.error("record", script="hang.py", timeout_s=8)
        assert "did not finish within 8s" in hang
        left = subprocess.run(["pgrep", "-f", str(workspace / "hang.py")], capture_output=True, text=True)
        assert left.stdout.strip() == "", left.stdout

        # a hostile run directory: the command it names is never run (docs/security.md)
        refused = await client.error("verify", run=str(crafted))
        assert "--yes" in refused and f"touch {marker}" in refused
        assert not marker.exists()
        # ... and one whose log is a FIFO is read without hanging (the FIFO ignored)
        os.mkfifo(crafted / "p1.jsonl")
        summary = await client.answer("summary", run=str(crafted))
        assert summary["run"] == str(crafted)

        # paths outside the workspace roots
        assert "outside the workspace" in await client.error("record", script=str(outside / "prog.py"))
        assert "outside the workspace" in await client.error("runs", runs_dir=str(outside))
        (workspace / "runs" / "escape").symlink_to(outside, target_is_directory=True)
        assert "outside the workspace" in await client.error("summary", run="escape", runs_dir="runs")

        # still serving
        runs = await client.answer("runs", runs_dir="runs")
    assert crafted.name in [r["id"] for r in runs["runs"]]
