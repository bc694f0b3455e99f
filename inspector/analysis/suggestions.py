"""What to do about a recompile: one ``Suggestion`` per kind of guard failure (a table,
``_SUGGEST``, keyed by ``GuardKind``), specific where the frame's context makes it so.

A suggestion's code snippet is kept only for a fix kind a test verifies
(inspector/analysis/fix_kinds.py); its sentence always.

    suggest(failure, ctx) -> Suggestion
    suggest_for(reason) -> Suggestion          # from torch's reason text alone
    limit_suggestion(limit) -> Suggestion
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from dyn_inspect.inspector.analysis.fix_kinds import FixKind, offered
from dyn_inspect.inspector.analysis.guard_failures import IDENT_PATH_RE, GuardFailure, GuardKind, parse_reason, scalar_like


@dataclass(frozen=True)
class Suggestion:
    """What to do about a recompile: a sentence, plus a code snippet when one applies."""

    text: str
    code: str | None = None
    # what kind of fix ``code`` is (inspector/analysis/fix_kinds.py): ``suggest`` keeps the
    # code only for kinds a test verifies
    kind: FixKind | None = None


# -- suggestions ---------------------------------------------------------------------------


def _var(source: str | None, fallback: str = "x") -> str:
    """A name usable in a snippet: the source when it is a plain Python path."""
    if source and IDENT_PATH_RE.match(source) and not source.startswith("___"):
        return source
    return fallback


_SUBSCRIPT_RE = re.compile(r"""^(?P<base>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\[\s*(?P<q>['"])(?P<key>[^'"]+)(?P=q)\s*\]$""")
_KWARGS_NAMES = ("kwargs", "kw", "kwds")
# an optimizer's float lr, as a guard source names it (causes.py reads the same one)
LR_SOURCE_RE = re.compile(r"""param_groups\[\d+\]\[\s*['"]lr['"]\s*\]$""")
_INT_RE = re.compile(r"^-?\d+$")
RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<fn>\w+?)_at_(?P<line>\d+)$")


@dataclass(frozen=True)
class SuggestContext:
    """What the frame around a guard failure says, when known: advice that depends on it is
    given only when it is known to be right (``suggest`` says less without it)."""

    varkw: str | None = None  # the compiled function's ``**kwargs`` parameter name
    resume_line: int | None = None  # a resume function: the line of the break it resumes after
    item_break: bool = False  # that break is a ``Tensor.item()`` break
    repeats: int = 1  # recompiles of this frame that failed on the same guard source
    # the function the user compiled (a resume function's original), named in snippets
    function: str | None = None
    # the recompile that followed a size failure made no dim dynamic: automatic dynamic
    # shapes were off (``torch.compile(dynamic=False)``), so every new size compiles again
    static: bool = False
    # every input dim the recompile made dynamic (automatic dynamic), torch's order:
    # ("input_ids", 1), ("attention_mask", 1) — marking only the failed one is not enough
    # where the program compares them (transformers checks the mask against the ids)
    dynamic_dims: tuple[tuple[str, int], ...] = ()


def _fn(ctx: SuggestContext | None, fallback: str = "fn") -> str:
    """The compiled function's name for a ``torch.compile(<fn>, ...)`` snippet. A module's
    ``forward`` is compiled as the module (``torch.compile(model)``), not by its method's name."""
    if ctx is None or not ctx.function or ctx.function == "forward":
        return "model" if ctx is not None and ctx.function == "forward" else fallback
    return ctx.function


def mark_dynamic_code(dims: list[tuple[str, int]]) -> str:
    """``torch._dynamo.mark_dynamic(a, 1)``, one line per input dim (the one builder of
    that snippet: suggestions, root-cause fixes and quick fixes all insert this text)."""
    return "\n".join(f"torch._dynamo.mark_dynamic({var}, {dim})" for var, dim in dims)


def _dims_with(f: GuardFailure, var: str, ctx: SuggestContext | None) -> list[tuple[str, int]]:
    """The failed dim first, then every other input dim the recompile made dynamic."""
    out = [(var, f.dim if f.dim is not None else 0)]
    for name, dim in ctx.dynamic_dims if ctx is not None else ():
        if (name, dim) not in out and IDENT_PATH_RE.match(name) and not name.startswith("___"):
            out.append((name, dim))
    return out


_STATIC_TEXT = (
    "torch did not make it dynamic after the recompile (automatic dynamic shapes are off: "
    "torch.compile(dynamic=False)), so every new size compiles again until the recompile limit. "
    "Compile with dynamic=None (the default: dynamic after one recompile) or dynamic=True, "
    "or mark the dim dynamic before the call."
)


def _keyword(source: str | None, ctx: SuggestContext | None) -> str | None:
    """``kwargs['input_ids']`` → ``input_ids`` when ``kwargs`` is the frame's ``**kwargs``
    (or, without a frame, is spelt like one)."""
    m = _SUBSCRIPT_RE.match(source or "")
    if m is None or not m["key"].isidentifier():
        return None
    varkw = ctx.varkw if ctx is not None else None
    if m["base"] == varkw or (varkw is None and m["base"] in _KWARGS_NAMES):
        return m["key"]
    return None


def _snippet_var(source: str | None) -> str | None:
    """The source as a Python expression the user can write, else None (no snippet is
    better than one naming a placeholder)."""
    if not source or source.startswith("___"):
        return None
    if IDENT_PATH_RE.match(source) or _SUBSCRIPT_RE.match(source):
        return source
    return None


def _is_float(value: str | None) -> bool:
    return bool(value) and scalar_like(value or "") and not _INT_RE.match((value or "").strip())


def is_stack_value(source: str | None) -> bool:
    return bool(source and source.startswith("___stack"))


def _suggest_size(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    if is_stack_value(f.source):
        return Suggestion(
            f"dim {f.dim} of an intermediate tensor carried across a graph break (`{f.source}`) changed "
            f"from {f.expected} to {f.actual}: this resume frame was compiled for a static size. Mark the "
            f"dim dynamic on the input it is computed from, or compile `{_fn(ctx, 'model')}` with dynamic=True.",
            f"torch.compile({_fn(ctx, 'model')}, dynamic=True)",
            "dynamic_true_resume",
        )
    keyword = _keyword(f.source, ctx)
    if ctx is not None and ctx.resume_line is not None and keyword is None:
        # A resume function's arguments are the locals live at the break: the user
        # cannot mark them before a call, only the compiled function's own inputs.
        return Suggestion(
            f"dim {f.dim} of `{src}`, carried across the graph break at line {ctx.resume_line} into "
            f"this resume function, changed from {f.expected} to {f.actual}: it was compiled for a "
            f"static size. Mark the dim dynamic on the compiled function's input it is computed "
            f"from, or compile `{_fn(ctx)}` with dynamic=True"
            + (f"; {_STATIC_TEXT}" if ctx.static else "; otherwise torch recompiles once and then goes dynamic."),
            f"torch.compile({_fn(ctx)}, dynamic=True)",
            "dynamic_true_resume",
        )
    if keyword is not None:
        kdims = [(keyword, f.dim if f.dim is not None else 0)] + [
            (k, d) for n, d in (ctx.dynamic_dims if ctx is not None else ()) if (k := _keyword(n, ctx) or n) != keyword and k.isidentifier()
        ]
        also = f" (and {', '.join(f'dim {d} of `{n}`' for n, d in kdims[1:])}, which changed with it)" if len(kdims) > 1 else ""
        later = (
            f"; {_STATIC_TEXT}"
            if ctx is not None and ctx.static
            else " so one graph serves every size; otherwise torch recompiles once and then goes dynamic."
        )
        return Suggestion(
            f"dim {f.dim} of the keyword argument `{keyword}` changed from {f.expected} to {f.actual}{also}: "
            f"torch compiled for a static size. Mark {'these dims' if len(kdims) > 1 else 'that dim'} dynamic on the tensors you pass "
            f"before the first call (or compile with dynamic=True){later}",
            mark_dynamic_code(kdims) + (f"  # the tensor passed as {keyword}=" if len(kdims) == 1 else ""),
            "mark_dynamic",
        )
    var = _snippet_var(f.source)
    dims = _dims_with(f, var, ctx) if var is not None else []
    also = f" (and {', '.join(f'dim {d} of `{n}`' for n, d in dims[1:])}, which changed with it)" if len(dims) > 1 else ""
    if ctx is not None and ctx.static:
        return Suggestion(
            f"dim {f.dim} of `{src}` changed from {f.expected} to {f.actual}: torch compiled for a static size, and {_STATIC_TEXT}",
            f"torch.compile({_fn(ctx)}, dynamic=True)" if var is None else mark_dynamic_code(dims),
            "dynamic_true_static" if var is None else "mark_dynamic",
        )
    return Suggestion(
        f"dim {f.dim} of `{src}` changed from {f.expected} to {f.actual}{also}: torch compiled for a "
        f"static size. Mark {'these dims' if len(dims) > 1 else 'the dim'} dynamic before the first call (or compile with dynamic=True) "
        f"so one graph serves every size; otherwise torch recompiles once and then goes dynamic.",
        mark_dynamic_code(dims) if var is not None else None,
        "mark_dynamic",
    )


def _suggest_global_state(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    return Suggestion(
        f"global torch state changed ({f.source or 'grad mode/autocast/default dtype'}): e.g. calling "
        f"under torch.no_grad() after calling with grad enabled. Each state compiles its own graph; "
        f"expected for train + eval, otherwise keep the state the same across calls."
    )


def _suggest_scalar(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    var = _var(f.source, "n")
    if is_stack_value(f.source) and _is_float(f.expected):
        # A float carried across a break into a resume function is guarded by value even
        # with dynamic=True (checked on torch 2.13): dynamic=True is no fix here.
        if ctx is not None and ctx.item_break and ctx.resume_line is not None:
            return Suggestion(
                f"a float from the `.item()` at line {ctx.resume_line} crossed the graph break into "
                f"this resume function and changed (compiled for {f.expected}): the float is guarded "
                f"by value, so each new value compiles again (dynamic=True does not change that). "
                f"Keep it a tensor (drop the .item()), or let Dynamo trace .item() so there is no "
                f"break at all.",
                "torch._dynamo.config.capture_scalar_outputs = True",
                "capture_scalar_outputs",
            )
        return Suggestion(
            f"a Python float carried across a graph break (`{f.source}`, compiled for {f.expected}) "
            f"changed: it is guarded by value, so each new value compiles again. Keep the value a "
            f"tensor across the break."
        )
    if is_stack_value(f.source):
        return Suggestion(
            f"a Python number on the stack (`{f.source}`, compiled for {f.expected}) changed: Dynamo "
            f"specializes Python ints/floats to constants. Pass it as a tensor, or compile with "
            f"dynamic=True so numbers become symbolic.",
            f"torch.compile({_fn(ctx)}, dynamic=True)",
            "dynamic_true_scalar",
        )
    later = (
        "torch did not make it dynamic after the recompile (dynamic=False): every value compiles again."
        if ctx is not None and ctx.static
        else "torch also makes it dynamic automatically after one recompile."
    )
    return Suggestion(
        f"the Python number `{src}` was specialized to {f.expected} and changed: each value compiles "
        f"a new graph. Pass it as a tensor (torch.tensor({var})), or compile with dynamic=True; {later}",
        f"torch.compile({_fn(ctx)}, dynamic=True)  # or pass torch.tensor({var})",
        "dynamic_true_scalar",
    )


def _suggest_attribute(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    if LR_SOURCE_RE.search(f.source or "") and _is_float(f.expected):
        # A compiled optimizer step guards on the float lr: a scheduler changing it recompiles
        # every step. torch's documented fix is a tensor lr (read at run time).
        return Suggestion(
            f"the optimizer's learning rate changed (compiled for {f.expected}): a Python float lr is "
            f"baked into the compiled step, so every new value (e.g. from an LR scheduler) compiles "
            f"again. Give the optimizer a tensor lr; its value is then read at run time.",
            f"lr=torch.tensor({f.expected})  # in the optimizer's constructor, e.g. torch.optim.SGD(params, lr=torch.tensor({f.expected}))",
            "tensor_lr",
        )
    # allow_unspec_int_on_nn_module is about ints only (and only on an nn.Module).
    unspec = bool(_INT_RE.match((f.expected or "").strip())) and (f.source or "").startswith("self.")
    return Suggestion(
        f"the attribute `{src}` changed (compiled for {f.expected}): Dynamo bakes attribute values into "
        f"the graph. Keep it constant during compiled calls, or store it as a tensor/buffer so its "
        f"value is read at run time."
        + (
            " For int attributes on an nn.Module you can also set torch._dynamo.config.allow_unspec_int_on_nn_module = True."
            if unspec
            else ""
        ),
        "torch._dynamo.config.allow_unspec_int_on_nn_module = True" if unspec else None,
        "unspec_int_on_module",
    )


def _suggest_global(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    src = re.sub(r"^G\[\s*['\"](.*?)['\"]\s*\]", r"\1", src)
    return Suggestion(
        f"the global `{src}` changed (compiled for {f.expected}): globals are baked into the graph. "
        f"Pass it as an argument (a tensor for numbers) instead of reading a mutable global."
    )


def _suggest_dict_key(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    key, _, was = (f.expected or "").rpartition(" ")
    if ctx is not None and ctx.varkw is not None and f.source == ctx.varkw:
        what = "a new keyword argument was passed" if was == "absent" else "a keyword argument was left out"
        return Suggestion(
            f"{what}: {key} ({'not passed' if was == 'absent' else 'passed'} when compiled); each set of "
            f"keyword names in `**{f.source}` compiles its own graph. Pass the same keyword arguments on "
            f"every call."
        )
    return Suggestion(
        f"the key {key} {'appeared in' if was == 'absent' else 'disappeared from'} `{src}` (it was {was} when "
        f"compiled): the dict's keys are part of the guards, so each set of keys compiles its own graph."
    )


def _suggest_length(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    if ctx is not None and ctx.varkw is not None and f.source == ctx.varkw:
        return Suggestion(
            f"a new keyword argument was passed (or one left out): the compiled call had "
            f"{f.expected} keyword argument{'s' if f.expected != '1' else ''} in `**{f.source}`, and each "
            f"set of keyword names compiles its own graph. Pass the same keyword arguments on every call."
        )
    # What the container is (a list unrolled in a loop, a dict, ...) is not known here.
    return Suggestion(
        f"the length of `{src}` changed (compiled for {f.expected}): each length compiles its own "
        f"graph. Keep the number of items the same across calls if it changes by accident."
    )


def _suggest_object_id(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    if (f.source or "").endswith(".__code__"):
        # Guarding __code__ means a different function (a lambda re-created in a loop
        # keeps its code object and would not fail this guard).
        fn = (f.source or "").removesuffix(".__code__")
        return Suggestion(
            f"a different function was passed as `{fn}` than when compiled: the compiled code is "
            f"specialized to the function it calls, so each distinct function compiles its own "
            f"graph. Expected for a few functions."
        )
    text = (
        f"`{src}` is a different object than when compiled ({f.expected}): the compiled code is "
        f"specialized to that object, so each distinct object compiles its own graph."
    )
    if ctx is not None and ctx.repeats >= 3:
        # Repeated identity failures on one source: likely a new object on every call.
        text += (
            f" `{src}` changed on {ctx.repeats} recompiles: if it is created on every call (a "
            f"lambda, functools.partial, a new module), create it once and reuse it."
        )
    return Suggestion(text)


def _suggest_shape(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    src = f.source or "the value"
    if (f.text or "").lstrip().startswith("2 <=") or "0/1 specialization" in (f.where or "") + (f.hint or ""):
        return Suggestion(
            f"dim {f.dim} of `{src}` is dynamic but a size of 0 or 1 arrived: torch specializes sizes "
            f"0 and 1. Avoid size-1 inputs, or mark the dim unbacked.",
            f"torch._dynamo.decorators.mark_unbacked({_var(f.source)}, {f.dim})",
            "mark_unbacked",
        )
    return Suggestion(
        f"a symbolic-shape guard on dim {f.dim} of `{src}` failed ({f.text}): the new size is outside "
        f"what the dynamic graph assumed. Relax the range with torch._dynamo.mark_dynamic(x, dim, "
        f"min=..., max=...), or check which operation specialized the size.",
        f"torch._dynamo.mark_dynamic({_var(f.source)}, {f.dim})",
        "mark_dynamic_range",
    )


# The kinds whose advice needs nothing but the failure itself: kind → (text, code, fix
# kind), ``str.format`` templates over ``_fields``. One function (``_suggest_plain``)
# serves them all; the kinds whose advice depends on more are the functions above.
_PLAIN: dict[GuardKind, tuple[str, str | None, FixKind | None]] = {
    "stride": (
        "the stride of dim {dim} of `{src}` changed ({expected} → {actual}): the input's memory "
        "layout differs between calls (a transpose/view or channels_last). Pass a consistent layout, "
        "e.g. call .contiguous() before the compiled function.",
        "{var} = {var}.contiguous()",
        "contiguous",
    ),
    "rank": (
        "`{src}` changed rank ({expected} → {actual} dims): each rank needs its own graph. "
        "Reshape to a fixed rank before the call if the rank varies by accident.",
        None,
        None,
    ),
    "dtype": (
        "`{src}` changed dtype ({expected} → {actual}): each dtype compiles its own graph. "
        "Cast to one dtype before the compiled call if the change is unintended.",
        "{var} = {var}.to(torch.{dtype})",
        "cast_dtype",
    ),
    "device": (
        "`{src}` arrived on a different device or dispatch set ({expected} → {actual}): each "
        "device/autograd/autocast combination compiles its own graph. Move inputs to one device "
        "before the call, and keep autocast/grad settings the same across calls.",
        None,
        None,
    ),
    "requires_grad": (
        "`{src}` changed requires_grad ({expected} → {actual}): training and inference calls get "
        "separate graphs. Expected when you alternate train/eval; otherwise keep requires_grad fixed "
        "(e.g. .detach() the input).",
        None,
        None,
    ),
    "dynamic_marking": (
        "`{src}` was marked dynamic (or static) on one call and not on another: the marking is "
        "part of the guards. Mark the tensor the same way before every call, or mark it once on "
        "a tensor you reuse.",
        "torch._dynamo.mark_dynamic({var}, 0)  # before every call",
        "mark_dynamic_every_call",
    ),
    "constant": (
        "the argument `{src}` changed (compiled for {expected}): non-tensor arguments are guarded "
        "by value, so each distinct value gets a graph. Expected for a few modes; if it takes many "
        "values, move the branch outside the compiled function or pass a tensor.",
        None,
        None,
    ),
    "type_id": (
        "`{src}` has a different type than when compiled: pass values of one type (e.g. always a "
        "tensor, never sometimes a Python number or None).",
        None,
        None,
    ),
    "aliasing": (
        "inputs alias differently than when compiled ({source}): passing the same tensor as two "
        "arguments (or not) changes the graph. Pass distinct tensors (clone) consistently.",
        None,
        None,
    ),
    "deallocated": (
        "`{src}` was freed, invalidating the cached graph: keep objects the compiled function uses "
        "(modules, parameters) alive instead of recreating them.",
        None,
        None,
    ),
    "backend": (
        "torch.compile was called with a different backend callable: create the backend once (or "
        "wrap it in functools.partial) and reuse it.",
        None,
        None,
    ),
    "other": ("guard failed: {text}. Run with TORCH_LOGS=recompiles_verbose for every failing guard.", None, None),
}
_PLAIN["dispatch_key"] = _PLAIN["device"]


def _suggest_plain(f: GuardFailure, ctx: SuggestContext | None) -> Suggestion:
    """The ``_PLAIN`` template of the failure's kind, filled from its fields."""
    text, code, kind = _PLAIN[f.kind]
    fields = {
        "src": f.source or "the value",
        "source": f.source,
        "var": _var(f.source),
        "dim": f.dim,
        "expected": f.expected,
        "actual": f.actual,
        "text": f.text,
        "dtype": _torch_dtype(f.expected),
    }
    return Suggestion(text.format(**fields), code.format(**fields) if code is not None else None, kind)


# kind → its suggestion (tests/inspector/test_guard_kinds.py: every GuardKind has one and a real example).
_SUGGEST: dict[GuardKind, Callable[[GuardFailure, SuggestContext | None], Suggestion]] = {
    **dict.fromkeys(_PLAIN, _suggest_plain),
    "size": _suggest_size,
    "global_state": _suggest_global_state,
    "scalar": _suggest_scalar,
    "attribute": _suggest_attribute,
    "global": _suggest_global,
    "dict_key": _suggest_dict_key,
    "length": _suggest_length,
    "object_id": _suggest_object_id,
    "shape": _suggest_shape,
}


def suggest(f: GuardFailure, ctx: SuggestContext | None = None) -> Suggestion:
    """A concrete suggestion for one structured guard failure. ``ctx`` (the frame's
    ``**kwargs`` name, resume-function origin, repeats) makes some advice specific; without
    it the advice that depends on it is left out rather than guessed. Its code is kept only
    for a fix kind a test verifies (``fix_kinds.VERIFIED``)."""
    return _offered(_SUGGEST[f.kind](f, ctx))


def _offered(s: Suggestion) -> Suggestion:
    code = offered(s.kind, s.code)
    return s if code == s.code else Suggestion(s.text, None, None)


_DTYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Int": "int32",
    "Long": "int64",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
    "ComplexFloat": "complex64",
    "ComplexDouble": "complex128",
}


def _torch_dtype(name: str | None) -> str:
    """torch's C++ dtype name (``Float``) → the Python attribute (``float32``)."""
    if not name:
        return "float32"
    return _DTYPES.get(name, name.removeprefix("torch.").lower())


def suggest_for(reason: str) -> Suggestion:
    """``suggest(parse_reason(reason))``: the suggestion for one raw reason string."""
    return suggest(parse_reason(reason))


def limit_suggestion(limit: int | None) -> Suggestion:
    n = f" ({limit})" if limit is not None else ""
    return _offered(
        Suggestion(
            f"the recompile limit{n} was reached: this frame runs eagerly (uncompiled) from here on. "
            f"Fix the recompile causes above; raise the limit only if the variants are expected.",
            f"torch._dynamo.config.recompile_limit = {(limit or 8) * 2}",
            "raise_recompile_limit",
        )
    )
