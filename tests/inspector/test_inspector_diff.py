"""Run A vs run B: breaks, recompile causes, kernels (and, for kernels in both, their
compile metadata and cost) and compile time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from dyn_inspect.cli import main
from dyn_inspect.inspector.analysis.diff import (
    KernelChange,
    break_items,
    changed_facts,
    diff_runs,
    kernel_changes,
    kernel_facts,
    recompile_items,
)
from dyn_inspect.inspector.outputs import reports
from dyn_inspect.inspector.run import Run
from fixture_support import unpacked


def test_a_run_against_itself_is_unchanged(breaks_run: Run) -> None:
    d = diff_runs(breaks_run.model, breaks_run.model)
    assert d.breaks.empty and d.recompiles.empty and d.kernels.empty
    assert d.breaks.same == 5 and d.compile_time_delta_s == 0
    assert d.frames == []


def test_recompile_causes_added_and_removed(recompiles_run: Run, limit_run: Run) -> None:
    d = diff_runs(recompiles_run.model, limit_run.model)
    added = {(x.function, x.kind, x.source) for x, _ in d.recompiles.added}
    removed = {(x.function, x.kind, x.source, x.dim) for x, _ in d.recompiles.removed}
    assert added == {("limited", "dtype", "x"), ("limited", "recompile_limit", "")}
    assert removed == {("by_shape", "size", "x", 0), ("by_dtype", "dtype", "x", None)}
    # limited recompiled twice on a dtype (the second attempt hit the limit).
    assert dict(((x.function, x.kind), n) for x, n in d.recompiles.added)[("limited", "dtype")] == 2
    assert d.breaks.empty  # neither program breaks
    assert {k.name for k, _ in d.kernels.removed} >= {k.name for k in recompiles_run.model.kernels} - {
        k.name for k in limit_run.model.kernels
    }
    assert round(d.compile_time_delta_s, 6) == round(limit_run.model.total_compile_time() - recompiles_run.model.total_compile_time(), 6)


def test_breaks_match_across_checkouts(breaks_run: Run, tmp_path: Path) -> None:
    # The same program recorded in another directory: paths differ, break identities don't.
    copy = tmp_path / "other-checkout"
    shutil.copytree(breaks_run.path, copy)
    for log in copy.glob("*.jsonl"):
        old = str(Path(breaks_run.model.run_start.cwd if breaks_run.model.run_start else "/nowhere"))
        log.write_text(log.read_text().replace(old, str(tmp_path / "elsewhere")))
    moved = Run(copy)
    assert {g.loc.file for g in moved.model.break_groups()} != {g.loc.file for g in breaks_run.model.break_groups()}
    assert set(break_items(moved.model)) == set(break_items(breaks_run.model))
    assert set(recompile_items(moved.model)) == set(recompile_items(breaks_run.model))


# -- kernels in both runs: compile metadata and cost ---------------------------------------
#
# fixtures/h200_kernel_runs.tar.gz (tests/inspector/test_kernel_compile.py): examples/train.py on an
# H200 with Inductor's default heuristics (``h200_kernels``, profiled) and with pointwise
# autotuning + coordinate descent (``h200_kernels_autotune``, not profiled): the same six
# Triton kernels in the same compiles, most with another config.

H200_KERNELS = Path(__file__).parents[1] / "fixtures" / "h200_kernel_runs.tar.gz"


@pytest.fixture(scope="module")
def h200_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpacked(tmp_path_factory, H200_KERNELS, "h200_kernels")


@pytest.fixture(scope="module")
def h200(h200_dir: Path) -> dict[str, Run]:
    return {name: Run(h200_dir / name) for name in ("h200_kernels", "h200_kernels_autotune")}


def _change(changes: list[KernelChange], name: str, cid: str, backward: bool) -> KernelChange:
    (c,) = [c for c in changes if (c.item.name, c.compile_id, c.backward) == (name, cid, backward)]
    return c


def test_kernel_metadata_changes_under_autotuning(h200: dict[str, Run]) -> None:
    d = diff_runs(h200["h200_kernels"].model, h200["h200_kernels_autotune"].model)
    # The same kernels (identity and count): nothing added, removed or changed in count.
    assert d.kernels.empty and d.kernels.same == 6
    assert d.breaks.empty and d.recompiles.empty
    # Every kernel is paired with its counterpart of the same compile and direction; five
    # of the six were compiled differently (the sixth: below).
    assert len(d.kernel_changes) == 5
    assert len({(c.item.key, c.compile_id, c.backward) for c in d.kernel_changes}) == 5

    c = _change(d.kernel_changes, "triton_red_fused_sum_0", "5/1", True)
    assert c.item.fused_ops == ("aten.sum",)
    assert (c.a.config, c.b.config) == ("XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1", "XBLOCK=1 R0_BLOCK=32 num_warps=1 num_stages=1")
    assert (c.a.registers, c.b.registers) == (32, 24)
    assert (c.a.shared_bytes, c.b.shared_bytes) == (256, 0)
    assert (c.a.spills, c.b.spills) == (0, 0) and c.a.target == c.b.target == "cuda sm_90"
    assert (c.a.ir_bytes["ptx"], c.b.ir_bytes["ptx"]) == (18714, 14380)
    # Profiled in A only: its time is there, but not compared.
    assert c.a.us_per_step is not None and c.b.us_per_step is None
    assert c.changed == [
        "config",
        "registers",
        "shared_bytes",
        *(f"ir_bytes.{s}" for s in ("ttir", "ttgir", "llir", "ptx", "cubin", "sass")),
    ]

    # The same config chosen both times: its IR differs by the length of the cache folder's
    # path in its debug locations (ic-example vs ic-example-autotune: 9.2 → 9.5 KiB of
    # TTIR, 3%), which is not a change.
    assert "triton_red_fused_sum_threshold_backward_0" not in {c.item.name for c in d.kernel_changes}
    ka, kb = (
        next(k for k in h200[n].model.kernels if k.name == "triton_red_fused_sum_threshold_backward_0" and k.compile.cid == "0/1")
        for n in ("h200_kernels", "h200_kernels_autotune")
    )
    assert ka.meta and kb.meta and ka.meta.chosen == kb.meta.chosen and ka.meta.ir_bytes["ttir"] != kb.meta.ir_bytes["ttir"]
    assert changed_facts(kernel_facts(ka), kernel_facts(kb)) == []


def test_a_run_against_itself_has_no_kernel_metadata_changes(h200: dict[str, Run]) -> None:
    for run in h200.values():
        d = diff_runs(run.model, run.model)
        assert d.kernels.empty and d.kernel_changes == []


def test_kernels_pair_by_compile_id_and_direction(h200: dict[str, Run], h200_dir: Path) -> None:
    a = h200["h200_kernels"].model
    b = Run(h200_dir / "h200_kernels_autotune").model  # its own model, changed below
    (k,) = [k for k in b.kernels if k.name == "triton_red_fused_sum_0"]
    k.event = msgspec.structs.replace(k.event, backward=False)  # now another kernel than A's 5/1 backward
    assert "triton_red_fused_sum_0" not in {c.item.name for c in kernel_changes(a, b)}
    assert len(kernel_changes(a, b)) == 4


def test_profiled_time_per_step_change(h200: dict[str, Run], h200_dir: Path) -> None:
    a = h200["h200_kernels"].model
    b = Run(h200_dir / "h200_kernels").model
    (k,) = [k for k in b.kernels if k.name == "triton_red_fused_sum_0"]
    assert k.profile is not None
    us = k.profile.total_us / k.profile.steps
    k.profile = msgspec.structs.replace(k.profile, total_us=k.profile.total_us * 2)
    (c,) = kernel_changes(a, b)
    assert c.changed == ["us_per_step"]
    assert c.a.us_per_step == pytest.approx(us) and c.b.us_per_step == pytest.approx(2 * us)
    # Under the threshold (a share of A's time): not a change.
    k.profile = msgspec.structs.replace(k.profile, total_us=k.profile.total_us / 2 * 1.03)
    assert kernel_changes(a, b, min_time_change=0.05) == []
    assert [c.changed for c in kernel_changes(a, b)] == [["us_per_step"]]


def test_diff_text_shows_each_changed_kernel(h200: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (str(h200[n].path) for n in ("h200_kernels", "h200_kernels_autotune"))
    assert main(["diff", a, b]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("kernels: +0 -0 ~0 (6 unchanged)")
    assert lines[at + 1] == "  compile metadata or cost changed: 5 (paired by kernel, compile id and direction)"
    (line,) = [x for x in lines if x.startswith("  ≠ triton_red_fused_sum_0 ")]
    assert lines.index(line) < next(i for i, x in enumerate(lines) if x.startswith("compile time:"))
    assert line.startswith(
        "  ≠ triton_red_fused_sum_0 (5/1 backward): "
        "config XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1 → XBLOCK=1 R0_BLOCK=32 num_warps=1 num_stages=1, "
        "registers 32 → 24, shared 256 B → 0 B, "
    )
    assert "ptx 18.3 KiB → 14.0 KiB" in line and "spills" not in line and "target" not in line
    assert not [x for x in lines if x.startswith("  ≠ triton_red_fused_sum_threshold_backward_0 ")]

    assert main(["diff", a, a]) == 0
    out = capsys.readouterr().out
    assert "≠" not in out and "compile metadata" not in out


def test_diff_json_carries_the_kernel_changes(h200: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (str(h200[n].path) for n in ("h200_kernels", "h200_kernels_autotune"))
    assert main(["diff", a, b, "--json"]) == 0
    raw = capsys.readouterr().out
    report = msgspec.json.decode(raw, type=reports.DiffReport)
    assert json.loads(msgspec.json.encode(report)) == json.loads(raw)  # every key typed
    (c,) = [c for c in report.kernels.meta_changed if (c.name, c.compile_id, c.backward) == ("triton_red_fused_sum_0", "5/1", True)]
    assert c.backend == "triton" and c.fused_ops == ["aten.sum"]
    assert (c.a.config, c.b.config) == ("XBLOCK=16 R0_BLOCK=32 num_warps=4 num_stages=1", "XBLOCK=1 R0_BLOCK=32 num_warps=1 num_stages=1")
    assert (c.a.registers, c.b.registers, c.a.shared_bytes, c.b.shared_bytes) == (32, 24, 256, 0)
    assert (c.a.ir_bytes["ptx"], c.b.ir_bytes["ptx"], c.b.us_per_step) == (18714, 14380, None)
    assert c.changed[:3] == ["config", "registers", "shared_bytes"]
    # A report written before the field existed still decodes.
    old = json.loads(raw)
    del old["kernels"]["meta_changed"]
    assert msgspec.json.decode(json.dumps(old), type=reports.DiffReport).kernels.meta_changed == []


def test_kernel_metadata_changes_do_not_fail_check(h200: dict[str, Run], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (str(h200[n].path) for n in ("h200_kernels", "h200_kernels_autotune"))
    assert main(["check", b, "--baseline", a]) == 0
    assert "check passed" in capsys.readouterr().out
