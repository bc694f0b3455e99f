#!/usr/bin/env bash
# The test command (README, .ci/run): installs everything into .venv and runs every suite.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -c constraints.txt -e '.[test]' || exit 1

.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest: no tests collected"
  rc=0
fi

if [ -x vscode-extension/scripts/ci.sh ]; then
  DYN_INSPECT_PYTHON="$PWD/.venv/bin/python" bash vscode-extension/scripts/ci.sh || rc=1
fi
exit "$rc"
