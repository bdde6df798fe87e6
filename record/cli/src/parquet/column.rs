//! A table's columns of the row group being written: integers, reals and
//! texts, with their NULLs.

use crate::nsight::{Table, Type, Value};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::writer::SerializedColumnWriter;

/// A column's values of the current row group.
enum Values {
    Int(Vec<i64>),
    Real(Vec<f64>),
    Text(Texts),
}

/// A text column's values of the current row group. A value is a shared
/// `ByteArray`, and each clone and drop of one is an atomic count (7% of a
/// rank's Parquet time, docs/scale.md), so a value that repeats (a
/// name, the host) is one array cloned, and the column keeps the group
/// before's values: a row that holds what its position held then (the
/// host, a loop's ranges) is only compared.
#[derive(Default)]
struct Texts {
    /// The group's values up to `len`, the group before's after it.
    values: Vec<ByteArray>,
    len: usize,
    /// The values seen lately, each once.
    seen: hashbrown::HashMap<Box<str>, ByteArray>,
    /// The last value given (most rows repeat the row before's), found
    /// without hashing.
    last: Option<ByteArray>,
}

impl Texts {
    /// Distinct values kept (then forgotten, to start again).
    const KEPT: usize = 4096;

    fn push(&mut self, text: &str) {
        match self.values.get(self.len) {
            Some(held) if held.data() == text.as_bytes() => {}
            Some(_) => self.values[self.len] = self.shared(text),
            None => {
                let b = self.shared(text);
                self.values.push(b);
            }
        }
        self.len += 1;
    }

    /// The group's values.
    fn group(&self) -> &[ByteArray] {
        &self.values[..self.len]
    }

    /// `text`'s array, shared with the other rows that hold it.
    fn shared(&mut self, text: &str) -> ByteArray {
        if let Some(last) = self.last.as_ref().filter(|b| b.data() == text.as_bytes()) {
            return last.clone();
        }
        let b = match self.seen.get(text) {
            Some(b) => b.clone(),
            None => {
                if self.seen.len() >= Self::KEPT {
                    self.seen.clear();
                }
                let b = ByteArray::from(text.as_bytes().to_vec());
                self.seen.insert(text.into(), b.clone());
                b
            }
        };
        self.last = Some(b.clone());
        b
    }
}

/// One column of a table being written.
pub(super) struct Column {
    values: Values,
    /// When the column may be NULL: each row's level up to its last value
    /// (the rows after it are NULL).
    levels: Option<Vec<i16>>,
}

impl Column {
    /// An empty column of type `ty` (NULL allowed unless `required`).
    pub(super) fn new(ty: Type, required: bool) -> Column {
        Column {
            values: match ty {
                Type::Int => Values::Int(Vec::new()),
                Type::Real => Values::Real(Vec::new()),
                Type::Text => Values::Text(Texts::default()),
            },
            levels: (!required).then(Vec::new),
        }
    }

    /// Adds `value` as row `row`.
    #[inline(always)]
    pub(super) fn push(&mut self, value: &Value, row: usize, table: &Table) {
        match (&mut self.values, value) {
            (_, Value::Int(None) | Value::Real(None) | Value::Text(None)) => return,
            (Values::Int(v), Value::Int(Some(x))) => v.push(*x),
            (Values::Real(v), Value::Real(Some(x))) => v.push(*x),
            (Values::Text(t), Value::Text(Some(x))) => t.push(x),
            _ => unreachable!("{}: a value of another type than its column's", table.name),
        }
        if let Some(levels) = &mut self.levels {
            levels.resize(row, 0);
            levels.push(1);
        }
    }

    /// Makes room for `more` rows.
    pub(super) fn reserve(&mut self, more: usize) {
        match &mut self.values {
            Values::Int(v) => v.reserve_exact(more),
            Values::Real(v) => v.reserve_exact(more),
            Values::Text(t) => t
                .values
                .reserve_exact((t.len + more).saturating_sub(t.values.len())),
        }
        if let Some(levels) = &mut self.levels {
            levels.reserve_exact(more);
        }
    }

    /// Writes the group's `rows` rows to `out`, and empties the column for
    /// the next group.
    pub(super) fn write(
        &mut self,
        mut out: SerializedColumnWriter,
        rows: usize,
    ) -> std::io::Result<()> {
        let levels = self.levels.as_mut().map(|levels| {
            levels.resize(rows, 0);
            levels.as_slice()
        });
        match &mut self.values {
            Values::Int(v) => out.typed::<Int64Type>().write_batch(v, levels, None),
            Values::Real(v) => out.typed::<DoubleType>().write_batch(v, levels, None),
            Values::Text(t) => out
                .typed::<ByteArrayType>()
                .write_batch(t.group(), levels, None),
        }
        .map_err(std::io::Error::other)?;
        out.close().map_err(std::io::Error::other)?;
        match &mut self.values {
            Values::Int(v) => v.clear(),
            Values::Real(v) => v.clear(),
            Values::Text(t) => t.len = 0,
        }
        if let Some(levels) = &mut self.levels {
            levels.clear();
        }
        Ok(())
    }
}
