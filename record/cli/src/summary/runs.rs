//! Sorted runs on disk, for a summary larger than its memory budget: an
//! anonymous temporary file (see `crate::temporary`: unlinked from the
//! start, gone when `nvtxr` exits, whatever ends it) written once, then read
//! back any number of times, each reader at its own offset.

use crate::temporary;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;

/// What the files keep, as their errors say.
const WHAT: &str = "the summary's sorted runs";

/// Writes one run.
pub struct RunWriter {
    out: BufWriter<File>,
}

impl RunWriter {
    pub fn new() -> std::io::Result<RunWriter> {
        Ok(RunWriter {
            out: BufWriter::with_capacity(1 << 16, temporary::file(WHAT)?),
        })
    }

    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes).map_err(temporary::failed(WHAT))
    }

    pub fn u8(&mut self, v: u8) -> std::io::Result<()> {
        self.put(&[v])
    }

    pub fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }

    pub fn f64(&mut self, v: f64) -> std::io::Result<()> {
        self.u64(v.to_bits())
    }

    pub fn text(&mut self, s: &str) -> std::io::Result<()> {
        self.u64(s.len() as u64)?;
        self.put(s.as_bytes())
    }

    pub fn color(&mut self, c: Option<u32>) -> std::io::Result<()> {
        match c {
            Some(c) => {
                self.u8(1)?;
                self.u64(u64::from(c))
            }
            None => self.u8(0),
        }
    }

    /// The run, written.
    pub fn finish(self) -> std::io::Result<File> {
        self.out
            .into_inner()
            .map_err(|e| temporary::failed(WHAT)(e.into_error()))
    }
}

/// Reads a run from its start, buffered.
pub struct RunReader<'a> {
    file: &'a File,
    offset: u64,
    /// Bytes read ahead: `buf[at..end]` not consumed yet. Made once (and
    /// grown for a longer text), never cleared: refilling it moves what is
    /// left to its front and reads after it.
    buf: Vec<u8>,
    at: usize,
    end: usize,
}

impl<'a> RunReader<'a> {
    pub fn new(file: &'a File) -> RunReader<'a> {
        RunReader {
            file,
            offset: 0,
            buf: Vec::new(),
            at: 0,
            end: 0,
        }
    }

    /// Whether the run is read to its end.
    pub fn done(&mut self) -> std::io::Result<bool> {
        Ok(self.at == self.end && !self.fill(1)?)
    }

    /// Makes `n` bytes available; false at the end of the run.
    #[cold]
    #[inline(never)]
    fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        crate::signals::check()?;
        self.buf.copy_within(self.at..self.end, 0);
        self.end -= self.at;
        self.at = 0;
        if self.buf.len() < n.max(1 << 16) {
            self.buf.resize(n.max(1 << 16), 0);
        }
        while self.end < self.buf.len() {
            let read = self
                .file
                .read_at(&mut self.buf[self.end..], self.offset)
                .map_err(temporary::failed(WHAT))?;
            if read == 0 {
                break;
            }
            self.end += read;
            self.offset += read as u64;
        }
        Ok(self.end >= n)
    }

    #[inline]
    fn bytes(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.end - self.at < n && !self.fill(n)? {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "a summary run ended early",
            ));
        }
        self.at += n;
        Ok(&self.buf[self.at - n..self.at])
    }

    pub fn u8(&mut self) -> std::io::Result<u8> {
        Ok(self.bytes(1)?[0])
    }

    pub fn u64(&mut self) -> std::io::Result<u64> {
        let b = self.bytes(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    pub fn f64(&mut self) -> std::io::Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    pub fn text(&mut self) -> std::io::Result<String> {
        let n = self.u64()? as usize;
        Ok(nvtxr_record_format::text(self.bytes(n)?).into_owned())
    }

    pub fn color(&mut self) -> std::io::Result<Option<u32>> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.u64()? as u32),
        })
    }
}
