#!/usr/bin/env bash
# mypy over the five packages under the names they import each other by (dyn_inspect.*).
# The editable install maps those names with an import hook mypy cannot follow, so without
# this tree every cross-module import would resolve to Any and go unchecked.
set -uo pipefail
cd "$(dirname "$0")/.."
tree=.venv/typecheck
mkdir -p "$tree/dyn_inspect"
for d in engine inspector lsp tui cli; do ln -sfn "$PWD/$d" "$tree/dyn_inspect/$d"; done
MYPYPATH="$tree" exec .venv/bin/mypy -p dyn_inspect.engine -p dyn_inspect.inspector -p dyn_inspect.lsp -p dyn_inspect.tui -p dyn_inspect.cli "$@"
