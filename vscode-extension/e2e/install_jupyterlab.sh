#!/usr/bin/env bash
# Installs what the JupyterLab test (jupyterlab.e2e.mjs) needs into a virtual environment of
# its own, cached by version beside install.sh's tools: JupyterLab and jupyterlab-lsp from
# the package registry (the kernel and the language server come from the interpreter under
# test, not from here).
# Usage: install_jupyterlab.sh PYTHON   (the base interpreter for the environment)
# Prints the environment's bin folder on its last line and exits 0; exits 3 with one line
# saying why when it cannot be installed (no registry): the caller then skips.
set -uo pipefail

JUPYTERLAB_VERSION=4.6.6
JUPYTERLAB_LSP_VERSION=5.3.0
python="${1:-python3}"
env_dir="${DYN_INSPECT_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dyn-inspect-e2e}/jupyterlab${JUPYTERLAB_VERSION}-lsp${JUPYTERLAB_LSP_VERSION}"
log="${env_dir}.install.log"
mkdir -p "$(dirname "$env_dir")"

if [ -f "$env_dir/.complete" ]; then
  echo "$env_dir/bin"
  exit 0
fi
# Built where it stays (a venv's scripts name their interpreter by path); .complete is
# written last, so a half-done install is redone.
rm -rf "$env_dir"
"$python" -m venv "$env_dir" >>"$log" 2>&1 || { echo "jupyterlab install: $python -m venv failed (see $log)" >&2; exit 3; }
"$env_dir/bin/pip" install -q --disable-pip-version-check "jupyterlab==$JUPYTERLAB_VERSION" "jupyterlab-lsp==$JUPYTERLAB_LSP_VERSION" >>"$log" 2>&1 \
  || { echo "jupyterlab install: pip could not install jupyterlab $JUPYTERLAB_VERSION / jupyterlab-lsp $JUPYTERLAB_LSP_VERSION (no registry? see $log)" >&2; exit 3; }
touch "$env_dir/.complete"
echo "$env_dir/bin"
