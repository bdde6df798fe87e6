//! The outputs agree: the Perfetto trace shows exactly what the JSON
//! shows, and SQL over the SQLite export answers Nsight's `nvtx_sum` as the
//! summary does.

mod common;

use common::traces::{shown_in_json, shown_in_perfetto};
use common::*;
use nvtxr_harness::{compile_c, Producer};
use serde_json::Value;

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
}

#[test]
fn the_perfetto_trace_shows_exactly_what_the_json_shows() {
    let exe = scenarios();
    let example = compile_c("example.c", Producer::NvtxrShared, &[]);
    let nvidia = compile_c("differential.c", Producer::NvidiaHeader, &[]);
    let programs: [(&str, Vec<&str>); 5] = [
        ("pf-processes", vec![exe.to_str().unwrap(), "processes"]),
        ("pf-example", vec![example.to_str().unwrap()]),
        ("pf-nvidia", vec![nvidia.to_str().unwrap()]),
        ("pf-async", vec![exe.to_str().unwrap(), "async_ids"]),
        ("pf-signals", vec![exe.to_str().unwrap(), "signal_marks"]),
    ];
    for (name, command) in programs {
        let dir = scratch(name);
        let rec = kept(
            &dir,
            &["-o", dir.join("t.json").to_str().unwrap()],
            &command,
        );
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let json = shown_in_json(&dir.join("t.json"));
        let (perfetto, flows) = shown_in_perfetto(&pftrace);
        assert!(!json.is_empty(), "{name}");
        assert_eq!(perfetto, json, "{name}");
        if name == "pf-example" {
            // The example's "load data" starts on main and ends on its prefetch thread.
            assert_eq!(flows.len(), 1, "{flows:?}");
            assert_ne!(flows[0].0, flows[0].1);
        }
        let (p, j) = (
            std::fs::metadata(&pftrace).unwrap().len(),
            std::fs::metadata(dir.join("t.json")).unwrap().len(),
        );
        // Past the fixed cost of small traces: a fraction of the JSON.
        assert!(
            j < 20_000 || p * 5 < j,
            "{name}: {p} bytes against the JSON's {j}"
        );
    }
}

/// Nsight Systems' `nvtx_sum` as SQL over the NVTX tables of an export: a
/// row per style and `domain:name`, with total, instances, average, median,
/// minimum, maximum and the variance (SQLite has no square root everywhere).
const NVTX_SUM: &str = "
WITH
    domains AS (
        SELECT DISTINCT domainId AS id, globalTid >> 24 AS process, text AS name
        FROM NVTX_EVENTS WHERE eventType = 75),
    ranges AS (
        SELECT e.eventType AS type,
               coalesce(d.name, '') || ':' || coalesce(s.value, e.text) AS range,
               e.end - e.start AS duration
        FROM NVTX_EVENTS AS e
        LEFT JOIN domains AS d ON e.domainId = d.id AND e.globalTid >> 24 = d.process
        LEFT JOIN StringIds AS s ON e.textId = s.id
        WHERE e.eventType IN (59, 60)),
    ranked AS (
        SELECT type, range, duration,
               ROW_NUMBER() OVER (PARTITION BY type, range ORDER BY duration) AS k,
               COUNT(*) OVER (PARTITION BY type, range) AS n,
               AVG(duration) OVER (PARTITION BY type, range) AS mean
        FROM ranges)
SELECT CASE type WHEN 59 THEN 'PushPop' ELSE 'StartEnd' END, range,
       SUM(duration), COUNT(*), AVG(duration),
       AVG(CASE WHEN k IN ((n + 1) / 2, (n + 2) / 2) THEN duration END),
       MIN(duration), MAX(duration),
       CASE WHEN COUNT(*) > 1
            THEN SUM((duration - mean) * (duration - mean)) / (COUNT(*) - 1) ELSE 0 END
FROM ranked GROUP BY type, range ORDER BY 3 DESC, 2";

/// One row of [`NVTX_SUM`]: style, range, total, instances, average,
/// median, minimum, maximum, variance.
type SumRow = (String, String, i64, i64, f64, f64, i64, i64, f64);

#[test]
fn the_sqlite_export_answers_nvtx_sum_as_the_summary_does() {
    let exe = scenarios();
    let example = compile_c("example.c", Producer::NvtxrShared, &[]);
    for (name, command) in [
        ("sql-example", vec![example.to_str().unwrap()]),
        ("sql-processes", vec![exe.to_str().unwrap(), "processes"]),
    ] {
        let dir = scratch(name);
        let db = dir.join("t.sqlite");
        let out = nvtxr(
            &[
                &[
                    "record",
                    "-q",
                    "-o",
                    dir.join("t.json").to_str().unwrap(),
                    "--json",
                    dir.join("summary.json").to_str().unwrap(),
                    "--sqlite",
                    db.to_str().unwrap(),
                    // As nvtx_sum: a row per exact name.
                    "--exact-names",
                    "--",
                ][..],
                &command,
            ]
            .concat(),
            &[],
        );
        assert!(out.status.success(), "{name}: {}", text(&out));
        let summary = load(&dir.join("summary.json"));
        let sql = rusqlite::Connection::open(&db).unwrap();
        let rows: Vec<SumRow> = sql
            .prepare(NVTX_SUM)
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let expected = summary.as_array().unwrap();
        assert_eq!(rows.len(), expected.len(), "{name}: {rows:?}");
        for (row, want) in rows.iter().zip(expected) {
            let close =
                |a: f64, b: &Value| (a - b.as_f64().unwrap()).abs() <= 1e-6 * a.abs().max(1.0);
            assert_eq!(row.0, want["style"].as_str().unwrap(), "{name}");
            assert_eq!(row.1, want["range"].as_str().unwrap(), "{name}");
            assert_eq!(
                row.2,
                want["total_ns"].as_i64().unwrap(),
                "{name} {}",
                row.1
            );
            assert_eq!(
                row.3,
                want["instances"].as_i64().unwrap(),
                "{name} {}",
                row.1
            );
            assert!(close(row.4, &want["avg_ns"]), "{name} {row:?} {want}");
            assert!(close(row.5, &want["median_ns"]), "{name} {row:?} {want}");
            assert_eq!(row.6, want["min_ns"].as_i64().unwrap(), "{name} {}", row.1);
            assert_eq!(row.7, want["max_ns"].as_i64().unwrap(), "{name} {}", row.1);
            assert!(
                close(row.8.sqrt(), &want["stddev_ns"]),
                "{name} {row:?} {want}"
            );
        }
        // The tables and columns SQL against an nsys export names.
        for (table, columns) in [
            ("NVTX_EVENTS", 19),
            ("StringIds", 2),
            ("ThreadNames", 3),
            ("PROCESSES", 3),
            ("TARGET_INFO_SESSION_START_TIME", 3),
        ] {
            let n: i64 = sql
                .query_row(
                    &format!("SELECT count(*) FROM pragma_table_info('{table}')"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, columns, "{table}");
        }
        let threads: i64 = sql
            .query_row(
                "SELECT count(*) FROM ThreadNames JOIN StringIds ON nameId = id",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(threads > 0, "{name}: named threads");
    }
}
