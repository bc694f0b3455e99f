"""The bundle's graph pictures: ``--no-pictures`` leaves out every SVG and nothing else, a
spent budget or a graph above the node limit is listed as skipped (its DOT is there),
``-v`` prints the time of each part. On the example run's real recording."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dyn_inspect.inspector.analysis.graphs import graphviz
from dyn_inspect.inspector.export import PictureOptions, export_run
from dyn_inspect.inspector.run import Run

DYN = [sys.executable, "-m", "dyn_inspect.cli"]


@pytest.fixture(scope="module")
def drawn(example_run: Run, tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The example's bundle with every picture drawn (a budget nothing runs out of)."""
    path = tmp_path_factory.mktemp("pictures") / "all.zip"
    export_run(example_run, path, pictures=PictureOptions(budget_s=600))
    return zipfile.ZipFile(path)


def _dots(z: zipfile.ZipFile) -> list[str]:
    return sorted(n for n in z.namelist() if n.endswith(".dot"))


def _picture_roles(z: zipfile.ZipFile) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n in z.namelist():
        if n.endswith("/compile.json"):
            for item in json.loads(z.read(n))["files"]:
                if item["role"].startswith("picture:"):
                    out.setdefault(n, []).append(item["path"])
    return out


def test_no_pictures_has_every_file_but_the_svgs(example_run: Run, drawn: zipfile.ZipFile, tmp_path: Path) -> None:
    out = tmp_path / "plain.zip"
    p = subprocess.run([*DYN, "export", str(example_run.path), "-o", str(out), "--no-pictures", "-v"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    z = zipfile.ZipFile(out)
    names = set(z.namelist())
    assert not [n for n in names if n.endswith(".svg")]
    if graphviz():
        assert [n for n in drawn.namelist() if n.endswith(".svg")]  # there was something to leave out
    assert names == {n for n in drawn.namelist() if not n.endswith(".svg")}
    for n in names - {"manifest.json", "index.md"}:
        if not n.endswith(("compile.json", "trace.json", "report.html", "summary.md")) and not n.startswith("events/"):
            assert z.read(n) == drawn.read(n), n  # the same graphs, DOT, kernels, logs
    m = json.loads(z.read("manifest.json"))
    assert m["graph_pictures"]["dot"] is True and m["graph_pictures"]["svg"] is False
    assert "--no-pictures" in m["graph_pictures"]["svg_note"]
    # Every graph keeps its DOT picture; none is listed as skipped one by one.
    assert all(paths and all(p.endswith(".dot") for p in paths) for paths in _picture_roles(z).values())
    assert not [s for s in m["skipped"] if s["what"].startswith("SVG of")]
    # -v: the time of each part, on stderr (stdout keeps the result line).
    for part in ("reading the run", "graphs", "kernels", "pictures", "report.html", "zip", "in all"):
        assert f"s  {part}" in p.stderr, part
    assert p.stdout.startswith(f"wrote {out}")


@pytest.mark.skipif(graphviz() is None, reason="Graphviz is not installed")
def test_a_spent_budget_lists_every_picture_as_skipped(example_run: Run, drawn: zipfile.ZipFile, tmp_path: Path) -> None:
    result = export_run(example_run, tmp_path / "b.zip", pictures=PictureOptions(budget_s=0))
    z = zipfile.ZipFile(tmp_path / "b.zip")
    assert not [n for n in z.namelist() if n.endswith(".svg")]
    assert _dots(z) == _dots(drawn)
    m = json.loads(z.read("manifest.json"))
    skipped = {s["what"].removeprefix("SVG of ").removesuffix(".py"): s["why"] for s in m["skipped"] if s["what"].startswith("SVG of ")}
    # Each graph that had a picture is skipped, saying why and where its DOT is.
    assert sorted(f"{k}.dot" for k in skipped) == [d for d in _dots(drawn) if d.replace(".dot", ".svg") in drawn.namelist()]
    for stem, why in skipped.items():
        assert "picture budget (0s" in why and f"open {stem}.dot" in why
    assert {str(s) for s in result.skipped} >= {f"SVG of {k}.py: {v}" for k, v in skipped.items()}
    report = z.read("report.html").decode()
    assert "picture budget" in report


@pytest.mark.skipif(graphviz() is None, reason="Graphviz is not installed")
def test_graphs_above_the_node_limit_are_not_laid_out(example_run: Run, drawn: zipfile.ZipFile, tmp_path: Path) -> None:
    sizes = {d: drawn.read(d).decode().count(" [label=") for d in _dots(drawn) if d.replace(".dot", ".svg") in drawn.namelist()}
    limit = sorted(sizes.values())[len(sizes) // 2]
    export_run(example_run, tmp_path / "n.zip", pictures=PictureOptions(budget_s=600, max_nodes=limit))
    z = zipfile.ZipFile(tmp_path / "n.zip")
    m = json.loads(z.read("manifest.json"))
    why = {
        s["what"].removeprefix("SVG of ").removesuffix(".py") + ".dot": s["why"] for s in m["skipped"] if s["what"].startswith("SVG of ")
    }
    for dot, nodes in sizes.items():
        svg = dot.replace(".dot", ".svg")
        if nodes > limit:
            assert svg not in z.namelist() and why[dot] == f"not drawn: {nodes} nodes (pictures up to {limit}); open {dot}"
        else:
            assert z.read(svg) == drawn.read(svg) and dot not in why
    assert any(n > limit for n in sizes.values())


@pytest.mark.skipif(graphviz() is None, reason="Graphviz is not installed")
def test_draw_all_answers_every_job_in_any_order_of_size() -> None:
    from dyn_inspect.inspector.export.pictures import Job, draw_all

    def chain(n: int) -> str:
        return "digraph g {\n" + "".join(f"  n{i} -> n{i + 1};\n" for i in range(n - 1)) + "}\n"

    jobs = [Job("big.dot", chain(30), 30), Job("a.dot", chain(3), 3), Job("b.dot", chain(5), 5)]
    drawn = draw_all(jobs, PictureOptions(budget_s=600, max_nodes=10))
    assert set(drawn) == {"big.dot", "a.dot", "b.dot"}
    assert drawn["big.dot"].svg is None and drawn["big.dot"].why == "not drawn: 30 nodes (pictures up to 10); open big.dot"
    for key, n in (("a.dot", 3), ("b.dot", 5)):
        svg = drawn[key].svg
        assert svg is not None and "<svg" in svg and svg.count('class="node"') == n
    # No budget (zero, or not a number): nothing is drawn, each says so; nothing raises.
    for budget in (0.0, float("nan"), -1.0):
        none = draw_all(jobs[1:], PictureOptions(budget_s=budget))
        assert all(d.svg is None and d.why and "picture budget (0s" in d.why for d in none.values())


def test_a_bad_picture_budget_is_one_line(tmp_path: Path) -> None:
    for value in ("-1", "nan"):
        p = subprocess.run([*DYN, "export", str(tmp_path), "--picture-budget", value], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--picture-budget" in p.stderr
        assert list(tmp_path.iterdir()) == []
