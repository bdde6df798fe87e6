#!/usr/bin/env bash
# The Python package's tests: installs maturin, pytest, NumPy and PyTorch from PyPI, builds and
# installs the package with pip (`pip install ./bindings/python`), all into
# the tests' own virtual environment (PYTHON, from the harness: never the
# user's Python), then runs
# pytest with the paths of nvtxr's event-log tool, `nvtxr`, NVIDIA's Python
# nvtx package (the reference) from the harness, the wheel carrying the
# `nvtxr` command (`cargo xtask wheel`) and the source distribution.
set -euo pipefail
cd "$(dirname "$0")/../.."
eval "$(cargo run -q -p nvtxr-harness --bin artifacts)"
pip=("$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore)
"${pip[@]}" "maturin>=1.5,<2" pytest numpy setuptools
# DuckDB, pandas, pyarrow and Dask's distributed for nvtxr.recipes and the
# Parquet tests (tests/test_recipes.py).
"${pip[@]}" duckdb pandas pyarrow "dask[distributed]"
# PyTorch from PyPI (the CUDA build; it runs torch.compile on the CPU) for
# tests/test_torch_compile.py.
"${pip[@]}" torch
"${pip[@]}" ./bindings/python
# The wheel with the `nvtxr` command and its tool, for tests/test_wheel.py.
# (In a folder of the tests' own: target/wheels is the user's.)
rm -rf target/test-wheels
NVTXR_WHEEL=$(cargo xtask wheel --out target/test-wheels | tail -1)
# And the source distribution, for the same tests.
rm -rf target/sdist
(cd bindings/python && "$PYTHON" -m maturin sdist -o ../../target/sdist >/dev/null)
NVTXR_SDIST=$(ls "$PWD"/target/sdist/nvtxr-*.tar.gz)
export NVTXR_WHEEL NVTXR_SDIST
# Every temporary file of the tests (pytest's, torch.compile's, Dask's,
# torchrun's, nvtxr's) in their own folder, not /tmp.
mkdir -p target/harness/tmp
export TMPDIR=$PWD/target/harness/tmp
cd bindings/python
"$PYTHON" -m pytest -q tests
