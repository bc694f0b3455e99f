"""DDPOptimizer's splits (issue 34) on the real corpus run of tests/corpus/ddp/train.py:
``torch.compile(DDP(Net(), bucket_cap_mb=2))`` on two gloo ranks, five Linear(512, 512)
layers. Compared with torch's own account of a plain run of the same program: its
TORCH_TRACE per rank (``optimize_ddp_split_child`` records) and DDPOptimizer's own log line
("used bucket cap 2097152 and created 3 buckets"); the bucket sizes with what DDP's rule
gives for this model (layers 0-1, 2-3, then the last layer alone under the 1 MB first cap)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from corpus_support import CORPUS, marker_line
from dyn_inspect.cli import main
from dyn_inspect.engine.importer import import_trace
from dyn_inspect.engine.normalizers.ddp import bucket_params
from dyn_inspect.inspector.locations import file_line
from dyn_inspect.inspector.reports import summary
from dyn_inspect.inspector.reports.breaks import breaks_report
from dyn_inspect.inspector.reports.screens import overview
from dyn_inspect.inspector.run import Run
from torchrun_support import PlainRun, plain_torchrun

PROGRAM = CORPUS / "ddp" / "train.py"
LAYER = 512 * 512 * 4 + 512 * 4  # one Linear(512, 512)'s parameters in bytes (fp32)
DDP_LOG = re.compile(r"^\[rank(?P<rank>\d)\]:.*DDPOptimizer used bucket cap (?P<cap>\d+) and created (?P<n>\d+) buckets")


class TorchAccount:
    """What torch itself logged in a plain run: per rank, the split children and
    DDPOptimizer's (cap, bucket count); the TORCH_TRACE directory."""

    def __init__(self, plain: PlainRun) -> None:
        self.trace_dir = plain.trace_dir
        self.children = {
            rank: [str(r["optimize_ddp_split_child"]["name"]) for r in plain.records(rank) if "optimize_ddp_split_child" in r]  # type: ignore[index]
            for rank in (0, 1)
        }
        self.buckets = {int(m["rank"]): (int(m["cap"]), int(m["n"])) for m in map(DDP_LOG.match, plain.stderr.splitlines()) if m}


@pytest.fixture(scope="module")
def torch_account(tmp_path_factory: pytest.TempPathFactory) -> TorchAccount:
    """The program run without dyn-inspect, torch's trace and DDPOptimizer's INFO log on."""
    return TorchAccount(plain_torchrun(PROGRAM, tmp_path_factory.mktemp("ddp-plain"), "torch._dynamo.backends.distributed"))


def test_the_splits_are_torchs_per_rank(ddp_run: Run, torch_account: TorchAccount) -> None:
    assert sorted(torch_account.buckets) == [0, 1] and sorted(torch_account.children) == [0, 1]
    (site,) = summary(ddp_run).ddp_splits
    assert site.ranks == [0, 1]
    for rank in (0, 1):
        cap, n = torch_account.buckets[rank]
        assert (site.bucket_cap_mb, site.graphs) == (cap / 2**20, n) == (2.0, 3)
        ours = [
            b.name
            for c in ddp_run.model.compiles_in_order()
            if (p := ddp_run.model.processes.get(c.log)) and p.rank == rank
            for b in c.ddp_buckets
        ]  # fmt: skip
        assert ours == torch_account.children[rank] == ["submod_0", "submod_1", "submod_2"]
    # DDP's rule for this model: layers 0-1 and 2-3 fill 2 MB buckets; the last layer is the
    # first bucket DDP all-reduces, capped at 1 MB
    assert [b.param_bytes for b in site.buckets] == [2 * LAYER, 2 * LAYER, LAYER]
    assert [b.params for b in site.buckets] == [4, 4, 2]
    assert site.first_bucket_mb == 1.0
    split_line = marker_line(PROGRAM, "SPLIT:bucket")
    assert [(b.file, b.line) for b in site.boundaries] == [(str(PROGRAM), split_line)] * 2
    assert (site.function, site.file) == ("forward", str(PROGRAM))
    assert site.headline == (
        f"forward ({file_line(str(PROGRAM), site.line)}): split by DDP at 2 bucket boundaries (bucket_cap_mb=2, first bucket 1 MB) "
        "into 3 graphs; parameters per graph 2.00 MB ×2, 1.00 MB"
    )


def test_the_splits_are_no_graph_breaks(ddp_run: Run) -> None:
    """DDP's cuts are listed beside the breaks, never among them or in their counts."""
    split_line = marker_line(PROGRAM, "SPLIT:bucket")
    s = summary(ddp_run)
    assert all(b.user_loc is None or b.user_loc.line != split_line for b in s.breaks)
    report = breaks_report(ddp_run, None)
    assert all(b.loc is None or b.loc.line != split_line for b in report.breaks)
    assert [x.headline for x in report.ddp_splits] == [x.headline for x in s.ddp_splits]
    assert report.total == s.graph_breaks.total


def test_every_face_says_the_one_headline(ddp_run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    (site,) = summary(ddp_run).ddp_splits
    for command in (["summary"], ["breaks"]):
        assert main([*command, str(ddp_run.path)]) == 0
        text = capsys.readouterr().out
        assert "split by DDP at bucket boundaries: 2 (not graph breaks in your code)" in text, text
        assert f"    {site.headline}  (ranks 0, 1)\n" in text, text
    assert overview(ddp_run.model).ddp_splits == [site.headline]


def test_torchs_own_trace_imported_shows_the_same_splits(torch_account: TorchAccount, tmp_path: Path) -> None:
    """A TORCH_TRACE holds no bucket cap (DDP's module is gone): the buckets agree, the cap
    is said to be unknown rather than guessed."""
    result = import_trace(torch_account.trace_dir, out=tmp_path / "imported")
    (site,) = summary(Run(result.run_dir)).ddp_splits
    assert [b.param_bytes for b in site.buckets] == [2 * LAYER, 2 * LAYER, LAYER]
    assert site.ranks == [0, 1] and site.bucket_cap_mb is None
    assert "(bucket cap not recorded)" in site.headline


def test_bucket_bytes_from_the_graph_torch_printed() -> None:
    """The child graph's signature as torch prints it: parameters are the inputs Dynamo
    named ``…_parameters_…``; a symbolic size leaves the bytes unknown."""
    code = (
        "class GraphModule(torch.nn.Module):\n"
        '    def forward(self, x: "bf16[8, 64]", l_self_modules_fc_parameters_weight_: "bf16[64, 64]", '
        'l_self_modules_fc_parameters_bias_: "f32[64]", l_self_modules_fc_buffers_scale_: "f32[64]"):\n'
    )
    assert bucket_params(code) == (["l_self_modules_fc_parameters_weight_", "l_self_modules_fc_parameters_bias_"], 64 * 64 * 2 + 64 * 4)
    dynamic = code.replace('"bf16[64, 64]"', '"bf16[s0, 64]"')
    assert bucket_params(dynamic)[1] is None
