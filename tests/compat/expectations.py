"""What each torch version's fixture must replay to (tests/engine/test_compat_matrix.py).

Reviewed by hand per version against torch's own output, not ours: break lines and
recompiled functions against the ``*.torch_logs.txt`` torch printed with
TORCH_LOGS=graph_breaks,recompiles (the test checks that agreement again), kernel counts
against the kernels defined in the trace's own ``inductor_output_code`` (also re-checked),
and kernel lines against the programs: each line is a tensor op in a compiled function of
tests/corpus/breaks.py, corpus_helpers.py, recompiles.py or examples/train.py. A version
that differs from 2.13 says why in a comment and in docs/compatibility.md.
"""

from __future__ import annotations

from typing import Any

# The corpus programs' answers on 2.13.0 (CPU), the CI version.
_BREAKS = {
    # BREAK:branch, BREAK:print, BREAK:builtin, BREAK:explicit, BREAK:helper_print
    "breaks": ["breaks.py:11", "breaks.py:19", "breaks.py:26", "breaks.py:40", "corpus_helpers.py:7"],
    "recompiles": 0,
    "recompiled": [],
    "kernels": 11,
    "kernels_with_lines": 11,
    # every tensor op of the five functions (the helper's x * 2 on its own line)
    "kernel_lines": ["breaks.py:10", "breaks.py:11", "breaks.py:12", "breaks.py:13", "breaks.py:18", "breaks.py:20",
                     "breaks.py:25", "breaks.py:26", "breaks.py:27", "breaks.py:32", "breaks.py:34", "breaks.py:39",
                     "breaks.py:41", "corpus_helpers.py:8"],
}
_RECOMPILES = {
    "breaks": [],
    "recompiles": 2,  # by_shape 4 -> 8 (then dynamic: 16 reuses it), by_dtype float32 -> float64
    "recompiled": ["by_dtype", "by_shape"],
    "recompile_reasons": ["dtype mismatch", "size mismatch"],
    "kernels": 4,  # one per graph: by_shape static + dynamic, by_dtype f32 + f64
    "kernels_with_lines": 4,
    "kernel_lines": ["recompiles.py:13", "recompiles.py:8"],
}
_TRAIN = {
    # the data-dependent branch, the helper's print (inlined), the model's print
    "breaks": ["model_utils.py:7", "train.py:27", "train.py:30"],
    # batch 16 -> 32: each of forward's five frames (forward, its three resume functions,
    # log_stats) recompiles once, then runs dynamic for 48
    "recompiles": 5,
    "recompiled": ["forward", "log_stats", "torch_dynamo_resume_in_forward_at_27",
                   "torch_dynamo_resume_in_forward_at_29", "torch_dynamo_resume_in_forward_at_30"],
    "recompile_reasons": ["size mismatch"],
    "kernels": 8,
    "kernels_with_lines": 8,
    # relu(fc1(x)), the branch's mean() > 0.5, fc2(h) (forward and backward kernels)
    "kernel_lines": ["train.py:26", "train.py:27", "train.py:31"],
}

BASELINE: dict[str, dict[str, Any]] = {"breaks": _BREAKS, "recompiles": _RECOMPILES, "train": _TRAIN}

# fixture directory -> program -> expected digest (keys not given are not compared)
# 2.11 on the H200 (Triton), the corpus run through on_device.py (default device cuda).
_CUDA_211 = {
    # torch.ones(1).tolist() breaks inside the default-device mode (torch/utils/_device.py),
    # which is where torch's own log puts it too: the innermost frame is the mode's
    # __torch_function__ once tensors default to cuda. Not a version difference.
    "breaks": {**_BREAKS, "breaks": ["_device.py:116", "breaks.py:11", "breaks.py:19", "breaks.py:40", "corpus_helpers.py:7"],
               "kernels": 12, "kernels_with_lines": 12},  # Triton fuses differently from C++
    "recompiles": _RECOMPILES,
    "train": {**_TRAIN, "kernels": 6, "kernels_with_lines": 6},
}

EXPECTED: dict[str, dict[str, dict[str, Any]]] = {
    "torch-2.11.0-cuda": _CUDA_211,
    "torch-2.13.0": BASELINE,
    # 2.9.1, the floor: the same answers (its log_graph_break is a module function without
    # the exception, so the live recorder parses the text only: no columns; the replay of
    # a TORCH_TRACE log never has them)
    "torch-2.9.1": BASELINE,
    "torch-2.14.1": BASELINE,  # the same as 2.13 in every compared field
    "torch-2.15.0": BASELINE,  # the same as 2.13 in every compared field
}
