//! The event-log tool's extension modules (`InitializeInjectionNvtxExtension`):
//! logs the module description it is given, fills every slot of the
//! payload, counters and memory modules with a function that logs its call
//! (domain by name, pointers as `ptr` or `NULL`, numbers as they are) and
//! returns a fixed value, so that two producers' logs compare line for line.
//!
//! Modes (`NVTXR_EVENT_LOG_MODE`): `ext-decline` returns 0 from the entry
//! point; `ext-partial` fills only `nvtxMarkPayload`; `ext-disabled`
//! answers `nvtxDomainIsEnabled` with 0; `null` (the do-nothing tool)
//! accepts every module and fills nothing.

use crate::format::domain;
use crate::record;
use nvtx_protocol::ext::{self, ModuleInfo};
use nvtx_protocol::{for_each_ext_slot, Handle};
use std::ffi::{c_int, c_void};

/// An argument as the log shows it.
trait Shown {
    fn shown(self) -> String;
}

impl Shown for Handle {
    fn shown(self) -> String {
        if self.is_null() { "NULL" } else { "handle" }.into()
    }
}

/// An argument as `name=value`; the domain (always first) by name.
macro_rules! shown_arg {
    (domain, $value:expr) => {
        // SAFETY: a domain handle this tool returned (or NULL).
        unsafe { domain($value) }
    };
    ($name:ident, $value:expr) => {
        format!("{}={}", stringify!($name), Shown::shown($value))
    };
}

impl Shown for *const c_void {
    fn shown(self) -> String {
        if self.is_null() { "NULL" } else { "ptr" }.into()
    }
}

macro_rules! shown_as_number {
    ($($t:ty),*) => {$(
        impl Shown for $t {
            fn shown(self) -> String {
                self.to_string()
            }
        }
    )*};
}
shown_as_number!(u8, i32, u32, u64, i64, f64, usize);

/// What a logged function returns: a fixed, recognizable value.
trait Canned {
    fn canned() -> Self;
}

impl Canned for u64 {
    fn canned() -> Self {
        (1 << 32) + 7
    }
}

impl Canned for i64 {
    fn canned() -> Self {
        42
    }
}

impl Canned for c_int {
    fn canned() -> Self {
        0
    }
}

/// `nvtxDomainIsEnabled`'s answer: yes, but for mode `ext-disabled`.
impl Canned for u8 {
    fn canned() -> Self {
        u8::from(std::env::var("NVTXR_EVENT_LOG_MODE").as_deref() != Ok("ext-disabled"))
    }
}

impl Canned for Handle {
    fn canned() -> Self {
        0x5000 as Handle
    }
}

macro_rules! logging_functions {
    ($($module:ident $cbid:literal $slot:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {
        $(
            #[allow(non_snake_case)]
            unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
                let args: Vec<String> = vec![$(shown_arg!($arg, $arg)),*];
                record(format!("{} {}", &stringify!($name)[4..], args.join(" ")).trim_end().to_string());
                $(<$ret as Canned>::canned())?
            }
        )*
        /// Every logging function of `module`: its callback id and address.
        fn functions(module: u16) -> Vec<(usize, usize)> {
            let mut all = Vec::new();
            $(
                if ext::$module.id == module {
                    all.push(($cbid, $name as *const () as usize));
                }
            )*
            all
        }
    };
}
for_each_ext_slot!(logging_functions);

/// The tool's extension entry point.
///
/// # Safety
/// `info` is the producer's module description, valid during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn InitializeInjectionNvtxExtension(info: *mut ModuleInfo) -> c_int {
    // SAFETY: the producer's description, for the duration of the call.
    let info = unsafe { &mut *info };
    let known = [ext::PAYLOAD, ext::COUNTERS, ext::MEM]
        .into_iter()
        .find(|m| m.id == info.module_id && m.compat == info.compat_id);
    // SAFETY: one segment, as the protocol has it.
    let segment = unsafe { &*info.segments };
    let types = if info.ext_info.is_null() {
        "none".to_string()
    } else {
        // SAFETY: the payload module's type table starts with its length.
        let first = unsafe { *info.ext_info.cast::<ext::TypeInfo>() };
        format!("{}x{}", first.size, first.align)
    };
    record(format!(
        "ExtInit module={} compat={:#06x} version={} size={} segments={} segment={} slots={} types={types}",
        info.module_id,
        info.compat_id,
        info.nvtx_version,
        info.struct_size,
        info.segments_count,
        segment.segment_id,
        segment.slot_count,
    ));
    let mode = std::env::var("NVTXR_EVENT_LOG_MODE").unwrap_or_default();
    if known.is_none() || mode == "ext-decline" {
        return 0;
    }
    // The do-nothing tool fills nothing (its domain handles are dummies the
    // logging functions could not name).
    if mode == "null" {
        return 1;
    }
    for (cbid, f) in functions(info.module_id) {
        if mode == "ext-partial" && f != nvtxMarkPayload as *const () as usize {
            continue;
        }
        if cbid < segment.slot_count {
            // SAFETY: a slot of the producer's segment, written during its
            // call to this entry point, as the protocol has it.
            unsafe { *segment.function_slots.add(cbid) = f as isize };
        }
    }
    1
}
