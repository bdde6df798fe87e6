//! The event-log tool's extension modules (`InitializeInjectionNvtxExtension`):
//! logs the module description it is given, fills every slot of the
//! payload, counters and memory modules with a function that logs its call
//! (domain by name, pointers as `ptr` or `NULL`, numbers as they are) and
//! returns a fixed value, so that two producers' logs compare line for line.
//! `nvtxCounterRegister` is logged in full: name, type, description, scope
//! and each semantic of its chain.
//!
//! Modes (`NVTXR_EVENT_LOG_MODE`): `ext-decline` returns 0 from the entry
//! point; `ext-partial` fills only `nvtxMarkPayload`; `ext-disabled`
//! answers `nvtxDomainIsEnabled` with 0; `null` (the do-nothing tool)
//! accepts every module and fills nothing.

use crate::format::domain;
use crate::record;
use nvtx_protocol::ext::{self, cbid, CounterAttr, ModuleInfo};
use nvtx_protocol::payload::{
    SemanticsCounter, SemanticsHeader, SemanticsTime, SEMANTIC_COUNTERS, SEMANTIC_TIME,
};
use nvtx_protocol::{for_each_ext_slot, Handle};
use std::ffi::{c_char, c_int, c_void, CStr};

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

/// `NVTX_COUNTER_FLAG_LIMIT_MIN` and `_MAX`: which limits a counter semantic gives.
const COUNTER_FLAG_LIMIT_MIN: u64 = 1 << 2;
const COUNTER_FLAG_LIMIT_MAX: u64 = 1 << 3;

/// A C string as the log shows it: quoted, or NULL.
///
/// # Safety
/// `p` is NULL or a C string.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        "NULL".into()
    } else {
        // SAFETY: the caller's C string.
        format!("{:?}", unsafe { CStr::from_ptr(p) }.to_string_lossy())
    }
}

/// A semantics chain: each link by kind and fields.
///
/// # Safety
/// `link` is NULL or the producer's chain, each link the struct its id says.
unsafe fn semantics(mut link: *const SemanticsHeader) -> String {
    let mut shown = Vec::new();
    // SAFETY: the producer's chain, each link of the kind its id says.
    while let Some(h) = unsafe { link.as_ref() } {
        shown.push(match h.semantic_id {
            SEMANTIC_TIME => {
                // SAFETY: a time semantic, by its id.
                let t = unsafe { &*(link as *const SemanticsTime) };
                format!("time(v{} domain={})", h.version, t.time_domain_id)
            }
            SEMANTIC_COUNTERS => {
                // SAFETY: a counter semantic, by its id.
                let c = unsafe { &*(link as *const SemanticsCounter) };
                // Only the limits the flags say are given (the others may
                // be left unset).
                let limit = |flag: u64, name: &str, bits: u64| {
                    if c.flags & flag != 0 {
                        format!(" {name}={bits:#x}")
                    } else {
                        String::new()
                    }
                };
                format!(
                    "counter(v{} flags={:#x} unit={} scale={}/{} limits={}{}{})",
                    h.version,
                    c.flags,
                    // SAFETY: NULL or the producer's C string.
                    unsafe { text(c.unit) },
                    c.unit_scale_numerator,
                    c.unit_scale_denominator,
                    c.limit_type,
                    limit(COUNTER_FLAG_LIMIT_MIN, "min", c.min),
                    limit(COUNTER_FLAG_LIMIT_MAX, "max", c.max)
                )
            }
            other => format!("semantic{other}(v{})", h.version),
        });
        link = h.next;
    }
    format!("[{}]", shown.join(", "))
}

/// `nvtxCounterRegister`, logged in full.
unsafe extern "C" fn counter_register(d: Handle, a: *const c_void) -> u64 {
    // SAFETY: the producer's attributes (or NULL), read during the call.
    let line = match unsafe { a.cast::<CounterAttr>().as_ref() } {
        None => "attributes=NULL".to_string(),
        // SAFETY: its strings and semantics chain, as the protocol has them.
        Some(a) => unsafe {
            format!(
                "name={} schema={} description={} scope={} semantics={}",
                text(a.name),
                a.schema_id,
                text(a.description),
                a.scope_id,
                semantics(a.semantics.cast())
            )
        },
    };
    // SAFETY: a domain handle this tool returned (or NULL).
    record(format!("CounterRegister {} {line}", unsafe { domain(d) }));
    <u64 as Canned>::canned()
}

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
        let f = if info.module_id == ext::COUNTERS.id && cbid == cbid::COUNTER_REGISTER {
            counter_register as *const () as usize
        } else {
            f
        };
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
