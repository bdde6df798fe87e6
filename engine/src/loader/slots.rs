//! The function-pointer slots a tool fills in, one array per callback module,
//! and the tables of slot addresses handed to the tool.
//!
//! A slot holds, as in NVIDIA's own implementation:
//! - until initialization: its *first-call* function, which initializes
//!   and then calls what the slot holds by then;
//! - with no tool: NULL ("no-op");
//! - with a tool: the tool's function, or, where the tool left the slot
//!   alone, its *absent* function, which returns the no-tool value.
//!
//! So after initialization a NULL slot means "no tool", and a call site
//! needs one load and a branch: no separate "is a tool attached" check.
//! Slots are written by the tool during initialization (published to other
//! threads by the loader's release store of its state) and read with
//! relaxed loads afterwards.

use nvtx_protocol::{for_each_slot, module, no_tool_value, slot, SlotId};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// One function-pointer slot; same layout as `void (*)(void)`.
pub type Slot = AtomicPtr<c_void>;

/// A module's slots. Index 0 is never used, as in NVIDIA's tables.
pub struct Slots<const N: usize>([Slot; N]);

impl<const N: usize> Slots<N> {
    /// Every slot of `module` holding its first-call function.
    const fn new(module: i32) -> Self {
        let mut slots = [const { AtomicPtr::new(ptr::null_mut()) }; N];
        let mut i = 1;
        while i < N {
            slots[i] = AtomicPtr::new(first_call(module, i));
            i += 1;
        }
        Self(slots)
    }

    fn clear(&self) {
        for slot in &self.0 {
            slot.store(ptr::null_mut(), Ordering::Relaxed);
        }
    }
}

/// Defines, from the protocol's slot list, each slot's first-call and
/// absent functions and the lookups by `(module, index)`.
macro_rules! slot_functions {
    ($($module:ident $index:literal $slot:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {
        /// Each slot's function until initialization: initialize, then call
        /// the tool's function, or return the no-tool value (no tool, or a
        /// call from inside the tool's own initialization).
        mod first_call {
            #![allow(non_snake_case)]
            use super::*;
            $(
                pub(super) unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                    nvtx_protocol::boundary::guard(no_tool_value!($($none)?), || {
                        if super::super::tool_attached() {
                            if let Some(f) = get(slot::$slot) {
                                // SAFETY: the caller's arguments, passed on unchanged.
                                return unsafe { f($($arg),*) };
                            }
                        }
                        no_tool_value!($($none)?)
                    })
                }
            )*
        }

        /// Each slot's function when a tool is attached but left it empty.
        mod absent {
            #![allow(non_snake_case)]
            use super::*;
            $(
                pub(super) unsafe extern "C" fn $name($(_: $ty),*) $(-> $ret)? {
                    no_tool_value!($($none)?)
                }
            )*
        }

        /// The first-call function of slot `index` of `module`.
        const fn first_call(module: i32, index: usize) -> *mut c_void {
            $(
                if module == module::$module && index == $index {
                    return first_call::$name as *mut c_void;
                }
            )*
            ptr::null_mut()
        }

        /// Once a tool is attached: the slots it left with their first-call
        /// function get their absent function.
        pub fn fill_gaps() {
            $(
                if let Some(s) = slot_ref(module::$module, $index) {
                    let _ = s.compare_exchange(
                        first_call::$name as *mut c_void,
                        absent::$name as *mut c_void,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
            )*
        }
    };
}

for_each_slot!(slot_functions);

/// A table handed to the tool: `[NULL, &slot[1], ..., &slot[N-1], NULL]`.
#[repr(transparent)]
pub struct Table<const M: usize>([*mut c_void; M]);

// SAFETY: the table only holds addresses of statics and is never written.
unsafe impl<const M: usize> Sync for Table<M> {}

impl<const M: usize> Table<M> {
    /// `M` must be `N + 1`.
    const fn new<const N: usize>(slots: &'static Slots<N>) -> Self {
        assert!(M == N + 1);
        let mut table = [ptr::null_mut(); M];
        let mut i = 1;
        while i < N {
            table[i] = &slots.0[i] as *const Slot as *mut c_void;
            i += 1;
        }
        Self(table)
    }
}

/// The CORE module's slots (default-domain events and naming).
static CORE: Slots<{ module::CORE_SIZE }> = Slots::new(module::CORE);
/// The CUDA driver naming module's slots.
static CUDA: Slots<{ module::CUDA_SIZE }> = Slots::new(module::CUDA);
/// The OpenCL naming module's slots.
static OPENCL: Slots<{ module::OPENCL_SIZE }> = Slots::new(module::OPENCL);
/// The CUDA runtime naming module's slots.
static CUDART: Slots<{ module::CUDART_SIZE }> = Slots::new(module::CUDART);
/// The CORE2 (domain) module's slots.
static CORE2: Slots<{ module::CORE2_SIZE }> = Slots::new(module::CORE2);
/// The SYNC module's slots.
static SYNC: Slots<{ module::SYNC_SIZE }> = Slots::new(module::SYNC);

static CORE_TABLE: Table<{ module::CORE_SIZE + 1 }> = Table::new(&CORE);
static CUDA_TABLE: Table<{ module::CUDA_SIZE + 1 }> = Table::new(&CUDA);
static OPENCL_TABLE: Table<{ module::OPENCL_SIZE + 1 }> = Table::new(&OPENCL);
static CUDART_TABLE: Table<{ module::CUDART_SIZE + 1 }> = Table::new(&CUDART);
static CORE2_TABLE: Table<{ module::CORE2_SIZE + 1 }> = Table::new(&CORE2);
static SYNC_TABLE: Table<{ module::SYNC_SIZE + 1 }> = Table::new(&SYNC);

/// The table and size for a module id, or `None` for an unknown module.
pub fn table(module_id: i32) -> Option<(*const *mut c_void, usize)> {
    fn entry<const M: usize>(t: &'static Table<M>) -> (*const *mut c_void, usize) {
        (t.0.as_ptr(), M - 1)
    }
    Some(match module_id {
        module::CORE => entry(&CORE_TABLE),
        module::CUDA => entry(&CUDA_TABLE),
        module::OPENCL => entry(&OPENCL_TABLE),
        module::CUDART => entry(&CUDART_TABLE),
        module::CORE2 => entry(&CORE2_TABLE),
        module::SYNC => entry(&SYNC_TABLE),
        _ => return None,
    })
}

/// Slot `index` of `module`, if the module has one.
#[inline(always)]
fn slot_ref(module_id: i32, index: usize) -> Option<&'static Slot> {
    let slots: &[Slot] = match module_id {
        module::CORE => &CORE.0,
        module::CUDA => &CUDA.0,
        module::OPENCL => &OPENCL.0,
        module::CUDART => &CUDART.0,
        module::CORE2 => &CORE2.0,
        module::SYNC => &SYNC.0,
        _ => return None,
    };
    slots.get(index)
}

/// What `slot` holds: `None` with no tool; before initialization, the
/// first-call function (calling it initializes); with a tool, its function
/// or the absent one.
#[inline(always)]
pub fn get<F: Copy>(slot: SlotId<F>) -> Option<F> {
    let raw = slot_ref(slot.module, slot.index)?.load(Ordering::Relaxed);
    // SAFETY: slots hold NULL or a function of their slot's type: the
    // tool's, or this module's first-call or absent function.
    unsafe { slot.from_raw(raw.cast_const()) }
}

/// No tool: every slot NULL (none configured, it failed to attach, or this
/// process was forked while initialization was running).
pub fn clear_all() {
    CORE.clear();
    CUDA.clear();
    OPENCL.clear();
    CUDART.clear();
    CORE2.clear();
    SYNC.clear();
}
