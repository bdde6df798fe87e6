//! Encoding records, as the recording tool writes them.

use crate::layout::*;
use crate::record::{Kind, Record, Stamp, Text};

/// The bytes `r` takes when encoded, at most.
pub fn max_len(r: &Record<impl Text>) -> usize {
    MAX_FIXED
        + r.text.as_ref().map_or(0, Text::encoded_len)
        + r.fields.as_ref().map_or(0, |f| 10 + f.encoded_len())
}

/// Writes one record at the start of `out`; returns its length. `out` must
/// have room for [`max_len`] bytes (checked once, up front: the fields are
/// then stored without further bounds checks).
#[inline]
pub fn encode(out: &mut [u8], stamp: Stamp, r: &Record<impl Text>) -> usize {
    assert!(out.len() >= max_len(r), "no room for the record");
    let mut flags = 0;
    // SAFETY: every `w` call below stays within the `max_len(r)` bytes
    // checked above.
    unsafe {
        let (mut w, kind) = Cursor::start(out.as_mut_ptr(), stamp, r.kind, r.timestamp);
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
            w.text(text);
        }
        if let Some(fields) = &r.fields {
            flags |= HAS_FIELDS;
            w.text(fields);
        }
        w.finish(kind, flags)
    }
}

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
        let (mut w, kind) = Cursor::start(out, Stamp::Relative(&mut stamp), kind, timestamp);
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
struct Cursor {
    base: *mut u8,
    at: usize,
}

impl Cursor {
    /// Starts a record at `out`: room for its kind and flags, then its
    /// timestamp. Returns the writer and the kind byte.
    ///
    /// # Safety
    /// Room for 2 + 10 bytes at `out`.
    #[inline(always)]
    unsafe fn start(out: *mut u8, stamp: Stamp, kind: Kind, timestamp: u64) -> (Cursor, u8) {
        let mut w = Cursor { base: out, at: 2 };
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            let kind = match stamp {
                Stamp::Relative(previous) => {
                    let delta = timestamp.wrapping_sub(*previous) as i64;
                    w.varint(crate::varint::zigzag(delta));
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
    /// The record was started with [`Cursor::start`].
    #[inline(always)]
    unsafe fn finish(self, kind: u8, flags: u8) -> usize {
        // SAFETY: the first two bytes were kept for these.
        unsafe {
            *self.base = kind;
            *self.base.add(1) = flags;
        }
        self.at
    }

    /// A text: its length, then its bytes.
    ///
    /// # Safety
    /// Room for 10 + `text.encoded_len()` more bytes.
    #[inline(always)]
    unsafe fn text(&mut self, text: &impl Text) {
        let len = text.encoded_len();
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            self.varint(len as u64);
            text.write(std::slice::from_raw_parts_mut(self.base.add(self.at), len));
        }
        self.at += len;
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
