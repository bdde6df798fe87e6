//! The SQLite tables of the scripted CUDA program of `gpu.rs`
//! (`tests/gpu/cuda_app.c` under the test CUPTI) as SQL written for Nsight
//! Systems' export reads them: its enumerations, numbers and column order,
//! and a GPU trace built by SQL as its reports build one.

mod common;

use common::cuda::*;
use common::{load, text};

/// A GPU trace as Nsight's reports build one from its tables (every
/// kernel, copy and set with its context, green context and stream, copies
/// and sets named and their memory kinds labelled through Nsight's
/// enumeration tables) names each activity as the JSON trace does.
#[test]
fn an_nsight_style_gpu_trace_names_every_activity_as_the_json_does() {
    let (dir, out) = run("nsight-trace", &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let rows: Vec<(i64, String, Option<String>, Option<String>)> = db
        .prepare(
            "SELECT correlationId, s.value, NULL, NULL, contextId, greenContextId, streamId, start
               FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
             UNION ALL
             SELECT correlationId, '[CUDA memcpy ' || o.label || ']', src.label, dst.label,
                    contextId, greenContextId, streamId, start
               FROM CUPTI_ACTIVITY_KIND_MEMCPY m
               LEFT JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = m.copyKind
               LEFT JOIN ENUM_CUDA_MEM_KIND src ON src.id = m.srcKind
               LEFT JOIN ENUM_CUDA_MEM_KIND dst ON dst.id = m.dstKind
             UNION ALL
             SELECT correlationId, '[CUDA memset]', k.label, NULL,
                    contextId, greenContextId, streamId, start
               FROM CUPTI_ACTIVITY_KIND_MEMSET m LEFT JOIN ENUM_CUDA_MEM_KIND k ON k.id = m.memKind
             ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| {
            assert_eq!(r.get::<_, Option<i64>>(5)?, None, "no green context");
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let trace = load(&dir.join("trace.json"));
    let mut named: Vec<(i64, String)> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["ph"] == "X"
                && ["kernel", "memcpy", "memset"].contains(&e["cat"].as_str().unwrap_or(""))
        })
        .map(|e| {
            (
                e["args"]["correlation"].as_i64().unwrap(),
                e["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    named.sort();
    let names: Vec<(i64, String)> = rows.iter().map(|(c, n, _, _)| (*c, n.clone())).collect();
    assert_eq!(names, named);
    // The copies' and the set's memory, labelled as Nsight labels it.
    let kinds: Vec<(&str, Option<&str>, Option<&str>)> = rows
        .iter()
        .filter(|(_, n, _, _)| n.starts_with("[CUDA mem"))
        .map(|(_, n, s, d)| (n.as_str(), s.as_deref(), d.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "[CUDA memcpy Host-to-Device]",
                Some("Pinned"),
                Some("Device")
            ),
            (
                "[CUDA memcpy Device-to-Host]",
                Some("Device"),
                Some("Pageable")
            ),
            ("[CUDA memset]", Some("Device"), None),
        ]
    );
    // SQL that spells Nsight's numbers: its memory kinds (one below
    // CUPTI's: 1 pinned, 2 device, 0 pageable), copy kinds (CUPTI's).
    let copies: Vec<(i64, i64, i64)> = db
        .prepare("SELECT copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY correlationId")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(copies, [(1, 1, 2), (2, 2, 0)]);
    // A kernel's launch type and shared memory limit, found by Nsight's
    // enumerator names: the cooperative launch (correlation 9) opted into
    // more shared memory, the others regular with the default limit; the
    // cache configuration not written.
    let launches: Vec<(i64, String, String, Option<i64>)> = db
        .prepare(
            "SELECT k.correlationId, t.name, l.name, k.cacheConfig FROM CUPTI_ACTIVITY_KIND_KERNEL k
               JOIN ENUM_CUDA_KERNEL_LAUNCH_TYPE t ON t.id = k.launchType
               JOIN ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG l ON l.id = k.sharedMemoryLimitConfig
              ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(launches.len(), 6, "{launches:?}");
    for (correlation, launch, limit, cache) in &launches {
        let expected = match correlation {
            9 => ("COOPERATIVE_SINGLE_DEVICE", "OPTIN"),
            _ => ("REGULAR", "DEFAULT"),
        };
        assert_eq!(
            (launch.as_str(), limit.as_str(), *cache),
            (
                &*format!("CUDA_KERNEL_LAUNCH_TYPE_{}", expected.0),
                &*format!("CUDA_SHARED_MEM_LIMIT_{}", expected.1),
                None
            ),
        );
    }
    // The CUDA tables' columns in the order of Nsight's export (2024.6),
    // for SQL and scripts that read them by position; the kernel table
    // then has the columns later versions added (`graphId`).
    let activity = "start end deviceId contextId greenContextId streamId correlationId globalPid";
    let nsight = [
        (
            "CUPTI_ACTIVITY_KIND_KERNEL",
            format!(
                "{activity} demangledName shortName mangledName launchType cacheConfig
                 registersPerThread gridX gridY gridZ blockX blockY blockZ staticSharedMemory
                 dynamicSharedMemory localMemoryPerThread localMemoryTotal gridId
                 sharedMemoryExecuted graphNodeId sharedMemoryLimitConfig"
            ),
        ),
        (
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            format!(
                "{activity} bytes copyKind deprecatedSrcId srcKind dstKind srcDeviceId
                 srcContextId dstDeviceId dstContextId migrationCause graphNodeId virtualAddress"
            ),
        ),
        (
            "CUPTI_ACTIVITY_KIND_MEMSET",
            format!("{activity} value bytes graphNodeId memKind"),
        ),
        (
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            format!("{activity} syncType eventId"),
        ),
        (
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "start end eventClass globalTid correlationId nameId returnValue callchainId".into(),
        ),
    ];
    for (table, theirs) in nsight {
        let columns: Vec<String> = db
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let theirs: Vec<&str> = theirs.split_whitespace().collect();
        assert_eq!(columns[..theirs.len()], theirs, "{table}");
    }
    // Each kernel's local memory, grid id (one per kernel) and shared
    // memory set by the driver, as the test CUPTI gave them.
    let (kernels, memory, grids, shared): (i64, i64, i64, i64) = db
        .query_row(
            "SELECT count(*), count(DISTINCT localMemoryPerThread || ':' || localMemoryTotal),
                    count(DISTINCT gridId), min(sharedMemoryExecuted)
               FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE localMemoryPerThread = 16
                AND localMemoryTotal = 16 * 128 * 2 * 256 AND gridId > 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((kernels, memory, grids, shared), (6, 1, 6, 8192));
    // Each GPU's limits, from which SQL computes an occupancy: blocks of
    // 256 threads at 40 registers each, 6 to a multiprocessor of 65,536.
    let occupancy: Vec<(i64, i64, i64, i64)> = db
        .prepare(
            "SELECT k.deviceId, g.maxRegistersPerSm / (k.registersPerThread * k.blockX * k.blockY * k.blockZ),
                    g.clockRate, g.l2CacheSize
               FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN TARGET_INFO_CUDA_DEVICE c
                 ON c.pid = (k.globalPid >> 24) & 16777215 AND c.cudaId = k.deviceId
               JOIN TARGET_INFO_GPU g ON g.id = c.gpuId
              GROUP BY 1, 2, 3, 4 ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let hopper = |device| (device, 6, 1_980_000_000, 50 << 20);
    assert_eq!(occupancy, [hopper(0), hopper(1)]);
}
