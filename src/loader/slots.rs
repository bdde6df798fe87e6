//! The function-pointer slots a tool fills in, one array per callback module,
//! and the tables of slot addresses handed to the tool.
//!
//! A slot holds NULL until the tool writes its function there; NULL means
//! "no-op". Slots are written by the tool during initialization (published to
//! other threads by the loader's release store of its state) and read with
//! relaxed loads afterwards.

use super::protocol::{module, SlotId};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// One function-pointer slot; same layout as `void (*)(void)`.
pub type Slot = AtomicPtr<c_void>;

/// A module's slots. Index 0 is never used, as in NVIDIA's tables.
pub struct Slots<const N: usize>([Slot; N]);

impl<const N: usize> Slots<N> {
    const fn new() -> Self {
        Self([const { AtomicPtr::new(ptr::null_mut()) }; N])
    }

    fn clear(&self) {
        for slot in &self.0 {
            slot.store(ptr::null_mut(), Ordering::Relaxed);
        }
    }
}

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
static CORE: Slots<{ module::CORE_SIZE }> = Slots::new();
/// The CUDA driver naming module's slots.
static CUDA: Slots<{ module::CUDA_SIZE }> = Slots::new();
/// The OpenCL naming module's slots.
static OPENCL: Slots<{ module::OPENCL_SIZE }> = Slots::new();
/// The CUDA runtime naming module's slots.
static CUDART: Slots<{ module::CUDART_SIZE }> = Slots::new();
/// The CORE2 (domain) module's slots.
static CORE2: Slots<{ module::CORE2_SIZE }> = Slots::new();
/// The SYNC module's slots.
static SYNC: Slots<{ module::SYNC_SIZE }> = Slots::new();

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

/// The tool's function in `slot`, or `None` (no tool, or the tool left it empty).
#[inline(always)]
pub fn get<F: Copy>(slot: SlotId<F>) -> Option<F> {
    let slots: &[Slot] = match slot.module {
        module::CORE => &CORE.0,
        module::CUDA => &CUDA.0,
        module::OPENCL => &OPENCL.0,
        module::CUDART => &CUDART.0,
        module::CORE2 => &CORE2.0,
        module::SYNC => &SYNC.0,
        _ => return None,
    };
    let raw = slots[slot.index].load(Ordering::Relaxed).cast_const();
    // SAFETY: only the tool writes slots, each with a function of its slot's type.
    unsafe { slot.from_raw(raw) }
}

/// Back to "every slot a no-op" (after a tool failed to attach).
pub fn clear_all() {
    CORE.clear();
    CUDA.clear();
    OPENCL.clear();
    CUDART.clear();
    CORE2.clear();
    SYNC.clear();
}
