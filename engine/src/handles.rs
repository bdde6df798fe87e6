//! What a handle given across the C ABI points to: a domain or a
//! registered string of nvtxr (told apart by the tag each starts with), or
//! neither, checked without reading a pointer that cannot be one.

use std::ffi::c_void;

/// The tag a domain's object starts with.
pub(crate) const DOMAIN_TAG: u32 = u32::from_le_bytes(*b"nvDM");
/// The tag a registered string's object starts with.
pub(crate) const STRING_TAG: u32 = u32::from_le_bytes(*b"nvST");
/// Both objects' alignment, at least (checked where they are defined).
pub(crate) const ALIGN: usize = 8;

/// Whether `p` points to a domain (`true`) or a registered string (`false`)
/// object, read from its tag; `None` for neither. A pointer that cannot be
/// an object (misaligned, in the first 64 KiB, which Linux never maps by
/// default, or past user space) is `None` without being read.
///
/// # Safety
/// `p` points to a domain or string object of nvtxr, or at least to 4
/// readable bytes, or is one of the pointers refused unread.
pub unsafe fn is_domain(p: *const c_void) -> Option<bool> {
    const LOWEST: usize = 64 << 10;
    const PAST_USER_SPACE: usize = 1 << 57;
    // One comparison for both checks: rotated right by 3, an address off
    // 8-byte alignment has one of its top 3 bits set, and one below LOWEST
    // (wrapped around by the subtraction) its top bit, so either compares
    // above every aligned address in range.
    let offset = (p as usize).wrapping_sub(LOWEST);
    if offset.rotate_right(ALIGN.trailing_zeros()) >= (PAST_USER_SPACE - LOWEST) / ALIGN {
        return None;
    }
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        match p.cast::<u32>().read() {
            DOMAIN_TAG => Some(true),
            STRING_TAG => Some(false),
            _ => None,
        }
    }
}
