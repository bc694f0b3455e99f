#!/usr/bin/env bash
# Re-record the torch version matrix's fixtures (tests/compat/fixtures/torch-<version>/).
#
#   bash tests/compat/record.sh PYTHON            # a python whose torch to record with
#   bash tests/compat/record.sh /tmp/venv-torch-2.15.0/bin/python
#   bash tests/compat/record.sh python3 --device cuda   # on the GPU machine (Triton):
#       breaks/recompiles run through on_device.py (default device cuda), train.py --device cuda
#
# Each corpus program runs under `dyn-inspect run` with TORCH_TRACE also set, so one run
# gives both our live recording and torch's own TORCH_TRACE log (the fixture, gzipped),
# plus torch's own TORCH_LOGS=graph_breaks,recompiles text (the reference the replay
# expectations in tests/compat/expectations.py were checked against by hand).
# A fresh Inductor cache per program: first-run behaviour, as in CI.
# Then the example once more with --profile-kernels 2 (the profiler's hooks; no fixture).
# ONLY=profile runs just that step and merges it into an existing recorded.json.
# Writes: fixtures/torch-<v>/<program>.log.gz (chromium timing events dropped: prune.py),
# <program>.torch_logs.txt, recorded.json
# (what our live recorder said: hooks, counts — see summarize.py), then prints a table row.
set -uo pipefail
PY=${1:?usage: record.sh PYTHON [--device cuda]}
shift
DEVICE=cpu
if [ "${1:-}" = "--device" ]; then DEVICE=$2; fi
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VERSION=$("$PY" -c "import torch; print(torch.__version__.split('+')[0])" 2>/dev/null) || { echo "no torch in $PY"; exit 2; }
SUFFIX=""
[ "$DEVICE" != cpu ] && SUFFIX="-$DEVICE"
DEST=${DEST:-$ROOT/tests/compat/fixtures/torch-$VERSION$SUFFIX}
SCRATCH=$(mktemp -d)
mkdir -p "$DEST"
echo "recording torch $VERSION ($DEVICE) into $DEST"

record() {  # name cwd args...
  local name=$1 cwd=$2; shift 2
  local t0=$SECONDS
  (cd "$cwd" && TORCH_TRACE="$SCRATCH/trace-$name" TORCH_LOGS="graph_breaks,recompiles" \
     TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-$name" TRITON_CACHE_DIR="$SCRATCH/tc-$name" DYN_INSPECT_NO_TUI=1 \
     "$PY" -m dyn_inspect.cli run --no-tui --runs-dir "$SCRATCH/runs-$name" "$@" \
     > "$SCRATCH/$name.stdout" 2> "$SCRATCH/$name.stderr")
  local rc=$?
  echo "  $name: exit $rc in $((SECONDS - t0)) s"
  # The process that compiled is the largest log (compile workers write small or none).
  local log
  log=$(ls -S "$SCRATCH/trace-$name"/*.log 2>/dev/null | head -1)
  if [ -n "$log" ]; then "$PY" "$ROOT/tests/compat/prune.py" "$log" "$DEST/$name.log.gz"; else echo "  $name: no TORCH_TRACE log"; fi
  # torch's own log lines (graph breaks, recompiles), without our own stderr lines
  grep -v "^dyn-inspect" "$SCRATCH/$name.stderr" | sed "s#$ROOT/##g" > "$DEST/$name.torch_logs.txt" || true
  echo "$rc" > "$SCRATCH/$name.rc"
}

profile() {  # --profile-kernels on the example: no fixture, only whether kernel profiles came
  local t0=$SECONDS
  (cd "$ROOT/examples" && TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-profile" TRITON_CACHE_DIR="$SCRATCH/tc-profile" DYN_INSPECT_NO_TUI=1 \
     "$PY" -m dyn_inspect.cli run --no-tui --profile-kernels 2 --runs-dir "$SCRATCH/runs-profile" \
     train.py --steps 6 --device "$DEVICE" > "$SCRATCH/profile.stdout" 2> "$SCRATCH/profile.stderr")
  local rc=$?
  echo "$rc" > "$SCRATCH/profile.rc"
  echo "  profile: exit $rc in $((SECONDS - t0)) s"
}

if [ -n "${ONLY:-}" ]; then  # ONLY=profile: just that step (recorded.json gains its entry)
  profile
  "$PY" "$ROOT/tests/compat/summarize.py" "$SCRATCH" "$DEST" "$VERSION" "$DEVICE" --merge
  rm -rf "$SCRATCH"
  exit 0
fi
if [ "$DEVICE" = cpu ]; then
  record breaks "$ROOT/tests/corpus" breaks.py
  record recompiles "$ROOT/tests/corpus" recompiles.py
else  # the same programs with their tensors on the GPU (Triton kernels)
  export COMPAT_DEVICE=$DEVICE
  record breaks "$ROOT/tests/corpus" "$ROOT/tests/compat/on_device.py" breaks.py
  record recompiles "$ROOT/tests/corpus" "$ROOT/tests/compat/on_device.py" recompiles.py
fi
record train "$ROOT/examples" train.py --steps 3 --device "$DEVICE"
profile
"$PY" "$ROOT/tests/compat/summarize.py" "$SCRATCH" "$DEST" "$VERSION" "$DEVICE"
du -sh "$DEST"/* | sed 's/^/  /'
rm -rf "$SCRATCH"
