//! An event's extended payloads, decoded into named values by their
//! registered schemas while the producer's data is still there.
//!
//! Reads stay within each payload's `size` bytes; what an entry points to
//! (`POINTER` entries, `char*` strings, registered string handles) is read
//! as the producer promises it is, with strings cut at [`MAX_TEXT`] bytes
//! and arrays at [`MAX_ELEMENTS`]. A payload that does not match its schema
//! is shown as its raw bytes with the reason.

use super::schema::{self, Definition, Entry, Schema};
use super::values::{
    before_zero, enum_value, inline_string, pointed, pointed_string, scalar, MAX_PAYLOAD,
};
use crate::text::MAX_TEXT;
use nvtx_protocol::payload::{entry_flag, entry_type as t, schema_id, schema_type, PayloadData};
use serde_json::{Map, Value};

/// An array's most elements shown (the rest are counted).
pub const MAX_ELEMENTS: usize = 1 << 16;
/// The deepest nesting of schemas followed.
const MAX_DEPTH: usize = 16;

/// What an event's payloads say.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Every payload's named values, in order; a later one of the same name wins.
    pub fields: Map<String, Value>,
    /// The value of an entry flagged as the event's message, else the first
    /// schema's name.
    pub message: Option<String>,
    /// Timestamp entries (deferred events), left out of `fields`.
    pub times: Vec<Time>,
}

/// A timestamp entry's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Time {
    /// Its role (`entry_flag::RANGE_BEGIN`, `RANGE_END`, `MARK`; 0: none).
    pub role: u64,
    pub value: i64,
    /// Its time domain (`None`: the tool's, as from `nvtxTimestampGet`).
    pub domain: Option<u64>,
}

/// Decodes `count` payloads at `data`, registered in `domain`.
///
/// # Safety
/// `data` is NULL or `count` payloads as `nvToolsExtPayload.h` says, each
/// `size` bytes long and pointing where their schema says.
pub unsafe fn decode(domain: u64, data: *const PayloadData, count: usize) -> Decoded {
    let mut decoded = Decoded::default();
    if data.is_null() {
        return decoded;
    }
    // SAFETY: the caller upholds this function's `# Safety` contract.
    let payloads = unsafe { std::slice::from_raw_parts(data, count.min(1024)) };
    let mut d = Decoder {
        domain,
        payloads,
        depth: 0,
        message: None,
        name: None,
        times: Vec::new(),
    };
    for p in payloads {
        // SAFETY: as above.
        unsafe { d.payload(p, &mut decoded.fields) };
    }
    decoded.message = d.message.or(d.name);
    decoded.times = d.times;
    decoded
}

struct Decoder<'p> {
    domain: u64,
    /// The event's payloads (an array's length may be in another one).
    payloads: &'p [PayloadData],
    depth: usize,
    /// An `EVENT_MESSAGE` entry's value.
    message: Option<String>,
    /// The first schema's name.
    name: Option<String>,
    times: Vec<Time>,
}

/// The bytes `[at, at + n)` of `blob`, or why not.
fn bytes(blob: &[u8], at: usize, n: usize) -> Result<&[u8], String> {
    at.checked_add(n)
        .and_then(|end| blob.get(at..end))
        .ok_or_else(|| {
            format!(
                "{n} bytes at offset {at} are past the payload's {}",
                blob.len()
            )
        })
}

fn raw(blob: &[u8]) -> Value {
    let shown = &blob[..blob.len().min(MAX_TEXT / 2)];
    Value::String(shown.iter().map(|b| format!("{b:02x}")).collect())
}

impl Decoder<'_> {
    /// One payload's values into `out`.
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn payload(&mut self, p: &PayloadData, out: &mut Map<String, Value>) {
        if p.size == 0 || p.payload.is_null() || p.schema_id == schema_id::REFERENCED {
            return;
        }
        // A string payload of `SIZE_MAX` bytes: up to its NUL.
        if p.size == usize::MAX {
            if let Some(unit) = schema::string_unit(p.schema_id) {
                // SAFETY: a NUL-terminated string, as the caller promises.
                let s = unsafe { pointed_string(p.payload.cast(), unit) };
                out.insert("payload".into(), Value::String(s));
            }
            return;
        }
        // SAFETY: `size` bytes at `payload`, as the caller promises.
        let blob =
            unsafe { std::slice::from_raw_parts(p.payload.cast::<u8>(), p.size.min(MAX_PAYLOAD)) };
        if p.schema_id == schema_id::RAW {
            out.insert("raw".into(), raw(blob));
            return;
        }
        let mut values = Map::new();
        // SAFETY: as above.
        match unsafe { self.typed(p.schema_id, blob, &mut values) } {
            Ok(()) => out.extend(values),
            Err(why) => {
                out.insert("raw".into(), raw(blob));
                out.insert("payload error".into(), Value::String(why));
            }
        }
    }

    /// A payload of `type_`: a predefined type's values, or a schema's.
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn typed(
        &mut self,
        type_: u64,
        blob: &[u8],
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        if type_ < schema_id::STATIC_START {
            let value = if let Some(unit) = schema::string_unit(type_) {
                Value::String(inline_string(blob, unit))
            } else {
                let (size, _) = schema::element(self.domain, type_)?;
                let mut values = blob
                    .chunks_exact(size)
                    .take(MAX_ELEMENTS)
                    .map(|b| scalar(type_, b))
                    .collect::<Result<Vec<_>, _>>()?;
                if values.len() == 1 {
                    values.remove(0)
                } else {
                    Value::Array(values)
                }
            };
            out.insert("payload".into(), value);
            return Ok(());
        }
        let definition = schema::find(self.domain, type_)
            .ok_or_else(|| format!("schema {type_} is not registered in this domain"))?;
        match &*definition {
            Definition::Enum(e) => {
                out.insert("payload".into(), enum_value(e, blob)?);
            }
            Definition::Schema(s) => {
                if self.name.is_none() {
                    self.name.clone_from(&s.name);
                }
                if s.type_ == schema_type::DYNAMIC || s.size == 0 || blob.len() <= s.size {
                    // SAFETY: as above.
                    unsafe { self.fields(s, blob, out)? };
                } else {
                    // Several structs in a row.
                    let mut all = Vec::new();
                    for one in blob.chunks_exact(s.size).take(MAX_ELEMENTS) {
                        let mut fields = Map::new();
                        // SAFETY: as above.
                        unsafe { self.fields(s, one, &mut fields)? };
                        all.push(Value::Object(fields));
                    }
                    let key = s.name.clone().unwrap_or_else(|| "payload".into());
                    out.insert(key, Value::Array(all));
                }
            }
        }
        Ok(())
    }

    /// A schema's entries, read from `blob`, into `out`.
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn fields(
        &mut self,
        s: &Schema,
        blob: &[u8],
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        match s.type_ {
            schema_type::UNION => {
                return Err("a union is decoded as an entry whose selector is beside it".into())
            }
            schema_type::UNION_WITH_INTERNAL_SELECTOR => {
                return Err("unions with an internal selector are not decoded".into())
            }
            _ => {}
        }
        self.depth += 1;
        let result = if self.depth > MAX_DEPTH {
            Err("schemas nested too deep".into())
        } else {
            // SAFETY: as above.
            unsafe { self.entries(s, blob, out) }
        };
        self.depth -= 1;
        result
    }

    /// [`Decoder::fields`] of a schema that is not a union, nested no
    /// deeper than allowed.
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn entries(
        &mut self,
        s: &Schema,
        blob: &[u8],
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        // Integer entries' values, by index (array lengths).
        let mut integers: Vec<Option<u64>> = Vec::with_capacity(s.entries.len());
        let mut cursor = 0usize;
        for e in &s.entries {
            // SAFETY: as above.
            let (value, end) = unsafe { self.entry(s, e, blob, cursor, &integers)? };
            cursor = end;
            integers.push(
                value
                    .as_u64()
                    .or_else(|| value.as_i64().map(|v| v.max(0) as u64)),
            );
            let role = e.flags & entry_flag::ROLE_MASK;
            if e.flags & entry_flag::TIMESTAMP != 0
                || matches!(
                    role,
                    entry_flag::RANGE_BEGIN | entry_flag::RANGE_END | entry_flag::MARK
                )
            {
                if let Some(v) = value.as_i64().or_else(|| value.as_u64().map(|v| v as i64)) {
                    self.times.push(Time {
                        role,
                        value: v,
                        domain: e.time_domain,
                    });
                    continue;
                }
            }
            if e.flags & entry_flag::EVENT_MESSAGE != 0 {
                self.message = Some(match &value {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                });
            }
            if e.flags & entry_flag::HIDE == 0 {
                out.insert(e.name.clone(), value);
            }
        }
        Ok(())
    }

    /// An array's length: the value of an integer entry before it in the
    /// same schema (`ARRAY_LENGTH_INDEX`), or of another payload of the
    /// event holding one integer (`ARRAY_LENGTH_PAYLOAD_INDEX`).
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn length(&mut self, e: &Entry, integers: &[Option<u64>]) -> Result<usize, String> {
        let n = if e.array() == entry_flag::ARRAY_LENGTH_PAYLOAD_INDEX {
            let p = self.payloads.get(e.detail as usize).ok_or_else(|| {
                format!("entry {}: the event has no payload {}", e.name, e.detail)
            })?;
            let mut values = Map::new();
            // SAFETY: a payload of the event, as the caller promises.
            unsafe { self.payload(p, &mut values) };
            let mut values = values.into_values();
            match (values.next(), values.next()) {
                (Some(v), None) => v.as_u64(),
                _ => None,
            }
            .ok_or_else(|| {
                format!(
                    "entry {}: payload {} does not hold one integer",
                    e.name, e.detail
                )
            })?
        } else {
            integers
                .get(e.detail as usize)
                .copied()
                .flatten()
                .ok_or_else(|| {
                    format!("entry {}: no integer entry {} before it", e.name, e.detail)
                })?
        };
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// One entry's value, and where the next entry of a dynamic schema
    /// may start.
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn entry(
        &mut self,
        s: &Schema,
        e: &Entry,
        blob: &[u8],
        cursor: usize,
        integers: &[Option<u64>],
    ) -> Result<(Value, usize), String> {
        let (size, align) = schema::element(self.domain, e.type_)?;
        let footprint = schema::footprint(self.domain, e)?;
        let at = match e.offset {
            Some(at) => at,
            None => cursor.next_multiple_of(footprint.map_or(align, |f| f.1)),
        };
        // SAFETY: as above.
        let mut length = |e: &Entry| unsafe { self.length(e, integers) };
        // A union's member is chosen by an integer entry before it.
        let selector = integers.get(e.detail as usize).copied().flatten();
        // Where the data is: in place, or behind a pointer.
        let pointer = e.flags & entry_flag::POINTER != 0 || e.is_string_pointer();
        if pointer {
            let address = u64::from_le_bytes(bytes(blob, at, 8)?.try_into().unwrap());
            let end = at + 8;
            if address == 0 {
                return Ok((Value::Null, end));
            }
            let data = address as usize as *const u8;
            if let Some(unit) = schema::string_unit(e.type_) {
                let value = match e.array() {
                    entry_flag::ARRAY_FIXED_SIZE => {
                        // SAFETY: `detail` code units there, as the producer promises.
                        let units = unsafe { pointed(data, e.detail as usize, unit) };
                        inline_string(units, unit)
                    }
                    entry_flag::ARRAY_LENGTH_INDEX | entry_flag::ARRAY_LENGTH_PAYLOAD_INDEX => {
                        // SAFETY: as above.
                        let units = unsafe { pointed(data, length(e)?, unit) };
                        inline_string(units, unit)
                    }
                    // SAFETY: a NUL-terminated string, as the producer promises.
                    _ => unsafe { pointed_string(data, unit) },
                };
                return Ok((Value::String(value), end));
            }
            let count = match e.array() {
                0 => 1,
                entry_flag::ARRAY_FIXED_SIZE => e.detail as usize,
                entry_flag::ARRAY_LENGTH_INDEX | entry_flag::ARRAY_LENGTH_PAYLOAD_INDEX => {
                    length(e)?
                }
                // SAFETY: elements up to an all-zero one, as the producer promises.
                entry_flag::ARRAY_ZERO_TERMINATED => unsafe {
                    before_zero(data, size, MAX_ELEMENTS)
                },
                _ => return Err(format!("entry {}: array kind not decoded", e.name)),
            };
            // SAFETY: `count` elements there, as the producer promises.
            let data = unsafe { pointed(data, count, size) };
            // SAFETY: as above.
            let value = unsafe { self.elements(e, data, size, e.array() != 0, selector)? };
            return Ok((value, end));
        }
        if let Some(unit) = schema::string_unit(e.type_) {
            let units = match e.array() {
                0 | entry_flag::ARRAY_FIXED_SIZE => e.detail as usize,
                entry_flag::ARRAY_LENGTH_INDEX | entry_flag::ARRAY_LENGTH_PAYLOAD_INDEX => {
                    length(e)?
                }
                entry_flag::ARRAY_ZERO_TERMINATED => {
                    let rest = bytes(blob, at, 0).map(|_| &blob[at..])?;
                    let n = rest
                        .chunks_exact(unit)
                        .position(|c| c.iter().all(|&b| b == 0));
                    n.map_or(rest.len() / unit, |n| n + 1)
                }
                _ => return Err(format!("entry {}: array kind not decoded", e.name)),
            };
            let data = bytes(blob, at, units.saturating_mul(unit))?;
            return Ok((Value::String(inline_string(data, unit)), at + data.len()));
        }
        let (count, array) = match e.array() {
            0 => (1, false),
            entry_flag::ARRAY_FIXED_SIZE => (e.detail as usize, true),
            entry_flag::ARRAY_LENGTH_INDEX | entry_flag::ARRAY_LENGTH_PAYLOAD_INDEX => {
                (length(e)?, true)
            }
            entry_flag::ARRAY_ZERO_TERMINATED => {
                let rest = bytes(blob, at, 0).map(|_| &blob[at..])?;
                let n = rest
                    .chunks_exact(size.max(1))
                    .position(|c| c.iter().all(|&b| b == 0));
                let n = n.ok_or_else(|| format!("entry {}: no terminating element", e.name))?;
                let data = bytes(blob, at, n * size)?;
                // SAFETY: as above.
                let value = unsafe { self.elements(e, data, size, true, selector)? };
                return Ok((value, at + (n + 1) * size));
            }
            _ => return Err(format!("entry {}: array kind not decoded", e.name)),
        };
        if s.type_ != schema_type::DYNAMIC && footprint.is_none() {
            return Err(format!(
                "entry {}: a variable length in a static schema",
                e.name
            ));
        }
        let data = bytes(blob, at, count.saturating_mul(size))?;
        // SAFETY: as above.
        let value = unsafe { self.elements(e, data, size, array, selector)? };
        Ok((value, at + data.len()))
    }

    /// `data`'s elements of `e`'s type: one value, or an array; a union's
    /// the member `selector` (the value of the entry `e` names) chooses.
    ///
    /// # Safety
    /// As [`decode`]'s.
    unsafe fn elements(
        &mut self,
        e: &Entry,
        data: &[u8],
        size: usize,
        array: bool,
        selector: Option<u64>,
    ) -> Result<Value, String> {
        let mut values = Vec::new();
        for one in data.chunks_exact(size.max(1)).take(MAX_ELEMENTS) {
            values.push(if e.type_ >= schema_id::STATIC_START {
                match schema::find(self.domain, e.type_).as_deref() {
                    Some(Definition::Enum(en)) => enum_value(en, one)?,
                    Some(Definition::Schema(union)) if union.type_ == schema_type::UNION => {
                        let k = selector.ok_or_else(|| {
                            format!(
                                "entry {}: its union's selector, entry {}, is not an integer before it",
                                e.name, e.detail
                            )
                        })?;
                        let member = union.entries.get(k as usize).ok_or_else(|| {
                            format!(
                                "entry {}: member {k} of a union of {}",
                                e.name,
                                union.entries.len()
                            )
                        })?;
                        // SAFETY: as above.
                        let (value, _) = unsafe { self.entry(union, member, one, 0, &[])? };
                        Value::Object(Map::from_iter([(member.name.clone(), value)]))
                    }
                    Some(Definition::Schema(nested)) => {
                        let mut fields = Map::new();
                        // SAFETY: as above.
                        unsafe { self.fields(nested, one, &mut fields)? };
                        Value::Object(fields)
                    }
                    None => return Err(format!("entry {}: unknown type {}", e.name, e.type_)),
                }
            } else if e.type_ == t::REGISTERED_STRING_HANDLE {
                let handle = u64::from_le_bytes(one.try_into().unwrap()) as usize;
                // SAFETY: a handle this tool made, as the producer promises.
                match unsafe { crate::handles::text_of(handle as *const _) } {
                    Some(text) => Value::String(text),
                    None => Value::Null,
                }
            } else {
                scalar(e.type_, one)?
            });
        }
        Ok(if array {
            Value::Array(values)
        } else {
            values.pop().unwrap_or(Value::Null)
        })
    }
}
