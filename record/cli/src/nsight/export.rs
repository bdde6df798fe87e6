//! A recording's rows of Nsight's tables, as a replay gives them: each
//! range, mark, thread name, process, CUDA call and GPU activity becomes
//! rows of [`super`]'s tables, handed to a [`Store`] (SQLite or Parquet).

use super::gpus::Gpus;
use super::{
    global_pid, global_tid, short_name, Table, Value, CATEGORY, DOMAIN_CREATE, ENUMERATIONS,
    EVENT_TYPES, EVENT_TYPE_ROWS, KERNEL, MARK, MEMCPY, MEMSET, NVTXR_PROCESSES, NVTX_EVENTS,
    PROCESSES, PUSH_POP, RUNTIME, RUNTIME_CLASS, SESSION_START, START_END, SYNCHRONIZATION,
    THREAD_NAMES,
};
use crate::model::{
    Details, GpuEvent, Launch, Mark, Payload, Process, Range, Scan, Sink, Style, Thread,
};
use hashbrown::{HashMap, HashSet};
use nvtxr_record_format::cupti::{
    nsight_id, NsightEnum, LAUNCH_TYPES, MEMORY_KINDS, PEER_TO_PEER, SHARED_LIMITS,
};
use nvtxr_record_format::gpu::Tag;
use std::io::Result;

/// Where the rows go.
pub trait Store {
    /// Appends a row to `table`, its values in the table's column order;
    /// `process`: the process the row belongs to (`None`: the session's).
    fn row(
        &mut self,
        process: Option<&Process>,
        table: &'static Table,
        values: &[Value],
    ) -> Result<()>;
    /// The `StringIds` id of `text`, its row added the first time.
    fn string_id(&mut self, process: &Process, text: &str) -> Result<i64>;
    /// An event's message as its `text` and `textId` columns (one of them set).
    fn message<'t>(
        &mut self,
        process: &Process,
        text: &'t str,
    ) -> Result<(Option<&'t str>, Option<i64>)>;
}

/// Turns a replay into rows (a [`Sink`]).
pub struct Exporter<S> {
    store: S,
    origin: u64,
    /// Per process key: domain name -> domainId.
    domains: HashMap<u64, HashMap<String, i64>>,
    /// Categories named so far, by (process, domainId, id).
    categories: HashSet<(u64, i64, u32)>,
    gpus: Gpus,
    /// The current process's ranges still open at its end.
    open_ranges: i64,
}

impl<S: Store> Exporter<S> {
    /// Starts an export: the session's rows (its start, the event types).
    pub fn new(mut store: S, scan: &Scan) -> Result<Self> {
        let start = scan.session_start_utc().map(|ns| ns as i64);
        store.row(
            None,
            &SESSION_START,
            &[Value::Int(start), Value::Text(None), Value::Text(None)],
        )?;
        for (id, name, label) in EVENT_TYPE_ROWS {
            store.row(
                None,
                &EVENT_TYPES,
                &[Value::int(id), Value::text(name), Value::text(label)],
            )?;
        }
        for (table, rows) in &ENUMERATIONS {
            for r in *rows {
                let row = [Value::int(r.id), Value::text(r.name), Value::text(r.label)];
                store.row(None, table, &row)?;
            }
        }
        Ok(Exporter {
            store,
            origin: scan.origin,
            domains: HashMap::new(),
            categories: HashSet::new(),
            gpus: Gpus::default(),
            open_ranges: 0,
        })
    }

    /// The store, once the replay is over.
    pub fn into_store(self) -> S {
        self.store
    }

    fn time(&self, t: u64) -> i64 {
        t.saturating_sub(self.origin) as i64
    }

    /// The domain's id in its process, creating it (an event of type 75)
    /// the first time; 0 for the default domain.
    fn domain(&mut self, p: &Process, tid: u32, name: &str, at: u64) -> Result<i64> {
        if name.is_empty() {
            return Ok(0);
        }
        let domains = self.domains.entry(p.key).or_default();
        if let Some(&id) = domains.get(name) {
            return Ok(id);
        }
        let id = domains.len() as i64 + 1;
        domains.insert(name.to_string(), id);
        let mut row = nvtx_row(self.time(at), DOMAIN_CREATE, global_tid(p, tid));
        row[6] = Value::text(name);
        row[10] = Value::int(id);
        self.store.row(Some(p), &NVTX_EVENTS, &row)?;
        Ok(id)
    }

    /// One range or mark.
    fn event(
        &mut self,
        p: &Process,
        kind: i64,
        d: &Details,
        (start, end): (u64, Option<u64>),
        (tid, end_tid): (u32, Option<u32>),
        range_id: Option<u64>,
    ) -> Result<()> {
        let domain = self.domain(p, tid, &d.domain, start)?;
        let category = d.category.as_ref().map(|(id, _)| i64::from(*id));
        if let Some((id, Some(name))) = &d.category {
            if self.categories.insert((p.key, domain, *id)) {
                let mut row = nvtx_row(self.time(start), CATEGORY, global_tid(p, tid));
                row[4] = Value::Int(category);
                row[6] = Value::text(name);
                row[10] = Value::int(domain);
                self.store.row(Some(p), &NVTX_EVENTS, &row)?;
            }
        }
        let (text, text_id) = self.store.message(p, &d.name)?;
        let (u, i, f) = match d.payload {
            Some(Payload::U64(v)) => (Some(v as i64), None, None),
            Some(Payload::I64(v)) => (None, Some(v), None),
            Some(Payload::F64(v)) => (None, None, Some(v)),
            None => (None, None, None),
        };
        let json = d
            .fields
            .as_deref()
            .map(|fields| serde_json::to_string(fields).unwrap_or_default());
        let mut row = nvtx_row(self.time(start), kind, global_tid(p, tid));
        row[1] = Value::Int(end.map(|e| self.time(e)));
        row[3] = Value::Int(range_id.map(|r| r as i64));
        row[4] = Value::Int(category);
        row[5] = Value::Int(d.color.map(i64::from));
        row[6] = Value::Text(text);
        row[8] = Value::Int(end_tid.map(|t| global_tid(p, t)));
        row[9] = Value::Int(text_id);
        row[10] = Value::int(domain);
        row[11] = Value::Int(u);
        row[12] = Value::Int(i);
        row[13] = Value::Real(f);
        row[18] = Value::Text(json.as_deref());
        self.store.row(Some(p), &NVTX_EVENTS, &row)
    }
}

/// An `NVTX_EVENTS` row with its start, type and thread, the rest NULL (on
/// the stack: a row per event).
fn nvtx_row<'a>(start: i64, kind: i64, global_tid: i64) -> [Value<'a>; NVTX_COLUMNS] {
    let mut row = NVTX_NULLS;
    row[0] = Value::int(start);
    row[2] = Value::int(kind);
    row[7] = Value::int(global_tid);
    row
}

/// `NVTX_EVENTS`' row of NULLs, each of its column's type (copied, not
/// built, per event; its type checks that it has every column).
const NVTX_NULLS: [Value<'static>; NVTX_COLUMNS] = {
    const fn null(i: usize) -> Value<'static> {
        match NVTX_EVENTS.columns[i].ty {
            super::Type::Real => Value::Real(None),
            super::Type::Text => Value::Text(None),
            super::Type::Int => Value::Int(None),
        }
    }
    [
        null(0),
        null(1),
        null(2),
        null(3),
        null(4),
        null(5),
        null(6),
        null(7),
        null(8),
        null(9),
        null(10),
        null(11),
        null(12),
        null(13),
        null(14),
        null(15),
        null(16),
        null(17),
        null(18),
    ]
};

/// `NVTX_EVENTS`' columns.
const NVTX_COLUMNS: usize = NVTX_EVENTS.columns.len();

impl<S: Store> Sink for Exporter<S> {
    fn thread_start(&mut self, p: &Process, t: &Thread) -> Result<()> {
        if let Some(name) = &t.name {
            let id = self.store.string_id(p, name)?;
            let row = [
                Value::int(id),
                Value::Int(None),
                Value::int(global_tid(p, t.tid)),
            ];
            self.store.row(Some(p), &THREAD_NAMES, &row)?;
        }
        Ok(())
    }

    fn range(&mut self, p: &Process, r: &Range) -> Result<()> {
        self.open_ranges += i64::from(r.unterminated);
        let (kind, range_id, end_tid) = match r.style {
            Style::PushPop => (PUSH_POP, None, None),
            Style::StartEnd => (START_END, Some(r.id), Some(r.end_tid)),
        };
        let (times, tids) = ((r.start, Some(r.end)), (r.tid, end_tid));
        self.event(p, kind, &r.details, times, tids, range_id)
    }

    fn mark(&mut self, p: &Process, m: &Mark) -> Result<()> {
        self.event(p, MARK, &m.details, (m.time, None), (m.tid, None), None)
    }

    /// A traced API call: a `CUPTI_ACTIVITY_KIND_RUNTIME` row.
    fn launch(&mut self, p: &Process, l: &Launch) -> Result<()> {
        let name = self.store.string_id(p, l.api)?;
        let row = [
            Value::int(self.time(l.start)),
            Value::int(self.time(l.end)),
            Value::int(RUNTIME_CLASS),
            Value::int(global_tid(p, l.tid)),
            Value::int(l.correlation),
            Value::int(name),
            Value::int(0),
            Value::Int(None),
        ];
        self.store.row(Some(p), &RUNTIME, &row)
    }

    /// A kernel, copy, set or synchronization: a row of its table (and its
    /// device's rows the first time: [`Gpus`]).
    fn gpu(&mut self, p: &Process, g: &GpuEvent) -> Result<()> {
        let a = g.activity;
        let gpid = global_pid(p);
        self.gpus.meet(&mut self.store, p, a.device, g.gpu)?;
        let mut row = vec![
            Value::int(self.time(a.start)),
            Value::int(self.time(a.end)),
            Value::int(a.device),
            Value::int(a.context),
            Value::Int(None),
            Value::int(a.stream),
            Value::int(a.correlation),
            Value::int(gpid),
        ];
        // Nsight's graph node and graph ids: NULL for work launched on its own.
        let (node, graph) = match a.graph_node {
            0 => (Value::Int(None), Value::Int(None)),
            n => (Value::int(n as i64), Value::int(a.graph)),
        };
        let table: &'static Table = match Tag::from_byte(a.tag) {
            Some(Tag::Kernel) => {
                row.extend(
                    [
                        self.store.string_id(p, g.name)?,
                        self.store.string_id(p, short_name(g.name))?,
                        self.store.string_id(p, g.mangled)?,
                    ]
                    .map(Value::int),
                );
                row.extend([
                    nsight(&LAUNCH_TYPES, a.launch_type),
                    Value::Int(None),
                    Value::int(a.registers),
                ]);
                row.extend(a.grid.iter().chain(&a.block).map(|&v| Value::int(v)));
                row.extend([Value::int(a.static_shared), Value::int(a.dynamic_shared)]);
                row.extend([
                    Value::int(a.local_per_thread),
                    Value::int(a.local_total),
                    Value::int(a.grid_id),
                    Value::int(a.shared_executed),
                ]);
                row.extend([node, nsight(&SHARED_LIMITS, a.shared_limit), graph]);
                &KERNEL
            }
            Some(Tag::Memcpy) => {
                row.extend([
                    Value::int(a.bytes as i64),
                    Value::int(a.copy_kind),
                    Value::Int(None),
                    nsight(&MEMORY_KINDS, Some(a.src_kind)),
                    nsight(&MEMORY_KINDS, Some(a.dst_kind)),
                ]);
                // A peer-to-peer copy's ends (NULL for other copies).
                let p = &a.peer;
                let ends = [p.src_device, p.src_context, p.dst_device, p.dst_context];
                let peer = a.copy_kind == PEER_TO_PEER;
                row.extend(ends.map(|v| Value::Int(peer.then_some(v.into()))));
                row.extend([Value::Int(None), node, Value::Int(None)]);
                &MEMCPY
            }
            Some(Tag::Memset) => {
                row.extend([
                    Value::int(a.copy_kind),
                    Value::int(a.bytes as i64),
                    node,
                    nsight(&MEMORY_KINDS, Some(a.src_kind)),
                ]);
                &MEMSET
            }
            _ => {
                row.extend([Value::int(a.sync_type), Value::int(a.event)]);
                &SYNCHRONIZATION
            }
        };
        self.store.row(Some(p), table, &row)
    }

    fn process_end(&mut self, p: &Process) -> Result<()> {
        let gpid = global_pid(p);
        let label = p.label();
        let row = [Value::int(gpid), Value::int(p.pid), Value::text(&label)];
        self.store.row(Some(p), &PROCESSES, &row)?;
        let row = [
            Value::int(gpid),
            Value::Int(p.rank.map(i64::from)),
            Value::Int(p.world.map(i64::from)),
            Value::text(&p.host),
            Value::text(&p.command),
            Value::int(p.recording as i64),
            Value::int(p.dropped as i64),
            Value::int(std::mem::take(&mut self.open_ranges)),
        ];
        self.store.row(Some(p), &NVTXR_PROCESSES, &row)
    }
}

/// CUPTI's number of an enumeration as Nsight's id of it (see
/// [`nsight_id`]); NULL when the recording has none.
fn nsight(rows: &[NsightEnum], cupti: Option<impl Into<u32>>) -> Value<'static> {
    Value::Int(cupti.and_then(|v| nsight_id(rows, v.into())).map(i64::from))
}
