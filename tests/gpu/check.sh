#!/usr/bin/env bash
# The GPU check, for a machine with a GPU, CUDA and PyTorch (the device tool),
# run from the repository root. NVTXR_BIN: a folder holding `nvtxr`,
# `libnvtxr_record.so` and `libnvtxr.so` (+ `libnvtxr.so.0.1`), built here
# (default target/release). Files go to $OUT (default: a temporary folder).
#  1. ../shared/gpu/train_loop.py, STEPS steps: no ranges, emit_nvtx with no
#     tool, emit_nvtx under `nvtxr record --gpu off` (the NVTX events' cost),
#     no ranges under `nvtxr record` (the GPU's), emit_nvtx under `nvtxr
#     record`, the same with `--gpu-syncs`, torch.profiler; one table of
#     ms/step, the ratio to emit_nvtx with no tool, what was recorded, output
#     sizes, CUPTI's dropped count.
#     A second round of the plain, emit_nvtx and both-recorded runs, at the
#     end, says how much the step times move within one machine. Each
#     run's process CPU time too (tests/gpu/cpu_time.py): a cost that a
#     loop bound by the GPU hides from the step time shows there.
#  2. The GPU alone's cost, split (tests/gpu/cupti_probe.c): the loop with
#     no ranges under an injection library that asks CUPTI for the tool's
#     records one part at a time, beside the tool itself (and without its
#     flushing thread); then CUPTI's records of its own overhead, by kind;
#     last, the tool's parts with the subscriber let go at once (does
#     holding CUPTI cost?).
#  3. tests/gpu/nvtxr_kernels.cu under `nvtxr record`: each kernel with the
#     ranges open at its launch (from the SQLite tables); tests/gpu/graph_kernels.cu:
#     a CUDA graph's two kernels, each under the range around its launch.
#     PyTorch's kernels under nvtxr's Python ranges, the pip way: the wheel
#     (NVTXR_WHEEL, staged by stage.sh) installed into a folder of its own,
#     its `nvtxr record` recording tests/gpu/torch_ranges.py; each kernel
#     with the innermost range open on its thread at its launch.
#  4. Pictures' sources: HTML timelines of the kernels program and of three
#     steps of the loop (kernels.html, steps.html).
#  5. A program that is itself a CUPTI client: the loop under torch.profiler
#     (Kineto), under `nvtxr record`: the kernels each of the two got, and
#     what either said.
#  6. The loop killed by SIGKILL after 20 s: the kernels the flushing
#     thread handed over, and how long before the end the last one ends.
set -u
G=${NVTXR_BIN:-target/release}; N=$G/nvtxr
LOOP=${LOOP:-../shared/gpu/train_loop.py}; STEPS=${STEPS:-300}
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
# A clock source the vDSO cannot read makes every clock_gettime a system call (the tool's clock, and CUPTI's with it).
echo "clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>&1)"
ms() { grep -o 'ms_per_step=[0-9.]*' "$1" | cut -d= -f2; }
cpu() { grep -o 'cpu_s=[0-9.]*' "$1" | cut -d= -f2; }
L="tests/gpu/cpu_time.py $LOOP"
python3 $L plain "$STEPS" > "$OUT/plain.log" 2>&1
python3 $L nvtx "$STEPS" > "$OUT/nvtx.log" 2>&1
# The cost split: the NVTX events alone (--gpu off), the GPU alone (no ranges), both.
"$N" record -q --gpu off -o "$OUT/nvtx-only.pftrace" -- python3 $L nvtx "$STEPS" > "$OUT/nvtx-only.log" 2>&1
"$N" record -q -o "$OUT/gpu-only.pftrace" -- python3 $L plain "$STEPS" > "$OUT/gpu-only.log" 2>&1
"$N" record -o "$OUT/loop.pftrace" --sqlite "$OUT/loop.sqlite" --keep "$OUT/raw" -- python3 $L nvtx "$STEPS" > "$OUT/record.log" 2>&1
echo "nvtxr record exit $?"
"$N" record -q --gpu-syncs -o "$OUT/syncs.pftrace" -- python3 $L nvtx "$STEPS" > "$OUT/syncs.log" 2>&1
python3 $L kineto "$STEPS" "$OUT/kineto.json" > "$OUT/kineto.log" 2>&1
sql() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$OUT/loop.sqlite" "$1"; }
kernels=$(sql 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
launches=$(sql 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME')
nvtx=$(sql 'SELECT count(*) FROM NVTX_EVENTS')
kineto=$(python3 -c "import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('cat') == 'kernel'))" "$OUT/kineto.json")
dropped=$(grep -o 'dropped [0-9]*[^|]*' "$OUT/record.log" | head -1)
size() { du -sb "$1" | cut -f1; }
base=$(ms "$OUT/nvtx.log")
# ms/step M against B: `1.23x`.
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}x')" "${1:-0}" "${2:-1}" 2>/dev/null; }
row() { m=$(ms "$OUT/$2.log"); echo "| $1 | $m | $(ratio "$m" "$base") | $(cpu "$OUT/$2.log") | $3 |"; }
echo "| run ($STEPS steps) | ms/step | vs emit_nvtx, no tool | process CPU-s | recorded |"
echo "|---|---|---|---|---|"
row "no tool, no ranges" plain ""
row "emit_nvtx, no tool" nvtx ""
row "emit_nvtx under nvtxr record --gpu off (NVTX alone)" nvtx-only ".pftrace $(size "$OUT/nvtx-only.pftrace") B"
row "no ranges under nvtxr record (GPU alone)" gpu-only ".pftrace $(size "$OUT/gpu-only.pftrace") B"
row "emit_nvtx under nvtxr record" record "$nvtx NVTX ranges and marks, $kernels kernels (warm-up steps included), $launches launches; .pftrace $(size "$OUT/loop.pftrace") B, raw $(size "$OUT/raw") B, SQLite $(size "$OUT/loop.sqlite") B; CUPTI ${dropped:-dropped none}"
row "emit_nvtx under nvtxr record --gpu-syncs" syncs ".pftrace $(size "$OUT/syncs.pftrace") B"
row "torch.profiler (CPU + CUDA)" kineto "$kineto kernels (the $STEPS steps); JSON $(size "$OUT/kineto.json") B"
grep KINETO "$OUT/kineto.log"

# The GPU alone's cost, split: CUPTI asked for what the tool asks, one part
# more each run (tests/gpu/cupti_probe.c, nothing of nvtxr loaded), beside
# the tool itself, all on the same libcupti (the one beside PyTorch's CUDA
# runtime, where the tool finds it first).
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
cupti=$(python3 -c "import glob, os, torch; print((glob.glob(os.path.dirname(torch.__file__) + '/../nvidia/*/lib/libcupti.so*') + glob.glob('$cuda/extras/CUPTI/lib64/libcupti.so*') + glob.glob('$cuda/targets/*/lib/libcupti.so*') + [''])[0])")
# Built here against the machine's CUDA, else the one tests/gpu/stage.sh built.
probe() {
    gcc -shared -fPIC -O2 -I"$cuda/include" -I"$cuda/extras/CUPTI/include" -I"$cuda/targets/x86_64-linux/include" \
        tests/gpu/cupti_probe.c -ldl -o "$OUT/libcupti_probe.so" > "$OUT/probe-build.log" 2>&1 ||
        cp "$G/libcupti_probe.so" "$OUT/libcupti_probe.so" >> "$OUT/probe-build.log" 2>&1
}
if probe && [ -n "$cupti" ]; then
    echo "cost split (no ranges, $STEPS steps; libcupti $cupti)"
    echo "| run | ms/step | vs no tool | process CPU-s | CUPTI handed back |"
    echo "|---|---|---|---|---|"
    python3 $L plain "$STEPS" > "$OUT/split-plain.log" 2>&1
    split() { m=$(ms "$OUT/$2.log"); echo "| $1 | $m | $(ratio "$m" "$(ms "$OUT/split-plain.log")") | $(cpu "$OUT/$2.log") | $(grep -o 'PROBE.*' "$OUT/$2.log" | tr '\n' ' ') |"; }
    split "no tool" split-plain
    for parts in "" runtime_apis apis apis,subscribe apis,subscribe,clock apis,subscribe,clock,tid apis,subscribe,clock,tid,overhead \
        apis,subscribe,unsubscribe,clock,tid; do
        CUDA_INJECTION64_PATH="$OUT/libcupti_probe.so" PROBE_CUPTI="$cupti" PROBE="$parts" \
            python3 $L plain "$STEPS" > "$OUT/probe-$parts.log" 2>&1
        split "kernel, copy, set records${parts:+ + $parts}" "probe-$parts"
    done
    NVTXR_CUPTI="$cupti" "$N" record -q -o "$OUT/split-gpu.pftrace" -- python3 $L plain "$STEPS" > "$OUT/split-gpu.log" 2>&1
    split "nvtxr record (the tool: all of the above, written to its GPU file)" split-gpu
    NVTXR_CUPTI="$cupti" "$N" record -q --gpu-flush-interval 0 -o "$OUT/split-noflush.pftrace" -- python3 $L plain "$STEPS" > "$OUT/split-noflush.log" 2>&1
    split "nvtxr record --gpu-flush-interval 0 (no flushing thread)" split-noflush
    python3 $L plain "$STEPS" > "$OUT/split-plain2.log" 2>&1
    split "no tool, again" split-plain2
else
    echo "cost split skipped: no libcupti found ($cupti) or the probe did not build: $(tail -3 "$OUT/probe-build.log")"
fi

"$N" record -q --html -o "$OUT/steps.json" -- python3 "$LOOP" nvtx 3 > "$OUT/steps.log" 2>&1
"$nvcc" -O2 -Iinclude -Itests/gpu tests/gpu/nvtxr_kernels.cu -L"$G" -lnvtxr \
    -Xlinker -rpath="$(cd "$G" && pwd)" -o "$OUT/kernels" > "$OUT/nvcc.log" 2>&1 || tail -5 "$OUT/nvcc.log"
"$N" record --html -o "$OUT/kernels.json" --sqlite "$OUT/kernels.sqlite" -- "$OUT/kernels" > "$OUT/kernels.log" 2>&1
echo "nvtxr record (kernels) exit $?"
cat "$OUT/kernels.log"
python3 - "$OUT/kernels.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ranges = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE end IS NOT NULL").fetchall()
q = ("SELECT s.value, r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
     "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId ORDER BY k.start")
for name, launch in db.execute(q):
    print(f"{name}: launched inside {sum(1 for s, e in ranges if s <= launch <= e)} open range(s)")
# The GPU as CUPTI and the driver's files describe it (the UUID and bus
# location as `nvidia-smi -q` shows them), and the process's device mapped to it.
print(db.execute("SELECT id, name, uuid, busLocation, memoryBandwidth, asyncEngines, maxIPC FROM TARGET_INFO_GPU").fetchall())
print(db.execute("SELECT gpuId, cudaId, uuid, numMultiprocessors FROM TARGET_INFO_CUDA_DEVICE").fetchall())
PY
nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader 2>&1 | head -2
# A CUDA graph launched inside a range: each node under it, with a flow of its own.
"$nvcc" -O2 -Iinclude tests/gpu/graph_kernels.cu -L"$G" -lnvtxr \
    -Xlinker -rpath="$(cd "$G" && pwd)" -o "$OUT/graph" > "$OUT/nvcc-graph.log" 2>&1 || tail -5 "$OUT/nvcc-graph.log"
"$N" record -q -o "$OUT/graph.json" --sqlite "$OUT/graph.sqlite" -- "$OUT/graph" > "$OUT/graph.log" 2>&1
echo "nvtxr record (graph) exit $?: $(cat "$OUT/graph.log")"
python3 - "$OUT/graph.sqlite" "$OUT/graph.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ranges = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE end IS NOT NULL").fetchall()
q = ("SELECT s.value, a.value, r.start, k.graphId, k.graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
     "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId JOIN StringIds a ON a.id = r.nameId ORDER BY k.start")
for name, api, launch, graph, node in db.execute(q):
    print(f"graph: {name} launched by {api} inside {sum(1 for s, e in ranges if s <= launch <= e)} open range(s), graph {graph} node {node}")
events = json.load(open(sys.argv[2]))["traceEvents"]
kernels = [e for e in events if e.get("cat") == "kernel" and e["ph"] == "X"]
print("graph: kernels under 'graph' in the JSON:", sum(1 for k in kernels if k["args"].get("launched by", {}).get("range") == "graph"),
      "of", len(kernels), "; flows from the launch:", sum(1 for e in events if e["ph"] == "s"),
      "started,", len({e["id"] for e in events if e["ph"] == "f"}), "distinct ends")
PY
# PyTorch kernels under nvtxr.annotate and torch.cuda.nvtx ranges, recorded
# by the wheel's own `nvtxr record` (what `pip install nvtxr` gives).
if [ -n "${NVTXR_WHEEL:-}" ]; then
    site=$(mktemp -d)
    python3 -m pip install -q --no-index --no-deps --target "$site" "$NVTXR_WHEEL" > "$OUT/wheel.log" 2>&1
    PYTHONPATH="$site" "$site/bin/nvtxr" record -q -o "$OUT/ranges.json" --sqlite "$OUT/ranges.sqlite" \
        -- python3 tests/gpu/torch_ranges.py > "$OUT/ranges.log" 2>&1
    echo "wheel's nvtxr record (torch_ranges.py) exit $?: $(tr '\n' ' ' < "$OUT/ranges.log" | cut -c1-300)"
    python3 - "$OUT/ranges.sqlite" <<'PY'
import collections, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# Each kernel with the innermost NVTX range open on its launching thread at its launch.
q = ("SELECT s.value, (SELECT coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId)) "
     "FROM NVTX_EVENTS n WHERE n.globalTid = r.globalTid AND n.end IS NOT NULL "
     "AND n.start <= r.start AND r.start <= n.end ORDER BY n.end - n.start LIMIT 1) "
     "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
     "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId ORDER BY k.start")
try:
    rows = db.execute(q).fetchall()
except sqlite3.Error as e:
    sys.exit(f"Python ranges: no kernel recorded ({e})")
under = collections.defaultdict(collections.Counter)
for kernel, range_ in rows:
    under[range_ or "(no range)"][kernel] += 1
print("Python ranges (expected: matmul's, add's and reference's kernels each under its range):")
for range_, kernels in under.items():
    print(f"  {range_}: " + ", ".join(f"{k} x{n}" for k, n in kernels.items()))
PY
else
    echo "Python ranges skipped: no NVTXR_WHEEL"
fi
# torch.profiler inside the program: 5 warm-up steps, then 50 profiled (532 kernels a step).
"$N" record -q -o "$OUT/both.pftrace" --sqlite "$OUT/both.sqlite" -- python3 "$LOOP" kineto 50 "$OUT/both.json" > "$OUT/both.log" 2>&1
echo "torch.profiler under nvtxr record: exit $?; nvtxr's kernels $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0])" "$OUT/both.sqlite" 2>&1 | tail -1); torch.profiler's kernels $(python3 -c "import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('cat') == 'kernel'))" "$OUT/both.json" 2>&1 | tail -1)"
grep -i 'cupti\|nvtxr\|kineto\|warn' "$OUT/both.log" | head -8
# A process killed by SIGKILL mid-run (no exit handler): the GPU records the
# flushing thread handed over, up to the last second.
"$N" record -q --sqlite "$OUT/killed.sqlite" -- bash -c "python3 $LOOP nvtx 100000 & p=\$!; sleep 20; kill -9 \$p; wait" > "$OUT/killed.log" 2>&1
python3 - "$OUT/killed.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
kernels, last = db.execute("SELECT count(*), max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
nvtx = db.execute("SELECT max(coalesce(end, start)) FROM NVTX_EVENTS").fetchone()[0]
print(f"killed after 20 s: {kernels} kernels, the last ending {(nvtx - (last or 0)) / 1e9:.2f} s before the last NVTX event")
PY
python3 $L plain "$STEPS" > "$OUT/plain2.log" 2>&1
python3 $L nvtx "$STEPS" > "$OUT/nvtx2.log" 2>&1
"$N" record -q -o "$OUT/gpu-only2.pftrace" -- python3 $L plain "$STEPS" > "$OUT/gpu-only2.log" 2>&1
"$N" record -q -o "$OUT/record2.pftrace" -- python3 $L nvtx "$STEPS" > "$OUT/record2.log" 2>&1
r2() { echo "$1 $(ms "$OUT/$2.log") ms/step, $(cpu "$OUT/$2.log") CPU-s"; }
echo "second round: $(r2 "no tool, no ranges" plain2); $(r2 emit_nvtx nvtx2); $(r2 "GPU alone" gpu-only2); $(r2 "emit_nvtx under nvtxr record" record2)"
