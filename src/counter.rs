//! Counters (NVTX's counters extension).

use nvtxr_engine::counters::{self, CounterType};
use nvtxr_engine::domain::DomainState;
use std::marker::PhantomData;

/// A counter's value type: `i64` or `f64`.
pub trait CounterValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    const TYPE: CounterType;
    #[doc(hidden)]
    fn sample(domain: &'static DomainState, id: u64, value: Self);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for f64 {}
}

impl CounterValue for i64 {
    const TYPE: CounterType = CounterType::Int64;
    fn sample(domain: &'static DomainState, id: u64, value: i64) {
        counters::sample_i64(domain, id, value).ok();
    }
}

impl CounterValue for f64 {
    const TYPE: CounterType = CounterType::Float64;
    fn sample(domain: &'static DomainState, id: u64, value: f64) {
        counters::sample_f64(domain, id, value).ok();
    }
}

/// A counter of a [`Domain`](crate::Domain) (see
/// [`Domain::counter`](crate::Domain::counter)).
pub struct Counter<'d, T: CounterValue> {
    domain: &'static DomainState,
    id: u64,
    /// It belongs to a domain (`Domain::counter`) and counts `T`s.
    _types: PhantomData<(&'d (), T)>,
}

impl<T: CounterValue> Counter<'_, T> {
    /// The counter registered as `id` in `domain`.
    pub(crate) fn new(domain: &'static DomainState, id: u64) -> Self {
        Counter {
            domain,
            id,
            _types: PhantomData,
        }
    }

    /// Records `value` now.
    pub fn sample(&self, value: T) {
        T::sample(self.domain, self.id, value)
    }

    /// Records samples taken earlier: `values[i]` at `timestamps[i]`, each
    /// a reading of [`timestamp`](crate::timestamp) (the tool's clock), in one call.
    ///
    /// ```
    /// let domain = nvtxr::Domain::new("trainer");
    /// let loss = domain.counter::<f64>("loss");
    /// let (mut values, mut times) = (Vec::new(), Vec::new());
    /// for step in 0..3 {
    ///     values.push(1.0 / (step + 1) as f64);
    ///     times.push(nvtxr::timestamp());
    /// }
    /// loss.batch(&values, &times).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
    /// slices' lengths differ (nothing is recorded).
    pub fn batch(&self, values: &[T], timestamps: &[i64]) -> Result<(), crate::Error> {
        counters::batch(self.domain, self.id, values, timestamps)
    }
}
