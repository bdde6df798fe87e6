//! Payloads decoded into named values: NCCL's own schemas, nvtxr's C API,
//! every schema layout.

mod common;

use common::traces::{shown_in_json, shown_in_perfetto};
use common::*;
use nvtxr_harness::Producer;
use serde_json::Value;
use std::path::Path;

#[test]
fn nccls_own_payload_schemas_are_decoded_field_by_field() {
    // NCCL's nvtx_payload_schemas.h (vendored, tests/c/nccl), registered and
    // sent as NCCL sends them, on NVIDIA's headers and over nvtxr's drop-in.
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, _) =
            recorded_program("nccl_payloads.cpp", producer, &format!("nccl-{producer:?}"));
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        let ev = events(&load(&json));
        let shown: Vec<(String, String)> = ev
            .iter()
            .map(|e| {
                assert_eq!(e.cat, "NCCL", "{e:?}");
                (e.name.clone(), e.args["fields"].to_string())
            })
            .collect();
        let comm = r#""NCCL communicator ID":18364758544493064720"#;
        let expected = [
            ("ncclAllReduce", format!(r#"{{{comm},"Message size [bytes]":1048576,"Reduction operation":"Max"}}"#)),
            ("ncclAllGather", format!(r#"{{{comm},"Message size [bytes]":4096}}"#)),
            ("ncclBroadcast", format!(r#"{{{comm},"Message size [bytes]":512,"Root":3}}"#)),
            ("ncclReduce", format!(r#"{{{comm},"Message size [bytes]":256,"Root":0,"Reduction operation":"Avg"}}"#)),
            ("ncclSend", format!(r#"{{{comm},"Message size [bytes]":64,"Peer rank":7}}"#)),
            ("ncclCommInitRank", format!(r#"{{{comm},"No. of ranks":8,"Rank":2,"CUDA device":1}}"#)),
            (
                "ncclCommSplit",
                r#"{"NCCL communicator ID":18364758544493064721,"Parent NCCL communicator ID":18364758544493064720,"No. of ranks":4,"Rank":1,"CUDA device":1,"Color":5,"Key":-1}"#.to_string(),
            ),
        ];
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(shown, expected, "{producer:?}");
        // The summary split by message size, as NCCL users group their calls.
        let ranges = grouped_ranges(&dir, &rec, "Message size [bytes]");
        assert!(
            ranges
                .iter()
                .any(|r| r == "NCCL:ncclAllReduce [Message size [bytes]=1048576]")
                && ranges.iter().any(|r| r == "NCCL:ncclCommInitRank"),
            "{ranges:?}"
        );
    }
}

/// The summary's ranges (`domain:name [FIELD=value]`) when recording `rec`
/// is reported again into `dir` with `--group-by FIELD`.
fn grouped_ranges(dir: &Path, rec: &Path, field: &str) -> Vec<String> {
    let summary = dir.join("summary.json");
    let out = nvtxr(
        &[
            "report",
            rec.to_str().unwrap(),
            "-q",
            "-o",
            dir.join("grouped.pftrace").to_str().unwrap(),
            "--json",
            summary.to_str().unwrap(),
            "--group-by",
            field,
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    load(&summary)
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["range"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn nvtxr_c_payloads_are_decoded_into_named_values() {
    let (dir, out) = recorded_program("nvtxr_payloads.c", Producer::NvtxrShared, "nvtxr-payloads");
    let json = dir.join("t.json");
    // The enum and point get the ids asked for, the others the tool's; the
    // bad registrations give 0 and the bad events INVALID_ARGUMENT.
    assert!(text(&out).contains("ids 1 0 params dyn"), "{}", text(&out));
    assert!(
        text(&out).contains("status 0 1 refused 0 -102 -102"),
        "{}",
        text(&out)
    );
    let ev = events(&load(&json));
    let fields = |name: &str| -> Vec<Value> {
        ev.iter()
            .filter(|e| e.name == name)
            .map(|e| e.args["fields"].clone())
            .collect()
    };
    let params = |label: &str, op: &str| {
        serde_json::json!({
            "comm": 0xfedc_ba98_7654_3210_u64,
            "bytes": 1048576,
            "op": op,
            "tag": "grad",
            "label": label,
            "at": {"x": -7, "y": 2.25},
            "dims": [1, -2, 3],
        })
    };
    assert_eq!(fields("allreduce"), [params("allreduce", "max")]);
    assert_eq!(fields("step"), [params("allreduce", "sum")]);
    assert_eq!(
        fields("window"),
        [serde_json::json!({"n": 2, "values": [10, -20], "payload": 0.25})]
    );
    // The deferred range spans the mark made between its timestamps.
    assert!(text(&out).contains("deferred 0 -101"), "{}", text(&out));
    let deferred = ev
        .iter()
        .find(|e| e.name == "deferred")
        .expect("the deferred range");
    let inside = ev.iter().find(|e| e.name == "inside").expect("the mark");
    assert!(
        deferred.start <= inside.start && inside.start <= deferred.end,
        "{deferred:?} {inside:?}"
    );
    assert_eq!(
        deferred.args["fields"],
        serde_json::json!({"name": "deferred"})
    );
    assert_eq!(ev.len(), 5, "nothing of the refused calls: {ev:?}");
}

#[test]
fn payload_schemas_are_decoded_into_named_values() {
    // NVIDIA's header-only payload extension, and NVIDIA's API over nvtxr's drop-in.
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, out) = recorded_program(
            "payload_schemas.c",
            producer,
            &format!("payloads-{producer:?}"),
        );
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        // Registration: the enum and schemas get their static ids, the
        // dynamic schema a tool id; a bad id and an unknown entry type are refused.
        assert!(
            text(&out).contains("ids 1 0 2 dynamic 0 0"),
            "{producer:?}: {}",
            text(&out)
        );
        assert!(
            text(&out).contains("a payload schema was refused: schema id 5 is not a static id"),
            "{}",
            text(&out)
        );
        assert!(
            text(&out).contains("unknown entry type 999"),
            "{}",
            text(&out)
        );
        let ev = events(&load(&json));
        let fields = |name: &str| -> Vec<Value> {
            ev.iter()
                .filter(|e| e.name == name)
                .map(|e| {
                    assert_eq!(e.cat, "comm", "{e:?}");
                    e.args["fields"].clone()
                })
                .collect()
        };
        let params = |label: &str, op: &str| {
            serde_json::json!({
                "comm": 0xfedc_ba98_7654_3210_u64,
                "bytes": 1048576,
                "op": op,
                "ratio": 0.5,
                "tag": "grad",
                "label": label,
                "at": {"x": -7, "y": 2.25},
                "dims": [1, -2, 3],
                "phase": "backward",
            })
        };
        // A mark named by its message entry; the hidden entry left out.
        assert_eq!(
            fields("allreduce"),
            [params("allreduce", "max")],
            "{producer:?}"
        );
        // The pop's payload joins its range's.
        let mut pushed = params("pushed", "max");
        pushed["payload"] = 7.into();
        assert_eq!(fields("pushed"), [pushed], "{producer:?}");
        // NCCL's way: the core event keeps its message.
        assert_eq!(
            fields("ncclAllReduce"),
            [params("pushed", "sum")],
            "{producer:?}"
        );
        // A dynamic schema's variable-length array; the end's doubles.
        let start_end: Vec<&Event> = ev.iter().filter(|e| e.ph == "b").collect();
        assert_eq!(start_end.len(), 1, "{producer:?}");
        assert_eq!(
            start_end[0].args["fields"],
            serde_json::json!({"n": 3, "values": [10, -20, 30], "after": 65535, "payload": [0.25, -1.5]}),
            "{producer:?}"
        );
        // An array whose length is in the event's other payload (shown too).
        assert_eq!(
            fields("histogram")[0],
            serde_json::json!({"payload": 3, "samples": [0.5, 1.5, 2.5]}),
            "{producer:?}"
        );
        // A union: the member its selector entry chooses.
        let tagged = fields("tagged");
        assert_eq!(
            tagged[..2],
            [
                serde_json::json!({"kind": 0, "value": {"i": -5}}),
                serde_json::json!({"kind": 1, "value": {"d": 2.5}}),
            ],
            "{producer:?}"
        );
        // Bad payloads: raw bytes and the reason.
        let unregistered = fields("(unnamed)");
        let errors: Vec<&str> = ev
            .iter()
            .filter_map(|e| e.args["fields"]["payload error"].as_str())
            .collect();
        assert_eq!(
            errors,
            [
                "entry value: member 7 of a union of 2",
                "schema 16777316 is not registered in this domain",
                "8 bytes at offset 8 are past the payload's 12",
                "entry samples: payload 0 does not hold one integer",
            ],
            "{unregistered:?}"
        );
        assert!(ev
            .iter()
            .filter(|e| !e.args["fields"]["payload error"].is_null())
            .all(|e| e.args["fields"]["raw"].is_string()));
        // The Perfetto trace shows the same values (nested debug annotations).
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
        // SQL: Nsight's jsonText column.
        let db = dir.join("t.sqlite");
        let out = report(&db, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let bytes: Vec<i64> = rusqlite::Connection::open(&db)
            .unwrap()
            .prepare("SELECT json_extract(jsonText, '$.bytes') FROM NVTX_EVENTS WHERE json_extract(jsonText, '$.op') = 'max'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(bytes, [1048576, 1048576], "{producer:?}");
        // The recorder guide's query.
        let readme =
            std::fs::read_to_string(nvtxr_harness::root().join("docs/recording.md")).unwrap();
        let query = readme
            .split("sqlite3 t.sqlite \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the README's SQL");
        let groups: Vec<(Option<i64>, i64)> = rusqlite::Connection::open(&db)
            .unwrap()
            .prepare(query)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Without `bytes`: the start/end, the histogram, three tagged unions,
        // the three bad payloads.
        assert_eq!(groups, [(None, 8), (Some(1048576), 3)], "{query}");
        // The summary split by a field's value.
        let mut ranges = grouped_ranges(&dir, &rec, "op");
        ranges.sort();
        assert_eq!(
            ranges,
            [
                "comm:(unnamed)",
                "comm:ncclAllReduce [op=sum]",
                "comm:pushed [op=max]"
            ]
        );
    }
}
