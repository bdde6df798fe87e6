"""Runs Python programs under nvtxr's event-log tool (one line per NVTX call)
and under `nvtxr record`. `tests/run-all.sh` sets the paths through
`cargo run -p nvtxr-harness --bin artifacts`; without them (and without
NVTXR_REQUIRE_TOOLS) the tests that need them skip, saying so."""

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest


def artifact(variable):
    path = os.environ.get(variable)
    if not path or not os.path.exists(path):
        message = f"{variable} is not set to an existing path (run through tests/run-all.sh)"
        if os.environ.get("NVTXR_REQUIRE_TOOLS"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def run(code, *, tool="event-log", env=None, python=sys.executable, args=(), python_args=()):
    """Runs `code` (dedented) in a fresh interpreter as `python [python_args]
    script.py [args]`; returns (process, calls).

    tool: "event-log" (the event-log tool), None (no tool), or a path."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "script.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(code))
        out = os.path.join(tmp, "events.log")
        environment = dict(os.environ)
        environment.pop("NVTX_INJECTION64_PATH", None)
        environment["NVTXR_EVENT_LOG_OUT"] = out
        if tool == "event-log":
            environment["NVTX_INJECTION64_PATH"] = artifact("NVTXR_EVENT_LOG")
        elif tool is not None:
            environment["NVTX_INJECTION64_PATH"] = tool
        environment.update(env or {})
        process = subprocess.run(
            [python, *python_args, script, *args],
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        calls = []
        if os.path.exists(out):
            with open(out) as f:
                calls = [l.rstrip("\n") for l in f if not l.startswith("init ")]
        return process, calls


def check(process):
    assert process.returncode == 0, process.stdout + process.stderr
    return process


def interpreter(version):
    """pyenv's CPython `version` (e.g. "3.12"), or a skip saying it is missing."""
    root = os.path.expanduser("~/.pyenv/versions")
    found = sorted(
        v for v in (os.listdir(root) if os.path.isdir(root) else []) if v.startswith(version + ".")
    )
    if not found:
        pytest.skip(f"CPython {version} is not installed (pyenv); the test needs it")
    return os.path.join(root, found[-1], "bin", "python3")


def installed_path():
    """The folder holding the installed nvtxr package (abi3: any CPython 3.9+ can import it)."""
    import nvtxr

    return os.path.dirname(os.path.dirname(nvtxr.__file__))


def copy_part(parquet, to, part, *, query="SELECT * FROM read_parquet('{src}')", name=None):
    """Copies one part of every table of a Parquet directory to the directory
    `to` (as the part `name`, if given), each table through `query`."""
    import duckdb

    for table in os.listdir(parquet):
        os.makedirs(to / table, exist_ok=True)
        src = parquet / table / part
        duckdb.sql(f"COPY ({query.format(src=src)}) TO '{to / table / (name or part)}' (FORMAT parquet)")
