//! GPU activity through CUPTI: kernels, copies, sets and synchronizations,
//! each tied to the launch that caused it.
//!
//! `nvtxr record` names this library in `CUDA_INJECTION64_PATH` too; the
//! CUDA driver loads it at `cuInit` and calls [`InitializeInjection`]. That
//! loads libcupti (see [`cupti_candidates`](nvtxr_record_format::cupti::cupti_candidates)),
//! subscribes (to hold CUPTI, with no callback enabled), and enables the
//! device, context, kernel, copy and set activity records, plus CUPTI's
//! records of the few API entry points that put work on a GPU or wait for
//! it (launches, copies, sets, graph launches, synchronizations), one API
//! at a time, and the synchronization records with `--gpu-syncs`.
//!
//! What each costs, measured on a launch-bound PyTorch loop on an H200
//! (docs/gpu.md): kernel, copy, set and per-API records nothing
//! measurable; a callback at each traced call's entry and return (what
//! earlier versions used) a third of a step; synchronization records
//! another third; records of every API call 60%.
//!
//! - An API record carries its thread (`gettid`, asked of CUPTI), times and
//!   correlation id: the converter places it among that thread's NVTX
//!   events by time, which finds the ranges open around the launch.
//! - CUPTI hands filled activity buffers to [`buffers`] on its own thread;
//!   they are appended to the image's `gpu` file, times on the recording
//!   clock's line (see `recording_clock_ns`).
//! - A thread of the tool asks CUPTI for its completed records every
//!   `nvtxr record --gpu-flush-interval` (a second by default), and the
//!   exit handler for all of them: a process that ends without exit
//!   handlers (killed, `_exit`, `exec`) loses at most the last interval's.
//!
//! Whatever fails (no libcupti, another profiler subscribed, an error) is
//! one line on stderr and no GPU records: the NVTX recording and the program
//! go on as they would.

mod buffers;
mod bus;
mod cupti;

use crate::{clock, say};
use cupti::Cupti;
use nvtx_protocol::boundary::guard_with;
use nvtxr_record_format::cupti::cupti_candidates;
use nvtxr_record_format::gpu::{
    GpuClock, GpuRecord, GPU_FLUSH_DEFAULT_MS, GPU_FLUSH_VAR, GPU_SYNCS_VAR, GPU_VAR,
};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::time::Duration;

/// The loaded CUPTI, once attached.
static CUPTI: OnceLock<Cupti> = OnceLock::new();
/// Set once everything is enabled: before (or after a failure on the way)
/// callbacks and buffers record nothing, so a warning's "not recorded" holds.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Held while CUPTI flushes; set once the flush at exit has run, after
/// which no other does (CUPTI and the driver are being torn down).
static EXITED: Mutex<bool> = Mutex::new(false);
/// How long the exit handler waits for a periodic flush still running
/// (one that never returns must not hang the program's exit).
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Whether GPU activity is being recorded.
fn active() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Called by the CUDA driver at `cuInit` when `CUDA_INJECTION64_PATH`
/// names this library. Returns 1 (the driver ignores the value).
#[unsafe(no_mangle)]
pub extern "C" fn InitializeInjection() -> c_int {
    let attached = guard_with(
        || Err("an internal error".to_string()),
        || {
            if std::env::var(GPU_VAR).is_ok_and(|v| v == "off") || !crate::setup() {
                return Ok(());
            }
            attach()
        },
    );
    if let Err(why) = attached {
        say(format_args!("GPU activity not recorded: {why}"));
    }
    1
}

/// Loads CUPTI, subscribes and enables the records.
fn attach() -> Result<(), String> {
    if CUPTI.get().is_some() {
        return Ok(());
    }
    buffers::create()?;
    let cupti = Cupti::load(&cupti_candidates(&loaded_cuda_libraries()))?;
    let cupti = CUPTI.get_or_init(|| cupti);
    let mut version = 0;
    // SAFETY: CUPTI's documented call, with a value to fill.
    let r = unsafe { (cupti.get_version)(&mut version) };
    if r != cupti::SUCCESS {
        return Err(cupti.error("cuptiGetVersion", r));
    }
    if version < cupti::MIN_API_VERSION {
        return Err(format!(
            "{} is CUPTI API version {version}, older than CUDA 11.6's ({}), whose activity records nvtxr reads",
            cupti.path.display(),
            cupti::MIN_API_VERSION
        ));
    }
    let mut subscriber = std::ptr::null_mut();
    // SAFETY: CUPTI's documented call: our callback lives for good.
    let r = unsafe { (cupti.subscribe)(&mut subscriber, no_callback, std::ptr::null_mut()) };
    if r != cupti::SUCCESS {
        let who = if r == cupti::ERROR_MULTIPLE_SUBSCRIBERS {
            " (another profiler, such as Nsight Systems or torch.profiler, is using CUPTI)"
        } else {
            ""
        };
        return Err(format!("{}{who}", cupti.error("cuptiSubscribe", r)));
    }
    // SAFETY: CUPTI's documented call.
    let r = unsafe { (cupti.set_thread_id_type)(cupti::THREAD_ID_TYPE_SYSTEM) };
    if r != cupti::SUCCESS {
        return Err(cupti.error("cuptiSetThreadIdType", r));
    }
    buffers::open(cupti)?;
    // GPU times on the recording clock's line, read by CUPTI itself, so that
    // the converter places them through the same anchors as the NVTX
    // events (to the tick: a launch right after a push stays inside it);
    // or, should CUPTI refuse, an offset to its own clock measured once.
    let registered = cupti.register_timestamp.is_some_and(|f| {
        // SAFETY: CUPTI's documented call; the reader lives for good.
        unsafe { f(recording_clock_ns) == cupti::SUCCESS }
    });
    buffers::clock(GpuRecord::Clock(if registered {
        GpuClock::RecordingClock
    } else {
        let mut gpu = 0;
        // SAFETY: CUPTI's documented call, with a value to fill.
        unsafe { (cupti.get_timestamp)(&mut gpu) };
        GpuClock::Offset(clock::monotonic_ns() as i64 - gpu as i64)
    }));
    let syncs = std::env::var(GPU_SYNCS_VAR).is_ok_and(|v| v == "1");
    let mut kinds = vec![
        cupti::KIND_DEVICE,
        cupti::KIND_CONTEXT,
        cupti::KIND_CONCURRENT_KERNEL,
        cupti::KIND_MEMCPY,
        cupti::KIND_MEMSET,
    ];
    if syncs {
        kinds.push(cupti::KIND_SYNCHRONIZATION);
    }
    if !trace_apis(cupti) {
        // All or nothing: every call recorded, the traced ones kept.
        kinds.extend([cupti::KIND_RUNTIME, cupti::KIND_DRIVER]);
    }
    for kind in kinds {
        // SAFETY: CUPTI's documented call.
        let r = unsafe { (cupti.activity_enable)(kind) };
        if r != cupti::SUCCESS {
            return Err(cupti.error(&format!("cuptiActivityEnable({kind})"), r));
        }
    }
    // Copies between GPUs: a CUPTI that refuses them records the rest.
    // SAFETY: CUPTI's documented call.
    let r = unsafe { (cupti.activity_enable)(cupti::KIND_MEMCPY2) };
    if r != cupti::SUCCESS {
        let why = cupti.error(&format!("cuptiActivityEnable({})", cupti::KIND_MEMCPY2), r);
        say(format_args!("GPU peer-to-peer copies not recorded: {why}"));
    }
    // The last buffers are handed over only when flushed: at exit, before
    // the CUDA driver tears its contexts down.
    // SAFETY: registers an `extern "C"` handler with no preconditions.
    unsafe { libc::atexit(flush_at_exit) };
    ACTIVE.store(true, Ordering::Release);
    let interval = std::env::var(GPU_FLUSH_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GPU_FLUSH_DEFAULT_MS);
    if interval > 0 {
        let every = Duration::from_millis(interval);
        if let Err(e) = crate::spawn_thread("nvtxr-gpu", move || flush_every(every)) {
            say(format_args!(
                "GPU activity records handed over at exit only: cannot start a thread: {e}"
            ));
        }
    }
    Ok(())
}

/// Which records a flush asks CUPTI for.
#[derive(Clone, Copy, PartialEq)]
enum Flush {
    /// Those whose records are complete, while the program runs.
    Completed,
    /// All of them, at exit: the last flush.
    Last,
}

/// The flushing thread: CUPTI's completed records every `interval`, until
/// CUPTI fails (said once: the records then wait for the flush at exit).
/// CUPTI's header describes this use of its default flush: "Default flush
/// can be done at a regular interval in a separate thread."
fn flush_every(interval: Duration) {
    loop {
        std::thread::sleep(interval);
        let exited = EXITED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(why) = flush(Flush::Completed, exited) {
            say(format_args!(
                "GPU activity records handed over at exit only from here on: {why}"
            ));
            return;
        }
    }
}

/// An API's id in the GPU file: CUPTI's callback domain and id.
fn api_id(domain: u32, cbid: u32) -> u64 {
    u64::from(domain) << 32 | u64::from(cbid)
}

/// Names the traced APIs (those [`cupti::traced`] keeps, found by name) in
/// the GPU file and asks CUPTI for their records, one API at a time (an API
/// this CUPTI refuses is one this driver does not have). `false` when this
/// CUPTI cannot (no per-API control, or it refused every API): the caller
/// then enables whole API kinds, and [`buffers`] keeps the traced calls'
/// records alone, at CUPTI's cost of recording every call.
fn trace_apis(cupti: &Cupti) -> bool {
    let mut traced = Vec::new();
    for domain in [cupti::DOMAIN_RUNTIME, cupti::DOMAIN_DRIVER] {
        for cbid in 1..4096 {
            if let Some(name) = cupti.callback_name(domain, cbid) {
                if cupti::traced(&name) {
                    buffers::name_api(api_id(domain, cbid), &name);
                    traced.push((domain, cbid));
                }
            }
        }
    }
    if traced.is_empty() {
        say(format_args!(
            "GPU activity is recorded, but not which launch made it: {} names no launch entry point (cuptiGetCallbackName)",
            cupti.path.display()
        ));
        return true;
    }
    buffers::trace(traced.iter().map(|(d, c)| api_id(*d, *c)).collect());
    let enabled = (traced.iter())
        .filter(|&&(domain, cbid)| {
            let enable = match domain {
                cupti::DOMAIN_RUNTIME => cupti.enable_runtime_api,
                _ => cupti.enable_driver_api,
            };
            // SAFETY: CUPTI's documented call.
            enable.is_some_and(|f| unsafe { f(cbid, 1) } == cupti::SUCCESS)
        })
        .count();
    if enabled == 0 {
        say(format_args!(
            "{} cannot record only the launch calls (no cuptiActivityEnableRuntimeApi): it records every CUDA API call, which slows a program that launches many kernels",
            cupti.path.display()
        ));
    }
    enabled > 0
}

extern "C" fn flush_at_exit() {
    // A forked child's handler (inherited) writes nothing to its parent's file.
    if !active() {
        return;
    }
    let lost = |why: &dyn std::fmt::Display| {
        say(format_args!(
            "GPU activity records lost: {why}; the records CUPTI still held are left out"
        ))
    };
    // A periodic flush stuck in CUPTI is given up on after a while.
    match lock_at_exit(&EXITED) {
        Some(exited) => {
            buffers::reclaim();
            if let Err(why) = flush(Flush::Last, exited) {
                lost(&why);
            }
            if let Some(taken) = buffers::taken() {
                say(format_args!("GPU activity records lost: {taken}"));
            }
        }
        None => lost(&format_args!(
            "the periodic cuptiActivityFlushAll has not returned in {} s",
            EXIT_WAIT.as_secs()
        )),
    }
    buffers::exited();
}

/// In a forked child: the parent's CUPTI session is the parent's. The
/// child records no GPU activity through it, never writes the records
/// waiting in its copy of CUPTI's buffers (they are the parent's, which
/// writes them) and, at exit, does not flush CUPTI (whose threads stayed in
/// the parent). A child that initializes CUDA itself, from a parent that
/// never did, attaches as any process does.
pub fn after_fork_in_child() {
    ACTIVE.store(false, Ordering::Release);
}

/// Asks CUPTI to hand its buffers to [`buffers`] (`what` says which),
/// holding [`EXITED`]'s lock; `Err` says why it could not. Nothing once the
/// flush at exit has run. (Never called in a forked child, which never
/// takes the lock a parent's thread may have held.)
fn flush(what: Flush, mut exited: MutexGuard<bool>) -> Result<(), String> {
    let Some(cupti) = CUPTI.get().filter(|_| !*exited) else {
        return Ok(());
    };
    *exited = what == Flush::Last;
    let flag = match what {
        Flush::Completed => 0,
        Flush::Last => cupti::FLUSH_FORCED,
    };
    // SAFETY: CUPTI's documented call.
    let r = unsafe { (cupti.flush_all)(flag) };
    if r != cupti::SUCCESS {
        return Err(cupti.error("cuptiActivityFlushAll", r));
    }
    Ok(())
}

/// `m`'s lock, waited for at most [`EXIT_WAIT`]: at exit, where a thread
/// stuck holding it must not hang the program.
fn lock_at_exit<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    let until = std::time::Instant::now() + EXIT_WAIT;
    loop {
        match m.try_lock() {
            Ok(guard) => return Some(guard),
            Err(TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(TryLockError::WouldBlock) => return None,
        }
    }
}

/// CUPTI's clock: the recording clock on its calibration's line
/// (`Calibration::line_ns`), in ns as CUPTI wants them; the converter takes
/// them back to counter readings and places them as it places the NVTX
/// events. CUPTI asks only after [`attach`], which the recording's start
/// (its calibration) comes before.
unsafe extern "C" fn recording_clock_ns() -> u64 {
    let now = clock::now();
    match crate::recording::calibration() {
        Some(calibration) => calibration.line_ns(now),
        None => clock::monotonic_ns(),
    }
}

/// The subscriber's callback: none is enabled, so it is never called.
unsafe extern "C" fn no_callback(_: *mut c_void, _: u32, _: u32, _: *const c_void) {}

/// The CUDA libraries this process has loaded (libcudart, libcuda, and
/// libcupti when the program loaded it itself), each file once.
fn loaded_cuda_libraries() -> Vec<std::path::PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for path in maps.lines().filter_map(|l| l.split_whitespace().nth(5)) {
        let path = std::path::Path::new(path);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let cuda = ["libcudart.so", "libcuda.so", "libcupti.so"];
        if cuda.iter().any(|c| name.starts_with(c)) && !files.iter().any(|f| f == path) {
            files.push(path.to_path_buf());
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::cupti::traced;

    #[test]
    fn only_the_calls_that_put_work_on_a_gpu_are_traced() {
        for name in [
            "cudaLaunchKernel_v7000",
            "cuLaunchKernel",
            "cuLaunchKernelEx_ptsz",
            "cudaMemcpyAsync_v3020",
            "cuMemsetD8_v2",
            "cudaGraphLaunch_v10000",
            "cudaStreamSynchronize_v3020",
            "cuCtxSynchronize",
        ] {
            assert!(traced(name), "{name}");
        }
        for name in [
            "cudaMalloc_v3020",
            "cuCtxGetCurrent",
            "cudaGetDevice_v3020",
            "cudaFree",
        ] {
            assert!(!traced(name), "{name}");
        }
    }

    #[test]
    fn the_gpu_checks_cupti_probe_traces_the_same_apis() {
        let probe = include_str!("../../../../tests/gpu/cupti_probe.c");
        let list = probe.split("prefixes[] = {").nth(1).unwrap();
        let list = &list[..list.find("};").unwrap()];
        let names: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
        assert_eq!(names, super::cupti::TRACED);
    }
}
