//! CUPTI's conventions: where the recording looks for its library,
//! libcupti (the same list for `nvtxr record --gpu on`, which refuses to run
//! without one, and the recording tool, which loads the first that loads),
//! and the names of the numbers its records carry.

use crate::gpu::CUPTI_VAR;

/// Where to look for libcupti, in order: `NVTXR_CUPTI` alone when it is
/// set; else, given the CUDA libraries the program loaded (`loaded`: their
/// files), a libcupti it loaded itself (PyTorch's, for its profiler: one
/// CUPTI per process, as a second copy would attach to the driver anew);
/// beside the others (the toolkit's and PyPI's `nvidia-*` layouts); the
/// CUDA toolkit (`CUDA_HOME`, `CUDA_PATH`, `/usr/local/cuda`); the active
/// virtual environment's `nvidia-cuda-cupti`; then the loader's own path
/// (bare names, for `dlopen` to search).
pub fn cupti_candidates(loaded: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    match std::env::var_os(CUPTI_VAR).filter(|v| !v.is_empty()) {
        Some(named) => vec![named.into()],
        None => search(loaded),
    }
}

/// Whether a file is a libcupti (`libcupti.so`, `libcupti.so.13`, ...).
fn is_cupti(path: &std::path::Path) -> bool {
    (path.file_name().and_then(|n| n.to_str())).is_some_and(|n| n.starts_with("libcupti.so"))
}

/// [`cupti_candidates`]'s places after `NVTXR_CUPTI`.
fn search(loaded: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let mut found: Vec<PathBuf> = loaded.iter().filter(|p| is_cupti(p)).cloned().collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in loaded.iter().filter_map(|p| p.parent()) {
        if dirs.iter().any(|d| d == dir) {
            continue;
        }
        dirs.push(dir.to_path_buf());
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
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<PathBuf> = (entries.flatten())
            .map(|e| e.path())
            .filter(|p| is_cupti(p))
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

/// A row of one of Nsight Systems' enumeration tables (`ENUM_*`: `id`,
/// `name`, `label`, as its SQLite export writes them), with the CUPTI
/// enumerator (its number and name in `cupti_activity.h`) that Nsight
/// writes as that id, when there is one.
#[derive(Debug, Clone, Copy)]
pub struct NsightEnum {
    pub id: u32,
    pub name: &'static str,
    pub label: &'static str,
    pub cupti: Option<(u32, &'static str)>,
}

const fn row(
    id: u32,
    name: &'static str,
    label: &'static str,
    cupti: Option<(u32, &'static str)>,
) -> NsightEnum {
    NsightEnum {
        id,
        name,
        label,
        cupti,
    }
}

/// The id Nsight writes for CUPTI's number `cupti` of the enumeration
/// `rows`: its row's, else the row labelled `Unknown`, else none.
pub fn nsight_id(rows: &[NsightEnum], cupti: u32) -> Option<u32> {
    row_of(rows, cupti)
        .or_else(|| rows.iter().find(|r| r.label == "Unknown"))
        .map(|r| r.id)
}

/// The row of `rows` that CUPTI's number `cupti` is written as.
fn row_of(rows: &[NsightEnum], cupti: u32) -> Option<&NsightEnum> {
    rows.iter()
        .find(|r| r.cupti.is_some_and(|(n, _)| n == cupti))
}

// The enumerations below are Nsight Systems' (2024.6's SQLite export, schema
// 3.16.1), row for row, but for the kernel launch types past Nsight's
// `Coop Single Device` (named here after CUPTI's enumerator).

/// CUPTI's `CUpti_ActivityMemcpyKind` (a copy's `copyKind`: Nsight writes
/// CUPTI's number) as Nsight's `ENUM_CUDA_MEMCPY_OPER`, whose labels name
/// copies in every output (`[CUDA memcpy Host-to-Device]`). Its unified
/// memory kinds are no copy record's.
pub const COPY_KINDS: [NsightEnum; 14] = [
    row(
        0,
        "CUDA_MEMCPY_KIND_UNKNOWN",
        "Unknown",
        Some((0, "CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN")),
    ),
    row(
        1,
        "CUDA_MEMCPY_KIND_HTOD",
        "Host-to-Device",
        Some((1, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOD")),
    ),
    row(
        2,
        "CUDA_MEMCPY_KIND_DTOH",
        "Device-to-Host",
        Some((2, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOH")),
    ),
    row(
        3,
        "CUDA_MEMCPY_KIND_HTOA",
        "Host-to-Array",
        Some((3, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOA")),
    ),
    row(
        4,
        "CUDA_MEMCPY_KIND_ATOH",
        "Array-to-Host",
        Some((4, "CUPTI_ACTIVITY_MEMCPY_KIND_ATOH")),
    ),
    row(
        5,
        "CUDA_MEMCPY_KIND_ATOA",
        "Array-to-Array",
        Some((5, "CUPTI_ACTIVITY_MEMCPY_KIND_ATOA")),
    ),
    row(
        6,
        "CUDA_MEMCPY_KIND_ATOD",
        "Array-to-Device",
        Some((6, "CUPTI_ACTIVITY_MEMCPY_KIND_ATOD")),
    ),
    row(
        7,
        "CUDA_MEMCPY_KIND_DTOA",
        "Device-to-Array",
        Some((7, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOA")),
    ),
    row(
        8,
        "CUDA_MEMCPY_KIND_DTOD",
        "Device-to-Device",
        Some((8, "CUPTI_ACTIVITY_MEMCPY_KIND_DTOD")),
    ),
    row(
        9,
        "CUDA_MEMCPY_KIND_HTOH",
        "Host-to-Host",
        Some((9, "CUPTI_ACTIVITY_MEMCPY_KIND_HTOH")),
    ),
    row(
        PEER_TO_PEER,
        "CUDA_MEMCPY_KIND_PTOP",
        "Peer-to-Peer",
        Some((PEER_TO_PEER, "CUPTI_ACTIVITY_MEMCPY_KIND_PTOP")),
    ),
    row(
        11,
        "CUDA_MEMCPY_KIND_UVM_HTOD",
        "Unified Host-to-Device",
        None,
    ),
    row(
        12,
        "CUDA_MEMCPY_KIND_UVM_DTOH",
        "Unified Device-to-Host",
        None,
    ),
    row(
        13,
        "CUDA_MEMCPY_KIND_UVM_DTOD",
        "Unified Device-to-Device",
        None,
    ),
];

/// CUPTI's `CUpti_ActivityMemoryKind` (a copy's `srcKind` and `dstKind`, a
/// set's `memKind`) as Nsight's `ENUM_CUDA_MEM_KIND`: Nsight numbers them
/// from 0 for pageable memory, one below CUPTI, and unknown last.
pub const MEMORY_KINDS: [NsightEnum; 8] = [
    row(
        0,
        "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE",
        "Pageable",
        Some((1, "CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE")),
    ),
    row(
        1,
        "CUDA_MEMOPR_MEMORY_KIND_PINNED",
        "Pinned",
        Some((2, "CUPTI_ACTIVITY_MEMORY_KIND_PINNED")),
    ),
    row(
        2,
        "CUDA_MEMOPR_MEMORY_KIND_DEVICE",
        "Device",
        Some((3, "CUPTI_ACTIVITY_MEMORY_KIND_DEVICE")),
    ),
    row(
        3,
        "CUDA_MEMOPR_MEMORY_KIND_ARRAY",
        "Array",
        Some((4, "CUPTI_ACTIVITY_MEMORY_KIND_ARRAY")),
    ),
    row(
        4,
        "CUDA_MEMOPR_MEMORY_KIND_MANAGED",
        "Managed",
        Some((5, "CUPTI_ACTIVITY_MEMORY_KIND_MANAGED")),
    ),
    row(
        5,
        "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC",
        "Device Static",
        Some((6, "CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC")),
    ),
    row(
        6,
        "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC",
        "Managed Static",
        Some((7, "CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC")),
    ),
    row(
        7,
        "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN",
        "Unknown",
        Some((0, "CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN")),
    ),
];

/// CUPTI's `CUpti_ActivitySynchronizationType` (a synchronization's
/// `syncType`: CUPTI's number) as Nsight's `ENUM_CUPTI_SYNC_TYPE`.
pub const SYNC_TYPES: [NsightEnum; 5] = [
    row(
        0,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN",
        "Unknown",
        Some((0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN")),
    ),
    row(
        1,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE",
        "Event sync",
        Some((1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE")),
    ),
    row(
        2,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT",
        "Stream wait sync",
        Some((2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT")),
    ),
    row(
        3,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE",
        "Stream sync",
        Some((3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE")),
    ),
    row(
        4,
        "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE",
        "Context sync",
        Some((4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE")),
    ),
];

/// CUPTI's `CUpti_ActivityLaunchType` (a kernel's `launchType`) as Nsight's
/// `ENUM_CUDA_KERNEL_LAUNCH_TYPE`: one above CUPTI's, 0 unknown.
pub const LAUNCH_TYPES: [NsightEnum; 4] = [
    row(0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown", None),
    row(
        1,
        "CUDA_KERNEL_LAUNCH_TYPE_REGULAR",
        "Regular",
        Some((0, "CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR")),
    ),
    row(
        2,
        "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE",
        "Coop Single Device",
        Some((1, "CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE")),
    ),
    row(
        3,
        "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE",
        "Coop Multi Device",
        Some((2, "CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE")),
    ),
];

/// CUPTI's `CUpti_FuncShmemLimitConfig` (a kernel's
/// `sharedMemoryLimitConfig`: CUPTI's number) as Nsight's
/// `ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG`.
pub const SHARED_LIMITS: [NsightEnum; 2] = [
    row(
        0,
        "CUDA_SHARED_MEM_LIMIT_DEFAULT",
        "Default",
        Some((0, "CUPTI_FUNC_SHMEM_LIMIT_DEFAULT")),
    ),
    row(
        1,
        "CUDA_SHARED_MEM_LIMIT_OPTIN",
        "Opt in",
        Some((1, "CUPTI_FUNC_SHMEM_LIMIT_OPTIN")),
    ),
];

/// A copy kind's label (see [`COPY_KINDS`]).
pub fn copy_kind_name(kind: u32) -> &'static str {
    row_of(&COPY_KINDS, kind).map_or("Unknown", |r| r.label)
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn a_libcupti_the_program_loaded_comes_first_then_those_beside_its_cuda() {
        let dir = tempfile::tempdir().unwrap();
        let (pip, toolkit) = (dir.path().join("cu13/lib"), dir.path().join("lib64"));
        for (folder, files) in [
            (&pip, &["libcudart.so.13", "libcupti.so.13"][..]),
            (
                &toolkit,
                &["libcupti.so.12", "libcupti.so.13", "libcuda.so.1"],
            ),
        ] {
            std::fs::create_dir_all(folder).unwrap();
            for f in files {
                std::fs::write(folder.join(f), b"").unwrap();
            }
        }
        let loaded = [
            toolkit.join("libcuda.so.1"),
            pip.join("libcupti.so.13"),
            pip.join("libcudart.so.13"),
        ];
        let found = super::search(&loaded);
        // The loaded one, then beside the first library loaded (the
        // newest first), each once; bare names last.
        assert_eq!(
            found[..3],
            [
                pip.join("libcupti.so.13"),
                toolkit.join("libcupti.so.13"),
                toolkit.join("libcupti.so.12"),
            ]
        );
        assert!(
            !found[1..].contains(&pip.join("libcupti.so.13")),
            "{found:?}"
        );
        assert_eq!(found.last(), Some(&PathBuf::from("libcupti.so")));
    }

    use super::*;

    #[test]
    fn cupti_numbers_become_nsights_ids_unknown_ones_its_unknown() {
        // Memory kinds: one below CUPTI's, CUPTI's unknown (and any number
        // not in the table) Nsight's last.
        let memory: Vec<_> = [1, 2, 3, 7, 0, 99]
            .map(|k| nsight_id(&MEMORY_KINDS, k))
            .into();
        assert_eq!(memory, [0, 1, 2, 6, 7, 7].map(Some));
        // Launch types: one above, 0 for an unknown one.
        let launch: Vec<_> = [0, 1, 2, 3].map(|k| nsight_id(&LAUNCH_TYPES, k)).into();
        assert_eq!(launch, [1, 2, 3, 0].map(Some));
        // A table without an unknown row has no id for an unknown number.
        assert_eq!(nsight_id(&SHARED_LIMITS, 1), Some(1));
        assert_eq!(nsight_id(&SHARED_LIMITS, 2), None);
        assert_eq!(copy_kind_name(PEER_TO_PEER), "Peer-to-Peer");
        assert_eq!(copy_kind_name(11), "Unknown");
    }
}
