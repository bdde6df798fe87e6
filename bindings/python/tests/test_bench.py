"""The benchmark (`bench.py`, run by `cargo xtask bench-python`) still runs
and prints every figure: a `--quick` run, no timing checked."""

import os
import subprocess
import sys

from conftest import artifact

BENCH = os.path.join(os.path.dirname(__file__), "..", "bench.py")


def test_the_benchmark_prints_every_figure():
    env = dict(
        os.environ,
        NVTXR_EVENT_LOG=artifact("NVTXR_EVENT_LOG"),
        NVIDIA_PYTHON_NVTX=artifact("NVIDIA_PYTHON_NVTX"),
    )
    out = subprocess.run(
        [sys.executable, BENCH, "--quick"], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in out.stdout.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    header, rows = rows[0], rows[1:]
    assert header[:5] == ["operation", "tool", "NVIDIA nvtx (ns)", "nvtxr (ns)", "nvtxr / nvtx"]
    # Five operations and the baseline, with no tool and with one, and the profiler.
    assert len(rows) == 13, out.stdout
    assert rows[-1][0] == "profiler, per Python call"
    for row in rows:
        assert len(row) == len(header), row
        compared = row[0] != "empty with of a pure-Python context manager"
        for cell in row[2:5] if compared else row[3:4]:
            assert float(cell) > 0, row
