//! Decoding records, as `nvtxr` reads them: borrowed from the bytes, so
//! decoding allocates nothing (a text that is not UTF-8 is the exception).

use crate::layout::*;
use crate::record::{Kind, Record};
use std::borrow::Cow;

/// Reads fields from a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The previous relative record's timestamp.
    previous: u64,
    /// Whether events' texts and fields are decoded (else skipped: see [`skim`]).
    event_texts: bool,
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
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        self.take(n)
    }
    fn text(&mut self) -> Option<Cow<'a, str>> {
        self.bytes().map(text)
    }
    /// A text that is skipped: read past, `None`.
    fn skipped(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.bytes().map(|_| None)
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
    fn record(&mut self) -> Option<Record<Cow<'a, str>>> {
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
        let (text, fields) = if self.event_texts || kind.names() {
            (
                self.when(flags, HAS_TEXT, Self::text)?,
                self.when(flags, HAS_FIELDS, Self::text)?,
            )
        } else {
            (
                self.when(flags, HAS_TEXT, Self::skipped)?.flatten(),
                self.when(flags, HAS_FIELDS, Self::skipped)?.flatten(),
            )
        };
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
    records(bytes, true)
}

/// As [`decode`], but events (marks, ranges, counter samples) come without
/// their text and fields, which are skipped unread: for a pass that needs
/// only names, clocks and times.
pub fn skim(bytes: &[u8]) -> Records<'_> {
    records(bytes, false)
}

fn records(bytes: &[u8], event_texts: bool) -> Records<'_> {
    Records {
        reader: Reader {
            bytes,
            at: 0,
            previous: 0,
            event_texts,
        },
        whole: 0,
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
        let r = self.reader.record()?;
        self.whole = self.reader.at;
        Some(r)
    }
}
