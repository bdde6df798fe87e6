//! The Chrome Trace Event format (Perfetto, chrome://tracing): one process
//! track per process (its trace "pid" is the process's key: the pid, tagged
//! with its recording when several are merged, so two hosts' equal pids
//! stay apart), one thread track per thread (named after the thread),
//! push/pop ranges as nested complete events, start/end ranges as async
//! slices (ids `<pid>.<id>`, unique across the trace), marks as instants; domain, category, payload and color in args.

use crate::json;
use crate::model::{Details, Mark, Payload, Process, Range, Sink, Style};
use std::io::Write;

/// Microseconds since the recording's origin, with ns precision.
fn micros(t: u64, origin: u64) -> String {
    let ns = t.saturating_sub(origin);
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// A color as `#rrggbb` (alpha dropped).
pub fn css_color(argb: u32) -> String {
    format!("#{:06x}", argb & 0xFF_FFFF)
}

pub fn payload_json(p: Payload) -> String {
    match p {
        Payload::U64(v) => v.to_string(),
        Payload::I64(v) => v.to_string(),
        Payload::F64(v) => json::number(v),
    }
}

/// The `args` object of an event.
pub fn args(d: &Details) -> String {
    let mut fields = vec![(
        "domain",
        json::string(if d.domain.is_empty() {
            "(default)"
        } else {
            &d.domain
        }),
    )];
    if let Some((id, name)) = &d.category {
        fields.push(("category", id.to_string()));
        if let Some(name) = name {
            fields.push(("category_name", json::string(name)));
        }
    }
    if let Some(p) = d.payload {
        fields.push(("payload", payload_json(p)));
    }
    if let Some(c) = d.color {
        fields.push(("color", json::string(&css_color(c))));
    }
    json::object(&fields)
}

fn category(d: &Details) -> String {
    json::string(if d.domain.is_empty() {
        "nvtx"
    } else {
        &d.domain
    })
}

/// Writes the trace as a replay goes: one event per line.
pub struct Writer<'a> {
    out: &'a mut dyn Write,
    origin: u64,
    first: bool,
    /// The last process whose metadata was written (its key).
    described: Option<u64>,
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
        })
    }

    fn line(&mut self, line: &str) -> std::io::Result<()> {
        let comma = if self.first { "" } else { ",\n" };
        self.first = false;
        write!(self.out, "{comma}{line}")
    }

    /// The process's and its threads' names, once, before its first event.
    pub fn describe(&mut self, p: &Process) -> std::io::Result<()> {
        if self.described == Some(p.key) {
            return Ok(());
        }
        self.described = Some(p.key);
        self.line(&format!(
            r#"{{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}}"#,
            p.key,
            json::string(&p.label())
        ))?;
        if let Some(rank) = p.rank {
            // Tracks sort by rank; the command stays visible as a label.
            self.line(&format!(
                r#"{{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{rank}}}}}"#,
                p.key
            ))?;
            let labels = match p.world {
                Some(world) => format!("{world} ranks; {}", p.command),
                None => p.command.clone(),
            };
            self.line(&format!(
                r#"{{"ph":"M","name":"process_labels","pid":{},"args":{{"labels":{}}}}}"#,
                p.key,
                json::string(&labels)
            ))?;
        }
        if p.parent != 0 {
            self.line(&format!(
                r#"{{"ph":"M","name":"process_labels","pid":{},"args":{{"labels":"parent pid {}"}}}}"#,
                p.key, p.parent
            ))?;
        }
        for t in &p.threads {
            let name = t
                .name
                .clone()
                .unwrap_or_else(|| format!("thread {}", t.tid));
            self.line(&format!(
                r#"{{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}}"#,
                p.key,
                t.tid,
                json::string(&name)
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

impl Sink for Writer<'_> {
    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        self.describe(p)?;
        let o = self.origin;
        let name = json::string(&r.details.name);
        let (cat, args) = (category(&r.details), args(&r.details));
        match r.style {
            Style::PushPop => self.line(&format!(
                r#"{{"ph":"X","name":{name},"cat":{cat},"pid":{},"tid":{},"ts":{},"dur":{},"args":{args}}}"#,
                p.key,
                r.tid,
                micros(r.start, o),
                micros(r.end, r.start)
            )),
            Style::StartEnd => {
                for (ph, t, a) in [("b", r.start, args.as_str()), ("e", r.end, "{}")] {
                    self.line(&format!(
                        r#"{{"ph":"{ph}","name":{name},"cat":{cat},"id":"{}.{:x}","pid":{},"tid":{},"ts":{},"args":{a}}}"#,
                        p.key,
                        r.id,
                        p.key,
                        r.tid,
                        micros(t, o)
                    ))?;
                }
                Ok(())
            }
        }
    }

    fn mark(&mut self, p: &Process, m: &Mark) -> std::io::Result<()> {
        self.describe(p)?;
        self.line(&format!(
            r#"{{"ph":"i","s":"t","name":{},"cat":{},"pid":{},"tid":{},"ts":{},"args":{}}}"#,
            json::string(&m.details.name),
            category(&m.details),
            p.key,
            m.tid,
            micros(m.time, self.origin),
            args(&m.details)
        ))
    }

    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        // A process with no events still gets its track (and its name).
        self.describe(p)
    }
}
