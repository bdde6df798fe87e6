"""A Python program on the package, recorded end to end by `nvtxr record`:
its ranges, named threads and worker processes are in the trace."""

import json
import os
import subprocess
import sys
import textwrap

from conftest import artifact

PROGRAM = """
import multiprocessing
import threading
import nvtxr as nvtx

def task(n):
    with nvtx.annotate(f"task {n}", domain="workers"):
        return n * n

def load():
    with nvtx.annotate("load", color="green"):
        pass

if __name__ == "__main__":
    with nvtx.annotate("main", color="blue"):
        t = threading.Thread(target=load, name="loader")
        t.start()
        t.join()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print(sum(pool.map(task, range(4))))
"""


def test_nvtxr_record_shows_ranges_threads_and_processes(tmp_path):
    nvtxr = artifact("NVTXR_COMMAND")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(PROGRAM))
    trace = tmp_path / "trace.json"
    env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
    process = subprocess.run(
        [nvtxr, "record", "-q", "-o", str(trace), "--", sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert process.stdout == "14\n"
    events = json.loads(trace.read_text())["traceEvents"]
    ranges = [e for e in events if e["ph"] == "X"]
    assert sorted(e["name"] for e in ranges if e["cat"] == "workers") == [f"task {n}" for n in range(4)]
    main = next(e for e in ranges if e["name"] == "main")
    load = next(e for e in ranges if e["name"] == "load")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names[(main["pid"], main["tid"])] == "MainThread"
    assert names[(load["pid"], load["tid"])] == "loader"
    worker_pids = {e["pid"] for e in ranges if e["cat"] == "workers"}
    assert main["pid"] not in worker_pids and 1 <= len(worker_pids) <= 2
    processes = [e for e in events if e["name"] == "process_name"]
    assert len(processes) >= 3
