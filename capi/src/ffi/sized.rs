//! Structs that grow: each starts with its size (`u32`), and nvtxr reads
//! only the fields that size covers.

use nvtxr_engine::error::Error;

/// A copy of the struct at `p`: the fields its size covers, later ones
/// zero (every field's "none"). `min`: the bytes a size must cover (else
/// the struct was not initialized: `unset` says so).
///
/// # Safety
/// `p` is NULL, or readable for the size it starts with.
pub(super) unsafe fn read_sized<T: Copy>(
    p: *const T,
    min: usize,
    unset: &'static str,
) -> Result<T, Error> {
    if p.is_null() {
        return Err(Error::NullArgument);
    }
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let size = p.cast::<u32>().read_unaligned() as usize;
        if size >= std::mem::size_of::<T>() {
            // This header's struct (the common case), or the start of a
            // newer, larger one.
            Ok(p.read_unaligned())
        } else if size < min {
            Err(Error::InvalidArgument(unset))
        } else {
            let mut prefix = std::mem::MaybeUninit::<T>::zeroed();
            std::ptr::copy_nonoverlapping(p.cast::<u8>(), prefix.as_mut_ptr().cast::<u8>(), size);
            Ok(prefix.assume_init())
        }
    }
}
