//! The producer side of NVTX3's extension modules (`nvtx_protocol::ext`):
//! each module's slots, filled by the tool at the module's first call.
//!
//! As NVIDIA's implementation does: the core is initialized first; the tool
//! library named by `NVTX_INJECTION64_PATH` is then opened again (it is
//! already loaded when the core attached it: the same handle), and its
//! `InitializeInjectionNvtxExtension`, if it has one, fills the module's
//! slots. What the tool left empty, or everything when it returned 0, is
//! disabled. A tool's own call into the module it is initializing returns
//! the no-tool value instead of waiting forever, and a child forked while
//! a module initialized takes the work over (see `claim`).

use crate::claim::{self, Turn};
use nvtx_protocol::ext::{
    self, state, InitializeInjectionExtension, Module, ModuleInfo, ModuleSegment,
};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// One module's state and slots.
pub struct Slots {
    module: Module,
    /// The claim word: `claim::FREE`, then its outcome (a `state::*` value
    /// above `claim::DONE`, which is not used) once initialized.
    word: AtomicU64,
    slots: [AtomicUsize; ext::SLOT_COUNT],
}

/// Outcomes, as claim words (`claim::DONE` is 1, `state::DISABLED` too).
const NO_TOOL: u64 = 10;
const LOADED: u64 = 10 + state::LOADED as u64;
const NO_EXTENSIONS: u64 = 10 + state::DISABLED as u64;
const DECLINED: u64 = 10 + state::INIT_FN_FAILED as u64;
const OUTCOMES: [u64; 4] = [NO_TOOL, LOADED, NO_EXTENSIONS, DECLINED];

impl Slots {
    const fn new(module: Module) -> Slots {
        Slots {
            module,
            word: AtomicU64::new(claim::FREE),
            slots: [const { AtomicUsize::new(state::FRESH) }; ext::SLOT_COUNT],
        }
    }

    /// The tool's function for callback `cbid`, initializing the module on
    /// its first call; `None` to return the no-tool value.
    #[inline]
    pub fn get(&self, cbid: usize) -> Option<usize> {
        if self.word.load(Ordering::Acquire) == claim::FREE && !self.initialize() {
            return None;
        }
        match self.slots[cbid].load(Ordering::Relaxed) {
            state::FRESH | state::DISABLED => None,
            f => Some(f),
        }
    }

    /// What `nvtxDomainIsEnabled` answers without the tool's function: 1
    /// when the tool has no extension entry point or left the slot empty,
    /// else (no tool, or its entry point returned 0) 0; as NVIDIA's.
    pub fn enabled_without_function(&self) -> u8 {
        match self.word.load(Ordering::Acquire) {
            NO_EXTENSIONS | LOADED => 1,
            _ => 0,
        }
    }

    /// Initializes the module (or waits for the thread doing it); false
    /// when this thread is the one initializing it (a tool calling the
    /// module from its own initialization).
    #[cold]
    fn initialize(&self) -> bool {
        let (turn, _) = claim::take(&self.word, &OUTCOMES);
        match turn {
            Turn::Done => true,
            Turn::Reentered => false,
            Turn::Mine => {
                let outcome = self.attach();
                // Whatever the tool did not fill is disabled; everything
                // when it declined.
                for slot in &self.slots {
                    if outcome != LOADED || slot.load(Ordering::Relaxed) == state::FRESH {
                        slot.store(state::DISABLED, Ordering::Relaxed);
                    }
                }
                claim::finish(&self.word, outcome);
                true
            }
        }
    }

    /// Calls the tool's extension entry point for this module.
    fn attach(&self) -> u64 {
        // As NVIDIA's: until an extension entry point has been found, each
        // module's first call initializes the core with `nvtxInitialize`
        // (forwarded to the tool) first.
        if !matches!(ENTRY.get(), Some(Entry::Function(_))) {
            crate::loader::initialize_and_forward();
        }
        let entry = match entry_point() {
            Entry::NoTool => return NO_TOOL,
            Entry::NoExtensions => return NO_EXTENSIONS,
            Entry::Function(f) => *f,
        };
        let mut segment = ModuleSegment {
            segment_id: self.module.segment,
            slot_count: ext::SLOT_COUNT,
            // The tool writes plain words, before the module is published.
            function_slots: self.slots.as_ptr().cast_mut().cast(),
        };
        let mut info = ModuleInfo {
            nvtx_version: nvtx_protocol::NVTX_VERSION as u16,
            struct_size: std::mem::size_of::<ModuleInfo>() as u16,
            module_id: self.module.id,
            compat_id: self.module.compat,
            segments_count: 1,
            segments: &mut segment,
            get_export_function: std::ptr::null(),
            ext_info: if self.module == ext::PAYLOAD {
                ext::TYPE_INFO.as_ptr().cast()
            } else {
                std::ptr::null()
            },
        };
        // SAFETY: the protocol's entry point, with a module description
        // that lives through the call.
        match unsafe { entry(&mut info) } {
            0 => DECLINED,
            _ => LOADED,
        }
    }
}

/// The tool library's extension entry point, looked up once.
enum Entry {
    NoTool,
    NoExtensions,
    Function(InitializeInjectionExtension),
}

static ENTRY: OnceLock<Entry> = OnceLock::new();

fn entry_point() -> &'static Entry {
    ENTRY.get_or_init(|| {
        let path = match std::env::var_os(nvtx_protocol::INJECTION_PATH_VAR) {
            Some(p) if !p.is_empty() && p != nvtx_protocol::NO_TOOL_PATH => p,
            _ => return Entry::NoTool,
        };
        // SAFETY: the library the core loaded (or tried to) for the same
        // request; loading it runs nothing new when it is already loaded.
        let Ok(library) = (unsafe { libloading::Library::new(&path) }) else {
            return Entry::NoTool;
        };
        // SAFETY: the protocol fixes the entry point's type.
        let entry = unsafe { library.get::<InitializeInjectionExtension>(ext::ENTRY_POINT) }
            .map(|symbol| *symbol);
        match entry {
            Ok(f) => {
                // The tool stays loaded for the life of the process.
                std::mem::forget(library);
                Entry::Function(f)
            }
            Err(_) => Entry::NoExtensions,
        }
    })
}

/// The payload module: payload schemas and events, deferred events, time.
pub static PAYLOAD: Slots = Slots::new(ext::PAYLOAD);
/// The counters module.
pub static COUNTERS: Slots = Slots::new(ext::COUNTERS);
/// The memory module.
pub static MEM: Slots = Slots::new(ext::MEM);
