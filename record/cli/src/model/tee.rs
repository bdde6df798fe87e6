//! One replay feeding two sinks (a trace and Parquet tables, say): the
//! recording is read and its events resolved once for both.

use super::{Details, GpuEvent, Launch, Mark, Process, Range, Sample, Sink, Thread};
use std::io::Result;

/// Hands each event to `first`, then to `second`; stops at the first error.
pub struct Tee<'a> {
    pub first: &'a mut dyn Sink,
    pub second: &'a mut dyn Sink,
}

impl Sink for Tee<'_> {
    fn wants_begin(&self) -> bool {
        self.first.wants_begin() || self.second.wants_begin()
    }
    fn wants_gpu(&self) -> bool {
        self.first.wants_gpu() || self.second.wants_gpu()
    }
    fn begin(&mut self, p: &Process, tid: u32, details: &Details, start: u64) -> Result<()> {
        // Only to those that asked: the others may not expect it.
        for sink in [&mut *self.first, &mut *self.second] {
            if sink.wants_begin() {
                sink.begin(p, tid, details, start)?;
            }
        }
        Ok(())
    }
    fn range(&mut self, p: &Process, range: &Range) -> Result<()> {
        self.first.range(p, range)?;
        self.second.range(p, range)
    }
    fn mark(&mut self, p: &Process, mark: &Mark) -> Result<()> {
        self.first.mark(p, mark)?;
        self.second.mark(p, mark)
    }
    fn sample(&mut self, p: &Process, sample: &Sample) -> Result<()> {
        self.first.sample(p, sample)?;
        self.second.sample(p, sample)
    }
    fn thread_start(&mut self, p: &Process, thread: &Thread) -> Result<()> {
        self.first.thread_start(p, thread)?;
        self.second.thread_start(p, thread)
    }
    fn thread_end(&mut self, p: &Process, depth: u32) -> Result<()> {
        self.first.thread_end(p, depth)?;
        self.second.thread_end(p, depth)
    }
    fn launch(&mut self, p: &Process, launch: &Launch) -> Result<()> {
        self.first.launch(p, launch)?;
        self.second.launch(p, launch)
    }
    fn gpu(&mut self, p: &Process, event: &GpuEvent) -> Result<()> {
        self.first.gpu(p, event)?;
        self.second.gpu(p, event)
    }
    fn process_end(&mut self, p: &Process) -> Result<()> {
        self.first.process_end(p)?;
        self.second.process_end(p)
    }
}
