"""Crafted values in a run and on the language server's wire (issue 29, item 8).

The values a run carries are data, never markup, links or control: a ``[/]`` in a break
type, a path or a kernel name (Rich markup), ``t`` = 1e300 or Infinity (time conversion),
a ``javascript:`` url (an href, a Markdown link), 20k unknown event kinds (one warning
line). ``tests/hostile/make_corpus.py`` writes a mutated copy of a recorded run per
scenario, and every CLI read command runs on each (the 18 of a scenario in one process,
``tests/cli_batch.py``, each through the CLI's ``main``): it exits 0, 1 (check's
verdict) or 2 with a one-line message, and never prints a traceback. The language server
gets a huge ``Content-Length`` and a request with wrongly typed params over real pipes.
See also tests/inspector/test_hostile.py (the run directory's files: FIFOs, symlinks, digests).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "hostile"))
from make_corpus import MARKUP, OWNED_ELSEWHERE, SCENARIOS, make_corpus  # noqa: E402

from corpus_support import markdown_html, markdown_text  # noqa: E402
from dyn_inspect.inspector.links import link_url  # noqa: E402
from dyn_inspect.inspector.run import Run  # noqa: E402

CLI = [sys.executable, "-m", "dyn_inspect.cli"]
COMMANDS = [
    ["summary"],
    ["summary", "--json"],
    ["breaks"],
    ["breaks", "--json"],
    ["recompiles"],
    ["recompiles", "--json"],
    ["causes"],
    ["causes", "--json"],
    ["kernels"],
    ["kernels", "--json"],
    ["cache"],
    ["cache", "--json"],
    ["shapes"],
    ["shapes", "--json"],
    ["check"],
    ["check", "--json"],
    ["export"],
    ["export", "--json"],
]


def _env() -> dict[str, str]:
    """The commands' environment: none of our variables but the session's index key, no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_") or k == "DYN_INSPECT_KEY_DIR"}
    env["NO_COLOR"] = "1"
    return env


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=_env(), stdin=subprocess.DEVNULL)


def cli_batch(argvs: list[list[str]], out: Path, timeout: float = 600) -> list[subprocess.CompletedProcess[str]]:
    """Several commands in one process (tests/cli_batch.py), with ``cli``'s environment."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).parents[1] / "cli_batch.py"), str(out)],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
    )
    # what reached the process's own streams (a handler bound to them before a command
    # started) is checked too
    assert proc.returncode == 0 and "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    return [subprocess.CompletedProcess(argv, r["rc"], r["out"], r["err"]) for argv, r in zip(argvs, results, strict=True)]


def answered_cleanly(done: subprocess.CompletedProcess[str], what: object) -> None:
    out = done.stdout + done.stderr
    assert "Traceback" not in out, (what, done.stderr[-3000:])
    if done.returncode == 2:  # a refusal is one line
        assert len([line for line in done.stderr.splitlines() if line.strip()]) == 1, (what, done.stderr[-2000:])
    else:
        assert done.returncode in (0, 1), (what, done.returncode, done.stderr[-2000:])  # 1: check's verdict


@pytest.fixture(scope="module")
def hostile_corpus(breaks_run: Run, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_corpus(breaks_run.path, tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=f"owned by {OWNED_ELSEWHERE[n]}", strict=False)) if n in OWNED_ELSEWHERE else n
        for n in SCENARIOS
    ],
)
def test_every_read_command_answers_a_hostile_run(scenario: str, hostile_corpus: dict[str, Path], tmp_path: Path) -> None:
    run_dir = hostile_corpus[scenario]
    argvs = []
    for command in COMMANDS:
        extra = ["-o", str(tmp_path / f"{command[-1]}.zip")] if command[0] == "export" else []
        argvs.append([command[0], str(run_dir), *command[1:], *extra])
    # One process for the 18 commands (tests/cli_batch.py): each goes through the CLI's main
    # as the console script does; only the interpreter's start-up is shared.
    for command, done in zip(COMMANDS, cli_batch(argvs, tmp_path / "answers.json"), strict=True):
        answered_cleanly(done, (scenario, command))


def test_markup_in_names_is_printed_as_text(hostile_corpus: dict[str, Path]) -> None:
    """Rich parsed table cells as markup: ``[/]`` in a break type raised MarkupError."""
    run_dir = hostile_corpus["markup_names"]
    for command in ("breaks", "kernels", "summary"):
        done = cli(command, str(run_dir))
        answered_cleanly(done, command)
        assert done.returncode == 0 and MARKUP in done.stdout, (command, done.stdout[-2000:])


def test_times_of_1e300_and_infinity_export(hostile_corpus: dict[str, Path], tmp_path: Path) -> None:
    """time.gmtime(1e300) raised OverflowError writing the bundle's TORCH_TRACE log."""
    for scenario in ("numbers_1e300", "numbers_infinity"):
        out = tmp_path / f"{scenario}.zip"
        done = cli("export", str(hostile_corpus[scenario]), "-o", str(out))
        answered_cleanly(done, scenario)
        assert done.returncode == 0 and zipfile.is_zipfile(out), done.stderr[-2000:]


def test_only_https_urls_become_links(hostile_corpus: dict[str, Path], tmp_path: Path) -> None:
    run_dir = hostile_corpus["javascript_url"]
    out = tmp_path / "b.zip"
    done = cli("export", str(run_dir), "-o", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    with zipfile.ZipFile(out) as z:
        html = z.read("report.html").decode()
        md = z.read("summary.md").decode()
    assert "javascript:" not in html.lower() and "](javascript" not in md
    assert "GB0" in html  # the break ids are still there, as text
    assert link_url("https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html")
    for url in (
        "javascript:alert(1)",
        "http://x.org/",
        "https://x.org/a) [b](javascript:alert(1)",
        'https://x.org/"onmouseover=',
        "data:text/html,x",
    ):
        assert link_url(url) is None, url


def test_the_unknown_kinds_warning_is_bounded(hostile_corpus: dict[str, Path]) -> None:
    done = cli("breaks", str(hostile_corpus["unknown_kinds"]))  # summary prints no read warnings
    answered_cleanly(done, "breaks")
    warning = [line for line in done.stderr.splitlines() if "unknown kind" in line]
    assert len(warning) == 1 and len(warning[0]) < 1000, [len(w) for w in warning]
    assert "and 19995 more" in warning[0]


def test_hover_and_diagnostic_make_no_javascript_link(hostile_corpus: dict[str, Path]) -> None:
    from dyn_inspect.lsp import diagnostics, hover

    run = Run(hostile_corpus["javascript_url"])
    b = next(g.first for g in run.model.break_groups() if g.first.url)
    assert b.url.startswith("javascript:")

    from dyn_inspect.inspector.reports.findings import BreakFinding

    md = "\n".join(hover._break_md(BreakFinding("k", b.loc, b, "headline", count=1, compile_ids=["0/0"])))
    assert "](javascript" not in md and "javascript:" in md  # shown as text
    assert diagnostics.link_url(b.url) is None


def _no_live_markdown(md: str) -> None:
    page = markdown_html(md)
    assert "<img" not in page and "attacker.example" not in "".join(re.findall(r'(?:src|href)="[^"]*"', page)), page[-3000:]
    assert 'href="javascript' not in page.lower(), page[-3000:]


def test_markdown_from_a_run_makes_no_link_or_image(hostile_corpus: dict[str, Path], tmp_path: Path) -> None:
    """A break's reason, explanation, hints and torch's debug context (the last with a fence
    of its own) became a live remote image and a javascript: link in the hover and in the
    bundle's summary.md (the adversarial pass of issue 29, 8t and 8u); now they render as
    the text they are."""
    from dyn_inspect.inspector.reports.findings import BreakFinding
    from dyn_inspect.lsp import hover

    run_dir = hostile_corpus["markdown_text"]
    groups = Run(run_dir).model.break_groups()
    assert groups and all("attacker.example" in (g.first.reason or "") for g in groups)
    for g in groups:
        md = "\n".join(hover._break_md(BreakFinding("k", g.first.loc, g.first, "headline", count=1, compile_ids=["0/0"])))
        _no_live_markdown(md)
        assert "![px](https://attacker.example/p.png)" in markdown_text(md)  # shown, as text
    out = tmp_path / "b.zip"
    done = cli("export", str(run_dir), "-o", str(out), "--no-pictures")
    assert done.returncode == 0, done.stderr[-2000:]
    with zipfile.ZipFile(out) as z:
        md = z.read("summary.md").decode()
    _no_live_markdown(md)
    assert "![px](https://attacker.example/p.png)" in markdown_text(md)


def test_function_details_markdown_makes_no_link_or_image() -> None:
    """The details document (Neovim, Helix) quotes the run's names, guards and suggestions
    as the hover does: as text."""
    from make_corpus import MARKDOWN

    from dyn_inspect.lsp.code_lens import details_markdown

    evil = f"f {MARKDOWN}"
    d = {"function": evil, "file": evil, "line": 3, "title": evil, "run": evil, "compiles": 2, "compile_ids": [evil],
         "recompiles": [{"compile_id": evil, "part": evil, "part_line": 4, "reasons": [evil], "suggestion": evil, "code": evil}],
         "recompile_limit": evil}
    md = details_markdown(d)
    _no_live_markdown(md)
    assert markdown_text(md).count("![px](https://attacker.example/p.png)") >= 8


# -- the language server's wire ------------------------------------------------------------


def _message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def _serve(data: bytes, cwd: Path) -> tuple[int, bytes, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYN_INSPECT_")}
    proc = subprocess.Popen([*CLI, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
    try:
        out, err = proc.communicate(data, timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err.decode()


def _responses(out: bytes) -> dict[object, dict]:
    found = {}
    for chunk in out.split(b"Content-Length: ")[1:]:
        body = chunk.split(b"\r\n\r\n", 1)[1]
        message = json.loads(body)
        if "id" in message:
            found[message["id"]] = message
    return found


INIT = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
]
SHUTDOWN = [{"jsonrpc": "2.0", "id": 99, "method": "shutdown", "params": None}, {"jsonrpc": "2.0", "method": "exit", "params": None}]


def test_lsp_wrongly_typed_request_gets_an_error_response(tmp_path: Path) -> None:
    """pygls raised inside json.loads: no answer for id 7, a traceback on stderr."""
    bad = {"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {"textDocument": 5, "position": "x"}}
    bad_note = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": []}}
    data = b"".join(_message(m) for m in [*INIT, bad, bad_note, *SHUTDOWN])
    code, out, err = _serve(data, tmp_path)
    answers = _responses(out)
    assert answers[7]["error"]["code"] == -32602, answers.get(7)
    assert 99 in answers and "error" not in answers[99]  # the next request is answered
    assert code == 0 and "Traceback" not in err, err[-3000:]


def test_lsp_huge_content_length_exits_with_one_line(tmp_path: Path) -> None:
    """stdin.read(99999999999) raised MemoryError out of the server's loop (a traceback)."""
    data = b"".join(_message(m) for m in INIT) + b"Content-Length: 99999999999\r\n\r\n{}" + b"".join(_message(m) for m in SHUTDOWN)
    code, out, err = _serve(data, tmp_path)
    assert 1 in _responses(out)
    assert "Traceback" not in err and "MemoryError" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if "Content-Length" in line]
    assert len(lines) == 1 and "99999999999 bytes" in lines[0], err[-2000:]
    assert code == 1


def test_lsp_malformed_header_does_not_wedge_the_stream(tmp_path: Path) -> None:
    data = b"".join(_message(m) for m in INIT) + b"Content-Length: nope\r\n\r\n" + b"".join(_message(m) for m in SHUTDOWN)
    code, out, err = _serve(data, tmp_path)
    assert 99 in _responses(out) and code == 0 and "Traceback" not in err, err[-2000:]


def test_runs_lists_every_run_beside_hostile_ones(hostile_corpus: dict[str, Path], tmp_path: Path) -> None:
    """One crafted run (a start time of 1e300, an integer >= 2**64) made `runs` traceback
    for the whole directory: each bad run is one row, the others are listed as usual."""
    import shutil

    root = tmp_path / "runs"
    root.mkdir()
    for i, (name, run_dir) in enumerate(sorted(hostile_corpus.items())):
        shutil.copytree(run_dir, root / f"20260101-0000{i:02d}-{name.encode().hex()[:6]}", symlinks=True)
    for extra in ([], ["--json"]):
        done = cli("runs", "--runs-dir", str(root), *extra)
        answered_cleanly(done, ("runs", extra))
        assert done.returncode == 0, done.stderr[-2000:]
    listed = json.loads(done.stdout)["runs"]
    assert len(listed) == len(hostile_corpus)
    assert sum(r["status"] == "finished" for r in listed) >= 5  # the runs left readable read as before


def test_lsp_bodies_that_are_no_messages_are_dropped_in_one_line_each(tmp_path: Path) -> None:
    """Issue 29's pass: a body that is no JSON-RPC message (an array, a number, text that is
    not JSON, JSON nested 200k deep, a method that is a number) got a traceback each on the
    server's stderr (the editor's output panel); a shutdown arriving while another request
    runs raised 'dictionary changed size during iteration' in pygls and was answered with an
    error. Each is one line now, and every request after them is answered."""
    bodies = [
        b"[1, 2, 3]",
        b"5",
        b"{not json",
        b"[" * 200_000 + b"]" * 200_000,
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": 5}).encode(),
    ]
    framed = b"".join(f"Content-Length: {len(b)}\r\n\r\n".encode() + b for b in bodies)
    slow = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "workspace/executeCommand",
        "params": {"command": "dynInspect.verify", "arguments": [str(tmp_path / "none")]},
    }
    data = b"".join(_message(m) for m in INIT) + framed + _message(slow) + b"".join(_message(m) for m in SHUTDOWN)
    code, out, err = _serve(data, tmp_path)
    answers = _responses(out)
    assert answers[5]["error"]["code"] == -32600  # the request whose method is a number: Invalid Request
    assert 99 in answers and "error" not in answers[99], answers.get(99)
    assert code == 0 and "Traceback" not in err, err[-3000:]
    dropped = [line for line in err.splitlines() if "dropped" in line]
    assert len(dropped) == len(bodies), err[-3000:]
