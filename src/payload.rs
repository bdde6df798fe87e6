//! Typed extended payloads (NVTX's payload extension): a `#[repr(C)]`
//! struct, declared with [`payload_struct!`](crate::payload_struct), whose
//! fields the tool shows by name next to the event that carries it.

use nvtx_protocol::payload::entry_type as t;
use std::ffi::CStr;
use std::marker::PhantomData;

/// A type a payload struct's field may have: NVTX's entry type for it.
///
/// # Safety
/// `TYPE` (and `LENGTH`, for arrays) must describe the type's layout.
pub unsafe trait PayloadField: Copy {
    /// NVTX's entry type (`NVTX_PAYLOAD_ENTRY_TYPE_*`).
    const TYPE: u64;
    /// For a fixed array: its length (else 0).
    const LENGTH: u64 = 0;
}

macro_rules! payload_fields {
    ($($ty:ty => $entry:expr),* $(,)?) => {$(
        // SAFETY: NVTX's entry type of this size and signedness.
        unsafe impl PayloadField for $ty {
            const TYPE: u64 = $entry;
        }
    )*};
}

payload_fields! {
    i8 => t::INT8, i16 => t::INT16, i32 => t::INT32, i64 => t::INT64,
    u8 => t::UINT8, u16 => t::UINT16, u32 => t::UINT32, u64 => t::UINT64,
    f32 => t::FLOAT, f64 => t::DOUBLE, usize => t::SIZE, isize => t::INT64,
    i128 => t::INT128, u128 => t::UINT128, bool => t::UINT8,
}

// SAFETY: `N` elements of `T`'s type, one after another.
unsafe impl<T: PayloadField, const N: usize> PayloadField for [T; N] {
    const TYPE: u64 = {
        assert!(T::LENGTH == 0, "arrays of arrays are not described");
        T::TYPE
    };
    const LENGTH: u64 = N as u64;
}

/// One field of a payload struct: its name, type and offset.
#[derive(Debug, Clone, Copy)]
pub struct PayloadFieldInfo {
    pub(crate) name: &'static CStr,
    pub(crate) type_: u64,
    pub(crate) length: u64,
    pub(crate) offset: usize,
}

impl PayloadFieldInfo {
    /// The field `name` of type `T` at `offset`.
    pub const fn of<T: PayloadField>(name: &'static CStr, offset: usize) -> Self {
        PayloadFieldInfo {
            name,
            type_: T::TYPE,
            length: T::LENGTH,
            offset,
        }
    }
}

/// A struct events can carry as a payload, its fields shown by name.
/// Declare it with [`payload_struct!`](crate::payload_struct), which
/// implements this.
///
/// # Safety
/// `FIELDS` must list fields of `Self` with their own types and offsets.
pub unsafe trait PayloadStruct: Copy + Sync + 'static {
    /// The struct's name (the tool may name an event after it).
    const NAME: &'static CStr;
    /// Its fields.
    const FIELDS: &'static [PayloadFieldInfo];
}

/// Declares a `#[repr(C)]`, `Copy` struct whose values events can carry as
/// payloads ([`EventAttributes::payload_struct`](crate::EventAttributes::payload_struct)),
/// each field shown by name. Fields may be integers, `f32`, `f64`, `bool`,
/// and fixed arrays of those.
///
/// ```
/// nvtxr::payload_struct! {
///     /// One all-reduce.
///     pub struct AllReduce {
///         pub bytes: u64,
///         pub ranks: u32,
///         pub ratio: f32,
///     }
/// }
/// let domain = nvtxr::Domain::new("comm");
/// let schema = domain.payload_schema::<AllReduce>();
/// let call = AllReduce { bytes: 1 << 20, ranks: 8, ratio: 0.5 };
/// domain.mark(nvtxr::EventAttributes::new("allreduce").payload_struct(&schema, &call));
/// ```
#[macro_export]
macro_rules! payload_struct {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[$field_meta:meta])* $field_vis:vis $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty),*
        }

        // SAFETY: every field of this `#[repr(C)]` struct, with its own type
        // and `offset_of!`.
        unsafe impl $crate::PayloadStruct for $name {
            const NAME: &'static ::std::ffi::CStr = $crate::__payload_c_str!(stringify!($name));
            const FIELDS: &'static [$crate::PayloadFieldInfo] = &[$(
                $crate::PayloadFieldInfo::of::<$ty>(
                    $crate::__payload_c_str!(stringify!($field)),
                    ::std::mem::offset_of!($name, $field),
                )
            ),*];
        }
    };
}

/// A C string from a string literal (an implementation detail of
/// [`payload_struct!`](crate::payload_struct)).
#[doc(hidden)]
#[macro_export]
macro_rules! __payload_c_str {
    ($s:expr) => {
        match ::std::ffi::CStr::from_bytes_with_nul(concat!($s, "\0").as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("a name with a NUL byte"),
        }
    };
}

/// `T`'s schema, registered in a domain: pass it with a value to
/// [`EventAttributes::payload_struct`](crate::EventAttributes::payload_struct).
/// With no tool (or a tool without the payload extension) its id is 0 and
/// the events carry nothing extra.
#[derive(Debug, Clone, Copy)]
pub struct PayloadSchema<'d, T> {
    pub(crate) id: u64,
    /// It belongs to a domain (`Domain::payload_schema`) and to `T`.
    _types: PhantomData<(&'d (), T)>,
}

impl<T> PayloadSchema<'_, T> {
    /// The schema registered as `id`.
    pub(crate) fn new(id: u64) -> Self {
        PayloadSchema {
            id,
            _types: PhantomData,
        }
    }

    /// The schema's id (0: not registered).
    pub fn id(&self) -> u64 {
        self.id
    }
}
