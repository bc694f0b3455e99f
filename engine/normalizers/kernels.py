"""Generated kernels: ``inductor_output_code`` (the whole wrapper module) split into one
record per kernel (C++ on CPU, Triton on GPU), and Inductor's provenance artifacts mapping
kernels back to user source lines."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import Context, TraceRecord, handles, handles_artifact
from dyn_inspect.engine.normalizers.locations import parse_traceback
from dyn_inspect.engine.schema import Event, Kernel, KernelProvenance, Loc, OutputCode

# `name = async_compile.<backend>('name', '''src''' ...)` or `(..., r'''src''')`.
_DEF_RE = re.compile(
    r"^(?P<name>\w+) = async_compile\.(?P<api>triton|cpp_pybinding|cpp|cuda|halide|mps)\((?P<args>.*?)r?'''(?P<src>.*?)'''",
    re.M | re.S,
)
_COMMENT_RE = re.compile(r"# Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\], Original ATen: \[(?P<aten>[^\]]*)\]")
_HANDLE_RE = re.compile(r"# \[Provenance debug handles\] (?P<handle>[\w.]+:\d+)")
_BACKEND = {"triton": "triton", "cpp_pybinding": "cpp", "cpp": "cpp", "cuda": "cuda"}


def cpu_vectorization(src: str) -> str | None:
    """How a C++ kernel is vectorized: the ISA Inductor picked, or None when scalar."""
    if "at::vec::" not in src and "Vectorized<" not in src:
        return None
    low = src.lower()
    for isa in ("avx512", "avx2", "sve", "neon", "vsx", "zvector"):
        if isa in low:
            return isa
    return "vec"  # at::vec without an ISA macro in the source: the ISA is the build's default


def _split_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def parse_output_code(code: str) -> list[dict[str, object]]:
    """Kernels defined in an Inductor output module, with their fused ops."""
    kernels: list[dict[str, object]] = []
    for m in _DEF_RE.finditer(code):
        name, api, src = m["name"], m["api"], m["src"]
        # Triton: the comment block sits right above the definition.
        head = code[max(0, m.start() - 4000):m.start()]
        block = head[head.rfind("\n\n\n") + 1:] if "\n\n\n" in head else head
        comment = None
        for c in _COMMENT_RE.finditer(block):
            comment = c
        if comment is None:
            # C++: the comment is at the call site in call(): the line(s) above `name(`.
            call = re.search(rf"((?:\s*#[^\n]*\n)+)\s*{re.escape(name)}\(", code[m.end():])
            if call:
                comment = _COMMENT_RE.search(call[1])
        nodes = _split_list(comment["nodes"]) if comment else []
        aten = _split_list(comment["aten"]) if comment else []
        if not aten:
            # Fall back to the fused-op names Inductor puts in the kernel name.
            stem = re.sub(r"^(cpp|triton)_(fused|poi|red|per|tem|mm)_?", "", name)
            stem = re.sub(r"_\d+$", "", stem)
            stem = stem.replace("fused_", "")
            aten = [f"aten.{p}" for p in stem.split("_") if p] if stem and name.split("_")[1] == "fused" else []
        backend = _BACKEND.get(api, "other")
        kernels.append(
            {
                "name": name,
                "backend": backend,
                "src": src,
                "nodes": nodes,
                "aten": aten,
                "vectorized": cpu_vectorization(src) if backend == "cpp" else None,
            }
        )
    return kernels


@handles("inductor_output_code")
def output_code(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    code = record.payload or ""
    cid = record.compile_id or ""
    backward = cid in ctx.captured  # backward is compiled lazily, after compilation_metrics
    ctx.output_code[cid] = (code, backward)
    kernels = parse_output_code(code)
    body = record.body or {}
    yield OutputCode(
        code=ctx.blobs.put(code),
        path=body.get("file_path") or body.get("filename"),
        backward=backward,
        kernels=[str(k["name"]) for k in kernels],
    )
    for k in kernels:
        src = str(k["src"])
        yield Kernel(
            name=str(k["name"]),
            backend=k["backend"],  # type: ignore[arg-type]
            source=ctx.blobs.put(src),
            backward=backward,
            fused_ops=k["aten"],  # type: ignore[arg-type]
            source_nodes=k["nodes"],  # type: ignore[arg-type]
            vectorized=k["vectorized"],  # type: ignore[arg-type]
            lines=src.count("\n"),
        )


def _is_library(path: str) -> bool:
    return "site-packages" in path or "dist-packages" in path or path.startswith("<")


@handles_artifact("inductor_provenance_tracking_kernel_stack_traces")
def provenance(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    mapping = json.loads(record.payload or "{}")
    cid = record.compile_id or ""
    code, backward = ctx.output_code.get(cid, ("", False))
    # torch's map accumulates across graphs: keep the handles this output module uses.
    handles_here = set(_HANDLE_RE.findall(code))
    kernels: dict[str, list[Loc]] = {}
    for handle, traces in mapping.items():
        if handles_here and handle not in handles_here:
            continue
        name = handle.rsplit(":", 1)[0]
        locs: list[Loc] = []
        for trace in traces:
            frames = parse_traceback(trace)
            if frames:
                locs.append(frames[-1])
                if _is_library(frames[-1].file):
                    user = next((f for f in reversed(frames) if not _is_library(f.file)), None)
                    if user is not None:
                        locs.append(user)
        if locs:
            kernels.setdefault(name, []).extend(locs)
    if kernels:
        yield KernelProvenance(kernels=kernels, backward=backward)
