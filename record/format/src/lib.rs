//! nvtxr's raw recording format: what the recording tool
//! (`libnvtxr_record.so`) writes and the `nvtxr` command reads.
//!
//! A recording directory ([`DIR_VAR`]) holds one folder per process image,
//! `<pid>.<n>` (`n` counts the images a pid ran: `exec` starts a new one),
//! holding
//!
//! - `process`: a [`PROCESS_SIZE`]-byte header (see [`ProcessHeader`]): pid,
//!   parent pid, the clock and its calibration, the count of events the tool
//!   had to drop, rank, world size, host and command line;
//! - `<n>.events`: chunks of one thread's events, each a [`CHUNK_HEADER`]-byte
//!   header (magic, committed length, thread id, the chunk's number `n`,
//!   which grows with each chunk the image makes, so it orders a thread's
//!   chunks) followed by records.
//!
//! Both are shared mappings of their files: an event is in the file (the
//! kernel's page cache) as soon as the committed length covers it, so a
//! process that dies by `_exit`, SIGKILL or a crash loses at most the event
//! it was writing. Each record is
//!
//! | size | field | present when |
//! |---|---|---|
//! | 1 | kind ([`Kind`]), plus [`ABSOLUTE`] | always |
//! | 1 | flags (the `HAS_*` bits) | always |
//! | 1–10 | timestamp, in the process's clock (see [`time`]): a varint of the zigzagged difference from the chunk's previous relative record (0 before the first); 8 bytes as is with [`ABSOLUTE`] | always |
//! | 4 | color (ARGB) | `HAS_COLOR` |
//! | 1–5 | category, varint | `HAS_CATEGORY` |
//! | 1 + 8 | payload type (1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32) and bits | `HAS_PAYLOAD` |
//! | 1–10 | domain id, varint (absent: the default domain, 0) | `HAS_DOMAIN` |
//! | 1–10 | value, varint: range id, string id, thread id, category id or ns, by kind | `HAS_VALUE` |
//! | 1–10 | id of the registered string that is the message, varint | `HAS_STRING` |
//! | 1–5 + n | UTF-8 text, its length a varint: the message or name | `HAS_TEXT` |
//!
//! Varints are LEB128 (7 bits a byte, low first). A pop in the default
//! domain takes 3 or 4 bytes; a push with a 5-byte message 9 or 10.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod time;

use time::{Anchor, Calibration, Clock, WallPair};

/// The variable naming the recording directory.
pub const DIR_VAR: &str = "NVTXR_RECORD_DIR";

/// First bytes of a chunk file.
pub const CHUNK_MAGIC: [u8; 8] = *b"NVTXRCK2";
/// Bytes before a chunk's first record.
pub const CHUNK_HEADER: usize = 64;
/// Offset of the committed length (u64, bytes of records after the header).
pub const CHUNK_COMMITTED: usize = 8;
/// Offset of the thread id (u32).
pub const CHUNK_TID: usize = 16;
/// Offset of the chunk's number in its image (u32; a thread's chunks sort by it).
pub const CHUNK_SEQ: usize = 20;

/// First bytes of a process header.
pub const PROCESS_MAGIC: [u8; 8] = *b"NVTXRPR2";
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
pub const PROCESS_COMMAND_MAX: usize = PROCESS_SIZE - PROCESS_COMMAND - 4 - 16;
/// Offset of the wall-clock pair (CLOCK_MONOTONIC ns, CLOCK_REALTIME ns), last.
const PROCESS_WALL: usize = PROCESS_SIZE - 16;

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
    /// wall clock (see [`Kind::WallClock`] for later readings).
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
    /// The chunk's number in its image: a thread's chunks sort by it.
    pub seq: u32,
    pub records: Vec<Record>,
    /// Committed bytes that could not be decoded: a damaged or truncated
    /// file (a process killed mid-write leaves none: its last record was
    /// not committed).
    pub unread: u64,
}

impl Chunk {
    /// Decodes a chunk file's committed records; stops at a truncated or
    /// unknown record and returns what came before it, counting the
    /// committed bytes left ([`Chunk::unread`]).
    pub fn decode(b: &[u8]) -> Result<Chunk, String> {
        if b.len() < CHUNK_HEADER || b[..8] != CHUNK_MAGIC {
            return Err("not an nvtxr chunk".into());
        }
        let committed = le_u64(b, CHUNK_COMMITTED);
        let tid = le_u32(b, CHUNK_TID);
        let seq = le_u32(b, CHUNK_SEQ);
        let body = &b[CHUNK_HEADER..];
        let end = usize::try_from(committed).map_or(body.len(), |c| c.min(body.len()));
        let (records, whole) = decode_counted(&body[..end]);
        Ok(Chunk {
            tid,
            seq,
            records,
            unread: committed - whole as u64,
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
/// In the kind byte: the timestamp is 8 bytes as is, not relative (what a
/// signal handler's events, encoded before their place in the chunk is
/// known, use). Relative records do not see absolute ones.
pub const ABSOLUTE: u8 = 0x80;

/// The most bytes a record takes besides its text.
pub const MAX_FIXED: usize = 2 + 10 + 4 + 5 + 9 + 10 + 10 + 10 + 5;

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
    /// Right after an anchor, the same instant on CLOCK_REALTIME: `value`,
    /// in ns since the epoch. Places the recording on the wall clock, to
    /// merge recordings of several hosts.
    WallClock = 12,
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
            12 => Kind::WallClock,
            _ => return None,
        })
    }
}

/// One record. The recording tool encodes records whose text borrows the
/// producer's string; decoding gives `Record<String>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<T = String> {
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
    pub text: Option<T>,
}

impl<T> Record<T> {
    /// A record with only a kind, domain, value and text (timestamp 0).
    pub fn simple(kind: Kind, domain: u64, value: u64, text: Option<T>) -> Self {
        Record {
            kind,
            timestamp: 0,
            color: None,
            category: 0,
            payload: (0, 0),
            domain,
            value,
            string: None,
            text,
        }
    }
}

/// A record's text as the encoder sees it.
pub trait Text {
    /// The bytes it takes in the record.
    fn encoded_len(&self) -> usize;
    /// Writes exactly `encoded_len()` bytes of UTF-8 to `out`'s start.
    fn write(&self, out: &mut [u8]);
}

impl Text for &[u8] {
    fn encoded_len(&self) -> usize {
        self.len()
    }
    fn write(&self, out: &mut [u8]) {
        out[..self.len()].copy_from_slice(self);
    }
}

impl Text for String {
    fn encoded_len(&self) -> usize {
        self.len()
    }
    fn write(&self, out: &mut [u8]) {
        self.as_bytes().write(out)
    }
}

/// How a record's timestamp is written.
pub enum Stamp<'a> {
    /// Relative to the chunk's previous relative record, whose timestamp
    /// this holds (0 at a chunk's start); updated to the record's.
    Relative(&'a mut u64),
    /// As is: the record can go anywhere in a chunk.
    Absolute,
}

/// The bytes `r` takes when encoded, at most.
pub fn max_len(r: &Record<impl Text>) -> usize {
    MAX_FIXED + r.text.as_ref().map_or(0, Text::encoded_len)
}

/// Writes one record at the start of `out`; returns its length. `out` must
/// have room for [`max_len`] bytes (checked once, up front: the fields are
/// then stored without further bounds checks).
#[inline]
pub fn encode(out: &mut [u8], stamp: Stamp, r: &Record<impl Text>) -> usize {
    let text_len = r.text.as_ref().map_or(0, Text::encoded_len);
    assert!(out.len() >= MAX_FIXED + text_len, "no room for the record");
    let mut flags = 0;
    // SAFETY: every `w` call below stays within the MAX_FIXED + text_len bytes
    // checked above.
    unsafe {
        let (mut w, kind) = Writer::start(out.as_mut_ptr(), stamp, r.kind, r.timestamp);
        if let Some(c) = r.color {
            flags |= HAS_COLOR;
            w.bytes(&c.to_le_bytes());
        }
        if r.category != 0 {
            flags |= HAS_CATEGORY;
            w.varint(r.category.into());
        }
        if r.payload.0 != 0 {
            flags |= HAS_PAYLOAD;
            w.bytes(&[r.payload.0]);
            w.bytes(&r.payload.1.to_le_bytes());
        }
        flags |= w.domain_and_value(r.domain, r.value);
        if let Some(s) = r.string {
            flags |= HAS_STRING;
            w.varint(s);
        }
        if let Some(text) = &r.text {
            flags |= HAS_TEXT;
            w.varint(text_len as u64);
            text.write(std::slice::from_raw_parts_mut(w.base.add(w.at), text_len));
            w.at += text_len;
        }
        w.finish(kind, flags)
    }
}

/// The longest text [`encode_simple`] takes (its length is one varint byte).
pub const SIMPLE_TEXT_MAX: usize = 127;

/// [`encode`] for the commonest records, the fast way: a relative
/// timestamp, a kind, a domain, a value and a C string's text (or none), as
/// `encode` writes `Record::simple(kind, domain, value, text)`. The text is
/// copied as it is scanned, so it is read once. Returns `None`, having
/// changed nothing, when the text is longer than [`SIMPLE_TEXT_MAX`] bytes
/// (take `encode`).
///
/// # Safety
/// `out` has room for `MAX_FIXED + SIMPLE_TEXT_MAX` bytes; `text` is NULL
/// or NUL-terminated.
#[inline(always)]
pub unsafe fn encode_simple(
    out: *mut u8,
    previous: &mut u64,
    timestamp: u64,
    kind: Kind,
    domain: u64,
    value: u64,
    text: *const std::ffi::c_char,
) -> Option<usize> {
    let mut stamp = *previous;
    // SAFETY: the header, domain and value take at most MAX_FIXED bytes, the
    // text's length byte and bytes at most 1 + SIMPLE_TEXT_MAX more.
    unsafe {
        let (mut w, kind) = Writer::start(out, Stamp::Relative(&mut stamp), kind, timestamp);
        let mut flags = w.domain_and_value(domain, value);
        if !text.is_null() {
            flags |= HAS_TEXT;
            let length = w.base.add(w.at);
            let mut n = 0;
            loop {
                let b = *text.add(n) as u8;
                if b == 0 {
                    break;
                }
                if n == SIMPLE_TEXT_MAX {
                    return None;
                }
                *length.add(1 + n) = b;
                n += 1;
            }
            *length = n as u8;
            w.at += 1 + n;
        }
        *previous = stamp;
        Some(w.finish(kind, flags))
    }
}

/// Stores bytes without bounds checks (`encode` checks once for all).
struct Writer {
    base: *mut u8,
    at: usize,
}

impl Writer {
    /// Starts a record at `out`: room for its kind and flags, then its
    /// timestamp. Returns the writer and the kind byte.
    ///
    /// # Safety
    /// Room for 2 + 10 bytes at `out`.
    #[inline(always)]
    unsafe fn start(out: *mut u8, stamp: Stamp, kind: Kind, timestamp: u64) -> (Writer, u8) {
        let mut w = Writer { base: out, at: 2 };
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let kind = match stamp {
                Stamp::Relative(previous) => {
                    let delta = timestamp.wrapping_sub(*previous) as i64;
                    w.varint(((delta << 1) ^ (delta >> 63)) as u64);
                    *previous = timestamp;
                    kind as u8
                }
                Stamp::Absolute => {
                    w.bytes(&timestamp.to_le_bytes());
                    kind as u8 | ABSOLUTE
                }
            };
            (w, kind)
        }
    }

    /// Writes the domain and value fields when they are not 0; returns their flags.
    ///
    /// # Safety
    /// Room for 20 more bytes.
    #[inline(always)]
    unsafe fn domain_and_value(&mut self, domain: u64, value: u64) -> u8 {
        let mut flags = 0;
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            if domain != 0 {
                flags |= HAS_DOMAIN;
                self.varint(domain);
            }
            if value != 0 {
                flags |= HAS_VALUE;
                self.varint(value);
            }
        }
        flags
    }

    /// Ends the record: its kind and flags bytes; returns its length.
    ///
    /// # Safety
    /// The record was started with [`Writer::start`].
    #[inline(always)]
    unsafe fn finish(self, kind: u8, flags: u8) -> usize {
        // SAFETY: the first two bytes were kept for these.
        unsafe {
            *self.base = kind;
            *self.base.add(1) = flags;
        }
        self.at
    }

    /// # Safety
    /// Room for `b.len()` more bytes.
    #[inline(always)]
    unsafe fn bytes(&mut self, b: &[u8]) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            std::ptr::copy_nonoverlapping(b.as_ptr(), self.base.add(self.at), b.len());
            self.at += b.len();
        }
    }

    /// # Safety
    /// Room for 10 more bytes.
    #[inline(always)]
    unsafe fn varint(&mut self, mut v: u64) {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            while v >= 0x80 {
                *self.base.add(self.at) = v as u8 | 0x80;
                self.at += 1;
                v >>= 7;
            }
            *self.base.add(self.at) = v as u8;
            self.at += 1;
        }
    }
}

/// Reads fields from a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The previous relative record's timestamp.
    previous: u64,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
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
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
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
        let kind_byte = self.u8()?;
        let kind = Kind::from_u8(kind_byte & !ABSOLUTE)?;
        let flags = self.u8()?;
        let timestamp = if kind_byte & ABSOLUTE != 0 {
            self.u64()?
        } else {
            let zigzag = self.varint()?;
            let delta = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
            self.previous = self.previous.wrapping_add(delta as u64);
            self.previous
        };
        let color = self.when(flags, HAS_COLOR, Self::u32)?;
        let category = self.when(flags, HAS_CATEGORY, Self::varint)?.unwrap_or(0);
        let payload = self
            .when(flags, HAS_PAYLOAD, |r| Some((r.u8()?, r.u64()?)))?
            .unwrap_or((0, 0));
        let domain = self.when(flags, HAS_DOMAIN, Self::varint)?.unwrap_or(0);
        let value = self.when(flags, HAS_VALUE, Self::varint)?.unwrap_or(0);
        let string = self.when(flags, HAS_STRING, Self::varint)?;
        let text = self.when(flags, HAS_TEXT, |r| {
            let n = usize::try_from(r.varint()?).ok()?;
            r.take(n).map(|b| String::from_utf8_lossy(b).into_owned())
        })?;
        Some(Record {
            kind,
            timestamp,
            color,
            category: u32::try_from(category).ok()?,
            payload,
            domain,
            value,
            string,
            text,
        })
    }
}

/// Decodes the records of a chunk's record bytes; stops at a truncated or
/// unknown record (a process killed mid-write) and returns what came before it.
pub fn decode(bytes: &[u8]) -> Vec<Record> {
    decode_counted(bytes).0
}

/// [`decode`], and how many bytes the complete records take.
fn decode_counted(bytes: &[u8]) -> (Vec<Record>, usize) {
    let mut reader = Reader {
        bytes,
        at: 0,
        previous: 0,
    };
    let mut whole = 0;
    let records = std::iter::from_fn(|| {
        let r = reader.record()?;
        whole = reader.at;
        Some(r)
    })
    .collect();
    (records, whole)
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
                kind: Clock::Tsc,
                ticks_per_second: 2.5e9,
                anchor: Anchor { ticks: 11, ns: 22 },
            },
            rank: Some(3),
            world: Some(8),
            host: "node-17".into(),
            wall: WallPair {
                monotonic: 5,
                wall: 1_700_000_000_000_000_000,
            },
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
        // One 10-byte absolute pop record, committed; garbage after it, not committed.
        b[CHUNK_HEADER] = Kind::Pop as u8 | ABSOLUTE;
        b[CHUNK_HEADER + 2..CHUNK_HEADER + 10].copy_from_slice(&77u64.to_le_bytes());
        b[CHUNK_HEADER + 10] = Kind::Mark as u8;
        b[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&10u64.to_le_bytes());
        let chunk = Chunk::decode(&b).unwrap();
        assert_eq!((chunk.tid, chunk.records.len(), chunk.unread), (9, 1, 0));
        assert_eq!(
            (chunk.records[0].kind, chunk.records[0].timestamp),
            (Kind::Pop, 77)
        );
        assert!(Chunk::decode(&b[..8]).is_err(), "too short");
        // Cut inside the committed record, or past it: what is missing is counted.
        assert_eq!(Chunk::decode(&b[..CHUNK_HEADER + 4]).unwrap().unread, 10);
        b[CHUNK_HEADER + 10] = 0;
        b[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&1000u64.to_le_bytes());
        let past = Chunk::decode(&b).unwrap();
        assert_eq!((past.records.len(), past.unread), (1, 990));
    }

    fn full(timestamp: u64) -> Record {
        Record {
            kind: Kind::Push,
            timestamp,
            color: Some(0xff00_ff00),
            category: 70_000,
            payload: (3, 2.5f64.to_bits()),
            domain: 300,
            value: u64::MAX,
            string: Some(1),
            text: Some("étape 1".into()),
        }
    }

    /// Encodes `records` one after another, the `absolute` ones as a signal handler's are.
    fn encode_all(records: &[(Record, bool)]) -> Vec<u8> {
        let mut out = vec![0u8; 4096];
        let (mut at, mut previous) = (0, 0);
        for (r, absolute) in records {
            let stamp = if *absolute {
                Stamp::Absolute
            } else {
                Stamp::Relative(&mut previous)
            };
            at += encode(&mut out[at..], stamp, r);
        }
        out.truncate(at);
        out
    }

    #[test]
    fn simple_records_encode_as_encode_does() {
        let long = "x".repeat(SIMPLE_TEXT_MAX);
        let texts: [Option<&str>; 4] = [None, Some(""), Some("range"), Some(&long)];
        let kinds = [Kind::Push, Kind::Pop, Kind::Mark, Kind::Start, Kind::End];
        for (kind, text) in kinds
            .iter()
            .flat_map(|k| texts.iter().map(move |t| (*k, *t)))
        {
            for (domain, value, previous, timestamp) in [
                (0, 0, 0, 5),
                (3, 0, 1_000, 900),
                (300, 1 << 40, 7, u64::MAX),
            ] {
                let mut record = Record::simple(kind, domain, value, text.map(str::as_bytes));
                record.timestamp = timestamp;
                let mut expected = [0u8; MAX_FIXED + SIMPLE_TEXT_MAX];
                let mut p = previous;
                let n = encode(&mut expected, Stamp::Relative(&mut p), &record);
                let mut got = [0u8; MAX_FIXED + SIMPLE_TEXT_MAX];
                let mut q = previous;
                let c = text.map(|t| std::ffi::CString::new(t).unwrap());
                let c_ptr = c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
                // SAFETY: room for MAX_FIXED + SIMPLE_TEXT_MAX; a C string or NULL.
                let m = unsafe {
                    encode_simple(
                        got.as_mut_ptr(),
                        &mut q,
                        timestamp,
                        kind,
                        domain,
                        value,
                        c_ptr,
                    )
                };
                assert_eq!(m, Some(n), "{kind:?} {text:?}");
                assert_eq!(got[..n], expected[..n], "{kind:?} {text:?}");
                assert_eq!(q, p);
            }
        }
        // One byte too long: refused, nothing changed.
        let too_long = std::ffi::CString::new("x".repeat(SIMPLE_TEXT_MAX + 1)).unwrap();
        let mut out = [0u8; MAX_FIXED + SIMPLE_TEXT_MAX];
        let mut previous = 11;
        // SAFETY: as above.
        let refused = unsafe {
            encode_simple(
                out.as_mut_ptr(),
                &mut previous,
                99,
                Kind::Mark,
                0,
                0,
                too_long.as_ptr(),
            )
        };
        assert_eq!((refused, previous), (None, 11));
    }

    #[test]
    fn records_round_trip() {
        let records = vec![
            (full(1_000_000_000_000), false),
            (Record::simple(Kind::Pop, 0, 0, None), false),
            // Out of order: the clock read by a handler, or a migrated thread's counter.
            (
                Record::simple(Kind::Mark, 0, 0, Some("from a handler".into())),
                true,
            ),
            (Record::simple(Kind::Mark, 7, 0, Some(String::new())), false),
            (full(u64::MAX), false),
            (full(0), false),
        ];
        let mut stamped = records.clone();
        let times = [
            1_000_000_000_000,
            1_000_000_000_040,
            999,
            1_000_000_000_020,
            u64::MAX,
            0,
        ];
        for ((r, _), t) in stamped.iter_mut().zip(times) {
            r.timestamp = t;
        }
        let bytes = encode_all(&stamped);
        let decoded = decode(&bytes);
        let expected: Vec<Record> = stamped.into_iter().map(|(r, _)| r).collect();
        assert_eq!(decoded, expected);
    }

    #[test]
    fn common_records_are_small() {
        let mut previous = 1_000;
        let mut out = [0u8; 256];
        let mut pop = Record::<&[u8]>::simple(Kind::Pop, 0, 0, None);
        pop.timestamp = 1_060;
        assert_eq!(encode(&mut out, Stamp::Relative(&mut previous), &pop), 3);
        let mut push = Record::simple(Kind::Push, 0, 0, Some(&b"range"[..]));
        push.timestamp = 1_200;
        assert_eq!(encode(&mut out, Stamp::Relative(&mut previous), &push), 10);
        assert_eq!(previous, 1_200);
    }

    #[test]
    fn a_truncated_record_ends_the_stream() {
        let records = [
            (full(5), false),
            (Record::simple(Kind::Pop, 0, 0, None), false),
        ];
        let bytes = encode_all(&records);
        for cut in 0..bytes.len() {
            let decoded = decode(&bytes[..cut]);
            assert!(decoded.len() < 2, "cut at {cut}");
            assert!(decoded.iter().all(|r| *r == records[0].0));
        }
        assert_eq!(decode(&bytes).len(), 2);
    }
}
