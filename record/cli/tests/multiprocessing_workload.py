"""Python worker processes ending the ways multiprocessing ends them, for
`nvtxr record` tests: `multiprocessing_workload.py CONTEXT PATTERN`.

CONTEXT is fork, forkserver or spawn; PATTERN is `with` (a Pool as a context
manager: its workers are terminated by SIGTERM on exit), `close` (close() and
join(): workers end with os._exit) or `bare` (os.fork() and os._exit(),
CONTEXT ignored). Each pattern runs 20 times; every task is one range named
"task N", N from 0 to 79 (`bare`: 0 to 19).
"""
import multiprocessing
import os
import sys

import nvtx

ROUNDS = 20


def task(n):
    with nvtx.annotate(f"task {n}", domain="workers"):
        return n


def main():
    context, pattern = sys.argv[1], sys.argv[2]
    with nvtx.annotate("main"):
        for r in range(ROUNDS):
            if pattern == "bare":
                pid = os.fork()
                if pid == 0:
                    task(r)
                    os._exit(0)
                os.waitpid(pid, 0)
                continue
            numbers = list(range(4 * r, 4 * r + 4))
            ctx = multiprocessing.get_context(context)
            if pattern == "with":
                with ctx.Pool(2) as pool:
                    assert pool.map(task, numbers, chunksize=1) == numbers
            else:
                pool = ctx.Pool(2)
                assert pool.map(task, numbers, chunksize=1) == numbers
                pool.close()
                pool.join()
    print("workload done")


if __name__ == "__main__":
    main()
