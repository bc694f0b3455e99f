"""The language server on a 100k-event run: latency of what an editor waits for, and memory.

    python bench/bench_lsp.py [--events 100000] [--files 8] [--hovers 50] [--appends 10]

Makes a synthetic run (``bench/synthetic.py``: the real writer and schema, source files
whose lines match the recorded locations), starts ``python -m dyn_inspect.lsp`` over stdio
as an editor would, and measures from the client side:

- cold start: ``initialize`` → the run loaded and indexed (first diagnostics published);
- first diagnostics for an opened file: ``didOpen`` → its ``publishDiagnostics`` (target
  < 0.3 s);
- hover on a marked line: request → response (target < 50 ms);
- republish after new events: a graph break appended to the live log → the diagnostics of
  its file republished with it (target < 0.2 s);
- memory: the server's resident set size after all of the above (target < 200 MB);
- idle CPU: what following the run costs while nothing happens.

The first of the ``--restarts`` is the first editor start after the run: ``--forget``
removes the run's saved findings first (the server then builds them: the open files'
first), ``--precompute`` makes them as the CLI does when it writes a run's index
(``python -m dyn_inspect.lsp.precompute RUN``, timed here in the foreground).

Prints one line per figure (median and max where repeated). Nothing is asserted: the
figures go in the notes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import psutil
from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import make_run  # noqa: E402

from dyn_inspect.engine.schema import GraphBreak, Loc  # noqa: E402


class Watcher:
    """Timestamps of every publishDiagnostics, per URI."""

    def __init__(self) -> None:
        self.published: dict[str, list[tuple[float, list[types.Diagnostic]]]] = {}
        self.event = asyncio.Event()

    def on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.setdefault(params.uri, []).append((time.perf_counter(), list(params.diagnostics)))
        self.event.set()

    async def until(self, predicate, timeout: float = 60.0) -> float:
        deadline = time.perf_counter() + timeout
        while True:
            found = predicate()
            if found is not None:
                return found
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no matching publishDiagnostics")
            self.event.clear()
            try:
                await asyncio.wait_for(self.event.wait(), timeout=left)
            except asyncio.TimeoutError:
                pass

    def first_after(self, uri: str, since: float, want=lambda ds: True) -> float | None:
        for t, ds in self.published.get(uri, []):
            if t >= since and want(ds):
                return t
        return None


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def start_session(args: argparse.Namespace, workspace: Path, runs_root: Path, first: Path):  # noqa: ANN201
    """A fresh server: initialize, open ``first``, wait for its (non-empty) diagnostics;
    prints the cold-start figures."""
    client = LanguageClient("bench-lsp", "1")
    watcher = Watcher()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        watcher.on_publish(params)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        pass

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_lens_refresh(params: None) -> None:
        pass

    await client.start_io(sys.executable, "-m", "dyn_inspect.lsp", *(["-v", "--log-file", args.server_log] if args.server_log else []))
    server = psutil.Process(client._server.pid)  # type: ignore[union-attr]
    t_init = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True))
            ),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(workspace.as_uri(), "workspace")],
            initialization_options={"dynInspect": {"runsDir": str(runs_root)}},
        )
    )
    client.initialized(types.InitializedParams())

    def open_file(path: Path) -> str:
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(path.as_uri(), "python", 1, path.read_text())))
        return path.as_uri()

    t_ready = time.perf_counter()
    u0 = open_file(first)
    t_cold = await watcher.until(lambda: watcher.first_after(u0, t_init, lambda ds: bool(ds)))
    print(
        f"cold start (initialize → run loaded, indexed, first file published): {ms(t_cold - t_init)}; "
        f"of it, initialized + didOpen → first diagnostics: {ms(t_cold - t_ready)} (target < 300 ms); "
        f"server RSS then {server.memory_info().rss / 2**20:.0f} MB"
    )
    return client, watcher, server, open_file, u0


async def stop_session(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def bench(args: argparse.Namespace) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-lsp-"))
    t0 = time.perf_counter()
    if args.runs is not None:
        # An existing synthetic runs root (bench/synthetic.py OUT_DIR): its newest run and
        # the workspace beside it. The appends below grow that run, as a live run grows
        # (its index then covers a prefix of the log).
        runs_root = args.runs.resolve()
        run = (runs_root / "latest").resolve()
        print(f"run: {run}")
    else:
        runs_root = scratch / "runs"
        run = make_run(runs_root, args.events)
        print(f"synthetic run: {run} ({args.events} events, made in {time.perf_counter() - t0:.1f} s)")
    if not args.no_index:
        from dyn_inspect.inspector.run import Run

        t = time.perf_counter()
        opened = Run(run)
        print(f"index: {'read' if opened.from_index else 'written'} in {ms(time.perf_counter() - t)} before the server starts")
        del opened
    workspace = runs_root / "workspace"
    if args.forget or args.precompute:
        from dyn_inspect.inspector.index import cache_dir, identity
        from dyn_inspect.lsp.findings_cache import _key_of

        mac = identity(run)
        if mac is not None:
            for roots in ([workspace], None):
                (cache_dir() / "findings" / f"{_key_of(run, mac, roots).hex()}.msgpack").unlink(missing_ok=True)
            print("saved findings of the run removed")
    if args.precompute:
        import resource
        import subprocess

        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dyn_inspect.lsp.precompute", str(run)], capture_output=True, text=True)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(
            f"precompute (what the CLI starts when it writes the index): {ms(time.perf_counter() - t)} wall, "
            f"{usage.ru_utime + usage.ru_stime:.2f} s CPU, max RSS {usage.ru_maxrss / 1024:.0f} MB; {done.stderr.strip()}"
        )
    files = sorted(workspace.glob("block_*.py"))[: args.files]

    first = files[0]
    # Editor restarts: the first start after a run builds the findings (and saves them), the
    # next ones read them back (lsp/findings_cache.py) — each a fresh server process.
    for _ in range(args.restarts):
        again = await start_session(args, workspace, runs_root, first)
        await stop_session(again[0])
    client, watcher, server, open_file, u0 = await start_session(args, workspace, runs_root, first)

    # Warm: open the other files one by one.
    opens = []
    for path in files[1:]:
        t = time.perf_counter()
        u = open_file(path)
        done = await watcher.until(lambda u=u, t=t: watcher.first_after(u, t))
        opens.append(done - t)
    if opens:
        print(
            f"first diagnostics for an opened file: median {ms(statistics.median(opens))}, max {ms(max(opens))} over {len(opens)} files (target < 300 ms)"
        )

    # Hover on marked lines.
    marked = [(u, d.range.start) for u, pubs in watcher.published.items() for d in pubs[-1][1]]
    hovers = []
    for i in range(args.hovers):
        u, pos = marked[i % len(marked)]
        t = time.perf_counter()
        result = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(u), pos))
        hovers.append(time.perf_counter() - t)
        assert result is not None, "hover on a marked line answered nothing"
    print(f"hover on a marked line: median {ms(statistics.median(hovers))}, max {ms(max(hovers))} over {len(hovers)} (target < 50 ms)")

    # Republish after new events: append a graph break on a fresh line of an open file.
    log = next(run.glob("p*.jsonl"))
    lines = first.read_text().splitlines()
    republish = []
    for i in range(args.appends):
        line = 8 + i * 3
        loc = Loc(str(first), line, "forward", 4, len(lines[line - 1]), lines[line - 1].strip())
        event = GraphBreak(
            key=f"bench-{os.getpid()}-{i}",  # new each time: a reused run keeps earlier appends
            gb_type="Bench break",
            loc=loc,
            gb_id="GB9999",
            reason="appended",
            explanation="Appended by the benchmark.",
            user_stack=[loc],
            cid="0/0",
            t=time.time(),
        )
        before = len([d for d in watcher.published[u0][-1][1]])
        data = msgspec.json.encode(event) + b"\n"
        t = time.perf_counter()
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        done = await watcher.until(lambda t=t, before=before: watcher.first_after(u0, t, lambda ds: len(ds) == before + 1))
        republish.append(done - t)
    print(
        f"republish after new events: median {ms(statistics.median(republish))}, max {ms(max(republish))} over {len(republish)} appends (target < 200 ms)"
    )

    rss = server.memory_info().rss / 2**20
    print(f"server memory (RSS): {rss:.0f} MB (target < 200 MB)")

    # The price of following: CPU while nothing happens (it polls every POLL_S).
    before = server.cpu_times()
    await asyncio.sleep(args.idle)
    after = server.cpu_times()
    busy = (after.user + after.system) - (before.user + before.system)
    print(f"idle CPU while following: {100 * busy / args.idle:.1f} % of one core over {args.idle:.0f} s")
    await stop_session(client)
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=8, help="files opened (the run spans 24)")
    parser.add_argument("--hovers", type=int, default=50)
    parser.add_argument("--appends", type=int, default=10)
    parser.add_argument("--keep", action="store_true", help="keep the synthetic run")
    parser.add_argument("--runs", type=Path, help="an existing synthetic runs root (bench/synthetic.py OUT_DIR) instead of a new run")
    parser.add_argument("--restarts", type=int, default=2, help="server starts measured before the main session")
    parser.add_argument("--no-index", action="store_true", help="do not write the run's index first (the server then reads the logs)")
    parser.add_argument("--forget", action="store_true", help="remove the run's saved findings before the first start")
    parser.add_argument("--precompute", action="store_true", help="precompute the run's findings before the first start (as the CLI does)")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of idle following to measure")
    parser.add_argument("--server-log", metavar="FILE", help="the server's debug log (its own timings)")
    asyncio.run(bench(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
