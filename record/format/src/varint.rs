//! LEB128 varints and zigzag, as the recording's chunks and GPU files
//! hold integers.

/// Appends `v` as a LEB128 varint (the GPU file's; the chunks' writer,
/// `encode`, writes the same bytes through its cursor).
pub(crate) fn write(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The LEB128 varint at `bytes[*at..]`, `*at` moved past it; `None` for
/// one cut short or longer than 64 bits. The recording's and the GPU
/// file's (`gpu`) reader.
#[inline(always)]
pub(crate) fn read(bytes: &[u8], at: &mut usize) -> Option<u64> {
    // One byte, the most common, first.
    let first = *bytes.get(*at)?;
    *at += 1;
    if first < 0x80 {
        return Some(u64::from(first));
    }
    let mut v = u64::from(first & 0x7f);
    let mut shift = 7;
    while shift < 64 {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
    }
    None
}

/// A signed integer as an unsigned one, small when near zero.
#[inline(always)]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// [`zigzag`]'s inverse.
#[inline(always)]
pub(crate) fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `v` as LEB128.
    fn leb128(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, v);
        out
    }

    #[test]
    fn varints_of_every_length_and_the_malformed() {
        for v in [0, 1, 127, 128, 300, 1 << 35, u64::MAX >> 1, u64::MAX] {
            let mut bytes = leb128(v);
            bytes.push(0xAA);
            let mut at = 0;
            assert_eq!(read(&bytes, &mut at), Some(v), "{v}");
            assert_eq!(at, bytes.len() - 1, "{v}");
            let cut = &bytes[..bytes.len() - 2];
            assert_eq!(read(cut, &mut 0), None, "{v} cut short");
        }
        // Eleven bytes: longer than 64 bits.
        let mut long = vec![0x80; 10];
        long.push(0);
        assert_eq!(read(&long, &mut 0), None);
    }
}
