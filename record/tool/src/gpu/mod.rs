//! GPU activity through CUPTI: kernels, copies, sets and synchronizations,
//! each tied to the launch that caused it.
//!
//! `nvtxr record` names this library in `CUDA_INJECTION64_PATH` too; the
//! CUDA driver loads it at `cuInit` and calls [`InitializeInjection`]. That
//! loads libcupti (see [`cupti_candidates`](nvtxr_record_format::cupti::cupti_candidates)),
//! subscribes to the callbacks of the few API entry points that put work on a
//! GPU (not to whole API domains: CUPTI's records of every API call cost
//! 60% of a training step, these cost nothing measurable), and enables the
//! kernel, copy, set, synchronization and context activity records.
//!
//! - On the calling thread, each traced API call becomes a
//!   [`Kind::Launch`] record in the thread's own stream (its correlation id,
//!   entry and return times), where the converter finds the NVTX ranges open
//!   around it.
//! - CUPTI hands filled activity buffers to [`buffers`] on its own thread;
//!   they are appended to the image's `gpu` file, times on CLOCK_MONOTONIC.
//!
//! Whatever fails (no libcupti, another profiler subscribed, an error) is
//! one line on stderr and no GPU records: the NVTX recording and the program
//! go on as they would.

mod buffers;
mod cupti;

use crate::text::Event;
use crate::{clock, events, say};
use cupti::{offset, Cupti};
use nvtx_protocol::attr::PAYLOAD_U64;
use nvtx_protocol::boundary::guard_with;
use nvtxr_record_format::cupti::cupti_candidates;
use nvtxr_record_format::gpu::{GpuRecord, GPU_VAR};
use nvtxr_record_format::Kind;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The loaded CUPTI, once attached.
static CUPTI: OnceLock<Cupti> = OnceLock::new();
/// Set once everything is enabled: before (or after a failure on the way)
/// callbacks and buffers record nothing, so a warning's "not recorded" holds.
static ACTIVE: AtomicBool = AtomicBool::new(false);

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
    let cupti = Cupti::load(&cupti_candidates(&cuda_library_dirs()))?;
    let cupti = CUPTI.get_or_init(|| cupti);
    let mut subscriber = std::ptr::null_mut();
    // SAFETY: CUPTI's documented call: our callback lives for good.
    let r = unsafe { (cupti.subscribe)(&mut subscriber, on_api, std::ptr::null_mut()) };
    if r != cupti::SUCCESS {
        let who = if r == cupti::ERROR_MULTIPLE_SUBSCRIBERS {
            " (another profiler, such as Nsight Systems or torch.profiler, is using CUPTI)"
        } else {
            ""
        };
        return Err(format!("{}{who}", cupti.error("cuptiSubscribe", r)));
    }
    buffers::open(cupti)?;
    // GPU times on CLOCK_MONOTONIC: CUPTI reads it itself, or an offset to
    // its own clock is measured once.
    let registered = cupti.register_timestamp.is_some_and(|f| {
        // SAFETY: CUPTI's documented call; the reader lives for good.
        unsafe { f(monotonic_ns) == cupti::SUCCESS }
    });
    buffers::clock(if registered {
        GpuRecord::Clock {
            measured: false,
            offset: 0,
        }
    } else {
        let mut gpu = 0;
        // SAFETY: CUPTI's documented call, with a value to fill.
        unsafe { (cupti.get_timestamp)(&mut gpu) };
        GpuRecord::Clock {
            measured: true,
            offset: clock::monotonic_ns() as i64 - gpu as i64,
        }
    });
    let mut traced = 0;
    for domain in [cupti::DOMAIN_RUNTIME, cupti::DOMAIN_DRIVER] {
        for cbid in 1..4096 {
            let Some(name) = cupti.callback_name(domain, cbid) else {
                continue;
            };
            if !cupti::traced(&name) {
                continue;
            }
            // SAFETY: CUPTI's documented call, with our subscriber.
            if unsafe { (cupti.enable_callback)(1, subscriber, domain, cbid) } == cupti::SUCCESS {
                buffers::name_api(api_id(domain, cbid), &name);
                traced += 1;
            }
        }
    }
    if traced == 0 {
        say(format_args!(
            "GPU activity is recorded, but not which launch made it: {} names no launch entry point (cuptiGetCallbackName)",
            cupti.path.display()
        ));
    }
    for kind in [
        cupti::KIND_DEVICE,
        cupti::KIND_CONTEXT,
        cupti::KIND_CONCURRENT_KERNEL,
        cupti::KIND_MEMCPY,
        cupti::KIND_MEMSET,
        cupti::KIND_SYNCHRONIZATION,
    ] {
        // SAFETY: CUPTI's documented call.
        let r = unsafe { (cupti.activity_enable)(kind) };
        if r != cupti::SUCCESS {
            return Err(cupti.error(&format!("cuptiActivityEnable({kind})"), r));
        }
    }
    // The last buffers are handed over only when flushed: at exit, before
    // the CUDA driver tears its contexts down.
    // SAFETY: registers an `extern "C"` handler with no preconditions.
    unsafe { libc::atexit(flush_at_exit) };
    ACTIVE.store(true, Ordering::Release);
    Ok(())
}

/// An API's id in `Launch` records and the GPU file: CUPTI's callback domain and id.
fn api_id(domain: u32, cbid: u32) -> u64 {
    u64::from(domain) << 32 | u64::from(cbid)
}

extern "C" fn flush_at_exit() {
    flush();
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

/// Hands every buffer CUPTI holds to [`buffers`] (at exit, and in tests).
pub fn flush() {
    if !active() {
        return;
    }
    if let Some(cupti) = CUPTI.get() {
        // SAFETY: CUPTI's documented call.
        unsafe { (cupti.flush_all)(cupti::FLUSH_FORCED) };
    }
}

/// CUPTI's clock: CLOCK_MONOTONIC ns, the clock the recording converts to.
unsafe extern "C" fn monotonic_ns() -> u64 {
    clock::monotonic_ns()
}

/// A traced API call, on the calling thread: its entry time kept in the
/// call's correlation data; at its return, a `Launch` record.
unsafe extern "C" fn on_api(_: *mut c_void, domain: u32, cbid: u32, data: *const c_void) {
    if data.is_null() || !active() {
        return;
    }
    let data = data.cast::<u8>();
    // SAFETY: for the runtime and driver domains, `data` is a
    // `CUpti_CallbackData` (cupti_callbacks.h), whose correlation data
    // points to a u64 CUPTI keeps from the call's entry to its return.
    unsafe {
        let site: u32 = cupti::field(data, offset::CALLBACK_SITE);
        let slot: *mut u64 = cupti::field(data, offset::CALLBACK_CORRELATION_DATA);
        if slot.is_null() {
            return;
        }
        if site == cupti::API_ENTER {
            *slot = clock::now();
            return;
        }
        let correlation: u32 = cupti::field(data, offset::CALLBACK_CORRELATION_ID);
        let mut event = Event::simple(Kind::Launch, 0, correlation.into(), None);
        event.string = Some(api_id(domain, cbid));
        event.payload = (PAYLOAD_U64 as u8, *slot);
        events::record(&mut event);
    }
}

/// The folders of the CUDA libraries this process has loaded (where
/// libcupti usually lies too).
fn cuda_library_dirs() -> Vec<std::path::PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut dirs = Vec::new();
    for line in maps.lines() {
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        let path = std::path::Path::new(path);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("libcudart.so") || name.starts_with("libcuda.so") {
            if let Some(dir) = path.parent() {
                if !dirs.iter().any(|d: &std::path::PathBuf| d == dir) {
                    dirs.push(dir.to_path_buf());
                }
            }
        }
    }
    dirs
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
}
