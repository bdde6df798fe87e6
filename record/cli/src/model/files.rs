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

/// Maps a file of a recording (see [`open_file`]): its bytes are the page
/// cache's, not copied (the copy was 5-8% of a `.pftrace` conversion).
fn map_file(path: &Path) -> std::io::Result<memmap2::Mmap> {
    let (file, _) = open_file(path)?;
    // SAFETY: the recording tool reserves a chunk file's size before it
    // maps it and never truncates one, so the mapping stays valid.
    unsafe { memmap2::MmapOptions::new().populate().map(&file) }
}

/// Maps the chunk file that holds one thread's records (found by the
/// scan) into `map`; returns those records' bytes.
pub(super) fn read_part<'m>(
    part: &ChunkPart,
    map: &'m mut Option<memmap2::Mmap>,
) -> std::io::Result<&'m [u8]> {
    crate::signals::check()?;
    let bytes = map.insert(map_file(&part.path)?);
    let end = part.offset.checked_add(part.len);
    end.and_then(|end| bytes.get(part.offset..end))
        .ok_or_else(|| {
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
    let bytes: &[u8] = map.insert(map_file(path)?);
    match Chunk::parse(bytes) {
        Ok(chunk) => Ok(Some(chunk)),
        Err(_) if bytes.iter().take(64).all(|&b| b == 0) => Ok(None),
        Err(e) => Err(invalid(path, e)),
    }
}
