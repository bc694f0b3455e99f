"""Run a corpus program with its tensors on another device (record.sh --device cuda).

    python on_device.py PROGRAM [ARGS...]      # COMPAT_DEVICE=cuda

The corpus programs make CPU tensors; with torch's default device set first they run
unchanged on the GPU, where Inductor emits Triton instead of C++ (the GPU format).
"""

import os
import runpy
import sys

import torch

device = os.environ.get("COMPAT_DEVICE", "cpu")
torch.set_default_device(device)
program = os.path.abspath(sys.argv[1])
sys.argv = [program, *sys.argv[2:]]
sys.path.insert(0, os.path.dirname(program))  # its own imports (corpus_helpers), as `python PROGRAM` has
runpy.run_path(program, run_name="__main__")
