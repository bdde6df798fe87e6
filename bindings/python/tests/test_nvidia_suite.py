"""NVIDIA's own Python tests (`bindings/python/nvidia-tests`, vendored with
their license) against nvtxr: each test's NVTX calls, as NVIDIA's test tool
receives them, must be exactly the ones NVIDIA's harness expects."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import artifact

SUITE = Path(__file__).resolve().parent.parent / "nvidia-tests"
FILES = [
    "tests/test_basic.py",
    "tests/test_payloads.py",
    "tests/test_counters.py",
    "tests/test_writer_scopes.py",
]


def test_nvidias_python_tests_pass_against_nvtxr(tmp_path):
    include = artifact("NVIDIA_NVTX_INCLUDE")
    nvidia_package = artifact("NVIDIA_PYTHON_NVTX")
    root = tmp_path / "suite"
    shutil.copytree(SUITE, root)
    (root / "c").mkdir()
    (root / "c" / "include").symlink_to(include)
    environment = dict(os.environ, NVIDIA_PYTHON_NVTX=nvidia_package)
    environment.pop("NVTX_INJECTION64_PATH", None)
    process = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--enable-injection", *FILES],
        cwd=root / "python",
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = process.stdout + process.stderr
    assert process.returncode == 0, output[-5000:]
    summary = output.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed in [\d.]+s", summary), summary
    # 3,645 parametrized cases of test_basic.py, 26 of test_payloads.py,
    # 793 of test_counters.py and 2 of test_writer_scopes.py.
    assert int(summary.split()[0]) == 4466, summary
