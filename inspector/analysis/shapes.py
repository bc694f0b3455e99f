"""Dynamic shapes per compile: the symbols torch created (with the input dim they stand
for and the user line that created them), the ones it specialized back to a constant (and
the user line whose branch or comparison did it), the shape guards it logged — each
marked installed or not by the compile's guard tree (``installed_guards``) — and, from that
tree, the sizes each dim accepts without recompiling (``size_bounds``).

Torch's records name inputs by their guard source (``L['x'].size()[0]``); every face shows
them as the user wrote them (``x.shape[0]``) and keeps torch's spelling beside it. Guard
expressions use symbols (``s17 > 8``); ``readable_expr`` puts the dims back in
(``y.shape[0] > 8``). Read by the ``shapes`` command, the TUI's Shapes view and the LSP
hover (``specializations_at``); ``compile_shapes`` is what report.html can call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from dyn_inspect.engine.schema import Loc, ShapeGuard, Specialization, Symbol
from dyn_inspect.inspector.analysis.guards import guard_lines
from dyn_inspect.inspector.analysis.installed_guards import installed
from dyn_inspect.inspector.analysis.size_bounds import DimBounds, accepted_sizes
from dyn_inspect.inspector.locations import not_ours
from dyn_inspect.inspector.model import CompileInfo, RunModel
from dyn_inspect.inspector.run import Run

# torch's guard sources, innermost first: L['x'] / G['w'] and the accessors on them.
_LOCAL_RE = re.compile(r"\b[LG]\['([^'\]]+)'\]")
_SIZE_RE = re.compile(r"\.size\(\)\[(\d+)\]")
_STRIDE_RE = re.compile(r"\.stride\(\)\[(\d+)\]")
_ATTR_RE = re.compile(r"\._(?:modules|parameters|buffers)\['([^'\]]+)'\]")
_ITEM_RE = re.compile(r"\[(\d+)\]")
_DIM_RE = re.compile(r"^(?P<tensor>.+)\.size\(\)\[(?P<dim>\d+)\]$")
_SYMBOL_RE = re.compile(r"\b[su]\d+\b")

# torch's ``reason`` for a specialization, in words
REASONS = {
    "range_refined_to_singleton": "a comparison left it one possible value",
    "user_constraint": "the program asked for it",
}


def readable_source(source: str | None) -> str:
    """``L['x'].size()[0]`` → ``x.shape[0]``; ``L['self']._modules['fc'].weight`` →
    ``self.fc.weight``. Unknown shapes of source come back as torch wrote them."""
    if not source:
        return "?"
    text = _ATTR_RE.sub(r".\1", source)
    text = _SIZE_RE.sub(r".shape[\1]", text)
    text = _STRIDE_RE.sub(r".stride(\1)", text)
    return _LOCAL_RE.sub(r"\1", text)


def dim_of(source: str | None) -> tuple[str, int] | None:
    """(tensor as the user names it, dim) for a size source, else None."""
    if not source:
        return None
    m = _DIM_RE.match(source.split(",")[0].strip())
    if m is None:
        return None
    return readable_source(m["tensor"]), int(m["dim"])


@dataclass(frozen=True)
class SymbolInfo:
    symbol: str  # "s77", unique within its compile only
    source: str | None  # torch's guard source
    value: str | None  # the example value it was created from
    range: str | None  # value range "[2, int_oo]"
    loc: Loc | None  # the user line being traced when torch created it
    specialized: SpecializationInfo | None = None

    @property
    def name(self) -> str:
        return readable_source(self.source)


@dataclass(frozen=True)
class SpecializationInfo:
    symbol: str
    source: str | None
    value: str | None
    reason: str | None
    loc: Loc | None  # the user line whose code specialized it
    cid: str = ""
    log: str = ""

    @property
    def name(self) -> str:
        return readable_source(self.source)

    def describe(self, where: str | None = None) -> str:
        """ "dim 1 of `x` became static (= 3) because of `if x.shape[1] == 3:` at shapes.py:17"."""
        dim = dim_of(self.source)
        what = f"dim {dim[1]} of `{dim[0]}`" if dim else f"`{self.name}`"
        value = f" (= {self.value})" if self.value is not None else ""
        text = f"{what} became static{value}"
        if self.loc is not None:
            code = (self.loc.code or "").split("  #")[0].strip()
            text += f" because of `{code}`" if code else ""
            text += f" at {where or f'{self.loc.file}:{self.loc.line}'}"
        elif self.reason:
            text += f" ({REASONS.get(self.reason, self.reason)})"
        return text


@dataclass(frozen=True)
class ShapeGuardInfo:
    expr: str  # torch's, in symbols: "s17 > 8"
    readable: str  # with the dims put back: "y.shape[0] > 8"
    loc: Loc | None  # None: added by the compiler (Inductor's size bounds), not a user line
    # in the guard tree torch checks when the compiled code is called; False: logged while
    # compiling but not installed (a backward's equalities); None: no tree to compare with
    installed: bool | None = None


@dataclass
class CompileShapes:
    """One compile's dynamic-shape story."""

    compile: CompileInfo
    symbols: list[SymbolInfo] = field(default_factory=list)
    specializations: list[SpecializationInfo] = field(default_factory=list)
    guards: list[ShapeGuardInfo] = field(default_factory=list)
    # each dim of each input with a dynamic dim, as the guard tree accepts it (empty: no
    # tree read, or every input static)
    accepts: list[DimBounds] = field(default_factory=list)

    @property
    def installed_guards(self) -> list[ShapeGuardInfo]:
        """The shape guards torch checks before running this compile's code (every logged
        one when the guard tree was not recorded)."""
        return [g for g in self.guards if g.installed is not False]

    @property
    def not_installed(self) -> list[ShapeGuardInfo]:
        """Logged while compiling, absent from the guard tree: never checked at call time."""
        return [g for g in self.guards if g.installed is False]

    @property
    def rows(self) -> list[SymbolInfo | None]:
        """What a table of this compile lists, and so what a count of it says: one row per
        symbol, or one (None) for a compile with shape guards only."""
        return list(self.symbols) or [None]

    @property
    def function(self) -> str:
        cap = self.compile.capture
        return cap.co_name if cap and cap.co_name else "?"

    @property
    def automatic_dynamic(self) -> bool:
        """Symbols in a recompile: torch made the dims that changed dynamic (automatic
        dynamic), which is why this compile has symbols its first one had not."""
        return self.compile.recompile is not None and bool(self.symbols)

    @property
    def dynamic(self) -> list[SymbolInfo]:
        """Symbols still dynamic in the compiled graph (not specialized)."""
        return [s for s in self.symbols if s.specialized is None]


def readable_expr(expr: str, names: dict[str, str]) -> str:
    """A guard expression with each symbol replaced by the dim it stands for."""
    out = _SYMBOL_RE.sub(lambda m: names.get(m.group(0), m.group(0)), expr)
    eq = re.fullmatch(r"Eq\((.+), (.+)\)", out)
    if eq:
        out = f"{eq[1]} == {eq[2]}"
    ne = re.fullmatch(r"Ne\((.+), (.+)\)", out)
    if ne:
        out = f"{ne[1]} != {ne[2]}"
    return out


def shapes_of(c: CompileInfo, run: Run | None = None) -> CompileShapes:
    """One compile's shapes; with ``run`` (to read the guard tree) each logged shape guard
    says whether torch installed it."""
    specs = [_spec(s, c) for s in c.specializations]
    by_symbol = {s.symbol: s for s in specs}
    # torch logs a symbol again when a second input dim is unified with it: one row each.
    unique: list[Symbol] = []
    seen: set[tuple[str, str | None]] = set()
    for sym in c.symbols:
        if (sym.symbol, sym.source) not in seen:
            seen.add((sym.symbol, sym.source))
            unique.append(sym)
    symbols = [_symbol(s, by_symbol.get(s.symbol)) for s in unique]
    names = {s.symbol: s.name for s in symbols}
    # torch logs a guard again when the same check runs twice while tracing (GPT-2 with an
    # attention mask: transformers' two length checks, each logged twice): one row each, as
    # the guard tree holds it once.
    guards: list[ShapeGuardInfo] = []
    logged: set[tuple[str, str | None, int | None]] = set()
    for g in (_guard(g, names) for g in c.shape_guards):
        key = (g.expr, g.loc.file if g.loc else None, g.loc.line if g.loc else None)
        if key not in logged:
            logged.add(key)
            guards.append(g)
    accepts: list[DimBounds] = []
    if run is not None:
        tree = guard_lines(run, c)
        accepts = accepted_sizes(tree)
        if guards:
            found = installed(tree, c.symbols, [g.expr for g in guards])
            guards = [replace(g, installed=i) for g, i in zip(guards, found, strict=True)]
    return CompileShapes(c, symbols, specs, guards, accepts)


def _symbol(s: Symbol, spec: SpecializationInfo | None) -> SymbolInfo:
    return SymbolInfo(s.symbol, s.source, s.value, s.range, not_ours(s.loc), spec)


def _spec(s: Specialization, c: CompileInfo) -> SpecializationInfo:
    return SpecializationInfo(s.symbol, s.source, s.value, s.reason, not_ours(s.loc), c.cid, c.log)


def _guard(g: ShapeGuard, names: dict[str, str]) -> ShapeGuardInfo:
    return ShapeGuardInfo(g.expr, readable_expr(g.expr, names), not_ours(g.loc))


def compile_shapes(model: RunModel, run: Run | None = None) -> list[CompileShapes]:
    """Every compile that created a symbol, specialized one or added a shape guard, in
    compile order (``run``: see ``shapes_of``)."""
    out = []
    for c in model.compiles_in_order():
        if c.symbols or c.specializations or c.shape_guards:
            out.append(shapes_of(c, run))
    return out


def specializations_at(model: RunModel, file: str, line: int) -> list[SpecializationInfo]:
    """Specializations whose user line is ``file:line`` (paths compared as recorded)."""
    return [
        s for cs in compile_shapes(model) for s in cs.specializations if s.loc is not None and s.loc.line == line and s.loc.file == file
    ]
