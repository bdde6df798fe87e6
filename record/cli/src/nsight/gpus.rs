//! Which GPU each process's CUDA device is: a `TARGET_INFO_GPU` row per
//! GPU, a `TARGET_INFO_CUDA_DEVICE` row per process and device, written as
//! a replay meets each device's first activity.

use super::export::Store;
use super::{global_pid, Value, CUDA_DEVICES, TARGET_INFO_GPU};
use crate::model::Process;
use hashbrown::{HashMap, HashSet};
use nvtxr_record_format::gpu::{Device, Limits};
use std::io::Result;

/// The GPUs written so far.
#[derive(Default)]
pub(super) struct Gpus {
    /// The devices met, by (globalPid, CUDA device).
    met: HashSet<(i64, u32)>,
    /// Each GPU's `id`, by what tells it apart.
    ids: HashMap<Identity, i64>,
}

/// What tells a GPU apart: its UUID, the same in every process on any
/// host; else (files before the UUID was recorded, a CUPTI that gave none)
/// the process's device, a GPU of its own.
#[derive(PartialEq, Eq, Hash)]
enum Identity {
    Uuid(String),
    Device(i64, u32),
}

impl Gpus {
    /// Process `p`'s CUDA device `device` (CUPTI's description of it:
    /// `gpu`) has activity: its rows, the first time.
    pub(super) fn meet(
        &mut self,
        store: &mut impl Store,
        p: &Process,
        device: u32,
        gpu: Option<&Device>,
    ) -> Result<()> {
        let gpid = global_pid(p);
        if !self.met.insert((gpid, device)) {
            return Ok(());
        }
        let identity = match gpu.filter(|d| !d.uuid.is_empty()) {
            Some(d) => Identity::Uuid(d.uuid.to_string()),
            None => Identity::Device(gpid, device),
        };
        let id = match self.ids.get(&identity) {
            Some(&id) => id,
            None => {
                // Numbered as the first process to use it numbers it, where
                // no other GPU has that number: one process's GPUs keep
                // their CUDA numbers, so `deviceId = id` joins them.
                let mut id = i64::from(device);
                while self.ids.values().any(|&taken| taken == id) {
                    id += 1;
                }
                let _ = self.ids.insert(identity, id);
                store_gpu(store, p, id, device, gpu)?;
                id
            }
        };
        let uuid = gpu.map(|d| &*d.uuid).filter(|u| !u.is_empty());
        let row = [
            Value::int(id),
            Value::int(device),
            Value::int(p.pid),
            Value::Text(uuid),
            Value::Int(gpu.map(|d| d.multiprocessors.into())),
            Value::int(gpid),
        ];
        store.row(Some(p), &CUDA_DEVICES, &row)
    }
}

/// The GPU's `TARGET_INFO_GPU` row.
fn store_gpu<'d>(
    store: &mut impl Store,
    p: &Process,
    id: i64,
    device: u32,
    gpu: Option<&'d Device>,
) -> Result<()> {
    let known = |f: fn(&Device) -> i64| Value::Int(gpu.map(f));
    let text = |t: Option<&'d str>| Value::Text(t.filter(|t| !t.is_empty()));
    let name = match gpu.filter(|d| !d.name.is_empty()) {
        Some(d) => d.name.to_string(),
        None => format!("GPU {device}"),
    };
    // What CUPTI did not give (0) is NULL.
    let nonzero = |v: Option<i64>| Value::Int(v.filter(|v| *v != 0));
    let limit = |f: fn(&Limits) -> i64| nonzero(gpu.map(|d| f(&d.limits)));
    let mut row = vec![
        Value::int(id),
        Value::text(&name),
        text(gpu.map(|d| &*d.bus)),
        text(gpu.map(|d| &*d.uuid)),
        Value::Text(None),
        known(|d| d.memory as i64),
        nonzero(gpu.map(|d| (d.bandwidth_kbs as i64).saturating_mul(1000))),
        known(|d| d.multiprocessors.into()),
        known(|d| d.compute_major.into()),
        known(|d| d.compute_minor.into()),
        limit(|l| l.l2_cache.into()),
        // Nsight's clock is in Hz, CUPTI's in kHz.
        limit(|l| i64::from(l.clock_khz) * 1000),
        limit(|l| l.threads_per_warp.into()),
        limit(|l| l.threads_per_block.into()),
        limit(|l| l.registers_per_block.into()),
        limit(|l| l.shared_per_block.into()),
        limit(|l| l.warps_per_sm.into()),
        limit(|l| l.blocks_per_sm.into()),
        limit(|l| l.shared_per_sm.into()),
        limit(|l| l.registers_per_sm.into()),
        limit(|l| l.constant_memory.into()),
        limit(|l| l.max_ipc.into()),
        limit(|l| l.copy_engines.into()),
    ];
    for axis in 0..3 {
        row.push(nonzero(gpu.map(|d| d.limits.block_dims[axis].into())));
    }
    for axis in 0..3 {
        row.push(nonzero(gpu.map(|d| d.limits.grid_dims[axis].into())));
    }
    store.row(Some(p), &TARGET_INFO_GPU, &row)
}
