"""Kernel → source stacks kept per output code, for the compiles that never run codegen.

A warm FX-graph or AOTAutograd cache hands back the output code without running Inductor's
codegen, so the provenance wrapper (``torch_compat.install_provenance``) sees no kernel.
Torch itself keeps kernel stacks in its cache entry only when its provenance tracking was on
when the entry was written, and turning that on changes the program's cache keys and output
code (docs/security.md). So the recorder keeps what the wrapper saw in this user's
dyn-inspect cache (``user_cache.folder("kernel-lines")``), keyed by the output code's text,
and finds it again when the same code comes back from the cache: a cold compile recorded by
dyn-inspect (here or from another checkout) gives a warm one its lines. A compile warmed by
a plain run finds nothing, and the kernels keep the graph's or the call site's lines.

Nothing here touches Inductor's cache directory: the program's cache is the program's.
"""

from __future__ import annotations

import hashlib
import json

from dyn_inspect.engine import user_cache

FOLDER = "kernel-lines"
KEEP = 2048  # output codes remembered; each file is a few KB of stack text
MAX_BYTES = 4 << 20


def _key(code: str) -> bytes:
    return hashlib.blake2b(code.encode("utf-8", "surrogatepass"), digest_size=20).digest()


def keep(code: str, stacks: dict[str, list[str]]) -> None:
    """Remember ``stacks`` (``"kernel:N" → [traceback text]``) for the output code ``code``."""
    user_cache.write(user_cache.folder(FOLDER), _key(code), json.dumps(stacks).encode(), keep=KEEP, suffix=".json")


def recall(code: str) -> dict[str, list[str]] | None:
    """The stacks kept for ``code`` by an earlier recorded compile, or None."""
    data = user_cache.read(user_cache.folder(FOLDER), _key(code), MAX_BYTES, suffix=".json")
    if data is None:
        return None
    try:
        stacks = json.loads(data)
    except ValueError:
        return None
    if not isinstance(stacks, dict) or not all(isinstance(v, list) for v in stacks.values()):
        return None
    return {str(k): [str(t) for t in v] for k, v in stacks.items()}
