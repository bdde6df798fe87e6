#!/usr/bin/env bash
# The GPU check, for a machine with a GPU, CUDA and PyTorch (the device tool):
# records ../shared/gpu/train_loop.py under `nvtxr record` (emit_nvtx ranges,
# CUPTI activity) and prints one table: kernels recorded, CUPTI's dropped
# count, the recording's size, and the GPU summary's head. Run from the
# repository root with nvtxr built (cargo build --release -p nvtxr-record).
set -uo pipefail
nvtxr=${NVTXR:-target/release/nvtxr}
loop=${LOOP:-../shared/gpu/train_loop.py}
out=$(mktemp -d)
start=$(date +%s.%N)
"$nvtxr" record -o "$out/loop.pftrace" --sqlite "$out/loop.sqlite" --keep "$out/raw" -- python3 "$loop" 2>&1 | tee "$out/summary.txt" | tail -40
end=$(date +%s.%N)
kernels=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0])" "$out/loop.sqlite")
dropped=$(grep -o 'CUPTI dropped [0-9]*' "$out/summary.txt" || echo "CUPTI dropped 0")
printf '| what | value |\n|---|---|\n'
printf '| kernels recorded | %s |\n' "$kernels"
printf '| %s | records |\n' "$dropped"
printf '| raw recording | %s |\n' "$(du -sh "$out/raw" | cut -f1)"
printf '| .pftrace | %s |\n' "$(du -sh "$out/loop.pftrace" | cut -f1)"
printf '| wall time under nvtxr record | %.1f s |\n' "$(echo "$end - $start" | bc)"
