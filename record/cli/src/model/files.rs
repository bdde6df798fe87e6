//! Reading a recording's files: only regular files, never through a
//! symlink, never blocking, never more than they hold.

use super::scan::ChunkPart;
use nvtxr_record_format::Chunk;
use std::path::Path;

pub(super) fn invalid(what: &Path, e: String) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{}: {e}", what.display()),
    )
}

/// Opens a file of a recording: only a regular file, never through a
/// symlink, never blocking (a FIFO).
fn open_file(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => invalid(path, "a symlink, not a file of a recording".into()),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(invalid(path, "not a regular file".into()));
    }
    Ok((file, meta.len()))
}

/// Reads a file of a recording into `bytes` (see [`open_file`]), never
/// more than its size.
pub(super) fn read_file(path: &Path, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    let (file, len) = open_file(path)?;
    bytes.clear();
    bytes.reserve(len as usize);
    file.take(len).read_to_end(bytes)?;
    Ok(())
}

/// Maps `len` bytes at `offset` of a file of a recording (see
/// [`open_file`]), the whole file for `None`: its bytes are the page
/// cache's, not copied (the copy was 5-8% of a `.pftrace` conversion).
/// `None` when the file holds less.
fn map_file(path: &Path, range: Option<(usize, usize)>) -> std::io::Result<Option<memmap2::Mmap>> {
    let (file, size) = open_file(path)?;
    let (offset, len) = range.unwrap_or((0, size as usize));
    if offset.checked_add(len).is_none_or(|end| end as u64 > size) {
        return Ok(None);
    }
    // SAFETY: the recording tool reserves a chunk file's size before it
    // maps it and never truncates one, so the mapping (within the file, as
    // checked above) stays valid.
    unsafe {
        memmap2::MmapOptions::new()
            .offset(offset as u64)
            .len(len)
            .populate()
            .map(&file)
    }
    .map(Some)
}

/// Maps one thread's records in a chunk file (found by the scan) into
/// `map`; returns them.
pub(super) fn read_part<'m>(
    part: &ChunkPart,
    map: &'m mut Option<memmap2::Mmap>,
) -> std::io::Result<&'m [u8]> {
    crate::signals::check()?;
    *map = map_file(&part.path, Some((part.offset, part.len)))?;
    map.as_deref().ok_or_else(|| {
        invalid(
            &part.path,
            "it was cut short while it was being read".into(),
        )
    })
}

/// Maps a chunk file into `map`; `None` for one created but never written
/// (killed first).
pub(super) fn read_chunk<'m>(
    path: &Path,
    map: &'m mut Option<memmap2::Mmap>,
) -> std::io::Result<Option<Chunk<'m>>> {
    crate::signals::check()?;
    *map = map_file(path, None)?;
    let bytes = map.as_deref().unwrap_or_default();
    match Chunk::parse(bytes) {
        Ok(chunk) => Ok(Some(chunk)),
        Err(_) if bytes.iter().take(64).all(|&b| b == 0) => Ok(None),
        Err(e) => Err(invalid(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::{read_chunk, read_part, ChunkPart};

    fn part(path: &std::path::Path, offset: usize, len: usize) -> ChunkPart {
        ChunkPart {
            path: path.to_path_buf(),
            tid: 1,
            order: (0, 0, 0),
            image: 0,
            offset,
            len,
        }
    }

    #[test]
    fn a_part_is_its_bytes_or_an_error_when_the_file_holds_less() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.events");
        let bytes: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut map = None;
        // Offsets inside a page, across pages, to the file's end.
        for (offset, len) in [(0, 10), (4_095, 2), (5_000, 5_000), (10_000, 0)] {
            let read = read_part(&part(&path, offset, len), &mut map).unwrap();
            assert_eq!(read, &bytes[offset..offset + len]);
        }
        for (offset, len) in [(9_999, 2), (20_000, 1), (usize::MAX, 2)] {
            let e = read_part(&part(&path, offset, len), &mut map).unwrap_err();
            assert!(e.to_string().contains("cut short"), "{e}");
        }
    }

    #[test]
    fn an_empty_chunk_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.events");
        std::fs::write(&path, b"").unwrap();
        assert!(read_chunk(&path, &mut None).unwrap().is_none());
        std::fs::write(&path, [0u8; 4096]).unwrap();
        assert!(read_chunk(&path, &mut None).unwrap().is_none());
    }
}
