#!/usr/bin/env bash
# The GPU validation and benchmarks, run on the device machine from the repo root:
#
#   bash bench/gpu/run_all.sh record            # example (CUDA, + max-autotune), GPT-2, ResNet-50
#   bash bench/gpu/run_all.sh cost              # dyn-inspect cost of the example and GPT-2 (--profile)
#   bash bench/gpu/run_all.sh break-truth       # a GPU break's cost: timed by hand vs attributed
#   bash bench/gpu/run_all.sh kernels           # Triton metadata, IR, launches, repros (--kernel-ir)
#   bash bench/gpu/run_all.sh bench-gpt2        # overhead benchmark, GPT-2 small
#   bash bench/gpu/run_all.sh bench-resnet50    # overhead benchmark, ResNet-50
#   bash bench/gpu/run_all.sh ddp               # torch.compile(DDP(model)) over NCCL on every GPU
#
# Results go to $OUT (the device tool brings that folder back): report-*.json (what each
# recorded run holds: bench/gpu/report.py), *.tgz (trimmed run directories), bench-*.json.
# The machine has no network: the wheels of our own dependencies that the image lacks
# travel in .whl/ (see docs/performance.md for how they are fetched).
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: bash bench/gpu/run_all.sh record|ddp|diagnose|cost|break-truth|kernels|probe|stats|bench-<workload>"; exit 2; }
ROOT=$(pwd)
OUT=${OUT:-/tmp/dyn-inspect-out}
mkdir -p "$OUT"
LOG="$OUT/log-$1.txt"
exec > >(tee -a "$LOG") 2>&1

if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
# dyn_inspect.* maps onto the repo's folders, as the editable install's finder does (and
# tests/typecheck.sh's tree): every package, and notebook/*.py as dyn_inspect itself.
DSITE=${DSITE:-/tmp/dsite}
rm -rf "$DSITE/dyn_inspect"
mkdir -p "$DSITE/dyn_inspect"
for d in engine inspector lsp tui cli; do ln -sfn "$ROOT/$d" "$DSITE/dyn_inspect/$d"; done
for f in "$ROOT"/notebook/*.py; do ln -sfn "$f" "$DSITE/dyn_inspect/$(basename "$f")"; done
export PYTHONPATH=$DSITE:/tmp/site
# Fail here, in one line, rather than at the first recording.
python3 -c "import dyn_inspect, dyn_inspect.cli, dyn_inspect.engine" || { echo "dyn_inspect.cli does not import from $DSITE"; exit 1; }
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 DYN_INSPECT_NO_TUI=1
DI=(python3 -m dyn_inspect.cli)
SCRATCH=$(mktemp -d)

record() {  # name, cwd, args... : a fresh Inductor/Triton cache per recording (RECORD_CACHE=name: that one's)
  local name=$1 cwd=$2; shift 2
  local cache=${RECORD_CACHE:-$name}
  echo "=== record $name: $*"
  local t0=$SECONDS
  (cd "$cwd" && TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-$cache" TRITON_CACHE_DIR="$SCRATCH/tc-$cache" \
     "${DI[@]}" run --no-tui --runs-dir "$SCRATCH/runs/$name" "$@")
  echo "=== $name: exit $? in $((SECONDS - t0)) s"
}

case "$1" in
record)
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  python3 -c "import torch, triton, transformers, torchvision; print('torch', torch.__version__, 'triton', triton.__version__, 'transformers', transformers.__version__, 'torchvision', torchvision.__version__, 'cuda', torch.version.cuda)"
  python3 -c "import torch; p = torch.cuda.get_device_properties(0); print({k: getattr(p, k) for k in dir(p) if not k.startswith('_') and k not in ('uuid',)})"
  python3 -c "import inspect, torch._inductor.codegen.triton as t; print('inductor_meta_per_kernel' in dir(t.TritonKernel))"
  record example "$ROOT/examples" --profile-kernels 3 train.py --device cuda --steps 8
  TORCHINDUCTOR_MAX_AUTOTUNE=1 record example-autotune "$ROOT/examples" train.py --device cuda --steps 4
  record gpt2 "$ROOT" --profile-kernels 3 bench/workloads/gpt2.py --seq-lens 256,512 --steps 4 --warmup 1 --extra-steps 2
  record resnet50 "$ROOT" --profile-kernels 3 bench/workloads/resnet50.py --steps 4 --warmup 1
  for name in example example-autotune gpt2 resnet50; do
    run=$(ls -d "$SCRATCH/runs/$name"/2* 2>/dev/null | head -1)
    [ -n "$run" ] || continue
    python3 bench/gpu/report.py "$run" --root "$ROOT" --json "$OUT/report-$name.json" > /dev/null
    du -sh "$run"
  done
  # Run directories travel back as tarballs (< 16 MiB each); the example's is the fixture.
  (cd "$SCRATCH/runs" && tar czf "$OUT/example-runs.tgz" example example-autotune)
  for name in gpt2 resnet50; do (cd "$SCRATCH/runs" && tar czf "$OUT/$name-run.tgz" "$name"); done
  ls -la "$OUT"
  ;;
ddp)
  # torch.compile(DDP(model)) over NCCL on every GPU of the machine (issue 34): DDPOptimizer's
  # splits, and the all-reduce kernels under --profile-kernels.
  nvidia-smi -L
  n=$(nvidia-smi -L | wc -l)
  # (the profiler's events, dumped: are NCCL's kernels among them? Several ranks write in turn.)
  DYN_INSPECT_PROFILE_DUMP="$OUT/ddp-profile-dump.json" record ddp "$ROOT/tests/corpus/ddp" --profile-kernels 3 python3 -m torch.distributed.run --standalone --nproc-per-node "$n" train.py --backend nccl --steps 8
  run=$(ls -d "$SCRATCH/runs/ddp"/2* | head -1)
  "${DI[@]}" summary "$run"
  "${DI[@]}" summary --json "$run" > "$OUT/ddp-summary.json"
  "${DI[@]}" kernels --json "$run" > "$OUT/ddp-kernels.json"
  "${DI[@]}" cost "$run" | head -40
  (cd "$SCRATCH/runs" && tar czf "$OUT/ddp-run.tgz" ddp)
  # Caching as the plain run caches: a plain torchrun on a cache of its own, then the
  # recording again on its own (now warm) cache; torch's FX-graph cache counts of both, and
  # any "unable to serialize" warning (the armed autotuners once made one, ours only).
  echo "=== plain ddp, cold then warm"
  cat > "$SCRATCH/plain_ddp.py" <<'PY'
import atexit, runpy, sys
import torch._dynamo.utils as u
def counts():
    c = dict(u.counters["inductor"])
    print("fxgraph", c.get("fxgraph_cache_hit", 0), "hit", c.get("fxgraph_cache_miss", 0), "miss", flush=True)
atexit.register(counts)
sys.argv = ["train.py", *sys.argv[1:]]
runpy.run_path("train.py", run_name="__main__")
PY
  for pass in cold warm; do
    (cd "$ROOT/tests/corpus/ddp" && TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-ddp-plain" TRITON_CACHE_DIR="$SCRATCH/tc-ddp-plain" \
      python3 -m torch.distributed.run --standalone --nproc-per-node "$n" "$SCRATCH/plain_ddp.py" --backend nccl --steps 8 > "$SCRATCH/plain-$pass.txt" 2>&1)
    echo "plain $pass: $(grep -h '^fxgraph' "$SCRATCH/plain-$pass.txt" | head -1); unable to serialize: $(grep -c 'unable to serialize' "$SCRATCH/plain-$pass.txt")"
  done
  echo "recorded with --profile-kernels: unable to serialize: $(grep -c "^\[rank.*unable to serialize" "$LOG"); nothing to profile: $(grep -c 'nothing to profile' "$LOG")"
  # the recording's own cache is keyed with --profile-kernels' Inductor config: cold and warm
  # again without it, as the plain passes ran
  for pass in cold warm; do
    RECORD_CACHE=ddp-nocfg record "ddp-$pass" "$ROOT/tests/corpus/ddp" python3 -m torch.distributed.run --standalone --nproc-per-node "$n" train.py --backend nccl --steps 8 > "$SCRATCH/ddp-$pass.txt" 2>&1
    run=$(ls -d "$SCRATCH/runs/ddp-$pass"/2* | head -1)
    echo "recorded $pass: unable to serialize: $(grep -c 'unable to serialize' "$SCRATCH/ddp-$pass.txt"); cache $("${DI[@]}" summary --json "$run" | python3 -c "import json, sys; print(json.load(sys.stdin)['cache'])")"
  done
  ;;
diagnose)
  # Where recording time goes (DYN_INSPECT_TRACE_STATS), what the profiler sees
  # (DYN_INSPECT_PROFILE_DUMP), and TORCH_TRACE logs of the same runs to replay offline.
  for w in gpt2 resnet50; do
    DYN_INSPECT_TRACE_STATS=1 DYN_INSPECT_PROFILE_DUMP="$OUT/profile-dump-$w.json" \
      record "$w" "$ROOT" --profile-kernels 3 bench/workloads/$w.py --steps 4 --warmup 1 2>&1 | grep -A40 "trace stats\|BENCH\|=== "
    run=$(ls -d "$SCRATCH/runs/$w"/2* | head -1)
    python3 bench/gpu/report.py "$run" --root "$ROOT" --json "$OUT/report2-$w.json" > /dev/null
    echo "=== TORCH_TRACE $w"
    TORCH_TRACE="$SCRATCH/trace-$w" TORCHINDUCTOR_CACHE_DIR="$SCRATCH/icT-$w" TRITON_CACHE_DIR="$SCRATCH/tcT-$w" \
      python3 bench/workloads/$w.py --steps 4 --warmup 1 2>&1 | grep BENCH
  done
  (cd "$SCRATCH" && tar czf "$OUT/torch-traces.tgz" trace-gpt2 trace-resnet50)
  ls -la "$OUT"
  ;;
cost)
  # What each break costs per step (dyn-inspect cost): the example and GPT-2 small on the GPU.
  # Each also eagerly (--disable-compile) for the speedup and the break-even step.
  record example "$ROOT/examples" --profile 3 train.py --device cuda --steps 10
  record example-eager "$ROOT/examples" --disable-compile --profile 3 train.py --device cuda --steps 10
  record gpt2 "$ROOT" --profile 3 bench/workloads/gpt2.py --seq-lens 256 --steps 8 --warmup 1
  record gpt2-eager "$ROOT" --disable-compile --profile 3 bench/workloads/gpt2.py --seq-lens 256 --steps 8 --warmup 1
  for name in example gpt2; do
    run=$(ls -d "$SCRATCH/runs/$name"/2* 2>/dev/null | head -1)
    eager=$(ls -d "$SCRATCH/runs/$name-eager"/2* 2>/dev/null | head -1)
    [ -n "$run" ] || continue
    "${DI[@]}" cost "$run" ${eager:+--eager "$eager"} | tee "$OUT/cost-$name.txt"
    "${DI[@]}" cost "$run" ${eager:+--eager "$eager"} --json > "$OUT/cost-$name.json"
    "${DI[@]}" causes "$run" > "$OUT/causes-$name.txt"
  done
  ;;
break-truth)
  # A data-dependent branch between two heavy compiled chains (bench/gpu/break_truth.py):
  # its cost timed by hand (CUDA events, `if` against `torch.where`, one process), then what
  # `dyn-inspect cost` attributes to the break in a --profile recording (issue 57).
  nvidia-smi -L
  python3 bench/gpu/break_truth.py --time | tee "$OUT/break-truth-time.json"
  python3 bench/gpu/break_truth.py --probe > "$OUT/break-truth-probe.json"
  python3 bench/gpu/check_region_profile.py "$OUT/break-truth-probe.json"
  record gpu-if "$ROOT" --profile 10 bench/gpu/break_truth.py --program
  record gpu-where "$ROOT" --profile 10 bench/gpu/break_truth.py --program --where
  for name in gpu-if gpu-where; do
    run=$(ls -d "$SCRATCH/runs/$name"/2* 2>/dev/null | head -1)
    [ -n "$run" ] || continue
    "${DI[@]}" cost "$run" | tee "$OUT/cost-$name.txt"
    "${DI[@]}" cost "$run" --json > "$OUT/cost-$name.json"
    tar czf "$OUT/run-$name.tgz" -C "$(dirname "$run")" "$(basename "$run")" --exclude blobs
  done
  ;;
kernels)
  # Triton compile metadata, IR stages, launch records and repros (issue 33): the example
  # (default heuristics, then pointwise autotuning + coordinate descent) and GPT-2 small.
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-probe" python3 bench/gpu/probe_kernel_meta.py 2>&1 | tail -20
  t0=$SECONDS; record example-plain "$ROOT/examples" train.py --device cuda --steps 6; echo "WALL example-plain $((SECONDS - t0))"
  t0=$SECONDS; DYN_INSPECT_PROFILE_DUMP="$OUT/profile-dump-example.json" record example "$ROOT/examples" --profile 3 --kernel-ir train.py --device cuda --steps 10; echo "WALL example-ir $((SECONDS - t0))"
  TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE=1 TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1 \
    record example-autotune "$ROOT/examples" --kernel-ir train.py --device cuda --steps 4
  record gpt2 "$ROOT" --profile 3 --kernel-ir bench/workloads/gpt2.py --seq-lens 256 --steps 8 --warmup 1
  for name in example example-autotune gpt2; do
    run=$(ls -d "$SCRATCH/runs/$name"/2* 2>/dev/null | head -1)
    [ -n "$run" ] || continue
    du -sh "$run"
    "${DI[@]}" summary "$run" > "$OUT/summary-$name.txt" 2>&1
    "${DI[@]}" kernels "$run" > "$OUT/kernels-$name.txt" 2>&1
    "${DI[@]}" kernels "$run" --json > "$OUT/kernels-$name.json" 2>&1
    grep -h '"kernel_meta"' "$run"/p*.jsonl | head -3 > "$OUT/meta-sample-$name.jsonl"
    grep -h '"kernel_profile"' "$run"/p*.jsonl | head -3 > "$OUT/profile-sample-$name.jsonl"
    # The three most expensive Triton kernels: detail, PTX beside the source, repro run.
    python3 - "$OUT/kernels-$name.json" > "$SCRATCH/top-$name.txt" <<'PY'
import json, sys
ks = [k for k in json.load(open(sys.argv[1]))["kernels"] if k["backend"] == "triton"]
ks.sort(key=lambda k: -((k.get("profile") or {}).get("us_per_step") or 0))
for k in ks[:3]:
    print(k["name"], k["compile_id"], "--backward" if k["backward"] else "")
PY
    while read -r kname kcid kbw; do
      "${DI[@]}" kernel "$kname" "$run" --compile "$kcid" $kbw > "$OUT/kernel-$name-$kname.txt" 2>&1
      "${DI[@]}" kernel "$kname" "$run" --compile "$kcid" $kbw --stage ptx --side-by-side > "$OUT/ptx-$name-$kname.txt" 2>&1
      "${DI[@]}" kernel "$kname" "$run" --compile "$kcid" $kbw --stage sass | head -40 > "$OUT/sass-$name-$kname.txt" 2>&1
      "${DI[@]}" kernel "$kname" "$run" --compile "$kcid" $kbw --repro -o "$OUT/repro-$name-$kname.py" 2>&1
      echo "=== repro $name $kname"; python3 "$OUT/repro-$name-$kname.py" 2>&1 | tail -5
    done < "$SCRATCH/top-$name.txt"
  done
  (cd "$SCRATCH/runs" && tar czf "$SCRATCH/kernel-runs.tgz" example example-autotune)
  # The device tool brings back 8 files at most: everything in two archives.
  ls -la "$OUT"
  (cd "$OUT" && tar czf "$SCRATCH/kernels-out.tgz" . && find . -mindepth 1 -delete)
  mv "$SCRATCH/kernel-runs.tgz" "$SCRATCH/kernels-out.tgz" "$OUT/"
  ;;
kernels-cost)
  # What recording kernel metadata costs (docs/performance.md): the example and GPT-2 small
  # with the hook off (DYN_INSPECT_KERNEL_META=0), on (the default) and with --kernel-ir
  # (IR text and SASS kept), alternating, each on cold caches; wall and compile time.
  cost() {  # workload mode round cwd args...
    local w=$1 mode=$2 i=$3 cwd=$4; shift 4
    local extra=() meta=1 t0=$SECONDS
    [ "$mode" = off ] && meta=0
    [ "$mode" = ir ] && extra=(--kernel-ir)
    DYN_INSPECT_KERNEL_META=$meta record "$w-$mode-$i" "$cwd" "${extra[@]}" "$@" > "$SCRATCH/cost.log" 2>&1
    echo "COST $w $mode $i wall $((SECONDS - t0)) s | $(grep -h 'compile time' "$SCRATCH/cost.log" | head -1 | sed 's/.*compile time/compile time/')"
  }
  for i in 1 2; do
    for mode in off on ir; do cost example $mode $i "$ROOT/examples" train.py --device cuda --steps 6; done
  done
  for mode in off ir; do cost gpt2 $mode 1 "$ROOT" bench/workloads/gpt2.py --seq-lens 256 --steps 4 --warmup 1; done
  du -sh "$SCRATCH"/runs/*/2*
  ;;
ir-coverage)
  # Every Triton kernel of GPT-2 small has its IR (--kernel-ir): the 150-character file
  # names Triton cuts its long kernel names to included.
  record gpt2 "$ROOT" --kernel-ir bench/workloads/gpt2.py --seq-lens 256 --steps 2 --warmup 1 > "$SCRATCH/gpt2.log" 2>&1
  run=$(ls -d "$SCRATCH/runs/gpt2"/2* | head -1)
  "${DI[@]}" kernels "$run" --json > "$SCRATCH/kernels.json"
  python3 - "$SCRATCH/kernels.json" <<'PY'
import json, sys
ks = [k for k in json.load(open(sys.argv[1]))["kernels"] if k["backend"] == "triton"]
with_meta = [k for k in ks if k["compile"]]
full = [k for k in with_meta if len(k["compile"]["ir_kept"]) == 5]
longest = max(len(k["name"]) for k in ks)
print(f"IR-COVERAGE triton {len(ks)}, with metadata {len(with_meta)}, with all 5 IR stages {len(full)}; longest name {longest}")
for k in ks:
    if k not in full:
        print("  missing:", k["name"], (k["compile"] or {}).get("ir_kept"))
PY
  ;;
probe)
  # What this torch/Triton hands the kernel-metadata hook and the profiler (new versions),
  # then any repro scripts named in REPROS (dyn-inspect kernel NAME --repro -o F).
  TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-probe" python3 bench/gpu/probe_kernel_meta.py 2>&1 | tail -20
  TORCHINDUCTOR_CACHE_DIR="$SCRATCH/ic-probe2" python3 bench/gpu/probe_kineto.py 2>&1 | tail -20
  for f in ${REPROS:-}; do echo "=== repro $f"; python3 "$f" 2>&1 | tail -4; done
  ;;
stats)
  # Recording cost on the compile thread, per record kind (DYN_INSPECT_TRACE_STATS).
  for w in ${WORKLOADS:-resnet50 gpt2}; do
    DYN_INSPECT_TRACE_STATS=1 record "$w" "$ROOT" bench/workloads/$w.py --steps 3 --warmup 1 2>&1 \
      | grep -A12 "trace stats\|BENCH\|=== \|compile time"
  done
  ;;
bench-*)
  workload=${1#bench-}
  python3 bench/bench_overhead.py --device cuda --workloads "$workload" --runs "${RUNS:-3}" \
    --modes "${MODES:-plain,dyn-inspect,torch-trace}" --steps 20 --budget-s "${BUDGET:-400}" \
    --json "$OUT/bench-$workload.json"
  ;;
esac
rm -rf "$SCRATCH"
