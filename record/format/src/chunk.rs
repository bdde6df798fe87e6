//! A chunk file: one thread's events, or several threads' one after the
//! other (a thread that ended hands the rest of its chunk to a new one, see
//! [`Kind::Handoff`](crate::Kind::Handoff)).

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
    /// record's timestamp, `other` every record but events and handoffs):
    /// the records read, the committed bytes not read (see
    /// [`Chunk::records`]) and each thread's part of the chunk.
    pub fn skim(&self, time: impl FnMut(u64), other: impl FnMut(Record<Cow<'a, str>>)) -> Skim {
        let skimmed = skim(self.body, time, other);
        let mut segments = Vec::with_capacity(skimmed.handoffs.len() + 1);
        let (mut tid, mut from) = (self.tid, 0);
        let read = self.body.len() - skimmed.unread;
        let ends = skimmed.handoffs.iter().copied().chain([(0, read, read)]);
        for (next, to, after) in ends {
            if to > from {
                segments.push(Segment {
                    tid,
                    offset: CHUNK_HEADER + from,
                    len: to - from,
                });
            }
            (tid, from) = (next, after);
        }
        Skim {
            records: skimmed.records,
            unread: skimmed.unread,
            segments,
        }
    }
}

/// What [`Chunk::skim`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skim {
    /// Records read.
    pub records: usize,
    /// Committed bytes not read.
    pub unread: usize,
    /// Each thread's part of the chunk, in order (most chunks: one).
    pub segments: Vec<Segment>,
}

/// One thread's records in a chunk: all of it, or the part before, between
/// or after its handoffs. Its bytes decode on their own ([`decode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub tid: u32,
    /// The offset of its first byte in the chunk file.
    pub offset: usize,
    /// Its bytes.
    pub len: usize,
}
