//! A chunk file: one thread's events.

use crate::decode::decode_counted;
use crate::layout::*;
use crate::process::{le_u32, le_u64};
use crate::record::Record;

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
