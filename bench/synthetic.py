"""A synthetic run directory of N events, shaped like a real recording, for benchmarks.

    python bench/synthetic.py OUT_DIR --events 100000 [--seed 0] [--processes 1] [--spmd]

writes ``OUT_DIR/<run-id>/`` (and ``OUT_DIR/latest``) through the real writer
(``EventLog``, ``BlobStore``) and the real schema Structs, so readers see exactly what a
recording produces. The mix and the sizes follow a recorded ``examples/train.py`` run
(torch 2.13, CPU Inductor): per compile ≈ 100 events, ~60 % ``chromium`` (about 2 % of
those carry 60-70 KB cache-key args, the rest ~200 B), ``raw`` tensor descriptions,
artifacts, 8 graph stages, guards, a capture with a ~40 KB metrics blob, output code, 1-3
kernels with provenance, and — for some compiles — graph breaks (from a pool of sites, so
deduplication is exercised) and recompiles with torch's reason text. The source files the
locations point at are written under ``OUT_DIR/workspace/`` so line texts match.

``make_run(out_dir, events)`` is the same from Python (the TUI and LSP benchmarks use it).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

from dyn_inspect.engine.eventlog import EventLog, new_run_dir
from dyn_inspect.engine.schema import (
    Artifact,
    Bytecode,
    CacheEvent,
    Capture,
    Chromium,
    CompileStart,
    Graph,
    GraphBreak,
    Guards,
    Kernel,
    KernelProvenance,
    Loc,
    OutputCode,
    ProcessEnd,
    ProcessStart,
    Raw,
    Recompile,
    RecompileLimit,
    RunEnd,
    RunStart,
    ShapeGuard,
    StageTimes,
    Symbol,
)

EVENTS_PER_COMPILE = 100  # measured on a recorded examples/train.py run (1130 events, 11 compiles)
SOURCE_LINES = 120
TORCH_DIR = "/usr/lib/python3.11/site-packages/torch"

_OPS = ["mul", "add", "relu", "sum", "mean", "exp", "addmm", "permute", "sin", "tanh", "le", "gt", "div", "sub"]
_BREAK_KINDS = [
    ("Data-dependent branching", "GB0170"),
    ("Unsupported builtin operator", "GB0059"),
    ("Tensor.tolist", "GB0109"),
    ("Call to `torch._dynamo.graph_break()`", "GB0025"),
]


def _source_line(module: int, line: int) -> str:
    return f"h{line} = torch.relu(h{line - 1} * {module + 1}) + {line}  # op {line}"


def _write_workspace(root: Path, modules: int) -> list[Path]:
    files = []
    for m in range(modules):
        path = root / "workspace" / f"block_{m}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = ["import torch", "", "", "def forward(h0):"]
        lines += [f"    {_source_line(m, i)}" for i in range(len(lines) + 1, SOURCE_LINES + 1)]
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files


def _loc(path: Path, module: int, line: int, name: str = "forward", col: int | None = 4) -> Loc:
    code = _source_line(module, line)
    return Loc(file=str(path), line=line, name=name, col=col, end_col=col + len(code) if col is not None else None, code=code)


def _torch_frames() -> list[Loc]:
    return [
        Loc(f"{TORCH_DIR}/nn/modules/module.py", 1778, "_wrapped_call_impl", code="return self._call_impl(*args, **kwargs)"),
        Loc(f"{TORCH_DIR}/nn/modules/module.py", 1789, "_call_impl", code="return forward_call(*args, **kwargs)"),
        Loc(f"{TORCH_DIR}/_dynamo/eval_frame.py", 1166, "compile_wrapper", code="result = fn(*args, **kwargs)"),
    ]


def _fx_code(rng: random.Random, path: Path, module: int, first: int, nodes: int, aten: bool, batch: str) -> str:
    """An FX graph in torch's print_readable form, with shape annotations."""
    out = ["class GraphModule(torch.nn.Module):", f'    def forward(self, L_x_: "f32[{batch}, 64][64, 1]cpu"):']
    prev = "L_x_"
    for i in range(nodes):
        op = rng.choice(_OPS)
        line = first + (i % 20)
        out.append("")
        out.append(f"        # File: {path}:{line} in forward, code: {_source_line(module, line)}")
        target = f"torch.ops.aten.{op}.Tensor({prev}, 2)" if aten else f"torch.{op}({prev})"
        out.append(f'        {op}_{i}: "f32[{batch}, 64][64, 1]cpu" = {target};  {prev} = None')
        prev = f"{op}_{i}"
    out.append(f"        return ({prev},)")
    return "\n".join(out) + "\n"


def _guards_text(path: Path, batch: str, extra: int) -> str:
    rows = [
        "",
        "TREE_GUARD_MANAGER:",
        "+- RootGuardManager",
        '| +- GLOBAL_STATE: ___check_global_state() against {"grad_mode":true,"num_threads":2}',
        "| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=0), type=<class 'torch.Tensor'>",
        f"| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[{batch}, 64], stride=[64, 1])  # h5 = x  # {path.name}:5 in forward",
    ]
    for i in range(extra):
        rows.append(f"| +- GuardManager: source=G['mod_{i}'], accessed_by=DictGetItemGuardAccessor('mod_{i}'), type=<class 'module'>")
        rows.append(
            f"| | +- ID_MATCH: ___check_obj_id(G['mod_{i}'], {140000000000000 + i * 4096}), type=<module 'mod_{i}'>  #   # {path.name}:{6 + i % 100} in forward"
        )
    rows.append("")
    rows.append("Guard latency = 80.55 us")
    return "\n".join(rows)


def _kernel_source(rng: random.Random, vectorized: bool) -> str:
    body = []
    for i in range(rng.randint(25, 70)):
        if vectorized:
            body.append(
                f"        auto tmp{i} = at::vec::Vectorized<float>::loadu(in_ptr0 + static_cast<int64_t>(x0 + {i}), static_cast<int64_t>(16));"
            )
        else:
            body.append(f"        auto tmp{i} = in_ptr0[static_cast<int64_t>(x0 + {i})];")
    return (
        '#include <torch/csrc/inductor/cpp_prefix.h>\nextern "C" void kernel(const float* in_ptr0, float* out_ptr0)\n{\n'
        + "\n".join(body)
        + "\n}\n"
    )


class _Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def tick(self, dt: float = 0.0005) -> float:
        self.now += dt
        return self.now


def _chromium(log: EventLog, clock: _Clock, cid: str, rng: random.Random, count: int, big_blob_args: list[dict]) -> int:
    names = [
        "dynamo",
        "entire_frame_compile",
        "compile_attempt_0",
        "bytecode_tracing",
        "backend_compile",
        "inductor_compile",
        "gc",
        "pass.post_grad_passes.decompose",
    ]
    written = 0
    for i in range(count):
        t = clock.tick()
        name = names[i % len(names)]
        args: dict = {"compile_id": cid}
        if rng.random() < 0.02:
            args = dict(big_blob_args[i % len(big_blob_args)], compile_id=cid)
        elif name == "bytecode_tracing":
            args["fn_name"] = "_compile.compile_inner"
        log.write(Chromium(name=name, ph="B" if i % 2 == 0 else "E", ts=t * 1e6, cat="dynamo_timed", args=args, t=t, cid=cid))
        written += 1
    return written


def make_run(
    out_dir: Path,
    events: int = 100_000,
    seed: int = 0,
    processes: int = 1,
    spmd: bool = False,
    first_rank: int = 0,
    world_size: int | None = None,
) -> Path:
    """Write a synthetic run of about ``events`` events under ``out_dir`` (a runs root:
    the run is ``out_dir/<run-id>``, ``out_dir/latest`` points at it). Returns the run.

    ``spmd``: every rank runs the same program (the same compiles, breaks and kernels, as
    the ranks of one data-parallel job do) except the last rank, which hits one extra
    graph break per compile that breaks; without it each rank draws its own program.
    ``first_rank`` / ``world_size``: the ranks of one node of a larger job (the merge
    benchmark writes each node's run with its own global ranks)."""
    rng = random.Random(seed)
    out_dir = Path(out_dir)
    run = new_run_dir(out_dir)
    files = _write_workspace(out_dir, 24)
    clock = _Clock(1_796_000_000.0)
    launcher = EventLog(run, "launcher.jsonl")
    launcher.write(
        RunStart(command=["python", "train.py"], cwd=str(out_dir / "workspace"), mode="script", tool_version="0.1.0", t=clock.now)
    )
    # Blob payloads in realistic sizes; large ones rotate among a few variants (a real run
    # has distinct ones, but their content does not change what a reader does).
    metrics_blobs = [f'{{"compile_id": "{i}", ' + '"x": 1, ' * 4800 + "}" for i in range(8)]
    cache_blobs = [f'{{"key": "{i}", "components": [' + '"[abcdefghij] fx_kwargs[x]: 1", ' * 1500 + "]}" for i in range(8)]
    big_args = [
        {
            "key": f"f{i}",
            "components": [
                f"[{j:08x}] example_inputs[{j}]: TensorMetadata(dtype=torch.float32, shape=torch.Size([16, 64]))" for j in range(600)
            ],
        }
        for i in range(4)
    ]

    per_process = max(1, events // processes)
    total_written = 1
    for p in range(processes):
        if spmd:
            rng = random.Random(seed)  # the same program on every rank
        pid = 40000 + p
        log = EventLog(run, f"p{pid}.jsonl")
        log.write(
            ProcessStart(
                argv=["train.py"],
                cwd=str(out_dir / "workspace"),
                pid=pid,
                ppid=39999,
                executable=sys.executable,
                python="3.11.7",
                platform="Linux-x86_64",
                hostname="bench",
                torch="2.13.0+cpu",
                cpu="AMD EPYC",
                cpu_isa="AVX512",
                rank=first_rank + p if processes > 1 or first_rank else None,
                world_size=(world_size or processes) if processes > 1 or first_rank else None,
                provenance=True,
                config={"dynamo.recompile_limit": 8},
                t=clock.tick(),
            )
        )
        written = 3  # header, process_start, process_end
        compiles = max(1, per_process // EVENTS_PER_COMPILE)
        # Most frames compile once; a fifth recompile (shape changes, then dynamic); one
        # frame recompiles until it hits the limit (8) and runs eagerly.
        frames = max(1, int(compiles * 0.7))
        frame_compiles = [0] * frames
        break_sites = [(rng.randrange(len(files)), rng.randint(6, SOURCE_LINES - 1), rng.choice(_BREAK_KINDS)) for _ in range(40)]
        limit_frame = 0 if frames > 3 else None
        # At least one frame to recompile, and never one past the last (a small run has one frame).
        recompiling = [f for f in range(1, max(2, frames // 5)) if f < frames] or [0]
        n = 0
        while written < per_process:
            if n < frames:
                frame = n
            elif limit_frame is not None and frame_compiles[limit_frame] <= 8:
                frame = limit_frame
            else:
                frame = rng.choice(recompiling)
            attempt = frame_compiles[frame]
            frame_compiles[frame] += 1
            n += 1
            cid = f"{frame}/{attempt}"
            module = frame % len(files)
            path = files[module]
            first = 4 + (frame * 7) % (SOURCE_LINES - 30)
            name = "forward" if frame % 4 else f"torch_dynamo_resume_in_forward_at_{first}"
            batch = str(16 * (attempt + 1)) if attempt < 2 else "s0"
            user = [Loc(str(files[0]), 3, "<module>", code="main()"), *_torch_frames(), _loc(path, module, first, col=None)]
            log.write(CompileStart(frame_id=frame, attempt=0, stack=user, t=clock.tick(), cid=cid))
            written += 1
            limited = limit_frame is not None and frame == limit_frame and attempt >= 8
            if attempt:
                reasons = [
                    f"{frame}/{a}: tensor 'x' size mismatch at index 0. expected {16 * (a + 1)}, actual {16 * (attempt + 1)}"
                    for a in range(attempt - 1, -1, -1)
                ][:3]
                log.write(Recompile(reasons=reasons, text=log.blobs.put("\n".join(reasons)), t=clock.tick(), cid=cid))
                written += 1
            chrom = 60 if not limited else 6
            written += _chromium(log, clock, cid, rng, chrom // 2, big_args)
            if limited:
                log.write(
                    RecompileLimit(
                        co_name=name,
                        co_filename=str(path),
                        co_firstlineno=first,
                        reason="Dynamo recompile limit exceeded (currently set to 8)",
                        t=clock.tick(),
                        cid=cid,
                    )
                )
                log.write(
                    Capture(co_name=name, co_filename=str(path), co_firstlineno=first, outcome="recompile_limit", t=clock.tick(), cid=cid)
                )
                written += 2
                continue
            for i in range(7):
                log.write(
                    Raw(
                        torch_kind="describe_tensor",
                        metadata={
                            "describe_tensor": {
                                "id": i,
                                "ndim": 2,
                                "dtype": "torch.float32",
                                "size": [16, 64],
                                "stride": [64, 1],
                                "requires_grad": True,
                            },
                            "frame_id": frame,
                        },
                        t=clock.tick(),
                        cid=cid,
                    )
                )
            written += 7
            breaks = rng.random() < 0.3
            if breaks and spmd and first_rank + p == (world_size or processes) - 1 and (world_size or processes) > 1:
                # The odd rank: a second break at a site no other rank hits.
                odd = _loc(files[0], 0, SOURCE_LINES - 2)
                log.write(
                    GraphBreak(
                        key=f"GB0059:{odd.file}:{odd.line}",
                        gb_type="Unsupported builtin operator",
                        loc=odd,
                        gb_id="GB0059",
                        reason="print",
                        user_stack=[*user[:-1], odd],
                        t=clock.tick(),
                        cid=cid,
                    )
                )
                written += 1
            if breaks:
                m2, line, (gb_type, gb_id) = rng.choice(break_sites)
                site = _loc(files[m2], m2, line)
                stack = [*user[:-1], _loc(path, module, first + 2), site]
                log.write(
                    GraphBreak(
                        key=f"{gb_id}:{site.file}:{site.line}",
                        gb_type=gb_type,
                        loc=site,
                        gb_id=gb_id,
                        url=f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{gb_id.lower()}.html",
                        reason=gb_type,
                        explanation="Detected something Dynamo cannot trace." * 4,
                        hints=["Consider rewriting this.", "See the docs."],
                        user_stack=stack,
                        text=log.blobs.put(f"Graph break {cid}\n" + "  explanation\n" * 150),
                        t=clock.tick(),
                        cid=cid,
                    )
                )
                written += 1
            nodes = rng.randint(4, 14)
            for stage, aten in (
                ("dynamo", False),
                ("pre_grad_before", False),
                ("pre_grad", False),
                ("aot_inference", True),
                ("joint_before", True),
                ("joint", True),
                ("post_grad_before", True),
                ("post_grad", True),
            ):
                code = _fx_code(rng, path, module, first, nodes, aten, batch)
                log.write(
                    Graph(
                        stage=stage, code=log.blobs.put(code), node_count=nodes + 1, op_counts={"aten.mul": nodes}, t=clock.tick(), cid=cid
                    )
                )
            written += 8
            for i in range(5):
                log.write(
                    Artifact(
                        name=f"artifact_{i}",
                        encoding="string",
                        payload=log.blobs.put(f"{cid} artifact {i}\n" + "x = 1\n" * 270),
                        t=clock.tick(),
                        cid=cid,
                    )
                )
            log.write(
                CacheEvent(
                    cache="fx_graph",
                    hit=False,
                    key=f"f{cid}",
                    detail=log.blobs.put(cache_blobs[n % len(cache_blobs)]),
                    t=clock.tick(),
                    cid=cid,
                )
            )
            written += 6
            if name.startswith("torch_dynamo_resume"):
                log.write(
                    Bytecode(
                        function=name, which="original", code=log.blobs.put(f"{cid}\n" + "LOAD_FAST x\n" * 200), t=clock.tick(), cid=cid
                    )
                )
                written += 1
            if attempt >= 2:
                log.write(Symbol(symbol="s0", value=batch, range="[2, int_oo]", source="L['x'].size()[0]", t=clock.tick(), cid=cid))
                log.write(ShapeGuard(expr="2 <= s0", t=clock.tick(), cid=cid))
                written += 2
            log.write(
                Guards(
                    count=40,
                    text=log.blobs.put(_guards_text(path, batch if attempt < 2 else "None", 40)),
                    latency_us=80.5,
                    t=clock.tick(),
                    cid=cid,
                )
            )
            written += 1
            kernels = rng.randint(1, 3)
            names = [f"cpp_fused_{rng.choice(_OPS)}_{rng.choice(_OPS)}_{k}" for k in range(kernels)]
            log.write(
                OutputCode(
                    code=log.blobs.put(f"# {cid}\n" + "buf = empty_strided_cpu((16, 64), (64, 1))\n" * 130),
                    path=f"/tmp/inductor/{cid}.py",
                    kernels=names,
                    t=clock.tick(),
                    cid=cid,
                )
            )
            prov: dict[str, list[Loc]] = {}
            for k, kname in enumerate(names):
                vec = rng.random() < 0.8
                src = _kernel_source(rng, vec)
                ops = kname.split("_")[2:4]
                log.write(
                    Kernel(
                        name=kname,
                        backend="cpp",
                        source=log.blobs.put(f"// {cid}\n" + src),
                        fused_ops=[f"aten.{o}" for o in ops],
                        vectorized="avx512" if vec else None,
                        lines=src.count("\n"),
                        t=clock.tick(),
                        cid=cid,
                    )
                )
                prov[kname] = [_loc(path, module, first + k + 1)]
            log.write(KernelProvenance(kernels=prov, t=clock.tick(), cid=cid))
            written += 2 + kernels
            written += _chromium(log, clock, cid, rng, max(0, chrom - chrom // 2), big_args)
            total = round(rng.uniform(0.3, 4.0), 3)
            log.write(
                Capture(
                    co_name=name,
                    co_filename=str(path),
                    co_firstlineno=first,
                    outcome="graph_break" if breaks else "graph",
                    graph_op_count=nodes,
                    graph_node_count=nodes + 2,
                    graph_input_count=1,
                    guard_count=40,
                    cache_size=attempt,
                    accumulated_cache_size=attempt,
                    times=StageTimes(total_s=total, dynamo_s=total * 0.1, aot_s=total * 0.2, inductor_s=total * 0.1, codegen_s=total * 0.6),
                    recompile_reason=None,
                    graph_breaks=int(breaks),
                    fx_cache_misses=1,
                    aot_cache_misses=1,
                    metrics=log.blobs.put(metrics_blobs[n % len(metrics_blobs)]),
                    t=clock.tick(),
                    cid=cid,
                )
            )
            written += 1
        log.write(ProcessEnd(duration_s=clock.now - 1_796_000_000.0, exit_code=0, t=clock.tick()))
        log.close()
        total_written += written
    launcher.write(RunEnd(exit_code=0, duration_s=clock.now - 1_796_000_000.0, t=clock.tick()))
    launcher.close()
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="runs root to write the run under")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=1, help="one log per process (ranks)")
    parser.add_argument("--spmd", action="store_true", help="every rank the same program but the last (one extra graph break)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    run = make_run(args.out_dir, args.events, args.seed, args.processes, args.spmd)
    size = sum(f.stat().st_size for f in run.glob("*.jsonl"))
    blobs = sum(f.stat().st_size for f in (run / "blobs").rglob("*") if f.is_file())
    lines = sum(sum(1 for _ in open(f, "rb")) for f in run.glob("*.jsonl"))
    print(f"{run}: {lines} events, logs {size / 1e6:.1f} MB, blobs {blobs / 1e6:.1f} MB, written in {time.perf_counter() - start:.1f}s")
    return 0


if __name__ == "__main__":
    os.umask(0o077)
    sys.exit(main())
