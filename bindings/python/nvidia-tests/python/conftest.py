"""nvtxr's glue for NVIDIA's Python tests (not NVIDIA's file).

NVIDIA's tests say `import nvtx` (and `nvtx.writer`); here that is nvtxr
(and `nvtxr.writer`). NVIDIA's conftest and tests also import five private
names of NVIDIA's package; each is mapped to what it stands for:
- `nvtx.colors._NVTX_COLORS`: NVIDIA's own color table, loaded from
  NVIDIA's installed package ($NVIDIA_PYTHON_NVTX), so nvtxr's colors are
  checked against NVIDIA's values;
- `nvtx.nvtx.PayloadTypeAlias`: a type alias used in annotations only;
- `nvtx.nvtx.dummy_domain` and `nvtx._lib.counters.dummy_counter`: what
  NVIDIA's package returns as a domain and a counter with no tool; the tests
  compare them only when run without the injection, and they run with it
  (`--enable-injection`);
- `nvtx.nvtx.NVTX_DTYPE_METADATA_KEY_NAME`: the key under which NVTX
  metadata sits on a NumPy dtype, the same in both packages.
"""

import importlib.util
import os
import sys
import types
from pathlib import Path
from typing import Union

import nvtxr
import nvtxr.writer


def _module(name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def _nvidias_colors():
    path = Path(os.environ["NVIDIA_PYTHON_NVTX"]) / "nvtx" / "colors.py"
    spec = importlib.util.spec_from_file_location("_nvidia_nvtx_colors", path)
    colors = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(colors)
    return colors


sys.modules["nvtx"] = nvtxr
sys.modules["nvtx.writer"] = nvtxr.writer
_module("nvtx.colors", _NVTX_COLORS=_nvidias_colors()._NVTX_COLORS)
_module(
    "nvtx.nvtx",
    PayloadTypeAlias=Union[int, float, list, tuple, range, bytes, "np.ndarray"],
    dummy_domain=object(),
    NVTX_DTYPE_METADATA_KEY_NAME=nvtxr._payloads.METADATA_KEY,
)
_module("nvtx._lib")
_module("nvtx._lib.counters", dummy_counter=object())
