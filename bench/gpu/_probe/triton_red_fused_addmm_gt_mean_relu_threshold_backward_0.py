#!/usr/bin/env python3
"""Runs one Triton kernel as Inductor compiled it, on seeded random inputs of a recorded launch.

kernel:   triton_red_fused_addmm_gt_mean_relu_threshold_backward_0 (compile 0/1)
run:      /tmp/kr3/example/20261204-184453-80163e
config:   XBLOCK=1 R0_BLOCK=2048 num_warps=16 num_stages=1
launch:   float32[32, 64], float32[64], bool[32, 64], bool[], ks0=32, xnumel=1, r0_numel=2048 (the kernel's first launch)
profiled: 1.248 us per launch

Made by `dyn-inspect kernel triton_red_fused_addmm_gt_mean_relu_threshold_backward_0 --repro`. Needs the torch and Triton the run used (or
ones that read this source alike) and a GPU. Usage: python triton_red_fused_addmm_gt_mean_relu_threshold_backward_0.py [--iters N]
"""

import argparse

import torch
from torch._dynamo.testing import rand_strided
from torch._inductor.codecache import PyCodeCache

NAME = "triton_red_fused_addmm_gt_mean_relu_threshold_backward_0"
SOURCE = "\nimport triton\nimport triton.language as tl\n\nfrom torch._inductor.runtime import triton_helpers, triton_heuristics\nfrom torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\nfrom torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties\ntriton_helpers.set_driver_to_gpu()\n\n@triton_heuristics.reduction(\n    size_hints={'x': 1, 'r0_': 2048},\n    reduction_hint=ReductionHint.INNER,\n    filename=__file__,\n    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'out_ptr0': '*i1', 'out_ptr2': '*i1', 'ks0': 'i64', 'xnumel': 'constexpr', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {'xnumel': 1}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]]}]},\n    inductor_meta={'kernel_num_gb': 1.8689e-05, 'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_addmm_gt_mean_relu_threshold_backward_0', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': False, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 3, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 4352}}\n)\n@triton.jit\ndef triton_red_fused_addmm_gt_mean_relu_threshold_backward_0(in_out_ptr0, in_ptr0, out_ptr0, out_ptr2, ks0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):\n    xnumel = 1\n    rnumel = r0_numel\n    RBLOCK: tl.constexpr = R0_BLOCK\n    xoffset = tl.program_id(0) * XBLOCK\n    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]\n    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]\n    r0_base = tl.arange(0, R0_BLOCK)[None, :]\n    rbase = r0_base\n    _tmp8 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)\n    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n        r0_index = r0_offset + r0_base\n        r0_mask = r0_index < r0_numel\n        roffset = r0_offset\n        rindex = r0_index\n        r0_0 = (r0_index % 64)\n        r0_2 = r0_index\n        tmp0 = tl.load(in_ptr0 + (r0_0), r0_mask, eviction_policy='evict_last', other=0.0)\n        tmp1 = tl.load(in_out_ptr0 + (r0_2), r0_mask, eviction_policy='evict_first', other=0.0)\n        tmp2 = tmp0 + tmp1\n        tmp3 = tl.full([1, 1], 0, tl.int32)\n        tmp4 = triton_helpers.maximum(tmp3, tmp2)\n        tmp5 = tl.full([1, 1], 0.0, tl.float32)\n        tmp6 = tmp4 <= tmp5\n        tmp7 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])\n        tmp9 = _tmp8 + tmp7\n        _tmp8 = tl.where(r0_mask, tmp9, _tmp8)\n        tl.store(in_out_ptr0 + (tl.broadcast_to(r0_2, [XBLOCK, R0_BLOCK])), tmp4, r0_mask)\n        tl.store(out_ptr0 + (tl.broadcast_to(r0_2, [XBLOCK, R0_BLOCK])), tmp6, r0_mask)\n    tmp8 = tl.sum(_tmp8, 1)[:, None]\n    tmp10 = 64*ks0\n    tmp11 = tmp10.to(tl.float32)\n    tmp12 = (tmp8 / tmp11)\n    tmp13 = tl.full([1, 1], 0.5, tl.float32)\n    tmp14 = tmp12 > tmp13\n    tl.store(out_ptr2 + (tl.full([1, 1], 0, tl.int32).broadcast_to(XBLOCK, 1)), tmp14, None)\n"
CONFIG = {"kwargs": {"XBLOCK": 1, "R0_BLOCK": 2048}, "num_warps": 16, "num_stages": 1}
# (kind, shape or value, stride, dtype) per launch argument, in order
ARGS = [
    ("tensor", [32, 64], [64, 1], "float32"),
    ("tensor", [64], [1], "float32"),
    ("tensor", [32, 64], [64, 1], "bool"),
    ("tensor", [], [], "bool"),
    ("scalar", 32, [], ""),
    ("scalar", 1, [], ""),
    ("scalar", 2048, [], ""),
]
PROFILED_US = 1.248


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
