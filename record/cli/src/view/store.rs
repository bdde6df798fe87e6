//! Where the index keeps what grows with the recording: columns of numbers
//! and the names' texts, in an anonymous temporary file (see
//! `crate::temporary`: unlinked from the start, gone when `nvtxr` exits,
//! whatever ends it), so that indexing holds the same memory at 10^8 events
//! as at 10^4. Written once, in one pass; then mapped and read in place.
//!
//! A column is filled in memory [`SEGMENT`] values at a time; each full
//! segment is appended to the file. [`Store::seal`] writes a column's last
//! (short) segment when nothing more will be pushed to it, so that only the
//! columns being filled (one timeline row's) are in memory at once.

use crate::temporary;
use memmap2::Mmap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;

/// Values per segment (32 KB of them).
pub const SEGMENT: usize = 4096;

/// A column of `u64`s: full segments in the file, the rest in memory.
#[derive(Default)]
pub struct Column {
    /// Each segment's byte offset in the file; all but the last are full.
    segments: Vec<u64>,
    /// The values after the segments (empty once sealed).
    tail: Vec<u64>,
    len: usize,
}

impl Column {
    pub fn len(&self) -> usize {
        self.len
    }
}

/// Where a text is in the file: its offset and length in one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TextAt(u64);

/// Bits of a [`TextAt`] holding the length: a longer text is cut (a name
/// is at most 64 KiB; a look's tooltip lines, a few such texts).
const TEXT_LEN_BITS: u32 = 24;

/// What the file keeps, as its errors say (see `crate::temporary`).
const WHAT: &str = "the index";

/// The file, being written, then mapped.
pub struct Store {
    out: BufWriter<File>,
    /// Bytes written so far (the next value's offset).
    written: u64,
    map: Option<Mmap>,
}

impl Store {
    pub fn new() -> std::io::Result<Store> {
        Ok(Store {
            out: BufWriter::with_capacity(1 << 16, temporary::file(WHAT)?),
            written: 0,
            map: None,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        assert!(self.map.is_none(), "the store is written before it is read");
        let at = self.written;
        self.out.write_all(bytes).map_err(temporary::failed(WHAT))?;
        self.written += bytes.len() as u64;
        Ok(at)
    }

    /// Appends `v` to `column`.
    pub fn push(&mut self, column: &mut Column, v: u64) -> std::io::Result<()> {
        column.tail.push(v);
        column.len += 1;
        if column.tail.len() == SEGMENT {
            self.spill(column)?;
        }
        Ok(())
    }

    fn spill(&mut self, column: &mut Column) -> std::io::Result<()> {
        assert!(
            column.len == column.segments.len() * SEGMENT + column.tail.len(),
            "no value is pushed to a sealed column"
        );
        let bytes: Vec<u8> = column.tail.iter().flat_map(|v| v.to_le_bytes()).collect();
        let at = self.write(&bytes)?;
        column.segments.push(at);
        column.tail.clear();
        Ok(())
    }

    /// Writes out what `column` holds in memory; nothing may be pushed to
    /// it afterwards.
    pub fn seal(&mut self, column: &mut Column) -> std::io::Result<()> {
        if !column.tail.is_empty() {
            self.spill(column)?;
        }
        column.tail = Vec::new();
        Ok(())
    }

    /// Stores a text (cut to under 16 MiB, at a character's start), to be
    /// read with [`Store::text`].
    fn put_text(&mut self, text: &str) -> std::io::Result<TextAt> {
        let mut end = text.len().min((1 << TEXT_LEN_BITS) - 1);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        let at = self.write(text.as_bytes())?;
        Ok(TextAt(at << TEXT_LEN_BITS | text.len() as u64))
    }

    /// Every value of `column`, read back while the store is being written
    /// (to reorder a column).
    pub fn read_all(&mut self, column: &Column) -> std::io::Result<Vec<u64>> {
        self.out.flush().map_err(temporary::failed(WHAT))?;
        let mut values = Vec::with_capacity(column.len);
        let mut buf = vec![0u8; SEGMENT * 8];
        let in_file = column.len - column.tail.len();
        for (s, &at) in column.segments.iter().enumerate() {
            let n = (in_file - s * SEGMENT).min(SEGMENT);
            self.out
                .get_ref()
                .read_exact_at(&mut buf[..n * 8], at)
                .map_err(temporary::failed(WHAT))?;
            values.extend(buf[..n * 8].chunks_exact(8).map(le_u64));
        }
        values.extend_from_slice(&column.tail);
        Ok(values)
    }

    /// Ends the writing: from here on the store is read, in place.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.out.flush().map_err(temporary::failed(WHAT))?;
        // SAFETY: the file is this process's own, unlinked from its
        // creation: nothing else can change it while it is mapped.
        self.map = Some(unsafe { Mmap::map(self.out.get_ref()).map_err(temporary::failed(WHAT))? });
        Ok(())
    }

    fn mapped(&self) -> &[u8] {
        self.map
            .as_deref()
            .expect("the store is read once finished")
    }

    /// `column`'s value at `i`.
    pub fn get(&self, column: &Column, i: usize) -> u64 {
        let (s, k) = (i / SEGMENT, i % SEGMENT);
        match column.segments.get(s) {
            Some(&at) => {
                let at = at as usize + k * 8;
                le_u64(&self.mapped()[at..at + 8])
            }
            None => column.tail[k],
        }
    }

    /// The first index in `range` where `pred` is false, `pred` being true
    /// then false along it (as `slice::partition_point`).
    pub fn partition_point(
        &self,
        column: &Column,
        range: Range<usize>,
        pred: impl Fn(u64) -> bool,
    ) -> usize {
        let (mut lo, mut hi) = (range.start, range.end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(column, mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// A text stored with [`Store::put_text`].
    fn text(&self, at: TextAt) -> &str {
        let (offset, len) = (
            (at.0 >> TEXT_LEN_BITS) as usize,
            (at.0 & ((1 << TEXT_LEN_BITS) - 1)) as usize,
        );
        // Written from a `&str`: valid UTF-8.
        std::str::from_utf8(&self.mapped()[offset..offset + len]).unwrap_or("")
    }
}

/// Texts numbered 0, 1, ... in the order they come, kept in a store: a
/// text among the last `recent` distinct ones keeps its number; one seen
/// before those gets a new number (and is kept again), so that memory stays
/// bounded however many distinct texts come.
pub struct Texts {
    /// Where each text is (a [`TextAt`]), by its number.
    at: Column,
    recent: hashbrown::HashMap<Box<str>, u32>,
    /// How many distinct texts `recent` holds at most.
    limit: usize,
}

impl Texts {
    pub fn new(limit: usize) -> Texts {
        Texts {
            at: Column::default(),
            recent: hashbrown::HashMap::new(),
            limit,
        }
    }

    /// How many numbers were given.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// `text`'s number, kept in `store` when new.
    pub fn number(&mut self, store: &mut Store, text: &str) -> std::io::Result<u32> {
        if let Some(&n) = self.recent.get(text) {
            return Ok(n);
        }
        if self.recent.len() == self.limit {
            self.recent.clear();
        }
        let n = self.at.len() as u32;
        let at = store.put_text(text)?;
        store.push(&mut self.at, at.0)?;
        self.recent.insert(text.into(), n);
        Ok(n)
    }

    /// The text numbered `n` (once the store is finished).
    pub fn get<'s>(&self, store: &'s Store, n: u32) -> &'s str {
        store.text(TextAt(store.get(&self.at, n as usize)))
    }
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_read_back_across_segments_sealed_or_not() {
        let mut store = Store::new().unwrap();
        let (mut a, mut b, mut sealed) = (Column::default(), Column::default(), Column::default());
        let n = 3 * SEGMENT + 17;
        // Interleaved, as a row's lanes are filled.
        for i in 0..n as u64 {
            store.push(&mut a, i * 3).unwrap();
            store.push(&mut b, u64::MAX - i).unwrap();
            if i < 5 {
                store.push(&mut sealed, i).unwrap();
            }
        }
        store.seal(&mut sealed).unwrap();
        let hello = store.put_text("héllo").unwrap();
        let empty = store.put_text("").unwrap();
        assert_eq!(
            store.read_all(&a).unwrap(),
            (0..n as u64).map(|i| i * 3).collect::<Vec<_>>()
        );
        store.seal(&mut a).unwrap();
        store.finish().unwrap();
        for i in [0, 1, SEGMENT - 1, SEGMENT, 2 * SEGMENT + 5, n - 1] {
            assert_eq!(store.get(&a, i), i as u64 * 3);
            assert_eq!(store.get(&b, i), u64::MAX - i as u64);
        }
        assert_eq!(
            (0..5).map(|i| store.get(&sealed, i)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(store.partition_point(&a, 0..n, |v| v < 3 * 5000), 5000);
        assert_eq!(store.partition_point(&a, 6000..n, |v| v < 3 * 5000), 6000);
        assert_eq!(store.partition_point(&a, 0..n, |_| true), n);
        assert_eq!(store.text(hello), "héllo");
        assert_eq!(store.text(empty), "");
    }

    #[test]
    fn a_text_past_16_mib_is_cut_at_a_character() {
        let mut store = Store::new().unwrap();
        let long = "é".repeat(9 << 20);
        let at = store.put_text(&long).unwrap();
        store.finish().unwrap();
        let kept = store.text(at);
        assert!(kept.len() < 1 << TEXT_LEN_BITS && kept.len() >= (1 << TEXT_LEN_BITS) - 2);
        assert!(long.starts_with(kept));
    }

    #[test]
    fn a_text_keeps_its_number_while_recent() {
        let mut store = Store::new().unwrap();
        let mut texts = Texts::new(3);
        let n = |t: &mut Texts, s: &mut Store, x: &str| t.number(s, x).unwrap();
        assert_eq!(n(&mut texts, &mut store, "a"), 0);
        assert_eq!(n(&mut texts, &mut store, "b"), 1);
        assert_eq!(n(&mut texts, &mut store, "a"), 0);
        assert_eq!(n(&mut texts, &mut store, "c"), 2);
        // Past 3 distinct texts, those before are forgotten: "a" again is new.
        assert_eq!(n(&mut texts, &mut store, "d"), 3);
        assert_eq!(n(&mut texts, &mut store, "a"), 4);
        assert_eq!(n(&mut texts, &mut store, "d"), 3);
        assert_eq!(texts.len(), 5);
        store.finish().unwrap();
        let all: Vec<&str> = (0..5).map(|i| texts.get(&store, i)).collect();
        assert_eq!(all, ["a", "b", "c", "d", "a"]);
    }
}
