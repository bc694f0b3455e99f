"""Analyses over the run model, shared by the CLI, TUI, LSP and exports.

- ``recompiles``: torch's guard-failure reasons → ``GuardFailure`` + ``Suggestion``; a
  frame's ``recompile_timeline`` (``parse_reason``, ``suggest_for``, ``recompile_timeline``).
- ``guards``: a cache entry's guard tree parsed into lines; ``guard_diff`` between entries.
- ``breaks``: deduplicated break sites attributed to the nearest workspace frame.
- ``kernels``: kernels by compile and by source line; CPU vectorization coverage.
- ``graphs``: FX readable code → ``networkx.DiGraph``; op histogram; graph diff; DOT/SVG.
- ``diff``: run A vs run B (breaks, recompile causes, kernels, compile time).

Everything here reads the model and loads payloads through ``Run.blob_text``; nothing
from a log is executed.
"""
