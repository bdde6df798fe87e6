//! Canonical text for what the tool receives.

use nvtx_protocol::{attr, EventAttributes, WStr};
use std::ffi::{c_char, c_void, CStr};
use std::fmt::Write;

/// A domain handle the event-log tool gave out (a leaked box holding the name).
pub struct Domain {
    pub name: String,
}

/// A registered-string handle the event-log tool gave out.
pub struct Registered {
    pub domain: *const c_void,
    pub text: String,
}

/// Quoted text; bytes that are not printable UTF-8 are shown as `\xNN`.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => write!(out, "\\u{{{:x}}}", c as u32).unwrap(),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            write!(out, "\\x{b:02x}").unwrap();
        }
    }
    out.push('"');
    out
}

/// A C string argument, quoted; `NULL` for a null pointer.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub unsafe fn c_str(p: *const c_char) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        if p.is_null() {
            "NULL".into()
        } else {
            quote_bytes(CStr::from_ptr(p).to_bytes())
        }
    }
}

/// A `wchar_t` (UTF-32 on Linux) string argument, as `w"..."`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated wide string.
pub unsafe fn w_str(p: WStr) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        if p.is_null() {
            return "NULL".into();
        }
        let mut s = String::new();
        let mut i = 0;
        while *p.add(i) != 0 {
            s.push(char::from_u32(*p.add(i) as u32).unwrap_or('\u{FFFD}'));
            i += 1;
        }
        format!("w{}", quote_bytes(s.as_bytes()))
    }
}

/// A domain handle: `default` for NULL, else its name.
///
/// # Safety
/// `d` is NULL or a handle from `DomainCreateA/W`.
pub unsafe fn domain(d: *const c_void) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        if d.is_null() {
            "default".into()
        } else if was_destroyed(d) {
            "DESTROYED-HANDLE".into()
        } else {
            format!(
                "domain={}",
                quote_bytes((*d.cast::<Domain>()).name.as_bytes())
            )
        }
    }
}

/// Decoded attributes of an event in domain `d`: `{msg=... color=... category=... payload=...}`.
/// A registered string of another domain is flagged.
///
/// # Safety
/// `a` is NULL or points to a valid attribute struct whose message is valid.
pub unsafe fn attributes(d: *const c_void, a: *const EventAttributes) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let Some(a) = a.as_ref() else {
            return "{NULL}".into();
        };
        let mut parts = Vec::new();
        if a.version != 3 || a.size != 48 {
            parts.push(format!("version={} size={}", a.version, a.size));
        }
        match a.message_type {
            0 => {}
            attr::MESSAGE_ASCII => parts.push(format!("msg={}", c_str(a.message.cast()))),
            attr::MESSAGE_UNICODE => parts.push(format!("msg={}", w_str(a.message.cast()))),
            attr::MESSAGE_REGISTERED if a.message.is_null() => parts.push("msg=reg:NULL".into()),
            attr::MESSAGE_REGISTERED => {
                let r = &*a.message.cast::<Registered>();
                let foreign = if r.domain == d {
                    ""
                } else {
                    "(FOREIGN DOMAIN)"
                };
                parts.push(format!(
                    "msg=reg{foreign}:{}",
                    quote_bytes(r.text.as_bytes())
                ));
            }
            t => parts.push(format!("msgtype={t}")),
        }
        match a.color_type {
            0 => {}
            1 => parts.push(format!("color=0x{:08x}", a.color)),
            t => parts.push(format!("colortype={t} color=0x{:08x}", a.color)),
        }
        if a.category != 0 {
            parts.push(format!("category={}", a.category));
        }
        let p = a.payload;
        match a.payload_type {
            attr::PAYLOAD_NONE => {}
            attr::PAYLOAD_U64 => parts.push(format!("payload=u64:{p}")),
            attr::PAYLOAD_I64 => parts.push(format!("payload=i64:{}", p as i64)),
            attr::PAYLOAD_F64 => parts.push(format!("payload=f64:{}", f64::from_bits(p))),
            attr::PAYLOAD_U32 => parts.push(format!("payload=u32:{}", p as u32)),
            attr::PAYLOAD_I32 => parts.push(format!("payload=i32:{}", p as u32 as i32)),
            attr::PAYLOAD_F32 => parts.push(format!("payload=f32:{}", f32::from_bits(p as u32))),
            t => parts.push(format!("payloadtype={t} payload=0x{p:x}")),
        }
        format!("{{{}}}", parts.join(" "))
    }
}

/// Domain handles the producer destroyed (a tool that frees them would have).
static DESTROYED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// Whether `d` was destroyed (handles are never freed, so never reused).
fn was_destroyed(d: *const c_void) -> bool {
    DESTROYED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&(d as usize))
}

/// Notes that the producer destroyed domain `d`.
pub(crate) fn mark_destroyed(d: *const c_void) {
    DESTROYED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(d as usize);
}
