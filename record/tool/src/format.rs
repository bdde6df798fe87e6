//! The raw recording format, shared by the tool (which writes it) and the
//! `nvtxr` command (which reads it).
//!
//! A recording directory holds one folder per process image, `<pid>.<n>`
//! (`n` counts the images a pid ran: `exec` starts a new one), holding
//!
//! - `process`: a [`PROCESS_SIZE`]-byte header (see [`ProcessHeader`]): pid,
//!   parent pid, the clock and its calibration, the count of events the tool
//!   had to drop, and the command line;
//! - `<n>.events`: chunks of one thread's events, each a [`CHUNK_HEADER`]-byte
//!   header (magic, committed length, thread id, the chunk's number among
//!   the thread's) followed by records.
//!
//! Both are shared mappings of their files: an event is in the file (the
//! kernel's page cache) as soon as the committed length covers it, so a
//! process that dies by `_exit`, SIGKILL or a crash loses at most the event
//! it was writing. Each record is
//!
//! | size | field | present when |
//! |---|---|---|
//! | 1 | kind ([`Kind`]) | always |
//! | 1 | flags (the `HAS_*` bits) | always |
//! | 8 | timestamp, in the process's clock (see `clock`) | always |
//! | 4 | color (ARGB) | `HAS_COLOR` |
//! | 4 | category | `HAS_CATEGORY` |
//! | 1 + 8 | payload type (1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32) and bits | `HAS_PAYLOAD` |
//! | 8 | domain id (absent: the default domain, 0) | `HAS_DOMAIN` |
//! | 8 | value: range id, string id, thread id, category id or ns, by kind | `HAS_VALUE` |
//! | 8 | id of the registered string that is the message | `HAS_STRING` |
//! | 4 + n | UTF-8 text: the message or name | `HAS_TEXT` |
//!
//! A pop in the default domain is 10 bytes; a push with a short message about 20.

use crate::clock::{self, Anchor, Calibration};

/// First bytes of a chunk file.
pub const CHUNK_MAGIC: [u8; 8] = *b"NVTXRCK1";
/// Bytes before a chunk's first record.
pub const CHUNK_HEADER: usize = 64;
/// Offset of the committed length (u64, bytes of records after the header).
pub const CHUNK_COMMITTED: usize = 8;
/// Offset of the thread id (u32).
pub const CHUNK_TID: usize = 16;
/// Offset of the chunk's number among its thread's chunks (u32).
pub const CHUNK_SEQ: usize = 20;

/// First bytes of a process header.
pub const PROCESS_MAGIC: [u8; 8] = *b"NVTXRPR1";
/// Size of a `process` file.
pub const PROCESS_SIZE: usize = 4096;
/// Offset of the dropped-events counter (u64).
pub const PROCESS_DROPPED: usize = 16;
const PROCESS_PID: usize = 8;
const PROCESS_PARENT: usize = 12;
const PROCESS_CLOCK: usize = 24;
const PROCESS_RATE: usize = 32;
const PROCESS_ANCHOR: usize = 40;
const PROCESS_RANK: usize = 56;
const PROCESS_WORLD: usize = 60;
const PROCESS_HOST: usize = 64;
/// The most bytes of host name a header keeps.
pub const PROCESS_HOST_MAX: usize = 64;
const PROCESS_COMMAND: usize = PROCESS_HOST + PROCESS_HOST_MAX;
/// The most bytes of command line a header keeps.
pub const PROCESS_COMMAND_MAX: usize = PROCESS_SIZE - PROCESS_COMMAND - 4;

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
        b
    }

    pub fn decode(b: &[u8]) -> Result<ProcessHeader, String> {
        if b.len() < PROCESS_SIZE || b[..8] != PROCESS_MAGIC {
            return Err("not an nvtxr process header".into());
        }
        let pid = le_u32(b, PROCESS_PID);
        let parent = le_u32(b, PROCESS_PARENT);
        let dropped = le_u64(b, PROCESS_DROPPED);
        let kind = clock::Kind::from_u8(b[PROCESS_CLOCK]).ok_or("unknown clock")?;
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
            calibration: Calibration {
                kind,
                ticks_per_second,
                anchor: Anchor { ticks, ns },
            },
            command,
        })
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// One chunk of a thread's events.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub tid: u32,
    /// The chunk's number among its thread's chunks, from 0.
    pub seq: u32,
    pub records: Vec<Record>,
}

impl Chunk {
    /// Decodes a chunk file's committed records; stops at a truncated or
    /// unknown record and returns what came before it.
    pub fn decode(b: &[u8]) -> Result<Chunk, String> {
        if b.len() < CHUNK_HEADER || b[..8] != CHUNK_MAGIC {
            return Err("not an nvtxr chunk".into());
        }
        let committed = le_u64(b, CHUNK_COMMITTED) as usize;
        let tid = le_u32(b, CHUNK_TID);
        let seq = le_u32(b, CHUNK_SEQ);
        let end = (CHUNK_HEADER + committed).min(b.len());
        Ok(Chunk {
            tid,
            seq,
            records: decode(&b[CHUNK_HEADER..end]),
        })
    }
}

pub const HAS_COLOR: u8 = 1;
pub const HAS_CATEGORY: u8 = 2;
pub const HAS_PAYLOAD: u8 = 4;
pub const HAS_DOMAIN: u8 = 8;
pub const HAS_VALUE: u8 = 16;
pub const HAS_STRING: u8 = 32;
pub const HAS_TEXT: u8 = 64;

/// What a record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Mark = 1,
    Push = 2,
    Pop = 3,
    Start = 4,
    End = 5,
    /// A domain was created: `domain` is its id, the text its name.
    DomainCreate = 6,
    /// A string was registered: `value` is its id, the text the string.
    RegisterString = 7,
    /// A category was named: `value` is the category, the text the name.
    NameCategory = 8,
    /// An OS thread was named through NVTX: `value` is its tid, the text the name.
    NameThread = 9,
    /// A clock anchor: the timestamp in the process's clock, `value` the
    /// same instant in CLOCK_MONOTONIC ns.
    Anchor = 10,
    /// The OS's name of the recording thread (`pthread_setname_np`, `prctl`):
    /// the text. An NVTX name (`NameThread`) wins over it.
    OsThreadName = 11,
}

impl Kind {
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Mark,
            2 => Kind::Push,
            3 => Kind::Pop,
            4 => Kind::Start,
            5 => Kind::End,
            6 => Kind::DomainCreate,
            7 => Kind::RegisterString,
            8 => Kind::NameCategory,
            9 => Kind::NameThread,
            10 => Kind::Anchor,
            11 => Kind::OsThreadName,
            _ => return None,
        })
    }
}

/// One record, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub kind: Kind,
    pub timestamp: u64,
    pub color: Option<u32>,
    /// 0 means none.
    pub category: u32,
    /// `(type, bits)`; type 0 means none.
    pub payload: (u8, u64),
    pub domain: u64,
    pub value: u64,
    /// The registered string that is the message, if any.
    pub string: Option<u64>,
    /// The message or name; `None` when there is none.
    pub text: Option<String>,
}

/// Reads little-endian fields from a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }
    fn when<T>(
        &mut self,
        flags: u8,
        bit: u8,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        if flags & bit != 0 {
            read(self).map(Some)
        } else {
            Some(None)
        }
    }
    fn record(&mut self) -> Option<Record> {
        let kind = Kind::from_u8(self.u8()?)?;
        let flags = self.u8()?;
        let timestamp = self.u64()?;
        let color = self.when(flags, HAS_COLOR, Self::u32)?;
        let category = self.when(flags, HAS_CATEGORY, Self::u32)?.unwrap_or(0);
        let payload = self
            .when(flags, HAS_PAYLOAD, |r| Some((r.u8()?, r.u64()?)))?
            .unwrap_or((0, 0));
        let domain = self.when(flags, HAS_DOMAIN, Self::u64)?.unwrap_or(0);
        let value = self.when(flags, HAS_VALUE, Self::u64)?.unwrap_or(0);
        let string = self.when(flags, HAS_STRING, Self::u64)?;
        let text = self.when(flags, HAS_TEXT, |r| {
            let n = r.u32()? as usize;
            r.take(n).map(|b| String::from_utf8_lossy(b).into_owned())
        })?;
        Some(Record {
            kind,
            timestamp,
            color,
            category,
            payload,
            domain,
            value,
            string,
            text,
        })
    }
}

/// Decodes the records of one events file; stops at a truncated or unknown
/// record (a process killed mid-write) and returns what came before it.
pub fn decode(bytes: &[u8]) -> Vec<Record> {
    let mut reader = Reader { bytes, at: 0 };
    std::iter::from_fn(|| reader.record()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_header_round_trips() {
        let header = ProcessHeader {
            pid: 42,
            parent: 7,
            dropped: 3,
            calibration: Calibration {
                kind: clock::Kind::Tsc,
                ticks_per_second: 2.5e9,
                anchor: Anchor { ticks: 11, ns: 22 },
            },
            rank: Some(3),
            world: Some(8),
            host: "node-17".into(),
            command: b"python\0train.py\0".to_vec(),
        };
        assert_eq!(ProcessHeader::decode(&header.encode()), Ok(header.clone()));
        let alone = ProcessHeader {
            rank: None,
            world: None,
            ..header
        };
        assert_eq!(ProcessHeader::decode(&alone.encode()), Ok(alone));
    }

    #[test]
    fn a_chunk_stops_at_its_committed_length() {
        let mut b = vec![0u8; CHUNK_HEADER + 64];
        b[..8].copy_from_slice(&CHUNK_MAGIC);
        b[CHUNK_TID..CHUNK_TID + 4].copy_from_slice(&9u32.to_le_bytes());
        // One 10-byte pop record, committed; garbage after it, not committed.
        b[CHUNK_HEADER] = Kind::Pop as u8;
        b[CHUNK_HEADER + 2..CHUNK_HEADER + 10].copy_from_slice(&77u64.to_le_bytes());
        b[CHUNK_HEADER + 10] = Kind::Mark as u8;
        b[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&10u64.to_le_bytes());
        let chunk = Chunk::decode(&b).unwrap();
        assert_eq!((chunk.tid, chunk.records.len()), (9, 1));
        assert_eq!(
            (chunk.records[0].kind, chunk.records[0].timestamp),
            (Kind::Pop, 77)
        );
        assert!(Chunk::decode(&b[..8]).is_err(), "too short");
    }
}
