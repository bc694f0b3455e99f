"""Compile ids that stay unique for a process's whole life.

Torch numbers compiles "frame/n" ("0/0", "1/3"; compiled autograd prefixes "!k/"), and
``torch._dynamo.reset()`` starts both counters again at 0: after a reset a new "0/0"
names a different function's compile. We key compiles by torch's id plus the number of
resets seen before it (the *epoch*): epoch 0 keeps torch's id unchanged, later epochs add
``@rN`` ("0/0@r1" is torch's "[0/0]" after the first reset), so an id still matches the
``[0/0]`` prefix in torch's own logs.

The epoch is detected in the record stream itself (a compile id that already started
begins again), so live recording and TORCH_TRACE import agree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_SUFFIX = "@r"
_CID_RE = re.compile(r"^(?P<ca>!\d+/)?(?P<frame>\d+)/(?P<n>\d+)(?:@r(?P<epoch>\d+))?$")


class CompileId(NamedTuple):
    epoch: int
    autograd: int | None  # compiled-autograd id ("!k/" prefix), else None
    frame: int
    n: int


def qualify(torch_id: str, epoch: int) -> str:
    """Torch's id in reset epoch ``epoch`` ("0/0", 1 → "0/0@r1")."""
    return torch_id if epoch == 0 else f"{torch_id}{_SUFFIX}{epoch}"


def torch_id(cid: str) -> str:
    """The id as torch prints it ("0/0@r1" → "0/0")."""
    return cid.split(_SUFFIX, 1)[0]


def epoch_of(cid: str) -> int:
    head, sep, tail = cid.partition(_SUFFIX)
    return int(tail) if sep and tail.isdigit() else 0


def frame_of(cid: str) -> str:
    """The frame part of an id, epoch kept: "3/1@r1" → "3@r1" (one code object's compiles)."""
    m = _CID_RE.match(cid)
    if m is None:
        return cid
    out = f"{m['ca'] or ''}{m['frame']}"
    return qualify(out, int(m["epoch"] or 0))


def parse(cid: str) -> CompileId | None:
    m = _CID_RE.match(cid)
    if m is None:
        return None
    autograd = int(m["ca"][1:-1]) if m["ca"] else None
    return CompileId(int(m["epoch"] or 0), autograd, int(m["frame"]), int(m["n"]))


def order_key(cid: str) -> tuple[object, ...]:
    """Capture order within one process: epoch, then plain before compiled-autograd ids,
    then numerically ("0/0" < "0/1" < "1/0" < "10/0" < "0/0@r1")."""
    p = parse(cid)
    if p is None:
        return (1 << 30, True, (), cid)
    return (p.epoch, p.autograd is not None, (p.autograd or 0, p.frame, p.n), cid)
