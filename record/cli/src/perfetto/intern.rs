//! A sequence's interned texts: each text's iid (1, 2, ... in the order
//! they were first seen). The texts are kept in one buffer, so interning a
//! new one allocates nothing once the buffer has grown (a trace of distinct
//! names, "step 1", "step 2"..., interns one per range).

use super::wire::Fields;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

#[derive(Default)]
pub struct Interner {
    /// Every text, one after the other.
    bytes: Vec<u8>,
    /// Where each text ends in `bytes`, by iid - 1.
    ends: Vec<u32>,
    /// Indices into `ends`, by their text's hash.
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl Interner {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Forgets every text (keeping the memory).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.table.clear();
    }

    /// The iid of `text`, and whether it is new (then to be defined).
    pub fn intern(&mut self, text: &[u8]) -> (u64, bool) {
        let hash = self.hasher.hash_one(text);
        if let Some(&i) = self
            .table
            .find(hash, |&i| nth(&self.bytes, &self.ends, i) == text)
        {
            return (u64::from(i) + 1, false);
        }
        let i = self.ends.len() as u32;
        self.bytes.extend_from_slice(text);
        self.ends.push(self.bytes.len() as u32);
        let (hasher, bytes, ends) = (&self.hasher, &self.bytes, &self.ends);
        self.table
            .insert_unique(hash, i, |&j| hasher.hash_one(nth(bytes, ends, j)));
        (u64::from(i) + 1, true)
    }
}

/// The iid of `text` in `table`, defined in `interned_data`'s field `field`
/// the first time.
pub(super) fn intern(
    table: &mut Interner,
    text: &str,
    interned_data: &mut Fields,
    field: u32,
) -> u64 {
    let (iid, new) = table.intern(text.as_bytes());
    if new {
        interned_data.interned(field, iid, text.as_bytes());
    }
    iid
}

/// Text `i` of `bytes`, where texts end at `ends`.
fn nth<'a>(bytes: &'a [u8], ends: &[u32], i: u32) -> &'a [u8] {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &bytes[start..ends[i] as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_has_the_same_iid_until_cleared() {
        let mut i = Interner::default();
        assert_eq!(i.intern(b"inner"), (1, true));
        assert_eq!(i.intern(b"step 1"), (2, true));
        assert_eq!(i.intern(b"inner"), (1, false));
        assert_eq!(i.intern(b""), (3, true));
        assert_eq!(i.intern(b""), (3, false));
        for n in 0..10_000 {
            let text = format!("step {n}");
            let (iid, _) = i.intern(text.as_bytes());
            assert_eq!(i.intern(text.as_bytes()), (iid, false));
        }
        assert_eq!(i.intern(b"step 1"), (2, false));
        i.clear();
        assert_eq!(i.len(), 0);
        assert_eq!(i.intern(b"step 1"), (1, true));
    }
}
