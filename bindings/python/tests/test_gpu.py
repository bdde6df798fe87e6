"""GPU work under Python's ranges: `nvtxr record -- python train.py` ties
each kernel to the `nvtxr.annotate`, `torch.cuda.nvtx` or `emit_nvtx` range
that launched it.

CI has no GPU: the program stands in for the CUDA driver with the test
CUPTI library (`record/cli/tests/gpu/fake_cupti.c`, written from NVIDIA's
CUPTI headers, path in FAKE_CUPTI): it calls the recording tool's
`InitializeInjection` as the driver does at `cuInit`, then launches fake
kernels from inside each kind of range, one from inside a PyTorch operator
run under `emit_nvtx`."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import artifact

PROGRAM = """
import ctypes
import os
import nvtxr
import torch

fake = ctypes.CDLL(os.environ["FAKE_CUPTI"], mode=ctypes.RTLD_GLOBAL)
fake.fake_launch.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32]
# cuInit: the driver loads the injection library nvtxr record names.
ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
names = []  # the kernels' names live until CUPTI's buffers are read, at exit

def launch(correlation, name):
    names.append(name.encode())
    fake.fake_launch(correlation, names[-1], 7)

@torch.library.custom_op("fakecuda::gemm", mutates_args=())
def gemm(x: torch.Tensor) -> torch.Tensor:
    launch(3, "_Z4gemmv")
    return x.clone()

# emit_nvtx synchronizes the GPU on entry and exit; this machine may have none.
torch.cuda.synchronize = lambda device=None: None
with nvtxr.annotate("step"):
    launch(1, "_Z4stepv")
    torch.cuda.nvtx.range_push("torch range")
    launch(2, "_Z5torchv")
    torch.cuda.nvtx.range_pop()
    with torch.autograd.profiler.emit_nvtx():
        torch.ops.fakecuda.gemm(torch.ones(2))  # through the dispatcher, as aten ops
print("launched")
"""


def test_kernels_launched_from_python_are_under_the_range_that_launched_them(tmp_path):
    pytest.importorskip("torch")
    nvtxr = artifact("NVTXR_COMMAND")
    cupti = artifact("FAKE_CUPTI")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(PROGRAM))
    trace = tmp_path / "trace.json"
    env = {k: v for k, v in os.environ.items() if k not in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")}
    env["NVTXR_CUPTI"] = cupti
    parquet = tmp_path / "pq"
    process = subprocess.run(
        [nvtxr, "record", "--exact-names", "-o", str(trace), "--parquet", str(parquet),
         "--", sys.executable, str(script)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    said = process.stdout + process.stderr
    assert process.returncode == 0, said
    assert "launched" in process.stdout
    assert "GPU activity not recorded" not in said, said
    events = json.loads(trace.read_text())["traceEvents"]
    kernels = {
        e["name"]: e["args"]["launched by"]
        for e in events
        if e.get("cat") == "kernel" and e["ph"] == "X"
    }
    # Named as people read them (demangled), as Nsight Systems and torch.profiler show them.
    assert sorted(kernels) == ["gemm()", "step()", "torch()"], kernels
    assert kernels["step()"]["range"] == "step"
    assert kernels["torch()"]["range"] == "torch range"
    assert kernels["gemm()"]["range"].startswith("fakecuda::gemm, seq = "), kernels
    # The summary projects them onto the ranges: "step" holds all three.
    projected = said.split("NVTX ranges projected onto the GPU")[1].split("\n\n")[1]
    step = next(line.split() for line in projected.splitlines() if line.startswith(":step "))
    assert step[-2:] == ["3", "3"], projected

    # The Parquet tables answer the same: nvtxr.recipes.gpu_projection.
    pytest.importorskip("duckdb")
    from nvtxr import recipes

    table = recipes.gpu_projection(parquet, engine="duckdb")
    rows = {r.range: (r.instances, r.kernels, r.gpu_ops) for r in table.itertuples()}
    assert rows["step"] == (1, 3, 3), rows
    assert rows["torch range"] == (1, 1, 1), rows
    gemm = [name for name in rows if name.startswith("fakecuda::gemm")]
    assert len(gemm) == 1 and rows[gemm[0]] == (1, 1, 1), rows
    for line in projected.splitlines()[2:]:
        cells = line.split()
        if cells and cells[0] == ":step":
            assert int(cells[-2]) == rows["step"][1] and int(cells[-1]) == rows["step"][2]


RANK_PROGRAM = """
import ctypes
import os
import nvtxr

rank = int(os.environ["RANK"])
fake = ctypes.CDLL(os.environ["FAKE_CUPTI"], mode=ctypes.RTLD_GLOBAL)
fake.fake_launch.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32]
ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
name = f"_Z5rank{rank}v".encode()  # lives until CUPTI's buffers are read, at exit
with nvtxr.annotate(f"rank {rank} step"):
    fake.fake_launch(1, name, 7)
"""


def test_torchrun_ranks_each_record_their_own_gpu_activity(tmp_path):
    """docs/recording.md's torchrun line, as written (with `--standalone` for
    a free port): each rank's kernel on its own GPU process, under its
    rank's range, in the merged report."""
    pytest.importorskip("torch")
    nvtxr = artifact("NVTXR_COMMAND")
    cupti = artifact("FAKE_CUPTI")
    (tmp_path / "train.py").write_text(textwrap.dedent(RANK_PROGRAM))
    env = {k: v for k, v in os.environ.items() if k not in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")}
    env["NVTXR_CUPTI"] = cupti
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "--no-python", nvtxr, "record", "-q", "--keep", "rec.%q{RANK}", "-o", "run.%q{RANK}.pftrace",
         "--", sys.executable, "train.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in range(2):
        assert (tmp_path / f"run.{rank}.pftrace").stat().st_size > 0
    merged = tmp_path / "merged.json"
    report = subprocess.run(
        [nvtxr, "report", "-q", "rec.0", "rec.1", "-o", str(merged)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert report.returncode == 0, report.stdout + report.stderr
    events = json.loads(merged.read_text())["traceEvents"]
    process_names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    kernels = [e for e in events if e.get("cat") == "kernel" and e["ph"] == "X"]
    assert len(kernels) == 2, kernels
    for k in kernels:
        rank = int(k["name"].removeprefix("rank").removesuffix("()"))
        assert k["args"]["launched by"]["range"] == f"rank {rank} step", k
        gpu = process_names[k["pid"]]
        assert gpu.startswith("GPU 0") and f"(rank {rank} (" in gpu, gpu
