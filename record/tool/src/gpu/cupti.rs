//! CUPTI as the tool uses it: the library loaded at run time (`dlopen`), the
//! few entry points called, and the numbers and record layouts they take,
//! written from NVIDIA's `cupti_activity.h`, `cupti_callbacks.h` and
//! `cupti_result.h` (CUPTI 13; the test `record/cli/tests/cupti_layout.rs`
//! checks every number and offset here against those headers, and the
//! offsets against CUDA 11.6's records too).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;

pub type CuptiResult = c_int;
pub const SUCCESS: CuptiResult = 0;
pub const ERROR_MULTIPLE_SUBSCRIBERS: CuptiResult = 39;
/// `cuptiActivityGetNextRecord`'s end of a buffer.
pub const ERROR_MAX_LIMIT_REACHED: CuptiResult = 12;
/// The oldest CUPTI API version (`cuptiGetVersion`) whose records have the
/// layouts of [`offset`]: CUDA 11.6's, 17 (`cupti_version.h`), the first
/// with `CUpti_ActivityMemcpy5` and `Memset4`.
pub const MIN_API_VERSION: u32 = 17;

/// `CUpti_CallbackDomain`.
pub const DOMAIN_DRIVER: u32 = 1;
pub const DOMAIN_RUNTIME: u32 = 2;
/// `CUpti_ActivityThreadIdType`: the kernel's thread id (`gettid`).
pub const THREAD_ID_TYPE_SYSTEM: u32 = 1;

/// `CUpti_ActivityKind`.
pub const KIND_MEMCPY: u32 = 1;
pub const KIND_MEMSET: u32 = 2;
pub const KIND_KERNEL: u32 = 3;
pub const KIND_DRIVER: u32 = 4;
pub const KIND_RUNTIME: u32 = 5;
pub const KIND_DEVICE: u32 = 8;
pub const KIND_CONTEXT: u32 = 9;
pub const KIND_CONCURRENT_KERNEL: u32 = 10;
pub const KIND_MEMCPY2: u32 = 22;
pub const KIND_SYNCHRONIZATION: u32 = 38;
/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`.
pub const FLUSH_FORCED: u32 = 1;

/// Byte offsets of the fields read from activity records. Kernel records
/// (`CUpti_ActivityKernel6` to `13`) share this prefix; so do the copy
/// (`Memcpy5` to `7`, peer-to-peer `MemcpyPtoP3`, `4`), set (`Memset4`,
/// `5`), context and synchronization ones: every CUPTI since
/// [`MIN_API_VERSION`] writes one of them. Runtime and driver API records
/// are `CUpti_ActivityAPI`.
pub mod offset {
    pub const KERNEL_REGISTERS: usize = 6;
    pub const KERNEL_START: usize = 16;
    pub const KERNEL_END: usize = 24;
    pub const KERNEL_DEVICE: usize = 40;
    pub const KERNEL_CONTEXT: usize = 44;
    pub const KERNEL_STREAM: usize = 48;
    pub const KERNEL_GRID: usize = 52;
    pub const KERNEL_BLOCK: usize = 64;
    pub const KERNEL_STATIC_SHARED: usize = 76;
    pub const KERNEL_DYNAMIC_SHARED: usize = 80;
    pub const KERNEL_LOCAL_PER_THREAD: usize = 84;
    pub const KERNEL_LOCAL_TOTAL: usize = 88;
    pub const KERNEL_CORRELATION: usize = 92;
    pub const KERNEL_GRID_ID: usize = 96;
    pub const KERNEL_NAME: usize = 104;
    pub const KERNEL_SHARED_EXECUTED: usize = 140;
    pub const KERNEL_LAUNCH_TYPE: usize = 136;
    pub const KERNEL_SHARED_LIMIT: usize = 152;
    pub const KERNEL_GRAPH_NODE: usize = 144;
    pub const KERNEL_GRAPH: usize = 156;

    pub const MEMCPY_COPY_KIND: usize = 4;
    pub const MEMCPY_SRC_KIND: usize = 5;
    pub const MEMCPY_DST_KIND: usize = 6;
    pub const MEMCPY_BYTES: usize = 8;
    pub const MEMCPY_START: usize = 16;
    pub const MEMCPY_END: usize = 24;
    pub const MEMCPY_DEVICE: usize = 32;
    pub const MEMCPY_CONTEXT: usize = 36;
    pub const MEMCPY_STREAM: usize = 40;
    pub const MEMCPY_CORRELATION: usize = 44;
    pub const MEMCPY_GRAPH_NODE: usize = 64;
    pub const MEMCPY_GRAPH: usize = 72;

    /// Peer-to-peer copies (`CUpti_ActivityMemcpyPtoP3`, `4`) have a copy's
    /// first fields (`MEMCPY_COPY_KIND` to `MEMCPY_STREAM`), then these.
    pub const PEER_SRC_DEVICE: usize = 44;
    pub const PEER_SRC_CONTEXT: usize = 48;
    pub const PEER_DST_DEVICE: usize = 52;
    pub const PEER_DST_CONTEXT: usize = 56;
    pub const PEER_CORRELATION: usize = 60;
    pub const PEER_GRAPH_NODE: usize = 72;
    pub const PEER_GRAPH: usize = 80;

    pub const MEMSET_VALUE: usize = 4;
    pub const MEMSET_BYTES: usize = 8;
    pub const MEMSET_START: usize = 16;
    pub const MEMSET_END: usize = 24;
    pub const MEMSET_DEVICE: usize = 32;
    pub const MEMSET_CONTEXT: usize = 36;
    pub const MEMSET_STREAM: usize = 40;
    pub const MEMSET_CORRELATION: usize = 44;
    pub const MEMSET_MEMORY_KIND: usize = 50;
    pub const MEMSET_GRAPH_NODE: usize = 64;
    pub const MEMSET_GRAPH: usize = 72;

    pub const SYNC_TYPE: usize = 4;
    pub const SYNC_START: usize = 8;
    pub const SYNC_END: usize = 16;
    pub const SYNC_CORRELATION: usize = 24;
    pub const SYNC_CONTEXT: usize = 28;
    pub const SYNC_STREAM: usize = 32;
    pub const SYNC_EVENT: usize = 36;

    pub const CONTEXT_CONTEXT: usize = 4;
    pub const CONTEXT_DEVICE: usize = 8;

    /// `CUpti_ActivityDevice6` (`CUPTI_ACTIVITY_KIND_DEVICE`).
    pub const DEVICE_BANDWIDTH: usize = 8;
    pub const DEVICE_MEMORY: usize = 16;
    pub const DEVICE_CONSTANT_MEMORY: usize = 24;
    pub const DEVICE_L2_CACHE: usize = 28;
    pub const DEVICE_THREADS_PER_WARP: usize = 32;
    pub const DEVICE_CLOCK: usize = 36;
    pub const DEVICE_COPY_ENGINES: usize = 40;
    pub const DEVICE_MAX_IPC: usize = 48;
    pub const DEVICE_WARPS_PER_SM: usize = 52;
    pub const DEVICE_BLOCKS_PER_SM: usize = 56;
    pub const DEVICE_SHARED_PER_SM: usize = 60;
    pub const DEVICE_REGISTERS_PER_SM: usize = 64;
    pub const DEVICE_REGISTERS_PER_BLOCK: usize = 68;
    pub const DEVICE_SHARED_PER_BLOCK: usize = 72;
    pub const DEVICE_THREADS_PER_BLOCK: usize = 76;
    /// A block's largest x, y, z (three `uint32_t`), then a grid's.
    pub const DEVICE_BLOCK_DIMS: usize = 80;
    pub const DEVICE_GRID_DIMS: usize = 92;
    pub const DEVICE_MULTIPROCESSORS: usize = 44;
    pub const DEVICE_COMPUTE_MAJOR: usize = 104;
    pub const DEVICE_COMPUTE_MINOR: usize = 108;
    pub const DEVICE_ID: usize = 112;
    /// `CUuuid`: 16 bytes.
    pub const DEVICE_UUID: usize = 120;
    pub const DEVICE_NAME: usize = 136;

    pub const API_CBID: usize = 4;
    pub const API_START: usize = 8;
    pub const API_END: usize = 16;
    pub const API_THREAD: usize = 28;
    pub const API_CORRELATION: usize = 32;
}

/// Reads a `T` at `offset` of a record.
///
/// # Safety
/// `record + offset` holds a `T` (alignment not needed).
pub unsafe fn field<T: Copy>(record: *const u8, offset: usize) -> T {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe { record.add(offset).cast::<T>().read_unaligned() }
}

pub type CallbackFunc = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);
pub type BufferRequested = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
pub type BufferCompleted = unsafe extern "C" fn(*mut c_void, u32, *mut u8, usize, usize);
pub type TimestampFunc = unsafe extern "C" fn() -> u64;

/// The entry points called, found in the loaded library.
pub struct Cupti {
    pub path: PathBuf,
    pub get_version: unsafe extern "C" fn(*mut u32) -> CuptiResult,
    pub subscribe: unsafe extern "C" fn(*mut *mut c_void, CallbackFunc, *mut c_void) -> CuptiResult,
    pub set_thread_id_type: unsafe extern "C" fn(u32) -> CuptiResult,
    pub get_callback_name:
        Option<unsafe extern "C" fn(u32, u32, *mut *const c_char) -> CuptiResult>,
    pub activity_enable: unsafe extern "C" fn(u32) -> CuptiResult,
    /// Per API (`cuptiActivityEnableRuntimeApi`, `...DriverApi`, in recent
    /// CUPTI releases): records of the traced calls only, not of every call.
    pub enable_runtime_api: Option<unsafe extern "C" fn(u32, u8) -> CuptiResult>,
    pub enable_driver_api: Option<unsafe extern "C" fn(u32, u8) -> CuptiResult>,
    pub register_callbacks: unsafe extern "C" fn(BufferRequested, BufferCompleted) -> CuptiResult,
    pub get_next_record: unsafe extern "C" fn(*mut u8, usize, *mut *mut u8) -> CuptiResult,
    pub dropped: unsafe extern "C" fn(*mut c_void, u32, *mut usize) -> CuptiResult,
    pub flush_all: unsafe extern "C" fn(u32) -> CuptiResult,
    pub get_timestamp: unsafe extern "C" fn(*mut u64) -> CuptiResult,
    pub register_timestamp: Option<unsafe extern "C" fn(TimestampFunc) -> CuptiResult>,
    pub result_string: Option<unsafe extern "C" fn(CuptiResult, *mut *const c_char) -> CuptiResult>,
}

impl Cupti {
    /// The first of `candidates` that loads and has every entry point
    /// needed; `Err` says what was tried.
    pub fn load(candidates: &[PathBuf]) -> Result<Cupti, String> {
        let mut tried = Vec::new();
        for path in candidates {
            match Self::load_one(path) {
                Ok(c) => return Ok(c),
                Err(e) => tried.push(e),
            }
        }
        Err(format!("no usable libcupti ({})", tried.join("; ")))
    }

    fn load_one(path: &std::path::Path) -> Result<Cupti, String> {
        use std::os::unix::ffi::OsStrExt;
        let shown = path.display();
        let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| "NUL in a path")?;
        // SAFETY: a NUL-terminated path; the library stays loaded for good.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a NUL-terminated message.
            let why = unsafe { libc::dlerror() };
            let why = if why.is_null() {
                "cannot be loaded".into()
            } else {
                // SAFETY: as above.
                unsafe { CStr::from_ptr(why) }
                    .to_string_lossy()
                    .into_owned()
            };
            return Err(format!("{shown}: {why}"));
        }
        let symbol = |name: &str| {
            let c = CString::new(name).expect("a symbol name");
            // SAFETY: a loaded library's handle and a NUL-terminated name.
            let f = unsafe { libc::dlsym(handle, c.as_ptr()) };
            (!f.is_null()).then_some(f)
        };
        macro_rules! required {
            ($name:literal, $ty:ty) => {
                match symbol($name) {
                    // SAFETY: CUPTI's entry point of that name has the
                    // signature of the field it fills (cupti_*.h).
                    Some(f) => unsafe { std::mem::transmute::<*mut c_void, $ty>(f) },
                    None => return Err(format!("{shown}: no {}", $name)),
                }
            };
        }
        macro_rules! optional {
            ($name:literal, $ty:ty) => {
                // SAFETY: as for `required`.
                symbol($name).map(|f| unsafe { std::mem::transmute::<*mut c_void, $ty>(f) })
            };
        }
        Ok(Cupti {
            path: path.to_path_buf(),
            get_version: required!(
                "cuptiGetVersion",
                unsafe extern "C" fn(*mut u32) -> CuptiResult
            ),
            subscribe: required!(
                "cuptiSubscribe",
                unsafe extern "C" fn(*mut *mut c_void, CallbackFunc, *mut c_void) -> CuptiResult
            ),
            set_thread_id_type: required!(
                "cuptiSetThreadIdType",
                unsafe extern "C" fn(u32) -> CuptiResult
            ),
            get_callback_name: optional!(
                "cuptiGetCallbackName",
                unsafe extern "C" fn(u32, u32, *mut *const c_char) -> CuptiResult
            ),
            activity_enable: required!(
                "cuptiActivityEnable",
                unsafe extern "C" fn(u32) -> CuptiResult
            ),
            enable_runtime_api: optional!(
                "cuptiActivityEnableRuntimeApi",
                unsafe extern "C" fn(u32, u8) -> CuptiResult
            ),
            enable_driver_api: optional!(
                "cuptiActivityEnableDriverApi",
                unsafe extern "C" fn(u32, u8) -> CuptiResult
            ),
            register_callbacks: required!(
                "cuptiActivityRegisterCallbacks",
                unsafe extern "C" fn(BufferRequested, BufferCompleted) -> CuptiResult
            ),
            get_next_record: required!(
                "cuptiActivityGetNextRecord",
                unsafe extern "C" fn(*mut u8, usize, *mut *mut u8) -> CuptiResult
            ),
            dropped: required!(
                "cuptiActivityGetNumDroppedRecords",
                unsafe extern "C" fn(*mut c_void, u32, *mut usize) -> CuptiResult
            ),
            flush_all: required!(
                "cuptiActivityFlushAll",
                unsafe extern "C" fn(u32) -> CuptiResult
            ),
            get_timestamp: required!(
                "cuptiGetTimestamp",
                unsafe extern "C" fn(*mut u64) -> CuptiResult
            ),
            register_timestamp: optional!(
                "cuptiActivityRegisterTimestampCallback",
                unsafe extern "C" fn(TimestampFunc) -> CuptiResult
            ),
            result_string: optional!(
                "cuptiGetResultString",
                unsafe extern "C" fn(CuptiResult, *mut *const c_char) -> CuptiResult
            ),
        })
    }

    /// `what` failed with `result`: a message naming both.
    pub fn error(&self, what: &str, result: CuptiResult) -> String {
        let mut text: *const c_char = std::ptr::null();
        let named = self.result_string.is_some_and(|f| {
            // SAFETY: CUPTI's documented call, with a pointer to fill.
            unsafe { f(result, &mut text) == SUCCESS && !text.is_null() }
        });
        if named {
            // SAFETY: CUPTI returned a static, NUL-terminated name.
            let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
            format!("{what}: {text} ({result})")
        } else {
            format!("{what}: error {result}")
        }
    }

    /// The API's name, for `domain` and `cbid`, if CUPTI knows it.
    pub fn callback_name(&self, domain: u32, cbid: u32) -> Option<String> {
        let f = self.get_callback_name?;
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: CUPTI's documented call, with a pointer to fill.
        let ok = unsafe { f(domain, cbid, &mut name) } == SUCCESS && !name.is_null();
        ok.then(|| {
            // SAFETY: CUPTI returned a static, NUL-terminated name.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        })
    }
}

/// The beginnings of the names of the APIs that put work on a GPU, then of
/// those that wait for it: the calls whose correlation id ties GPU activity
/// to its launch. (`tests/gpu/cupti_probe.c` asks CUPTI for the same.)
pub const TRACED: [&str; 16] = [
    "cudaLaunch",
    "cuLaunch",
    "cudaMemcpy",
    "cuMemcpy",
    "cudaMemset",
    "cuMemset",
    "cudaGraphLaunch",
    "cuGraphLaunch",
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaStreamWaitEvent",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuStreamWaitEvent",
];

/// Whether the API of this name is traced (see [`TRACED`]).
pub fn traced(name: &str) -> bool {
    TRACED.iter().any(|p| name.starts_with(p))
}
