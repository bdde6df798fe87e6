#!/usr/bin/env bash
# Every test of the project. Needs Rust, gcc and Python 3 with pip (the tests
# fetch NVIDIA's reference producers, maturin and pytest from PyPI); installs
# GHC and cabal from Debian for the Haskell package when they are missing.
set -uo pipefail
cd "$(dirname "$0")/.."

# System tools the tests use: pkg-config and CMake (the install tests build a
# consumer project), Chromium (the HTML timeline is rendered headless),
# valgrind (instruction counts), Open MPI (mpirun, and mpicc with mpi.h for
# the MPI test program) for the multi-rank tests, and `script` (a
# pseudo-terminal for the progress-line test, in bsdutils).
# With NVTXR_REQUIRE_TOOLS set, a test whose tool is missing fails instead of skipping.
declare -A package=([script]=bsdutils [mpirun]=openmpi-bin [mpicc]=libopenmpi-dev)
missing=()
for tool in cmake pkg-config chromium script valgrind mpirun mpicc; do
    command -v "$tool" >/dev/null || missing+=("${package[$tool]:-$tool}")
done
# mpicc comes with openmpi-bin's alternatives too; the header is what it needs.
if command -v mpicc >/dev/null && ! printf '#include <mpi.h>\n' | mpicc -E -x c - >/dev/null 2>&1; then
    missing+=(libopenmpi-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export NVTXR_REQUIRE_TOOLS=1

# Every step runs, whatever failed before it; the run fails at the end.
failed=()
step() {
    "$@" || failed+=("$*")
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A suite's output goes to the terminal and to the log the closing line counts.
suite() {
    "$@" 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("$*")
}

if cargo fmt --version >/dev/null 2>&1; then
    step cargo fmt --all --check
else
    echo "run-all: rustfmt not installed, format check skipped" >&2
fi
if cargo clippy --version >/dev/null 2>&1; then
    step cargo clippy --workspace --all-targets -- -D warnings
else
    echo "run-all: clippy not installed, lint skipped" >&2
fi
step env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
# The crates meant for users package (and build from their packages) cleanly.
# The recorder's (nvtxr-record-format, nvtxr-record-tool, nvtxr-record) are
# packaged and built by tests/packages.rs, which also records with the
# command built from them: not twice here.
# A fresh target directory each time: cargo unpacks the packaged crates into
# its cache by name, version and that directory, and would reuse a stale copy.
mkdir -p target
packages=$(mktemp -d -p target package.XXXXXX)
step cargo package -q --target-dir "$packages" -p nvtx-protocol -p nvtxr-engine -p nvtxr -p nvtxr-tracing
rm -rf "$packages"
suite cargo test --workspace --no-fail-fast
suite bash bindings/haskell/test.sh
suite bash bindings/python/test.sh
# One closing line for the whole run: cargo's per-binary results, tasty's
# per-suite results and pytest's summary added up; a test that skipped for a
# missing tool (its "SKIPPED:" notice) counts as skipped, not passed.
awk '/^test result:/ { p += $4; f += $6 }
     /^All [0-9]+ tests passed/ { p += $2 }
     / out of [0-9]+ tests failed/ { f += $1; p += $4 - $1 }
     /^SKIPPED: / { s += 1; p -= 1 }
     !/^test result:/ && /[0-9]+ (passed|failed|skipped).* in [0-9.]+s/ {
         for (i = 2; i <= NF; i++) {
             if ($i ~ /^passed/) p += $(i - 1)
             if ($i ~ /^failed/) f += $(i - 1)
             if ($i ~ /^skipped/) s += $(i - 1)
         }
     }
     END { printf "all: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'run-all: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
