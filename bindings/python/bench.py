"""NVIDIA's `nvtx` against `nvtxr` in one run, with no tool and with a
do-nothing tool: `cargo xtask bench-python`
(which sets NVTXR_EVENT_LOG and NVIDIA_PYTHON_NVTX). Prints a Markdown table of
ns per operation (best of 5 runs of N operations each, in fresh interpreters).
A benchmark, not a test: timings are noisy; compare the ratios."""

import os
import subprocess
import sys

N = 200_000

SETUP = {
    "nvtx": "import nvtx\n",
    "nvtxr": "import nvtxr as nvtx\nnvtx.name_threads(False)\n",
}

CASES = [
    ("mark", "", "nvtx.mark('m')"),
    ("push_range + pop_range", "", "nvtx.push_range('r'); nvtx.pop_range()"),
    ("with annotate(...)", "", "with nvtx.annotate('a'):\n            pass"),
    ("@annotate function call", "@nvtx.annotate('f')\ndef f():\n    pass\n", "f()"),
    (
        "domain push+pop, registered string",
        "d = nvtx.get_domain('bench')\na = d.get_event_attributes(message='s')\n",
        "d.push_range(a); d.pop_range()",
    ),
]

BASELINE = (
    "empty with of a pure-Python context manager",
    "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, *e):\n        return False\n",
    "with CM():\n            pass",
)

TIMER = """
import time
{setup}
def run():
    for _ in range({n}):
        {body}
run()
best = float("inf")
for _ in range(5):
    t0 = time.perf_counter_ns()
    run()
    best = min(best, (time.perf_counter_ns() - t0) / {n})
print(best)
"""

PROFILE = """
import sys, time
{setup}
def leaf():
    pass
def work():
    for _ in range({n}):
        leaf()
work()
t0 = time.perf_counter_ns()
work()
plain = (time.perf_counter_ns() - t0) / {n}
{start}
t0 = time.perf_counter_ns()
work()
profiled = (time.perf_counter_ns() - t0) / {n}
{stop}
print(profiled - plain)
"""

PROFILERS = {
    "nvtx": ("p = nvtx.Profile()\np.enable()", "p.disable()"),
    "nvtxr": ("import nvtxr.profile\nnvtxr.profile.start()", "nvtxr.profile.stop()"),
}


def measure(package, code, tool):
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    if package == "nvtx":
        env["PYTHONPATH"] = os.environ["NVIDIA_PYTHON_NVTX"]
    if tool:
        env["NVTX_INJECTION64_PATH"] = os.environ["NVTXR_EVENT_LOG"]
        env["NVTXR_EVENT_LOG_MODE"] = "null"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return float(out.stdout)


def main():
    print("| operation | tool | NVIDIA nvtx (ns) | nvtxr (ns) | nvtxr / nvtx |")
    print("|---|---|---|---|---|")
    for tool in (False, True):
        label = "do-nothing" if tool else "none"
        for name, setup, body in CASES:
            times = {
                p: measure(p, TIMER.format(setup=SETUP[p] + setup, body=body, n=N), tool)
                for p in ("nvtx", "nvtxr")
            }
            print(
                f"| {name} | {label} | {times['nvtx']:.0f} | {times['nvtxr']:.0f} "
                f"| {times['nvtxr'] / times['nvtx']:.2f} |"
            )
        name, setup, body = BASELINE
        base = measure("nvtxr", TIMER.format(setup=SETUP["nvtxr"] + setup, body=body, n=N), tool)
        print(f"| {name} | {label} | | {base:.0f} | |")
    times = {}
    for p, (start, stop) in PROFILERS.items():
        code = PROFILE.format(setup=SETUP[p], n=N, start=start, stop=stop)
        times[p] = measure(p, code, True)
    print(
        f"| profiler, per Python call | do-nothing | {times['nvtx']:.0f} | {times['nvtxr']:.0f} "
        f"| {times['nvtxr'] / times['nvtx']:.2f} |"
    )


if __name__ == "__main__":
    main()
