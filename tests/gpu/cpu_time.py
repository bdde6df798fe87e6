"""Runs a Python script (argv[1], with the rest as its arguments) and, at its
exit, prints the CPU time its process used, every thread's (CUPTI's own
included), as `RESULT cpu_s=...`: a cost the GPU cannot hide, where the step
time of a loop the GPU bounds can. python3 cpu_time.py SCRIPT ARGS..."""
import atexit
import resource
import runpy
import sys


def said():
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(f"RESULT cpu_s={r.ru_utime + r.ru_stime:.2f}", flush=True)


atexit.register(said)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
