"""The wheel `cargo xtask wheel` builds (tests/run-all.sh sets NVTXR_WHEEL):
installed alone into a fresh virtual environment of each CPython 3.10-3.13
at hand, it gives `import nvtxr` and the `nvtxr` command, which records. The
same from the source distribution (NVTXR_SDIST), which `pip install` builds,
and from `pip install ./bindings/python`, the README's quick start (the
tests' own environment)."""

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
        # Only what the wheel installed: the venv's `nvtxr` and `python`.
        records(os.path.join(venv, "bin"), tmp)


def records(venv_bin, tmp):
    """Checks that `nvtxr record` of `venv_bin` records its Python."""
    trace = os.path.join(tmp, "t.json")
    env = {k: v for k, v in os.environ.items() if k not in ("NVTX_INJECTION64_PATH", "NVTXR_RECORD_TOOL")}
    process = subprocess.run(
        [os.path.join(venv_bin, "nvtxr"), "record", "-q", "-o", trace, "--",
         os.path.join(venv_bin, "python"), "-c", PROGRAM],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert process.stdout == "True\n"
    events = json.load(open(trace))["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "i"] == ["from the wheel"]


def test_the_sdist_installs_a_command_that_records():
    sdist = artifact("NVTXR_SDIST")
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        # pip builds it with maturin (fetched from PyPI) and the Rust toolchain.
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", sdist], check=True, timeout=1800)
        process = subprocess.run([os.path.join(venv, "bin", "nvtxr"), "--version"], capture_output=True, text=True)
        assert process.returncode == 0 and process.stdout.startswith("nvtxr "), process.stderr
        records(os.path.join(venv, "bin"), tmp)


def test_pip_install_of_the_source_folder_gives_a_command_that_records():
    # tests/run-all.sh ran `pip install ./bindings/python` into this environment.
    with tempfile.TemporaryDirectory() as tmp:
        records(os.path.dirname(sys.executable), tmp)
