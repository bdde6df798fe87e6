//! The files' layout: names, magic numbers, offsets and field flags, in one
//! place (see the crate's documentation for the record format).

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
pub(crate) const PROCESS_PID: usize = 8;
pub(crate) const PROCESS_PARENT: usize = 12;
pub(crate) const PROCESS_CLOCK: usize = 24;
pub(crate) const PROCESS_RATE: usize = 32;
pub(crate) const PROCESS_ANCHOR: usize = 40;
pub(crate) const PROCESS_RANK: usize = 56;
pub(crate) const PROCESS_WORLD: usize = 60;
pub(crate) const PROCESS_HOST: usize = 64;
/// The most bytes of host name a header keeps.
pub const PROCESS_HOST_MAX: usize = 64;
pub(crate) const PROCESS_COMMAND: usize = PROCESS_HOST + PROCESS_HOST_MAX;
/// The most bytes of command line a header keeps.
pub const PROCESS_COMMAND_MAX: usize = PROCESS_SIZE - PROCESS_COMMAND - 4 - 16;
/// Offset of the wall-clock pair (CLOCK_MONOTONIC ns, CLOCK_REALTIME ns), last.
pub(crate) const PROCESS_WALL: usize = PROCESS_SIZE - 16;

pub const HAS_COLOR: u8 = 1;
pub const HAS_CATEGORY: u8 = 2;
pub const HAS_PAYLOAD: u8 = 4;
pub const HAS_DOMAIN: u8 = 8;
pub const HAS_VALUE: u8 = 16;
pub const HAS_STRING: u8 = 32;
pub const HAS_TEXT: u8 = 64;
/// The record holds a second text: its decoded extended payloads.
pub const HAS_FIELDS: u8 = 128;
/// In the kind byte: the timestamp is 8 bytes as is, not relative (what a
/// signal handler's events, encoded before their place in the chunk is
/// known, and deferred events, recorded after the fact, use). Relative
/// records do not see absolute ones.
pub const ABSOLUTE: u8 = 0x80;

/// The most bytes a record takes besides its texts and their lengths past
/// the first.
pub const MAX_FIXED: usize = 2 + 10 + 4 + 5 + 9 + 10 + 10 + 10 + 5;

/// The longest text [`encode_simple`](crate::encode_simple) takes (its
/// length is one varint byte).
pub const SIMPLE_TEXT_MAX: usize = 127;
