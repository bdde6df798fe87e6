//! The tool's CUPTI numbers and record offsets against NVIDIA's own headers
//! (PyPI `nvidia-cuda-cupti`): what `record/tool/src/gpu/cupti.rs` reads
//! from CUPTI's records is where CUPTI 13 puts it, and where CUDA 11.6's
//! CUPTI (the oldest the tool reads) put it.

use nvtxr_harness::{check, cupti_include};
use std::process::Command;

/// Every number and record offset the tool reads (`record/tool/src/gpu/cupti.rs`,
/// its `pub const`s) against NVIDIA's CUPTI headers: a C program prints each
/// as the compiler lays it out.
#[test]
fn cupti_layout() {
    let checked: &[(&str, &str)] = &[
        ("CUPTI_SUCCESS", "SUCCESS"),
        (
            "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
            "ERROR_MULTIPLE_SUBSCRIBERS",
        ),
        ("CUPTI_ERROR_MAX_LIMIT_REACHED", "ERROR_MAX_LIMIT_REACHED"),
        ("CUPTI_CB_DOMAIN_DRIVER_API", "DOMAIN_DRIVER"),
        ("CUPTI_CB_DOMAIN_RUNTIME_API", "DOMAIN_RUNTIME"),
        (
            "CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM",
            "THREAD_ID_TYPE_SYSTEM",
        ),
        ("CUPTI_ACTIVITY_KIND_DRIVER", "KIND_DRIVER"),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", "KIND_RUNTIME"),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", "KIND_MEMCPY"),
        ("CUPTI_ACTIVITY_KIND_MEMCPY2", "KIND_MEMCPY2"),
        ("CUPTI_ACTIVITY_MEMCPY_KIND_PTOP", "PEER_TO_PEER"),
        ("CUPTI_ACTIVITY_KIND_MEMSET", "KIND_MEMSET"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", "KIND_KERNEL"),
        ("CUPTI_ACTIVITY_KIND_CONTEXT", "KIND_CONTEXT"),
        ("CUPTI_ACTIVITY_KIND_DEVICE", "KIND_DEVICE"),
        (
            "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
            "KIND_CONCURRENT_KERNEL",
        ),
        (
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            "KIND_SYNCHRONIZATION",
        ),
        ("CUPTI_ACTIVITY_FLAG_FLUSH_FORCED", "FLUSH_FORCED"),
        (
            "offsetof(CUpti_ActivityKernel13, registersPerThread)",
            "KERNEL_REGISTERS",
        ),
        ("offsetof(CUpti_ActivityKernel13, start)", "KERNEL_START"),
        ("offsetof(CUpti_ActivityKernel13, end)", "KERNEL_END"),
        (
            "offsetof(CUpti_ActivityKernel13, deviceId)",
            "KERNEL_DEVICE",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, contextId)",
            "KERNEL_CONTEXT",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, streamId)",
            "KERNEL_STREAM",
        ),
        ("offsetof(CUpti_ActivityKernel13, gridX)", "KERNEL_GRID"),
        ("offsetof(CUpti_ActivityKernel13, blockX)", "KERNEL_BLOCK"),
        (
            "offsetof(CUpti_ActivityKernel13, staticSharedMemory)",
            "KERNEL_STATIC_SHARED",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, dynamicSharedMemory)",
            "KERNEL_DYNAMIC_SHARED",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, correlationId)",
            "KERNEL_CORRELATION",
        ),
        ("offsetof(CUpti_ActivityKernel13, name)", "KERNEL_NAME"),
        (
            "offsetof(CUpti_ActivityKernel13, localMemoryPerThread)",
            "KERNEL_LOCAL_PER_THREAD",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, localMemoryTotal)",
            "KERNEL_LOCAL_TOTAL",
        ),
        ("offsetof(CUpti_ActivityKernel13, gridId)", "KERNEL_GRID_ID"),
        (
            "offsetof(CUpti_ActivityKernel13, sharedMemoryExecuted)",
            "KERNEL_SHARED_EXECUTED",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, graphNodeId)",
            "KERNEL_GRAPH_NODE",
        ),
        ("offsetof(CUpti_ActivityKernel13, graphId)", "KERNEL_GRAPH"),
        (
            "offsetof(CUpti_ActivityKernel13, launchType)",
            "KERNEL_LAUNCH_TYPE",
        ),
        (
            "offsetof(CUpti_ActivityKernel13, shmemLimitConfig)",
            "KERNEL_SHARED_LIMIT",
        ),
        (
            "offsetof(CUpti_ActivityMemcpy7, graphNodeId)",
            "MEMCPY_GRAPH_NODE",
        ),
        ("offsetof(CUpti_ActivityMemcpy7, graphId)", "MEMCPY_GRAPH"),
        (
            "offsetof(CUpti_ActivityMemset5, graphNodeId)",
            "MEMSET_GRAPH_NODE",
        ),
        ("offsetof(CUpti_ActivityMemset5, graphId)", "MEMSET_GRAPH"),
        (
            "offsetof(CUpti_ActivityMemcpy7, copyKind)",
            "MEMCPY_COPY_KIND",
        ),
        (
            "offsetof(CUpti_ActivityMemcpy7, srcKind)",
            "MEMCPY_SRC_KIND",
        ),
        (
            "offsetof(CUpti_ActivityMemcpy7, dstKind)",
            "MEMCPY_DST_KIND",
        ),
        ("offsetof(CUpti_ActivityMemcpy7, bytes)", "MEMCPY_BYTES"),
        ("offsetof(CUpti_ActivityMemcpy7, start)", "MEMCPY_START"),
        ("offsetof(CUpti_ActivityMemcpy7, end)", "MEMCPY_END"),
        ("offsetof(CUpti_ActivityMemcpy7, deviceId)", "MEMCPY_DEVICE"),
        (
            "offsetof(CUpti_ActivityMemcpy7, contextId)",
            "MEMCPY_CONTEXT",
        ),
        ("offsetof(CUpti_ActivityMemcpy7, streamId)", "MEMCPY_STREAM"),
        (
            "offsetof(CUpti_ActivityMemcpy7, correlationId)",
            "MEMCPY_CORRELATION",
        ),
        // A peer-to-peer copy's first fields are a copy's.
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, copyKind)",
            "MEMCPY_COPY_KIND",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, srcKind)",
            "MEMCPY_SRC_KIND",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, dstKind)",
            "MEMCPY_DST_KIND",
        ),
        ("offsetof(CUpti_ActivityMemcpyPtoP4, bytes)", "MEMCPY_BYTES"),
        ("offsetof(CUpti_ActivityMemcpyPtoP4, start)", "MEMCPY_START"),
        ("offsetof(CUpti_ActivityMemcpyPtoP4, end)", "MEMCPY_END"),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, deviceId)",
            "MEMCPY_DEVICE",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, contextId)",
            "MEMCPY_CONTEXT",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, streamId)",
            "MEMCPY_STREAM",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, srcDeviceId)",
            "PEER_SRC_DEVICE",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, srcContextId)",
            "PEER_SRC_CONTEXT",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, dstDeviceId)",
            "PEER_DST_DEVICE",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, dstContextId)",
            "PEER_DST_CONTEXT",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, correlationId)",
            "PEER_CORRELATION",
        ),
        (
            "offsetof(CUpti_ActivityMemcpyPtoP4, graphNodeId)",
            "PEER_GRAPH_NODE",
        ),
        ("offsetof(CUpti_ActivityMemcpyPtoP4, graphId)", "PEER_GRAPH"),
        ("offsetof(CUpti_ActivityMemset5, value)", "MEMSET_VALUE"),
        ("offsetof(CUpti_ActivityMemset5, bytes)", "MEMSET_BYTES"),
        ("offsetof(CUpti_ActivityMemset5, start)", "MEMSET_START"),
        ("offsetof(CUpti_ActivityMemset5, end)", "MEMSET_END"),
        ("offsetof(CUpti_ActivityMemset5, deviceId)", "MEMSET_DEVICE"),
        (
            "offsetof(CUpti_ActivityMemset5, contextId)",
            "MEMSET_CONTEXT",
        ),
        ("offsetof(CUpti_ActivityMemset5, streamId)", "MEMSET_STREAM"),
        (
            "offsetof(CUpti_ActivityMemset5, correlationId)",
            "MEMSET_CORRELATION",
        ),
        (
            "offsetof(CUpti_ActivityMemset5, memoryKind)",
            "MEMSET_MEMORY_KIND",
        ),
        (
            "offsetof(CUpti_ActivitySynchronization2, type)",
            "SYNC_TYPE",
        ),
        (
            "offsetof(CUpti_ActivitySynchronization2, start)",
            "SYNC_START",
        ),
        ("offsetof(CUpti_ActivitySynchronization2, end)", "SYNC_END"),
        (
            "offsetof(CUpti_ActivitySynchronization2, correlationId)",
            "SYNC_CORRELATION",
        ),
        (
            "offsetof(CUpti_ActivitySynchronization2, contextId)",
            "SYNC_CONTEXT",
        ),
        (
            "offsetof(CUpti_ActivitySynchronization2, streamId)",
            "SYNC_STREAM",
        ),
        (
            "offsetof(CUpti_ActivitySynchronization2, cudaEventId)",
            "SYNC_EVENT",
        ),
        (
            "offsetof(CUpti_ActivityContext4, contextId)",
            "CONTEXT_CONTEXT",
        ),
        (
            "offsetof(CUpti_ActivityContext4, deviceId)",
            "CONTEXT_DEVICE",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, globalMemoryBandwidth)",
            "DEVICE_BANDWIDTH",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, globalMemorySize)",
            "DEVICE_MEMORY",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, constantMemorySize)",
            "DEVICE_CONSTANT_MEMORY",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, numMemcpyEngines)",
            "DEVICE_COPY_ENGINES",
        ),
        ("offsetof(CUpti_ActivityDevice6, maxIPC)", "DEVICE_MAX_IPC"),
        (
            "offsetof(CUpti_ActivityDevice6, maxBlockDimX)",
            "DEVICE_BLOCK_DIMS",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxGridDimX)",
            "DEVICE_GRID_DIMS",
        ),
        ("offsetof(CUpti_ActivityDevice6, uuid)", "DEVICE_UUID"),
        (
            "offsetof(CUpti_ActivityDevice6, numMultiprocessors)",
            "DEVICE_MULTIPROCESSORS",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, computeCapabilityMajor)",
            "DEVICE_COMPUTE_MAJOR",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, computeCapabilityMinor)",
            "DEVICE_COMPUTE_MINOR",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, l2CacheSize)",
            "DEVICE_L2_CACHE",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, numThreadsPerWarp)",
            "DEVICE_THREADS_PER_WARP",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, coreClockRate)",
            "DEVICE_CLOCK",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxWarpsPerMultiprocessor)",
            "DEVICE_WARPS_PER_SM",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxBlocksPerMultiprocessor)",
            "DEVICE_BLOCKS_PER_SM",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxSharedMemoryPerMultiprocessor)",
            "DEVICE_SHARED_PER_SM",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxRegistersPerMultiprocessor)",
            "DEVICE_REGISTERS_PER_SM",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxRegistersPerBlock)",
            "DEVICE_REGISTERS_PER_BLOCK",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxSharedMemoryPerBlock)",
            "DEVICE_SHARED_PER_BLOCK",
        ),
        (
            "offsetof(CUpti_ActivityDevice6, maxThreadsPerBlock)",
            "DEVICE_THREADS_PER_BLOCK",
        ),
        ("offsetof(CUpti_ActivityDevice6, id)", "DEVICE_ID"),
        ("offsetof(CUpti_ActivityDevice6, name)", "DEVICE_NAME"),
        ("offsetof(CUpti_ActivityAPI, cbid)", "API_CBID"),
        ("offsetof(CUpti_ActivityAPI, start)", "API_START"),
        ("offsetof(CUpti_ActivityAPI, end)", "API_END"),
        ("offsetof(CUpti_ActivityAPI, threadId)", "API_THREAD"),
        (
            "offsetof(CUpti_ActivityAPI, correlationId)",
            "API_CORRELATION",
        ),
    ];
    // The oldest records the tool reads (CUDA 11.6's, in the deprecated
    // header) have the same offsets.
    let oldest = [
        ("Kernel13", "Kernel7"),
        ("Memcpy7", "Memcpy5"),
        ("MemcpyPtoP4", "MemcpyPtoP3"),
        ("Memset5", "Memset4"),
        ("Device6", "Device4"),
    ];
    let checked: Vec<(String, &str)> = (checked.iter())
        .map(|&(expr, name)| (expr.to_string(), name))
        .chain(checked.iter().filter_map(|&(expr, name)| {
            let (now, then) = oldest.iter().find(|(now, _)| expr.contains(now))?;
            Some((expr.replace(now, then), name))
        }))
        // The CUPTI enumerators the outputs name, by their names.
        .chain(kinds().map(|(_, enumerator)| (enumerator.to_string(), enumerator)))
        .collect();
    // The tool's numbers, and the recording format's (the copy kinds).
    let source = ["record/tool/src/gpu/cupti.rs", "record/format/src/cupti.rs"]
        .map(|f| std::fs::read_to_string(nvtxr_harness::root().join(f)).unwrap())
        .concat();
    let ours: std::collections::HashMap<&str, usize> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let value = rest.split('=').nth(1)?.trim().trim_end_matches(';');
            Some((name, value.parse().ok()?))
        })
        .chain(kinds().map(|(id, enumerator)| (enumerator, id as usize)))
        .collect();
    // Removed when the test ends.
    let dir = tempfile::Builder::new()
        .prefix("cupti-layout-")
        .tempdir_in(nvtxr_harness::work_dir())
        .unwrap();
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <cupti.h>\n#include <cupti_activity_deprecated.h>\nint main(void) {\n",
    );
    for (expr, _) in &checked {
        c += &format!("    printf(\"%zu\\n\", (size_t)({expr}));\n");
    }
    c += "    return 0;\n}\n";
    std::fs::write(dir.path().join("layout.c"), c).unwrap();
    let exe = dir.path().join("layout");
    check(
        "gcc layout.c",
        Command::new("gcc")
            .arg("-I")
            .arg(cupti_include())
            .arg(dir.path().join("layout.c"))
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap(),
    );
    let out = check("layout", Command::new(&exe).output().unwrap());
    let printed: Vec<usize> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(printed.len(), checked.len());
    for ((expr, name), theirs) in checked.iter().zip(&printed) {
        assert_eq!(ours.get(name), Some(theirs), "{name} = {expr}");
    }
}

/// Each CUPTI enumerator the recording format gives Nsight's id of (copy
/// and memory kinds, synchronization types, launch types, shared memory
/// limits), by CUPTI's number and name.
fn kinds() -> impl Iterator<Item = (u32, &'static str)> {
    use nvtxr_record_format::cupti::*;
    let tables: [&[NsightEnum]; 5] = [
        &COPY_KINDS,
        &MEMORY_KINDS,
        &SYNC_TYPES,
        &LAUNCH_TYPES,
        &SHARED_LIMITS,
    ];
    tables.into_iter().flatten().filter_map(|r| r.cupti)
}
