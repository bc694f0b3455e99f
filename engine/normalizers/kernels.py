"""Generated kernels: ``inductor_output_code`` (the whole wrapper module) split into one
record per kernel (C++ on CPU, Triton on GPU), and Inductor's provenance artifacts mapping
kernels back to user source lines."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable

from dyn_inspect.engine.normalizers import NOT_EMITTED, Context, TraceOut, TraceRecord, emits, handles, handles_artifact
from dyn_inspect.engine.normalizers.locations import is_library_file, nearest_user_frame, parse_traceback
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


def comments_above_call(code: str, start: int, name: str) -> str | None:
    """The comment lines right above the first call ``name(`` after ``start``.

    The comment lines ``re.search(r"((?:\\s*#[^\\n]*\\n)+)\\s*NAME\\(", code[start:])`` finds
    (without blank lines and surrounding whitespace), found by walking lines back from each
    call instead: that regex backtracks quadratically over the long comment blocks of big
    GPU wrappers (0.6 s of a 10 MB ResNet-50 log; bench/bench_import.py).
    """
    call = re.compile(rf"{re.escape(name)}\(")
    for occ in call.finditer(code, start):
        k = occ.start()
        while k > start and code[k - 1].isspace():
            k -= 1
        if "\n" not in code[k : occ.start()]:
            continue  # not at the start of a line below a comment
        lines: list[str] = []
        end = k
        while end > start:
            line_start = max(code.rfind("\n", start, end) + 1, start)
            line = code[line_start:end]
            hash_at = line.find("#")
            if not line.strip():
                pass  # blank lines between comment lines are whitespace to the regex
            elif hash_at < 0:
                break
            elif line[:hash_at].strip():
                lines.append(line[hash_at:])  # code with a trailing comment: the top of the block
                break
            else:
                lines.append(line[hash_at:])
            end = line_start - 1
        if lines:
            return "\n".join(reversed(lines)) + "\n"
    return None


@functools.lru_cache(maxsize=1)
def _aten_names() -> frozenset[str]:
    try:
        import torch

        names = torch._C._dispatch_get_all_op_names()
    except Exception:  # noqa: BLE001 - importing a log without torch: no names to match
        return frozenset()
    return frozenset(n.split("::", 1)[1].split(".", 1)[0] for n in names if n.startswith("aten::"))


def ops_from_kernel_name(name: str) -> list[str]:
    """The ATen ops Inductor joins into a fused kernel's name (``cpp_fused_relu_threshold_backward_0``
    → relu, threshold_backward; ``triton_poi_fused__to_copy_0`` → _to_copy): greedy longest
    match against ATen's op names, because op names contain underscores themselves."""
    m = re.match(r"^(?:cpp|triton)_(?:\w+?_)?fused_(?P<stem>.+?)(?:_\d+)?$", name)
    if not m:
        return []
    tokens = m["stem"].split("_")  # empty tokens keep leading underscores ("_to_copy")
    known = _aten_names()
    ops: list[str] = []
    i = 0
    while i < len(tokens):
        for j in range(len(tokens), i, -1):
            candidate = "_".join(tokens[i:j])
            # Inductor graphs are functional: never an in-place op ("relu_"), so "relu__to_copy"
            # is relu + _to_copy.
            if candidate and not candidate.endswith("_") and (candidate in known or (not known and j == i + 1)):
                ops.append(f"aten.{candidate}")
                i = j
                break
        else:
            i += 1  # a fragment that names no ATen op
    return ops


def parse_output_code(code: str) -> list[dict[str, object]]:
    """Kernels defined in an Inductor output module, with their fused ops."""
    kernels: list[dict[str, object]] = []
    for m in _DEF_RE.finditer(code):
        name, api, src = m["name"], m["api"], m["src"]
        # Triton: the comment block sits right above the definition, after the blank lines
        # that end the previous one (no size cap: big GPU graphs put 4-8 KB of "Source node
        # to ATen node mapping" between the "Original ATen" line and the definition).
        sep = code.rfind("\n\n\n", 0, m.start())
        block: str | None = code[sep + 1 if sep >= 0 else 0 : m.start()]
        comment = None
        for c in _COMMENT_RE.finditer(block or ""):
            comment = c
        if comment is None:
            # C++: the comment is at the call site in call(): the line(s) above `name(`.
            block = comments_above_call(code, m.end(), name)
            if block is not None:
                comment = _COMMENT_RE.search(block)
        nodes = _split_list(comment["nodes"]) if comment else []
        aten = _split_list(comment["aten"]) if comment else []
        if not aten:
            aten = ops_from_kernel_name(name)
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


_AOT_ID_RE = re.compile(r"^# AOT ID: \['\w*?_(?P<which>forward|backward|inference)'\]", re.M)


def _is_backward(code: str, cid: str, ctx: Context) -> bool:
    m = _AOT_ID_RE.search(code[:200])
    if m:
        return m["which"] == "backward"
    return ctx.is_backward_phase(cid)


@handles("inductor_output_code")
def output_code(record: TraceRecord, ctx: Context) -> Iterable[Event]:
    code = record.payload or ""
    cid = record.compile_id or ""
    backward = _is_backward(code, cid, ctx)
    if not backward:
        ctx.forward_done.add(cid)
    ctx.output_code[cid] = (code, backward)
    kernels = parse_output_code(code)
    body = record.body or {}
    yield OutputCode(
        code=ctx.blobs.put(code),
        path=body.get("file_path") or body.get("filename"),
        backward=backward,
        kernels=[str(k["name"]) for k in kernels],
    )
    from_graph: dict[str, list[Loc]] = {}
    nodes = ctx.node_lines.get((cid, backward), {})
    for k in kernels:
        src = str(k["src"])
        locs = _dedup([nodes[n] for n in k["nodes"] if n in nodes])  # type: ignore[attr-defined]
        if locs:
            from_graph[str(k["name"])] = locs
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
    if from_graph:
        yield KernelProvenance(kernels=from_graph, backward=backward, origin="graph")
    # Neither yet: the line that called the compiled code (a frame traced inside library
    # code such as nn.Sequential has no user stack in its graphs). Provenance, when
    # Inductor writes it (often only once the backward compiled), replaces both guesses.
    call_site = ctx.call_sites.get(cid)
    rest = [str(k["name"]) for k in kernels if str(k["name"]) not in from_graph and (k["aten"] or k["nodes"])]
    if call_site is not None and rest:
        yield KernelProvenance(kernels={name: [call_site] for name in rest}, backward=backward, origin="call_site")


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
                if is_library_file(frames[-1].file):
                    user = nearest_user_frame(frames)
                    if user is not None:
                        locs.append(user)
        locs = [mapped for loc in locs if (mapped := ctx.local_loc(loc)) is not None]
        if locs:
            kernels.setdefault(name, []).extend(locs)
    yield from ctx.new_aliases()
    if kernels:
        yield KernelProvenance(kernels={k: _dedup(v) for k, v in kernels.items()}, backward=backward)


def _dedup(locs: list[Loc]) -> list[Loc]:
    seen: set[tuple[str, int]] = set()
    out: list[Loc] = []
    for loc in locs:
        if (loc.file, loc.line) not in seen:
            seen.add((loc.file, loc.line))
            out.append(loc)
    return out


# -- back to TORCH_TRACE -----------------------------------------------------------------


@emits(OutputCode)
def emit_output_code(event: OutputCode, out: TraceOut) -> None:
    code = out.text(event, "code", f"output code of {event.cid}")
    if code is not None:
        out.handles[event.cid or ""] = dict(h.rsplit(":", 1) for h in _HANDLE_RE.findall(code))
        out.emit(event.t, out.envelope("inductor_output_code", {"filename": event.path}, event.cid), code)


@emits(KernelProvenance)
def emit_provenance(event: KernelProvenance, out: TraceOut) -> None:
    # torch's map: "<kernel>:<debug handle>" → one formatted stack per source line. The
    # handle numbers come from the output module just written (the importer keeps only the
    # handles that module uses).
    handles = out.handles.get(event.cid or "", {})
    traces = {
        f"{name}:{handles.get(name, i)}": [
            f'  File "{loc.file}", line {loc.line}, in {loc.name or "?"}\n    {loc.code or ""}\n' for loc in locs
        ]
        for i, (name, locs) in enumerate(event.kernels.items(), start=1)
    }
    body = {"name": "inductor_provenance_tracking_kernel_stack_traces", "encoding": "json"}
    out.emit(event.t, out.envelope("artifact", body, event.cid), json.dumps(traces))


NOT_EMITTED.add(Kernel)  # split out of the output code, which is written whole
