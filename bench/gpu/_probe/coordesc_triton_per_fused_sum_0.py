#!/usr/bin/env python3
"""Runs one Triton kernel as Inductor compiled it, on seeded random inputs of a recorded launch.

kernel:   triton_per_fused_sum_0 (compile 5/0, backward)
run:      /tmp/kr3/example-autotune/20261204-184523-8d620c
config:   XBLOCK=2 num_warps=2 num_stages=1
launch:   float32[16, 10], float32[1, 10], xnumel=10, r0_numel=16 (the kernel's first launch)
profiled: not profiled

Made by `dyn-inspect kernel triton_per_fused_sum_0 --repro`. Needs the torch and Triton the run used (or
ones that read this source alike) and a GPU. Usage: python coordesc_triton_per_fused_sum_0.py [--iters N]
"""

import argparse

import torch
from torch._dynamo.testing import rand_strided
from torch._inductor.codecache import PyCodeCache

NAME = "triton_per_fused_sum_0"
SOURCE = "\nimport triton\nimport triton.language as tl\n\nfrom torch._inductor.runtime import triton_helpers, triton_heuristics\nfrom torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\nfrom torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties\ntriton_helpers.set_driver_to_gpu()\n\n@triton_heuristics.persistent_reduction(\n    size_hints={'x': 16, 'r0_': 16},\n    reduction_hint=ReductionHint.DEFAULT,\n    filename=__file__,\n    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},\n    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_sum_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': True, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'coordinate_descent_tuning': True, 'coordinate_descent_search_radius': 1, 'coordinate_descent_check_all_directions': False, 'tiling_scores': {'x': 720, 'r0_': 0}}\n)\n@triton.jit\ndef triton_per_fused_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):\n    xnumel = 10\n    r0_numel = 16\n    R0_BLOCK: tl.constexpr = 16\n    rnumel = r0_numel\n    RBLOCK: tl.constexpr = R0_BLOCK\n    xoffset = tl.program_id(0) * XBLOCK\n    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n    xmask = xindex < xnumel\n    r0_index = tl.arange(0, R0_BLOCK)[None, :]\n    r0_offset = 0\n    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]\n    roffset = r0_offset\n    rindex = r0_index\n    r0_1 = r0_index\n    x0 = xindex\n    tmp0 = tl.load(in_ptr0 + (x0 + 10*r0_1), xmask, other=0.0)\n    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])\n    tmp3 = tl.where(xmask, tmp1, 0)\n    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)\n    tl.store(out_ptr0 + (x0), tmp4, xmask)\n"
CONFIG = {"kwargs": {"XBLOCK": 2}, "num_warps": 2, "num_stages": 1}
# (kind, shape or value, stride, dtype) per launch argument, in order
ARGS = [("tensor", [16, 10], [10, 1], "float32"), ("tensor", [1, 10], [10, 1], "float32"), ("scalar", 10, [], ""), ("scalar", 16, [], "")]
PROFILED_US = None


def make_args(device):
    torch.manual_seed(0)
    out = []
    for kind, value, stride, dtype in ARGS:
        if kind == "tensor":
            out.append(rand_strided(tuple(value), tuple(stride), dtype=getattr(torch, dtype), device=device))
        else:
            out.append(value)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=100, help="timing repetitions (ms budget for do_bench)")
    opts = parser.parse_args()
    kernel = getattr(PyCodeCache.load(SOURCE), NAME)
    pinned = [
        c
        for c in kernel.configs
        if dict(c.kwargs) == CONFIG["kwargs"] and c.num_warps == CONFIG["num_warps"] and c.num_stages == CONFIG["num_stages"]
    ]
    if not pinned:  # coordinate descent's winner is none of the source's configs
        from triton import Config

        pinned = [Config(CONFIG["kwargs"], num_warps=CONFIG["num_warps"] or 4, num_stages=CONFIG["num_stages"] or 1)]
    kernel.configs = pinned[:1]  # as compiled: no autotuning
    kernel.inductor_meta = {**kernel.inductor_meta, "coordinate_descent_tuning": False}
    args = make_args("cuda")

    def launch():
        kernel.run(*args, stream=torch.cuda.current_stream().cuda_stream)

    launch()
    torch.cuda.synchronize()
    # Replayed from a CUDA graph, a launch costs what the kernel costs: timed one by one
    # (do_bench), a kernel of a few microseconds measures Python's launch instead.
    from triton import testing

    try:
        ms, how = testing.do_bench_cudagraph(launch, rep=opts.iters), "CUDA graph replay"
    except Exception as err:  # a kernel or Triton that cannot be captured
        ms, how = testing.do_bench(launch, warmup=25, rep=opts.iters), f"do_bench ({type(err).__name__} under capture)"
    line = f"{NAME}: {ms * 1e3:.2f} us per launch, {how}"
    if PROFILED_US:
        line += f" (profiled in the run: {PROFILED_US:.2f} us, ratio {ms * 1e3 / PROFILED_US:.2f})"
    print(line)


if __name__ == "__main__":
    main()
