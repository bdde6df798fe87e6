//! The do-nothing tool (`null` mode): CORE and CORE2 filled, nothing
//! recorded.

use nvtx_protocol::{slot, Handle, ToolFunctions};
use std::ffi::c_int;

// The do-nothing tool: CORE and CORE2 filled, nothing recorded. Push and
// pop return depth 0, range ids 1, handles a non-NULL dummy.
unsafe extern "C" fn nothing1<A>(_: A) {}
unsafe extern "C" fn nothing2<A, B>(_: A, _: B) {}
unsafe extern "C" fn nothing3<A, B, C>(_: A, _: B, _: C) {}
unsafe extern "C" fn depth0() -> c_int {
    0
}
unsafe extern "C" fn depth1<A>(_: A) -> c_int {
    0
}
unsafe extern "C" fn depth2<A, B>(_: A, _: B) -> c_int {
    0
}
unsafe extern "C" fn id1<A>(_: A) -> u64 {
    1
}
unsafe extern "C" fn id2<A, B>(_: A, _: B) -> u64 {
    1
}
unsafe extern "C" fn handle1<A>(_: A) -> Handle {
    std::ptr::NonNull::dangling().as_ptr()
}
unsafe extern "C" fn handle2<A, B>(_: A, _: B) -> Handle {
    std::ptr::NonNull::dangling().as_ptr()
}

/// The do-nothing functions.
pub fn null_functions() -> ToolFunctions {
    let mut f = ToolFunctions::new();
    f.set(slot::MARK_EX, nothing1)
        .set(slot::MARK_A, nothing1)
        .set(slot::MARK_W, nothing1)
        .set(slot::RANGE_START_EX, id1)
        .set(slot::RANGE_START_A, id1)
        .set(slot::RANGE_START_W, id1)
        .set(slot::RANGE_END, nothing1)
        .set(slot::RANGE_PUSH_EX, depth1)
        .set(slot::RANGE_PUSH_A, depth1)
        .set(slot::RANGE_PUSH_W, depth1)
        .set(slot::RANGE_POP, depth0)
        .set(slot::NAME_CATEGORY_A, nothing2)
        .set(slot::NAME_CATEGORY_W, nothing2)
        .set(slot::NAME_OS_THREAD_A, nothing2)
        .set(slot::NAME_OS_THREAD_W, nothing2)
        .set(slot::DOMAIN_MARK_EX, nothing2)
        .set(slot::DOMAIN_RANGE_START_EX, id2)
        .set(slot::DOMAIN_RANGE_END, nothing2)
        .set(slot::DOMAIN_RANGE_PUSH_EX, depth2)
        .set(slot::DOMAIN_RANGE_POP, depth1)
        .set(slot::DOMAIN_RESOURCE_CREATE, handle2)
        .set(slot::DOMAIN_RESOURCE_DESTROY, nothing1)
        .set(slot::DOMAIN_NAME_CATEGORY_A, nothing3)
        .set(slot::DOMAIN_NAME_CATEGORY_W, nothing3)
        .set(slot::DOMAIN_REGISTER_STRING_A, handle2)
        .set(slot::DOMAIN_REGISTER_STRING_W, handle2)
        .set(slot::DOMAIN_CREATE_A, handle1)
        .set(slot::DOMAIN_CREATE_W, handle1)
        .set(slot::DOMAIN_DESTROY, nothing1)
        .set(slot::INITIALIZE, nothing1);
    f
}
