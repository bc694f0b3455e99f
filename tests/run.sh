#!/usr/bin/env bash
# The test command (README, .ci/run): installs everything into .venv and runs every suite.
# `tests/run.sh --quick [pytest args]`: the inner loop (docs/testing.md, "The quick tier"):
# no install while .venv is already installed from this pyproject.toml and constraints.txt
# (`--quick --install` installs anyway), no system tools, no extension suites, pytest
# without the tests marked `slow`, on corpus recordings kept between invocations in
# ~/.cache/dyn-inspect-tests/ under a fingerprint of the recorder and the recorded programs.
set -uo pipefail
cd "$(dirname "$0")/.."
# `tests/run.sh --repeat N [pytest args]`: the whole command N times in a row (a flake shows
# as one failed pass among green ones); each pass's exit status and wall time are listed at
# the end, and the exit status is non-zero when any pass failed.
if [ "${1:-}" = "--repeat" ] || [[ "${1:-}" == --repeat=* ]]; then
  if [ "$1" = "--repeat" ]; then repeat=${2:-}; shift 2 || shift; else repeat=${1#--repeat=}; shift; fi
  [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: --repeat needs a positive count, got '${repeat}'"; exit 2; }
  results=() failed=0
  for i in $(seq 1 "$repeat"); do
    start=$(date +%s)
    bash tests/run.sh "$@"
    pass_rc=$?
    results+=("pass $i/$repeat: exit $pass_rc, $(( $(date +%s) - start )) s")
    [ "$pass_rc" -eq 0 ] || failed=$((failed + 1))
  done
  printf '%s\n' "${results[@]}"
  echo "repeat: $((repeat - failed))/$repeat passes green"
  [ "$failed" -eq 0 ]
  exit $?
fi
quick=0 force_install=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --install) force_install=1; shift ;;
    *) break ;;
  esac
done
[ "$force_install" -eq 0 ] || [ "$quick" -eq 1 ] || { echo "tests/run.sh: --install goes with --quick (the full command always installs)"; exit 2; }
# Everything the command's tools leave in the temp folder (pytest's folders, the tests' caches,
# torch's precompiled headers, the browsers' profiles and sockets, the extension tests' files)
# goes into one folder of this pass: removed when the pass is green, kept and named when it is
# red (what a failure left is what its reader needs). Before, each pass left about 50 folders
# and 150 MB of torch's headers in /tmp.
ci_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dyn-inspect-ci.XXXXXX") || { echo "tests/run.sh: cannot make a temp folder"; exit 1; }
export TMPDIR="$ci_tmp"
install_venv() {
  python3 -m venv .venv
  # (pip warns once per package about this machine's extra local index folders: noise.)
  # --no-compile, then compileall on both CPUs: pip compiles torch's ~12,000 modules to
  # bytecode one at a time (about 100 of the install's 160 s on this machine); compileall -j0
  # does the same work in parallel. Our own packages are compiled too: with
  # PYTHONDONTWRITEBYTECODE set (as on this machine) every dyn-inspect process would compile
  # them from source again (0.3-0.45 s a start instead of 0.15 s, hundreds of starts a run).
  .venv/bin/pip install -q --no-compile --disable-pip-version-check -c constraints.txt -e '.[test]' 2>&1 | grep -v "^WARNING: Location 'file:"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "pip install failed"; return 1; }
  PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -q -j0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    engine inspector cli lsp tui notebook >/dev/null 2>&1 || true  # a package's deliberately broken test file is not our failure
  echo "$install_key" >"$install_stamp"
}

# pytest's exit status, given its log: exit 5 (nothing collected) is fine for a selection
# that matched no test (`-k nothing`), never when collection itself failed: a module that
# does not import must fail CI.
# Sets pytest_rc.
pytest_verdict() {
  pytest_rc=$1
  if [ "$pytest_rc" -eq 5 ]; then
    if grep -qE "^ERROR collecting|^ERROR [^ ]+\.py|errors? during collection" "$2"; then
      echo "pytest: collection failed (see the errors above)"
    else
      echo "pytest: no tests collected"
      pytest_rc=0
    fi
  fi
}

# The quick tier (`--quick`): the full command below never runs it and is not changed by it.
quick_suite() {
  local t_start t_installed t_pytest t_end rc=0 cache_base fp torch_v log summary
  t_start=$(date +%s)
  # The install is skipped while .venv imports our packages and pytest, unless the last
  # install this command made was from another pyproject.toml or constraints.txt (a venv
  # made by hand has no stamp: it is trusted). `--quick --install` installs anyway.
  if [ "$force_install" -eq 1 ] || ! .venv/bin/python -c "import dyn_inspect.cli, dyn_inspect.lsp, dyn_inspect.tui, pytest, xdist" 2>/dev/null \
    || { [ -f "$install_stamp" ] && [ "$(cat "$install_stamp")" != "$install_key" ]; }; then
    install_venv || return 1
  else
    echo "quick: .venv is installed: no install (tests/run.sh --quick --install forces one)"
    # bytecode of what was edited since (seconds; see install_venv)
    PYTHONDONTWRITEBYTECODE= .venv/bin/python -m compileall -q -j0 engine inspector cli lsp tui notebook >/dev/null 2>&1 || true
  fi
  t_installed=$(date +%s)

  .venv/bin/ruff check -q . || { echo "ruff check: FAILED (findings above)"; rc=1; }
  .venv/bin/ruff format --check -q . || { echo "ruff format: FAILED (files above would be reformatted: run ruff format)"; rc=1; }
  bash tests/typecheck.sh >"$ci_tmp/mypy.log" 2>&1 || { cat "$ci_tmp/mypy.log"; echo "mypy: FAILED (errors above)"; rc=1; }
  echo "mypy: $(tail -1 "$ci_tmp/mypy.log")"

  # The recordings: kept between invocations in a folder named by the fingerprint of what
  # they depend on (tests/corpus_support.py, fingerprint()): an edit to the recorder or to a
  # recorded program names a new folder, recorded afresh; the three newest are kept. The
  # pool of built C++ (tests/inductor_pool.py) is kept per torch version: C++ kernels do not
  # depend on our code, and a fresh recording finds them built.
  cache_base=${DYN_INSPECT_QUICK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dyn-inspect-tests}
  fp=$(.venv/bin/python tests/corpus_support.py fingerprint) || { echo "quick: cannot compute the recordings' fingerprint"; return 1; }
  torch_v=$(.venv/bin/python -c "import importlib.metadata as m, sys; print(m.version('torch'), '%d.%d' % sys.version_info[:2], sep='-py')")
  export DYN_INSPECT_CORPUS_CACHE="$cache_base/recordings-$fp"
  export DYN_INSPECT_TEST_CPP_POOL="$cache_base/cpp-pool-$torch_v"
  mkdir -p "$DYN_INSPECT_CORPUS_CACHE" "$DYN_INSPECT_TEST_CPP_POOL" && touch "$DYN_INSPECT_CORPUS_CACHE"
  ls -dt "$cache_base"/recordings-* 2>/dev/null | tail -n +4 | while read -r old; do rm -rf "$old"; done
  if [ -n "$(ls -A "$DYN_INSPECT_CORPUS_CACHE")" ]; then
    echo "quick: recordings reused from $DYN_INSPECT_CORPUS_CACHE"
  else
    echo "quick: recording into $DYN_INSPECT_CORPUS_CACHE (once for this recorder and these programs)"
  fi

  log="$ci_tmp/pytest.log"
  t_pytest=$(date +%s)
  .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile -m "not slow" "$@" 2>&1 | tee "$log"
  pytest_verdict "${PIPESTATUS[0]}" "$log"
  # (a recording that ended badly, killed or timed out under load, is kept like a good one)
  [ "$pytest_rc" -eq 0 ] || { rc=1; echo "quick: the recordings read are in $DYN_INSPECT_CORPUS_CACHE (delete it to record them again)"; }
  t_end=$(date +%s)
  summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed|error|skipped|deselected)|no tests ran" "$log" | tail -1)
  echo "pytest summary: ${summary:-none (pytest exit $pytest_rc)}"
  echo "times: install $((t_installed - t_start)) s, lint and types $((t_pytest - t_installed)) s, pytest $((t_end - t_pytest)) s, total $((t_end - t_start)) s (quick: no extension suites, no tests marked slow)"
  return "$rc"
}

# What the install depends on: .venv is installed from these (a stamp in .venv says which).
install_stamp=".venv/.dyn-inspect-installed"
install_key=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$quick" -eq 1 ]; then
  quick_suite "$@"
  rc=$?
  if [ "$rc" -eq 0 ]; then rm -rf "$ci_tmp"; else echo "temp files of this pass kept in $ci_tmp"; fi
  exit "$rc"
fi
# System tools some tests use: headless Chromium (report.html renders offline), Graphviz
# (SVG graph pictures) and Neovim (the editor test of the verified state, tests/e2e/test_nvim.py).
# Installed from Debian's packages when missing and we may.
if ! command -v chromium >/dev/null || ! command -v dot >/dev/null || ! command -v nvim >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium graphviz neovim) >/dev/null 2>&1 \
      || echo "warning: could not install chromium/graphviz/neovim; the tests that need them will say they skipped"
  fi
fi

# The real-VS-Code test's tools (code-server, Node 24, playwright-core; cached between runs
# in ~/.cache/dyn-inspect-e2e): installed in the background while Python is installed.
e2e_install_log=$(mktemp)
# JupyterLab's environment (its test's, e2e/install_jupyterlab.sh) is made beside it.
( s=$(date +%s); bash vscode-extension/e2e/install_jupyterlab.sh python3 >/dev/null 2>&1 &
  bash vscode-extension/e2e/install.sh; r=$?; wait; echo "install: exit $r, $(( $(date +%s) - s )) s" ) >"$e2e_install_log" 2>&1 &
e2e_install_pid=$!

t_start=$(date +%s)
install_venv || exit 1
t_installed=$(date +%s)

# The extension's suites: its CI (npm test, whose integration test talks to the real language
# server about a real run of the example, recorded first into a scratch workspace; then the
# .vsix) and the real client: VS Code (code-server) with the built .vsix, driven by
# Playwright, on a copy of the same workspace at another path (the run's paths are mapped
# onto it), which also holds cells.ipynb: a notebook executed in a real kernel with the
# IPython extension on (e2e/make_notebook.py; its cell's run is recorded there too, after
# the npm integration test, which reads the example's run only). They run beside lint,
# types and pytest (output kept, printed after pytest's): most of their time is spent
# waiting on a browser or a server, which leaves a CPU idle when they run alone.
extension_suites() {
  local rc=0 ws vsix
  ws=$(mktemp -d)
  cp examples/*.py "$ws"/
  (cd "$ws" && DYN_INSPECT_NO_TUI=1 "$OLDPWD/.venv/bin/dyn-inspect" --no-tui train.py --steps 3 >/dev/null 2>&1) \
    || { echo "recording the example for the extension test failed"; rc=1; }
  DYN_INSPECT_PYTHON="$PWD/.venv/bin/python" DYN_INSPECT_IT_WORKSPACE="$ws" DYN_INSPECT_IT_FILE=train.py \
    bash vscode-extension/scripts/ci.sh || rc=1
  local nb_err
  nb_err=$("$PWD/.venv/bin/python" vscode-extension/e2e/make_notebook.py "$ws" 2>&1 >/dev/null) \
    || { echo "vscode e2e: FAILED — recording the notebook failed: $(printf '%s\n' "$nb_err" | grep -v '^\[IPKernelApp\]' | tail -1)"; rc=1; }
  # the tools' install (started first thing, not this shell's child) writes its status line last
  until grep -q "^install: exit" "$e2e_install_log" || ! kill -0 "$e2e_install_pid" 2>/dev/null; do sleep 1; done
  echo "vscode e2e: background $(tail -1 "$e2e_install_log")"
  vsix=$(ls vscode-extension/*.vsix 2>/dev/null | head -1)
  if [ -n "$vsix" ]; then
    bash vscode-extension/e2e/run.sh "$PWD/.venv/bin/python" "$ws" "$PWD/$vsix" || rc=1
  else
    echo "vscode e2e: FAILED — no .vsix was built (see the extension's CI above)"
    rc=1
  fi
  rm -rf "$ws"
  return "$rc"
}
ext_log=$(mktemp)
ext_pid=
if [ -f vscode-extension/scripts/ci.sh ]; then
  ( s=$(date +%s); extension_suites; ext_rc=$?; echo "extension suites: $(( $(date +%s) - s )) s"; exit "$ext_rc" ) >"$ext_log" 2>&1 &
  ext_pid=$!
fi

rc=0
# Lint and types first (seconds): a finding fails the run, but pytest still runs so that one
# CI pass reports everything. Their last lines are repeated in the summary at the end.
lint_log=$(mktemp)
.venv/bin/ruff check . 2>&1 | tee "$lint_log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "ruff check: FAILED (findings above)"; rc=1; }
ruff_summary=$(tail -1 "$lint_log")
.venv/bin/ruff format --check . 2>&1 | tee "$lint_log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "ruff format: FAILED (files above would be reformatted: run ruff format)"; rc=1; }
format_summary=$(tail -1 "$lint_log")
bash tests/typecheck.sh 2>&1 | tee "$lint_log"  # options: [tool.mypy] in pyproject.toml
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "mypy: FAILED (errors above)"; rc=1; }
mypy_summary=$(tail -1 "$lint_log")
rm -f "$lint_log"

pytest_log=$(mktemp)
# Two workers (pytest-xdist; both CPUs of the CI machine), each file on one worker (module
# state and module fixtures stay together); they share the corpus recordings and the C++
# pool (tests/corpus_support.py, tests/inductor_pool.py). `-n 0` after the command runs serially.
# pytest runs at a lower priority than the extension suites beside it: their browser and
# server keep the response times their waits expect, and pytest takes every CPU they leave.
t_pytest=$(date +%s)
nice -n 10 .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile "$@" 2>&1 | tee "$pytest_log"
pytest_verdict "${PIPESTATUS[0]}" "$pytest_log"
[ "$pytest_rc" -eq 0 ] || rc=1

t_pytest_end=$(date +%s)
if [ -n "$ext_pid" ]; then
  wait "$ext_pid" || rc=1
  cat "$ext_log"
fi
rm -f "$ext_log"
rm -f "$e2e_install_log"
# The runner's summary line again, last, so it is the first thing a reader of CI sees.
summary=$(grep -E "^(=+ )?[0-9]+ (passed|failed|error|skipped|deselected)|no tests ran" "$pytest_log" | tail -1)
echo "ruff: $ruff_summary"
echo "ruff format: $format_summary"
echo "mypy: $mypy_summary"
echo "pytest summary: ${summary:-none (pytest exit $pytest_rc)}"
t_end=$(date +%s)
echo "times: install $((t_installed - t_start)) s, lint and types $((t_pytest - t_installed)) s, pytest $((t_pytest_end - t_pytest)) s, total $((t_end - t_start)) s (the extension suites ran beside them)"
rm -f "$pytest_log"
if [ "$rc" -eq 0 ]; then
  rm -rf "$ci_tmp"
else
  echo "temp files of this pass kept in $ci_tmp"
fi
exit "$rc"
