//! How the summary groups range names: as people mean them. Names that
//! differ only in their numbers (`step 22`, `step 23`; PyTorch's
//! `aten::linear, seq = 11450, op_id = 322562`) are one row, the numbers
//! shown as `{n}`; `--exact-names` groups by the exact name, as Nsight's
//! `nvtx_sum` does. `--operators` keys PyTorch's `emit_nvtx` names by
//! their operator alone. The trace keeps every exact name.
//!
//! The HTML page colors a group's bars alike with the same rule
//! (`groupOf` in `timeline.html`): both are checked against
//! `tests/name_groups.json`.

use std::borrow::Cow;

/// How ranges are grouped into the summary's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Grouping {
    /// Numbers that stand alone replaced by `{n}` (the default).
    #[default]
    Numbers,
    /// Exact names (`--exact-names`).
    Exact,
    /// PyTorch's operator: the name up to its first comma, its numbers as
    /// `{n}` (`--operators`).
    Operator,
    /// The name and the value of a decoded payload field (`--group-by FIELD`).
    Field(String),
}

/// What stands for a number in a group's name.
pub const NUMBER: &str = "{n}";

impl Grouping {
    /// The grouping `--exact-names`, `--operators` and `--group-by` ask
    /// for (a field first, then operators).
    pub fn new(exact: bool, operators: bool, group_by: Option<&str>) -> Grouping {
        match (exact, operators, group_by) {
            (_, _, Some(field)) => Grouping::Field(field.to_string()),
            (_, true, None) => Grouping::Operator,
            (true, false, None) => Grouping::Exact,
            (false, false, None) => Grouping::Numbers,
        }
    }

    /// How the HTML page keys its colors (`keyOf` in `timeline.html`):
    /// `numbers`, `op` or `exact` (a payload field's groups are by name).
    pub fn label(&self) -> &'static str {
        match self {
            Grouping::Numbers => "numbers",
            Grouping::Operator => "op",
            Grouping::Exact | Grouping::Field(_) => "exact",
        }
    }

    /// The name of the group of a range named `name` (its decoded payload
    /// fields `fields`).
    pub fn name<'a>(
        &self,
        name: &'a str,
        fields: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Cow<'a, str> {
        match self {
            Grouping::Numbers => numbers_as_n(name),
            Grouping::Exact => Cow::Borrowed(name),
            Grouping::Operator => {
                let op = name.split(',').next().unwrap_or(name).trim();
                match numbers_as_n(op) {
                    Cow::Borrowed(_) => Cow::Borrowed(op),
                    Cow::Owned(grouped) => Cow::Owned(grouped),
                }
            }
            Grouping::Field(field) => match fields.and_then(|f| f.get(field)) {
                None => Cow::Borrowed(name),
                Some(serde_json::Value::String(s)) => Cow::Owned(format!("{name} [{field}={s}]")),
                Some(v) => Cow::Owned(format!("{name} [{field}={v}]")),
            },
        }
    }
}

/// `name` with every number that stands alone (not part of a word such as
/// `conv2d` or `fc1`) as `{n}`: decimal (`12`, `0.5`) or hexadecimal
/// (`0x7f3a`).
pub fn numbers_as_n(name: &str) -> Cow<'_, str> {
    let b = name.as_bytes();
    let word = |i: usize| b.get(i).is_some_and(|c| c.is_ascii_alphanumeric());
    // After a letter or digit, or a dot after one (`v1.2.3`): part of a word.
    let joined = |i: usize| i > 0 && (word(i - 1) || (b[i - 1] == b'.' && i > 1 && word(i - 2)));
    let mut out = String::new();
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if !b[i].is_ascii_digit() || joined(i) {
            i += 1;
            continue;
        }
        let hex = b[i] == b'0'
            && matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit());
        let mut end = i;
        if hex {
            end += 2;
            while b.get(end).is_some_and(|c| c.is_ascii_hexdigit()) {
                end += 1;
            }
        } else {
            while b.get(end).is_some_and(|c| c.is_ascii_digit()) {
                end += 1;
            }
            if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(|c| c.is_ascii_digit()) {
                end += 1;
                while b.get(end).is_some_and(|c| c.is_ascii_digit()) {
                    end += 1;
                }
            }
        }
        if word(end) {
            // `12ms`, `3rd`: part of a word.
            i = end;
            continue;
        }
        out.push_str(&name[copied..i]);
        out.push_str(NUMBER);
        (i, copied) = (end, end);
    }
    if copied == 0 {
        return Cow::Borrowed(name);
    }
    out.push_str(&name[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_that_stand_alone_become_n() {
        // The examples `timeline.html`'s `groupOf` is checked against too.
        let examples: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../../tests/name_groups.json")).unwrap();
        for e in examples {
            let (name, group) = (e["name"].as_str().unwrap(), e["group"].as_str().unwrap());
            assert_eq!(numbers_as_n(name), group, "{name}");
        }
        assert!(matches!(numbers_as_n("forward"), Cow::Borrowed(_)));
    }

    #[test]
    fn each_grouping() {
        let torch = "aten::linear, seq = 11450, op_id = 322562";
        assert_eq!(
            Grouping::new(false, true, None).name(torch, None),
            "aten::linear"
        );
        assert_eq!(
            Grouping::new(false, true, None).name("step 3", None),
            "step {n}"
        );
        assert_eq!(Grouping::new(true, false, None).name(torch, None), torch);
        let fields: serde_json::Map<_, _> =
            serde_json::from_str(r#"{"bytes": 1024, "kind": "all"}"#).unwrap();
        assert_eq!(
            Grouping::new(false, false, Some("bytes")).name("send", Some(&fields)),
            "send [bytes=1024]"
        );
        assert_eq!(
            Grouping::new(false, false, Some("kind")).name("send", Some(&fields)),
            "send [kind=all]"
        );
        assert_eq!(
            Grouping::new(false, false, Some("other")).name("send 3", Some(&fields)),
            "send 3"
        );
    }
}
