#!/usr/bin/env bash
# mypy over the packages under the names they import each other by (dyn_inspect.*).
# The editable install maps those names with an import hook mypy cannot follow, so without
# this tree every cross-module import would resolve to Any and go unchecked.
set -uo pipefail
cd "$(dirname "$0")/.."
tree=.venv/typecheck
mkdir -p "$tree/dyn_inspect"
for d in engine inspector lsp tui cli; do ln -sfn "$PWD/$d" "$tree/dyn_inspect/$d"; done
ln -sfn "$PWD/mcp_server" "$tree/dyn_inspect/mcp"  # installed as dyn_inspect.mcp
# dyn_inspect itself is notebook/ (the IPython extension's entry and the notebook face).
for f in notebook/*.py; do ln -sfn "$PWD/$f" "$tree/dyn_inspect/$(basename "$f")"; done
MYPYPATH="$tree" exec .venv/bin/mypy -p dyn_inspect "$@"
