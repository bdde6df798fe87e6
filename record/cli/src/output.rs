//! Where the outputs go, decided before anything runs, and how they are
//! written: whole or not at all, and only where the user said.
//!
//! - A symlink is followed: the real file is replaced, the link stays.
//! - A name that reaches a descriptor (`/dev/stdout`, `/dev/fd/N`,
//!   `/proc/self/fd/N`) is written through this process's descriptor, as a
//!   shell redirection expects; anything else that is not a regular file (a
//!   pipe, a tty, `/dev/null`) is written in place. Neither is ever renamed over.
//! - A regular file is written beside its real path into an unnamed
//!   (`O_TMPFILE`) file, then given a name and renamed over it: a reader
//!   never sees half a file, and a process killed mid-write leaves nothing.
//!   A new file gets `0666` less the umask, as `>` would make it; an
//!   existing one keeps its mode (and owner, where this user may set it).
//!
//! [`Target::check`] finds what would fail (a directory, a missing or
//! unwritable folder) before the program runs.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// An output, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A descriptor this process has (`/dev/stdout` and the like).
    Descriptor(i32),
    /// Something that is not a regular file, written in place.
    InPlace(PathBuf),
    /// A regular file (existing or not) at this real path.
    File(PathBuf),
}

/// Symlinks followed before giving up (the kernel's own limit).
const MAX_LINKS: usize = 40;

impl Target {
    /// Resolves `path` and checks it can be written, without writing.
    pub fn check(path: &Path) -> Result<Target, String> {
        let shown = path.display();
        let mut real = absolute(path);
        for _ in 0..MAX_LINKS {
            if let Some(fd) = descriptor(&real) {
                return Ok(Target::Descriptor(fd));
            }
            let meta = match std::fs::symlink_metadata(&real) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return new_file(path, real);
                }
                Err(e) => return Err(format!("cannot write {shown}: {e}")),
            };
            if meta.file_type().is_symlink() {
                let link =
                    std::fs::read_link(&real).map_err(|e| format!("cannot write {shown}: {e}"))?;
                real = absolute(&real.parent().unwrap_or(Path::new("/")).join(link));
                continue;
            }
            if meta.is_dir() {
                return Err(format!(
                    "{shown} is a directory (name a file to write the output to)"
                ));
            }
            if !meta.is_file() {
                return Ok(Target::InPlace(real));
            }
            writable(path, real.parent().unwrap_or(Path::new("/")))?;
            return Ok(Target::File(real));
        }
        Err(format!(
            "cannot write {shown}: too many levels of symbolic links"
        ))
    }

    /// Writes the output: `contents` produces it.
    pub fn write(
        &self,
        shown: &Path,
        contents: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), String> {
        let failed = |e: std::io::Error| format!("cannot write {}: {e}", shown.display());
        let fill = |file: &File| {
            let mut out = std::io::BufWriter::new(Stoppable(file));
            contents(&mut out).and_then(|()| out.flush())
        };
        match self {
            Target::Descriptor(fd) => {
                // SAFETY: `dup` of a descriptor this process holds; the copy is ours.
                let copy = unsafe { libc::dup(*fd) };
                if copy < 0 {
                    return Err(failed(std::io::Error::last_os_error()));
                }
                // SAFETY: a fresh descriptor we own.
                fill(&unsafe { File::from_raw_fd(copy) }).map_err(failed)
            }
            Target::InPlace(path) => fill(&open_in_place(path).map_err(failed)?).map_err(failed),
            Target::File(path) => replace(path, &fill).map_err(failed),
        }
    }
}

/// A writer that fails once a signal has stopped the conversion.
struct Stoppable<W>(W);

impl<W: Write> Write for Stoppable<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        crate::signals::check()?;
        self.0.write(bytes)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Opens what is not a regular file (a pipe, a device) for writing. A FIFO
/// with no reader is waited for, polled every 10 ms (a blocking `open` could
/// miss a signal that came just before it), until a signal stops the
/// conversion. The descriptor is then made blocking again.
fn open_in_place(path: &Path) -> std::io::Result<File> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    loop {
        crate::signals::check()?;
        let flags = libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: a NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), flags) };
        if fd >= 0 {
            // SAFETY: a fresh descriptor we own.
            let file = unsafe { File::from_raw_fd(fd) };
            // SAFETY: our descriptor; clearing O_NONBLOCK.
            unsafe {
                libc::fcntl(
                    fd,
                    libc::F_SETFL,
                    libc::fcntl(fd, libc::F_GETFL) & !libc::O_NONBLOCK,
                )
            };
            return Ok(file);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // A FIFO no one reads yet.
            Some(libc::ENXIO) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Some(libc::EINTR) => {}
            _ => return Err(e),
        }
    }
}

/// `path` made absolute, `.` and `..` taken lexically (as the kernel does
/// for a symlink's target, relative to the link's folder).
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let mut out = PathBuf::from("/");
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                // `..` after a symlinked folder means the link's target's
                // parent: resolve what is there before stepping up.
                if let Ok(real) = std::fs::canonicalize(&out) {
                    out = real;
                }
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The descriptor a `/dev/fd/N`, `/proc/self/fd/N` or `/proc/<our pid>/fd/N`
/// name reaches (`/dev/stdout` is a symlink to one of them).
fn descriptor(path: &Path) -> Option<i32> {
    let text = path.to_str()?;
    let me = format!("/proc/{}/fd/", std::process::id());
    let n = text
        .strip_prefix("/dev/fd/")
        .or_else(|| text.strip_prefix("/proc/self/fd/"))
        .or_else(|| text.strip_prefix("/proc/thread-self/fd/"))
        .or_else(|| text.strip_prefix(me.as_str()))?;
    n.parse().ok()
}

/// A file that does not exist yet: its folder must exist and be writable.
fn new_file(shown: &Path, real: PathBuf) -> Result<Target, String> {
    let dir = real.parent().unwrap_or(Path::new("/"));
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(format!(
                "cannot write {}: {} is not a directory",
                shown.display(),
                dir.display()
            ))
        }
        Err(_) => {
            return Err(format!(
                "cannot write {}: the directory {} does not exist",
                shown.display(),
                dir.display()
            ))
        }
    }
    writable(shown, dir)?;
    Ok(Target::File(real))
}

fn writable(shown: &Path, dir: &Path) -> Result<(), String> {
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(|_| "NUL in a path".to_string())?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(format!(
            "cannot write {}: {}: {}",
            shown.display(),
            dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Replaces the regular file `path` (or makes it) with what `fill` writes.
fn replace(path: &Path, fill: &dyn Fn(&File) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let existing = std::fs::metadata(path).ok().filter(|m| m.is_file());
    let file = unnamed_in(dir)?;
    fill(&file)?;
    file.sync_data()?;
    if let Some(m) = &existing {
        // The owner first: changing it may clear set-id bits the mode restores.
        // SAFETY: our descriptor.
        unsafe { libc::fchown(file.as_raw_fd(), m.uid(), m.gid()) };
        file.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
    }
    // A name of its own beside the target, then renamed over it.
    let named = link_beside(&file, dir)?;
    std::fs::rename(&named, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&named);
    })
}

/// An unnamed file in `dir`, mode `0666` less the umask.
fn unnamed_in(dir: &Path) -> std::io::Result<File> {
    let c = CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: a NUL-terminated path; O_TMPFILE takes a mode.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::other(format!(
            "{}: cannot make a temporary file there ({}; nvtxr needs O_TMPFILE)",
            dir.display(),
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Gives the unnamed `file` a fresh hidden name in `dir`.
fn link_beside(file: &File, dir: &Path) -> std::io::Result<PathBuf> {
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    for attempt in 0u32.. {
        let name = dir.join(format!(".nvtxr-{}-{attempt}", std::process::id()));
        let to = CString::new(name.as_os_str().as_bytes())?;
        // SAFETY: NUL-terminated paths; links the open, unnamed file.
        let linked = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if linked == 0 {
            return Ok(name);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::AlreadyExists || attempt > 100 {
            return Err(e);
        }
    }
    unreachable!("the loop returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_by_every_name() {
        assert_eq!(descriptor(Path::new("/dev/fd/1")), Some(1));
        assert_eq!(descriptor(Path::new("/proc/self/fd/7")), Some(7));
        let mine = format!("/proc/{}/fd/2", std::process::id());
        assert_eq!(descriptor(Path::new(&mine)), Some(2));
        assert_eq!(descriptor(Path::new("/proc/1/fd/2")), None);
        assert_eq!(descriptor(Path::new("/tmp/fd/2")), None);
        assert_eq!(
            Target::check(Path::new("/dev/stdout")).unwrap(),
            Target::Descriptor(1)
        );
    }

    #[test]
    fn bad_places_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let err = Target::check(dir.path()).unwrap_err();
        assert!(err.contains("is a directory"), "{err}");
        let err = Target::check(&dir.path().join("missing/t.json")).unwrap_err();
        assert!(err.contains("does not exist"), "{err}");
        assert_eq!(
            Target::check(Path::new("/dev/null")).unwrap(),
            Target::InPlace("/dev/null".into())
        );
    }

    #[test]
    fn a_symlink_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real/trace.json", dir.path().join("link")).unwrap();
        let target = Target::check(&dir.path().join("link")).unwrap();
        assert_eq!(
            target,
            Target::File(absolute(&dir.path().join("real/trace.json")))
        );
        target
            .write(Path::new("link"), &|out| out.write_all(b"{}"))
            .unwrap();
        let link = std::fs::symlink_metadata(dir.path().join("link")).unwrap();
        assert!(link.file_type().is_symlink());
        assert_eq!(
            std::fs::read(dir.path().join("real/trace.json")).unwrap(),
            b"{}"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path().join("real"))
            .unwrap()
            .collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }
}
