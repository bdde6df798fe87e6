"""A workload on NVIDIA's Python `nvtx` package, for `nvtxr record` tests."""
import time

import nvtx


@nvtx.annotate("decorated", color="green")
def decorated():
    time.sleep(0.001)


with nvtx.annotate("outer", color="blue", domain="python", payload=7):
    for i in range(3):
        with nvtx.annotate("inner", color="red", domain="python", category="loop", payload=i):
            decorated()
nvtx.mark("a mark", color="yellow", payload=2.5)
r = nvtx.start_range("cross", color="purple")
nvtx.end_range(r)
nvtx.push_range("pushed")
nvtx.pop_range()
print("python workload: done")
