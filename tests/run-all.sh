#!/usr/bin/env bash
# Every test of the project. Needs Rust, gcc and Python 3 with pip (the tests
# fetch NVIDIA's reference producers from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."

if cargo fmt --version >/dev/null 2>&1; then
    cargo fmt --all --check
else
    echo "run-all: rustfmt not installed, format check skipped" >&2
fi
if cargo clippy --version >/dev/null 2>&1; then
    cargo clippy --workspace --all-targets -- -D warnings
else
    echo "run-all: clippy not installed, lint skipped" >&2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace 2>&1 | tee "$log"
# One closing line for the whole run (cargo prints one per test binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "all: %d passed, %d failed\n", p, f }' "$log"
