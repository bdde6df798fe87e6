//! The CUDA tables of Nsight Systems' SQLite export: `CUPTI_ACTIVITY_KIND_KERNEL`,
//! `_MEMCPY`, `_MEMSET`, `_SYNCHRONIZATION`, `_RUNTIME` and `TARGET_INFO_GPU`,
//! with Nsight's column names and meanings (the columns nvtxr knows; names
//! through `StringIds`), so that SQL written for Nsight's reports (a join of
//! `CUPTI_ACTIVITY_KIND_KERNEL` with `CUPTI_ACTIVITY_KIND_RUNTIME` on
//! `correlationId`, then with `NVTX_EVENTS` on `globalTid` and time) runs on
//! nvtxr's.

use super::{global_pid, global_tid, io, Writer};
use crate::model::{GpuEvent, Launch, Process};
use nvtxr_record_format::gpu::Tag;
use rusqlite::params;

pub const SCHEMA: &str = "
CREATE TABLE TARGET_INFO_GPU (
    id          INTEGER   NOT NULL,
    name        TEXT,
    globalPid   INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start       INTEGER   NOT NULL,
    end         INTEGER   NOT NULL,
    deviceId    INTEGER   NOT NULL,
    contextId   INTEGER   NOT NULL,
    streamId    INTEGER   NOT NULL,
    correlationId INTEGER,
    globalPid   INTEGER,
    demangledName INTEGER NOT NULL,
    shortName   INTEGER   NOT NULL,
    mangledName INTEGER,
    registersPerThread INTEGER NOT NULL,
    gridX       INTEGER   NOT NULL,
    gridY       INTEGER   NOT NULL,
    gridZ       INTEGER   NOT NULL,
    blockX      INTEGER   NOT NULL,
    blockY      INTEGER   NOT NULL,
    blockZ      INTEGER   NOT NULL,
    staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start       INTEGER   NOT NULL,
    end         INTEGER   NOT NULL,
    deviceId    INTEGER   NOT NULL,
    contextId   INTEGER   NOT NULL,
    streamId    INTEGER   NOT NULL,
    correlationId INTEGER,
    globalPid   INTEGER,
    bytes       INTEGER   NOT NULL,
    copyKind    INTEGER   NOT NULL,
    srcKind     INTEGER,
    dstKind     INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start       INTEGER   NOT NULL,
    end         INTEGER   NOT NULL,
    deviceId    INTEGER   NOT NULL,
    contextId   INTEGER   NOT NULL,
    streamId    INTEGER   NOT NULL,
    correlationId INTEGER,
    globalPid   INTEGER,
    value       INTEGER   NOT NULL,
    bytes       INTEGER   NOT NULL,
    memKind     INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start       INTEGER   NOT NULL,
    end         INTEGER   NOT NULL,
    deviceId    INTEGER,
    contextId   INTEGER   NOT NULL,
    streamId    INTEGER   NOT NULL,
    correlationId INTEGER,
    globalPid   INTEGER,
    syncType    INTEGER   NOT NULL,
    eventId     INTEGER   NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start       INTEGER   NOT NULL,
    end         INTEGER   NOT NULL,
    eventClass  INTEGER   NOT NULL,
    globalTid   INTEGER,
    correlationId INTEGER,
    nameId      INTEGER   NOT NULL,
    returnValue INTEGER   NOT NULL
);
";

/// Nsight's `eventClass` of CUDA runtime API rows (`ENUM_NSYS_EVENT_CLASS`).
const RUNTIME_CLASS: i64 = 0;

impl Writer<'_> {
    /// A traced API call: a `CUPTI_ACTIVITY_KIND_RUNTIME` row.
    pub(super) fn launch_row(&mut self, p: &Process, l: &Launch) -> std::io::Result<()> {
        let name = self.string(&l.api).map_err(io)?;
        let (start, end) = (self.time(l.start), self.time(l.end));
        self.tx
            .prepare_cached(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    start,
                    end,
                    RUNTIME_CLASS,
                    global_tid(p, l.tid),
                    l.correlation,
                    name
                ])
            })
            .map(drop)
            .map_err(io)
    }

    /// A kernel, copy, set or synchronization: a row of its table (and its
    /// device's `TARGET_INFO_GPU` row the first time).
    pub(super) fn gpu_row(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        let a = g.activity;
        let gpid = global_pid(p);
        if self.gpus.insert((gpid, a.device)) {
            self.tx
                .prepare_cached("INSERT INTO TARGET_INFO_GPU VALUES (?1, ?2, ?3)")
                .and_then(|mut s| s.execute(params![a.device, format!("GPU {}", a.device), gpid]))
                .map_err(io)?;
        }
        let (start, end) = (self.time(a.start), self.time(a.end));
        let common = params![
            start,
            end,
            a.device,
            a.context,
            a.stream,
            a.correlation,
            gpid
        ];
        let mut values: Vec<&dyn rusqlite::ToSql> = common.to_vec();
        let (table, more): (&str, Vec<i64>) = match Tag::from_byte(a.tag) {
            Some(Tag::Kernel) => {
                let demangled = crate::demangle::demangle(g.name);
                let short = short_name(&demangled).to_string();
                let ids = [
                    self.string(&demangled).map_err(io)?,
                    self.string(&short).map_err(io)?,
                    self.string(g.name).map_err(io)?,
                ];
                let mut more = ids.to_vec();
                more.push(a.registers.into());
                more.extend(a.grid.iter().chain(&a.block).map(|&v| i64::from(v)));
                more.extend([i64::from(a.static_shared), i64::from(a.dynamic_shared)]);
                ("CUPTI_ACTIVITY_KIND_KERNEL", more)
            }
            Some(Tag::Memcpy) => (
                "CUPTI_ACTIVITY_KIND_MEMCPY",
                vec![
                    a.bytes as i64,
                    a.copy_kind.into(),
                    a.src_kind.into(),
                    a.dst_kind.into(),
                ],
            ),
            Some(Tag::Memset) => (
                "CUPTI_ACTIVITY_KIND_MEMSET",
                vec![a.copy_kind.into(), a.bytes as i64, a.src_kind.into()],
            ),
            _ => (
                "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                vec![a.sync_type.into(), a.event.into()],
            ),
        };
        values.extend(more.iter().map(|v| v as &dyn rusqlite::ToSql));
        let marks: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
        let sql = format!("INSERT INTO {table} VALUES ({})", marks.join(", "));
        self.tx
            .prepare_cached(&sql)
            .and_then(|mut s| s.execute(values.as_slice()))
            .map(drop)
            .map_err(io)
    }
}

/// A kernel's short name, as Nsight's `shortName`: the demangled name
/// without its parameters, template arguments and scopes.
fn short_name(demangled: &str) -> &str {
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
