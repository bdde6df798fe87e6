//! The raw recording format, shared by the tool (which writes it) and the
//! `nvtxr` command (which reads it).
//!
//! A recording directory holds, per process, `<pid>.process` (the command
//! line, NUL-separated, then a line with the parent pid) and, per thread,
//! `<pid>-<tid>.events`: a sequence of little-endian records, each
//!
//! | size | field | present when |
//! |---|---|---|
//! | 1 | kind ([`Kind`]) | always |
//! | 1 | flags (the `HAS_*` bits) | always |
//! | 8 | timestamp, ns on CLOCK_MONOTONIC (shared by every process) | always |
//! | 4 | color (ARGB) | `HAS_COLOR` |
//! | 4 | category | `HAS_CATEGORY` |
//! | 1 + 8 | payload type (1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32) and bits | `HAS_PAYLOAD` |
//! | 8 | domain id (absent: the default domain, 0) | `HAS_DOMAIN` |
//! | 8 | value: range id, string id, thread id or category id, by kind | `HAS_VALUE` |
//! | 8 | id of the registered string that is the message | `HAS_STRING` |
//! | 4 + n | UTF-8 text: the message or name | `HAS_TEXT` |
//!
//! A pop in the default domain is 10 bytes; a push with a short message about 20.

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
