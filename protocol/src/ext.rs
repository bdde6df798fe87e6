//! NVTX3's extension modules (payloads and deferred events, counters,
//! memory): how a producer asks a tool to fill each module's function
//! slots, and every function's callback id, signature and no-tool value
//! (`nvtx3/nvtxDetail/nvtxExt*.h`).
//!
//! Each module is initialized lazily, once, at its first call: the
//! producer initializes the core first, then calls the tool library's
//! [`ENTRY_POINT`] with a [`ModuleInfo`] whose one segment points at the
//! module's [`SLOT_COUNT`] slots; the tool writes its functions there and
//! returns nonzero.

use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

/// The tool library's extension entry point.
pub const ENTRY_POINT: &[u8] = b"InitializeInjectionNvtxExtension\0";

/// Function slots in a module's segment.
pub const SLOT_COUNT: usize = 63;

/// `NVTX_EXTENSION_*`: a slot's (or a module's) state before and after
/// initialization; any other slot value is a function.
pub mod state {
    /// Not initialized yet.
    pub const FRESH: usize = 0;
    /// Disabled: nothing to call (a slot the tool left empty).
    pub const DISABLED: usize = 1;
    /// Being initialized.
    pub const STARTING: usize = 2;
    /// Initialized.
    pub const LOADED: usize = 3;
    /// The tool's entry point returned 0.
    pub const INIT_FN_FAILED: usize = 4;
}

/// An extension module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module {
    /// `NVTX_EXT_*_MODULEID`.
    pub id: u16,
    /// Its compatibility id: a tool checks it exactly.
    pub compat: u16,
    /// The id of its one segment.
    pub segment: usize,
}

/// `nvToolsExtMem.h` (and `nvToolsExtMemCudaRt.h`).
pub const MEM: Module = Module {
    id: 1,
    compat: 0x0102,
    segment: 1,
};
/// `nvToolsExtPayload.h`: payload schemas, payload events, deferred events
/// and time domains.
pub const PAYLOAD: Module = Module {
    id: 2,
    compat: 0x0104,
    segment: 0,
};
/// `nvToolsExtCounters.h`.
pub const COUNTERS: Module = Module {
    id: 4,
    compat: 0x0102,
    segment: 0,
};

/// `nvtxExtModuleSegment_t` (24 bytes).
#[repr(C)]
#[derive(Debug)]
pub struct ModuleSegment {
    /// The module's segment id.
    pub segment_id: usize,
    /// [`SLOT_COUNT`].
    pub slot_count: usize,
    /// The module's slots, which the tool fills.
    pub function_slots: *mut isize,
}

/// `nvtxExtModuleInfo_t` (40 bytes).
#[repr(C)]
#[derive(Debug)]
pub struct ModuleInfo {
    /// `NVTX_VERSION` (3).
    pub nvtx_version: u16,
    /// 40.
    pub struct_size: u16,
    /// [`Module::id`].
    pub module_id: u16,
    /// [`Module::compat`].
    pub compat_id: u16,
    /// 1.
    pub segments_count: usize,
    /// The one segment.
    pub segments: *mut ModuleSegment,
    /// NULL: no export function.
    pub get_export_function: *const c_void,
    /// For [`PAYLOAD`]: [`TYPE_INFO`]; else NULL.
    pub ext_info: *const c_void,
}

/// The tool's extension entry point.
pub type InitializeInjectionExtension = unsafe extern "C" fn(*mut ModuleInfo) -> c_int;

/// `nvtxPayloadEntryTypeInfo_t`: a predefined payload entry type's size and
/// alignment, as the producer's compiler lays it out.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeInfo {
    /// `sizeof`.
    pub size: u16,
    /// Its alignment.
    pub align: u16,
}

const fn info(size: u16, align: u16) -> TypeInfo {
    TypeInfo { size, align }
}

/// The payload module's `extInfo` on x86-64 Linux: entry 0 is the table's
/// length and entry size, then types 1 (char) to 27 (char32_t), as
/// NVIDIA's `libnvtx3interop.so.1` bakes it in (char8_t unknown: 0, 0).
pub static TYPE_INFO: [TypeInfo; 28] = [
    info(28, 4),
    // char, unsigned char, short, unsigned short, int, unsigned int
    info(1, 1),
    info(1, 1),
    info(2, 2),
    info(2, 2),
    info(4, 4),
    info(4, 4),
    // long, unsigned long, long long, unsigned long long
    info(8, 8),
    info(8, 8),
    info(8, 8),
    info(8, 8),
    // int8 .. uint64
    info(1, 1),
    info(1, 1),
    info(2, 2),
    info(2, 2),
    info(4, 4),
    info(4, 4),
    info(8, 8),
    info(8, 8),
    // float, double, long double
    info(4, 4),
    info(8, 8),
    info(16, 16),
    // size_t, address, wchar_t, char8_t, char16_t, char32_t
    info(8, 8),
    info(8, 8),
    info(4, 4),
    info(0, 0),
    info(2, 2),
    info(4, 4),
];

/// `nvtxCounterAttr_t` (56 bytes): a counter's registration.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterAttr {
    /// `sizeof(nvtxCounterAttr_t)`.
    pub struct_size: usize,
    /// The type of its values: a predefined entry type ([`crate::payload::entry_type`]) or
    /// a registered schema.
    pub schema_id: u64,
    /// Its name (a C string).
    pub name: *const std::ffi::c_char,
    /// Its description (a C string), or NULL.
    pub description: *const std::ffi::c_char,
    /// Its scope (0: none).
    pub scope_id: u64,
    /// Its semantics (a chain of `nvtxSemanticsHeader_t`), or NULL.
    pub semantics: *const c_void,
    /// The id asked for (0: the tool chooses).
    pub counter_id: u64,
}

/// `nvtxCounterBatch_t` (48 bytes): samples of one counter taken earlier.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterBatch {
    /// The counter.
    pub counter_id: u64,
    /// The samples, in the counter's layout, one after another.
    pub counters: *const c_void,
    /// Bytes at `counters`.
    pub counters_size: usize,
    /// [`COUNTER_BATCH_BEGIN_INTERVAL`], [`COUNTER_BATCH_END_INTERVAL`] or 0.
    pub flags: u64,
    /// One timestamp per sample (or, by the flags, a time and an interval).
    pub timestamps: *const i64,
    /// Bytes at `timestamps`.
    pub timestamps_size: usize,
}

/// `NVTX_COUNTER_BATCH_FLAG_BEGINTIME_INTERVAL_PAIR`: `timestamps` holds the
/// first sample's time and the interval between samples.
pub const COUNTER_BATCH_BEGIN_INTERVAL: u64 = 1 << 32;
/// `NVTX_COUNTER_BATCH_FLAG_ENDTIME_INTERVAL_PAIR`: the last sample's time
/// and the interval.
pub const COUNTER_BATCH_END_INTERVAL: u64 = 2 << 32;
/// `NVTX_COUNTER_SAMPLE_ZERO`: `nvtxCounterSampleNoValue`'s "the value is 0".
pub const COUNTER_SAMPLE_ZERO: u8 = 0;

/// Calls `$callback!` with every extension function: its module, callback
/// id, slot name, C name and arguments (pointers to the module's structs as
/// `*const c_void`: they are the tool's to read), and, for one that
/// returns, its return type and no-tool value. `nvtxDomainIsEnabled`'s
/// value with an extension-less tool differs (see its producer).
#[macro_export]
macro_rules! for_each_ext_slot {
    ($callback:ident) => {
        $callback! {
            PAYLOAD 0 PAYLOAD_SCHEMA_REGISTER nvtxPayloadSchemaRegister(domain: $crate::Handle, attributes: *const ::std::ffi::c_void) -> u64 = 0;
            PAYLOAD 1 PAYLOAD_ENUM_REGISTER nvtxPayloadEnumRegister(domain: $crate::Handle, attributes: *const ::std::ffi::c_void) -> u64 = 0;
            PAYLOAD 2 MARK_PAYLOAD nvtxMarkPayload(domain: $crate::Handle, payload: *const ::std::ffi::c_void, count: usize);
            PAYLOAD 3 RANGE_PUSH_PAYLOAD nvtxRangePushPayload(domain: $crate::Handle, payload: *const ::std::ffi::c_void, count: usize) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            PAYLOAD 4 RANGE_POP_PAYLOAD nvtxRangePopPayload(domain: $crate::Handle, payload: *const ::std::ffi::c_void, count: usize) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            PAYLOAD 5 RANGE_START_PAYLOAD nvtxRangeStartPayload(domain: $crate::Handle, payload: *const ::std::ffi::c_void, count: usize) -> u64 = 0;
            PAYLOAD 6 RANGE_END_PAYLOAD nvtxRangeEndPayload(domain: $crate::Handle, id: u64, payload: *const ::std::ffi::c_void, count: usize);
            PAYLOAD 7 DOMAIN_IS_ENABLED nvtxDomainIsEnabled(domain: $crate::Handle) -> u8 = 0;
            PAYLOAD 8 TIMESTAMP_GET nvtxTimestampGet() -> i64 = 0;
            PAYLOAD 9 TIME_DOMAIN_REGISTER nvtxTimeDomainRegister(domain: $crate::Handle, attributes: *const ::std::ffi::c_void) -> u64 = 0;
            PAYLOAD 10 TIMER_SOURCE nvtxTimerSource(domain: $crate::Handle, time_domain: u64, flags: u64, provider: *const ::std::ffi::c_void);
            PAYLOAD 11 TIMER_SOURCE_WITH_DATA nvtxTimerSourceWithData(domain: $crate::Handle, time_domain: u64, flags: u64, provider: *const ::std::ffi::c_void, data: *const ::std::ffi::c_void);
            PAYLOAD 12 SCOPE_REGISTER nvtxScopeRegister(domain: $crate::Handle, attributes: *const ::std::ffi::c_void) -> u64 = 0;
            PAYLOAD 13 TIME_SYNC_POINT nvtxTimeSyncPoint(domain: $crate::Handle, time_domain_1: u64, time_domain_2: u64, timestamp_1: i64, timestamp_2: i64);
            PAYLOAD 14 TIME_SYNC_POINT_TABLE nvtxTimeSyncPointTable(domain: $crate::Handle, source: u64, destination: u64, points: *const ::std::ffi::c_void, count: usize);
            PAYLOAD 15 TIMESTAMP_CONVERSION_FACTOR nvtxTimestampConversionFactor(domain: $crate::Handle, source: u64, destination: u64, slope: f64, timestamp_source: i64, timestamp_destination: i64);
            PAYLOAD 16 EVENT_SUBMIT nvtxEventSubmit(domain: $crate::Handle, payload: *const ::std::ffi::c_void, count: usize);
            PAYLOAD 17 EVENT_BATCH_SUBMIT nvtxEventBatchSubmit(domain: $crate::Handle, batch: *const ::std::ffi::c_void);

            COUNTERS 0 COUNTER_REGISTER nvtxCounterRegister(domain: $crate::Handle, attributes: *const ::std::ffi::c_void) -> u64 = 0;
            COUNTERS 1 COUNTER_SAMPLE_INT64 nvtxCounterSampleInt64(domain: $crate::Handle, counter: u64, value: i64);
            COUNTERS 2 COUNTER_SAMPLE_FLOAT64 nvtxCounterSampleFloat64(domain: $crate::Handle, counter: u64, value: f64);
            COUNTERS 3 COUNTER_SAMPLE nvtxCounterSample(domain: $crate::Handle, counter: u64, values: *const ::std::ffi::c_void, size: usize);
            COUNTERS 4 COUNTER_SAMPLE_NO_VALUE nvtxCounterSampleNoValue(domain: $crate::Handle, counter: u64, reason: u8);
            COUNTERS 5 COUNTER_BATCH_SUBMIT nvtxCounterBatchSubmit(domain: $crate::Handle, batch: *const ::std::ffi::c_void);

            MEM 0 MEM_HEAP_REGISTER nvtxMemHeapRegister(domain: $crate::Handle, description: *const ::std::ffi::c_void) -> $crate::Handle = ::std::ptr::null_mut();
            MEM 1 MEM_HEAP_UNREGISTER nvtxMemHeapUnregister(domain: $crate::Handle, heap: $crate::Handle);
            MEM 2 MEM_HEAP_RESET nvtxMemHeapReset(domain: $crate::Handle, heap: $crate::Handle);
            MEM 3 MEM_REGIONS_REGISTER nvtxMemRegionsRegister(domain: $crate::Handle, batch: *const ::std::ffi::c_void);
            MEM 4 MEM_REGIONS_RESIZE nvtxMemRegionsResize(domain: $crate::Handle, batch: *const ::std::ffi::c_void);
            MEM 5 MEM_REGIONS_UNREGISTER nvtxMemRegionsUnregister(domain: $crate::Handle, batch: *const ::std::ffi::c_void);
            MEM 6 MEM_REGIONS_NAME nvtxMemRegionsName(domain: $crate::Handle, batch: *const ::std::ffi::c_void);
            MEM 7 MEM_PERMISSIONS_ASSIGN nvtxMemPermissionsAssign(domain: $crate::Handle, batch: *const ::std::ffi::c_void);
            MEM 8 MEM_PERMISSIONS_CREATE nvtxMemPermissionsCreate(domain: $crate::Handle, flags: i32) -> $crate::Handle = ::std::ptr::null_mut();
            MEM 9 MEM_PERMISSIONS_DESTROY nvtxMemPermissionsDestroy(domain: $crate::Handle, permissions: $crate::Handle);
            MEM 10 MEM_PERMISSIONS_RESET nvtxMemPermissionsReset(domain: $crate::Handle, permissions: $crate::Handle);
            MEM 11 MEM_PERMISSIONS_BIND nvtxMemPermissionsBind(domain: $crate::Handle, permissions: $crate::Handle, scope: u32, flags: u32);
            MEM 12 MEM_PERMISSIONS_UNBIND nvtxMemPermissionsUnbind(domain: $crate::Handle, scope: u32);
            MEM 13 MEM_CUDA_GET_PROCESS_WIDE_PERMISSIONS nvtxMemCudaGetProcessWidePermissions(domain: $crate::Handle) -> $crate::Handle = ::std::ptr::null_mut();
            MEM 14 MEM_CUDA_GET_DEVICE_WIDE_PERMISSIONS nvtxMemCudaGetDeviceWidePermissions(domain: $crate::Handle, device: ::std::ffi::c_int) -> $crate::Handle = ::std::ptr::null_mut();
            MEM 15 MEM_CUDA_SET_PEER_ACCESS nvtxMemCudaSetPeerAccess(domain: $crate::Handle, permissions: $crate::Handle, peer: ::std::ffi::c_int, flags: u32);
            MEM 16 MEM_CUDA_MARK_INITIALIZED nvtxMemCudaMarkInitialized(domain: $crate::Handle, stream: *const ::std::ffi::c_void, per_thread_stream: u8, batch: *const ::std::ffi::c_void);
        }
    };
}

/// Defines [`cbid`] from the list.
macro_rules! callback_ids {
    ($($module:ident $cbid:literal $slot:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {
        /// Every extension function's callback id (its slot in its module's
        /// segment), by slot name (see [`for_each_ext_slot!`]).
        pub mod cbid {
            $(
                #[doc = concat!("`", stringify!($name), "` (", stringify!($module), " module).")]
                pub const $slot: usize = $cbid;
            )*
        }
    };
}
for_each_ext_slot!(callback_ids);

/// One extension function's slot: its module, its callback id (its index
/// in the module's segment) and `F`, the type of the function a tool writes
/// there. Only this crate makes them (the [`slot`] constants), so `F` is
/// always the slot's protocol type.
pub struct ExtSlot<F> {
    /// The module's id ([`Module::id`]).
    pub module: u16,
    /// The callback id.
    pub cbid: usize,
    function: PhantomData<F>,
}

impl<F> Clone for ExtSlot<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for ExtSlot<F> {}

impl<F> ExtSlot<F> {
    const fn new(module: Module, cbid: usize) -> Self {
        assert!(std::mem::size_of::<F>() == std::mem::size_of::<usize>());
        ExtSlot {
            module: module.id,
            cbid,
            function: PhantomData,
        }
    }
}

/// Defines [`slot`] from the list.
macro_rules! ext_slot_constants {
    ($($module:ident $cbid:literal $slot:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {
        /// Every extension function's typed slot, by slot name (see
        /// [`for_each_ext_slot!`]).
        pub mod slot {
            use super::*;
            $(
                #[doc = concat!("The slot of `", stringify!($name), "`.")]
                pub const $slot: ExtSlot<unsafe extern "C" fn($($ty),*) $(-> $ret)?> =
                    ExtSlot::new($module, $cbid);
            )*
        }
    };
}
for_each_ext_slot!(ext_slot_constants);

/// A tool's functions for one extension module's segment, set slot by slot
/// with the slot's own type (a function of the wrong type does not compile).
pub struct ExtFunctions {
    module: Module,
    entries: Vec<(usize, usize)>,
}

impl ExtFunctions {
    /// No functions yet, for `module`'s segment.
    pub fn new(module: Module) -> Self {
        ExtFunctions {
            module,
            entries: Vec::new(),
        }
    }

    /// Sets the function for `slot` (a slot of this module).
    pub fn set<F: Copy>(&mut self, slot: ExtSlot<F>, function: F) -> &mut Self {
        assert_eq!(slot.module, self.module.id, "a slot of another module");
        // SAFETY: F is the slot's function pointer type, of a pointer's size
        // (see `ExtSlot`).
        let raw = unsafe { std::mem::transmute_copy::<F, usize>(&function) };
        self.entries.push((slot.cbid, raw));
        self
    }

    /// Writes the functions into the producer's segment; callback ids
    /// beyond its slot count are skipped.
    ///
    /// # Safety
    /// `segment` is the producer's segment of this module, during the
    /// tool's extension entry point.
    pub unsafe fn install(&self, segment: &ModuleSegment) {
        for &(cbid, f) in &self.entries {
            if cbid < segment.slot_count {
                // SAFETY: inside the segment's `slot_count` slots, as the
                // caller's contract provides.
                unsafe { *segment.function_slots.add(cbid) = f as isize };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_nvidias() {
        assert_eq!(std::mem::size_of::<ModuleInfo>(), 40);
        assert_eq!(std::mem::size_of::<ModuleSegment>(), 24);
        assert_eq!(std::mem::size_of_val(&TYPE_INFO), 28 * 4);
        assert_eq!(std::mem::size_of::<CounterAttr>(), 56);
        assert_eq!(std::mem::size_of::<CounterBatch>(), 48);
    }
}
