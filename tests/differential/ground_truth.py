"""Run a program plainly (no dyn-inspect) and dump torch's own account of it at exit.

    python ground_truth.py OUT.json script.py [args...]
    python ground_truth.py OUT.json -m package.module [args...]

Torch's view is read from torch itself: ``torch._dynamo.utils.counters``, the compilation
metrics Dynamo records per compile attempt, each ``torch._dynamo.reset()``, and the kernel
names in every Inductor output-code module loaded (a compile or an FX-cache hit). The
program is run with runpy, unmodified; the dump happens in an atexit hook so it is written
after ``sys.exit(N)`` and after an uncaught exception too. The wrapper touches nothing that
changes what torch compiles: it only wraps two functions to observe their calls.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import runpy
import sys

import torch
import torch._dynamo
import torch._dynamo.utils as dynamo_utils
from torch._inductor import codecache

# A kernel is defined in Inductor's output code as `NAME = async_compile.KIND(...)`.
KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.MULTILINE)

out_path = sys.argv[1]
loads: list[dict[str, object]] = []
resets: list[int] = []  # number of compilation-metrics records at each reset()

dynamo_utils.set_compilation_metrics_limit(100000)

_load_by_key_path = codecache.PyCodeCache.load_by_key_path.__func__


def _observed_load(cls, key, path, linemap=None, attrs=None, **kwargs):
    mod = _load_by_key_path(cls, key, path, linemap, attrs, **kwargs)
    try:
        with open(path) as f:
            source = f.read()
    except OSError:
        source = ""
    # Only wrapper modules (a graph's output code) define `call` (a function, or
    # `Runner.call` since torch 2.12); kernel-only modules
    # (Triton's async compile) are loaded through here too and are skipped.
    if "async_compile = AsyncCompile()" in source and re.search(r"^\s*def call\((self, )?args\)", source, re.MULTILINE):
        compile_id = torch._guards.CompileContext.current_compile_id()
        loads.append(
            {
                "path": path,
                "compile_id": str(compile_id) if compile_id is not None else None,
                "kernels": [m.group(1) for m in KERNEL_DEF.finditer(source)],
            }
        )
    return mod


codecache.PyCodeCache.load_by_key_path = classmethod(_observed_load)

_reset = torch._dynamo.reset


def _observed_reset() -> None:
    resets.append(len(dynamo_utils._compilation_metrics))
    _reset()


torch._dynamo.reset = _observed_reset


def _dump() -> None:
    metrics = []
    for m in list(dynamo_utils._compilation_metrics):
        metrics.append(
            {
                "compile_id": m.compile_id,
                "co_name": m.co_name,
                "co_filename": m.co_filename,
                "co_firstlineno": m.co_firstlineno,
                "fail_type": m.fail_type,
                "fail_reason": m.fail_reason,
                "fail_user_frame_filename": m.fail_user_frame_filename,
                "fail_user_frame_lineno": m.fail_user_frame_lineno,
                "recompile_reason": m.recompile_reason,
                "has_guarded_code": m.has_guarded_code,
                "is_forward": m.is_forward,
                "graph_op_count": m.graph_op_count,
            }
        )
    counters = {group: dict(values) for group, values in dynamo_utils.counters.items()}
    # The program's own files (modules imported from under its working directory, and the
    # script): what a kept copy of this account is keyed on (tests/corpus_support.py).
    cwd = os.path.realpath(os.getcwd())
    files = {os.path.realpath(f) for m in list(sys.modules.values()) if isinstance(f := getattr(m, "__file__", None), str)}
    if script:
        files.add(os.path.realpath(script))
    sources = sorted(os.path.relpath(f, cwd) for f in files if f.startswith(cwd + os.sep) and os.path.isfile(f))
    data = {
        "sources": sources,
        "counters": counters,
        "metrics": metrics,
        "resets": resets,
        "loads": loads,
        "recompile_limit": torch._dynamo.config.recompile_limit,
    }
    with open(out_path, "w") as f:
        json.dump(data, f, indent=1, default=str)


atexit.register(_dump)

args = sys.argv[2:]
script = args[0] if args and args[0] != "-m" else None
if args and args[0] == "-m":
    sys.argv = [args[1], *args[2:]]
    sys.path.insert(0, os.getcwd())
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
    runpy.run_path(args[0], run_name="__main__")
