#!/usr/bin/env bash
# nvtxr on a real GPU: Nsight Compute (NVIDIA's own NVTX tool) filtering
# kernels by nvtxr's ranges, and `nvtxr record` around CUDA programs.
#
# Not part of tests/run-all.sh (CI has no GPU). Run on a machine with a GPU,
# nvcc and ncu, from the repository root, with release artifacts in $ART:
#   libnvtxr.so, libnvtx3interop.so.1, libnvToolsExt.so.1, nvtxr,
#   libnvtxr_record.so and an nvtxr wheel (see docs/gpu.md).
# Prints one "ok"/"FAIL" line per check and exits 1 if any failed.
set -u
ART=${ART:?set ART to the folder with the release artifacts}
OUT=${OUT:-$(mktemp -d)}
WORK=$(mktemp -d)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
failed=0

ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

# The kernels ncu profiled, in order, comma-separated.
profiled() { grep -o '==PROF== Profiling "[a-z_]*' "$1" | sed 's/.*"//' | paste -sd, -; }

# expect NAME LOG WANTED: the kernels profiled are exactly WANTED.
expect() {
    local got; got=$(profiled "$2")
    if [ "$got" = "$3" ]; then ok "$1: $got"; else fail "$1: profiled '$got', wanted '$3'"; fi
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
ncu --version | tail -1

NV=$(dirname "$(command -v nvcc)")/../include
cp "$ART"/libnvtx3interop.so.1 "$ART"/libnvToolsExt.so.1 "$ART"/libnvtxr.so* "$WORK"/
nvcc -O2 -I"$root/include" "$here/nvtxr_kernels.cu" -L"$WORK" -lnvtxr -Xlinker -rpath="$WORK" -o "$WORK/nvtxr" || fail "build nvtxr_kernels"
nvcc -O2 -I"$NV" "$here/nvtx3_kernels.cu" -o "$WORK/reference" -ldl || fail "build reference"
nvcc -O2 -I"$NV" -DNVTX_NO_IMPL "$here/nvtx3_kernels.cu" -L"$WORK" -l:libnvtx3interop.so.1 -Xlinker -rpath="$WORK" -o "$WORK/interop" || fail "build interop"
nvcc -O2 -I"$NV" -DNVTX_NO_IMPL "$here/nvtx3_kernels.cu" -L"$WORK" -l:libnvToolsExt.so.1 -Xlinker -rpath="$WORK" -o "$WORK/nvtoolsext" || fail "build nvtoolsext"

# Each NVTX filter, each program: nvtxr's loaders must let ncu profile
# exactly the kernels it profiles under NVIDIA's own loader (the reference).
filters=("" "setup/" "train@forward/" "train@forward/backward/" "train@backward/" "epoch" "train@epoch")
for prog in reference nvtxr interop nvtoolsext; do
    "$WORK/$prog" > "$OUT/$prog-plain.log" 2>&1 && ok "$prog runs with no tool" || fail "$prog with no tool: $(tail -2 "$OUT/$prog-plain.log")"
    for n in "${!filters[@]}"; do
        f=${filters[$n]}
        log="$OUT/$prog-ncu-$n.log"
        ncu --clock-control none --metrics gpu__time_duration.sum --nvtx ${f:+--nvtx-include "$f"} "$WORK/$prog" > "$log" 2>&1
        if [ $prog = reference ]; then
            echo "     reference, filter '$f': $(profiled "$log")"
        else
            expect "$prog ncu --nvtx-include '$f'" "$log" "$(profiled "$OUT/reference-ncu-$n.log")"
        fi
    done
done
expect "reference with no filter" "$OUT/reference-ncu-0.log" "k_setup,k_forward,k_backward,k_epoch,k_outside"
expect "reference filtered to setup/" "$OUT/reference-ncu-1.log" "k_setup"
grep -q "tool attached: 1" "$OUT/nvtxr-ncu-0.log" && ok "nvtxr_tool_attached() under ncu" || fail "nvtxr_tool_attached() under ncu"
# What ncu shows of the NVTX state at a kernel, reference and nvtxr.
for prog in reference nvtxr; do echo "--- $prog, k_backward:"; grep -A40 '^  k_backward' "$OUT/$prog-ncu-0.log" | grep -i -A4 'nvtx' | head -16; done

# nvtxr record around a CUDA program.
"$ART/nvtxr" record -q -o "$WORK/trace.json" -- "$WORK/nvtxr" > "$OUT/record.log" 2>&1 || fail "nvtxr record: $(tail -3 "$OUT/record.log")"
python3 - "$WORK/trace.json" <<'PY' && ok "nvtxr record of the CUDA program" || fail "nvtxr record of the CUDA program"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
names = sorted({e["name"] for e in events if e.get("ph") != "M"})
print("  recorded:", names)
for want in ("setup", "forward", "backward", "epoch", "done"):
    assert want in names, want
PY

# Python: nvtxr's wheel beside the image's PyTorch.
python3 -m pip install -q --no-index --no-deps --target "$WORK/site" "$ART"/nvtxr-*.whl || fail "pip install the wheel"
export PYTHONPATH="$WORK/site"
python3 "$here/torch_ranges.py" > "$OUT/torch-plain.log" 2>&1 && ok "torch script with no tool" || fail "torch script: $(tail -3 "$OUT/torch-plain.log")"
ncu --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "torch-check@matmul/" python3 "$here/torch_ranges.py" > "$OUT/torch-ncu-matmul.log" 2>&1
m=$(grep -o '==PROF== Profiling "[^"]*"' "$OUT/torch-ncu-matmul.log" | paste -sd, -)
[ -n "$m" ] && ok "torch matmul range profiled: $m" || fail "torch matmul range: nothing profiled"
for r in add/ reference/; do
    ncu --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "$r" python3 "$here/torch_ranges.py" > "$OUT/torch-ncu-${r%/}.log" 2>&1
    grep -o '==PROF== Profiling "[^"]*"' "$OUT/torch-ncu-${r%/}.log" | head -3
    [ "$(grep -c '==PROF== Profiling' "$OUT/torch-ncu-${r%/}.log")" = 1 ] && ok "torch $r range: one kernel" || fail "torch $r range: $(grep -c '==PROF== Profiling' "$OUT/torch-ncu-${r%/}.log") kernels"
done
"$WORK/site/bin/nvtxr" record -q -o "$WORK/torch.json" -- python3 "$here/torch_ranges.py" > "$OUT/torch-record.log" 2>&1 || fail "nvtxr record python: $(tail -3 "$OUT/torch-record.log")"
python3 - "$WORK/torch.json" <<'PY' && ok "nvtxr record of the PyTorch script" || fail "nvtxr record of the PyTorch script"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
names = sorted({e["name"] for e in events if e.get("ph") != "M"})
print("  recorded:", names)
for want in ("matmul", "add", "reference"):
    assert want in names, want
PY
# torch.compile on CUDA.
ART="$ART" OUT="$OUT" bash "$here/check_compile.sh" || failed=1
exit $failed
