//! The Chrome Trace Event format (Perfetto, chrome://tracing): one process
//! track per process (its trace "pid" is the process's key: the pid, tagged
//! with its recording when several are merged, so two hosts' equal pids
//! stay apart), one thread track per thread (named after the thread),
//! push/pop ranges as nested complete events, start/end ranges as async
//! slices (ids `<pid>.<id>`, unique across the trace), marks as instants; domain, category, payload, color and
//! decoded extended payloads (`fields`) in args.

use crate::model::{
    gpu_label, gpu_pid, Details, Fields, GpuEvent, Launch, Mark, Payload, Process, Range, Sample,
    Sink, Style,
};
use serde::Serialize;
use std::io::Write;

/// The id of the flow from a launch to its `nth` activity:
/// `<pid>.c<correlation id>`, then `.<nth>` for a graph's later nodes.
fn flow_id(p: &Process, correlation: u32, nth: u32) -> String {
    match nth {
        0 => format!("{}.c{correlation}", p.trace_pid),
        _ => format!("{}.c{correlation}.{nth}", p.trace_pid),
    }
}

/// Microseconds since the recording's origin (ns precision: a JSON number
/// with up to three decimals).
fn micros(t: u64, origin: u64) -> f64 {
    t.saturating_sub(origin) as f64 / 1000.0
}

impl Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Payload::U64(v) => s.serialize_u64(v),
            Payload::I64(v) => s.serialize_i64(v),
            // Not finite: JSON has no such number; serde_json writes null.
            Payload::F64(v) => s.serialize_f64(v),
        }
    }
}

/// The `args` of an event: domain, category, payload, color, fields.
#[derive(Serialize)]
pub struct Args<'a> {
    domain: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<Payload>,
    #[serde(skip_serializing_if = "Option::is_none")]
    color: Option<String>,
    /// Decoded extended payloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<&'a Fields>,
}

impl<'a> Args<'a> {
    pub fn of(d: &'a Details) -> Self {
        Args {
            domain: if d.domain.is_empty() {
                "(default)"
            } else {
                &d.domain
            },
            category: d.category.as_ref().map(|c| c.0),
            category_name: d.category.as_ref().and_then(|c| c.1.as_deref()),
            payload: d.payload,
            color: d.color.map(crate::model::css_color),
            fields: d.fields.as_deref(),
        }
    }
}

/// An event's `cat`: its domain's name, `nvtx` for the default domain.
fn category(domain: &str) -> &str {
    if domain.is_empty() {
        "nvtx"
    } else {
        domain
    }
}

/// One trace event; fields a phase does not use are left out.
#[derive(Serialize)]
struct Event<'a> {
    ph: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'a str>,
    /// Async slices: `<pid>.<id in hex>`, unique across the trace; flows:
    /// see [`flow_id`].
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    /// Instants: their scope (`t`, the thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    /// Flow ends: bound to the enclosing slice (`e`).
    #[serde(skip_serializing_if = "Option::is_none")]
    bp: Option<&'static str>,
    args: Value<'a>,
}

/// What an event's `args` hold.
#[derive(Serialize)]
#[serde(untagged)]
enum Value<'a> {
    Args(Args<'a>),
    Name { name: &'a str },
    SortIndex { sort_index: u32 },
    Labels { labels: &'a str },
    Counter { value: Payload },
    Json(serde_json::Value),
    Empty {},
}

impl<'a> Event<'a> {
    /// A metadata event (`ph: M`) of a process, or of a thread with `tid`.
    fn metadata(name: &'a str, pid: u32, tid: Option<u32>, args: Value<'a>) -> Self {
        Event {
            ph: "M",
            name,
            cat: None,
            id: None,
            s: None,
            pid,
            tid,
            ts: None,
            dur: None,
            bp: None,
            args,
        }
    }
}

/// Writes the trace as a replay goes: one event per line.
pub struct Writer<'a> {
    out: &'a mut dyn Write,
    origin: u64,
    first: bool,
    /// The last process whose metadata was written (its key).
    described: Option<u64>,
    /// The GPU processes (stream `u32::MAX`) and streams named so far.
    gpus: hashbrown::HashSet<(u32, u32)>,
}

impl<'a> Writer<'a> {
    /// Starts the trace; `origin` is the recording's zero.
    pub fn new(out: &'a mut dyn Write, origin: u64) -> std::io::Result<Self> {
        writeln!(
            out,
            "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"nvtxr record\"}},\"traceEvents\":["
        )?;
        Ok(Writer {
            out,
            origin,
            first: true,
            described: None,
            gpus: Default::default(),
        })
    }

    fn event(&mut self, e: &Event) -> std::io::Result<()> {
        let comma = if self.first { "" } else { ",\n" };
        self.first = false;
        write!(self.out, "{comma}")?;
        serde_json::to_writer(&mut *self.out, e).map_err(std::io::Error::from)
    }

    /// The process's and its threads' names, once, before its first event.
    pub fn describe(&mut self, p: &Process) -> std::io::Result<()> {
        if self.described == Some(p.key) {
            return Ok(());
        }
        self.described = Some(p.key);
        let label = p.label();
        self.event(&Event::metadata(
            "process_name",
            p.trace_pid,
            None,
            Value::Name { name: &label },
        ))?;
        if let Some(rank) = p.rank {
            // Tracks sort by rank; the command stays visible as a label.
            self.event(&Event::metadata(
                "process_sort_index",
                p.trace_pid,
                None,
                Value::SortIndex { sort_index: rank },
            ))?;
            let labels = match p.world {
                Some(world) => format!("{world} ranks; {}", p.command),
                None => p.command.clone(),
            };
            self.event(&Event::metadata(
                "process_labels",
                p.trace_pid,
                None,
                Value::Labels { labels: &labels },
            ))?;
        }
        if p.parent != 0 {
            let labels = format!("parent pid {}", p.parent);
            self.event(&Event::metadata(
                "process_labels",
                p.trace_pid,
                None,
                Value::Labels { labels: &labels },
            ))?;
        }
        for t in &p.threads {
            let name = t
                .name
                .clone()
                .unwrap_or_else(|| format!("thread {}", t.tid));
            self.event(&Event::metadata(
                "thread_name",
                p.trace_pid,
                Some(t.tid),
                Value::Name { name: &name },
            ))?;
        }
        Ok(())
    }

    /// Ends the trace.
    pub fn finish(self) -> std::io::Result<()> {
        writeln!(self.out, "\n]}}")?;
        self.out.flush()
    }
}

impl<'a> Event<'a> {
    /// A slice or instant (`ph`) of a range or mark with `d`'s name, category and `args`.
    fn of(
        ph: &'static str,
        d: &'a Details,
        p: &Process,
        tid: u32,
        ts: f64,
        args: Value<'a>,
    ) -> Self {
        Event {
            ph,
            name: &d.name,
            cat: Some(category(&d.domain)),
            id: None,
            s: None,
            pid: p.trace_pid,
            tid: Some(tid),
            ts: Some(ts),
            dur: None,
            bp: None,
            args,
        }
    }
}

impl Sink for Writer<'_> {
    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        self.describe(p)?;
        let o = self.origin;
        let d = &r.details;
        match r.style {
            Style::PushPop => self.event(&Event {
                dur: Some(micros(r.end, r.start)),
                ..Event::of(
                    "X",
                    d,
                    p,
                    r.tid,
                    micros(r.start, o),
                    Value::Args(Args::of(d)),
                )
            }),
            Style::StartEnd => {
                let id = format!("{}.{:x}", p.trace_pid, r.id);
                self.event(&Event {
                    id: Some(id.clone()),
                    ..Event::of(
                        "b",
                        d,
                        p,
                        r.tid,
                        micros(r.start, o),
                        Value::Args(Args::of(d)),
                    )
                })?;
                self.event(&Event {
                    id: Some(id),
                    ..Event::of("e", d, p, r.tid, micros(r.end, o), Value::Empty {})
                })
            }
        }
    }

    fn mark(&mut self, p: &Process, m: &Mark) -> std::io::Result<()> {
        self.describe(p)?;
        let d = &m.details;
        let ts = micros(m.time, self.origin);
        self.event(&Event {
            s: Some("t"),
            ..Event::of("i", d, p, m.tid, ts, Value::Args(Args::of(d)))
        })
    }

    /// A counter event (`ph: C`): its series `value`, named after the counter.
    fn sample(&mut self, p: &Process, s: &Sample) -> std::io::Result<()> {
        self.describe(p)?;
        self.event(&Event {
            ph: "C",
            name: &s.counter,
            cat: Some(category(&s.domain)),
            id: None,
            s: None,
            pid: p.trace_pid,
            tid: Some(s.tid),
            ts: Some(micros(s.time, self.origin)),
            dur: None,
            bp: None,
            args: Value::Counter { value: s.value },
        })
    }

    /// The API call as a slice on its thread, and the start of a flow to
    /// each activity it caused.
    fn launch(&mut self, p: &Process, l: &Launch) -> std::io::Result<()> {
        self.describe(p)?;
        let ts = micros(l.start, self.origin);
        let args = serde_json::json!({ "correlation": l.correlation });
        let api = Event {
            ph: "X",
            name: l.api,
            cat: Some("cuda_api"),
            id: None,
            s: None,
            pid: p.trace_pid,
            tid: Some(l.tid),
            ts: Some(ts),
            dur: Some(micros(l.end, l.start)),
            bp: None,
            args: Value::Json(args),
        };
        self.event(&api)?;
        for nth in 0..l.activities {
            self.event(&Event {
                ph: "s",
                cat: Some("launch"),
                id: Some(flow_id(p, l.correlation, nth)),
                dur: None,
                args: Value::Empty {},
                ..api
            })?;
        }
        Ok(())
    }

    /// A kernel, copy, set or synchronization on its GPU's stream, and its
    /// launch's flow's end.
    fn gpu(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        let a = g.activity;
        let pid = gpu_pid(p, a.device);
        if self.gpus.insert((pid, a.stream)) {
            if self.gpus.insert((pid, u32::MAX)) {
                let label = gpu_label(p, a.device, g.gpu);
                self.event(&Event::metadata(
                    "process_name",
                    pid,
                    None,
                    Value::Name { name: &label },
                ))?;
            }
            let name = format!("stream {}", a.stream);
            self.event(&Event::metadata(
                "thread_name",
                pid,
                Some(a.stream),
                Value::Name { name: &name },
            ))?;
        }
        let ts = micros(a.start, self.origin);
        let slice = Event {
            ph: "X",
            name: g.name,
            cat: Some(nvtxr_record_format::gpu::tag_name(a.tag)),
            id: None,
            s: None,
            pid,
            tid: Some(a.stream),
            ts: Some(ts),
            dur: Some(micros(a.end, a.start)),
            bp: None,
            args: Value::Json(gpu_args(g)),
        };
        self.event(&slice)?;
        if g.launch.is_some() {
            self.event(&Event {
                ph: "f",
                cat: Some("launch"),
                id: Some(flow_id(p, a.correlation, g.nth)),
                dur: None,
                bp: Some("e"),
                args: Value::Empty {},
                ..slice
            })?;
        }
        Ok(())
    }

    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        // A process with no events still gets its track (and its name).
        self.describe(p)
    }
}

/// A GPU activity's arguments, as every output shows them: its launch and
/// range, and the fields of its kind.
pub fn gpu_args(g: &GpuEvent) -> serde_json::Value {
    use crate::model::{Arg, ArgValue};
    use serde_json::{json, Value};
    let mut args = serde_json::Map::new();
    g.args(|name, value| {
        let value = match value {
            ArgValue::Uint(v) => Value::from(v),
            ArgValue::Int(v) => Value::from(v),
            ArgValue::Text(t) => Value::from(t),
            ArgValue::Dims(d) => json!(d),
            ArgValue::Launch(l) => json!({
                Arg::Api.name(): l.api,
                Arg::Thread.name(): l.tid,
                Arg::Range.name(): l.range.map(crate::model::RangeName::name),
            }),
        };
        args.insert(name.name().to_string(), value);
    });
    Value::Object(args)
}
