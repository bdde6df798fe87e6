//! Counters' native core: registration and samples on a domain; the
//! classes (`Int64Counter`, `Float64Counter`, NVIDIA's enums and
//! semantics) are `nvtxr.counters`, in Python.

use crate::domain::Domain;
use crate::{c_string, checked};
use nvtxr_engine::counters::CounterType;
use nvtxr_engine::statics::CounterSample;
use pyo3::prelude::*;

/// Registers counter `name` in `domain`: its values int64, float (`float`),
/// or laid out as the payload schema `schema` says (when not 0); its id, 0
/// with no tool.
#[pyfunction]
#[pyo3(signature = (domain, name, float, schema=0))]
pub(crate) fn _counter_register(
    domain: &Bound<'_, Domain>,
    name: &str,
    float: bool,
    schema: u64,
) -> u64 {
    if !crate::active() || !domain.get().wanted {
        return 0;
    }
    let kind = match (schema, float) {
        (0, true) => CounterType::Float64,
        (0, false) => CounterType::Int64,
        (id, _) => CounterType::Schema(id),
    };
    let registered = domain.get().inner.counter_register(&c_string(name), kind);
    checked(domain.py(), registered, 0)
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

/// Samples of an int64 counter taken earlier: `values[i]` at `timestamps[i]`.
#[pyfunction]
pub(crate) fn _counter_batch_int(
    domain: &Bound<'_, Domain>,
    id: u64,
    values: Vec<i64>,
    timestamps: Vec<i64>,
) {
    if crate::active() {
        let sent = domain.get().inner.counter_batch(id, &values, &timestamps);
        checked(domain.py(), sent, ());
    }
}

/// Samples of a float counter taken earlier: `values[i]` at `timestamps[i]`.
#[pyfunction]
pub(crate) fn _counter_batch_float(
    domain: &Bound<'_, Domain>,
    id: u64,
    values: Vec<f64>,
    timestamps: Vec<i64>,
) {
    if crate::active() {
        let sent = domain.get().inner.counter_batch(id, &values, &timestamps);
        checked(domain.py(), sent, ());
    }
}

/// Records a sample with no value, for `reason` (0 zero, 1 unchanged, 2 unavailable).
#[pyfunction]
pub(crate) fn _counter_sample_no_value(domain: &Bound<'_, Domain>, id: u64, reason: u8) {
    sample(domain, id, CounterSample::NoValue(reason))
}
