//! Decoding records, as `nvtxr` reads them: borrowed from the bytes, so
//! decoding allocates nothing (a text that is not UTF-8 is the exception).

use crate::layout::*;
use crate::record::{Kind, Record};
use crate::varint::unzigzag;
use std::borrow::Cow;

/// Reads fields from a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The previous relative record's timestamp.
    previous: u64,
}

/// What a record starts with.
struct Head {
    kind: Kind,
    flags: u8,
    timestamp: u64,
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    #[inline(always)]
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
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        crate::varint::read(self.bytes, &mut self.at)
    }
    #[inline(always)]
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        self.take(n)
    }
    #[inline(always)]
    fn text(&mut self) -> Option<Cow<'a, str>> {
        self.bytes().map(text)
    }
    /// Reads past the fields `flags` says a record has.
    #[inline(always)]
    fn skip_fields(&mut self, flags: u8) -> Option<()> {
        // Most events: a text at most.
        if flags & !HAS_TEXT == 0 {
            if flags != 0 {
                self.bytes()?;
            }
            return Some(());
        }
        // The fields `body` reads, in its order.
        self.when(flags, HAS_COLOR, Self::u32)?;
        self.when(flags, HAS_CATEGORY, Self::varint)?;
        self.when(flags, HAS_PAYLOAD, |r| Some((r.u8()?, r.u64()?)))?;
        self.when(flags, HAS_DOMAIN, Self::varint)?;
        self.when(flags, HAS_VALUE, Self::varint)?;
        self.when(flags, HAS_STRING, Self::varint)?;
        self.when(flags, HAS_TEXT, Self::bytes)?;
        self.when(flags, HAS_FIELDS, Self::bytes)?;
        Some(())
    }
    #[inline(always)]
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
    #[inline(always)]
    fn head(&mut self) -> Option<Head> {
        let &[kind_byte, flags] = self.take(2)? else {
            unreachable!("two bytes taken")
        };
        let kind = Kind::from_u8(kind_byte & !ABSOLUTE)?;
        let timestamp = if kind_byte & ABSOLUTE != 0 {
            self.u64()?
        } else {
            let delta = unzigzag(self.varint()?);
            self.previous = self.previous.wrapping_add(delta as u64);
            self.previous
        };
        if kind == Kind::Handoff {
            self.previous = 0;
        }
        Some(Head {
            kind,
            flags,
            timestamp,
        })
    }

    /// The rest of the record `head` starts.
    #[inline(always)]
    fn body(&mut self, head: Head) -> Option<Record<Cow<'a, str>>> {
        let Head {
            kind,
            flags,
            timestamp,
        } = head;
        // Most records: a text at most.
        if flags & !HAS_TEXT == 0 {
            let text = self.when(flags, HAS_TEXT, Self::text)?;
            return Some(Record {
                timestamp,
                ..Record::simple(kind, 0, 0, text)
            });
        }
        let color = self.when(flags, HAS_COLOR, Self::u32)?;
        let category = self.when(flags, HAS_CATEGORY, Self::varint)?.unwrap_or(0);
        let payload = self
            .when(flags, HAS_PAYLOAD, |r| Some((r.u8()?, r.u64()?)))?
            .unwrap_or((0, 0));
        let domain = self.when(flags, HAS_DOMAIN, Self::varint)?.unwrap_or(0);
        let value = self.when(flags, HAS_VALUE, Self::varint)?.unwrap_or(0);
        let string = self.when(flags, HAS_STRING, Self::varint)?;
        let text = self.when(flags, HAS_TEXT, Self::text)?;
        let fields = self.when(flags, HAS_FIELDS, Self::text)?;
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
            fields,
        })
    }
}

/// `bytes` as text, invalid UTF-8 replaced. Most texts are short and ASCII:
/// checked a word at a time, where `from_utf8` and `from_utf8_lossy` walk
/// them byte by byte or in chunks, several times slower.
#[inline]
pub fn text(bytes: &[u8]) -> Cow<'_, str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        String::from_utf8_lossy(bytes)
    }
}

/// The records of a chunk's record bytes, decoded one at a time; they stop
/// at a truncated or unknown record (a process killed mid-write), after
/// what came before it.
pub fn decode(bytes: &[u8]) -> Records<'_> {
    Records {
        reader: Reader {
            bytes,
            at: 0,
            previous: 0,
        },
        whole: 0,
    }
}

/// What [`skim`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skimmed {
    /// Records read.
    pub records: usize,
    /// Bytes not read (as [`Records::unread`]).
    pub unread: usize,
    /// Each [`Kind::Handoff`] read: the thread it hands to and its record's
    /// byte range (start, end).
    pub handoffs: Vec<(u32, usize, usize)>,
}

/// The records as [`decode`] reads them, for a pass that needs only names,
/// clocks and times: `time` gets every record's timestamp, `other` every
/// record but events (marks, range starts and ends, counter samples),
/// decoded; the rest of an event is skipped unread.
pub fn skim<'a>(
    bytes: &'a [u8],
    mut time: impl FnMut(u64),
    mut other: impl FnMut(Record<Cow<'a, str>>),
) -> Skimmed {
    let mut reader = Reader {
        bytes,
        at: 0,
        previous: 0,
    };
    let (mut records, mut whole) = (0, 0);
    let mut handoffs = Vec::new();
    while let Some(head) = reader.head() {
        let timestamp = head.timestamp;
        if head.kind.is_event() {
            if reader.skip_fields(head.flags).is_none() {
                break;
            }
        } else {
            match reader.body(head) {
                Some(r) if r.kind == Kind::Handoff => {
                    handoffs.push((r.value as u32, whole, reader.at));
                }
                Some(r) => other(r),
                None => break,
            }
        }
        time(timestamp);
        records += 1;
        whole = reader.at;
    }
    Skimmed {
        records,
        unread: bytes.len() - whole,
        handoffs,
    }
}

/// The iterator of [`decode`].
pub struct Records<'a> {
    reader: Reader<'a>,
    /// Bytes of the records decoded so far.
    whole: usize,
}

impl Records<'_> {
    /// The bytes not decoded: once the records are all read, those after
    /// the last complete one (a damaged or truncated stream's).
    pub fn unread(&self) -> usize {
        self.reader.bytes.len() - self.whole
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<Cow<'a, str>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let head = self.reader.head()?;
        let r = self.reader.body(head)?;
        self.whole = self.reader.at;
        Some(r)
    }
}
