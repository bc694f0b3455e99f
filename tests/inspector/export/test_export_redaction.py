"""``--redact-source``: no line of the user's program survives anywhere in the bundle,
while graphs, kernels, guards, metrics and the TORCH_TRACE log keep their structure."""

from __future__ import annotations

import ast
import json
import re
import zipfile
from pathlib import Path

import pytest

from corpus_support import CORPUS, EXAMPLES, markdown_text, records
from dyn_inspect.engine.importer import import_trace
from dyn_inspect.engine.schema import Blob, UnknownEvent
from dyn_inspect.inspector.export import PictureOptions, export_run
from dyn_inspect.inspector.export.redact import Redactor, mode_for
from dyn_inspect.inspector.run import Run

PROGRAMS = {
    "example_run": [EXAMPLES / "train.py", EXAMPLES / "model_utils.py"],
    "breaks_run": [CORPUS / "breaks.py", CORPUS / "corpus_helpers.py"],
}
# Lines that torch's generated modules contain verbatim (the Repro class's constructor,
# the output module's main guard): present in a bundle whether or not the user wrote them.
GENERATED = {"super().__init__()", 'if __name__ == "__main__":'}


def user_lines(files: list[Path]) -> dict[str, re.Pattern[str]]:
    """Every non-trivial line of the user's program, as a pattern that matches it as a
    whole token run (``return h`` must not match inside ``return handler(...)``)."""
    out: dict[str, re.Pattern[str]] = {}
    for f in files:
        for line in f.read_text().splitlines():
            s = line.strip()
            if len(s) < 8 or s.startswith(("import ", "from ")) or s in GENERATED:
                continue
            out[s] = re.compile(r"(?<![\w])" + re.escape(s) + r"(?![\w])")
    return out


def leaks(z: zipfile.ZipFile, lines: dict[str, re.Pattern[str]]) -> dict[str, list[str]]:
    # One pass per file: an alternation of every line (longest first), then the same
    # token-boundary test as the single patterns.
    any_line = re.compile(
        r"(?<![\w])(?:" + "|".join(re.escape(s) for s in sorted(lines, key=len, reverse=True)) + r")(?![\w])"
    )
    found: dict[str, list[str]] = {}
    for name in z.namelist():
        text = z.read(name).decode("utf-8", "replace")
        # (A shorter line inside a longer match is not reported separately; the longer
        # one already is.)
        for m in set(any_line.findall(text)):
            found.setdefault(m, []).append(name)
    return found


@pytest.fixture(scope="module")
@records
def bundles(request, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[zipfile.ZipFile, zipfile.ZipFile]]:
    out = {}
    for fixture in PROGRAMS:
        run: Run = request.getfixturevalue(fixture)
        tmp = tmp_path_factory.mktemp(fixture)
        # Pictures are drawn within a time budget (3 s by default): on a loaded machine one
        # export could run out of it and the other not. Both bundles must hold the same files.
        pictures = PictureOptions(budget_s=600)
        export_run(run, tmp / "plain.zip", pictures=pictures)
        export_run(run, tmp / "redacted.zip", redact_source=True, pictures=pictures)
        out[fixture] = (zipfile.ZipFile(tmp / "plain.zip"), zipfile.ZipFile(tmp / "redacted.zip"))
    return out


@pytest.mark.parametrize("fixture", list(PROGRAMS))
def test_no_user_source_line_in_any_file(fixture: str, bundles) -> None:
    plain, redacted = bundles[fixture]
    lines = user_lines(PROGRAMS[fixture])
    # Without redaction the model's code is all over the bundle (the check can fail)...
    assert len(leaks(plain, lines)) >= 5
    # ...with it, no line of the program is in any file.
    assert leaks(redacted, lines) == {}
    m = json.loads(redacted.read("manifest.json"))
    assert m["redacted"] is True and m["contains_source"] is False
    assert "redacted" in redacted.read("summary.md").decode()


@pytest.mark.parametrize("fixture", list(PROGRAMS))
def test_redaction_keeps_graphs_kernels_guards_and_metrics(fixture: str, bundles, request, tmp_path: Path) -> None:
    run: Run = request.getfixturevalue(fixture)
    plain, redacted = bundles[fixture]

    def infos(z: zipfile.ZipFile) -> dict[str, dict]:
        out = {}
        for n in z.namelist():
            if n.endswith("/compile.json"):
                info = json.loads(z.read(n))
                out[info["compile_id"]] = info
        return out

    a, b = infos(plain), infos(redacted)
    assert a.keys() == b.keys()
    for cid in a:
        roles_a = sorted(i["role"] for i in a[cid]["files"])
        assert roles_a == sorted(i["role"] for i in b[cid]["files"]), cid
        for item in b[cid]["files"]:
            text = redacted.read(item["path"]).decode()
            role = item["role"]
            if role.startswith("kernel:"):
                # Kernels carry no source text: byte-identical.
                assert text in {plain.read(i["path"]).decode() for i in a[cid]["files"] if i["role"] == role}
            elif role.startswith(("graph:", "output_code:", "repro:")):
                ast.parse(text.replace("class <lambda>", "class _lambda"))  # still valid Python
                code = [ln for ln in text.splitlines() if not ln.strip().startswith("#")]
                originals = [
                    [ln for ln in plain.read(i["path"]).decode().splitlines() if not ln.strip().startswith("#")]
                    for i in a[cid]["files"] if i["role"] == role
                ]
                assert code in originals, (cid, role)  # only comments changed
            elif role == "guards":
                # The same guard tree: every line keeps its guard, only the source comment
                # and string literals (issue 19: values of the user's constants) go.
                def head(ln: str) -> str:
                    return re.split(r"""(?<![\[\w])['"]""", ln.split("  #")[0], maxsplit=1)[0]

                guards = [head(ln) for ln in text.splitlines()]
                orig = [head(ln) for ln in plain.read(next(i["path"] for i in a[cid]["files"] if i["role"] == role)).decode().splitlines()]
                assert guards == orig
    # Metrics are still torch's JSON record with the same numbers.
    for c in run.model.compiles_in_order():
        if c.capture is None or c.capture.metrics is None:
            continue
        original = json.loads(run.blob_text(c.capture.metrics))
        m = json.loads(redacted.read("manifest.json"))
        events = [json.loads(x) for x in redacted.read(f"events/{c.log}").splitlines()]
        cap = next(e for e in events if e["kind"] == "capture" and e["cid"] == c.cid)
        stored = json.loads(redacted.read(m["payloads"][cap["metrics"]["digest"]]))
        for key in ("graph_op_count", "entire_frame_compile_time_s", "guard_count", "co_name", "co_firstlineno"):
            assert stored[key] == original[key]
    # The redacted TORCH_TRACE reads back into the same compiles and break sites.
    (name,) = [n for n in redacted.namelist() if n.startswith("torch_trace/")]
    trace = tmp_path / "trace.log"
    trace.write_bytes(redacted.read(name))
    result = import_trace(trace, out=tmp_path / "imported")
    assert result.files[0].stats.md5_mismatch == 0 and result.normalizer_failures == 0
    back = Run(result.run_dir).model
    assert [c.cid for c in back.compiles_in_order()] == [c.cid for c in run.model.compiles_in_order()]
    # Break sites (type, file, line): columns come from an in-process hook the trace lacks.
    def sites(model) -> set[tuple[str, str, int]]:
        return {(g.first.gb_type, g.loc.file, g.loc.line) for g in model.break_groups()}

    assert sites(back) == sites(run.model)


def test_structural_rules_alone_remove_the_source(example_run: Run) -> None:
    """For an imported log whose source files are not on this machine, the rules that know
    torch's formats (tracebacks, FX `# File:` comments, guard comments, JSON-in-strings,
    pprint'ed stack traces) must be enough on their own."""
    lines = user_lines(PROGRAMS["example_run"])
    bare = Redactor([])  # knows no source line
    checked = 0
    for _, ev in example_run.events():
        if isinstance(ev, UnknownEvent):
            continue
        for field in ev.__struct_fields__:
            blob = getattr(ev, field)
            if not isinstance(blob, Blob):
                continue
            before = example_run.blob_text(blob)
            after = bare.payload(before, mode_for(ev, field))
            for line, pattern in lines.items():
                if pattern.search(before):
                    checked += 1
                    assert not pattern.search(after), (type(ev).__name__, field, line)
    assert checked > 20


# -- issue 19 item 13: a program full of distinctive identifiers and literals ---------------

SECRETIVE = '''"""Distinctive names and literals that --redact-source promises to remove (docs/export.md)."""
import torch

GREETING_QUOKKA = "quokka_literal_7f3a"


def helper_zebra_function(magic_tensor_omega, scale_factor_zulu):
    label_kiwi = "scaling %s" % GREETING_QUOKKA
    partial_wombat = magic_tensor_omega * scale_factor_zulu
    torch._dynamo.graph_break(msg="user message narwhal_9d2c \\x1b[2J\\x1b]0;PWNED_TITLE\\x07")
    if partial_wombat.sum() > 0:
        partial_wombat = partial_wombat + len(label_kiwi)
    print("printed_platypus_4411")
    return partial_wombat.cos()


compiled = torch.compile(helper_zebra_function)
print(compiled(torch.ones(4), 3.5).sum().item())
'''
# What redaction removes everywhere: literals (module constants, format strings, printed
# text, the graph_break message) and terminal escapes. Identifiers stay in graphs and
# guards (they are the structure) but not in bytecode dumps, which are dropped.
LITERALS = ["quokka_literal_7f3a", "scaling %s", "printed_platypus_4411", "narwhal_9d2c", "PWNED_TITLE"]
BYTECODE = ["LOAD_CONST", "STORE_FAST", "LOAD_FAST", "LOAD_GLOBAL"]


@pytest.fixture(scope="module")
@records
def secretive_bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[zipfile.ZipFile, zipfile.ZipFile, Path]:
    import subprocess
    import sys

    work = tmp_path_factory.mktemp("secretive")
    (work / "secretive.py").write_text(SECRETIVE)
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("DYN_INSPECT_")}
    done = subprocess.run([sys.executable, "-m", "dyn_inspect.cli", "--no-tui", "--runs-dir", str(work / "runs"),
                           "secretive.py"], cwd=work, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    run = Run(work / "runs" / "latest")
    export_run(run, work / "plain.zip")
    export_run(run, work / "redacted.zip", redact_source=True)
    return zipfile.ZipFile(work / "plain.zip"), zipfile.ZipFile(work / "redacted.zip"), work


def _files_with(z: zipfile.ZipFile, needle: str) -> list[str]:
    return [n for n in z.namelist() if needle in z.read(n).decode("utf-8", "replace")]


@pytest.mark.corpus
def test_redacted_bundle_holds_no_literal_bytecode_user_or_host(secretive_bundles) -> None:
    import getpass
    import socket

    plain, redacted, _ = secretive_bundles
    # The plain bundle has them all (else this test would prove nothing).
    for needle in LITERALS + BYTECODE[:2] + ["helper_zebra_function", "magic_tensor_omega", "label_kiwi"]:
        assert _files_with(plain, needle), needle
    found = {needle: _files_with(redacted, needle) for needle in LITERALS + BYTECODE}
    assert {k: v for k, v in found.items() if v} == {}
    user = getpass.getuser()
    host = socket.gethostname()
    host_word = re.compile(r"(?<![\w.-])" + re.escape(host) + r"(?![\w-])")
    for name in redacted.namelist():
        text = redacted.read(name).decode("utf-8", "replace")
        assert f"torchinductor_{user}" not in text, name
        assert f"/home/{user}/" not in text and f"/Users/{user}/" not in text, name
        assert host_word.search(text) is None, name
    # Structure is kept: graphs (named after the program's variables), kernels, guards.
    names = redacted.namelist()
    assert any(n.endswith("-dynamo.py") for n in names) and any("/kernels/" in n for n in names)
    graph = next(n for n in names if n.endswith("01-dynamo.py"))
    ast.parse(redacted.read(graph).decode())
    assert "magic_tensor_omega" in redacted.read(graph).decode()
    manifest = json.loads(redacted.read("manifest.json"))
    assert all(p["environment"].get("hostname") in (None, "<host>") for p in manifest["processes"] if isinstance(p.get("environment"), dict))


@pytest.mark.corpus
def test_no_bundle_page_carries_terminal_escapes(secretive_bundles) -> None:
    plain, _, work = secretive_bundles
    for name in ["summary.md", "report.html", "index.md"] + [n for n in plain.namelist() if n.endswith(".txt")]:
        text = plain.read(name).decode()
        assert "\x1b" not in text and "\x07" not in text, name
    assert "narwhal_9d2c \\x1b[2J" in markdown_text(plain.read("summary.md").decode())  # shown, for what it is
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "dyn_inspect.cli", "breaks", str(work / "runs" / "latest")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "\x1b" not in done.stdout + done.stderr
