//! A chunk file: one thread's events.

use crate::decode::{decode, skim, Records};
use crate::layout::*;
use crate::process::{le_u32, le_u64};
use crate::record::Record;
use std::borrow::Cow;

/// One chunk of a thread's events, borrowed from the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chunk<'a> {
    pub tid: u32,
    /// The chunk's number in its image: a thread's chunks sort by it.
    pub seq: u32,
    /// The committed record bytes the file holds.
    body: &'a [u8],
    /// Committed bytes past the file's end (a truncated file).
    pub missing: u64,
}

impl<'a> Chunk<'a> {
    /// Reads a chunk file's header: its thread, number and committed bytes.
    pub fn parse(b: &'a [u8]) -> Result<Chunk<'a>, String> {
        if b.len() < CHUNK_HEADER || b[..8] != CHUNK_MAGIC {
            return Err("not an nvtxr chunk".into());
        }
        let committed = le_u64(b, CHUNK_COMMITTED);
        let body = &b[CHUNK_HEADER..];
        let end = usize::try_from(committed).map_or(body.len(), |c| c.min(body.len()));
        Ok(Chunk {
            tid: le_u32(b, CHUNK_TID),
            seq: le_u32(b, CHUNK_SEQ),
            body: &body[..end],
            missing: committed - end as u64,
        })
    }

    /// The committed records, decoded as they are read; they stop at a
    /// truncated or unknown record, and [`Records::unread`] then counts
    /// the committed bytes left (with [`Chunk::missing`]: a damaged or
    /// truncated file; a process killed mid-write leaves none, its last
    /// record was not committed).
    pub fn records(&self) -> Records<'a> {
        decode(self.body)
    }

    /// Its committed records as [`skim`] reads them (`time` gets every
    /// record's timestamp, `other` every record but events); returns the
    /// records read and the committed bytes not read (see [`Chunk::records`]).
    pub fn skim(
        &self,
        time: impl FnMut(u64),
        other: impl FnMut(Record<Cow<'a, str>>),
    ) -> (usize, usize) {
        skim(self.body, time, other)
    }
}
