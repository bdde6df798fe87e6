//! `nvtxr record`: runs a command with the recording tool attached (its
//! children inherit it), forwards SIGINT and SIGTERM to it, shows progress on
//! a terminal, then writes the outputs.

use crate::{report, Outputs};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The running child, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(signal: libc::c_int) {
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
}

/// The recording tool library: `NVTXR_RECORD_TOOL`, or next to this program,
/// or in `../lib` (an installed layout).
fn tool_library() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("NVTXR_RECORD_TOOL") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    [
        dir.join("libnvtxr_record.so"),
        dir.join("../lib/libnvtxr_record.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| {
        format!(
            "cannot find libnvtxr_record.so next to {} (set NVTXR_RECORD_TOOL)",
            exe.display()
        )
    })
}

/// Bytes recorded so far, for the progress line.
fn recorded_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

pub fn run(command: &[String], outputs: &Outputs) -> ExitCode {
    let tool = match tool_library() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("nvtxr: {e}");
            return ExitCode::from(2);
        }
    };
    let raw = std::env::temp_dir().join(format!("nvtxr-record-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&raw) {
        eprintln!("nvtxr: cannot create {}: {e}", raw.display());
        return ExitCode::from(1);
    }
    let mut child = match Command::new(&command[0])
        .args(&command[1..])
        .env("NVTX_INJECTION64_PATH", &tool)
        .env(nvtxr_record::DIR_VAR, &raw)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("nvtxr: cannot run {}: {e}", command[0]);
            let _ = std::fs::remove_dir_all(&raw);
            return ExitCode::from(127);
        }
    };
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    // SAFETY: installing a handler that only calls kill().
    unsafe {
        libc::signal(
            libc::SIGINT,
            forward as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGTERM,
            forward as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let progress = !outputs.quiet && std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                eprintln!("nvtxr: waiting for {}: {e}", command[0]);
                return ExitCode::from(1);
            }
        }
        if progress && last.elapsed() >= Duration::from_secs(1) {
            last = Instant::now();
            eprint!(
                "\rnvtxr record: {:.0} s, {:.1} MiB recorded   ",
                started.elapsed().as_secs_f64(),
                recorded_bytes(&raw) as f64 / (1 << 20) as f64
            );
            let _ = std::io::stderr().flush();
        }
    };
    if progress {
        eprint!("\r\x1b[K");
    }
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => {
            eprintln!("nvtxr: {} was killed by signal {s}", command[0]);
            128 + s
        }
        _ => 1,
    };
    match report(&raw, outputs) {
        Ok(()) => {
            let _ = std::fs::remove_dir_all(&raw);
            ExitCode::from(code as u8)
        }
        Err(e) => {
            eprintln!("nvtxr: {e}");
            eprintln!(
                "nvtxr: the recording is kept in {}; convert it with: nvtxr report {0}",
                raw.display()
            );
            ExitCode::from(if code != 0 { code as u8 } else { 1 })
        }
    }
}
