"""Per-rank Parquet and the recipes over it: four ranks, as torchrun starts
them, each under `nvtxr record --parquet DIR`; every recipe compared with
what `nvtxr report` says of the same recordings (`--per-rank`, the merged
summary), on DuckDB and on a Dask cluster on the loopback address; the
Parquet read back with pyarrow and DuckDB against the SQLite export; and
bad directories refused naming the file."""

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import warnings

import pytest

from conftest import artifact, copy_part

duckdb = pytest.importorskip("duckdb")
pandas = pytest.importorskip("pandas")

RANKS = 4
STEPS = 5

PROGRAM = """
import os, time
import nvtxr

rank = int(os.environ["RANK"])
for step in range(5):
    with nvtxr.annotate("step"):
        with nvtxr.annotate("forward"):
            # Rank 2 is slow at step 3.
            time.sleep(0.002 + (0.03 if (rank, step) == (2, 3) else 0.001 * rank))
        nvtxr.mark("sync")
if os.environ.get("DIE"):
    nvtxr.push_range("dying")
    os._exit(0)
"""


def record_ranks(tmp_path, parquet, *, die=None):
    """Records the program as RANKS ranks (each its own `nvtxr record`),
    each writing its part of `parquet`; returns the kept recordings."""
    nvtxr = artifact("NVTXR_COMMAND")
    script = tmp_path / "rank.py"
    script.write_text(textwrap.dedent(PROGRAM))
    runs = []
    for rank in range(RANKS):
        env = {k: v for k, v in os.environ.items() if k != "NVTX_INJECTION64_PATH"}
        env.update(RANK=str(rank), WORLD_SIZE=str(RANKS))
        if rank == die:
            env["DIE"] = "1"
        runs.append(subprocess.Popen(
            [nvtxr, "record", "-q", "--keep", str(tmp_path / f"rec.{rank}"), "-o", str(tmp_path / f"t.{rank}.pftrace"),
             "--parquet", str(parquet), "--", sys.executable, str(script)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for run in runs:
        out, _ = run.communicate(timeout=300)
        assert run.returncode == 0, out
    return [tmp_path / f"rec.{rank}" for rank in range(RANKS)]


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("job")
    parquet = tmp / "pq"  # as the README names it
    return parquet, record_ranks(tmp, parquet)


def report(*args):
    process = subprocess.run([artifact("NVTXR_COMMAND"), "report", *map(str, args)],
                             capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stdout + process.stderr
    return process.stdout


def test_each_rank_writes_its_part_of_every_table(job):
    parquet, _ = job
    tables = sorted(os.listdir(parquet))
    assert "NVTX_EVENTS" in tables and "CUPTI_ACTIVITY_KIND_KERNEL" in tables, tables
    for table in tables:
        assert sorted(os.listdir(parquet / table)) == [f"rank-{r:05}.parquet" for r in range(RANKS)], table


def test_parquet_reads_back_as_the_sqlite_export(job, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    parquet, recordings = job
    for rank, rec in enumerate(recordings):
        db = tmp_path / f"{rank}.sqlite"
        report("-q", "-o", tmp_path / "t.pftrace", "--sqlite", db, rec)
        with sqlite3.connect(db) as sql:
            # (StringIds differ: SQLite's hold the messages too, Parquet's are in `text`.)
            for table in ["NVTX_EVENTS", "ThreadNames", "PROCESSES", "NVTXR_PROCESSES", "ENUM_NSYS_EVENT_TYPE"]:
                part = parquet / table / f"rank-{rank:05}.parquet"
                read = pq.read_table(part)
                columns = [c[1] for c in sql.execute(f"PRAGMA table_info({table})")]
                added = [c for c in ["rank", "host"] if c not in columns]
                assert read.column_names == columns + added, table
                rows = sql.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                assert read.num_rows == rows, table
                assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{part}')").fetchall() == [(rows,)]
                assert set(read.column("rank").to_pylist()) <= {rank, None}, table
        # Messages: SQLite's through StringIds, Parquet's in `text`.
        with sqlite3.connect(db) as sql:
            names = sorted(r[0] for r in sql.execute(
                "SELECT coalesce(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId"))
        part = parquet / "NVTX_EVENTS" / f"rank-{rank:05}.parquet"
        assert sorted(pq.read_table(part).column("text").to_pylist()) == names


def per_rank_table(recordings, tmp_path):
    """`nvtxr report --per-rank step`'s durations: {rank: [ns per instance]}."""
    out = report("-q", "-o", tmp_path / "t.pftrace", "--per-rank", "step", *recordings)
    lines = [line for line in out.splitlines() if line.strip()]
    header = next(i for i, line in enumerate(lines) if line.startswith("Instance"))
    durations = {rank: [] for rank in range(RANKS)}
    for line in lines[header + 2:header + 2 + STEPS]:
        cells = line.split()
        for rank in range(RANKS):
            durations[rank].append(int(cells[1 + rank]))
    return durations


def merged_summary(recordings, tmp_path):
    out = tmp_path / "summary.json"
    report("-q", "-o", tmp_path / "t.pftrace", "--exact-names", "--json", out, *recordings)
    return {row["range"]: row for row in json.loads(out.read_text())}


def test_pace_and_stragglers_agree_with_the_per_rank_report(job, tmp_path):
    parquet, recordings = job
    from nvtxr import recipes

    pace = recipes.pace(parquet, "step", engine="duckdb")
    assert len(pace) == RANKS * STEPS
    expected = per_rank_table(recordings, tmp_path)
    for rank in range(RANKS):
        mine = pace[pace["rank"] == rank].sort_values("iteration")
        assert list(mine["iteration"]) == list(range(1, STEPS + 1))
        assert list(mine["duration"]) == expected[rank], rank
    slow = recipes.stragglers(parquet, "step", engine="duckdb")
    assert list(slow["iteration"]) == list(range(1, STEPS + 1))
    assert list(slow["ranks"]) == [RANKS] * STEPS
    step4 = slow[slow["iteration"] == 4].iloc[0]
    assert step4["slowest_rank"] == 2
    durations = [expected[r][3] for r in range(RANKS)]
    median = sorted(durations)[1:3]
    assert step4["slowest"] == max(durations)
    assert step4["lag"] == pytest.approx(max(durations) - sum(median) / 2)


def test_summary_agrees_with_the_merged_summary(job, tmp_path):
    parquet, recordings = job
    from nvtxr import recipes

    table = recipes.summary(parquet, engine="duckdb")
    merged = merged_summary(recordings, tmp_path)
    assert sorted(table["range"]) == sorted(name.lstrip(":") for name in merged), merged.keys()
    for row in table.itertuples():
        expected = merged[f":{row.range}"]
        assert row.instances == expected["instances"], row.range
        assert row.total == expected["total_ns"], row.range
        assert row.ranks == RANKS
        assert row.min <= row.mean <= row.max
    assert table[table["range"] == "step"]["max_rank"].iloc[0] == 2


def test_dask_on_a_local_cluster_gives_the_same_answers(job):
    distributed = pytest.importorskip("distributed")
    parquet, _ = job
    from nvtxr import recipes

    local = {
        "pace": recipes.pace(parquet, "step", engine="duckdb"),
        "stragglers": recipes.stragglers(parquet, "step", engine="duckdb"),
        "summary": recipes.summary(parquet, engine="duckdb"),
    }
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster, \
            distributed.Client(cluster):
        # The same calls: a client is active, so they run on the cluster.
        on_dask = {
            "pace": recipes.pace(parquet, "step"),
            "stragglers": recipes.stragglers(parquet, "step"),
            "summary": recipes.summary(parquet),
        }
    for name, frame in local.items():
        pandas.testing.assert_frame_equal(on_dask[name], frame, check_dtype=False, obj=name)


def test_gpu_projection_is_empty_without_gpu_work(job):
    parquet, _ = job
    from nvtxr import recipes

    assert len(recipes.gpu_projection(parquet, engine="duckdb")) == 0


def test_ties_pick_the_highest_rank_in_every_column(job, tmp_path):
    parquet, _ = job
    from nvtxr import recipes

    # Every rank's steps last exactly 1 us: all ranks tie at every step.
    tied = tmp_path / "tied"
    for part in os.listdir(parquet / "NVTX_EVENTS"):
        copy_part(parquet, tied, part, query="SELECT * FROM read_parquet('{src}')")
        events = tied / "NVTX_EVENTS" / part
        duckdb.sql(f"""COPY (SELECT * REPLACE (CASE WHEN text = 'step' THEN start + 1000 ELSE "end" END AS "end")
                   FROM read_parquet('{parquet / 'NVTX_EVENTS' / part}')) TO '{events}' (FORMAT parquet)""")
    hosts = duckdb.sql(f"SELECT DISTINCT host FROM read_parquet('{tied}/NVTX_EVENTS/*.parquet') "
                       f"WHERE rank = {RANKS - 1}").fetchall()
    table = recipes.stragglers(tied, "step", engine="duckdb")
    assert list(table["slowest_rank"]) == [RANKS - 1] * STEPS
    assert list(table["slowest_host"]) == [hosts[0][0]] * STEPS
    assert list(table["lag"]) == [0] * STEPS
    summary = recipes.summary(tied, engine="duckdb")
    assert summary[summary["range"] == "step"]["max_rank"].iloc[0] == RANKS - 1


def test_bad_directories_are_refused_naming_the_file(job, tmp_path):
    parquet, _ = job
    from nvtxr import recipes

    part = "rank-00000.parquet"
    with pytest.raises(recipes.RecipeError, match="NVTX_EVENTS: missing"):
        recipes.summary(tmp_path / "nowhere")
    # A table without this part's file.
    missing = tmp_path / "missing"
    copy_part(parquet, missing, part)
    os.remove(missing / "NVTXR_PROCESSES" / part)
    with pytest.raises(recipes.RecipeError, match=f"NVTXR_PROCESSES/{part}: missing"):
        recipes.summary(missing)
    # A foreign file in its place.
    (missing / "NVTXR_PROCESSES" / part).write_text("rank,host\n0,a\n")
    with pytest.raises(recipes.RecipeError, match=f"NVTXR_PROCESSES/{part}: not a Parquet file"):
        recipes.summary(missing)
    # A rank written with other columns (another version).
    older = tmp_path / "older"
    copy_part(parquet, older, part)
    events = older / "NVTX_EVENTS" / part
    duckdb.sql(f"COPY (SELECT * EXCLUDE (host) FROM read_parquet('{parquet / 'NVTX_EVENTS' / part}')) "
               f"TO '{events}' (FORMAT parquet)")
    with pytest.raises(recipes.RecipeError, match=f"NVTX_EVENTS/{part}: no column host"):
        recipes.pace(older, "step")
    duckdb.sql(f"COPY (SELECT * REPLACE (start::INTEGER AS start) FROM read_parquet('{parquet / 'NVTX_EVENTS' / part}')) "
               f"TO '{events}' (FORMAT parquet)")
    with pytest.raises(recipes.RecipeError, match=f"NVTX_EVENTS/{part}: column start is INTEGER"):
        recipes.pace(older, "step")


def test_an_empty_rank_and_one_that_died_are_listed_as_partial(tmp_path):
    from nvtxr import recipes

    parquet = tmp_path / "it's parquet"  # a quote in the path, too
    record_ranks(tmp_path, parquet, die=1)
    # Rank 3's files hold no rows (it wrote its tables, then nothing was kept).
    pq = pytest.importorskip("pyarrow.parquet")
    for table in os.listdir(parquet):
        path = parquet / table / "rank-00003.parquet"
        pq.write_table(pq.read_table(path).slice(0, 0), path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pace = recipes.pace(parquet, "step", engine="duckdb")
    partial = pace.attrs["partial"]
    assert [(p["part"], p["rank"]) for p in partial] == [("rank-00001.parquet", 1), ("rank-00003.parquet", None)]
    assert "ranges open" in partial[0]["why"] and partial[1]["why"] == "no NVTX events"
    assert len([w for w in caught if issubclass(w.category, recipes.PartialRankWarning)]) == 2
    assert sorted(set(pace["rank"])) == [0, 1, 2]


def test_the_readme_recipes_run_as_shown(job, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from test_readme import python_blocks

    parquet, _ = job
    [code] = python_blocks(recipes=True)
    monkeypatch.chdir(parquet.parent)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", scheduler_port=0,
                                  dashboard_address=None) as cluster:
        exec(code.replace("tcp://127.0.0.1:8786", cluster.scheduler_address), {})


def test_the_command_line_recipes_agree_with_python(job, tmp_path):
    import io

    parquet, recordings = job
    from nvtxr import recipes

    def cli(recipe):
        # Without -q: the summary goes to stderr, stdout is the CSV alone.
        out = report("-o", tmp_path / "t.pftrace", "--recipe", recipe, "step", *recordings)
        return pandas.read_csv(io.StringIO(out))

    key = ["rank", "iteration", "duration"]
    pace = recipes.pace(parquet, "step", engine="duckdb")
    assert cli("pace")[key].values.tolist() == pace[key].values.tolist()
    columns = ["iteration", "ranks", "slowest_rank", "slowest", "median", "lag"]
    slow = recipes.stragglers(parquet, "step", engine="duckdb")
    assert cli("stragglers")[columns].values.tolist() == slow[columns].values.tolist()
    process = subprocess.run([artifact("NVTXR_COMMAND"), "report", "-q", "-o", str(tmp_path / "t.pftrace"),
                              "--recipe", "nonesuch", "step", str(recordings[0])],
                             capture_output=True, text=True, timeout=60)
    assert process.returncode != 0 and "--recipe nonesuch: unknown (use pace or stragglers" in process.stderr
    process = subprocess.run([artifact("NVTXR_COMMAND"), "report", "-q", "-o", "/dev/stdout", "--format", "json",
                              "--recipe", "pace", "step", str(recordings[0])],
                             capture_output=True, text=True, timeout=60)
    assert process.returncode != 0 and "where an output already goes" in process.stderr, process.stderr
