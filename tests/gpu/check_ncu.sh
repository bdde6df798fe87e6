#!/usr/bin/env bash
# nvtxr's ranges under Nsight Compute (NVIDIA's own NVTX tool) on a real GPU:
# ncu's --nvtx-include filters must select the same kernels through nvtxr's
# loaders as through NVIDIA's; PyTorch's kernels selected by nvtxr.annotate
# ranges; torch.compile's (check_compile.sh). Run by the staged `run.sh
# ncu` (tests/gpu/stage.sh), or from the repository root on a machine
# with a GPU, nvcc and ncu, with ART a folder holding
# libnvtxr.so (and libnvtxr.so.0.1), libnvtx3interop.so.1,
# libnvToolsExt.so.1, nvtxr, libnvtxr_record.so and the nvtxr wheel.
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

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --version | tail -1
PATH="$(dirname "$ncu"):$PATH"
export PATH
NV=$(dirname "$nvcc")/../include
cp "$ART"/libnvtx3interop.so.1 "$ART"/libnvToolsExt.so.1 "$ART"/libnvtxr.so* "$WORK"/
"$nvcc" -O2 -I"$root/include" "$here/nvtxr_kernels.cu" -L"$WORK" -lnvtxr -Xlinker -rpath="$WORK" -o "$WORK/nvtxr" || fail "build nvtxr_kernels"
"$nvcc" -O2 -I"$NV" "$here/nvtx3_kernels.cu" -o "$WORK/reference" -ldl || fail "build reference"
"$nvcc" -O2 -I"$NV" -DNVTX_NO_IMPL "$here/nvtx3_kernels.cu" -L"$WORK" -l:libnvtx3interop.so.1 -Xlinker -rpath="$WORK" -o "$WORK/interop" || fail "build interop"
"$nvcc" -O2 -I"$NV" -DNVTX_NO_IMPL "$here/nvtx3_kernels.cu" -L"$WORK" -l:libnvToolsExt.so.1 -Xlinker -rpath="$WORK" -o "$WORK/nvtoolsext" || fail "build nvtoolsext"

# Each NVTX filter, each program: nvtxr's loaders must let ncu profile
# exactly the kernels it profiles under NVIDIA's own loader (the reference).
filters=("" "setup/" "train@forward/" "train@forward/backward/" "train@backward/" "epoch" "train@epoch")
for prog in reference nvtxr interop nvtoolsext; do
    for n in "${!filters[@]}"; do
        f=${filters[$n]}
        log="$OUT/ncu-$prog-$n.log"
        "$ncu" --clock-control none --metrics gpu__time_duration.sum --nvtx ${f:+--nvtx-include "$f"} "$WORK/$prog" > "$log" 2>&1
        if [ $prog = reference ]; then
            echo "     reference, filter '$f': $(profiled "$log")"
        else
            expect "$prog ncu --nvtx-include '$f'" "$log" "$(profiled "$OUT/ncu-reference-$n.log")"
        fi
    done
done
expect "reference with no filter" "$OUT/ncu-reference-0.log" "k_setup,k_forward,k_backward,k_epoch,k_outside"
expect "reference filtered to setup/" "$OUT/ncu-reference-1.log" "k_setup"
grep -q "tool attached: 1" "$OUT/ncu-nvtxr-0.log" && ok "nvtxr_tool_attached() under ncu" || fail "nvtxr_tool_attached() under ncu"

# PyTorch: nvtxr's wheel beside the machine's PyTorch, under ncu.
python3 -m pip install -q --no-index --no-deps --target "$WORK/site" "$ART"/nvtxr-*.whl || fail "pip install the wheel"
export PYTHONPATH="$WORK/site"
ncu_torch() {
    "$ncu" --clock-control none --metrics gpu__time_duration.sum --nvtx --nvtx-include "$1" \
        python3 "$here/torch_ranges.py" > "$OUT/ncu-torch-$2.log" 2>&1
    grep -c '==PROF== Profiling' "$OUT/ncu-torch-$2.log"
}
m=$(ncu_torch "torch-check@matmul/" matmul)
[ "$m" -ge 1 ] && ok "torch matmul range: $m kernels profiled" || fail "torch matmul range: nothing profiled"
for r in add reference; do
    n=$(ncu_torch "$r/" "$r")
    [ "$n" = 1 ] && ok "torch $r range: one kernel" || fail "torch $r range: $n kernels"
done
# torch.compile on CUDA.
ART="$ART" OUT="$OUT" bash "$here/check_compile.sh" || failed=1
exit $failed
