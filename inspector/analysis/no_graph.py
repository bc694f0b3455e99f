"""A run whose compiles captured no graph at all, and why, said before any count.

``torch.compile(DDP(model))`` on two ranks compiled 9 frames and produced 0 graphs and 0
kernels: every frame was skipped or fell back to eager, yet the summary led with its frame
counts and read like any other run. ``no_graph(model)`` is None when any compile captured a
graph (the summary's ``graphs`` count, the same test); otherwise it names how many compiles
came to nothing and torch's reasons, most frequent first: the graph break that left nothing
to capture, the failure, the skip. An exception that ended the program from inside torch's
compiler comes first: torch records no failed compile for one raised while it sets up a
compile (DDPOptimizer's bucket check on two gloo ranks), so the compiles alone read as
"held no tensor operations" when the program in fact died compiling. Then what torch's
records only imply: ``torch.compile(DDP(nn.Sequential(...)))`` breaks in DDP's forward (by
design) and never starts a frame in the torch module DDP wraps, so none of the user's code
compiles; the fix it names, ``DDP(torch.compile(model))``, is applied and re-run by
tests/inspector/test_no_graph.py.

Public API: ``no_graph(model) -> NoGraph | None``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from dyn_inspect.engine.normalizers.locations import is_library_file, parse_traceback
from dyn_inspect.inspector.analysis.messages import label
from dyn_inspect.inspector.locations import file_line, nearest_user_frame
from dyn_inspect.inspector.model import CompileInfo, RunModel

COMPILER = ("/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/")  # where torch compiles

REASONS_NAMED = 3  # distinct reasons the headline names (then "and N more")


@dataclass(frozen=True)
class NoGraph:
    """Every compile of the run came to nothing: how many, over how many frames, and why."""

    compiles: int
    frames: int
    reasons: list[str] = field(default_factory=list)  # distinct, most frequent first

    @property
    def headline(self) -> str:
        what = f"{_n(self.compiles, 'compile')} of {_n(self.frames, 'frame')}"
        # "captured nothing", not "ran eagerly": a failure may instead have reached the program
        text = f"no graph was compiled: {what} captured nothing"
        if self.reasons:
            named = "; ".join(self.reasons[:REASONS_NAMED])
            more = f"; and {len(self.reasons) - REASONS_NAMED} more" if len(self.reasons) > REASONS_NAMED else ""
            text += f" — {named}{more}"
        return text


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


def _reason(c: CompileInfo) -> str:
    """Why one compile captured nothing, in torch's words."""
    if c.breaks:
        b = c.breaks[0]
        at = nearest_user_frame(list(b.user_stack) or [b.loc], None) or b.loc
        return f"graph break: {label(b)} at {file_line(at.file, at.line)}"
    cap = c.capture
    if cap is None:
        return "the compile did not finish"
    if cap.outcome == "recompile_limit":
        return "the recompile limit was hit"
    if cap.outcome == "failed":
        return f"compile failed: {cap.fail_type}: {_first_line(cap.fail_reason)}".rstrip(": ")
    if cap.outcome == "skipped":
        why = _first_line(cap.fail_reason) or _first_line(cap.fail_type)
        return f"torch skipped the frame: {why}" if why else "torch skipped the frame"
    return "the frame held no tensor operations to capture"


def _raised_compiling(model: RunModel) -> list[str]:
    """The exceptions that ended a process from inside torch's compiler, each once."""
    out: list[str] = []
    for p in model.processes.values():
        e = p.end.exception if p.end is not None else None
        if e is None:
            continue
        frames = parse_traceback(e.traceback)
        if not any(part in f.file.replace("\\", "/") for f in frames for part in COMPILER):
            continue
        at = nearest_user_frame(frames) or e.loc
        where = f" at {file_line(at.file, at.line)}" if at is not None else ""
        text = f"the program raised {e.type} while compiling{where}: {_first_line(e.message)}".rstrip(": ")
        if text not in out:
            out.append(text)
    return out


DDP_FORWARD = "/torch/nn/parallel/distributed.py"
DDP_WRAPS_TORCH_MODULE = (
    "none of your code was compiled: DDP's forward breaks the graph by design, and Dynamo starts no frame "
    "in the torch module DDP wraps (nn.Sequential, nn.Linear…) — compile the module inside DDP instead: DDP(torch.compile(model))"
)


def _ddp_wraps_torch_module(model: RunModel, compiles: list[CompileInfo]) -> bool:
    """``torch.compile(DDP(nn.Sequential(...)))``: the only breaks are in DDP's forward, and
    no compiled frame is the user's (torch 2.13 skips ``Sequential.forward`` as a frame)."""
    breaks = (b for c in compiles for b in c.breaks)
    if not any(DDP_FORWARD in f.file.replace("\\", "/") for b in breaks for f in [b.loc, *b.user_stack]):
        return False
    return all(c.capture is None or not c.capture.co_filename or is_library_file(c.capture.co_filename) for c in compiles)


def no_graph(model: RunModel) -> NoGraph | None:
    compiles = model.compiles_in_order()
    if not compiles or any(c.graph("dynamo") is not None for c in compiles):
        return None
    reasons = Counter(_reason(c) for c in compiles)
    frames = len(model.frames)  # the summary's "compiled frames"
    # The cause torch's records only imply comes first: each break alone reads as fixable.
    raised = _raised_compiling(model)
    ddp = [DDP_WRAPS_TORCH_MODULE] if not raised and _ddp_wraps_torch_module(model, compiles) else []
    return NoGraph(len(compiles), frames, raised + ddp + [r for r, _ in reasons.most_common()])
