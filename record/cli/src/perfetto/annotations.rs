//! An event's arguments as Perfetto's debug annotations, as the JSON's
//! `args`: an NVTX event's domain, category, payload, color and decoded
//! fields (prost messages); a GPU activity's arguments, encoded by hand (per
//! kernel, prost messages cost 4 times as much, `docs/gpu.md`).

use super::intern::{intern, Interner};
use super::proto::DebugAnnotation;
use super::wire::{debug_annotation as da, interned, track_event, Fields};
use crate::model::{css_color, Arg, ArgValue, Details, GpuEvent, Payload};
use smallvec::SmallVec;

/// Debug annotation names, interned on every sequence with these ids.
pub(super) const ANNOTATIONS: [&str; 6] = [
    "domain",
    "category",
    "category_name",
    "payload",
    "color",
    "fields",
];
/// The iid of a GPU argument's name on a GPU stream's sequence (after
/// [`ANNOTATIONS`]).
pub(super) fn gpu_arg_iid(arg: Arg) -> u64 {
    (ANNOTATIONS.len() + 1 + arg as usize) as u64
}

const DOMAIN: u64 = 1;
const CATEGORY: u64 = 2;
const CATEGORY_NAME: u64 = 3;
const PAYLOAD: u64 = 4;
const COLOR: u64 = 5;
const FIELDS: u64 = 6;

/// The JSON's `args` as debug annotations (the default domain left out);
/// `string` interns a string value.
pub(super) fn annotations(
    d: &Details,
    mut string: impl FnMut(&str) -> u64,
) -> Vec<DebugAnnotation> {
    let mut out = Vec::new();
    let named = |iid: u64| DebugAnnotation {
        name_iid: Some(iid),
        ..Default::default()
    };
    if !d.domain.is_empty() {
        out.push(DebugAnnotation {
            string_value_iid: Some(string(&d.domain)),
            ..named(DOMAIN)
        });
    }
    if let Some((id, name)) = &d.category {
        out.push(DebugAnnotation {
            uint_value: Some(u64::from(*id)),
            ..named(CATEGORY)
        });
        if let Some(name) = name {
            out.push(DebugAnnotation {
                string_value_iid: Some(string(name)),
                ..named(CATEGORY_NAME)
            });
        }
    }
    if let Some(p) = d.payload {
        out.push(match p {
            Payload::U64(v) => DebugAnnotation {
                uint_value: Some(v),
                ..named(PAYLOAD)
            },
            Payload::I64(v) => DebugAnnotation {
                int_value: Some(v),
                ..named(PAYLOAD)
            },
            Payload::F64(v) => DebugAnnotation {
                double_value: Some(v),
                ..named(PAYLOAD)
            },
        });
    }
    if let Some(color) = d.color {
        out.push(DebugAnnotation {
            string_value_iid: Some(string(&css_color(color))),
            ..named(COLOR)
        });
    }
    if let Some(fields) = &d.fields {
        out.push(DebugAnnotation {
            dict_entries: dict(fields),
            ..named(FIELDS)
        });
    }
    out
}

/// Decoded payload fields as nested debug annotations (names not interned:
/// they are many and rarely repeat within a block).
fn dict(fields: &crate::model::Fields) -> Vec<DebugAnnotation> {
    fields
        .iter()
        .map(|(name, value)| DebugAnnotation {
            name: Some(name.clone()),
            ..value_annotation(value)
        })
        .collect()
}

/// A JSON value as a debug annotation's value (null: none).
fn value_annotation(v: &serde_json::Value) -> DebugAnnotation {
    use serde_json::Value;
    let mut a = DebugAnnotation::default();
    match v {
        Value::Null => {}
        Value::Bool(b) => a.bool_value = Some(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                a.uint_value = Some(u);
            } else if let Some(i) = n.as_i64() {
                a.int_value = Some(i);
            } else {
                a.double_value = n.as_f64();
            }
        }
        Value::String(s) => a.string_value = Some(s.clone()),
        Value::Array(items) => a.array_values = items.iter().map(value_annotation).collect(),
        Value::Object(fields) => a.dict_entries = dict(fields),
    }
    a
}

/// A GPU argument ready to encode: its name's iid and its value, texts
/// interned.
pub(super) struct Annotation {
    name: u64,
    value: Value,
}

enum Value {
    Uint(u64),
    Int(i64),
    /// An interned text.
    Text(u64),
    Dims([i32; 3]),
    /// `launched by`: `api`, `thread`, `range` (names and values interned).
    Launch([(u64, Option<Value2>); 3]),
}

/// A value inside `launched by`.
#[derive(Clone, Copy)]
enum Value2 {
    Uint(u64),
    Text(u64),
}

pub(super) type GpuArgs = SmallVec<[Annotation; 12]>;

/// A GPU activity's arguments into `out`, their texts interned in
/// `strings` (new ones defined in `interned_data`, `i`). Filled in place:
/// returned, the arguments (a kilobyte) were copied.
pub(super) fn gpu_annotations(
    g: &GpuEvent,
    strings: &mut Interner,
    i: &mut Fields,
    out: &mut GpuArgs,
) {
    let mut text =
        |i: &mut Fields, t: &str| intern(strings, t, i, interned::DEBUG_ANNOTATION_STRING_VALUES);
    g.args(|n, v| {
        let value = match v {
            ArgValue::Uint(v) => Value::Uint(v),
            ArgValue::Int(v) => Value::Int(v),
            ArgValue::Text(t) => Value::Text(text(i, t)),
            ArgValue::Dims(d) => Value::Dims(d),
            ArgValue::Launch(l) => Value::Launch([
                (gpu_arg_iid(Arg::Api), Some(Value2::Text(text(i, l.api)))),
                (gpu_arg_iid(Arg::Thread), Some(Value2::Uint(l.tid.into()))),
                (
                    gpu_arg_iid(Arg::Range),
                    l.range.map(|r| Value2::Text(text(i, r.name()))),
                ),
            ]),
        };
        out.push(Annotation {
            name: gpu_arg_iid(n),
            value,
        });
    });
}

/// Writes a GPU activity's arguments into its `TrackEvent`.
pub(super) fn encode_gpu_annotations(t: &mut Fields, args: &GpuArgs) {
    for a in args {
        t.message(track_event::DEBUG_ANNOTATIONS, |d| {
            d.uint(da::NAME_IID, a.name);
            match &a.value {
                Value::Uint(v) => d.uint(da::UINT_VALUE, *v),
                Value::Int(v) => int(d, *v),
                Value::Text(iid) => d.uint(da::STRING_VALUE_IID, *iid),
                Value::Dims(dims) => {
                    for v in dims {
                        d.message(da::ARRAY_VALUES, |e| int(e, i64::from(*v)));
                    }
                }
                Value::Launch(entries) => {
                    for (name, value) in entries {
                        d.message(da::DICT_ENTRIES, |e| {
                            e.uint(da::NAME_IID, *name);
                            match value {
                                Some(Value2::Uint(v)) => e.uint(da::UINT_VALUE, *v),
                                Some(Value2::Text(iid)) => e.uint(da::STRING_VALUE_IID, *iid),
                                None => {}
                            }
                        });
                    }
                }
            }
        });
    }
}

/// An integer as the JSON-built annotations wrote it: `uint_value` when
/// not negative.
fn int(d: &mut Fields, v: i64) {
    match u64::try_from(v) {
        Ok(u) => d.uint(da::UINT_VALUE, u),
        Err(_) => d.uint(da::INT_VALUE, v as u64),
    }
}
