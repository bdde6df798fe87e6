//! The recording directory on disk: the private root, one folder per process
//! image, its mapped `process` header, and the chunk files threads write to.
//!
//! Every file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600,
//! inside a root that must be a real directory, owned by this user and
//! writable by nobody else: nothing that already exists is ever opened for
//! writing, so a planted file or symlink cannot redirect the recording.
//!
//! Chunks are reserved on disk (`posix_fallocate`) before they are mapped, so
//! a full disk is an error at chunk creation, never a SIGBUS while writing;
//! a chunk that would pass `RLIMIT_FSIZE` is refused instead of letting the
//! kernel kill the program with SIGXFSZ. The descriptor is closed once the
//! chunk is mapped: a thread holds no file descriptor while it records.

use crate::clock;
use nvtxr_record_format::time::Calibration;
use nvtxr_record_format::{
    host_name, ProcessHeader, CHUNK_MAGIC, CHUNK_SEQ, CHUNK_TID, PROCESS_DROPPED, PROCESS_SIZE,
};
use std::ffi::{CStr, CString, OsStr};
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The recording root, as given (`NVTXR_RECORD_DIR`).
static ROOT: OnceLock<CString> = OnceLock::new();
/// The calibration every image of this process's lineage uses.
static CALIBRATION: OnceLock<Calibration> = OnceLock::new();
/// This process image's folder and header; replaced in a forked child.
static IMAGE: AtomicPtr<Image> = AtomicPtr::new(ptr::null_mut());

struct Image {
    /// `<root>/<pid>.<n>`.
    dir: CString,
    /// The mapped `process` file.
    header: *mut u8,
    /// The next chunk file's name.
    next_chunk: AtomicU32,
    /// The next chunk's sequence number, given when a thread starts using it.
    next_seq: AtomicU32,
}

/// Checks (or creates) the root: a directory, not a symlink, owned by this
/// user, with no access for group or others.
pub fn open_root(root: &Path) -> Result<(), String> {
    let shown = root.display();
    match std::fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(root)
                .map_err(|e| format!("cannot create {shown}: {e}"))?;
            // `recursive` applies the mode to the last folder only if it made it.
            std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot make {shown} private: {e}"))?;
        }
        Err(e) => return Err(format!("cannot use {shown}: {e}")),
        Ok(m) => {
            // SAFETY: geteuid has no preconditions.
            let me = unsafe { libc::geteuid() };
            if !m.file_type().is_dir() {
                return Err(format!("{shown} is not a directory (a symlink is refused)"));
            }
            if m.uid() != me {
                return Err(format!("{shown} belongs to another user (uid {})", m.uid()));
            }
            if m.mode() & 0o077 != 0 {
                return Err(format!(
                    "{shown} is open to other users (mode {:o}); use a private (0700) directory",
                    m.mode() & 0o777
                ));
            }
        }
    }
    let root = CString::new(root.as_os_str().as_bytes()).map_err(|_| "NUL in the path")?;
    let _ = ROOT.set(root);
    Ok(())
}

/// Starts this process image's folder: `<root>/<pid>.<n>` with the first
/// free `n`, and its `process` header. Called at setup and in a forked child.
pub fn start_image(calibration: Calibration) -> Result<(), String> {
    let calibration = *CALIBRATION.get_or_init(|| calibration);
    let root = ROOT.get().ok_or("no recording directory")?;
    let pid = std::process::id();
    let root = Path::new(OsStr::from_bytes(root.as_bytes()));
    let mut n = 0;
    let dir = loop {
        let dir = root.join(format!("{pid}.{n}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    };
    let dir = CString::new(dir.as_os_str().as_bytes()).map_err(|_| "NUL in the path")?;
    let header = ProcessHeader {
        pid,
        // SAFETY: getppid has no preconditions.
        parent: unsafe { libc::getppid() } as u32,
        dropped: 0,
        calibration,
        rank: from_env(&[
            "OMPI_COMM_WORLD_RANK",
            "PMI_RANK",
            "PMIX_RANK",
            "SLURM_PROCID",
            "RANK",
        ]),
        world: from_env(&[
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "SLURM_NTASKS",
            "WORLD_SIZE",
        ]),
        host: host_name(),
        wall: clock::wall_pair(),
        command: std::fs::read("/proc/self/cmdline").unwrap_or_default(),
    };
    let mapping = create_mapped(&dir, "process", PROCESS_SIZE, Faults::Now)
        .map_err(|e| format!("cannot create {}/process: {e}", dir.to_string_lossy()))?;
    // SAFETY: a fresh private mapping of PROCESS_SIZE bytes.
    unsafe { ptr::copy_nonoverlapping(header.encode().as_ptr(), mapping, PROCESS_SIZE) };
    let image = Box::into_raw(Box::new(Image {
        dir,
        header: mapping,
        next_chunk: AtomicU32::new(0),
        next_seq: AtomicU32::new(0),
    }));
    // The previous image (a parent's, in a forked child) stays leaked: its
    // mapping is shared with the parent, which owns it.
    IMAGE.store(image, Ordering::Release);
    Ok(())
}

/// The clock calibration of this process, once recording has started.
pub fn calibration() -> Option<Calibration> {
    CALIBRATION.get().copied()
}

/// The first of `names` set to a number (the launchers' rank and size variables:
/// Open MPI, MPICH/PMI, PMIx, SLURM, torchrun).
fn from_env(names: &[&str]) -> Option<u32> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok()?.trim().parse().ok())
}

fn image() -> Option<&'static Image> {
    // SAFETY: images are leaked, never freed.
    unsafe { IMAGE.load(Ordering::Acquire).as_ref() }
}

/// Counts `n` events the tool could not record, in the process header.
pub fn count_dropped(n: u64) {
    if let Some(image) = image() {
        // SAFETY: the header mapping is page-aligned and lives forever; the
        // counter is 8-aligned and only ever accessed atomically.
        let counter = unsafe { &*(image.header.add(PROCESS_DROPPED) as *const AtomicU64) };
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// A chunk of a thread's events, mapped from its file.
pub struct Mapping {
    pub base: *mut u8,
    pub size: usize,
}

impl Mapping {
    /// The mapping in one word, for an atomic slot (never 0): its
    /// page-aligned base with log2 of its size in the low bits; `None` for
    /// a size that is not a power of two.
    pub fn pack(&self) -> Option<usize> {
        self.size
            .is_power_of_two()
            .then(|| self.base as usize | self.size.trailing_zeros() as usize)
    }

    /// The mapping [`Mapping::pack`] gave `entry` for.
    pub fn unpack(entry: usize) -> Mapping {
        Mapping {
            base: (entry & !0xFFF) as *mut u8,
            size: 1 << (entry & 0xFFF),
        }
    }
}

/// When a new mapping's pages are faulted in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Faults {
    /// All of them now (`MADV_POPULATE_WRITE`, Linux 5.14+; older kernels
    /// fault them one by one as they are written): for the helper thread,
    /// so that the thread writing events later takes no page fault.
    Now,
    /// Each on its first write: for a program thread making its own chunk,
    /// which then never stalls longer than creating the file takes (a 4 MiB
    /// chunk's pages cost milliseconds together, microseconds each).
    OnWrite,
}

/// Creates, reserves and maps the next chunk file for thread `tid`, `size`
/// bytes with the header written, on the thread itself: its pages fault
/// in as it writes them ([`Faults::OnWrite`]).
pub fn map_chunk(tid: u32, size: usize) -> Result<Mapping, Errno> {
    let m = make_chunk(size, Faults::OnWrite)?;
    claim_chunk(&m, tid);
    Ok(m)
}

/// Creates, reserves and maps the image's next chunk file, `size` bytes of
/// zeros (a chunk no thread claimed: the reader skips it).
pub fn make_chunk(size: usize, faults: Faults) -> Result<Mapping, Errno> {
    let image = image().ok_or(Errno(libc::ENOENT))?;
    let n = image.next_chunk.fetch_add(1, Ordering::Relaxed);
    let mut name = StackPath::new();
    let _ = write!(name, "{n}.events");
    let base = create_mapped(&image.dir, name.as_str(), size, faults)?;
    Ok(Mapping { base, size })
}

/// Makes a chunk from [`make_chunk`] thread `tid`'s: its header, with the
/// image's next sequence number, so a thread's chunks sort in the order it
/// used them, whenever they were made.
pub fn claim_chunk(m: &Mapping, tid: u32) {
    let seq = image().map_or(0, |i| i.next_seq.fetch_add(1, Ordering::Relaxed));
    // SAFETY: a fresh mapping of at least CHUNK_HEADER bytes, ours alone.
    unsafe {
        ptr::copy_nonoverlapping(tid.to_le_bytes().as_ptr(), m.base.add(CHUNK_TID), 4);
        ptr::copy_nonoverlapping(seq.to_le_bytes().as_ptr(), m.base.add(CHUNK_SEQ), 4);
        // The magic last: a chunk without it is one nobody wrote.
        std::sync::atomic::fence(Ordering::Release);
        ptr::copy_nonoverlapping(CHUNK_MAGIC.as_ptr(), m.base, 8);
    }
}

/// Gives back the disk space of a chunk's end past its first `used` bytes
/// (a thread that ended leaves its chunk partly filled): those pages become
/// a hole in the file (`MADV_REMOVE`), read back as zeros, so a short-lived
/// thread costs a page or two of disk, not its whole chunk. What was
/// recorded is not touched; a filesystem without holes keeps the space.
pub fn release_unused(m: &Mapping, used: usize) {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let from = used.div_ceil(page) * page;
    if from < m.size {
        // SAFETY: whole pages inside this mapping, which no one writes any more.
        unsafe { libc::madvise(m.base.add(from).cast(), m.size - from, libc::MADV_REMOVE) };
    }
}

/// Unmaps a chunk (what it holds stays in its file).
pub fn unmap(m: &Mapping) {
    // SAFETY: a mapping made by `map_chunk`, not used afterwards.
    unsafe { libc::munmap(m.base.cast(), m.size) };
}

/// An `errno` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == libc::EFBIG {
            return f.write_str("the file size limit (ulimit -f) is reached");
        }
        // SAFETY: strerror returns a static, NUL-terminated message.
        let text = unsafe { CStr::from_ptr(libc::strerror(self.0)) };
        f.write_str(&text.to_string_lossy())
    }
}

fn errno() -> Errno {
    Errno(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    )
}

/// `dir/name`, created exclusively (never following a symlink), reserved on
/// disk and mapped shared. The descriptor is closed before returning.
/// Allocates nothing, so it is usable from a signal handler.
fn create_mapped(dir: &CStr, name: &str, size: usize, faults: Faults) -> Result<*mut u8, Errno> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY
        && limit.rlim_cur < size as u64
    {
        return Err(Errno(libc::EFBIG));
    }
    let mut path = StackPath::new();
    path.push(dir.to_bytes());
    path.push(b"/");
    path.push(name.as_bytes());
    let path = path.c_str();
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(errno());
    }
    let fail = |e: Errno| {
        // SAFETY: our descriptor and the file we just created.
        unsafe {
            libc::close(fd);
            libc::unlink(path.as_ptr());
        }
        Err(e)
    };
    // SAFETY: our descriptor.
    let reserved = unsafe { libc::posix_fallocate(fd, 0, size as libc::off_t) };
    if reserved != 0 {
        return fail(Errno(reserved));
    }
    // SAFETY: mapping `size` bytes of a file of that size.
    let base = unsafe {
        libc::mmap(
            ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return fail(errno());
    }
    if faults == Faults::Now {
        // SAFETY: advice on our own mapping.
        unsafe { libc::madvise(base, size, libc::MADV_POPULATE_WRITE) };
    }
    // SAFETY: our descriptor; the mapping keeps the file.
    unsafe { libc::close(fd) };
    Ok(base.cast())
}

/// Says once per process, on stderr, that events are being dropped and why.
/// Writes with one `write(2)`, without Rust's stderr lock.
pub fn warn_dropping(why: std::fmt::Arguments) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if WARNED.swap(true, Ordering::Relaxed) {
        return;
    }
    let mut line = StackPath::new();
    let _ = writeln!(
        line,
        "nvtxr record: {why}; events are being dropped (counted in the recording)"
    );
    // SAFETY: writing our own buffer to fd 2.
    unsafe { libc::write(2, line.buf.as_ptr().cast(), line.len) };
}

/// A path or message formatted on the stack (signal handlers cannot allocate).
struct StackPath {
    buf: [u8; 4096],
    len: usize,
}

impl StackPath {
    fn new() -> Self {
        StackPath {
            buf: [0; 4096],
            len: 0,
        }
    }
    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - 1 - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
    /// NUL-terminated (truncating to fit).
    fn c_str(&mut self) -> &CStr {
        let end = self.len.min(self.buf.len() - 1);
        self.buf[end] = 0;
        CStr::from_bytes_until_nul(&self.buf[..=end]).unwrap_or_default()
    }
}

impl std::fmt::Write for StackPath {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

/// Creates `name` in this image's folder (exclusively, never through a
/// symlink, mode 0600) for appending: files other than chunks, written
/// off the event path.
pub fn create_file(name: &str) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let image = image().ok_or("no recording directory")?;
    let path = Path::new(OsStr::from_bytes(image.dir.to_bytes())).join(name);
    std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}
