//! An event's text as the producer passed it (a C string or a wide one,
//! encoded without copying it first) or as the tool made it, cut to
//! [`MAX_TEXT`] bytes.

use nvtxr_record_format::{self as format, Record};
use std::ffi::{c_char, CStr};

/// Longer messages are cut to this many bytes.
pub const MAX_TEXT: usize = 64 << 10;

/// An event's text: the producer's string, cut to [`MAX_TEXT`] bytes.
#[derive(Clone)]
pub enum Text<'a> {
    Bytes(&'a [u8]),
    /// A NUL-terminated `wchar_t` (UTF-32) string, converted to UTF-8.
    Wide(*const i32),
    /// Text the tool made (decoded payloads).
    Owned(String),
}

impl Text<'_> {
    /// The text of a C string; `None` for NULL.
    ///
    /// # Safety
    /// `s` is NULL or NUL-terminated, and outlives the text.
    pub unsafe fn from_c<'a>(s: *const c_char) -> Option<Text<'a>> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe { (!s.is_null()).then(|| Text::Bytes(CStr::from_ptr(s).to_bytes())) }
    }
}

impl format::Text for Text<'_> {
    fn encoded_len(&self) -> usize {
        match self {
            Text::Bytes(b) => b.len().min(MAX_TEXT),
            // SAFETY: the producer passes a NUL-terminated wide string.
            Text::Wide(w) => unsafe { wide_utf8_len(*w) },
            // The longest prefix of at most MAX_TEXT bytes that ends on a
            // character boundary.
            Text::Owned(s) => (0..=MAX_TEXT.min(s.len()))
                .rev()
                .find(|&end| s.is_char_boundary(end))
                .unwrap_or(0),
        }
    }

    fn write(&self, out: &mut [u8]) {
        let len = self.encoded_len();
        match *self {
            // SAFETY: `out` has room for `len` bytes, which `b` has too.
            Text::Bytes(b) => unsafe {
                std::ptr::copy_nonoverlapping(b.as_ptr(), out.as_mut_ptr(), len)
            },
            Text::Owned(ref s) => out[..len].copy_from_slice(&s.as_bytes()[..len]),
            Text::Wide(w) => {
                let mut at = 0;
                // SAFETY: as in `encoded_len`.
                for c in unsafe { wide_chars(w) } {
                    if at + c.len_utf8() > len {
                        break;
                    }
                    at += c.encode_utf8(&mut out[at..]).len();
                }
            }
        }
    }
}

impl Text<'_> {
    /// The text as the record holds it (UTF-8, cut to [`MAX_TEXT`] bytes).
    pub fn to_owned_string(&self) -> String {
        use format::Text as _;
        let mut bytes = vec![0; self.encoded_len()];
        self.write(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// One event, as the tool's callbacks make it (the writer stamps the time).
pub type Event<'a> = Record<Text<'a>>;

/// UTF-8 bytes of a wide string, cut at whole characters to [`MAX_TEXT`].
///
/// # Safety
/// `w` is NULL or NUL-terminated.
unsafe fn wide_utf8_len(w: *const i32) -> usize {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let mut len = 0;
        for c in wide_chars(w) {
            if len + c.len_utf8() > MAX_TEXT {
                break;
            }
            len += c.len_utf8();
        }
        len
    }
}

/// The characters of a NUL-terminated UTF-32 string (invalid ones as U+FFFD).
///
/// # Safety
/// `w` is NULL or NUL-terminated.
unsafe fn wide_chars(w: *const i32) -> impl Iterator<Item = char> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let mut i = 0;
        std::iter::from_fn(move || {
            if w.is_null() || *w.add(i) == 0 {
                return None;
            }
            let c = char::from_u32(*w.add(i) as u32).unwrap_or('\u{FFFD}');
            i += 1;
            Some(c)
        })
    }
}
