//! Fault-safe reads of a producer's memory, for the registration calls
//! (counters, schemas, enums, memory heaps and regions, time domains):
//! a struct left uninitialized, or a name pointing nowhere, is read as
//! unreadable instead of killing the program. They go through
//! `process_vm_readv` on this process, which returns EFAULT where a plain
//! read would fault. Registrations are rare; events keep their plain reads.

use std::ffi::c_char;
use std::mem::{size_of, MaybeUninit};

/// What a name that cannot be read is recorded as.
pub const UNREADABLE: &str = "(unreadable)";

/// The longest registered name read; longer ones are cut.
const MAX_NAME: usize = 4096;

/// Copies `out.len()` bytes from `addr` into `out`; false if any of them
/// cannot be read (unmapped, NULL, protected).
fn copy(addr: usize, out: &mut [u8]) -> bool {
    if out.is_empty() {
        return true;
    }
    if addr == 0 {
        return false;
    }
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: out.len(),
    };
    // SAFETY: `local` is `out`; the kernel checks `remote` and fails with
    // EFAULT instead of faulting. Reading our own memory needs no privilege.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == out.len() as isize
}

/// A copy of the `T` at `p`, or `None` for NULL or unreadable memory.
///
/// # Safety
/// Any bytes are a valid `T` (a C struct of integers and pointers).
pub unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
    let mut value = MaybeUninit::<T>::uninit();
    // SAFETY: `value`'s bytes, written whole by `copy` or left unread.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(value.as_mut_ptr().cast::<u8>(), size_of::<T>()) };
    // SAFETY: copied in full, and any bytes are a valid `T` (the contract).
    copy(p as usize, bytes).then(|| unsafe { value.assume_init() })
}

/// Copies of `count` `T`s at `p`, or `None` for NULL or unreadable memory.
///
/// # Safety
/// As [`read`].
pub unsafe fn slice<T: Copy>(p: *const T, count: usize) -> Option<Vec<T>> {
    let mut values = Vec::<T>::with_capacity(count);
    let len = count.checked_mul(size_of::<T>())?;
    // SAFETY: the vector's capacity, `len` bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<u8>(), len) };
    if !copy(p as usize, bytes) {
        return None;
    }
    // SAFETY: `count` values copied in full; any bytes are valid (the contract).
    unsafe { values.set_len(count) };
    Some(values)
}

/// The C string at `s` (cut at [`MAX_NAME`] bytes), `None` for NULL, or
/// [`UNREADABLE`] when it cannot be read.
pub fn string(s: *const c_char) -> Option<String> {
    let bytes = units(s as usize, 1)?;
    Some(bytes.map_or_else(
        || UNREADABLE.into(),
        |b| String::from_utf8_lossy(&b).into_owned(),
    ))
}

/// The `wchar_t` (UTF-32) string at `s`, as [`string`].
pub fn wide(s: *const i32) -> Option<String> {
    let bytes = units(s as usize, 4)?;
    Some(bytes.map_or_else(
        || UNREADABLE.into(),
        |b| {
            b.chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .map(|u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect()
        },
    ))
}

/// The units (`unit` bytes each) at `addr` before the first zero one, cut
/// at [`MAX_NAME`] bytes: `None` for NULL, `Some(None)` when unreadable.
/// Read a page at a time, so a string that ends just before unmapped memory
/// is read whole.
fn units(addr: usize, unit: usize) -> Option<Option<Vec<u8>>> {
    const PAGE: usize = 4096;
    if addr == 0 {
        return None;
    }
    if addr % unit != 0 {
        return Some(None);
    }
    let mut bytes = Vec::new();
    let mut at = addr;
    let mut buffer = [0u8; PAGE];
    while bytes.len() < MAX_NAME {
        let piece = (PAGE - at % PAGE).min(MAX_NAME - bytes.len());
        if !copy(at, &mut buffer[..piece]) {
            return Some(None);
        }
        let read = &buffer[..piece];
        match read
            .chunks_exact(unit)
            .position(|u| u.iter().all(|&b| b == 0))
        {
            Some(end) => {
                bytes.extend_from_slice(&read[..end * unit]);
                return Some(Some(bytes));
            }
            None => bytes.extend_from_slice(read),
        }
        at += piece;
    }
    Some(Some(bytes))
}

/// Writes `value` at `p` in the producer's memory; false (nothing
/// written) where it cannot be written.
pub fn write<T: Copy>(p: *mut T, value: T) -> bool {
    if p.is_null() {
        return false;
    }
    let local = libc::iovec {
        iov_base: (&value as *const T).cast_mut().cast(),
        iov_len: size_of::<T>(),
    };
    let remote = libc::iovec {
        iov_base: p.cast(),
        iov_len: size_of::<T>(),
    };
    // SAFETY: `local` is `value`; the kernel checks `remote` (EFAULT
    // instead of a fault).
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == size_of::<T>() as isize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two pages, the second unmapped: the address of the first.
    fn page_before_a_hole() -> *mut u8 {
        // SAFETY: a fresh anonymous mapping, half of it unmapped again.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                8192,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            libc::munmap(p.cast::<u8>().add(4096).cast(), 4096);
            p.cast()
        }
    }

    #[test]
    fn garbage_reads_as_unreadable_and_good_memory_as_itself() {
        let page = page_before_a_hole();
        let hole = page.wrapping_add(4096);
        // A name that ends one byte before the hole is read whole.
        // SAFETY: the last three bytes of the mapped page.
        unsafe { std::ptr::copy_nonoverlapping(c"ab".as_ptr().cast(), page.add(4093), 3) };
        assert_eq!(string(page.wrapping_add(4093).cast()), Some("ab".into()));
        // One that runs into it is unreadable.
        // SAFETY: the last byte of the mapped page.
        unsafe { page.add(4095).write(b'x') };
        let unreadable = Some(UNREADABLE.into());
        assert_eq!(string(page.wrapping_add(4095).cast()), unreadable);
        assert_eq!(string(hole.cast()), unreadable);
        assert_eq!(string(std::ptr::null()), None);
        assert_eq!(string(16 as *const c_char), unreadable);
        let good = [7u64, 8, 9];
        // SAFETY: u64s.
        unsafe {
            assert_eq!(read(&good[1]), Some(8));
            assert_eq!(slice(good.as_ptr(), 3), Some(good.to_vec()));
            assert_eq!(read(hole.cast::<u64>()), None);
            assert_eq!(slice(page.wrapping_add(4088).cast::<u64>(), 2), None);
            assert_eq!(read(std::ptr::null::<u64>()), None);
        }
        let wide_name: Vec<i32> = "wé\0".chars().map(|c| c as i32).collect();
        assert_eq!(wide(wide_name.as_ptr()), Some("wé".into()));
        assert_eq!(wide(hole.cast()), Some(UNREADABLE.into()));
        let mut out = 0u64;
        assert!(write(&mut out, 5));
        assert_eq!(out, 5);
        assert!(!write(hole.cast::<u64>(), 5));
        let long = vec![b'n'; 3 * MAX_NAME];
        let mut c = long.clone();
        c.push(0);
        assert_eq!(string(c.as_ptr().cast()).unwrap().len(), MAX_NAME);
    }
}
