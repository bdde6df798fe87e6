//! A process image's `process` file: its header.

use crate::layout::*;
use crate::time::{Anchor, Calibration, Clock, WallPair};

/// A process image, as its `process` file describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessHeader {
    pub pid: u32,
    pub parent: u32,
    /// Events the tool could not record (no file could be made, a full disk...).
    pub dropped: u64,
    pub calibration: Calibration,
    /// The process's rank and the world size under a parallel launcher
    /// (MPI, SLURM, torchrun), if it set them.
    pub rank: Option<u32>,
    pub world: Option<u32>,
    /// The host's name.
    pub host: String,
    /// CLOCK_MONOTONIC and CLOCK_REALTIME read together when the process
    /// started recording: where this host's monotonic clock sits on the
    /// wall clock (see [`crate::Kind::WallClock`] for later readings).
    pub wall: WallPair,
    /// NUL-separated arguments.
    pub command: Vec<u8>,
}

impl ProcessHeader {
    /// The header's bytes (the dropped counter at 0).
    pub fn encode(&self) -> [u8; PROCESS_SIZE] {
        let mut b = [0u8; PROCESS_SIZE];
        let command = &self.command[..self.command.len().min(PROCESS_COMMAND_MAX)];
        b[..8].copy_from_slice(&PROCESS_MAGIC);
        b[PROCESS_PID..PROCESS_PID + 4].copy_from_slice(&self.pid.to_le_bytes());
        b[PROCESS_PARENT..PROCESS_PARENT + 4].copy_from_slice(&self.parent.to_le_bytes());
        b[PROCESS_DROPPED..PROCESS_DROPPED + 8].copy_from_slice(&self.dropped.to_le_bytes());
        b[PROCESS_CLOCK] = self.calibration.kind as u8;
        let c = &self.calibration;
        b[PROCESS_RATE..PROCESS_RATE + 8].copy_from_slice(&c.ticks_per_second.to_le_bytes());
        b[PROCESS_ANCHOR..PROCESS_ANCHOR + 8].copy_from_slice(&c.anchor.ticks.to_le_bytes());
        b[PROCESS_ANCHOR + 8..PROCESS_ANCHOR + 16].copy_from_slice(&c.anchor.ns.to_le_bytes());
        let number = |v: Option<u32>| v.map_or(-1, |v| v as i32).to_le_bytes();
        b[PROCESS_RANK..PROCESS_RANK + 4].copy_from_slice(&number(self.rank));
        b[PROCESS_WORLD..PROCESS_WORLD + 4].copy_from_slice(&number(self.world));
        let host = &self.host.as_bytes()[..self.host.len().min(PROCESS_HOST_MAX - 1)];
        b[PROCESS_HOST..PROCESS_HOST + host.len()].copy_from_slice(host);
        b[PROCESS_COMMAND..PROCESS_COMMAND + 4]
            .copy_from_slice(&(command.len() as u32).to_le_bytes());
        b[PROCESS_COMMAND + 4..PROCESS_COMMAND + 4 + command.len()].copy_from_slice(command);
        b[PROCESS_WALL..PROCESS_WALL + 8].copy_from_slice(&self.wall.monotonic.to_le_bytes());
        b[PROCESS_WALL + 8..PROCESS_WALL + 16].copy_from_slice(&self.wall.wall.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<ProcessHeader, String> {
        if b.len() < PROCESS_SIZE || b[..8] != PROCESS_MAGIC {
            return Err("not an nvtxr process header".into());
        }
        let pid = le_u32(b, PROCESS_PID);
        let parent = le_u32(b, PROCESS_PARENT);
        let dropped = le_u64(b, PROCESS_DROPPED);
        let kind = Clock::from_u8(b[PROCESS_CLOCK]).ok_or("unknown clock")?;
        let ticks_per_second = f64::from_bits(le_u64(b, PROCESS_RATE));
        let ticks = le_u64(b, PROCESS_ANCHOR);
        let ns = le_u64(b, PROCESS_ANCHOR + 8);
        let n = (le_u32(b, PROCESS_COMMAND) as usize).min(PROCESS_COMMAND_MAX);
        let command = b[PROCESS_COMMAND + 4..PROCESS_COMMAND + 4 + n].to_vec();
        let number = |at| u32::try_from(le_u32(b, at) as i32).ok();
        let host = &b[PROCESS_HOST..PROCESS_HOST + PROCESS_HOST_MAX];
        let host = &host[..host
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(PROCESS_HOST_MAX)];
        Ok(ProcessHeader {
            pid,
            parent,
            dropped,
            rank: number(PROCESS_RANK),
            world: number(PROCESS_WORLD),
            host: String::from_utf8_lossy(host).into_owned(),
            wall: WallPair {
                monotonic: le_u64(b, PROCESS_WALL),
                wall: le_u64(b, PROCESS_WALL + 8),
            },
            calibration: Calibration {
                kind,
                ticks_per_second,
                anchor: Anchor { ticks, ns },
            },
            command,
        })
    }
}

pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// This machine's host name, as process headers record it.
pub fn host_name() -> String {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes.
    if unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } != 0 {
        return String::new();
    }
    let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..len]).into_owned()
}
