//! The error type shared by the Rust API and the C ABI's status codes.

/// Why nvtxr refused a call. Nothing is forwarded to the tool when a call is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A required pointer was NULL (C ABI only).
    #[error("a required argument was NULL")]
    NullArgument,
    /// An argument is out of its documented range (an unknown payload or
    /// color type, a registered string of another domain).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The domain was destroyed as many times as it was created.
    #[error("the domain was already destroyed")]
    Destroyed,
    /// A domain or string call made from a signal handler that interrupted
    /// another such call on the same thread: refused instead of deadlocking.
    #[error(
        "called from a signal handler that interrupted a domain or string call on this thread"
    )]
    Reentered,
}
