//! `nvtxr record`: checks everything it will need, runs a command with the
//! recording tool attached (its children inherit it), passes signals on to
//! it (see `signals`), shows progress on a terminal, then writes the outputs.

use crate::outputs::Outputs;
use crate::report::{report, RankOptions};
use crate::signals;
use nvtxr_record_format::gpu::{GPU_FLUSH_DEFAULT_MS, GPU_FLUSH_VAR, GPU_SYNCS_VAR};
use nvtxr_record_format::time::{clock_choice, CLOCK_VAR};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The variable naming the recording tool library, instead of the one installed beside `nvtxr`.
const TOOL_VAR: &str = "NVTXR_RECORD_TOOL";

/// The recording tool library this program carries (built by build.rs).
static EMBEDDED_TOOL: &[u8] = include_bytes!(env!("NVTXR_RECORD_TOOL_EMBEDDED"));

/// The recording tool library to inject, and the private directory holding
/// it when it is this program's own copy (removed when the recording ends).
struct Tool {
    path: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

/// The recording tool library: `NVTXR_RECORD_TOOL` (which must name a
/// shared library), or next to this program, or in `../lib` (an installed
/// layout), or else the copy this program carries, written to a fresh
/// private (0700) directory.
fn tool_library() -> Result<Tool, String> {
    let found = |path| Ok(Tool { path, _dir: None });
    if let Some(p) = std::env::var_os(TOOL_VAR) {
        let path = PathBuf::from(&p);
        let mut magic = [0u8; 4];
        let elf = std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
            .map(|()| magic == *b"\x7fELF");
        return match elf {
            Ok(true) if path.is_file() => found(path),
            Ok(_) => Err(format!(
                "{TOOL_VAR}={}: not a shared library",
                path.display()
            )),
            Err(e) => Err(format!("{TOOL_VAR}={}: {e}", path.display())),
        };
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    if let Some(installed) = [
        dir.join("libnvtxr_record.so"),
        dir.join("../lib/libnvtxr_record.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    {
        return found(installed);
    }
    carried().map_err(|e| format!("cannot write the recording tool to a temporary directory: {e}"))
}

/// This program's own copy of the tool, written out.
fn carried() -> std::io::Result<Tool> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let dir = tempfile::Builder::new()
        .prefix("nvtxr-tool-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()?;
    let path = dir.path().join("libnvtxr_record.so");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o500)
        .open(&path)?
        .write_all(EMBEDDED_TOOL)?;
    Ok(Tool {
        path,
        _dir: Some(dir),
    })
}

/// Where the tool writes: a fresh private (0700) directory with an
/// unpredictable name, removed after the report, or the one `--keep`
/// names (new or empty, made private), kept.
enum Raw {
    Temporary(tempfile::TempDir),
    Kept(PathBuf),
}

impl Raw {
    fn new(keep: Option<&Path>) -> std::io::Result<Raw> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let Some(dir) = keep else {
            return tempfile::Builder::new()
                .prefix("nvtxr-record-")
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir()
                .map(Raw::Temporary);
        };
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // The tool's rules for its root, checked before anything changes.
                let meta = std::fs::symlink_metadata(dir)?;
                let refuse = |why: &str| {
                    Err(std::io::Error::other(format!(
                        "{} {why} (--keep wants a new or empty directory of yours)",
                        dir.display()
                    )))
                };
                if !meta.is_dir() {
                    return refuse("is not a directory (a symlink is refused)");
                }
                // SAFETY: geteuid has no preconditions.
                if meta.uid() != unsafe { libc::geteuid() } {
                    return refuse("belongs to another user");
                }
                if std::fs::read_dir(dir)?.next().is_some() {
                    return refuse("is not empty");
                }
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            }
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("{}: {e}", dir.display()),
                ))
            }
        }
        Ok(Raw::Kept(dir.to_path_buf()))
    }

    fn path(&self) -> &Path {
        match self {
            Raw::Temporary(t) => t.path(),
            Raw::Kept(p) => p,
        }
    }

    /// Keeps the directory (after a failed report); returns it.
    fn keep(self) -> PathBuf {
        match self {
            Raw::Temporary(t) => t.keep(),
            Raw::Kept(p) => p,
        }
    }
}

/// Bytes recorded so far (the committed lengths of every chunk), for the progress line.
fn recorded_bytes(dir: &Path) -> u64 {
    let committed = |chunk: &Path| -> Option<u64> {
        let mut head = [0u8; 16];
        std::io::Read::read_exact(&mut std::fs::File::open(chunk).ok()?, &mut head).ok()?;
        Some(u64::from_le_bytes(head[8..16].try_into().ok()?))
    };
    let Ok(images) = std::fs::read_dir(dir) else {
        return 0;
    };
    images
        .flatten()
        .filter_map(|image| std::fs::read_dir(image.path()).ok())
        .flat_map(|files| files.flatten())
        .filter(|f| f.path().extension().is_some_and(|e| e == "events"))
        .filter_map(|f| committed(&f.path()))
        .sum()
}

/// Whether any process image loaded the tool (it makes its folder then).
fn anything_recorded(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
}

/// Whether a process of the recording initialized CUDA: the driver called
/// the tool, which then made its image's GPU file (CUPTI recording or not).
fn cuda_initialized(dir: &Path) -> bool {
    let images = std::fs::read_dir(dir).into_iter().flatten().flatten();
    images
        .map(|image| image.path().join(nvtxr_record_format::gpu::GPU_FILE))
        .any(|gpu| gpu.exists())
}

/// Which processes `nvtxr record` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Wait {
    All,
    Primary,
}

/// `nvtxr record`'s GPU options.
#[derive(Debug, clap::Args)]
pub struct GpuOptions {
    /// Record GPU activity through CUPTI (kernels, copies, sets, and the
    /// CUDA calls that launched them or waited, each under the NVTX range
    /// open around it): `auto` when the program uses CUDA and libcupti is
    /// found (else one warning line), `on` to make a missing libcupti an
    /// error before the program runs, `off` not to.
    #[arg(long, value_enum, default_value_t = Gpu::Auto)]
    pub gpu: Gpu,
    /// Also record CUPTI's synchronization records (what each stream,
    /// event or context wait waited on, as GPU rows). They cost about a
    /// third of a step in a launch-bound PyTorch loop (docs/gpu.md);
    /// without them the synchronizing calls are still recorded, as calls.
    #[arg(long)]
    pub gpu_syncs: bool,
    /// Milliseconds between the hand-overs of CUPTI's completed records
    /// while the program runs: a process that ends without running its
    /// exit handlers (killed, `_exit`, `exec`) loses at most about this
    /// much of its GPU activity. 0: only as CUPTI's buffers fill (4 MiB,
    /// some 16,000 kernels) and at exit.
    #[arg(long, value_name = "MS", default_value_t = GPU_FLUSH_DEFAULT_MS)]
    pub gpu_flush_interval: u64,
}

/// `nvtxr record --gpu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Gpu {
    Auto,
    On,
    Off,
}

impl Gpu {
    /// As the tool reads it (`NVTXR_GPU`).
    fn as_str(self) -> &'static str {
        match self {
            Gpu::Auto => "auto",
            Gpu::On => "on",
            Gpu::Off => "off",
        }
    }
}

/// With `--gpu on`: a libcupti that loads, found as the tool will look for
/// it (without the folders of the program's own CUDA libraries, unknown
/// before it runs).
fn check_cupti() -> Result<(), String> {
    use nvtxr_record_format::cupti::cupti_candidates;
    use std::os::unix::ffi::OsStrExt;
    let candidates = cupti_candidates(&[]);
    for path in &candidates {
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: a NUL-terminated path; the handle is closed right away
        // (RTLD_LAZY: nothing of it runs but its initializers).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
        if !handle.is_null() {
            // SAFETY: the handle just opened.
            unsafe { libc::dlclose(handle) };
            return Ok(());
        }
    }
    let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "--gpu on: no libcupti loads (tried {}); set {} to it, or install the CUDA toolkit or `pip install nvidia-cuda-cupti`",
        tried.join(", "),
        nvtxr_record_format::gpu::CUPTI_VAR
    ))
}

pub fn run(
    command: &[OsString],
    outputs: &Outputs,
    wait: Wait,
    keep: Option<&Path>,
    options: &GpuOptions,
) -> u8 {
    let shown = command[0].to_string_lossy().into_owned();
    let refuse = |code: u8, e: String| {
        eprintln!("nvtxr: {e}");
        code
    };
    // Everything that could fail is found before the program starts.
    if let Err(e) = outputs.check() {
        return refuse(2, e);
    }
    if let Err(e) = clock_choice(std::env::var_os(CLOCK_VAR).as_deref()) {
        return refuse(2, e);
    }
    let tool = match tool_library() {
        Ok(t) => t,
        Err(e) => return refuse(2, e),
    };
    // The driver loads one injection library: another tool's is left alone.
    let other_injection = std::env::var_os(nvtxr_record_format::gpu::CUDA_INJECTION_VAR)
        .filter(|v| !v.is_empty())
        .map(|v| PathBuf::from(v).display().to_string());
    let gpu = match (options.gpu, &other_injection) {
        (Gpu::On, Some(other)) => {
            return refuse(
                2,
                format!("--gpu on: CUDA_INJECTION64_PATH already names {other} (another tool's CUDA injection; the driver loads one): unset it"),
            )
        }
        (Gpu::Auto, Some(other)) => {
            eprintln!("nvtxr: GPU activity not recorded: CUDA_INJECTION64_PATH already names {other} (another tool's CUDA injection; the driver loads one), left as it is");
            Gpu::Off
        }
        (gpu, _) => gpu,
    };
    if gpu == Gpu::On {
        if let Err(e) = check_cupti() {
            return refuse(2, e);
        }
    }
    let raw = match Raw::new(keep) {
        Ok(d) => d,
        Err(e) => return refuse(1, format!("cannot create a recording directory: {e}")),
    };
    signals::install();
    // Orphaned descendants are re-parented to nvtxr, so it can wait for them
    // (a child that outlives its parent is recorded to its end).
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let mut child = Command::new(&command[0]);
    child
        .args(&command[1..])
        .env(nvtx_protocol::INJECTION_PATH_VAR, &tool.path)
        .env(nvtxr_record_format::DIR_VAR, raw.path())
        .env(nvtxr_record_format::gpu::GPU_VAR, gpu.as_str())
        .env(GPU_SYNCS_VAR, if options.gpu_syncs { "1" } else { "0" })
        .env(GPU_FLUSH_VAR, options.gpu_flush_interval.to_string());
    // The CUDA driver loads the same library at cuInit (see the tool's `gpu`).
    if gpu != Gpu::Off {
        child.env(nvtxr_record_format::gpu::CUDA_INJECTION_VAR, &tool.path);
    }
    let child = match child.spawn() {
        Ok(c) => c,
        Err(e) => return refuse(127, format!("cannot run {shown}: {e}")),
    };
    let primary = child.id() as i32;
    signals::set_child(primary);
    let progress = outputs.shows_progress();
    let started = Instant::now();
    let mut last = Instant::now();
    let mut primary_status = None;
    loop {
        let mut status = 0;
        // SAFETY: reaping our own children (and orphans re-parented to us).
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid == primary {
            signals::set_child(0);
            primary_status = Some(status);
            if wait == Wait::Primary {
                break;
            }
        } else if pid < 0 {
            break; // ECHILD: every process is gone.
        } else if pid == 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        if progress && last.elapsed() >= Duration::from_secs(1) {
            last = Instant::now();
            eprint!(
                "\rnvtxr record: {:.0} s, {:.1} MiB recorded   ",
                started.elapsed().as_secs_f64(),
                recorded_bytes(raw.path()) as f64 / (1 << 20) as f64
            );
            let _ = std::io::stderr().flush();
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    signals::converting();
    let code = match primary_status {
        Some(s) if libc::WIFEXITED(s) => libc::WEXITSTATUS(s),
        Some(s) if libc::WIFSIGNALED(s) => {
            let signal = libc::WTERMSIG(s);
            eprintln!("nvtxr: {shown} was killed by signal {signal}");
            128 + signal
        }
        _ => 1,
    };
    let failed = if code != 0 { code as u8 } else { 1 };
    if !anything_recorded(raw.path()) {
        return refuse(
            failed,
            format!("no process of {shown} loaded the recording tool: it made no NVTX call, or the tool could not attach (its message is above); nothing written"),
        );
    }
    // Asked for, and none: said (with `--gpu auto` a program without CUDA is not news).
    if gpu == Gpu::On && !cuda_initialized(raw.path()) {
        eprintln!("nvtxr record: GPU activity not recorded: no process of {shown} initialized CUDA (--gpu on; the CUDA driver loads the recording tool at cuInit)");
    }
    let finish = outputs.report_command(raw.path());
    if signals::terminated() {
        eprintln!(
            "nvtxr: terminated: writing the outputs now; if nvtxr is stopped first, the recording stays in {}: convert it with: {finish}",
            raw.path().display()
        );
    }
    signals::on_second_signal(&format!(
        "\nnvtxr: stopped; the recording is kept in {}; convert it with: {finish}\n",
        raw.path().display()
    ));
    let Err(e) = report(
        &[raw.path().to_path_buf()],
        outputs,
        &RankOptions::default(),
    ) else {
        if let (Raw::Kept(dir), false) = (&raw, outputs.quiet) {
            eprintln!("nvtxr: the recording is kept in {}", dir.display());
        }
        return code as u8;
    };
    if let Some(signal) = signals::stopped_by() {
        let kept = raw.keep();
        eprintln!(
            "nvtxr: stopped by signal {signal}; no output was left half-written; the recording is kept in {}; convert it with: {finish}",
            kept.display()
        );
        return 128 + signal as u8;
    }
    eprintln!("nvtxr: {}", e.message);
    if !e.empty {
        let kept = raw.keep();
        eprintln!(
            "nvtxr: the recording is kept in {}; convert it with: {finish}",
            kept.display()
        );
    }
    failed
}
