//! A payload's bytes as values: scalars of every entry type (integers,
//! floats of every width, addresses), strings inline and pointed to (each
//! character width), enums by their registered names.

use super::schema::Enum;
use crate::text::MAX_TEXT;
use nvtx_protocol::payload::entry_type as t;
use serde_json::Value;
use std::ffi::CStr;

/// A payload's most bytes.
pub(super) const MAX_PAYLOAD: usize = 1 << 30;

/// `n` elements of `size` bytes at `data` (cut at [`MAX_PAYLOAD`] bytes).
///
/// # Safety
/// `data` is readable for that long.
pub(super) unsafe fn pointed<'a>(data: *const u8, n: usize, size: usize) -> &'a [u8] {
    let len = n.saturating_mul(size).min(MAX_PAYLOAD);
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe { std::slice::from_raw_parts(data, len) }
}

/// How many elements of `size` bytes at `data` come before the first
/// all-zero one (at most `max`).
///
/// # Safety
/// `data` is readable up to that element, or for `max` elements.
pub(super) unsafe fn before_zero(data: *const u8, size: usize, max: usize) -> usize {
    (0..max)
        .position(|i| {
            // SAFETY: element `i` is no later than the terminating one, as
            // the caller promises.
            let element = unsafe { pointed(data.add(i * size), 1, size) };
            element.iter().all(|&b| b == 0)
        })
        .unwrap_or(max)
}

/// A NUL-terminated string of `unit`-byte code units at `data`.
///
/// # Safety
/// `data` is NUL-terminated (or readable for [`MAX_TEXT`] bytes).
pub(super) unsafe fn pointed_string(data: *const u8, unit: usize) -> String {
    if unit == 1 {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        let s = unsafe { CStr::from_ptr(data.cast()) }.to_bytes();
        return String::from_utf8_lossy(&s[..s.len().min(MAX_TEXT)]).into_owned();
    }
    // SAFETY: as above: units up to the NUL one.
    let n = unsafe { before_zero(data, unit, MAX_TEXT / unit) };
    // SAFETY: as above.
    inline_string(unsafe { pointed(data, n, unit) }, unit)
}

/// A string of `unit`-byte code units (UTF-8, UTF-16, UTF-32), up to its
/// first NUL.
pub(super) fn inline_string(data: &[u8], unit: usize) -> String {
    let data = &data[..data.len().min(MAX_TEXT)];
    match unit {
        2 => {
            let units: Vec<u16> = data
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .take_while(|&u| u != 0)
                .collect();
            String::from_utf16_lossy(&units)
        }
        4 => data
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .take_while(|&u| u != 0)
            .map(|u| char::from_u32(u).unwrap_or('\u{FFFD}'))
            .collect(),
        _ => {
            let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
            String::from_utf8_lossy(&data[..end]).into_owned()
        }
    }
}

/// An enum's value: its name, the names of its set flags joined by `|`, or
/// the number.
pub(super) fn enum_value(e: &Enum, data: &[u8]) -> Result<Value, String> {
    let bytes = data
        .get(..e.size)
        .ok_or_else(|| "an enum value past the payload".to_string())?;
    let mut le = [0u8; 8];
    le[..bytes.len()].copy_from_slice(bytes);
    let v = u64::from_le_bytes(le);
    if let Some((name, _, _)) = e.values.iter().find(|(_, value, _)| *value == v) {
        return Ok(Value::String(name.clone()));
    }
    let flags: Vec<&str> = e
        .values
        .iter()
        .filter(|(_, value, flag)| *flag && *value != 0 && v & value == *value)
        .map(|(name, _, _)| name.as_str())
        .collect();
    let covered = e
        .values
        .iter()
        .filter(|(_, value, flag)| *flag && v & value == *value)
        .fold(0, |all, (_, value, _)| all | value);
    Ok(if !flags.is_empty() && covered == v {
        Value::String(flags.join("|"))
    } else {
        Value::from(v)
    })
}

/// A float that JSON can hold, else its name ("NaN", "inf", "-inf").
fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or_else(|| Value::String(v.to_string()), Value::Number)
}

/// An IEEE-style binary float of `exponent_bits` exponent bits: sign, biased
/// exponent and fraction (with the integer bit when it is explicit) as f64.
fn wide_float(negative: bool, exponent: i32, bias: i32, mantissa: f64) -> f64 {
    let v = mantissa * 2f64.powi(exponent - bias);
    if negative {
        -v
    } else {
        v
    }
}

/// One value of a predefined scalar type, from its little-endian bytes.
pub(super) fn scalar(type_: u64, b: &[u8]) -> Result<Value, String> {
    let u = |n: usize| -> u64 {
        let mut le = [0u8; 8];
        le[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(le)
    };
    let i = |n: usize| -> i64 {
        let shift = 64 - 8 * n as u32;
        ((u(n) << shift) as i64) >> shift
    };
    Ok(match type_ {
        t::CHAR
        | t::SHORT
        | t::INT
        | t::LONG
        | t::LONGLONG
        | t::INT8
        | t::INT16
        | t::INT32
        | t::INT64
        | t::WCHAR => Value::from(i(b.len())),
        t::UCHAR
        | t::USHORT
        | t::UINT
        | t::ULONG
        | t::ULONGLONG
        | t::UINT8
        | t::UINT16
        | t::UINT32
        | t::UINT64
        | t::SIZE
        | t::CHAR8
        | t::CHAR16
        | t::CHAR32
        | t::BYTE
        | t::RANGE_ID
        | t::CATEGORY
        | t::COLOR_ARGB
        | t::SCOPE_ID
        | t::PID_UINT32
        | t::PID_UINT64
        | t::TID_UINT32
        | t::TID_UINT64 => Value::from(u(b.len())),
        t::ADDRESS => Value::String(format!("{:#x}", u(8))),
        t::FLOAT | t::FLOAT32 | t::TF32 => float(f32::from_le_bytes(b.try_into().unwrap()).into()),
        t::DOUBLE | t::FLOAT64 => float(f64::from_le_bytes(b.try_into().unwrap())),
        t::FLOAT16 => {
            let h = u(2);
            let (sign, exp, frac) = (h >> 15 == 1, (h >> 10 & 0x1f) as i32, (h & 0x3ff) as f64);
            float(match exp {
                0 => wide_float(sign, 1, 15, frac / 1024.0),
                0x1f if frac == 0.0 => wide_float(sign, 0, 0, f64::INFINITY),
                0x1f => f64::NAN,
                _ => wide_float(sign, exp, 15, 1.0 + frac / 1024.0),
            })
        }
        t::BF16 => float(f32::from_bits((u(2) as u32) << 16).into()),
        t::LONGDOUBLE => {
            // x87 80-bit extended: 64-bit mantissa with its integer bit, then sign and exponent.
            let mantissa = u(8);
            let top = u64::from_le_bytes([b[8], b[9], 0, 0, 0, 0, 0, 0]);
            let (sign, exp) = (top >> 15 == 1, (top & 0x7fff) as i32);
            float(match exp {
                0x7fff if mantissa << 1 == 0 => wide_float(sign, 0, 0, f64::INFINITY),
                0x7fff => f64::NAN,
                _ => wide_float(sign, exp.max(1), 16383 + 63, mantissa as f64),
            })
        }
        t::FLOAT128 => {
            let lo = u(8);
            let hi = u64::from_le_bytes(b[8..16].try_into().unwrap());
            let (sign, exp) = (hi >> 63 == 1, (hi >> 48 & 0x7fff) as i32);
            // The fraction's top 52 bits are all an f64 keeps.
            let frac = ((hi & 0xffff_ffff_ffff) << 4 | lo >> 60) as f64 / (1u64 << 52) as f64;
            float(match exp {
                0x7fff if frac == 0.0 => wide_float(sign, 0, 0, f64::INFINITY),
                0x7fff => f64::NAN,
                0 => wide_float(sign, 1, 16383, frac),
                _ => wide_float(sign, exp, 16383, 1.0 + frac),
            })
        }
        t::INT128 => Value::String(i128::from_le_bytes(b.try_into().unwrap()).to_string()),
        t::UINT128 => Value::String(u128::from_le_bytes(b.try_into().unwrap()).to_string()),
        other => return Err(format!("type {other} is not decoded")),
    })
}
