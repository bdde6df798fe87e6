//! Event attributes: message, color, category and payload, and their
//! translation into NVTX's 48-byte `nvtxEventAttributes_t`.

use crate::domain::{Entered, StringState};
use crate::error::Error;
use nvtx_protocol::payload::PayloadData;
use nvtx_protocol::{attr, EventAttributes};
use std::ffi::{c_char, c_void};
use std::ptr;

/// A color as `0xAARRGGBB`.
///
/// ```
/// use nvtxr_engine::attributes::Color;
/// assert_eq!(Color::rgb(0x12, 0x34, 0x56).argb(), 0xFF123456);
/// assert_eq!(Color::GREEN.argb(), 0xFF00FF00);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Color(u32);

impl Color {
    /// Opaque black.
    pub const BLACK: Color = Color(0xFF000000);
    /// Opaque white.
    pub const WHITE: Color = Color(0xFFFFFFFF);
    /// Opaque red.
    pub const RED: Color = Color(0xFFFF0000);
    /// Opaque green.
    pub const GREEN: Color = Color(0xFF00FF00);
    /// Opaque blue.
    pub const BLUE: Color = Color(0xFF0000FF);
    /// Opaque yellow.
    pub const YELLOW: Color = Color(0xFFFFFF00);
    /// Opaque cyan.
    pub const CYAN: Color = Color(0xFF00FFFF);
    /// Opaque magenta.
    pub const MAGENTA: Color = Color(0xFFFF00FF);

    /// From an `0xAARRGGBB` value.
    pub const fn from_argb(argb: u32) -> Color {
        Color(argb)
    }

    /// Opaque color from red, green and blue.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Color {
        Color::argb_parts(0xFF, r, g, b)
    }

    /// From alpha, red, green and blue.
    pub const fn argb_parts(a: u8, r: u8, g: u8, b: u8) -> Color {
        Color((a as u32) << 24 | (r as u32) << 16 | (g as u32) << 8 | b as u32)
    }

    /// The `0xAARRGGBB` value.
    pub const fn argb(self) -> u32 {
        self.0
    }
}

/// A numeric payload attached to an event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Payload {
    /// An unsigned 64-bit integer.
    U64(u64),
    /// A signed 64-bit integer.
    I64(i64),
    /// A 64-bit float.
    F64(f64),
    /// An unsigned 32-bit integer.
    U32(u32),
    /// A signed 32-bit integer.
    I32(i32),
    /// A 32-bit float.
    F32(f32),
}

impl Payload {
    /// NVTX's payload type code and the payload union's bits.
    pub(crate) fn to_raw(self) -> RawPayload {
        let (kind, bits) = match self {
            Payload::U64(v) => (attr::PAYLOAD_U64, v),
            Payload::I64(v) => (attr::PAYLOAD_I64, v as u64),
            Payload::F64(v) => (attr::PAYLOAD_F64, v.to_bits()),
            Payload::U32(v) => (attr::PAYLOAD_U32, u64::from(v)),
            Payload::I32(v) => (attr::PAYLOAD_I32, u64::from(v as u32)),
            Payload::F32(v) => (attr::PAYLOAD_F32, u64::from(v.to_bits())),
        };
        RawPayload {
            kind,
            bits,
            count: 0,
        }
    }
}

/// A payload as NVTX carries it: its type code and the union's bits, 32-bit
/// values in the low half and the high half zero; for extended payloads,
/// the address of the array and its length.
#[derive(Clone, Copy, Default)]
pub struct RawPayload {
    kind: i32,
    bits: u64,
    /// Extended payloads: how many.
    count: i32,
}

impl RawPayload {
    /// From a type code (`attr::PAYLOAD_*`; `None` for an unknown one) and
    /// the union's 8 bytes, of which a 32-bit type uses the low 4.
    #[inline(always)]
    pub fn new(kind: i32, bits: u64) -> Option<RawPayload> {
        let bits = match kind {
            attr::PAYLOAD_NONE => 0,
            attr::PAYLOAD_U64..=attr::PAYLOAD_F64 => bits,
            attr::PAYLOAD_U32..=attr::PAYLOAD_F32 => bits & u64::from(u32::MAX),
            _ => return None,
        };
        Some(RawPayload {
            kind,
            bits,
            count: 0,
        })
    }

    /// Extended payloads (NVTX's payload extension): `count` payloads at
    /// `data`, each a struct of a registered schema (or values of a
    /// predefined type), read by the tool during the call. `None` for NULL
    /// with a nonzero count, or a count past `i32::MAX`.
    pub fn extended(data: *const PayloadData, count: usize) -> Option<RawPayload> {
        if count == 0 {
            return Some(RawPayload::default());
        }
        Some(RawPayload {
            kind: attr::PAYLOAD_EXT,
            bits: (!data.is_null()).then_some(data as u64)?,
            count: i32::try_from(count).ok()?,
        })
    }
}

/// An event's message, as nvtxr forwards it.
#[derive(Clone, Copy)]
pub enum RawMessage {
    None,
    /// A NUL-terminated byte string, forwarded byte for byte.
    Text(*const c_char),
    Registered(&'static StringState),
}

/// Everything an event can carry, before translation for the tool.
#[derive(Clone, Copy)]
pub struct Event {
    pub message: RawMessage,
    pub color: Option<Color>,
    pub category: u32,
    pub payload: RawPayload,
    /// Made by [`Event::text`]: forwarded through the text-only (`...A`) slots.
    plain: bool,
}

impl Event {
    pub fn text(message: *const c_char) -> Self {
        Event {
            message: RawMessage::Text(message),
            color: None,
            category: 0,
            payload: RawPayload::default(),
            plain: true,
        }
    }

    /// An event with attributes (forwarded through the `...Ex` slots).
    pub fn with_attributes(
        message: RawMessage,
        color: Option<Color>,
        category: u32,
        payload: Option<Payload>,
    ) -> Self {
        Event::with_raw_payload(
            message,
            color,
            category,
            payload.map_or_else(RawPayload::default, Payload::to_raw),
        )
    }

    /// [`Event::with_attributes`] with the payload as NVTX carries it.
    #[inline(always)]
    pub fn with_raw_payload(
        message: RawMessage,
        color: Option<Color>,
        category: u32,
        payload: RawPayload,
    ) -> Self {
        Event {
            message,
            color,
            category,
            payload,
            plain: false,
        }
    }

    /// The registered string this event names, if any.
    pub fn registered(&self) -> Option<&'static StringState> {
        match self.message {
            RawMessage::Registered(s) => Some(s),
            _ => None,
        }
    }

    /// The registered string when it is the event's only attribute: then
    /// the string's prebuilt NVTX attributes are this event's.
    #[inline(always)]
    pub fn registered_alone(&self) -> Option<&'static StringState> {
        match self.message {
            RawMessage::Registered(s)
                if self.color.is_none()
                    && self.category == 0
                    && self.payload.kind == attr::PAYLOAD_NONE =>
            {
                Some(s)
            }
            _ => None,
        }
    }

    /// NVTX's attribute struct for this event, in the domain `entered`.
    pub fn nvtx_attributes(&self, entered: &Entered) -> Result<EventAttributes, Error> {
        self.nvtx_attributes_with(|s| s.tool_handle(entered))
    }

    /// NVTX's attribute struct for this event, with `string_handle` giving
    /// the tool's handle for its registered string.
    #[inline(always)]
    pub fn nvtx_attributes_with<E>(
        &self,
        string_handle: impl FnOnce(&StringState) -> Result<*mut c_void, E>,
    ) -> Result<EventAttributes, E> {
        let (message_type, message) = match self.message {
            RawMessage::None => (0, ptr::null()),
            RawMessage::Text(p) => (attr::MESSAGE_ASCII, p as *const c_void),
            RawMessage::Registered(s) => {
                (attr::MESSAGE_REGISTERED, string_handle(s)? as *const c_void)
            }
        };
        Ok(EventAttributes {
            version: attr::VERSION,
            size: std::mem::size_of::<EventAttributes>() as u16,
            category: self.category,
            color_type: if self.color.is_some() {
                attr::COLOR_ARGB
            } else {
                0
            },
            color: self.color.map_or(0, Color::argb),
            payload_type: self.payload.kind,
            reserved0: self.payload.count,
            payload: self.payload.bits,
            message_type,
            padding: 0,
            message,
        })
    }
}

impl Event {
    /// The text, if the event is a text message and nothing else.
    pub fn plain_text(&self) -> Option<*const c_char> {
        match self.message {
            RawMessage::Text(p) if self.plain => Some(p),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_payloads_keep_only_the_bits_their_type_uses() {
        let bits = 0xFFFF_FFFF_0000_0005;
        let raw = |kind| RawPayload::new(kind, bits).map(|p| (p.kind, p.bits));
        assert_eq!(raw(attr::PAYLOAD_NONE), Some((0, 0)));
        for kind in [attr::PAYLOAD_U64, attr::PAYLOAD_I64, attr::PAYLOAD_F64] {
            assert_eq!(raw(kind), Some((kind, bits)));
        }
        for kind in [attr::PAYLOAD_U32, attr::PAYLOAD_I32, attr::PAYLOAD_F32] {
            assert_eq!(raw(kind), Some((kind, 5)));
        }
        for unknown in [7, -1, i32::MIN] {
            assert!(raw(unknown).is_none(), "{unknown}");
        }
        // The typed payloads give the same raw form.
        let typed = |p: Payload| (p.to_raw().kind, p.to_raw().bits);
        assert_eq!(typed(Payload::U32(5)), (attr::PAYLOAD_U32, 5));
        assert_eq!(typed(Payload::I32(-1)), (attr::PAYLOAD_I32, 0xFFFF_FFFF));
        assert_eq!(
            typed(Payload::F64(2.5)),
            (attr::PAYLOAD_F64, 2.5f64.to_bits())
        );
    }

    #[test]
    fn a_registered_strings_prebuilt_attributes_are_what_its_event_builds() {
        use crate::domain::DomainState;
        let s = DomainState::default_domain().uninterned_string(c"step");
        let handle = 0x1234 as *mut c_void;
        let built = Event::with_attributes(RawMessage::Registered(s), None, 0, None)
            .nvtx_attributes_with(|_| Ok::<_, ()>(handle))
            .unwrap();
        let prebuilt = EventAttributes::registered(handle);
        let bytes = |a: &EventAttributes| {
            // SAFETY: a plain-data struct with explicit padding, fully initialized.
            unsafe { std::mem::transmute::<EventAttributes, [u8; 48]>(*a) }
        };
        assert_eq!(bytes(&prebuilt), bytes(&built));
        assert_eq!(prebuilt.message_type, attr::MESSAGE_REGISTERED);
        assert_eq!(prebuilt.message, handle.cast_const());
    }
}
