"""The wheel `cargo xtask wheel` builds (tests/run-all.sh sets NVTXR_WHEEL):
installed alone into a fresh virtual environment of each CPython 3.10-3.13
at hand, it gives `import nvtxr` and the `nvtxr` command, which records. And
the source distribution (NVTXR_SDIST): `pip install` builds it."""

import json
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import artifact, interpreter

PROGRAM = "import nvtxr as nvtx; nvtx.mark('from the wheel'); print(nvtx.tool_attached())"


@pytest.mark.parametrize("version", ["3.10", "3.11", "3.12", "3.13"])
def test_the_wheel_alone_gives_the_recorder(version):
    wheel = artifact("NVTXR_WHEEL")
    assert "manylinux" in os.path.basename(wheel), wheel
    python = sys.executable if sys.version.startswith(version + ".") else interpreter(version)
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([python, "-m", "venv", venv], check=True)
        subprocess.run(
            [os.path.join(venv, "bin", "pip"), "install", "-q", "--no-index", wheel], check=True
        )
        trace = os.path.join(tmp, "t.json")
        env = {k: v for k, v in os.environ.items() if k not in ("NVTX_INJECTION64_PATH", "NVTXR_RECORD_TOOL")}
        # Only what the wheel installed: the venv's `nvtxr` and `python`.
        process = subprocess.run(
            [os.path.join(venv, "bin", "nvtxr"), "record", "-q", "-o", trace, "--",
             os.path.join(venv, "bin", "python"), "-c", PROGRAM],
            env=env, capture_output=True, text=True, timeout=120,
        )
        assert process.returncode == 0, process.stdout + process.stderr
        assert process.stdout == "True\n"
        events = json.load(open(trace))["traceEvents"]
        assert [e["name"] for e in events if e["ph"] == "i"] == ["from the wheel"]


def test_the_sdist_installs_and_says_the_command_needs_the_wheel():
    sdist = artifact("NVTXR_SDIST")
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        # pip builds it with maturin (fetched from PyPI) and the Rust toolchain.
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", sdist], check=True, timeout=900)
        process = subprocess.run(
            [os.path.join(venv, "bin", "python"), "-c", "import nvtxr as nvtx; nvtx.mark('x'); print('imported')"],
            capture_output=True, text=True,
        )
        assert process.stdout == "imported\n", process.stderr
        # Built from source, the package has no bundled recorder, and says so.
        process = subprocess.run([os.path.join(venv, "bin", "nvtxr"), "--help"], capture_output=True, text=True)
        assert process.returncode == 1
        assert "has no recorder" in process.stderr and "cargo xtask wheel" in process.stderr
