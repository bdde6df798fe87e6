#!/usr/bin/env bash
# Stages the GPU check for the device tool, which copies the working tree
# to the GPU machine but neither the ignored build folders nor ../shared:
# the release binaries and NVTX drop-ins, stripped, the Python wheel and the
# PyTorch loop go to the ignored target/gpucheck, with run.sh. Then, with
# the device tool: `run` with carry ["target/gpucheck"] and the command
# `OUT=$OUT bash target/gpucheck/run.sh` (check.sh: it prints the tables;
# $OUT comes back with every log, the traces and the HTML timelines); time
# allowing, a second `run` with `OUT=$OUT bash target/gpucheck/run.sh ncu`
# (check_ncu.sh, Nsight Compute's filters).
set -eu
cd "$(dirname "$0")/../.."
eval "$(cargo xtask artifacts)"
S=target/gpucheck
rm -rf "$S"
mkdir -p "$S/bin"
for f in nvtxr libnvtxr_record.so libnvtxr.so; do
    strip -o "$S/bin/$f" "$NVTXR_LIB_DIR/$f"
done
cp "$S/bin/libnvtxr.so" "$S/bin/libnvtxr.so.0.1"
for f in libnvtx3interop.so.1 libnvToolsExt.so.1; do
    strip -o "$S/bin/$f" "$NVTXR_LIB_DIR/compat/$f"
done
# The cost split's CUPTI probe, built against NVIDIA's CUPTI headers from
# PyPI (which `artifacts` unpacked for the test CUPTI), should the device
# machine have no C compiler.
gcc -shared -fPIC -O2 -I target/harness/cupti/nvidia/cu13/include tests/gpu/cupti_probe.c -ldl \
    -o "$S/bin/libcupti_probe.so"
cp ../shared/gpu/train_loop.py "$S/"
# The Python wheel (`nvtxr` and its `nvtxr record`), built by maturin in the
# tests' own virtual environment (the harness's PYTHON, from `artifacts` above).
"$PYTHON" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2"
PYTHON=$PYTHON cargo xtask wheel --out "$S/bin" > /dev/null
cat > "$S/run.sh" <<'RUN'
# The GPU check on the device machine, from the repository root (staged by
# tests/gpu/stage.sh): check.sh, or with `ncu`, check_ncu.sh (a second run,
# time allowing: each takes minutes).
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
case "${1:-}" in
ncu) ART=$here/bin OUT=$OUT bash tests/gpu/check_ncu.sh 2>&1 | tee "$OUT/check_ncu.log" ;;
*) NVTXR_BIN=$here/bin LOOP=$here/train_loop.py NVTXR_WHEEL=$(ls "$here"/bin/nvtxr-*.whl) OUT=$OUT \
    bash tests/gpu/check.sh 2>&1 | tee "$OUT/check.log" ;;
esac
RUN
du -sh "$S"
