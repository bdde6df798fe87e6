//! The names a record's ids stand for, as the replay resolves them: its
//! process's and its ancestors' domains, registered strings, categories
//! and counters.

use super::replay::Decoded;
use super::scan::Names;
use super::{parse_fields, Details, Payload, Sample};
use compact_str::CompactString;
use hashbrown::HashMap;
use nvtxr_record_format::Record;

pub(super) struct Resolver<'a> {
    pub lineage: &'a [u64],
    pub names: &'a HashMap<u64, Names>,
}

impl Resolver<'_> {
    fn find<T: Clone>(&self, get: impl Fn(&Names) -> Option<&T>) -> Option<T> {
        self.find_ref(get).cloned()
    }

    /// The first of the lineage's names that `get` finds.
    fn find_ref<T>(&self, get: impl Fn(&Names) -> Option<&T>) -> Option<&T> {
        (self.lineage.iter()).find_map(|k| self.names.get(k).and_then(&get))
    }

    /// A counter's sample (`None` for one without a value), and its
    /// details as the selection sees them (the counter as the name).
    pub fn sample(&self, r: &Decoded, tid: u32) -> (Option<Sample>, Details) {
        let mut details = self.details(&Record {
            text: None,
            string: None,
            ..r.clone()
        });
        details.name = self
            .find(|n| n.counters.get(&(r.domain, r.value)))
            .map_or_else(|| format!("(counter {})", r.value).into(), Into::into);
        let sample = details.payload.map(|value| Sample {
            counter: details.name.to_string(),
            domain: details.domain.to_string(),
            value,
            time: r.timestamp,
            tid,
        });
        (sample, details)
    }

    pub fn details(&self, r: &Decoded) -> Details {
        // Inline, not allocated, up to 24 bytes.
        let name = match (&r.string, &r.text) {
            (Some(id), _) => self
                .find_ref(|n| n.strings.get(id))
                .map_or_else(|| format!("(string {id})").into(), |s| s.as_str().into()),
            (None, Some(text)) => CompactString::from(&**text),
            (None, None) => CompactString::const_new("(unnamed)"),
        };
        let domain = if r.domain == 0 {
            CompactString::const_new("")
        } else {
            self.find_ref(|n| n.domains.get(&r.domain)).map_or_else(
                || format!("(domain {})", r.domain).into(),
                |d| d.as_str().into(),
            )
        };
        let category = (r.category != 0).then(|| {
            (
                r.category,
                self.find(|n| n.categories.get(&(r.domain, r.category))),
            )
        });
        Details {
            name,
            domain,
            color: r.color,
            category,
            payload: Payload::decode(r.payload.0, r.payload.1),
            fields: r.fields.as_deref().map(parse_fields),
            gpu: None,
        }
    }
}
