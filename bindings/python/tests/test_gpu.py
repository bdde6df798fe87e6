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

from conftest import artifact, copy_part

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


KERNELS_PROGRAM = """
import ctypes
import os
import nvtxr

rank = int(os.environ["RANK"])
fake = ctypes.CDLL(os.environ["FAKE_CUPTI"], mode=ctypes.RTLD_GLOBAL)
fake.fake_launch_ns.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint64]
ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
a, b = b"_Z1av", b"_Z1bv"  # live until CUPTI's buffers are read, at exit
for step, ns in enumerate([[1000, 3000], [6000, 10000]][rank]):
    with nvtxr.annotate("step"):
        fake.fake_launch_ns(2 * step + 1, a, 7, ns)
        with nvtxr.annotate("inner"):
            fake.fake_launch_ns(2 * step + 2, b, 7, [500, 700][step])
"""


def test_kernel_recipes_add_up_across_ranks_and_keep_equal_pids_of_two_hosts_apart(tmp_path):
    """`gpu_kernels` and `kernels_by_range` over two ranks' Parquet parts
    whose kernels' means differ: the figures of one pass over every kernel.
    Then a third part, rank 0's files as another host would have written
    them (same pid, correlation ids and string ids): each recipe counts its
    work once, as DuckDB reads all three parts in one query."""
    pytest.importorskip("duckdb")
    from nvtxr import recipes

    nvtxr = artifact("NVTXR_COMMAND")
    (tmp_path / "train.py").write_text(textwrap.dedent(KERNELS_PROGRAM))
    env = {k: v for k, v in os.environ.items() if k not in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")}
    env["NVTXR_CUPTI"] = artifact("FAKE_CUPTI")
    parquet = tmp_path / "pq"
    for rank in range(2):
        run = subprocess.run(
            [nvtxr, "record", "-q", "-o", str(tmp_path / f"r{rank}.json"), "--parquet", str(parquet),
             "--", sys.executable, "train.py"],
            cwd=tmp_path, env={**env, "RANK": str(rank), "WORLD_SIZE": "2"},
            capture_output=True, text=True, timeout=300,
        )
        assert run.returncode == 0, run.stdout + run.stderr

    def sample(values):
        mean = sum(values) / len(values)
        return len(values), sum(values), mean, min(values), max(values), \
            (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5

    a, b = [1000, 3000, 6000, 10000], [500, 700, 500, 700]

    def figures(table, *key):
        rows = {}
        for r in table.itertuples():
            rows[tuple(getattr(r, k) for k in key)] = (r.ranks, (r.instances, r.total, r.avg, r.min, r.max, r.stddev))
        return rows

    kernels = figures(recipes.gpu_kernels(parquet, engine="duckdb"), "kernel")
    assert kernels.keys() == {("a()",), ("b()",)}, kernels
    assert kernels[("a()",)][0] == 2
    assert kernels[("a()",)][1] == pytest.approx(sample(a))
    assert kernels[("b()",)][1] == pytest.approx(sample(b))
    by_range = figures(recipes.kernels_by_range(parquet, engine="duckdb"), "range", "kernel")
    assert by_range.keys() == {("step", "a()"), ("inner", "b()")}, by_range
    assert by_range[("step", "a()")] == (2, pytest.approx(sample(a)))
    assert by_range[("inner", "b()")] == (2, pytest.approx(sample(b)))
    projection = {r.range: (r.instances, r.kernels) for r in recipes.gpu_projection(parquet, engine="duckdb").itertuples()}
    assert projection == {"step": (4, 8), "inner": (4, 4)}, projection

    # Rank 0's part again, as written on another host.
    copy_part(parquet, parquet, "rank-00000.parquet", name="rank-00000-elsewhere.parquet",
              query="SELECT * REPLACE ('elsewhere' AS host) FROM read_parquet('{src}')")
    kernels = figures(recipes.gpu_kernels(parquet, engine="duckdb"), "kernel")
    assert kernels[("a()",)] == (3, pytest.approx(sample(a + a[:2])))
    by_range = figures(recipes.kernels_by_range(parquet, engine="duckdb"), "range", "kernel")
    assert by_range[("inner", "b()")] == (3, pytest.approx(sample(b + b[:2])))
    projection = {r.range: (r.instances, r.kernels) for r in recipes.gpu_projection(parquet, engine="duckdb").itertuples()}
    assert projection == {"step": (6, 12), "inner": (6, 6)}, projection

    # Dask, one task per part, gives the same answers.
    distributed = pytest.importorskip("distributed")
    import pandas

    calls = [recipes.gpu_projection, recipes.gpu_kernels, recipes.kernels_by_range]
    local = [call(parquet, engine="duckdb") for call in calls]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster, \
            distributed.Client(cluster):
        on_dask = [call(parquet) for call in calls]
    for call, here, there in zip(calls, local, on_dask):
        pandas.testing.assert_frame_equal(there, here, check_dtype=False, obj=call.__name__)
