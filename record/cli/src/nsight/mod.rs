//! The tables of Nsight Systems' exports (`nsys export --type sqlite`, and
//! its Parquet directories), so that SQL and recipes written against one run
//! on nvtxr's: the one definition of every table, column and type, and of
//! the rows a recording gives them ([`export`]), which the SQLite
//! (`crate::sqlite`) and Parquet (`crate::parquet`) writers store.
//!
//! Matched against the SQLite schema reference of the Nsight Systems User
//! Guide (the 2024–2025 releases: `NVTX_EVENTS` with 19 columns, ending in
//! `jsonTextId`, `jsonText`). Written: `StringIds`, `ThreadNames`,
//! `PROCESSES`, `TARGET_INFO_SESSION_START_TIME`, `NVTX_EVENTS` and the NVTX
//! rows of `ENUM_NSYS_EVENT_TYPE`, and the CUDA tables
//! `CUPTI_ACTIVITY_KIND_KERNEL`, `_MEMCPY`, `_MEMSET`, `_SYNCHRONIZATION`,
//! `_RUNTIME`, `TARGET_INFO_GPU` and `TARGET_INFO_CUDA_DEVICE` (the columns
//! nvtxr knows, names through `StringIds`) with the enumerations they refer
//! to, Nsight's rows (`ENUM_CUDA_MEMCPY_OPER`, `ENUM_CUDA_MEM_KIND`,
//! `ENUM_CUPTI_SYNC_TYPE`, `ENUM_CUDA_KERNEL_LAUNCH_TYPE`,
//! `ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG`:
//! [`nvtxr_record_format::cupti::NsightEnum`]); nothing of NVIDIA's
//! tables is changed, and one column added (`TARGET_INFO_CUDA_DEVICE`'s
//! `globalPid`, last). What nvtxr knows besides goes in a table of its own,
//! `NVTXR_PROCESSES` (rank, world size, host, command line, recording).
//!
//! - Times are ns from the start of the session (the trace's first event).
//! - `globalTid` is serialized as Nsight serializes it: the pid in bits
//!   24–47, the tid in bits 0–23; the recording (rank) of a merged report in
//!   bits 48–55, where Nsight keeps its hardware id. `globalPid` is the same
//!   with the tid left 0.
//! - Event types: 33 category name, 34 mark, 59 push/pop range, 60
//!   start/end range, 75 domain creation (its name in `text`). Messages are
//!   `StringIds` (`textId`) in SQLite, `text` in Parquet (both are Nsight's
//!   ways: a query reads `coalesce(text, value)`); domains are numbered per
//!   process (`domainId`, 0 the default domain). Payloads go in the column
//!   of their type (a 32-bit payload in the 64-bit column of its kind);
//!   extended payloads, decoded, in `jsonText` as a JSON object
//!   (`json_extract(jsonText, '$.bytes')`).

pub mod export;
mod gpus;

use crate::model::Process;
use nvtxr_record_format::cupti::{
    NsightEnum, COPY_KINDS, LAUNCH_TYPES, MEMORY_KINDS, SHARED_LIMITS, SYNC_TYPES,
};

/// A column's type: SQLite's `INTEGER`, `REAL`, `TEXT`; Parquet's 64-bit
/// integer, double, UTF-8 string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Int,
    Real,
    Text,
}

#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub ty: Type,
    /// `NOT NULL`.
    pub required: bool,
}

#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// Its first column is its primary key (SQLite).
    pub keyed: bool,
}

const fn int(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Int,
        required: false,
    }
}
const fn int_required(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Int,
        required: true,
    }
}
const fn real(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Real,
        required: false,
    }
}
const fn text(name: &'static str) -> Column {
    Column {
        name,
        ty: Type::Text,
        required: false,
    }
}

/// A value of a row, in its column's type (`None`: NULL). Borrowed, so a
/// row is copied and dropped for free.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<&'a str>),
}

impl<'a> Value<'a> {
    pub fn int(v: impl Into<i64>) -> Value<'a> {
        Value::Int(Some(v.into()))
    }
    pub fn text(v: &'a str) -> Value<'a> {
        Value::Text(Some(v))
    }
}

pub const STRING_IDS: Table = Table {
    name: "StringIds",
    columns: &[
        int_required("id"),
        Column {
            name: "value",
            ty: Type::Text,
            required: true,
        },
    ],
    keyed: true,
};
pub const THREAD_NAMES: Table = Table {
    name: "ThreadNames",
    columns: &[int_required("nameId"), int("priority"), int("globalTid")],
    keyed: false,
};
pub const PROCESSES: Table = Table {
    name: "PROCESSES",
    columns: &[int("globalPid"), int("pid"), text("name")],
    keyed: false,
};
pub const SESSION_START: Table = Table {
    name: "TARGET_INFO_SESSION_START_TIME",
    columns: &[int("utcEpochNs"), text("utcTime"), text("localTime")],
    keyed: false,
};
pub const EVENT_TYPES: Table = Table {
    name: "ENUM_NSYS_EVENT_TYPE",
    columns: &[int_required("id"), text("name"), text("label")],
    keyed: true,
};
pub const NVTX_EVENTS: Table = Table {
    name: "NVTX_EVENTS",
    columns: &[
        int_required("start"),
        int("end"),
        int_required("eventType"),
        int("rangeId"),
        int("category"),
        int("color"),
        text("text"),
        int("globalTid"),
        int("endGlobalTid"),
        int("textId"),
        int("domainId"),
        int("uint64Value"),
        int("int64Value"),
        real("doubleValue"),
        int("uint32Value"),
        int("int32Value"),
        real("floatValue"),
        int("jsonTextId"),
        text("jsonText"),
    ],
    keyed: false,
};
pub const NVTXR_PROCESSES: Table = Table {
    name: "NVTXR_PROCESSES",
    columns: &[
        int("globalPid"),
        int("rank"),
        int("worldSize"),
        text("host"),
        text("command"),
        int("recording"),
        // Events the tool could not record, and ranges still open when the
        // process ended (it died mid-run, or never closed them): a process
        // with either is partial.
        int("droppedEvents"),
        int("openRanges"),
    ],
    keyed: false,
};
/// One row per GPU (one GPU used by several processes, or several ranks
/// of a merged report, is one row when CUPTI gave its UUID), as Nsight's;
/// which GPU each process's CUDA device is goes in [`CUDA_DEVICES`].
pub const TARGET_INFO_GPU: Table = Table {
    name: "TARGET_INFO_GPU",
    columns: &[
        int_required("id"),
        text("name"),
        // The PCI bus location, as the NVIDIA driver shows it (NULL where
        // its files were not there to read), and the UUID, without `GPU-`.
        text("busLocation"),
        text("uuid"),
        // NULL: CUPTI's records do not name the chip.
        text("chipName"),
        int("totalMemory"),
        // Bytes per second (CUPTI's kB/s times 1000).
        int("memoryBandwidth"),
        int("smCount"),
        int("computeMajor"),
        int("computeMinor"),
        // The limits an occupancy is computed from (CUPTI's, the clock in Hz).
        int("l2CacheSize"),
        int("clockRate"),
        int("threadsPerWarp"),
        int("maxThreadsPerBlock"),
        int("maxRegistersPerBlock"),
        int("maxShmemPerBlock"),
        int("maxWarpsPerSm"),
        int("maxBlocksPerSm"),
        int("maxShmemPerSm"),
        int("maxRegistersPerSm"),
        int("constantMemory"),
        int("maxIPC"),
        int("asyncEngines"),
        int("maxBlockDimX"),
        int("maxBlockDimY"),
        int("maxBlockDimZ"),
        int("maxGridDimX"),
        int("maxGridDimY"),
        int("maxGridDimZ"),
    ],
    keyed: false,
};
/// Nsight's `TARGET_INFO_CUDA_DEVICE`: each process's CUDA device (the
/// `deviceId` of its rows) and the GPU it is (`TARGET_INFO_GPU.id`; a
/// process under `CUDA_VISIBLE_DEVICES` numbers its GPUs from 0). Its last
/// column is nvtxr's: the process as the CUDA tables serialize it, which
/// tells apart two ranks of a merged report with the same pid.
pub const CUDA_DEVICES: Table = Table {
    name: "TARGET_INFO_CUDA_DEVICE",
    columns: &[
        int("gpuId"),
        int_required("cudaId"),
        int_required("pid"),
        text("uuid"),
        int("numMultiprocessors"),
        int("globalPid"),
    ],
    keyed: false,
};
/// The columns every GPU activity table starts with.
macro_rules! activity {
    ($($more:expr),* $(,)?) => {
        &[
            int_required("start"),
            int_required("end"),
            int_required("deviceId"),
            int_required("contextId"),
            // Always NULL: CUPTI's records name no green context.
            int("greenContextId"),
            int_required("streamId"),
            int("correlationId"),
            int("globalPid"),
            $($more),*
        ]
    };
}
pub const KERNEL: Table = Table {
    name: "CUPTI_ACTIVITY_KIND_KERNEL",
    columns: activity![
        int_required("demangledName"),
        int_required("shortName"),
        int("mangledName"),
        int("launchType"),
        // NULL: whether Nsight writes CUPTI's requested or executed cache
        // configuration is not known here.
        int("cacheConfig"),
        int_required("registersPerThread"),
        int_required("gridX"),
        int_required("gridY"),
        int_required("gridZ"),
        int_required("blockX"),
        int_required("blockY"),
        int_required("blockZ"),
        int_required("staticSharedMemory"),
        int_required("dynamicSharedMemory"),
        int_required("localMemoryPerThread"),
        int_required("localMemoryTotal"),
        int_required("gridId"),
        int("sharedMemoryExecuted"),
        int("graphNodeId"),
        int("sharedMemoryLimitConfig"),
        int("graphId"),
    ],
    keyed: false,
};
pub const MEMCPY: Table = Table {
    name: "CUPTI_ACTIVITY_KIND_MEMCPY",
    columns: activity![
        int_required("bytes"),
        int_required("copyKind"),
        // NULL: deprecated in Nsight's export for srcDeviceId.
        int("deprecatedSrcId"),
        int("srcKind"),
        int("dstKind"),
        int("srcDeviceId"),
        int("srcContextId"),
        int("dstDeviceId"),
        int("dstContextId"),
        // NULL: unified memory's migrations are not recorded.
        int("migrationCause"),
        int("graphNodeId"),
        // NULL: a unified memory migration's pages.
        int("virtualAddress"),
    ],
    keyed: false,
};
pub const MEMSET: Table = Table {
    name: "CUPTI_ACTIVITY_KIND_MEMSET",
    columns: activity![
        int_required("value"),
        int_required("bytes"),
        int("graphNodeId"),
        int("memKind")
    ],
    keyed: false,
};
pub const SYNCHRONIZATION: Table = Table {
    name: "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    columns: activity![int_required("syncType"), int_required("eventId")],
    keyed: false,
};
pub const RUNTIME: Table = Table {
    name: "CUPTI_ACTIVITY_KIND_RUNTIME",
    columns: &[
        int_required("start"),
        int_required("end"),
        int_required("eventClass"),
        int("globalTid"),
        int("correlationId"),
        int_required("nameId"),
        int_required("returnValue"),
        // NULL: no backtraces are recorded.
        int("callchainId"),
    ],
    keyed: false,
};

/// An enumeration's table (`id`, `name`, `label`), which Nsight's reports
/// join activity rows with.
const fn enumeration(name: &'static str) -> Table {
    const COLUMNS: &[Column] = &[int_required("id"), text("name"), text("label")];
    Table {
        name,
        columns: COLUMNS,
        keyed: true,
    }
}

/// Every enumeration's table, with its rows.
pub const ENUMERATIONS: [(Table, &[NsightEnum]); 5] = [
    (enumeration("ENUM_CUDA_MEMCPY_OPER"), &COPY_KINDS),
    (enumeration("ENUM_CUDA_MEM_KIND"), &MEMORY_KINDS),
    (enumeration("ENUM_CUPTI_SYNC_TYPE"), &SYNC_TYPES),
    (enumeration("ENUM_CUDA_KERNEL_LAUNCH_TYPE"), &LAUNCH_TYPES),
    (
        enumeration("ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG"),
        &SHARED_LIMITS,
    ),
];

/// Every table, in the order they are created.
pub const TABLES: [&Table; 19] = [
    &STRING_IDS,
    &THREAD_NAMES,
    &PROCESSES,
    &SESSION_START,
    &EVENT_TYPES,
    &ENUMERATIONS[0].0,
    &ENUMERATIONS[1].0,
    &ENUMERATIONS[2].0,
    &ENUMERATIONS[3].0,
    &ENUMERATIONS[4].0,
    &NVTX_EVENTS,
    &NVTXR_PROCESSES,
    &TARGET_INFO_GPU,
    &CUDA_DEVICES,
    &KERNEL,
    &MEMCPY,
    &MEMSET,
    &SYNCHRONIZATION,
    &RUNTIME,
];

/// Nsight's NVTX event types (`ENUM_NSYS_EVENT_TYPE`): id, name, label.
pub const EVENT_TYPE_ROWS: [(i64, &str, &str); 6] = [
    (CATEGORY, "NVTX_CATEGORY", "NVTX Category"),
    (MARK, "NVTX_MARK", "NVTX Mark"),
    (39, "NVTX_THREAD", "NVTX Thread"),
    (PUSH_POP, "NVTX_PUSHPOP_RANGE", "NVTX PushPop Range"),
    (START_END, "NVTX_STARTEND_RANGE", "NVTX StartEnd Range"),
    (DOMAIN_CREATE, "NVTX_DOMAIN_CREATE", "NVTX Domain Create"),
];

pub const CATEGORY: i64 = 33;
pub const MARK: i64 = 34;
pub const PUSH_POP: i64 = 59;
pub const START_END: i64 = 60;
pub const DOMAIN_CREATE: i64 = 75;
/// Nsight's `eventClass` of CUDA runtime API rows (`ENUM_NSYS_EVENT_CLASS`).
pub const RUNTIME_CLASS: i64 = 0;

/// `globalPid` as Nsight serializes it (see the module's notes).
pub fn global_pid(p: &Process) -> i64 {
    ((p.recording as i64 & 0xFF) << 48) | ((i64::from(p.pid) & 0xFF_FFFF) << 24)
}

pub fn global_tid(p: &Process, tid: u32) -> i64 {
    global_pid(p) | (i64::from(tid) & 0xFF_FFFF)
}

/// A kernel's short name, as Nsight's `shortName`: the demangled name
/// without its parameters, template arguments and scopes.
pub fn short_name(demangled: &str) -> &str {
    let base = demangled.split('(').next().unwrap_or(demangled);
    let base = base.split('<').next().unwrap_or(base);
    base.rsplit("::").next().unwrap_or(base).trim()
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_names_are_nsights() {
        assert_eq!(super::short_name("gemm(float const*, int)"), "gemm");
        assert_eq!(
            super::short_name("at::native::vectorized_elementwise_kernel<4, float>(int)"),
            "vectorized_elementwise_kernel"
        );
        assert_eq!(super::short_name("relu_kernel"), "relu_kernel");
    }
}
