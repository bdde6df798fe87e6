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

/// Reads one thread's records in a chunk file (found by the scan) into
/// `buffer`.
pub(super) fn read_part<'b>(
    part: &ChunkPart,
    buffer: &'b mut Vec<u8>,
) -> std::io::Result<&'b [u8]> {
    use std::io::{Read, Seek};
    crate::signals::check()?;
    let (mut file, _) = open_file(&part.path)?;
    file.seek(std::io::SeekFrom::Start(part.offset as u64))?;
    buffer.clear();
    file.take(part.len as u64).read_to_end(buffer)?;
    if buffer.len() < part.len {
        return Err(invalid(
            &part.path,
            "it was cut short while it was being read".into(),
        ));
    }
    Ok(buffer)
}

/// Reads a chunk file into `buffer` (one buffer serves every chunk);
/// `None` for one created but never written (killed first).
pub(super) fn read_chunk<'b>(
    path: &Path,
    buffer: &'b mut Vec<u8>,
) -> std::io::Result<Option<Chunk<'b>>> {
    crate::signals::check()?;
    read_file(path, buffer)?;
    let bytes = &buffer[..];
    match Chunk::parse(bytes) {
        Ok(chunk) => Ok(Some(chunk)),
        Err(_) if bytes.iter().take(64).all(|&b| b == 0) => Ok(None),
        Err(e) => Err(invalid(path, e)),
    }
}
