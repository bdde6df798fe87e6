//! The NVTX tables of Nsight Systems' SQLite export (`nsys export --type
//! sqlite`), so that SQL written against such an export runs unchanged.
//!
//! Matched against the SQLite schema reference of the Nsight Systems User
//! Guide (the 2024–2025 releases: `NVTX_EVENTS` with 19 columns, ending in
//! `jsonTextId`, `jsonText`). Written: `StringIds`, `ThreadNames`,
//! `PROCESSES`, `TARGET_INFO_SESSION_START_TIME`, `NVTX_EVENTS` and the NVTX
//! rows of `ENUM_NSYS_EVENT_TYPE`, with their names, columns and types, and
//! the CUDA tables of a recording with GPU activity (see `gpu`);
//! nothing of NVIDIA's tables is changed or added to. What nvtxr knows
//! besides goes in a table of its own, `NVTXR_PROCESSES` (rank, world size,
//! host, command line, recording).
//!
//! - Times are ns from the start of the session (the trace's first event).
//! - `globalTid` is serialized as Nsight serializes it: the pid in bits
//!   24–47, the tid in bits 0–23; the recording (rank) of a merged report in
//!   bits 48–55, where Nsight keeps its hardware id. `globalPid` is the same
//!   with the tid left 0.
//! - Event types: 33 category name, 34 mark, 59 push/pop range, 60
//!   start/end range, 75 domain creation (its name in `text`). Messages are
//!   `StringIds` (`textId`), domains numbered per process (`domainId`, 0 the
//!   default domain). Payloads go in the column of their type (a 32-bit
//!   payload in the 64-bit column of its kind); extended payloads, decoded,
//!   in `jsonText` as a JSON object (`json_extract(jsonText, '$.bytes')`).

mod gpu;

use crate::model::{
    Details, Filter, GpuEvent, Launch, Mark, Payload, Process, Range, Scan, Sink, Style, Thread,
};
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use std::collections::HashMap;

const SCHEMA: &str = "
CREATE TABLE StringIds (
    id          INTEGER   NOT NULL   PRIMARY KEY,
    value       TEXT      NOT NULL
);
CREATE TABLE ThreadNames (
    nameId      INTEGER   NOT NULL,
    priority    INTEGER,
    globalTid   INTEGER
);
CREATE TABLE PROCESSES (
    globalPid   INTEGER,
    pid         INTEGER,
    name        TEXT
);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs  INTEGER,
    utcTime     TEXT,
    localTime   TEXT
);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    id          INTEGER   NOT NULL   PRIMARY KEY,
    name        TEXT,
    label       TEXT
);
CREATE TABLE NVTX_EVENTS (
    start       INTEGER   NOT NULL,
    end         INTEGER,
    eventType   INTEGER   NOT NULL,
    rangeId     INTEGER,
    category    INTEGER,
    color       INTEGER,
    text        TEXT,
    globalTid   INTEGER,
    endGlobalTid INTEGER,
    textId      INTEGER,
    domainId    INTEGER,
    uint64Value INTEGER,
    int64Value  INTEGER,
    doubleValue REAL,
    uint32Value INTEGER,
    int32Value  INTEGER,
    floatValue  REAL,
    jsonTextId  INTEGER,
    jsonText    TEXT
);
CREATE TABLE NVTXR_PROCESSES (
    globalPid   INTEGER,
    rank        INTEGER,
    worldSize   INTEGER,
    host        TEXT,
    command     TEXT,
    recording   INTEGER
);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES
    (33, 'NVTX_CATEGORY', 'NVTX Category'),
    (34, 'NVTX_MARK', 'NVTX Mark'),
    (39, 'NVTX_THREAD', 'NVTX Thread'),
    (59, 'NVTX_PUSHPOP_RANGE', 'NVTX PushPop Range'),
    (60, 'NVTX_STARTEND_RANGE', 'NVTX StartEnd Range'),
    (75, 'NVTX_DOMAIN_CREATE', 'NVTX Domain Create');
";

const CATEGORY: i64 = 33;
const MARK: i64 = 34;
const PUSH_POP: i64 = 59;
const START_END: i64 = 60;
const DOMAIN_CREATE: i64 = 75;

/// `globalPid` as Nsight serializes it (see the module's notes).
fn global_pid(p: &Process) -> i64 {
    ((p.recording as i64 & 0xFF) << 48) | ((i64::from(p.pid) & 0xFF_FFFF) << 24)
}

fn global_tid(p: &Process, tid: u32) -> i64 {
    global_pid(p) | (i64::from(tid) & 0xFF_FFFF)
}

/// Writes the export of what `filter` keeps to `out`: built in a temporary
/// file (SQLite writes files, not streams), then copied; returns the number
/// of events, and writes nothing when there are none.
pub fn write(scan: &Scan, filter: &Filter, out: &mut dyn std::io::Write) -> std::io::Result<usize> {
    let file = tempfile::NamedTempFile::new()?;
    let mut db = Connection::open(file.path()).map_err(io)?;
    db.execute_batch(SETUP).map_err(io)?;
    let mut export = Writer::new(&mut db, scan).map_err(io)?;
    let events = scan.replay(filter, &mut export)?;
    if events == 0 {
        return Ok(0);
    }
    export.finish().map_err(io)?;
    db.close().map_err(|(_, e)| io(e))?;
    std::io::copy(&mut file.reopen()?, out)?;
    Ok(events)
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
                tx.prepare_cached("INSERT INTO StringIds VALUES (?1, ?2)")?
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

/// Writes the export into a database being built.
struct Writer<'a> {
    tx: Transaction<'a>,
    origin: u64,
    strings: StringIds,
    /// Per process key: domain name -> domainId.
    domains: HashMap<(u64, String), i64>,
    /// Categories named so far, by (process, domainId, id).
    categories: std::collections::HashSet<(u64, i64, u32)>,
    /// GPUs in `TARGET_INFO_GPU`, by (globalPid, device).
    gpus: std::collections::HashSet<(i64, u32)>,
}

impl<'a> Writer<'a> {
    /// Creates the tables in `db` (empty) and the session's start.
    fn new(db: &'a mut Connection, scan: &Scan) -> rusqlite::Result<Self> {
        let tx = db.transaction()?;
        tx.execute_batch(SCHEMA)?;
        tx.execute_batch(gpu::SCHEMA)?;
        tx.execute(
            "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?1, NULL, NULL)",
            params![scan.session_start_utc().map(|ns| ns as i64)],
        )?;
        Ok(Writer {
            tx,
            origin: scan.origin,
            strings: StringIds::new(StringIds::CACHED),
            domains: HashMap::new(),
            categories: Default::default(),
            gpus: Default::default(),
        })
    }

    /// Commits the export.
    fn finish(self) -> rusqlite::Result<()> {
        self.tx.commit()
    }

    fn string(&mut self, text: &str) -> rusqlite::Result<i64> {
        self.strings.id(&self.tx, text)
    }

    fn time(&self, t: u64) -> i64 {
        t.saturating_sub(self.origin) as i64
    }

    /// The domain's id in its process, creating it (an event of type 75)
    /// the first time; 0 for the default domain.
    fn domain(&mut self, p: &Process, tid: u32, name: &str, at: u64) -> rusqlite::Result<i64> {
        if name.is_empty() {
            return Ok(0);
        }
        let key = (p.key, name.to_string());
        if let Some(&id) = self.domains.get(&key) {
            return Ok(id);
        }
        let id = self.domains.keys().filter(|(k, _)| *k == p.key).count() as i64 + 1;
        self.domains.insert(key, id);
        self.tx
            .prepare_cached(
                "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![self.time(at), DOMAIN_CREATE, name, global_tid(p, tid), id])?;
        Ok(id)
    }

    /// One range or mark.
    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        p: &Process,
        kind: i64,
        d: &Details,
        (start, end): (u64, Option<u64>),
        (tid, end_tid): (u32, Option<u32>),
        range_id: Option<u64>,
    ) -> rusqlite::Result<()> {
        let domain = self.domain(p, tid, &d.domain, start)?;
        let category = match &d.category {
            Some((id, name)) => {
                if let Some(name) = name {
                    if self.categories.insert((p.key, domain, *id)) {
                        self.tx
                            .prepare_cached(
                                "INSERT INTO NVTX_EVENTS (start, eventType, category, text, globalTid, domainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            )?
                            .execute(params![
                                self.time(start),
                                CATEGORY,
                                id,
                                name,
                                global_tid(p, tid),
                                domain
                            ])?;
                    }
                }
                Some(*id)
            }
            None => None,
        };
        let text_id = self.string(&d.name)?;
        let (u, i, f) = match d.payload {
            Some(Payload::U64(v)) => (Some(v as i64), None, None),
            Some(Payload::I64(v)) => (None, Some(v), None),
            Some(Payload::F64(v)) => (None, None, Some(v)),
            None => (None, None, None),
        };
        let end = end.map(|e| self.time(e));
        self.tx
            .prepare_cached(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, globalTid, endGlobalTid, textId, domainId, uint64Value, int64Value, doubleValue, jsonText)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?
            .execute(params![
                self.time(start),
                end,
                kind,
                range_id.map(|r| r as i64),
                category,
                d.color.map(i64::from),
                global_tid(p, tid),
                end_tid.map(|t| global_tid(p, t)),
                text_id,
                domain,
                u,
                i,
                f,
                d.fields
                    .as_deref()
                    .map(|fields| serde_json::to_string(fields).unwrap_or_default())
            ])?;
        Ok(())
    }
}

fn io(e: rusqlite::Error) -> std::io::Error {
    std::io::Error::other(e)
}

impl Sink for Writer<'_> {
    fn thread_start(&mut self, p: &Process, t: &Thread) -> std::io::Result<()> {
        if let Some(name) = &t.name {
            let id = self.string(name).map_err(io)?;
            self.tx
                .prepare_cached("INSERT INTO ThreadNames VALUES (?1, NULL, ?2)")
                .and_then(|mut s| s.execute(params![id, global_tid(p, t.tid)]))
                .map_err(io)?;
        }
        Ok(())
    }

    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        let (kind, range_id, end_tid) = match r.style {
            Style::PushPop => (PUSH_POP, None, None),
            Style::StartEnd => (START_END, Some(r.id), Some(r.end_tid)),
        };
        self.event(
            p,
            kind,
            &r.details,
            (r.start, Some(r.end)),
            (r.tid, end_tid),
            range_id,
        )
        .map_err(io)
    }

    fn mark(&mut self, p: &Process, m: &Mark) -> std::io::Result<()> {
        self.event(p, MARK, &m.details, (m.time, None), (m.tid, None), None)
            .map_err(io)
    }

    fn launch(&mut self, p: &Process, l: &Launch) -> std::io::Result<()> {
        self.launch_row(p, l)
    }

    fn gpu(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        self.gpu_row(p, g)
    }

    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        let gpid = global_pid(p);
        self.tx
            .prepare_cached("INSERT INTO PROCESSES VALUES (?1, ?2, ?3)")
            .and_then(|mut s| s.execute(params![gpid, p.pid, p.label()]))
            .and_then(|_| {
                self.tx
                    .prepare_cached("INSERT INTO NVTXR_PROCESSES VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
                    .execute(params![
                        gpid,
                        p.rank,
                        p.world,
                        p.host,
                        p.command,
                        p.recording as i64
                    ])
            })
            .map(drop)
            .map_err(io)
    }
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
