"""The ranks benchmark's recipe runs (bench_ranks.rs): `python
bench_ranks.py DIR RECIPE` runs one recipe on DuckDB and prints its rows;
`python bench_ranks.py DIR dask` runs every recipe on a Dask LocalCluster of
2 workers and checks each answer equals DuckDB's. `nvtxr_recipes` is
nvtxr's recipes module (on PYTHONPATH)."""

import sys
import time

import nvtxr_recipes as recipes

CALLS = {
    "pace": lambda d, **kw: recipes.pace(d, "step", **kw),
    "stragglers": lambda d, **kw: recipes.stragglers(d, "step", **kw),
    "summary": lambda d, **kw: recipes.summary(d, **kw),
    "gpu_projection": lambda d, **kw: recipes.gpu_projection(d, **kw),
}


def main():
    directory, what = sys.argv[1], sys.argv[2]
    if what != "dask":
        print(len(CALLS[what](directory, engine="duckdb")))
    else:
        import pandas
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster, \
                Client(cluster):
            for name, call in CALLS.items():
                local = call(directory, engine="duckdb")
                started = time.perf_counter()
                on_dask = call(directory)
                seconds = time.perf_counter() - started
                pandas.testing.assert_frame_equal(on_dask, local, check_dtype=False, obj=name)
                print(name, f"{seconds:.1f}", "same")


# Dask's worker processes import this module: only the parent runs it.
if __name__ == "__main__":
    main()
