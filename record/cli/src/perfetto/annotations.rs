//! An event's arguments as Perfetto's debug annotations: the domain,
//! category, payload, color and decoded fields, as the JSON's `args`.

use super::proto::DebugAnnotation;
use crate::model::{css_color, Details, Payload};

/// Debug annotation names, interned on every sequence with these ids.
pub(super) const ANNOTATIONS: [&str; 6] = [
    "domain",
    "category",
    "category_name",
    "payload",
    "color",
    "fields",
];
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
