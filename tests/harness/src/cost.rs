//! What running a child costs: its wall time, CPU time and peak memory, and
//! the bytes it left on disk (the benchmarks' figures).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// A child's wall time, CPU time and peak resident memory.
pub struct Cost {
    pub wall: f64,
    pub cpu: f64,
    pub rss_mb: f64,
}

/// Runs `cmd` to its end; its cost and stdout.
pub fn measured(cmd: &mut Command) -> (Cost, String) {
    let started = Instant::now();
    // Reaped by `wait4` below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, filling our rusage.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(
        pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed"
    );
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        Cost {
            wall: started.elapsed().as_secs_f64(),
            cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            rss_mb: usage.ru_maxrss as f64 / 1024.0,
        },
        stdout,
    )
}

/// The bytes a file holds, or every file under a folder.
pub fn bytes_on_disk(path: &Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| bytes_on_disk(&e.unwrap().path()))
            .sum()
    } else {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }
}
