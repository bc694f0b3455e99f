"""Torch's guard-failure reason text parsed into a structured ``GuardFailure``.

Torch reports one reason per cache entry that failed, as ``"<compile id>: <reason>"``;
``<reason>`` is either a tensor check's own message (``tensor 'x' size mismatch at index 0.
expected 4, actual 8``) or the source of the Python guard that returned False, followed by
the user line it came from (``n == 2   # return x * n  # t.py:7 in f``). Torch 2.11+ strips
``L[...]`` (``L['n']`` → ``n``); older releases keep it, so both spellings parse.

    parse_reason(reason) -> GuardFailure
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypedDict

GuardKind = Literal[
    "size",  # a tensor dim changed (static shapes)
    "stride",
    "rank",
    "dtype",
    "device",
    "dispatch_key",  # device type / autograd / autocast dispatch changed
    "requires_grad",
    "shape",  # a symbolic-shape guard (dynamic dim outside its range, 0/1 specialization)
    "scalar",  # a Python int/float argument (or stack value) specialized to a constant
    "constant",  # a bool/str/None/... argument compared to the compiled value
    "attribute",  # an attribute (self.k, obj.flag) changed
    "global",  # a global variable changed
    "length",  # len(list/tuple/dict) changed
    "dict_key",  # a key appeared in / disappeared from a dict (``___dict_contains``), e.g. **kwargs
    "object_id",  # ___check_obj_id: a different object (new lambda/module each call)
    "type_id",  # ___check_type_id: a value of a different type
    "global_state",  # grad mode, autocast, default dtype, ... changed
    "dynamic_marking",  # mark_dynamic / mark_static applied on one call and not another
    "aliasing",  # tensors that were distinct now alias (or the reverse)
    "deallocated",  # an object the guards referenced was freed
    "backend",  # called with a different backend callable
    "other",
]


@dataclass(frozen=True)
class GuardFailure:
    """One cache entry's failed guard, structured.

    ``source`` is the guarded value as torch names it (``x``, ``self.k``, ``G['SCALE']``,
    ``___stack0``); ``expected``/``actual`` are what the compiled entry assumed and what
    arrived, when torch says (a Python guard only says what it expected).
    """

    kind: GuardKind
    text: str  # the reason without the compile id and the trailing user-code comment
    entry: str | None = None  # the compile id of the cache entry that failed ("0/0")
    source: str | None = None
    dim: int | None = None
    expected: str | None = None
    actual: str | None = None
    user_code: str | None = None  # the user line torch attributes the guard to
    where: str | None = None  # "t.py:7 in f" as torch prints it (path shortened by torch)
    hint: str | None = None  # torch's own (HINT: ...) when present


# -- parsing -------------------------------------------------------------------------------

_ENTRY_RE = re.compile(r"^\s*(\[?\d+/\d+\]?(?:_\d+)?):\s*", re.S)
_TENSOR_RE = re.compile(r"^tensor '(?P<src>.+?)' (?P<rest>.*)$", re.S)
_DIM_RE = re.compile(r"^(?P<what>size|stride) mismatch at index (?P<dim>\d+)\. expected (?P<exp>.+?), actual (?P<act>.+?)\.?$", re.S)
_EXP_ACT_RE = re.compile(r"^(?P<what>dtype|rank|dispatch key set) mismatch\. expected (?P<exp>.+?), actual (?P<act>.+?)\.?$", re.S)
_DEVICE_RE = re.compile(r"device index mismatch\. Expected device index to be (?P<exp>\S+?),? actual (?P<act>\S+?)\.?$", re.I | re.S)
_REQ_GRAD_RE = re.compile(r"^requires_grad mismatch\. expected requires_grad=(?P<exp>\w+)")
_OBJ_ID_RE = re.compile(r"___check_obj_id\((?P<src>.+?), (?P<id>\d+)\)")
_TYPE_ID_RE = re.compile(r"___check_type_id\((?P<src>.+?), (?P<id>\d+)\)")
_MARKING_RE = re.compile(r"^hasattr\((?P<src>.+?), '_dynamo_\w*_indices'\) == (?P<exp>True|False)$")
_MARKING_RUNTIME_RE = re.compile(
    r"^_\w*dynamo\w*_marking is (?P<now>present|absent) on runtime tensor but was (?P<was>present|absent) at compile time"
)
# Torch prints a length guard as ``len(x) == 2`` or (2.13) as the failing ``len(x) != 2``.
_DICT_CONTAINS_RE = re.compile(r"""^(?P<neg>not )?___dict_contains\((?P<q>['"])(?P<key>.+?)(?P=q), (?P<src>.+)\)$""")
_LEN_RE = re.compile(r"^len\((?P<src>.+)\) (?:==|!=) (?P<exp>\d+)$")
_EQ_RE = re.compile(r"^(?P<src>.+?) (?P<op>==|!=|is not|is) (?P<exp>.+)$")
_SIZE_EXPR_RE = re.compile(r"(?P<src>[\w.\[\]'\"]+?)\.(?:size|stride)\(\)\[(?P<dim>\d+)\]")
_HINT_RE = re.compile(r"\s*\(HINT: (?P<hint>.*)\)\s*$", re.S)
_WHERE_NOTE_RE = re.compile(r"^(?P<where>\S+:\d+ in \S+) \((?P<note>.*)\)$", re.S)
_NUMBER_RE = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
IDENT_PATH_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _strip_local(source: str) -> str:
    """``L['x']`` → ``x`` (torch < 2.11 spelling), as torch itself does on newer releases."""
    return re.sub(r"L\[\s*['\"](.*?)['\"]\s*\]", r"\1", source)


def _split_comment(body: str) -> tuple[str, str | None, str | None, str | None]:
    """``expr  # user code  # file:line in fn (HINT: ...)`` → (expr, code, where, hint)."""
    hint = None
    m = _HINT_RE.search(body)
    if m:
        hint = m["hint"].strip()
        body = body[: m.start()]
    # The user-stack suffix (2.11+) is kept in the blob, but strip it if a caller passes it.
    body = body.split("\nUser stack trace:", 1)[0]
    parts = body.split("  # ")
    expr, code, where = body.strip(), None, None
    if len(parts) >= 3:
        expr, code, where = parts[0].strip(), parts[1].strip() or None, parts[-1].strip() or None
    elif len(parts) == 2:
        expr, where = parts[0].strip(), parts[1].strip() or None
    if where and (note := _WHERE_NOTE_RE.match(where)):
        # "t.py:72 in f (user code shown is first use of this value ...)": keep the note.
        where, hint = note["where"], hint or note["note"].strip()
    return expr, code, where, hint


def scalar_like(value: str) -> bool:
    return bool(_NUMBER_RE.match(value.strip()))


class _Context(TypedDict):
    """The parts of a reason every kind shares (GuardFailure's keyword arguments)."""

    entry: str | None
    user_code: str | None
    where: str | None
    hint: str | None


_EXP_ACT_KINDS: dict[str, GuardKind] = {"dtype": "dtype", "rank": "rank", "dispatch key set": "dispatch_key"}


def _parse_tensor(text: str, base: _Context) -> GuardFailure | None:
    t = _TENSOR_RE.match(text)
    if not t:
        return None
    src, rest = _strip_local(t["src"]), t["rest"].strip()
    if d := _DIM_RE.match(rest):
        return GuardFailure(
            "size" if d["what"] == "size" else "stride", text, source=src, dim=int(d["dim"]), expected=d["exp"], actual=d["act"], **base
        )
    if e := _EXP_ACT_RE.match(rest):
        return GuardFailure(_EXP_ACT_KINDS[e["what"]], text, source=src, expected=e["exp"], actual=e["act"], **base)
    if g := _REQ_GRAD_RE.match(rest):
        exp = {"0": "False", "1": "True"}.get(g["exp"], g["exp"])
        act = {"False": "True", "True": "False"}.get(exp)
        return GuardFailure("requires_grad", text, source=src, expected=exp, actual=act, **base)
    if dv := _DEVICE_RE.search(rest):
        return GuardFailure("device", text, source=src, expected=dv["exp"], actual=dv["act"], **base)
    return GuardFailure("other", text, source=src, **base)


def _parse_device(text: str, base: _Context) -> GuardFailure | None:
    dv = _DEVICE_RE.search(text)
    return GuardFailure("device", text, expected=dv["exp"], actual=dv["act"], **base) if dv else None


def _parse_global_state(text: str, base: _Context) -> GuardFailure | None:
    if not text.startswith("GLOBAL_STATE changed"):
        return None
    what = text.split(":", 1)[1].strip() if ":" in text else None
    return GuardFailure("global_state", text, source=what or None, **base)


def _parse_deallocated(text: str, base: _Context) -> GuardFailure | None:
    if not text.startswith("Cache line invalidated because"):
        return None
    gone = text.removeprefix("Cache line invalidated because").removesuffix("got deallocated").strip()
    return GuardFailure("deallocated", text, source=_strip_local(gone) or None, **base)


def _parse_aliasing(text: str, base: _Context) -> GuardFailure | None:
    if not (text.startswith("Duplicate tensors found") or "aliasing" in text.lower()):
        return None
    aliased = text.split(":", 1)[1].strip() if ":" in text else None
    return GuardFailure("aliasing", text, source=aliased, **base)


def _parse_backend(text: str, base: _Context) -> GuardFailure | None:
    return GuardFailure("backend", text, **base) if text.startswith("BACKEND_MATCH") else None


def _parse_dynamic_marking(text: str, base: _Context) -> GuardFailure | None:
    if dm := _MARKING_RE.match(text):
        return GuardFailure("dynamic_marking", text, source=_strip_local(dm["src"]), expected=dm["exp"], **base)
    if rt := _MARKING_RUNTIME_RE.match(text):
        # torch 2.13 names no tensor: "... is present on runtime tensor but was absent at compile time"
        return GuardFailure("dynamic_marking", text, expected=f"{rt['was']} when compiled", actual=rt["now"], **base)
    return None


def _parse_object_id(text: str, base: _Context) -> GuardFailure | None:
    o = _OBJ_ID_RE.search(text)
    return GuardFailure("object_id", text, source=_strip_local(o["src"]), expected=f"id {o['id']}", **base) if o else None


def _parse_type_id(text: str, base: _Context) -> GuardFailure | None:
    ty = _TYPE_ID_RE.search(text)
    return GuardFailure("type_id", text, source=_strip_local(ty["src"]), expected=f"type id {ty['id']}", **base) if ty else None


def _parse_shape(text: str, base: _Context) -> GuardFailure | None:
    s = _SIZE_EXPR_RE.search(text)
    return GuardFailure("shape", text, source=_strip_local(s["src"]), dim=int(s["dim"]), expected=text, **base) if s else None


def _parse_dict_key(text: str, base: _Context) -> GuardFailure | None:
    dc = _DICT_CONTAINS_RE.match(text)
    if not dc:
        return None
    # The guard held when compiled: "not ___dict_contains('k', d)" means k was absent then.
    was = "absent" if dc["neg"] else "present"
    return GuardFailure("dict_key", text, source=_strip_local(dc["src"]), dim=None, expected=f"{dc['key']!r} {was}", **base)


def _parse_length(text: str, base: _Context) -> GuardFailure | None:
    ln = _LEN_RE.match(text)
    return GuardFailure("length", text, source=_strip_local(ln["src"]), expected=ln["exp"], **base) if ln else None


def _parse_equality(text: str, base: _Context) -> GuardFailure | None:
    eq = _EQ_RE.match(text)
    if not eq:
        return None
    src, exp = _strip_local(eq["src"].strip()), eq["exp"].strip()
    if eq["op"] == "!=":
        exp = f"!= {exp}"
    kind: GuardKind
    if src.startswith("G[") or src.startswith("___G") or src.startswith("G."):
        kind = "global"
    elif "." in src.split("[", 1)[0] or src.startswith("L[") and "." in src:
        kind = "attribute"
    elif scalar_like(exp):
        kind = "scalar"
    else:
        kind = "constant"
    return GuardFailure(kind, text, source=src, expected=exp, **base)


Parser = Callable[[str, _Context], "GuardFailure | None"]

# The parsers in the order they are tried (the first that recognises the text wins: a
# tensor's "device index mismatch" before the bare one, the `==` catch-all last), each with
# the kinds it can answer. Anything none recognises is "other".
PARSERS: tuple[tuple[tuple[GuardKind, ...], Parser], ...] = (
    (("size", "stride", "dtype", "rank", "dispatch_key", "requires_grad", "device", "other"), _parse_tensor),
    (("device",), _parse_device),
    (("global_state",), _parse_global_state),
    (("deallocated",), _parse_deallocated),
    (("aliasing",), _parse_aliasing),
    (("backend",), _parse_backend),
    (("dynamic_marking",), _parse_dynamic_marking),
    (("object_id",), _parse_object_id),
    (("type_id",), _parse_type_id),
    (("shape",), _parse_shape),
    (("dict_key",), _parse_dict_key),
    (("length",), _parse_length),
    (("global", "attribute", "scalar", "constant"), _parse_equality),
)


@functools.lru_cache(maxsize=8192)
def parse_reason(reason: str) -> GuardFailure:
    """Structure one reason string (``"0/0: tensor 'x' size mismatch at index 0. expected 4,
    actual 8"``). Never raises: anything unrecognised is ``kind="other"`` with its text."""
    entry = None
    body = reason.strip()
    m = _ENTRY_RE.match(body)
    if m:
        entry = m[1].strip("[]")
        body = body[m.end() :]
    text, code, where, hint = _split_comment(body)
    base = _Context(entry=entry, user_code=code, where=where, hint=hint)
    for _kinds, parse in PARSERS:
        if (found := parse(text, base)) is not None:
            return found
    return GuardFailure("other", text, **base)
