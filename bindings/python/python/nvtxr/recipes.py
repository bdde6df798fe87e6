"""Questions across ranks, answered where the data is: recipes over the
Parquet tables `nvtxr report --parquet DIR` (or `nvtxr record --parquet DIR`
on every rank) writes.

Each recipe takes the Parquet directory and returns a pandas DataFrame:

- :func:`pace`: each rank's duration of every instance of a named range, by
  iteration (the n-th instance on that rank, in start order);
- :func:`stragglers`: per iteration of a named range, the slowest rank and
  its lag behind the median rank;
- :func:`summary`: Nsight's ``nvtx_sum`` table across ranks: per range, the
  mean, min and max of each rank's total time;
- :func:`gpu_projection`: per range, the GPU work its launches caused, as
  Nsight's ``nvtx_gpu_proj_sum``;
- :func:`gpu_kernels`: per kernel, its time across ranks, as Nsight's
  ``cuda_gpu_kern_sum``;
- :func:`kernels_by_range`: per range and kernel, the kernels each range
  launched (the innermost range open around the launch), as Nsight's
  ``nvtx_kern_sum``.

Each runs on DuckDB on this machine, or, when a Dask client is active
(``distributed.Client(...)``) or ``engine="dask"`` is given, on the Dask
cluster: one task per part (a rank's files, read by DuckDB on the worker
that runs it), and the small per-rank results combined here. The call is the
same; so are the results.

Every part is checked first: a table missing for a part, a file that is not
one of nvtxr's tables or was written with other columns raises
:class:`RecipeError` naming the file. A rank that recorded nothing, or that
ended with ranges still open (it died mid-run) or dropped events, is listed
in the result's ``attrs["partial"]`` and in a :class:`PartialRankWarning`.

Needs ``duckdb`` and ``pandas`` (``pip install duckdb pandas``); Dask's
``distributed`` for a cluster.
"""

import os
import warnings

__all__ = ["pace", "stragglers", "summary", "gpu_projection", "gpu_kernels", "kernels_by_range",
           "RecipeError", "PartialRankWarning"]


class RecipeError(ValueError):
    """The Parquet directory cannot answer: a table missing, a foreign file,
    or columns another version wrote. The message names the file."""


class PartialRankWarning(UserWarning):
    """A rank's data is incomplete: it recorded nothing, dropped events, or
    ended with ranges open."""


# The columns each table must have, with DuckDB's types of them.
_COLUMNS = {
    "NVTX_EVENTS": {"start": "BIGINT", "end": "BIGINT", "eventType": "BIGINT", "text": "VARCHAR",
                    "globalTid": "BIGINT", "endGlobalTid": "BIGINT", "rank": "BIGINT", "host": "VARCHAR"},
    "NVTXR_PROCESSES": {"globalPid": "BIGINT", "rank": "BIGINT", "host": "VARCHAR",
                        "droppedEvents": "BIGINT", "openRanges": "BIGINT"},
    "CUPTI_ACTIVITY_KIND_RUNTIME": {"start": "BIGINT", "globalTid": "BIGINT", "correlationId": "BIGINT"},
    "CUPTI_ACTIVITY_KIND_KERNEL": {"start": "BIGINT", "end": "BIGINT", "correlationId": "BIGINT",
                                   "globalPid": "BIGINT", "demangledName": "BIGINT"},
    "CUPTI_ACTIVITY_KIND_MEMCPY": {"start": "BIGINT", "end": "BIGINT", "correlationId": "BIGINT",
                                   "globalPid": "BIGINT"},
    "CUPTI_ACTIVITY_KIND_MEMSET": {"start": "BIGINT", "end": "BIGINT", "correlationId": "BIGINT",
                                   "globalPid": "BIGINT"},
    "StringIds": {"id": "BIGINT", "value": "VARCHAR"},
}
_NVTX = ["NVTX_EVENTS", "NVTXR_PROCESSES"]
_GPU = _NVTX + ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
                "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"]
_KERNELS = _NVTX + ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "StringIds"]

# A process: its rank (NULL outside a parallel launcher), host and pid
# (with the recording's index above it in a merged report).
_PROCESS = "rank, host, (globalTid >> 24) & 16777215 AS pid"

# Per part, then across parts: each recipe is a query over one part's
# tables (views of the table's names) giving per-rank rows, and a query over
# the union of those rows (`partial`). Ranges: push/pop (59) and start/end (60).
# A view may hold many parts (DuckDB on one machine reads them all at once):
# its `part` column (the file's name) keeps them apart wherever rows are
# joined, since two hosts' processes may have the same pid (and ids and
# correlation ids), and each part numbers its strings anew.
_PACE_PART = f"""
SELECT {_PROCESS},
       row_number() OVER (PARTITION BY rank, host, globalTid >> 24 ORDER BY start, "end") AS iteration,
       start, "end", "end" - start AS duration
FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND text = $name
"""
_PACE = "SELECT * FROM partial ORDER BY iteration, rank NULLS LAST, host, pid"

# Ties are broken by the process (rank, then host and pid; a process with no
# rank last), the same for every column and whatever order the parts came
# in: DuckDB's arg_max alone picks any of the tied rows, and skips a NULL rank.
_STRAGGLERS = """
SELECT iteration,
       count(*) AS ranks,
       arg_max_null(rank, row(duration, rank, host, pid)) AS slowest_rank,
       arg_max_null(host, row(duration, rank, host, pid)) AS slowest_host,
       arg_max_null(pid, row(duration, rank, host, pid)) AS slowest_pid,
       max(duration) AS slowest,
       median(duration) AS median,
       max(duration) - median(duration) AS lag
FROM partial GROUP BY iteration ORDER BY iteration
"""

_SUMMARY_PART = f"""
SELECT {_PROCESS}, text AS range, count(*) AS instances, sum("end" - start)::BIGINT AS total
FROM NVTX_EVENTS WHERE eventType IN (59, 60)
GROUP BY ALL
"""
_SUMMARY = """
SELECT range, count(*) AS ranks, sum(instances)::BIGINT AS instances, sum(total)::BIGINT AS total,
       avg(total) AS mean, min(total) AS min, max(total) AS max,
       arg_max_null(rank, row(total, rank, host, pid)) AS max_rank
FROM partial GROUP BY range ORDER BY total DESC, range
"""

# The ranges a launch can be under: push/pop ranges, and start/end ranges
# that ended on the thread that started them.
_RANGES = """
ranges AS (
    SELECT part, rank, host, globalTid, text, start, "end"
    FROM NVTX_EVENTS
    WHERE eventType = 59 OR (eventType = 60 AND endGlobalTid = globalTid))"""
# Each launch (an API record) with the GPU work it caused (`work`: start,
# end, correlationId, globalPid and more), on the launching thread.
_LAUNCHED = """
launched AS (
    SELECT l.part, l.start AS launched, l.globalTid, w.* EXCLUDE (part, correlationId, globalPid)
    FROM CUPTI_ACTIVITY_KIND_RUNTIME l JOIN work w
      ON w.part = l.part AND w.correlationId = l.correlationId
     AND w.globalPid = (l.globalTid >> 24) << 24)"""
_IN_RANGE = """
  ON w.part = r.part AND w.globalTid = r.globalTid AND w.launched >= r.start AND w.launched <= r."end" """

_GPU_PART = f"""
WITH {_RANGES},
work AS (
    SELECT part, start, "end", correlationId, globalPid, 1 AS kernel FROM CUPTI_ACTIVITY_KIND_KERNEL
    UNION ALL SELECT part, start, "end", correlationId, globalPid, 0 FROM CUPTI_ACTIVITY_KIND_MEMCPY
    UNION ALL SELECT part, start, "end", correlationId, globalPid, 0 FROM CUPTI_ACTIVITY_KIND_MEMSET),
{_LAUNCHED}
SELECT r.part, {_PROCESS.replace('globalTid', 'r.globalTid')}, r.text AS range, r.start, r."end",
       min(w.start) AS gpu_start, max(w."end") AS gpu_end, sum(w.kernel)::BIGINT AS kernels,
       count(*) AS gpu_ops
FROM ranges r JOIN launched w {_IN_RANGE}
GROUP BY ALL
"""
_GPU_PROJECTION = """
SELECT range, count(*) AS instances, sum("end" - start)::BIGINT AS range_time,
       sum(gpu_end - gpu_start)::BIGINT AS projected_time, sum(kernels)::BIGINT AS kernels,
       sum(gpu_ops)::BIGINT AS gpu_ops
FROM partial GROUP BY range ORDER BY projected_time DESC, range
"""

# Kernels with their names (this part's strings), one row each (`kernel_row`).
_NAMED = """
work AS (
    SELECT k.part, row_number() OVER () AS kernel_row, k.correlationId, k.globalPid,
           k."end" - k.start AS duration, s.value AS kernel
    FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.part = k.part AND s.id = k.demangledName)"""
# Per process and group: the figures that add up across processes (count,
# total, min, max, and the sum of squared deviations from the mean for the
# standard deviation); the median does not, and is left out.
_FIGURES = """count(*) AS instances, sum(duration)::BIGINT AS total, avg(duration) AS mean,
       min(duration) AS min, max(duration) AS max, var_pop(duration) * count(*) AS m2"""
_GPU_KERNELS_PART = f"""
WITH {_NAMED}
SELECT part, (globalPid >> 24) & 16777215 AS pid, kernel, {_FIGURES}
FROM work GROUP BY ALL
"""
# Each launch's kernels under its innermost range: the latest to start of
# those open around it on its thread (of two starting together, the one
# ending first).
_KERNELS_BY_RANGE_PART = f"""
WITH {_RANGES}, {_NAMED}, {_LAUNCHED},
innermost AS (
    SELECT w.part, w.globalTid, w.kernel_row, any_value(w.kernel) AS kernel,
           any_value(w.duration) AS duration, arg_max(r.text, row(r.start, -r."end")) AS range
    FROM launched w JOIN ranges r {_IN_RANGE}
    GROUP BY w.part, w.globalTid, w.kernel_row)
SELECT part, (globalTid >> 24) & 16777215 AS pid, range, kernel, {_FIGURES}
FROM innermost GROUP BY ALL
"""


def _kernel_figures(groups):
    """The combining query of per-process kernel figures grouped by `groups`:
    the processes that ran each group, and its figures over all of them
    (the standard deviation a sample's, from the per-process means and
    squared deviations, as one pass over every kernel would give it; 0 for
    one instance, as the terminal summary has it)."""
    return f"""
WITH g AS (
    SELECT *, sum(total) OVER w / sum(instances) OVER w AS grand
    FROM partial WINDOW w AS (PARTITION BY {groups}))
SELECT {groups}, count(*) AS ranks, sum(instances)::BIGINT AS instances, sum(total)::BIGINT AS total,
       sum(total) / sum(instances) AS avg, min(min) AS min, max(max) AS max,
       CASE WHEN sum(instances) > 1
            THEN sqrt((sum(m2) + sum(instances * (mean - grand) ^ 2)) / (sum(instances) - 1))
            ELSE 0.0 END AS stddev
FROM g GROUP BY {groups} ORDER BY total DESC, {groups}
"""


def pace(parquet_dir, name, *, engine=None):
    """Each rank's duration (ns) of every instance of the range ``name`` (any
    domain, push/pop or start/end), by iteration: columns ``rank``, ``host``,
    ``pid``, ``iteration`` (from 1, in start order on that rank), ``start``,
    ``end``, ``duration``; by iteration, then rank."""
    return _run(parquet_dir, _NVTX, _PACE_PART, _PACE, {"name": name}, engine)


def stragglers(parquet_dir, name, *, engine=None):
    """Per iteration of the range ``name``: how many ranks ran it, the slowest
    rank (``slowest_rank``, ``slowest_host``, ``slowest_pid``; of equally
    slow ones the highest rank, a process with no rank before any), its
    duration (``slowest``), the ``median`` rank's and the slowest one's
    ``lag`` behind it (ns)."""
    return _run(parquet_dir, _NVTX, _PACE_PART, _STRAGGLERS, {"name": name}, engine)


def summary(parquet_dir, *, engine=None):
    """Nsight's ``nvtx_sum`` across ranks: per range name, the ``ranks`` that
    ran it, its ``instances`` and ``total`` time, and the ``mean``, ``min``
    and ``max`` of each rank's total (ns), with the rank of the max
    (``max_rank``; ties as in :func:`stragglers`); largest total first."""
    return _run(parquet_dir, _NVTX, _SUMMARY_PART, _SUMMARY, {}, engine)


def gpu_projection(parquet_dir, *, engine=None):
    """The ranges projected onto the GPU, as Nsight's ``nvtx_gpu_proj_sum``:
    per range name that launched GPU work, its ``instances``, ``range_time``,
    ``projected_time`` (each instance's first GPU start to its last GPU end,
    summed), ``kernels`` and ``gpu_ops`` (kernels, copies and sets), nested
    ranges' launches included; a start/end range holds the launches of the
    thread that started it, when it ended on that thread."""
    return _run(parquet_dir, _GPU, _GPU_PART, _GPU_PROJECTION, {}, engine)


def gpu_kernels(parquet_dir, *, engine=None):
    """Nsight's ``cuda_gpu_kern_sum`` across ranks: per kernel (its demangled
    name), the ``ranks`` (processes) that ran it, its ``instances``, ``total``
    time, ``avg``, ``min``, ``max`` and ``stddev`` (ns; a sample's standard
    deviation over every instance, 0 for one); largest total first. No
    median: it does not add up across ranks."""
    return _run(parquet_dir, _KERNELS, _GPU_KERNELS_PART, _kernel_figures("kernel"), {}, engine)


def kernels_by_range(parquet_dir, *, engine=None):
    """Nsight's ``nvtx_kern_sum`` across ranks: per range name and kernel, the
    kernels launched inside that range as the innermost one open on the
    launching thread (push/pop, or start/end ended on the thread that started
    it), with the figures of :func:`gpu_kernels`; largest total first.
    Kernels launched outside every range are left out."""
    return _run(parquet_dir, _KERNELS, _KERNELS_BY_RANGE_PART, _kernel_figures("range, kernel"), {},
                engine)


def _run(parquet_dir, tables, part_sql, combine_sql, parameters, engine):
    parts = _parts(parquet_dir, tables)
    engine = _engine(engine)
    if engine == "dask":
        from distributed import default_client

        client = default_client()
        futures = client.map(_part, [parquet_dir] * len(parts), parts,
                             tables=tables, sql=part_sql, parameters=parameters, pure=False)
        results = client.gather(futures)
    else:
        results = [_part(parquet_dir, parts, tables=tables, sql=part_sql, parameters=parameters)]
    frames = [frame for frame, _ in results]
    partial = [p for _, found in results for p in found]
    import pandas

    combined = pandas.concat(frames, ignore_index=True)
    with _connect() as db:
        db.register("partial", combined)
        result = db.execute(combine_sql).df()
    result.attrs["partial"] = partial
    for p in partial:
        warnings.warn(f"{p['part']}: rank {p['rank']} ({p['host']}:{p['pid']}): {p['why']}",
                      PartialRankWarning, stacklevel=3)
    return result


def _connect():
    import duckdb

    db = duckdb.connect()
    db.execute("SET enable_progress_bar = false")
    return db


def _engine(engine):
    if engine in ("duckdb", "dask"):
        return engine
    if engine is not None:
        raise ValueError(f"engine={engine!r}: use 'duckdb', 'dask' or None (Dask when a client is active)")
    try:
        from distributed import default_client

        default_client()
        return "dask"
    except (ImportError, ValueError):
        return "duckdb"


def _parts(parquet_dir, tables):
    """The parts (file names) of the directory, each checked: every table
    it needs has a file for it with the columns the recipes read."""
    import duckdb

    events = os.path.join(parquet_dir, "NVTX_EVENTS")
    if not os.path.isdir(events):
        raise RecipeError(f"{events}: missing (not a directory of nvtxr's Parquet tables: "
                          f"write one with `nvtxr report --parquet DIR`)")
    parts = sorted(f for f in os.listdir(events) if f.endswith(".parquet") and not f.startswith("."))
    if not parts:
        raise RecipeError(f"{events}: no .parquet file")
    with _connect() as db:
        for part in parts:
            for table in tables:
                path = os.path.join(parquet_dir, table, part)
                if not os.path.isfile(path):
                    raise RecipeError(f"{path}: missing (every table has a file per part)")
                try:
                    found = dict(db.execute("SELECT column_name, column_type FROM "
                                            "(DESCRIBE SELECT * FROM read_parquet($path))",
                                            {"path": path}).fetchall())
                except duckdb.Error as e:
                    raise RecipeError(f"{path}: not a Parquet file ({e})") from None
                for column, kind in _COLUMNS[table].items():
                    if column not in found:
                        raise RecipeError(f"{path}: no column {column} (not nvtxr's {table}, "
                                          f"or written by another version)")
                    if found[column] != kind:
                        raise RecipeError(f"{path}: column {column} is {found[column]}, not {kind} "
                                          f"(written by another version?)")
    return parts


def _quoted(path):
    """`path` as an SQL string literal (a view's definition takes no parameters)."""
    return "'" + str(path).replace("'", "''") + "'"


def _part(parquet_dir, parts, *, tables, sql, parameters):
    """Runs a recipe's per-part query on some parts (a list, or one name):
    returns its rows and the partial ranks among them."""
    if isinstance(parts, str):
        parts = [parts]
    with _connect() as db:
        for table in tables:
            files = ", ".join(_quoted(os.path.join(parquet_dir, table, part)) for part in parts)
            db.execute(f'CREATE VIEW "{table}" AS SELECT * EXCLUDE (filename), '
                       f'parse_filename(filename, true) AS part '
                       f'FROM read_parquet([{files}], filename = true)')
        rows = db.execute(sql, parameters).df()
        partial = []
        for part in parts:
            path = os.path.join(parquet_dir, "NVTX_EVENTS", part)
            events = db.execute("SELECT count(*) FROM read_parquet($p)", {"p": path}).fetchone()[0]
            processes = db.execute(
                "SELECT rank, host, (globalPid >> 24) & 16777215, droppedEvents, openRanges "
                "FROM read_parquet($p)", {"p": os.path.join(parquet_dir, "NVTXR_PROCESSES", part)}).fetchall()
            for rank, host, pid, dropped, open_ranges in processes:
                why = []
                if dropped:
                    why.append(f"dropped {dropped} events")
                if open_ranges:
                    why.append(f"ended with {open_ranges} ranges open (it died mid-run?)")
                if why:
                    partial.append({"part": part, "rank": rank, "host": host, "pid": pid, "why": "; ".join(why)})
            if events == 0:
                partial.append({"part": part, "rank": None, "host": None, "pid": None, "why": "no NVTX events"})
    return rows, partial
