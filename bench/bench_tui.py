"""TUI performance on a large synthetic run (``bench/synthetic.py``): prints figures, asserts
nothing.

    python bench/bench_tui.py [--events 100000] [--out DIR] [--no-tmux]

Measures, headless (Textual's pilot, 140×40):

- first paint: time from starting the app on ``dyn-inspect open RUN`` to its first frame
  (the run still loading in the background), and to the overview showing the whole run;
- scrolling: ↓ held (key repeat, 30/s) in the graph-breaks and kernels tables: how long a
  key takes to move the cursor, the longest the event loop stalls (a frozen screen), and
  how many table lines are drawn per key (DataTable draws only the visible rows);
- live latency: a new graph break appended to the (already 100k-event) log until its row is
  in the table — median, p95 and max over many appends;
- memory: RSS after opening the run, and after pushing a million lines of program output
  through the output pane (its scrollback is bounded);

and, with tmux installed, the first paint in a real terminal: from spawning ``dyn-inspect
open RUN`` (interpreter start and imports included, with dyn-inspect's bytecode written
first, as an installed program has it) until the overview's counts are on the screen,
over ``--tmux-tries`` starts: drawn from the run's saved first screen (what every open of a
finished run does), and read from the index first (an index without a saved first screen),
interleaved with the same measure for a minimal Textual app (the floor on this machine:
Python, Textual and one frame).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil  # noqa: E402
from synthetic import make_run  # noqa: E402
from textual import events  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from dyn_inspect.engine.eventlog import EventLog  # noqa: E402
from dyn_inspect.engine.schema import GraphBreak, Loc  # noqa: E402
from dyn_inspect.inspector.run import Run  # noqa: E402
from dyn_inspect.tui import digest, first_screen  # noqa: E402
from dyn_inspect.tui.app import InspectorApp  # noqa: E402
from dyn_inspect.tui.display import duration  # noqa: E402

SIZE = (140, 40)


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def first_paint(run_dir: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    app = InspectorApp(run_dir, clock=time.time)
    async with app.run_test(size=SIZE) as pilot:
        ready = time.perf_counter() - t0  # the first frame (header, tabs, "loading")
        while app.loaded_run is None or app.synced_events < app.loaded_run.model.event_count:
            await pilot.pause(0.005)
        data = time.perf_counter() - t0
        events = app.loaded_run.model.event_count
    return {"first_frame": ready, "overview_filled": data, "events": events}


async def scrolling(run_dir: Path, presses: int = 150, rate_hz: float = 30.0) -> dict[str, object]:
    """Hold ↓ (key repeat at ``rate_hz``) in a table: how long each key takes to move the
    cursor, the longest the event loop is blocked (a frozen screen), and how many table
    lines are drawn per key (DataTable draws only the rows on screen)."""
    app = InspectorApp(run_dir, clock=time.time)
    out: dict[str, object] = {}
    async with app.run_test(size=SIZE) as pilot:
        while app.loaded_run is None:
            await pilot.pause(0.01)
        driver = app._driver
        assert driver is not None
        for view, table_id in (("breaks", "#breaks-table"), ("kernels", "#kernels-table")):
            await pilot.press({"breaks": "2", "kernels": "5"}[view])
            await pilot.pause(0.3)
            table = app.query_one(table_id, DataTable)
            rendered = 0
            original = table.render_line

            def counting(y: int, _original=original):  # noqa: ANN001, ANN202
                nonlocal rendered
                rendered += 1
                return _original(y)

            table.render_line = counting  # type: ignore[method-assign]
            stalls: list[float] = []
            where: list[tuple[int, float]] = []
            running = True

            # The monitor must see this iteration's `running` flip to False (and append to its
            # lists): it is awaited before the loop moves on, so the late binding is intended.
            async def monitor() -> None:
                last = time.perf_counter()
                while running:  # noqa: B023
                    await asyncio.sleep(0.001)
                    now = time.perf_counter()
                    stalls.append(now - last)  # noqa: B023
                    if now - last > 0.1:
                        where.append((len(lags), round(now - last, 3)))  # noqa: B023
                    last = now

            watcher = asyncio.create_task(monitor())
            lags: list[float] = []
            n = min(presses, table.row_count - 1)
            for _ in range(n):
                target = table.cursor_row + 1
                t = time.perf_counter()
                driver.send_message(events.Key("down", None))
                while table.cursor_row < target:
                    await asyncio.sleep(0.0005)
                lags.append(time.perf_counter() - t)
                await asyncio.sleep(max(0.0, 1 / rate_hz - lags[-1]))
            settle_t = time.perf_counter()
            view_widget = app.view(view)
            while view_widget.detail_pending:
                await asyncio.sleep(0.001)
            await pilot.pause(0.05)
            settle = time.perf_counter() - settle_t
            running = False
            await watcher
            table.render_line = original  # type: ignore[method-assign]
            lags.sort()
            out[view] = {
                "rows": table.row_count,
                "keys": n,
                "lag_median": statistics.median(lags),
                "lag_p95": lags[int(len(lags) * 0.95) - 1],
                "max_stall": max(stalls),
                "detail_after_release": settle,
                "lines_per_key": rendered / max(1, n),
                "stalls_at": where,
            }
    return out


async def live_latency(source_run: Path, work: Path, appends: int = 40) -> dict[str, float]:
    """Copy the big run, drop its run_end (so it is "running"), follow it, append breaks."""
    live = work / "live-run"
    shutil.copytree(source_run, live, symlinks=True)
    launcher = (live / "launcher.jsonl").read_text().splitlines(keepends=True)
    (live / "launcher.jsonl").write_text("".join(line for line in launcher if '"run_end"' not in line))
    proc_log = next(live.glob("p*.jsonl"))
    writer = EventLog(live, proc_log.name)
    app = InspectorApp(live, clock=time.time)
    latencies: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        while app.loaded_run is None or app.synced_events < app.loaded_run.model.event_count:
            await pilot.pause(0.01)
        await pilot.press("2")
        await pilot.pause(0.2)
        table = app.query_one("#breaks-table", DataTable)
        for i in range(appends):
            loc = Loc(file=str(live / f"new_{i}.py"), line=10 + i, name="forward")
            event = GraphBreak(key=f"bench:{i}", gb_type="Bench break", loc=loc, gb_id="GB9999", user_stack=[loc], cid="0/0", t=time.time())
            before = table.row_count
            t = time.perf_counter()
            writer.write(event)
            while table.row_count == before:
                await pilot.pause(0.002)
            latencies.append(time.perf_counter() - t)
            await pilot.pause(0.037 * (i % 5))  # vary the phase against the 100 ms poll
    writer.close()
    latencies.sort()
    return {
        "median": statistics.median(latencies),
        "p95": latencies[int(len(latencies) * 0.95) - 1],
        "max": latencies[-1],
    }


async def memory(run_dir: Path) -> dict[str, float]:
    gc.collect()
    base = rss_mb()
    app = InspectorApp(run_dir, clock=time.time)
    out: dict[str, float] = {"before": base}
    async with app.run_test(size=SIZE) as pilot:
        while app.loaded_run is None or app.synced_events < app.loaded_run.model.event_count:
            await pilot.pause(0.01)
        for key in "23456":  # every view built once
            await pilot.press(key)
            await pilot.pause(0.05)
        gc.collect()
        out["opened"] = rss_mb()
        line = b"step 1234 loss 0.123456 \x1b[32mok\x1b[0m " + b"x" * 60 + b"\n"
        chunk = line * 10_000
        for i in range(100):  # a million lines through the output pane
            app.output_view.write_bytes(chunk)
            if i == 9:
                gc.collect()
                out["after_100k_lines"] = rss_mb()
            await pilot.pause(0)
        gc.collect()
        out["after_1m_lines"] = rss_mb()
        out["lines_kept"] = len(app.output_view.plain_lines())
    return out


def tmux_watch(
    command: str, done: Callable[[str], bool], first: Callable[[str], bool] | None = None, key: str | None = None
) -> tuple[float, float, float | None] | None:
    """Spawn ``command`` in a 140×40 tmux session and watch its screen: seconds until
    ``first`` held (0.0 without one), until ``done`` held, and (``key``: sent once ``done``
    held) until ``done`` no longer holds — the program answered the key; None without tmux
    or after 30 s."""
    tmux = shutil.which("tmux")
    if tmux is None:
        return None
    base = [tmux, "-L", f"bench-tui-{os.getpid()}-{time.monotonic_ns()}", "-f", "/dev/null"]
    seen_first: float | None = None
    t0 = time.perf_counter()
    subprocess.run([*base, "new-session", "-d", "-s", "b", "-x", "140", "-y", "40", f"{command}; sleep 60"], check=True)
    shell = subprocess.run([*base, "display-message", "-p", "-t", "b", "#{pane_pid}"], capture_output=True, text=True).stdout.strip()
    try:
        while time.perf_counter() - t0 < 30:
            screen = subprocess.run([*base, "capture-pane", "-p", "-t", "b"], capture_output=True, text=True).stdout
            if seen_first is None and first is not None and first(screen):
                seen_first = time.perf_counter() - t0
            if done(screen):
                shown = time.perf_counter() - t0
                if key is None:
                    return (seen_first or 0.0), shown, None
                subprocess.run([*base, "send-keys", "-t", "b", key], check=True)
                while time.perf_counter() - t0 < 30:
                    if not done(subprocess.run([*base, "capture-pane", "-p", "-t", "b"], capture_output=True, text=True).stdout):
                        return (seen_first or 0.0), shown, time.perf_counter() - t0
                    time.sleep(0.01)
                return None
            time.sleep(0.01)
        return None
    finally:
        children = _children(int(shell)) if shell.isdigit() else []
        subprocess.run([*base, "kill-server"], capture_output=True)
        # Wait for the program to have exited (a TUI takes a while to shut down): the next
        # measure would share the CPU with it otherwise.
        for pid in children:
            try:
                psutil.Process(pid).wait(timeout=10)
            except (psutil.NoSuchProcess, psutil.TimeoutExpired):
                pass


def _children(pid: int) -> list[int]:
    try:
        return [pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))]
    except psutil.NoSuchProcess:
        return []


def overview_shown(run_dir: Path) -> Callable[[str], bool]:
    """Whether a screen shows the run's overview with its data: the counts grid with this
    run's kernel count and its compile time (not a loading screen, nor an empty run)."""
    o = digest.overview(Run(run_dir).model)
    kernels = re.compile(rf"\b{o.kernels}\s+kernels\b")
    compile_time = re.compile(rf"{re.escape(duration(o.compile_time))}\s+compile time")
    return lambda screen: bool(kernels.search(screen) and compile_time.search(screen))


def tmux_first_paint(
    run_dir: Path, no_index: bool = False, no_first_screen: bool = False, no_frame: bool = False
) -> tuple[float, float, float | None] | None:
    """(first frame, overview with data, the key ``2`` answered) seconds after spawning
    ``dyn-inspect open``; ``no_index``: with DYN_INSPECT_NO_INDEX set (the logs read as on a
    first open); ``no_first_screen``: without the run's saved first screen (an index written
    by the language server or an older dyn-inspect: the run is read before the first frame);
    ``no_frame``: without replaying the run's last first frame (DYN_INSPECT_NO_FRAME)."""
    if no_first_screen:
        first_screen.forget(run_dir)
    elif first_screen.load(run_dir) is None:
        # (What the index's writer saved: a measure without it, ended at its first frame,
        # leaves none — the TUI saves it only after that frame.)
        first_screen.save(Run(run_dir))
    dyn = Path(sys.executable).parent / "dyn-inspect"
    env = ("DYN_INSPECT_NO_INDEX=1 " if no_index else "") + ("DYN_INSPECT_NO_FRAME=1 " if no_frame or no_first_screen else "")
    return tmux_watch(f"{env}{dyn} open {run_dir}", done=overview_shown(run_dir), first=lambda screen: "dyn-inspect" in screen, key="2")


FLOOR_APP = """
from textual.app import App
from textual.widgets import Footer, Static, TabbedContent, TabPane


class Floor(App):
    def compose(self):
        with TabbedContent():
            with TabPane("Overview"):
                yield Static("dyn-inspect Kernels (1) compile time")
        yield Footer()


Floor().run()
"""


def tmux_floor() -> float | None:
    """The same measure for the smallest Textual app with tabs (no run, none of ours): what
    this machine takes to start Python, import Textual and draw a first frame in tmux."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(FLOOR_APP)
    try:
        seen = tmux_watch(f"{sys.executable} {f.name}", done=lambda screen: "Kernels (1)" in screen)
    finally:
        os.unlink(f.name)
    return seen[1] if seen is not None else None


def compile_bytecode() -> None:
    """Write dyn-inspect's bytecode, as an installed program has it after its first start
    (pip writes it at install time). Where PYTHONDONTWRITEBYTECODE is set and the package is an
    editable install, every start would compile our sources again (0.1 s more on this VM)."""
    import compileall
    import importlib

    for name in ("engine", "inspector", "lsp", "tui", "cli"):
        module = importlib.import_module(f"dyn_inspect.{name}")
        compileall.compile_dir(str(Path(module.__file__ or "").parent), quiet=1)


def import_time() -> float:
    """Interpreter start plus importing the TUI (what every `dyn-inspect open` pays first)."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import dyn_inspect.tui.app"], check=True)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--out", type=Path, help="keep the synthetic run here (default: a temp dir)")
    parser.add_argument("--no-tmux", action="store_true")
    parser.add_argument("--tmux-tries", type=int, default=7, help="first paints measured in tmux (and as many of the floor)")
    parser.add_argument("--no-live", action="store_true", help="skip the live-latency part (it copies the run)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory probe (every view built, 1M output lines)")
    parser.add_argument("--run", type=Path, help="measure this run instead of a new synthetic one (e.g. a 1M-event run)")
    parser.add_argument("--memory-probe", type=Path, help=argparse.SUPPRESS)  # internal: memory in a fresh process
    args = parser.parse_args(argv)
    if args.memory_probe is not None:
        print(json.dumps(asyncio.run(memory(args.memory_probe))))
        return 0
    work = args.out or Path(tempfile.mkdtemp(prefix="bench-tui-"))
    t = time.perf_counter()
    run_dir = args.run.resolve() if args.run else make_run(work / "runs", args.events)
    size = sum(f.stat().st_size for f in run_dir.glob("*.jsonl")) / 2**20
    print(
        f"run: {size:.0f} MiB of logs at {run_dir}"
        + ("" if args.run else f" (synthetic, {args.events} events, {time.perf_counter() - t:.1f}s to write)")
    )
    # The first open of a finished run reads its logs and writes its index; every later
    # open (what is measured below) reads the index.
    t = time.perf_counter()
    opened = Run(run_dir, use_index=False)
    print(f"open from the logs: {ms(time.perf_counter() - t)} ({opened.model.event_count} events)")
    del opened
    t = time.perf_counter()
    opened = Run(run_dir)
    written = time.perf_counter() - t
    t = time.perf_counter()
    opened = Run(run_dir)
    print(
        f"index: {'read' if opened.from_index else 'NOT USED'}; open from it {ms(time.perf_counter() - t)} (the open that wrote it: {ms(written)})"
    )
    t = time.perf_counter()
    saved = first_screen.save(opened)  # as every dyn-inspect command that writes an index does
    print(f"first screen: {'saved' if saved else 'NOT SAVED'} in {ms(time.perf_counter() - t)}")
    del opened
    gc.collect()

    paint = asyncio.run(first_paint(run_dir))
    print(
        f"first paint (headless): first frame {ms(paint['first_frame'])}, overview with all {int(paint['events'])} events {ms(paint['overview_filled'])}"
    )
    print(f"interpreter start + importing the TUI: {ms(import_time())}")
    if not args.no_tmux:
        compile_bytecode()
        real = tmux_first_paint(run_dir, no_index=True)
        if real is not None:
            print(
                f"first paint in tmux from spawning `dyn-inspect open`, from the logs (DYN_INSPECT_NO_INDEX): first frame {ms(real[0])}, overview with data {ms(real[1])}"
            )
        # The open that keeps the run's first frame (the TUI keeps it after drawing it from
        # the saved first screen); the opens measured below replay it.
        tmux_first_paint(run_dir)
        # (Interleaved, so that the machine's ups and downs fall on all of them alike.)
        replayed: list[tuple[float, float, float | None]] = []
        tries: list[tuple[float, float, float | None]] = []
        unsaved: list[tuple[float, float, float | None]] = []
        floors: list[float] = []
        for _ in range(args.tmux_tries):
            for out, measure in (
                (replayed, lambda: tmux_first_paint(run_dir)),
                (tries, lambda: tmux_first_paint(run_dir, no_frame=True)),
                (unsaved, lambda: tmux_first_paint(run_dir, no_first_screen=True)),
                (floors, tmux_floor),
            ):
                seen = measure()
                if seen is not None:
                    out.append(seen)  # type: ignore[arg-type]
        for what, seen in (
            ("the run's last first frame replayed", replayed),
            ("its saved first screen (DYN_INSPECT_NO_FRAME)", tries),
            ("the index without a saved first screen", unsaved),
        ):
            if seen:
                firsts, filled = sorted(t[0] for t in seen), sorted(t[1] for t in seen)
                answered = sorted(t[2] for t in seen if t[2] is not None)
                print(
                    f"first paint in tmux from spawning `dyn-inspect open`, from {what}, {len(seen)} tries: first frame "
                    f"median {ms(statistics.median(firsts))} ({ms(firsts[0])}-{ms(firsts[-1])}), overview with data median "
                    f"{ms(statistics.median(filled))} ({ms(filled[0])}-{ms(filled[-1])})"
                    + (
                        f"; the key 2 (pressed as the overview showed) answered median {ms(statistics.median(answered))} "
                        f"({ms(answered[0])}-{ms(answered[-1])})"
                        if answered
                        else ""
                    )
                )
        if floors:
            floors.sort()
            print(
                f"the floor, a minimal Textual app with tabs in tmux (Python + Textual + a first frame), {len(floors)} tries: "
                f"median {ms(statistics.median(floors))} ({ms(floors[0])}-{ms(floors[-1])})"
            )
    scroll = asyncio.run(scrolling(run_dir))
    for view, figures in scroll.items():
        f = figures  # type: ignore[assignment]
        print(
            f"scroll {view} ({f['rows']} rows, ↓ held for {f['keys']} keys at 30/s): key → cursor moved median "
            f"{ms(f['lag_median'])}, p95 {ms(f['lag_p95'])}; longest event-loop stall {ms(f['max_stall'])}; "
            f"details shown {ms(f['detail_after_release'])} after release; {f['lines_per_key']:.1f} table lines drawn per key"
        )
    if not args.no_live:
        live = asyncio.run(live_latency(run_dir, work))
        print(f"live: appended event → row in the table: median {ms(live['median'])}, p95 {ms(live['p95'])}, max {ms(live['max'])}")
    if args.no_memory:
        return 0
    probe = subprocess.run([sys.executable, __file__, "--memory-probe", str(run_dir)], capture_output=True, text=True, check=True)
    mem = json.loads(probe.stdout.strip().splitlines()[-1])
    print(
        f"memory (RSS, fresh process): {mem['before']:.0f} MiB after imports, {mem['opened']:.0f} MiB with the run open (every view built), "
        f"{mem['after_100k_lines']:.0f} MiB after 100k output lines, {mem['after_1m_lines']:.0f} MiB after 1M "
        f"(the pane keeps {int(mem['lines_kept'])})"
    )
    if args.out is None and args.run is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
