"""A Python program on the package, recorded end to end by `nvtxr record`:
its ranges, named threads and worker processes are in the trace."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

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


PAYLOADS = """
import sys
import warnings
import numpy as np
if sys.argv[1] == "nvidia":
    import nvtx
else:
    import nvtxr as nvtx
inner = np.dtype([("x", int), ("y", int)])
dt = np.dtype([("x", np.float64), ("arr", np.dtype((np.uint32, 4))), ("sub", inner)])
payloads = {
    "scalar": np.array(3, dtype=np.int32),
    "array": np.array([1.5, -2.0, 3.25]),
    "matrix": np.arange(6, dtype=np.int16).reshape(2, 3),
    "structured": np.array((3.14, [1, 2, 3, 4], (1, 2)), dtype=dt),
    "list": [1, 2, 3],
    "tuple": (0.5, 0.25),
    "range": range(4),
    "bytes": b"abc",
    "strings": np.array(["ab", "cde"]),
}
for name, p in payloads.items():
    nvtx.mark(name, payload=p)
    with nvtx.annotate(name + " range", payload=p, domain="d"):
        pass
    nvtx.end_range(nvtx.start_range(name + " start", payload=p))
"""


def recorded_fields(tmp_path, which):
    """Each event's decoded payload fields when PAYLOADS runs on `which`."""
    events = recorded_events(tmp_path, PAYLOADS, which)
    return {(e["name"], e["cat"]): e["args"].get("fields") for e in events if e["ph"] in ("i", "X", "b")}


def test_array_payloads_are_sent_as_nvidias_package_sends_them(tmp_path):
    """NumPy arrays and scalars, structured dtypes, lists, tuples, ranges and
    bytes: the same extended payloads as NVIDIA's package, decoded by `nvtxr
    record` to the same values (they were dropped with a warning before)."""
    pytest.importorskip("numpy")
    ours = recorded_fields(tmp_path, "nvtxr")
    theirs = recorded_fields(tmp_path, "nvidia")
    assert ours == theirs
    assert len(ours) == 27
    assert ours[("array", "nvtx")] == {
        "size": 3,
        "data": [{"float64": 1.5}, {"float64": -2.0}, {"float64": 3.25}],
    }
    assert ours[("structured range", "d")] == {
        "x": {"float64": 3.14},
        "arr": {"field0": [{"uint32": v} for v in (1, 2, 3, 4)]},
        "sub": {"x": {"int64": 1}, "y": {"int64": 2}},
    }
    assert ours[("bytes start", "nvtx")] == {"bytes24": [97, 98, 99]}


COUNTERS = """
import sys
if sys.argv[1] == "nvidia":
    import nvtx
else:
    import nvtxr as nvtx
d = nvtx.get_domain("metrics")
loss = d.get_counter("loss", float)
steps = d.get_counter("steps", int)
times = []
for i in range(3):
    times.append(d.get_timestamp())
    loss.sample(0.5 * i)
steps.batch_submit([10, 20, 30], times)
loss.batch_submit([1.5, 2.5], times[:2])
"""


def recorded_events(tmp_path, program, which):
    """The trace's events when `program` runs on `which` ("nvidia":
    NVIDIA's package, else nvtxr) under `nvtxr record`."""
    nvtxr = artifact("NVTXR_COMMAND")
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(program))
    trace = tmp_path / f"{which}.json"
    env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
    if which == "nvidia":
        env["PYTHONPATH"] = artifact("NVIDIA_PYTHON_NVTX")
    process = subprocess.run(
        [nvtxr, "record", "-q", "-o", str(trace), "--", sys.executable, str(script), which],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    return json.loads(trace.read_text())["traceEvents"]


def counter_samples(tmp_path, program, which):
    """(counter, value, time) of each counter sample (see recorded_events)."""
    events = recorded_events(tmp_path, program, which)
    return [(e["name"], e["args"]["value"], e["ts"]) for e in events if e["ph"] == "C"]


def test_counters_and_batches_are_recorded_as_nvidias_are(tmp_path):
    """Samples and batches (timestamps from Domain.get_timestamp) through
    NVIDIA's package and nvtxr, recorded: the same counter samples, and each
    batched value at its timestamp (taken just before the i-th sample)."""
    ours = counter_samples(tmp_path, COUNTERS, "nvtxr")
    theirs = counter_samples(tmp_path, COUNTERS, "nvidia")
    assert [s[:2] for s in ours] == [s[:2] for s in theirs]
    loss = [ts for name, value, ts in ours if name == "loss" and value in (0.0, 0.5, 1.0)]
    steps = [ts for name, _, ts in ours if name == "steps"]
    batched_loss = [ts for name, value, ts in ours if name == "loss" and value in (1.5, 2.5)]
    assert [v for n, v, _ in ours if n == "steps"] == [10, 20, 30]
    assert batched_loss == steps[:2]
    assert all(s <= l for s, l in zip(steps, loss)), (steps, loss)


EXT_COUNTERS = """
import sys
import numpy as np
if sys.argv[1] == "nvidia":
    import nvtx
else:
    import nvtxr as nvtx
d = nvtx.get_domain("memory")
mem = d.get_counter("memory", np.dtype([("allocated", np.int64), ("reserved", np.int64)]))
mem.sample((1024, 2048))
temp = d.get_counter("temp", np.float32)
temp.sample(36.5)
t = [d.get_timestamp(), d.get_timestamp()]
mem.batch_submit([(1, 2), (3, 4)], t)
print(type(mem).__name__, type(temp).__name__, type(d.get_counter("n", np.int64)).__name__)
"""


def test_numpy_dtype_counters_and_counter_groups_are_recorded_as_nvidias_are(tmp_path):
    """ExtCounter: a structured dtype is a counter group (a series per
    field), a float32 counter a series of its own; samples and a batch."""
    pytest.importorskip("numpy")
    ours = counter_samples(tmp_path, EXT_COUNTERS, "nvtxr")
    theirs = counter_samples(tmp_path, EXT_COUNTERS, "nvidia")
    assert [s[:2] for s in ours] == [s[:2] for s in theirs]
    assert [s[:2] for s in ours] == [
        ("memory allocated", 1024),
        ("memory reserved", 2048),
        ("temp float32", 36.5),
        ("memory allocated", 1),
        ("memory reserved", 2),
        ("memory allocated", 3),
        ("memory reserved", 4),
    ]


NUMPY_DTYPE = """
import sys
import numpy as np
if sys.argv[1] == "nvidia":
    import nvtx
else:
    import nvtxr as nvtx
d = nvtx.get_domain("gpu")
util = nvtx.numpy_dtype(np.float64, counter_semantics=nvtx.CounterSemantics(unit="%", min=0.0, max=100.0))
stamp = nvtx.numpy_dtype(np.int64, entry_kind=nvtx.EntryKind.COUNTER_TIMESTAMP)
c = d.get_counter("gpu", np.dtype([("t", stamp), ("util", util), ("temp", np.int32)]))
c.sample((d.get_timestamp(), 87.5, 64))
cat = nvtx.numpy_dtype(np.uint32, entry_type=nvtx.PayloadEntryType.CATEGORY)
nvtx.mark("send", payload=np.array((3, 4096), dtype=[("cat", cat), ("bytes", np.int64)]), domain="gpu")
try:
    nvtx.numpy_dtype(np.int32, entry_kind=nvtx.EntryKind.MARK)
except TypeError:
    pass
else:
    raise SystemExit("a 32-bit timestamp was accepted")
"""


def test_numpy_dtype_metadata_is_sent_as_nvidias_package_sends_it(tmp_path):
    """nvtxr.numpy_dtype: a counter group with a timestamp field and a field
    with counter semantics, an event payload with a category field; a
    timestamp role on 32-bit storage refused. Recorded as NVIDIA's."""
    pytest.importorskip("numpy")

    def shown(which):
        events = recorded_events(tmp_path, NUMPY_DTYPE, which)
        return [(e["ph"], e["name"], e["args"]) for e in events if e["ph"] in ("C", "i")]

    ours = shown("nvtxr")
    assert ours == shown("nvidia")
    assert ours == [
        ("C", "gpu util", {"value": 87.5}),
        ("C", "gpu temp", {"value": 64}),
        (
            "i",
            "send",
            {
                "domain": "gpu",
                "color": "#0000ff",
                "fields": {"cat": {"uint32": 3}, "bytes": {"int64": 4096}},
            },
        ),
    ]


TRAINING = """
import torch
# emit_nvtx synchronizes the GPU on entry and exit; this machine may have none.
torch.cuda.synchronize = lambda device=None: None
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 8), torch.randn(32, 1)
with torch.autograd.profiler.emit_nvtx():
    for step in range(30):
        torch.cuda.nvtx.range_push(f"step {step}")
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
print("trained")
"""


def summary_rows(nvtxr, rec, tmp_path, *options):
    out = tmp_path / "summary.json"
    process = subprocess.run(
        [nvtxr, "report", "-q", "-o", str(tmp_path / "t.pftrace"), "--json", str(out), *options, str(rec)],
        capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    return json.loads(out.read_text())


def test_pytorch_emit_nvtx_names_are_grouped_as_people_mean_them(tmp_path):
    pytest.importorskip("torch")
    nvtxr = artifact("NVTXR_COMMAND")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAINING))
    rec = tmp_path / "rec"
    env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
    process = subprocess.run(
        [nvtxr, "record", "-q", "--keep", str(rec), "-o", str(tmp_path / "t.json"), "--", sys.executable, str(script)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    exact = summary_rows(nvtxr, rec, tmp_path, "--exact-names")
    grouped = summary_rows(nvtxr, rec, tmp_path)
    by_op = summary_rows(nvtxr, rec, tmp_path, "--operators")
    assert len(exact) > 1000, len(exact)  # a row per numbered name
    assert len(grouped) <= 100, [r["range"] for r in grouped]
    step = next(r for r in grouped if r["range"] == ":step {n}")
    assert step["instances"] == 30
    # Each operator's instances are the exact rows it replaces.
    assert len(by_op) <= len(grouped), [r["range"] for r in by_op]
    for row in by_op:
        op = row["range"]
        if "::" not in op:
            continue
        replaced = [r for r in exact if r["style"] == row["style"] and r["range"].split(",")[0].strip() == op]
        assert replaced and row["instances"] == sum(r["instances"] for r in replaced), op
    assert any(r["range"] == ":aten::linear" for r in by_op), [r["range"] for r in by_op]
    assert next(r for r in by_op if r["range"] == ":step {n}")["instances"] == 30
    assert sum(r["instances"] for r in grouped) == sum(r["instances"] for r in exact)
