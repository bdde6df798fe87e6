"""GPU check: PyTorch kernels inside nvtxr's Python ranges (and, as the
reference, inside torch.cuda.nvtx's). Run by tests/gpu/check.sh under the
wheel's `nvtxr record`."""

import sys

import torch

import nvtxr

x = torch.randn(512, 512, device="cuda")
torch.cuda.synchronize()

with nvtxr.annotate("matmul", domain="torch-check"):
    y = x @ x
    torch.cuda.synchronize()

with nvtxr.annotate("add"):
    z = y + 1.0
    torch.cuda.synchronize()

torch.cuda.nvtx.range_push("reference")
w = z * 2.0
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()

print("tool attached:", int(nvtxr.tool_attached()), file=sys.stderr)
