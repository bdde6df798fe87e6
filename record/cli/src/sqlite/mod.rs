//! Nsight Systems' SQLite export (`nsys export --type sqlite`): the tables
//! of [`crate::nsight`] in a SQLite database, so that SQL written against
//! such an export runs unchanged. Messages are `StringIds` (`textId`).

use crate::model::{Filter, Process, Scan};
use crate::nsight::export::{Exporter, Store};
use crate::nsight::{Table, Type, Value, STRING_IDS, TABLES};
use hashbrown::HashMap;
use rusqlite::types::{ToSqlOutput, Value as SqlValue};
use rusqlite::{params, Connection, OptionalExtension, ToSql, Transaction};

/// Writes the export of what `filter` keeps to `out`: built in a temporary
/// file (SQLite writes files, not streams), then copied; returns the number
/// of events, and writes nothing when there are none.
pub fn write(scan: &Scan, filter: &Filter, out: &mut dyn std::io::Write) -> std::io::Result<usize> {
    let file = tempfile::NamedTempFile::new()?;
    let mut db = Connection::open(file.path()).map_err(io)?;
    db.execute_batch(SETUP).map_err(io)?;
    let tx = db.transaction().map_err(io)?;
    tx.execute_batch(&schema()).map_err(io)?;
    let store = Db {
        tx,
        strings: StringIds::new(StringIds::CACHED),
        inserts: HashMap::new(),
    };
    let mut export = Exporter::new(store, scan)?;
    let events = scan.replay(filter, &mut export)?;
    if events == 0 {
        return Ok(0);
    }
    export.into_store().tx.commit().map_err(io)?;
    db.close().map_err(|(_, e)| io(e))?;
    std::io::copy(&mut file.reopen()?, out)?;
    Ok(events)
}

/// `CREATE TABLE` for every table.
fn schema() -> String {
    let mut sql = String::new();
    for table in TABLES {
        let columns: Vec<String> = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = match c.ty {
                    Type::Int => "INTEGER",
                    Type::Real => "REAL",
                    Type::Text => "TEXT",
                };
                let not_null = if c.required { " NOT NULL" } else { "" };
                let key = if table.keyed && i == 0 {
                    " PRIMARY KEY"
                } else {
                    ""
                };
                format!("    {} {ty}{not_null}{key}", c.name)
            })
            .collect();
        sql += &format!(
            "CREATE TABLE {} (\n{}\n);\n",
            table.name,
            columns.join(",\n")
        );
    }
    sql
}

/// `StringIds`: each distinct text once, in order of first use. The ids of
/// the latest ones are kept in memory (at most `limit`), every one's in the
/// temporary table `string_ids` (on disk): memory stays bounded however many
/// distinct names a trace has ("step N" for every N).
struct StringIds {
    cached: HashMap<String, i64>,
    limit: usize,
    count: i64,
}

impl StringIds {
    const CACHED: usize = 1 << 18;

    fn new(limit: usize) -> StringIds {
        StringIds {
            cached: HashMap::new(),
            limit,
            count: 0,
        }
    }

    /// The id of `text`, added the first time.
    fn id(&mut self, tx: &Transaction, text: &str) -> rusqlite::Result<i64> {
        if let Some(&id) = self.cached.get(text) {
            return Ok(id);
        }
        let known: Option<i64> = tx
            .prepare_cached("SELECT id FROM temp.string_ids WHERE value = ?1")?
            .query_row(params![text], |row| row.get(0))
            .optional()?;
        let id = match known {
            Some(id) => id,
            None => {
                self.count += 1;
                let insert = format!("INSERT INTO {} VALUES (?1, ?2)", STRING_IDS.name);
                tx.prepare_cached(&insert)?
                    .execute(params![self.count, text])?;
                tx.prepare_cached("INSERT INTO temp.string_ids VALUES (?1, ?2)")?
                    .execute(params![text, self.count])?;
                self.count
            }
        };
        if self.cached.len() >= self.limit {
            self.cached.clear();
        }
        self.cached.insert(text.to_string(), id);
        Ok(id)
    }
}

/// The connection's settings and the temporary `string_ids` table.
const SETUP: &str = "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;
     CREATE TEMP TABLE string_ids (value TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;";

/// The database being built.
struct Db<'a> {
    tx: Transaction<'a>,
    strings: StringIds,
    /// Each table's `INSERT` statement.
    inserts: HashMap<&'static str, String>,
}

impl ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Int(v) => ToSqlOutput::Owned(v.map_or(SqlValue::Null, SqlValue::Integer)),
            Value::Real(v) => ToSqlOutput::Owned(v.map_or(SqlValue::Null, SqlValue::Real)),
            Value::Text(Some(t)) => {
                ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(t.as_bytes()))
            }
            Value::Text(None) => ToSqlOutput::Owned(SqlValue::Null),
        })
    }
}

impl Store for Db<'_> {
    fn row(
        &mut self,
        _: Option<&Process>,
        table: &'static Table,
        values: &[Value],
    ) -> std::io::Result<()> {
        let sql = self.inserts.entry(table.name).or_insert_with(|| {
            let marks: Vec<String> = (1..=table.columns.len()).map(|i| format!("?{i}")).collect();
            format!("INSERT INTO {} VALUES ({})", table.name, marks.join(", "))
        });
        self.tx
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(rusqlite::params_from_iter(values)))
            .map(drop)
            .map_err(io)
    }

    fn string_id(&mut self, _: &Process, text: &str) -> std::io::Result<i64> {
        self.strings.id(&self.tx, text).map_err(io)
    }

    fn message<'t>(
        &mut self,
        p: &Process,
        text: &'t str,
    ) -> std::io::Result<(Option<&'t str>, Option<i64>)> {
        Ok((None, Some(self.string_id(p, text)?)))
    }
}

fn io(e: rusqlite::Error) -> std::io::Error {
    std::io::Error::other(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_ids_past_the_cache_are_found_on_disk() {
        let mut db = Connection::open_in_memory().unwrap();
        db.execute_batch(SETUP).unwrap();
        db.execute_batch("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
            .unwrap();
        let tx = db.transaction().unwrap();
        let mut ids = StringIds::new(2);
        let texts = ["a", "b", "c", "a", "d", "b", "a", "e", "c"];
        let got: Vec<i64> = texts.iter().map(|t| ids.id(&tx, t).unwrap()).collect();
        assert_eq!(got, [1, 2, 3, 1, 4, 2, 1, 5, 3]);
        assert!(ids.cached.len() <= 2);
        let rows: i64 = tx
            .query_row("SELECT count(*) FROM StringIds", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 5, "each text once");
    }
}
