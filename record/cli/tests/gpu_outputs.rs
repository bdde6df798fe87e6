//! GPU activity in each output, from the scripted CUDA program of
//! `gpu.rs` (`tests/gpu/cuda_app.c` under the test CUPTI): the Perfetto
//! trace's slices against the JSON's, a CUDA graph's launch with a flow to
//! each node in both, and `nvtxr view`'s stream rows and flows.

mod common;

use common::cuda::*;
use common::traces::perfetto_events;
use common::{load, report, text};
use std::process::Command;

#[test]
fn the_perfetto_trace_has_every_activity_with_the_jsons_arguments() {
    let (dir, rec, out) = run_kept("perfetto", &["--gpu-syncs"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = dir.join("t.pftrace");
    let reported = report(&trace, &rec);
    assert!(reported.status.success(), "{}", text(&reported));
    let events = perfetto_events(&trace);
    // Each GPU slice of the Perfetto trace, by correlation id and name: its
    // arguments; and the same from the JSON trace of the same recording.
    let slices = |events: Vec<serde_json::Value>| {
        let mut out: Vec<(u64, String, serde_json::Value)> = events
            .into_iter()
            .filter(|e| e["args"]["correlation"].is_u64() && e["args"]["context"].is_u64())
            .map(|e| {
                let mut args = e["args"].clone();
                args.as_object_mut().unwrap().remove("domain");
                (
                    args["correlation"].as_u64().unwrap(),
                    e["name"].as_str().unwrap().to_string(),
                    args,
                )
            })
            .collect();
        out.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        out
    };
    let perfetto = slices(
        events
            .into_iter()
            .filter(|e| e["kind"] == "slice")
            .collect(),
    );
    let json = slices(
        load(&dir.join("trace.json"))["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .cloned()
            .collect(),
    );
    // Six kernels, two copies, a set, a synchronization.
    assert_eq!(perfetto.len(), 10, "{perfetto:#?}");
    assert_eq!(perfetto, json);
    assert!(
        perfetto
            .iter()
            .all(|(_, _, a)| a["launched by"]["api"].is_string()),
        "{perfetto:#?}"
    );
    std::fs::remove_dir_all(&rec).unwrap();
}

/// The JSON body of `GET path` from the server at `port`.
fn get(port: u16, path: &str) -> serde_json::Value {
    let (status, head, body) = common::http_get(port, &format!("127.0.0.1:{port}"), path, "");
    assert_eq!(status, 200, "{head}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn nvtxr_view_shows_a_row_per_gpu_stream() {
    let (dir, rec, out) = run_kept("view", &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let mut child = Command::new(&nvtxr_harness::artifacts().nvtxr)
        .args(["view", "-q", "--no-token"])
        .arg(&rec)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let meta = get(port, "/meta");
    let window = get(port, &format!("/window?t0=0&t1={}&w=4000", meta["end"]));
    // The served page draws each bar's flow from its launch.
    let drawn = nvtxr_harness::have_tool("chromium").then(|| {
        let dom = common::dump_dom(&dir, &format!("http://127.0.0.1:{port}/"));
        let svg = dom
            .split("<svg")
            .nth(1)
            .and_then(|s| s.split("</svg>").next());
        let svg = svg.unwrap_or_else(|| panic!("no timeline drawn: {dom}"));
        svg.matches("<line class=\"flow\"").count()
    });
    let _ = child.kill();
    let _ = child.wait();
    let rows = meta["rows"].as_array().unwrap();
    let streams: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r["process"].as_str().unwrap().starts_with("GPU "))
        .map(|r| {
            let process = r["process"].as_str().unwrap();
            (
                process[..5].to_string(),
                r["label"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // As the JSON trace's stream tracks: two devices, four streams.
    let row = |gpu: &str, stream: &str| (gpu.to_string(), stream.to_string());
    assert_eq!(
        streams,
        [
            row("GPU 0", "stream 7"),
            row("GPU 0", "stream 14"),
            row("GPU 1", "stream 13"),
            row("GPU 1", "stream 15")
        ],
        "{rows:?}"
    );
    // Each GPU bar's launch (`[tid, time]`, where its flow starts), on a
    // thread row of the process the GPU row names.
    let threads: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r["tid"].is_u64())
        .map(|r| (r["pid"].as_u64().unwrap(), r["tid"].as_u64().unwrap()))
        .collect();
    let mut launched = 0;
    for (row, answer) in rows.iter().zip(window["rows"].as_array().unwrap()) {
        let Some(from) = row["from"].as_u64() else {
            assert!(answer["launches"].is_null(), "{answer}");
            continue;
        };
        let lanes = answer["lanes"].as_array().unwrap();
        let launches = answer["launches"].as_array().unwrap();
        for (lane, launches) in lanes.iter().zip(launches) {
            let launches = launches.as_array().unwrap();
            assert_eq!(lane.as_array().unwrap().len(), launches.len());
            for (bar, launch) in lane.as_array().unwrap().iter().zip(launches) {
                let (tid, at) = (launch[0].as_u64().unwrap(), launch[1].as_u64().unwrap());
                assert!(threads.contains(&(from, tid)), "{launch} of {row}");
                assert!(at <= bar[0].as_u64().unwrap(), "{launch} {bar}");
                launched += 1;
            }
        }
    }
    // Six kernels, two copies, a set.
    assert_eq!(launched, 9);
    if let Some(drawn) = drawn {
        assert_eq!(drawn, launched);
    }
    let shown = window.to_string();
    assert!(shown.contains("gemm"), "{shown}");
    assert!(shown.contains("GPU activity"), "{shown}");
}

#[test]
fn a_graph_of_more_nodes_than_packed_flow_ids_hold_keeps_one_flow_per_node() {
    // 303 nodes: the first 256 flows' ids are packed, the rest hashed
    // (`perfetto/gpu.rs`); every one still runs from the launch to its node.
    let env = [("GRAPH_LAUNCH", "1"), ("GRAPH_EXTRA_NODES", "300")];
    let (dir, rec, out) = run_kept("big-graph", &[], &env);
    assert!(out.status.success(), "{}", text(&out));
    let pftrace = dir.join("t.pftrace");
    let reported = report(&pftrace, &rec);
    assert!(reported.status.success(), "{}", text(&reported));
    // Checked by perfetto_check.py: every flow ended was started, before its end.
    let lines = perfetto_events(&pftrace);
    let ids = |v: &serde_json::Value| -> Vec<u64> {
        let mut ids: Vec<u64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        ids.sort();
        ids
    };
    let instant = lines
        .iter()
        .find(|e| e["kind"] == "flow" && e["name"] == "cudaGraphLaunch")
        .expect("the launch's instant");
    let starts = ids(&instant["args"]["flow_ids"]);
    let ends = ids(&serde_json::Value::from(
        lines
            .iter()
            .filter(|e| e["kind"] == "slice" && e["args"]["correlation"] == 12)
            .flat_map(|e| e["flow_ends"].as_array().unwrap().clone())
            .collect::<Vec<_>>(),
    ));
    assert_eq!(ends.len(), 303);
    assert_eq!(starts, ends);
    let mut distinct = ends.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 303);
    assert_eq!(ends.iter().filter(|&&id| id >= 1 << 63).count(), 303 - 256);
    // The JSON's flows too: one from the launch to each node (`<pid>.c12`,
    // then `.<nth>`).
    let trace = load(&dir.join("trace.json"));
    let events = trace["traceEvents"].as_array().unwrap();
    let graph_flows = |ph: &str| {
        events
            .iter()
            .filter(|e| {
                e["ph"] == ph && e["id"].as_str().and_then(|id| id.split('.').nth(1)) == Some("c12")
            })
            .count()
    };
    assert_eq!((graph_flows("s"), graph_flows("f")), (303, 303));
}

#[test]
fn each_node_of_a_graph_launch_has_its_flow_from_the_launch_and_its_range() {
    let (dir, rec, out) = run_kept("graph", &[], &[("GRAPH_LAUNCH", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let trace = load(&dir.join("trace.json"));
    let events = trace["traceEvents"].as_array().unwrap();
    let launch = events
        .iter()
        .find(|e| e["cat"] == "cuda_api" && e["args"]["correlation"] == 12)
        .expect("the graph's launch");
    assert_eq!(launch["name"], "cudaGraphLaunch");
    let nodes: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| {
            e["ph"] == "X" && e["args"]["correlation"] == 12 && e["args"]["context"].is_u64()
        })
        .collect();
    let names: Vec<&str> = nodes.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["node1()", "node2()", "[CUDA memset]"]);
    for (n, node) in nodes.iter().enumerate() {
        let by = &node["args"]["launched by"];
        assert_eq!(
            (&by["api"], &by["range"]),
            (&"cudaGraphLaunch".into(), &"graph".into()),
            "{node}"
        );
        // Each node's graph and node ids, as CUPTI gave them.
        let ids = (&node["args"]["graph"], &node["args"]["graph node"]);
        assert_eq!(ids, (&5.into(), &(0x1_0000_0001 + n as u64).into()));
    }
    // Work launched on its own is in no graph.
    assert!(events
        .iter()
        .filter(|e| e["ph"] == "X" && e["args"]["correlation"] != 12)
        .all(|e| e["args"].get("graph node").is_none()));

    // Nsight's columns: SQL that groups a graph's kernels by node runs as
    // on Nsight's export; the rest have no graph (NULL).
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let in_graphs: Vec<(String, Option<i64>, i64)> = db
        .prepare(
            "SELECT s.value, k.graphId, k.graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL k
             JOIN StringIds s ON s.id = k.shortName WHERE k.graphNodeId IS NOT NULL
             UNION ALL SELECT 'memset', NULL, graphNodeId FROM CUPTI_ACTIVITY_KIND_MEMSET
             WHERE graphNodeId IS NOT NULL ORDER BY 3",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let node = |n: i64| 0x1_0000_0000 + n;
    // (Nsight's memset table has no graphId.)
    assert_eq!(
        in_graphs,
        [
            ("node1".to_string(), Some(5), node(1)),
            ("node2".to_string(), Some(5), node(2)),
            ("memset".to_string(), None, node(3)),
        ]
    );
    let alone: i64 = db
        .query_row(
            "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NULL AND graphId IS NULL)
                  + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE graphNodeId IS NULL)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // The six kernels and two copies launched on their own.
    assert_eq!(alone, 8);
    // A flow from the launch to each node: as many starts at the launch as
    // nodes, each ended by one node.
    let flow_ids = |ph: &str, at: &serde_json::Value| -> Vec<String> {
        events
            .iter()
            .filter(|e| {
                e["ph"] == ph
                    && e["ts"] == at["ts"]
                    && e["pid"] == at["pid"]
                    && e["tid"] == at["tid"]
            })
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut started = flow_ids("s", launch);
    let mut ended: Vec<String> = nodes.iter().flat_map(|n| flow_ids("f", n)).collect();
    started.sort();
    ended.sort();
    assert_eq!(ended.len(), 3, "{ended:?}");
    assert_eq!(started, ended);
    // The projection holds the graph's three operations, two of them kernels.
    let projected = said
        .split("NVTX ranges projected onto the GPU")
        .nth(1)
        .and_then(|t| t.split("\n\n").nth(1))
        .unwrap();
    let graph = projected
        .lines()
        .find(|l| l.starts_with(":graph "))
        .unwrap_or_else(|| panic!("{projected}"));
    assert_eq!(
        graph.split_whitespace().rev().take(2).collect::<Vec<_>>(),
        ["3", "2"]
    );

    // The same flows in the Perfetto trace: the launch's instant starts one
    // per node, and each node's slice ends its own.
    let pftrace = dir.join("t.pftrace");
    let reported = report(&pftrace, &rec);
    assert!(reported.status.success(), "{}", text(&reported));
    let lines = perfetto_events(&pftrace);
    let instant = lines
        .iter()
        .find(|e| e["kind"] == "flow" && e["name"] == "cudaGraphLaunch")
        .expect("the launch's instant");
    let mut starts: Vec<u64> = instant["args"]["flow_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let mut ends: Vec<u64> = lines
        .iter()
        .filter(|e| e["kind"] == "slice" && e["args"]["correlation"] == 12)
        .flat_map(|e| e["flow_ends"].as_array().unwrap().clone())
        .map(|v| v.as_u64().unwrap())
        .collect();
    starts.sort();
    ends.sort();
    assert_eq!(ends.len(), 3, "{ends:?}");
    assert_eq!(starts, ends);
    // Each node's slice carries its graph and node ids.
    let mut ids: Vec<(u64, u64)> = lines
        .iter()
        .filter(|e| e["kind"] == "slice" && e["args"]["correlation"] == 12)
        .map(|e| {
            let id = |name: &str| e["args"][name].as_u64().unwrap_or_else(|| panic!("{e}"));
            (id("graph"), id("graph node"))
        })
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        (1..=3).map(|n| (5, node(n) as u64)).collect::<Vec<_>>()
    );
    std::fs::remove_dir_all(&rec).unwrap();
}

#[test]
fn a_peer_to_peer_copy_has_its_two_gpus_in_every_output() {
    let (dir, rec, out) = run_kept("peer", &[], &[("PEER_COPY", "1")]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&dir.join("trace.json"));
    let copy = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["cat"] == "memcpy" && e["ph"] == "X" && e["args"]["correlation"] == 13)
        .expect("the peer copy");
    assert_eq!(copy["name"], "[CUDA memcpy Peer-to-Peer]");
    let args = &copy["args"];
    assert_eq!(
        (
            &args["kind"],
            &args["source device"],
            &args["destination device"]
        ),
        (&"Peer-to-Peer".into(), &1.into(), &0.into())
    );
    assert_eq!(args["bytes"], 4 << 20);
    let by = &args["launched by"];
    assert_eq!(
        (&by["api"], &by["range"]),
        (&"cudaMemcpyPeerAsync".into(), &"exchange".into())
    );
    // Other copies name no devices.
    let copies = trace["traceEvents"].as_array().unwrap().iter();
    let others = copies.filter(|e| e["cat"] == "memcpy" && e["args"]["correlation"] != 13);
    assert!(
        others
            .inspect(|e| assert!(e["args"].get("source device").is_none(), "{e}"))
            .count()
            > 0
    );

    // Nsight's columns: its ends in the copy table (NULL for other copies).
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let rows: Vec<[Option<i64>; 6]> = db
        .prepare(
            "SELECT copyKind, bytes, srcDeviceId, srcContextId, dstDeviceId, dstContextId
             FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY correlationId",
        )
        .unwrap()
        .query_map([], |r| {
            Ok([0, 1, 2, 3, 4, 5].map(|i| r.get::<_, Option<i64>>(i).unwrap()))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let none = [None; 4];
    assert_eq!(
        rows.iter()
            .map(|r| (r[0], r[2..].to_vec()))
            .collect::<Vec<_>>(),
        [
            (Some(1), none.to_vec()),
            (Some(2), none.to_vec()),
            (Some(10), vec![Some(1), Some(2), Some(0), Some(1)]),
        ]
    );

    // The Perfetto slice's arguments say the same.
    let pftrace = dir.join("t.pftrace");
    let reported = report(&pftrace, &rec);
    assert!(reported.status.success(), "{}", text(&reported));
    let slice = perfetto_events(&pftrace)
        .into_iter()
        .find(|e| e["kind"] == "slice" && e["args"]["correlation"] == 13)
        .expect("the peer copy's slice");
    assert_eq!(
        (
            &slice["args"]["source device"],
            &slice["args"]["destination device"]
        ),
        (&1.into(), &0.into())
    );
    std::fs::remove_dir_all(&rec).unwrap();
}
