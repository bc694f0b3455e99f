"""``--redact-source``: no line of the user's program survives anywhere in the bundle,
while graphs, kernels, guards, metrics and the TORCH_TRACE log keep their structure."""

from __future__ import annotations

import ast
import json
import re
import zipfile
from pathlib import Path

import pytest

from corpus_support import CORPUS, EXAMPLES
from dyn_inspect.engine.importer import import_trace
from dyn_inspect.engine.schema import Blob, UnknownEvent
from dyn_inspect.inspector.export import export_run
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
def bundles(request, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[zipfile.ZipFile, zipfile.ZipFile]]:
    out = {}
    for fixture in PROGRAMS:
        run: Run = request.getfixturevalue(fixture)
        tmp = tmp_path_factory.mktemp(fixture)
        export_run(run, tmp / "plain.zip")
        export_run(run, tmp / "redacted.zip", redact_source=True)
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
                # The same guard tree: every line keeps its guard, only the source comment goes.
                guards = [ln.split("  #")[0] for ln in text.splitlines()]
                orig = [ln.split("  #")[0] for ln in plain.read(next(i["path"] for i in a[cid]["files"] if i["role"] == role)).decode().splitlines()]
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
    assert set(back.breaks) == set(run.model.breaks)


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
