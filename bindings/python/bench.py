"""NVIDIA's `nvtx` against `nvtxr` in one run, with no tool and with a
do-nothing tool: `cargo xtask bench-python`
(which sets NVTXR_EVENT_LOG and NVIDIA_PYTHON_NVTX). Prints a Markdown table of
ns per operation (best of 5 runs of N operations each, in fresh interpreters)
and, where valgrind is installed, instructions per operation (callgrind: the
difference between loops of two lengths in one interpreter, less the empty
loop's own instructions, so that start-up and the loop cancel). A benchmark,
not a test: timings are noisy, instruction counts are not; compare ratios.
``--quick``: a short smoke run (2,000 operations, no instruction counts)."""

import os
import shutil
import subprocess
import sys
import tempfile

QUICK = "--quick" in sys.argv[1:]
N = 2_000 if QUICK else 200_000

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

# Loops of two lengths between calls of os.getppid(), before each of which
# callgrind dumps its counts (--dump-before=getppid).
COUNT = """
import os
{setup}
def run(n):
    for _ in range(n):
        {body}
run(1000)
{start}
os.getppid()
run({short})
os.getppid()
run({long})
os.getppid()
"""
SHORT, LONG = 20_000, 120_000

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
    out = subprocess.run(
        [sys.executable, "-c", code], env=environment(package, tool), capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return float(out.stdout)


def environment(package, tool):
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("NVTX_INJECTION64_PATH", None)
    if package == "nvtx":
        env["PYTHONPATH"] = os.environ["NVIDIA_PYTHON_NVTX"]
    if tool:
        env["NVTX_INJECTION64_PATH"] = os.environ["NVTXR_EVENT_LOG"]
        env["NVTXR_EVENT_LOG_MODE"] = "null"
    return env


def instructions(package, setup, body, tool, start=""):
    """Instructions per iteration of `body` (the loop's own included)."""
    code = COUNT.format(setup=SETUP[package] + setup, body=body, start=start, short=SHORT, long=LONG)
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "-q", "--dump-before=getppid",
             f"--callgrind-out-file={work}/cg", sys.executable, "-c", code],
            env=environment(package, tool), capture_output=True, text=True,
        )
        if out.returncode != 0:
            raise SystemExit(out.stderr)

        def total(part):
            for line in open(f"{work}/cg.{part}"):
                if line.startswith(("summary:", "totals:")):
                    return int(line.split()[1])
            raise SystemExit(f"no total in callgrind part {part}")

        # Parts: 1 start-up, 2 the short loop, 3 the long one.
        return (total(3) - total(2)) / (LONG - SHORT)


def counted(package, setup, body, tool, loop):
    return instructions(package, setup, body, tool) - loop


def main():
    count = not QUICK and shutil.which("valgrind") is not None
    print("| operation | tool | NVIDIA nvtx (ns) | nvtxr (ns) | nvtxr / nvtx | NVIDIA nvtx (instructions) | nvtxr (instructions) | nvtxr / nvtx (instructions) |")
    print("|---|---|---|---|---|---|---|---|")
    for tool in (False, True):
        label = "do-nothing" if tool else "none"
        loop = instructions("nvtxr", "", "pass", tool) if count else 0
        for name, setup, body in CASES:
            times = {
                p: measure(p, TIMER.format(setup=SETUP[p] + setup, body=body, n=N), tool)
                for p in ("nvtx", "nvtxr")
            }
            cells = "| - | - | - |"
            if count:
                ir = {p: counted(p, setup, body, tool, loop) for p in ("nvtx", "nvtxr")}
                cells = f"| {ir['nvtx']:.0f} | {ir['nvtxr']:.0f} | {ir['nvtxr'] / ir['nvtx']:.2f} |"
            print(
                f"| {name} | {label} | {times['nvtx']:.0f} | {times['nvtxr']:.0f} "
                f"| {times['nvtxr'] / times['nvtx']:.2f} {cells}"
            )
        name, setup, body = BASELINE
        base = measure("nvtxr", TIMER.format(setup=SETUP["nvtxr"] + setup, body=body, n=N), tool)
        base_ir = f"{counted('nvtxr', setup, body, tool, loop):.0f}" if count else "-"
        print(f"| {name} | {label} | | {base:.0f} | | | {base_ir} | |")
    times, ir = {}, {}
    for p, (start, stop) in PROFILERS.items():
        code = PROFILE.format(setup=SETUP[p], n=N, start=start, stop=stop)
        times[p] = measure(p, code, True)
        if count:
            # Per profiled call: the profiled loop's instructions less the plain one's.
            leaf = "def leaf():\n    pass\n"
            plain = instructions(p, leaf, "leaf()", True)
            ir[p] = instructions(p, leaf, "leaf()", True, start=start) - plain
    cells = f"| {ir['nvtx']:.0f} | {ir['nvtxr']:.0f} | {ir['nvtxr'] / ir['nvtx']:.2f} |" if count else "| - | - | - |"
    print(
        f"| profiler, per Python call | do-nothing | {times['nvtx']:.0f} | {times['nvtxr']:.0f} "
        f"| {times['nvtxr'] / times['nvtx']:.2f} {cells}"
    )


if __name__ == "__main__":
    main()
