//! The one way into a tool's extension modules (payload, counters, memory):
//! with a tool attached, inside the domain's gate, the tool's function for
//! a callback id, given the domain's tool handle.

use crate::domain::DomainState;
use crate::error::Error;
use crate::loader::extensions::Slots;
use nvtx_protocol::Handle;

/// Gives `call` the tool's function for `cbid` of `module` (an address, to
/// be cast to the protocol's type) and `domain`'s tool handle, inside the
/// domain's gate; its result, `None` with no tool or no such function.
pub(crate) fn call<R>(
    module: &Slots,
    domain: &'static DomainState,
    cbid: usize,
    call: impl FnOnce(usize, Handle) -> R,
) -> Result<Option<R>, Error> {
    if !crate::loader::tool_attached() {
        return Ok(None);
    }
    let entered = domain.enter()?;
    Ok(module.get(cbid).map(|f| call(f, entered.handle)))
}
