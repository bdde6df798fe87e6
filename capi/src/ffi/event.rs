//! An event as the C ABI takes it: `nvtxr_event_t` and its constants, and
//! the translation (validated, only the fields its size covers) of every
//! kind of event argument into the engine's event.

use super::domain::{nvtxr_string_t, string_ref};
use super::payloads::{nvtxr_payload_data_t, payload_data};
use super::sized::read_sized;
use nvtxr_engine::attributes::{Color, Event, RawMessage, RawPayload};
use nvtxr_engine::error::Error;
use std::ffi::{c_char, c_void};

/// `nvtxr_event_t.color_type`: no color.
pub const NVTXR_COLOR_NONE: u32 = 0;
/// `nvtxr_event_t.color_type`: `color` is `0xAARRGGBB`.
pub const NVTXR_COLOR_ARGB: u32 = 1;

/// `nvtxr_event_t.payload_type`: no payload.
pub const NVTXR_PAYLOAD_NONE: u32 = 0;
/// `nvtxr_event_t.payload_type`: `payload.as_u64`.
pub const NVTXR_PAYLOAD_U64: u32 = 1;
/// `nvtxr_event_t.payload_type`: `payload.as_i64`.
pub const NVTXR_PAYLOAD_I64: u32 = 2;
/// `nvtxr_event_t.payload_type`: `payload.as_f64`.
pub const NVTXR_PAYLOAD_F64: u32 = 3;
/// `nvtxr_event_t.payload_type`: `payload.as_u32`.
pub const NVTXR_PAYLOAD_U32: u32 = 4;
/// `nvtxr_event_t.payload_type`: `payload.as_i32`.
pub const NVTXR_PAYLOAD_I32: u32 = 5;
/// `nvtxr_event_t.payload_type`: `payload.as_f32`.
pub const NVTXR_PAYLOAD_F32: u32 = 6;
const _: () = {
    use nvtx_protocol::attr;
    assert!(NVTXR_PAYLOAD_NONE as i32 == attr::PAYLOAD_NONE);
    assert!(NVTXR_PAYLOAD_U64 as i32 == attr::PAYLOAD_U64);
    assert!(NVTXR_PAYLOAD_I64 as i32 == attr::PAYLOAD_I64);
    assert!(NVTXR_PAYLOAD_F64 as i32 == attr::PAYLOAD_F64);
    assert!(NVTXR_PAYLOAD_U32 as i32 == attr::PAYLOAD_U32);
    assert!(NVTXR_PAYLOAD_I32 as i32 == attr::PAYLOAD_I32);
    assert!(NVTXR_PAYLOAD_F32 as i32 == attr::PAYLOAD_F32);
};

/// A payload value; `nvtxr_event_t.payload_type` says which member is set.
#[repr(C)]
#[derive(Clone, Copy)]
pub union nvtxr_payload_t {
    /// `NVTXR_PAYLOAD_U64`.
    pub as_u64: u64,
    /// `NVTXR_PAYLOAD_I64`.
    pub as_i64: i64,
    /// `NVTXR_PAYLOAD_F64`.
    pub as_f64: f64,
    /// `NVTXR_PAYLOAD_U32`.
    pub as_u32: u32,
    /// `NVTXR_PAYLOAD_I32`.
    pub as_i32: i32,
    /// `NVTXR_PAYLOAD_F32`.
    pub as_f32: f32,
}

/// An event's attributes. Initialize it with `NVTXR_EVENT_INIT`
/// (`nvtxr_event_t e = NVTXR_EVENT_INIT;`, which sets `size` and zeroes the
/// rest), then set what you need: all other fields zero is "no message, no
/// color, no category, no payload". Set at most one of `message` and
/// `registered_message`.
///
/// The struct can grow: nvtxr reads only the fields that `size` covers, so
/// a program built against an older, smaller header keeps working, and
/// fields added later read as zero for it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_event_t {
    /// `sizeof(nvtxr_event_t)` in the caller's header (`NVTXR_EVENT_INIT`
    /// sets it). A size that does not cover `category` is an error
    /// (`NVTXR_ERROR_INVALID_ARGUMENT`): the struct was not initialized.
    pub size: u32,
    /// Category id; 0 means none.
    pub category: u32,
    /// UTF-8 text, or NULL. Read during the call only.
    pub message: *const c_char,
    /// A registered string of the same domain, or NULL.
    pub registered_message: *const nvtxr_string_t,
    /// `NVTXR_COLOR_NONE` or `NVTXR_COLOR_ARGB`.
    pub color_type: u32,
    /// `0xAARRGGBB` when `color_type` is `NVTXR_COLOR_ARGB`.
    pub color: u32,
    /// One of `NVTXR_PAYLOAD_*`.
    pub payload_type: u32,
    /// Must be 0.
    pub reserved: u32,
    /// The member `payload_type` names.
    pub payload: nvtxr_payload_t,
    /// Extended payloads (structs described by schemas from
    /// `nvtxr_payload_schema_register`), or NULL: `payload_count` of them,
    /// read during the call only. Set at most one of `payload_type` and
    /// `payloads`.
    pub payloads: *const nvtxr_payload_data_t,
    /// How many `payloads`.
    pub payload_count: usize,
}

/// An event argument as passed to the C API, before validation. The pointer
/// comes first: an exported function passing `(domain, Arg)` on to its slow
/// path leaves the pointer in the register it arrived in.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Arg {
    ptr: *const c_void,
    kind: ArgKind,
}

/// What [`Arg::ptr`] points to.
#[repr(u32)]
#[derive(Clone, Copy)]
pub(super) enum ArgKind {
    /// A C string.
    Text,
    /// An `nvtxr_string_t`.
    String,
    /// An `nvtxr_event_t`.
    Event,
}

impl Arg {
    pub(super) fn text(message: *const c_char) -> Self {
        Arg {
            ptr: message.cast(),
            kind: ArgKind::Text,
        }
    }

    pub(super) fn string(string: *const nvtxr_string_t) -> Self {
        Arg {
            ptr: string.cast(),
            kind: ArgKind::String,
        }
    }

    pub(super) fn event(event: *const nvtxr_event_t) -> Self {
        Arg {
            ptr: event.cast(),
            kind: ArgKind::Event,
        }
    }

    /// Validates the argument and translates it.
    ///
    /// # Safety
    /// Pointers must be NULL or valid as documented on the exported functions.
    pub(super) unsafe fn translate(self) -> Result<Event, Error> {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        unsafe {
            match self.kind {
                ArgKind::Text if self.ptr.is_null() => Err(Error::NullArgument),
                ArgKind::Text => Ok(Event::text(self.ptr.cast())),
                ArgKind::String => {
                    let s = string_ref(self.ptr.cast())?.ok_or(Error::NullArgument)?;
                    Ok(Event::with_attributes(
                        RawMessage::Registered(s),
                        None,
                        0,
                        None,
                    ))
                }
                ArgKind::Event => event_from(self.ptr.cast()),
            }
        }
    }
}

/// Validates a C event and translates it.
///
/// # Safety
/// Pointers inside `e` must be valid as documented on `nvtxr_event_t`.
#[inline]
pub(super) unsafe fn event_from(e: *const nvtxr_event_t) -> Result<Event, Error> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let e = read_sized(
            e,
            std::mem::offset_of!(nvtxr_event_t, category) + 4,
            "nvtxr_event_t.size is not set: initialize it with NVTXR_EVENT_INIT",
        )?;
        let message = match (e.message.is_null(), string_ref(e.registered_message)?) {
            (true, None) => RawMessage::None,
            (false, None) => RawMessage::Text(e.message),
            (true, Some(s)) => RawMessage::Registered(s),
            (false, Some(_)) => {
                return Err(Error::InvalidArgument(
                    "both message and registered_message are set",
                ))
            }
        };
        let color = match e.color_type {
            NVTXR_COLOR_NONE => None,
            NVTXR_COLOR_ARGB => Some(Color::from_argb(e.color)),
            _ => return Err(Error::InvalidArgument("unknown color_type")),
        };
        // The NVTXR_PAYLOAD_* codes are NVTX's (checked above).
        let payload = match (e.payload_type, e.payload_count) {
            (_, 0) => RawPayload::new(e.payload_type as i32, e.payload.as_u64)
                .ok_or(Error::InvalidArgument("unknown payload_type"))?,
            (NVTXR_PAYLOAD_NONE, n) => RawPayload::extended(payload_data(e.payloads), n).ok_or(
                Error::InvalidArgument("payloads is NULL (or payload_count too large)"),
            )?,
            _ => {
                return Err(Error::InvalidArgument(
                    "both payload_type and payloads are set",
                ))
            }
        };
        Ok(Event::with_raw_payload(message, color, e.category, payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvtx_protocol::{attr, EventAttributes};

    fn full() -> nvtxr_event_t {
        nvtxr_event_t {
            size: std::mem::size_of::<nvtxr_event_t>() as u32,
            category: 7,
            message: c"m".as_ptr(),
            registered_message: std::ptr::null(),
            color_type: NVTXR_COLOR_ARGB,
            color: 0xFF11_2233,
            payload_type: NVTXR_PAYLOAD_U64,
            reserved: 0,
            payload: nvtxr_payload_t { as_u64: 9 },
            payloads: std::ptr::null(),
            payload_count: 0,
        }
    }

    /// What the tool would get for `e`.
    fn attributes(e: *const nvtxr_event_t) -> Result<EventAttributes, Error> {
        // SAFETY: `e` points to a live event whose message is a C string.
        let event = unsafe { event_from(e) }?;
        Ok(event
            .nvtx_attributes_with(|_| Ok::<_, ()>(std::ptr::null_mut()))
            .unwrap())
    }

    #[test]
    fn only_the_fields_its_size_covers_are_read() {
        let whole = attributes(&full()).unwrap();
        assert_eq!(
            (whole.category, whole.color_type, whole.color),
            (7, attr::COLOR_ARGB, 0xFF11_2233)
        );
        assert_eq!((whole.payload_type, whole.payload), (attr::PAYLOAD_U64, 9));
        assert_eq!(whole.message_type, attr::MESSAGE_ASCII);

        // An older, smaller header: the fields past its size read as zero.
        let mut older = full();
        older.size = std::mem::offset_of!(nvtxr_event_t, color_type) as u32;
        let cut = attributes(&older).unwrap();
        assert_eq!((cut.category, cut.message_type), (7, attr::MESSAGE_ASCII));
        assert_eq!((cut.color_type, cut.payload_type, cut.payload), (0, 0, 0));

        // A size that does not cover `category`: never initialized.
        for size in [0, 4] {
            let mut bad = full();
            bad.size = size;
            assert!(matches!(attributes(&bad), Err(Error::InvalidArgument(_))));
        }

        // A newer, larger header: its prefix is this one.
        #[repr(C)]
        struct Newer {
            event: nvtxr_event_t,
            added: u64,
        }
        let mut newer = Newer {
            event: full(),
            added: u64::MAX,
        };
        newer.event.size = std::mem::size_of::<Newer>() as u32;
        let read = attributes(&newer.event).unwrap();
        assert_eq!((read.color, read.payload), (0xFF11_2233, 9));
        assert!(attributes(std::ptr::null()).is_err_and(|e| e == Error::NullArgument));
    }
}
