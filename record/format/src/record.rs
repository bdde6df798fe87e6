//! A record: what one event (or name) says.

use std::borrow::Cow;

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
    /// A counter was registered (NVTX's counters extension): `domain` its
    /// domain, `value` its id, the text its name.
    CounterRegister = 13,
    /// A counter's sample: `domain` and `value` its counter, the payload
    /// its value (i64 or f64).
    CounterSample = 14,
    /// A CUDA API call, as nvtxr recorded launches before they came from
    /// CUPTI's records in the GPU file ([`Tag::Api`](crate::gpu::Tag::Api)):
    /// read in older recordings (their NVTX events stay readable), and
    /// ignored; never written.
    Launch = 15,
    /// The chunk passes to another thread (one that ended left the rest of
    /// its chunk to a new one): from here on the records are thread
    /// `value`'s, and relative timestamps start again from 0, as at a
    /// chunk's start. Written with an absolute timestamp.
    Handoff = 16,
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
            13 => Kind::CounterRegister,
            14 => Kind::CounterSample,
            15 => Kind::Launch,
            16 => Kind::Handoff,
            _ => return None,
        })
    }

    /// Whether the record is an event (a mark, a range's start or end, a
    /// counter's sample), as opposed to a name or a clock reading.
    pub fn is_event(self) -> bool {
        matches!(
            self,
            Kind::Mark | Kind::Push | Kind::Pop | Kind::Start | Kind::End | Kind::CounterSample
        )
    }
}

/// One record. The recording tool encodes records whose text borrows the
/// producer's string; decoding gives `Record<Cow<str>>`, borrowed from the
/// chunk's bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<T> {
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
    /// The event's extended payloads (NVTX's payload extension), decoded by
    /// the tool: a JSON object's text, one member per payload.
    pub fields: Option<T>,
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
            fields: None,
        }
    }
}

impl Record<Cow<'_, str>> {
    /// The record with its texts owned: kept past its chunk's bytes.
    pub fn into_owned(self) -> Record<Cow<'static, str>> {
        let own = |t: Option<Cow<str>>| t.map(|t| Cow::Owned(t.into_owned()));
        Record {
            text: own(self.text),
            fields: own(self.fields),
            ..self
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

impl Text for Cow<'_, str> {
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
