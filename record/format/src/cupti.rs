//! CUPTI's conventions: where the recording looks for its library,
//! libcupti (the same list for `nvtxr record --gpu on`, which refuses to run
//! without one, and the recording tool, which loads the first that loads),
//! and the names of the numbers its records carry.

use crate::gpu::CUPTI_VAR;

/// Where to look for libcupti, in order: `NVTXR_CUPTI` alone when it is
/// set; else beside the CUDA libraries the program loaded (`loaded`: their
/// folders; the toolkit's and PyPI's `nvidia-*` layouts); the CUDA toolkit
/// (`CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`); the active virtual
/// environment's `nvidia-cuda-cupti`; then the loader's own path (bare
/// names, for `dlopen` to search).
pub fn cupti_candidates(loaded: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(named) = std::env::var_os(CUPTI_VAR).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(named)];
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in loaded {
        dirs.push(dir.clone());
        dirs.push(dir.join("../extras/CUPTI/lib64"));
        dirs.push(dir.join("../../cuda_cupti/lib"));
    }
    let toolkits = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| {
            std::env::var_os(v)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .chain([PathBuf::from("/usr/local/cuda")]);
    for root in toolkits {
        for sub in ["extras/CUPTI/lib64", "targets/x86_64-linux/lib", "lib64"] {
            dirs.push(root.join(sub));
        }
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        if let Ok(entries) = std::fs::read_dir(PathBuf::from(venv).join("lib")) {
            for python in entries.flatten() {
                let nvidia = python.path().join("site-packages/nvidia");
                for sub in ["cu13/lib", "cuda_cupti/lib"] {
                    dirs.push(nvidia.join(sub));
                }
            }
        }
    }
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libcupti.so"))
            })
            .collect();
        // The newest version first.
        here.sort();
        here.reverse();
        for p in here {
            if !found.contains(&p) {
                found.push(p);
            }
        }
    }
    found.extend(["libcupti.so.13", "libcupti.so.12", "libcupti.so"].map(PathBuf::from));
    found
}

/// CUPTI's `CUPTI_ACTIVITY_MEMCPY_KIND_PTOP`: a copy between two GPUs
/// (CUPTI's `CUPTI_ACTIVITY_KIND_MEMCPY2` records).
pub const PEER_TO_PEER: u32 = 10;

/// CUPTI's `CUpti_ActivityMemcpyKind`: each number, its enumerator in
/// `cupti_activity.h`, and its label as Nsight Systems shows copies
/// (`[CUDA memcpy Host-to-Device]`, its `ENUM_CUDA_MEMCPY_OPER` table).
pub const COPY_KINDS: [(u32, &str, &str); 11] = [
    (0, "CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN", "Unknown"),
    (1, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOD", "Host-to-Device"),
    (2, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOH", "Device-to-Host"),
    (3, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOA", "Host-to-Array"),
    (4, "CUPTI_ACTIVITY_MEMCPY_KIND_ATOH", "Array-to-Host"),
    (5, "CUPTI_ACTIVITY_MEMCPY_KIND_ATOA", "Array-to-Array"),
    (6, "CUPTI_ACTIVITY_MEMCPY_KIND_ATOD", "Array-to-Device"),
    (7, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOA", "Device-to-Array"),
    (8, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOD", "Device-to-Device"),
    (9, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOH", "Host-to-Host"),
    (
        PEER_TO_PEER,
        "CUPTI_ACTIVITY_MEMCPY_KIND_PTOP",
        "Peer-to-Peer",
    ),
];

/// CUPTI's `CUpti_ActivityMemoryKind` (a copy's source and destination, a
/// set's memory), as [`COPY_KINDS`] (Nsight's `ENUM_CUDA_MEM_KIND`).
pub const MEMORY_KINDS: [(u32, &str, &str); 8] = [
    (0, "CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN", "Unknown"),
    (1, "CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE", "Pageable"),
    (2, "CUPTI_ACTIVITY_MEMORY_KIND_PINNED", "Pinned"),
    (3, "CUPTI_ACTIVITY_MEMORY_KIND_DEVICE", "Device"),
    (4, "CUPTI_ACTIVITY_MEMORY_KIND_ARRAY", "Array"),
    (5, "CUPTI_ACTIVITY_MEMORY_KIND_MANAGED", "Managed"),
    (
        6,
        "CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC",
        "Device Static",
    ),
    (
        7,
        "CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC",
        "Managed Static",
    ),
];

/// A copy kind's label (see [`COPY_KINDS`]).
pub fn copy_kind_name(kind: u32) -> &'static str {
    (COPY_KINDS.iter())
        .find(|(k, _, _)| *k == kind)
        .map_or("Unknown", |(_, _, label)| label)
}

/// CUPTI's `CUpti_ActivitySynchronizationType`, named.
pub fn sync_type_name(kind: u32) -> &'static str {
    match kind {
        1 => "cudaEventSynchronize",
        2 => "cudaStreamWaitEvent",
        3 => "cudaStreamSynchronize",
        4 => "cudaDeviceSynchronize",
        _ => "Unknown synchronization",
    }
}
