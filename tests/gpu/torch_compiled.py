"""GPU check: nvtxr's torch.cuda.nvtx-style ranges inside
torch.compile(fullgraph=True) on CUDA (Inductor's Triton kernels). Run by
tests/gpu/check_compile.sh under Nsight Compute and `nvtxr record`."""

import sys

import nvtxr.torch as nvtx
import torch
from nvtxr import _compile


def step(x, w):
    nvtx.range_push("compiled")
    y = torch.relu(x @ w) + 1.0
    nvtx.range_pop()
    return y


x = torch.randn(1024, 1024, device="cuda")
w = torch.randn(1024, 1024, device="cuda")
explained = torch._dynamo.explain(step)(x, w)
f = torch.compile(step, fullgraph=True)
for _ in range(3):
    out = f(x, w)
torch.cuda.synchronize()
expected = torch.relu(x @ w) + 1.0
print("graph breaks", explained.graph_break_count, file=sys.stderr)
print("compile-safe", _compile.reason is None, _compile.reason, file=sys.stderr)
print("matches eager", bool(torch.allclose(out, expected, atol=1e-3)), file=sys.stderr)
print("torch", torch.__version__, file=sys.stderr)
