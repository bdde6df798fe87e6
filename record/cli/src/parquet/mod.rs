//! Nsight's tables (see [`crate::nsight`]) as Parquet, laid out for engines
//! that read a folder of files per table (DuckDB, Dask, pyarrow):
//! `DIR/<TABLE>/<part>.parquet`, one part per `nvtxr report` (per rank under
//! `nvtxr record --parquet` in a parallel job), each table with two more
//! columns, `rank` and `host` (unless it has its own: `NVTXR_PROCESSES`),
//! so a query across the job needs no join to tell ranks apart.
//!
//! - A part is named `rank-NNNNN` when every process of the recording is the
//!   same rank, else `<host>-<pid>` of its first process.
//! - Messages are in `text` (Nsight's other way; `textId` is NULL): names
//!   repeat, and Parquet's dictionaries store each once per row group.
//! - Rows are written in row groups of [`ROW_GROUP`]: memory stays bounded
//!   at any size. Integers are delta bit-packed, texts dictionary-encoded,
//!   all of it compressed with Snappy.
//! - Every file is written under a hidden temporary name and renamed into
//!   place once all are complete: a stopped or failed export leaves none.

use crate::model::{Filter, Process, Scan, Sink};
use crate::nsight::export::{Exporter, Store};
use crate::nsight::{Table, Type, Value, STRING_IDS, TABLES};
use hashbrown::HashMap;
use parquet::basic::{Compression, Encoding, LogicalType, Repetition};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type as Schema};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod column;
use column::Column;

/// Rows per row group. A group is held in memory, column by column, until
/// it is written, and memory the kernel provides fresh (zeroed, in huge
/// pages) costs a rank's report more than it saves: 1 << 14 rows add 3 MB
/// to a 4x10^5-event rank's report where 1 << 16 added 17 MB, and the
/// Parquet part went from 9.05e6 to 1.05e7 events per CPU-s, for 4% more
/// bytes (docs/scale.md).
const ROW_GROUP: usize = 1 << 14;
/// Rows after which a table's columns make room for a whole row group.
const GROWN: usize = 1 << 10;
/// The columns with min and max per row group: times, ranks, processes and
/// threads, the ones engines skip row groups by.
const FILTERED: [&str; 5] = ["start", "end", RANK, "globalPid", "globalTid"];
/// The columns every table gets besides Nsight's.
const RANK: &str = "rank";
const HOST: &str = "host";

/// Writes the tables of what `filter` keeps under `dir` (created if need
/// be); returns the number of events, and leaves nothing when there are none.
pub fn write(scan: &Scan, filter: &Filter, dir: &Path) -> std::io::Result<usize> {
    let mut tables = Tables::create(scan, dir)?;
    let replayed = tables
        .exporter(scan)
        .and_then(|mut export| scan.replay(filter, &mut export));
    tables.finish(replayed)
}

/// One part's tables being written under a directory: fed by a replay
/// (alone, as [`write`] does, or beside a trace through
/// [`Tee`](crate::model::Tee)), then finished.
pub struct Tables {
    parts: Parts,
}

impl Tables {
    /// Creates the tables' files, under hidden temporary names.
    pub fn create(scan: &Scan, dir: &Path) -> std::io::Result<Tables> {
        let part = part_name(&scan.processes);
        let mut tables: Vec<TableFile> = Vec::new();
        for table in TABLES {
            let folder = dir.join(table.name);
            std::fs::create_dir_all(&folder)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", folder.display())))?;
            let path = folder.join(format!("{part}.parquet"));
            let temporary = folder.join(format!(".{part}.parquet.{}.tmp", std::process::id()));
            let file = TableFile::create(table, temporary, path);
            if file.is_err() {
                for t in &tables {
                    let _ = std::fs::remove_file(&t.temporary);
                }
            }
            tables.push(file?);
        }
        Ok(Tables {
            parts: Parts {
                tables,
                strings: HashMap::new(),
            },
        })
    }

    /// The sink a replay feeds; the session's rows are written now.
    pub fn exporter(&mut self, scan: &Scan) -> std::io::Result<impl Sink + '_> {
        Exporter::new(&mut self.parts, scan)
    }

    /// Completes the files and puts them in place when `replayed` (the
    /// replay's count of events) is a success with events; else removes
    /// them. Returns `replayed`, or the error that kept the files out.
    pub fn finish(mut self, replayed: std::io::Result<usize>) -> std::io::Result<usize> {
        let written = replayed.and_then(|events| {
            if events > 0 {
                for t in &mut self.parts.tables {
                    t.finish().map_err(|e| t.failed(e))?;
                }
            }
            Ok(events)
        });
        for t in self.parts.tables {
            match written {
                Ok(events) if events > 0 => std::fs::rename(&t.temporary, &t.path)?,
                _ => {
                    let _ = std::fs::remove_file(&t.temporary);
                }
            }
        }
        written
    }
}

/// The part's file name (see the module's notes).
fn part_name(processes: &[Process]) -> String {
    let ranks: Vec<_> = processes.iter().map(|p| p.rank).collect();
    match (ranks.first(), processes.first()) {
        (Some(Some(rank)), _) if ranks.iter().all(|r| *r == Some(*rank)) => {
            format!("rank-{rank:05}")
        }
        (_, Some(p)) => format!("{}-{}", p.host, p.pid),
        _ => "empty".into(),
    }
}

/// One table's Parquet file being written.
struct TableFile {
    table: &'static Table,
    /// Whether `rank` and `host` are added (tables that have none of their own).
    extra: bool,
    writer: Option<SerializedFileWriter<File>>,
    columns: Vec<Column>,
    rows: usize,
    temporary: PathBuf,
    path: PathBuf,
}

impl TableFile {
    fn create(table: &'static Table, temporary: PathBuf, path: PathBuf) -> std::io::Result<Self> {
        let extra = !table
            .columns
            .iter()
            .any(|c| c.name == RANK || c.name == HOST);
        let added = [(RANK, Type::Int, false), (HOST, Type::Text, false)];
        let types = table
            .columns
            .iter()
            .map(|c| (c.name, c.ty, c.required))
            .chain(added.into_iter().filter(|_| extra));
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        let mut properties = WriterProperties::builder()
            // Snappy: every engine reads it, and it has no compressor to set
            // up per page (zstd zeroed about 60,000 instructions of tables per
            // page: a third of a small rank's Parquet part), for about 12%
            // more bytes.
            .set_compression(Compression::SNAPPY)
            // Min and max per row group (engines skip groups by them), not
            // per page, and only where queries filter on ranges of values
            // (see `FILTERED`): elsewhere they cost a comparison and a level
            // histogram per value and skip nothing.
            .set_statistics_enabled(EnabledStatistics::None)
            .set_max_row_group_size(ROW_GROUP);
        for (name, ty, required) in types {
            let physical = match ty {
                Type::Int => parquet::basic::Type::INT64,
                Type::Real => parquet::basic::Type::DOUBLE,
                Type::Text => parquet::basic::Type::BYTE_ARRAY,
            };
            let repetition = if required {
                Repetition::REQUIRED
            } else {
                Repetition::OPTIONAL
            };
            let field = Schema::primitive_type_builder(name, physical)
                .with_repetition(repetition)
                .with_logical_type((ty == Type::Text).then_some(LogicalType::String))
                .build()
                .map_err(std::io::Error::other)?;
            fields.push(Arc::new(field));
            if FILTERED.contains(&name) {
                properties = properties.set_column_statistics_enabled(
                    ColumnPath::from(name),
                    EnabledStatistics::Chunk,
                );
            }
            if ty == Type::Int {
                // Times (near-sorted, all different), ids, threads and kinds
                // (long runs): deltas bit-packed, no dictionary to look each
                // value up in (58 instructions an event less than a
                // dictionary, and smaller files).
                let path = ColumnPath::from(name);
                properties = properties
                    .set_column_dictionary_enabled(path.clone(), false)
                    .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
            }
            columns.push(Column::new(ty, required));
        }
        let schema = Schema::group_type_builder(table.name)
            .with_fields(fields)
            .build()
            .map_err(std::io::Error::other)?;
        let file = File::create(&temporary)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", temporary.display())))?;
        let writer =
            SerializedFileWriter::new(file, Arc::new(schema), Arc::new(properties.build()))
                .map_err(std::io::Error::other)?;
        Ok(TableFile {
            table,
            extra,
            writer: Some(writer),
            columns,
            rows: 0,
            temporary,
            path,
        })
    }

    fn push(
        &mut self,
        values: &[Value],
        rank: Option<i64>,
        host: Option<&str>,
    ) -> std::io::Result<()> {
        // A NULL costs nothing here: a column's levels are written when it
        // next has a value, or at the flush (most of a range's 21 columns
        // are NULL).
        let (columns, extra) = self.columns.split_at_mut(values.len());
        for (column, value) in columns.iter_mut().zip(values) {
            column.push(value, self.rows, self.table);
        }
        if self.extra {
            let [rank_column, host_column] = extra else {
                unreachable!("{}: rank and host added", self.table.name)
            };
            rank_column.push(&Value::Int(rank), self.rows, self.table);
            host_column.push(&Value::Text(host), self.rows, self.table);
        }
        self.rows += 1;
        if self.rows == ROW_GROUP {
            self.flush()?;
        } else if self.rows == GROWN {
            // A big table: room for the whole group at once, rather than
            // copying every column as it doubles up to it.
            for column in &mut self.columns {
                column.reserve(ROW_GROUP - GROWN);
            }
        }
        Ok(())
    }

    /// Writes the buffered rows as a row group.
    fn flush(&mut self) -> std::io::Result<()> {
        let writer = self.writer.as_mut().expect("open until finished");
        let mut group = writer.next_row_group().map_err(std::io::Error::other)?;
        for column in &mut self.columns {
            let out = group
                .next_column()
                .map_err(std::io::Error::other)?
                .expect("a writer per column");
            column.write(out, self.rows)?;
        }
        group.close().map_err(std::io::Error::other)?;
        self.rows = 0;
        Ok(())
    }

    /// `e`, naming the file it happened to (a trace's replay that feeds
    /// the tables too reports it as the trace's).
    fn failed(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("{}: {e}", self.path.display()))
    }

    /// Writes the last rows and the footer.
    fn finish(&mut self) -> std::io::Result<()> {
        if self.rows > 0 {
            self.flush()?;
        }
        let writer = self.writer.take().expect("finished once");
        writer.close().map_err(std::io::Error::other)?;
        Ok(())
    }
}

/// Every table's file, and the `StringIds` ids given so far (GPU kernels'
/// and APIs' names, thread names: few).
struct Parts {
    tables: Vec<TableFile>,
    strings: HashMap<String, i64>,
}

impl Store for &mut Parts {
    fn row(
        &mut self,
        p: Option<&Process>,
        table: &'static Table,
        values: &[Value],
    ) -> std::io::Result<()> {
        let file = self
            .tables
            .iter_mut()
            .find(|t| std::ptr::eq(t.table, table))
            .expect("a file per table");
        file.push(
            values,
            p.and_then(|p| p.rank).map(i64::from),
            p.map(|p| p.host.as_str()),
        )
        .map_err(|e| file.failed(e))
    }

    fn string_id(&mut self, p: &Process, text: &str) -> std::io::Result<i64> {
        if let Some(&id) = self.strings.get(text) {
            return Ok(id);
        }
        let id = self.strings.len() as i64 + 1;
        self.strings.insert(text.to_string(), id);
        self.row(Some(p), &STRING_IDS, &[Value::int(id), Value::text(text)])?;
        Ok(id)
    }

    fn message<'t>(
        &mut self,
        _: &Process,
        text: &'t str,
    ) -> std::io::Result<(Option<&'t str>, Option<i64>)> {
        Ok((Some(text), None))
    }
}

#[cfg(test)]
mod tests {
    use super::{TableFile, ROW_GROUP};
    use crate::nsight::{Value, PROCESSES};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    /// A row's name and host: they change at other positions in each row
    /// group, and are NULL at some.
    fn texts(row: usize) -> (Option<String>, Option<&'static str>) {
        let name = (row % 5 != 3).then(|| format!("name {}", (row / 3) % 7));
        let host = match row % 11 {
            0 => None,
            1 | 2 => Some("other"),
            _ => Some("host"),
        };
        (name, host)
    }

    #[test]
    fn texts_read_back_across_row_groups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("PROCESSES.parquet");
        let mut file = TableFile::create(&PROCESSES, path.clone(), path.clone()).unwrap();
        let rows = 2 * ROW_GROUP + 100;
        for row in 0..rows {
            let (name, host) = texts(row);
            let values = [
                Value::int(row as i64),
                Value::Int(None),
                Value::Text(name.as_deref()),
            ];
            file.push(&values, Some(1), host).unwrap();
        }
        file.finish().unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 3);
        let text = |field: &Field| match field {
            Field::Str(s) => Some(s.clone()),
            Field::Null => None,
            other => panic!("{other:?}"),
        };
        let mut read = 0;
        for (row, record) in reader.get_row_iter(None).unwrap().enumerate() {
            let record = record.unwrap();
            let columns: Vec<_> = record.get_column_iter().map(|(_, f)| f).collect();
            let (name, host) = texts(row);
            assert_eq!(columns[0], &Field::Long(row as i64));
            assert_eq!(text(columns[2]), name, "row {row}");
            assert_eq!(text(columns[4]).as_deref(), host, "row {row}");
            read += 1;
        }
        assert_eq!(read, rows);
    }
}
