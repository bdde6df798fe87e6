//! The raw recording format, shared by the tool (which writes it) and the
//! `nvtxr` command (which reads it).
//!
//! A recording directory holds, per process, `<pid>.process` (the command
//! line, NUL-separated) and, per thread, `<pid>-<tid>.events`: a sequence of
//! records, each a 56-byte little-endian header followed by `text_len` bytes
//! of UTF-8 text:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | kind ([`Kind`]) |
//! | 1 | 1 | message kind: 0 none, 1 text, 2 registered string |
//! | 2 | 1 | color type: 0 none, 1 ARGB |
//! | 3 | 1 | payload type: 0 none, 1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32 |
//! | 4 | 4 | category |
//! | 8 | 8 | timestamp, ns (CLOCK_MONOTONIC, the same clock in every process) |
//! | 16 | 8 | domain id (0: the default domain) |
//! | 24 | 8 | value: range id, string id, thread id, category id (by kind) |
//! | 32 | 4 | color (ARGB) |
//! | 36 | 4 | text length |
//! | 40 | 8 | payload bits |
//! | 48 | 8 | registered string id of the message (message kind 2) |

/// Header size in bytes.
pub const HEADER: usize = 56;

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
    /// An OS thread was named: `value` is its tid, the text the name.
    NameThread = 9,
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
            _ => return None,
        })
    }
}

/// Message kinds.
pub const MESSAGE_NONE: u8 = 0;
pub const MESSAGE_TEXT: u8 = 1;
pub const MESSAGE_REGISTERED: u8 = 2;

/// One record, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub kind: Kind,
    pub message_kind: u8,
    pub color_type: u8,
    pub payload_type: u8,
    pub category: u32,
    pub timestamp: u64,
    pub domain: u64,
    pub value: u64,
    /// The registered string id of the message.
    pub string_id: u64,
    pub color: u32,
    pub payload: u64,
    pub text: String,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Decodes the records of one events file; stops at a truncated or unknown
/// record (a process killed mid-write) and returns what came before it.
pub fn decode(bytes: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + HEADER <= bytes.len() {
        let h = &bytes[at..at + HEADER];
        let Some(kind) = Kind::from_u8(h[0]) else {
            break;
        };
        let end = at + HEADER + u32_at(h, 36) as usize;
        if end > bytes.len() {
            break;
        }
        out.push(Record {
            kind,
            message_kind: h[1],
            color_type: h[2],
            payload_type: h[3],
            category: u32_at(h, 4),
            timestamp: u64_at(h, 8),
            domain: u64_at(h, 16),
            value: u64_at(h, 24),
            string_id: u64_at(h, 48),
            color: u32_at(h, 32),
            payload: u64_at(h, 40),
            text: String::from_utf8_lossy(&bytes[at + HEADER..end]).into_owned(),
        });
        at = end;
    }
    out
}
