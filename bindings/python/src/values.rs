//! Colors, payloads and counter semantics as NVIDIA's package takes them;
//! bad colors and payloads warn.

use nvtx_protocol::payload::{
    schema_field, SchemaAttr, SchemaEntry, SemanticsCounter, SemanticsHeader,
};
use nvtxr_engine::attributes::Payload;
use nvtxr_engine::counters::CounterSemantics;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyInt};
use std::ffi::CString;

/// NVIDIA's `nvtx` color names and values (RGB, alpha 0, as it sends them),
/// then CSS names it needs matplotlib for.
pub(crate) const COLORS: &[(&str, u32)] = &[
    ("green", 0x008000),
    ("blue", 0x0000FF),
    ("yellow", 0xFFFF00),
    ("purple", 0x800080),
    ("rapids", 0x7400FF),
    ("cyan", 0x00FFFF),
    ("red", 0xFF0000),
    ("white", 0xFFFFFF),
    ("darkgreen", 0x006400),
    ("orange", 0xFFA500),
    ("black", 0x000000),
    ("gray", 0x808080),
    ("grey", 0x808080),
    ("silver", 0xC0C0C0),
    ("maroon", 0x800000),
    ("magenta", 0xFF00FF),
    ("fuchsia", 0xFF00FF),
    ("lime", 0x00FF00),
    ("olive", 0x808000),
    ("navy", 0x000080),
    ("teal", 0x008080),
    ("aqua", 0x00FFFF),
    ("pink", 0xFFC0CB),
    ("brown", 0xA52A2A),
    ("gold", 0xFFD700),
    ("violet", 0xEE82EE),
    ("indigo", 0x4B0082),
    ("nvidia", 0x76B900),
];

/// NVIDIA's default color, blue (what `None` means).
pub(crate) const DEFAULT_COLOR: u32 = 0x0000FF;

/// Says, as a Python warning, what was wrong with an argument and what was
/// sent instead. Bad arguments never raise: they could only be seen with a
/// tool attached (without one nothing is read), and annotating must not
/// make a program fail only when it is profiled.
pub(crate) fn warn(py: Python<'_>, what: String) -> PyResult<()> {
    py.import("warnings")?
        .call_method1("warn", (format!("nvtxr: {what}"),))?;
    Ok(())
}

/// A color: a name, `#RRGGBB`, or an ARGB int; `None` is NVIDIA's default,
/// blue. Anything else: a warning, and the default.
pub(crate) fn color(c: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
    let Some(c) = c.filter(|c| !c.is_none()) else {
        return Ok(DEFAULT_COLOR);
    };
    match color_value(c) {
        Ok(v) => Ok(v),
        Err(why) => {
            warn(
                c.py(),
                format!("{why}; the event is sent with the default color"),
            )?;
            Ok(DEFAULT_COLOR)
        }
    }
}

pub(crate) fn color_value(c: &Bound<'_, PyAny>) -> Result<u32, String> {
    if let Ok(v) = c.cast::<PyInt>() {
        return v
            .extract::<u32>()
            .map_err(|_| format!("color {c} is not a 32-bit ARGB value"));
    }
    let name: String = c
        .extract()
        .map_err(|_| format!("color must be a name or an ARGB int, not {c:?}"))?;
    let lower = name.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix('#') {
        if hex.len() == 6 {
            if let Ok(v) = u32::from_str_radix(hex, 16) {
                return Ok(0xFF00_0000 | v);
            }
        }
    }
    COLORS
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            format!(
                "invalid color {name:?}: use an ARGB int, \"#RRGGBB\" or one of {}",
                COLORS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// A number payload: an int (sent as i64, as NVIDIA's package does; as
/// u64 past its range) or a float (f64); an int past 64 bits warns and is
/// left out.
pub(crate) fn payload(py: Python<'_>, p: &Bound<'_, PyAny>) -> PyResult<Option<Payload>> {
    if let Ok(f) = p.cast::<PyFloat>() {
        return Ok(Some(Payload::F64(f.value())));
    }
    if let Ok(v) = p.extract::<i64>() {
        return Ok(Some(Payload::I64(v)));
    }
    if let Ok(v) = p.extract::<u64>() {
        return Ok(Some(Payload::U64(v)));
    }
    warn(
        py,
        format!("payload {p} is out of 64-bit range; the event is sent without it"),
    )?;
    Ok(None)
}

/// A counter semantic as `nvtxr.counters` computes it: flags, unit, unit
/// scale (numerator, denominator), limit type, min and max bits.
pub(crate) type Semantics = (u64, Option<Vec<u8>>, u64, u64, i64, u64, u64);

/// `s` as the engine's counter semantic, its unit `unit` (made by [`c_bytes`]).
pub(crate) fn semantics<'a>(s: &Semantics, unit: &'a Option<CString>) -> CounterSemantics<'a> {
    let &(flags, _, numerator, denominator, limit_type, min, max) = s;
    CounterSemantics {
        flags,
        unit: unit.as_deref(),
        unit_scale: (numerator, denominator),
        limit_type,
        min,
        max,
    }
}

/// `bytes` as a C string, cut at a NUL.
pub(crate) fn c_bytes(bytes: &[u8]) -> CString {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).expect("no NUL before end")
}

/// A payload schema's registration, as `nvtxr._payloads` describes it:
/// `kind` (1 static, 2 dynamic), its size (0: none given), its entries as
/// `(flags, type, name, length, offset)`, its flags
/// (`NVTX_PAYLOAD_SCHEMA_FLAG_*`, 0: none) and each entry's counter semantic
/// (none if shorter), handed to `register` while its parts are alive.
pub(crate) fn with_schema<R>(
    kind: u64,
    static_size: usize,
    entries: &[(u64, u64, Option<String>, u64, u64)],
    flags: u64,
    entry_semantics: &[Option<Semantics>],
    register: impl FnOnce(&SchemaAttr) -> R,
) -> R {
    let names: Vec<Option<CString>> = entries
        .iter()
        .map(|e| e.2.as_deref().map(crate::c_string))
        .collect();
    let units: Vec<Option<CString>> = entry_semantics
        .iter()
        .map(|s| s.as_ref().and_then(|s| s.1.as_deref().map(c_bytes)))
        .collect();
    // Each entry's semantic, kept alive through the registration.
    let links: Vec<Option<SemanticsCounter>> = entry_semantics
        .iter()
        .zip(&units)
        .map(|(s, unit)| s.as_ref().map(|s| semantics(s, unit).to_nvtx()))
        .collect();
    let entries: Vec<SchemaEntry> = entries
        .iter()
        .zip(&names)
        .enumerate()
        .map(
            |(i, (&(flags, type_, _, length, offset), name))| SchemaEntry {
                flags,
                type_,
                name: name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                description: std::ptr::null(),
                array_or_union_detail: length,
                offset,
                semantics: links
                    .get(i)
                    .and_then(Option::as_ref)
                    .map_or(std::ptr::null(), |l| {
                        (&l.header as *const SemanticsHeader).cast()
                    }),
                reserved: std::ptr::null(),
            },
        )
        .collect();
    let attributes = SchemaAttr {
        field_mask: schema_field::TYPE
            | schema_field::ENTRIES
            | schema_field::NUM_ENTRIES
            | if static_size > 0 {
                schema_field::STATIC_SIZE
            } else {
                0
            }
            | if flags != 0 { schema_field::FLAGS } else { 0 },
        name: std::ptr::null(),
        type_: kind,
        flags,
        entries: entries.as_ptr(),
        num_entries: entries.len(),
        payload_static_size: static_size,
        pack_align: 0,
        schema_id: 0,
        extension: std::ptr::null(),
    };
    register(&attributes)
}
