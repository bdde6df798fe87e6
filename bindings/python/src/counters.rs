//! Counters' native core: registration and samples on a domain; the
//! classes (`Int64Counter`, `Float64Counter`, NVIDIA's enums and
//! semantics) are `nvtxr.counters`, in Python.

use crate::classes::Domain;
use crate::values::{c_bytes, semantics as counter_semantics, Semantics};
use crate::{c_string, checked};
use nvtxr_engine::counters::{CounterOptions, CounterType};
use nvtxr_engine::statics::CounterSample;
use pyo3::prelude::*;

/// Registers counter `name` in `domain`: its values int64, float (`float`),
/// or laid out as the payload schema `schema` says (when not 0), with what
/// else NVIDIA's package sends (description, scope id, time domain,
/// semantic); its id, 0 with no tool.
#[pyfunction]
#[pyo3(signature = (domain, name, float, schema=0, description=None, scope=0, time_domain=None, semantics=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn _counter_register(
    domain: &Bound<'_, Domain>,
    name: &str,
    float: bool,
    schema: u64,
    description: Option<&str>,
    scope: u64,
    time_domain: Option<u64>,
    semantics: Option<Semantics>,
) -> u64 {
    if !crate::active() || !domain.get().wanted {
        return 0;
    }
    let kind = match (schema, float) {
        (0, true) => CounterType::Float64,
        (0, false) => CounterType::Int64,
        (id, _) => CounterType::Schema(id),
    };
    let description = description.map(c_string);
    let unit = semantics.as_ref().and_then(|s| s.1.as_deref().map(c_bytes));
    let options = CounterOptions {
        description: description.as_deref(),
        scope,
        time_domain,
        semantics: semantics.as_ref().map(|s| counter_semantics(s, &unit)),
    };
    let registered = domain
        .get()
        .inner
        .counter_register_with(&c_string(name), kind, &options);
    checked(domain.py(), registered, 0)
}

/// Registers the scope at `path` in `domain`; its id, 0 with no tool.
#[pyfunction]
pub(crate) fn _scope_register(domain: &Bound<'_, Domain>, path: &str) -> u64 {
    if !crate::active() || !domain.get().wanted {
        return 0;
    }
    checked(
        domain.py(),
        domain.get().inner.scope_register(&c_string(path)),
        0,
    )
}

/// Samples a schema counter: one value, as its bytes.
#[pyfunction]
pub(crate) fn _counter_sample_bytes(domain: &Bound<'_, Domain>, id: u64, value: &[u8]) {
    if id != 0 && crate::active() {
        let sampled = domain.get().inner.counter_sample_bytes(id, value);
        checked(domain.py(), sampled, ());
    }
}

/// Samples of a schema counter taken earlier: one value's bytes per timestamp.
#[pyfunction]
pub(crate) fn _counter_batch_bytes(
    domain: &Bound<'_, Domain>,
    id: u64,
    samples: &[u8],
    timestamps: Vec<i64>,
) {
    if crate::active() {
        let sent = domain
            .get()
            .inner
            .counter_batch_bytes(id, samples, &timestamps);
        checked(domain.py(), sent, ());
    }
}

fn sample(domain: &Bound<'_, Domain>, id: u64, value: CounterSample) {
    if id != 0 && crate::active() {
        let sampled = domain.get().inner.counter_sample(id, value);
        checked(domain.py(), sampled, ());
    }
}

/// Samples an int64 counter.
#[pyfunction]
pub(crate) fn _counter_sample_int(domain: &Bound<'_, Domain>, id: u64, value: i64) {
    sample(domain, id, CounterSample::Int64(value))
}

/// Samples a float counter.
#[pyfunction]
pub(crate) fn _counter_sample_float(domain: &Bound<'_, Domain>, id: u64, value: f64) {
    sample(domain, id, CounterSample::Float64(value))
}

/// Records a sample with no value, for `reason` (0 zero, 1 unchanged, 2 unavailable).
#[pyfunction]
pub(crate) fn _counter_sample_no_value(domain: &Bound<'_, Domain>, id: u64, reason: u8) {
    sample(domain, id, CounterSample::NoValue(reason))
}
