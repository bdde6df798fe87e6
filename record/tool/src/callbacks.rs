//! The functions the tool writes into a producer's slots: each turns its
//! arguments into an [`Event`] and records it on the calling thread.

use crate::events;
use crate::handles::{id_of, new_handle, next_id};
use crate::text::{Event, Text};
use nvtx_protocol::{attr, slot, EventAttributes, Handle, ToolFunctions};
use nvtxr_record_format::Kind;
use std::ffi::{c_char, c_int, c_void};

/// An event from an attribute struct (an absent or unreadable one gives an empty event).
unsafe fn from_attributes<'a>(
    kind: Kind,
    domain: u64,
    value: u64,
    a: *const EventAttributes,
) -> Event<'a> {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        let mut e = Event::simple(kind, domain, value, None);
        let Some(a) = a.as_ref() else { return e };
        if a.version < 1 || usize::from(a.size) < std::mem::size_of::<EventAttributes>() {
            return e;
        }
        e.category = a.category;
        e.color = (a.color_type == attr::COLOR_ARGB).then_some(a.color);
        if (attr::PAYLOAD_U64..=attr::PAYLOAD_F32).contains(&a.payload_type) {
            e.payload = (a.payload_type as u8, a.payload);
        }
        match a.message_type {
            attr::MESSAGE_ASCII => e.text = Text::from_c(a.message.cast()),
            attr::MESSAGE_UNICODE => e.text = Some(Text::Wide(a.message.cast())),
            attr::MESSAGE_REGISTERED => e.string = Some(id_of(a.message)),
            _ => {}
        }
        // Extended payloads (after the message: one of theirs only stands in
        // for a missing message).
        if a.payload_type == attr::PAYLOAD_EXT {
            let count = usize::try_from(a.reserved0).unwrap_or(0);
            crate::payload::attach(&mut e, a.payload as usize as *const _, count);
        }
        e
    }
}

fn text_event(kind: Kind, domain: u64, value: u64, text: Option<Text>) -> Event {
    Event::simple(kind, domain, value, text)
}

// Marks.
unsafe extern "C" fn mark_ex(a: *const EventAttributes) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record(&mut from_attributes(Kind::Mark, 0, 0, a));
    }
}
unsafe extern "C" fn mark_a(m: *const c_char) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record_simple(Kind::Mark, 0, 0, m);
    }
}
unsafe extern "C" fn mark_w(m: *const i32) {
    events::record(&mut text_event(Kind::Mark, 0, 0, Some(Text::Wide(m))));
}
unsafe extern "C" fn domain_mark_ex(d: Handle, a: *const EventAttributes) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record(&mut from_attributes(Kind::Mark, id_of(d), 0, a));
    }
}

// Start/end ranges.
fn start(mut e: Event) -> u64 {
    let id = e.value;
    events::record(&mut e);
    id
}
unsafe extern "C" fn range_start_ex(a: *const EventAttributes) -> u64 {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { start(from_attributes(Kind::Start, 0, next_id(), a)) }
}
unsafe extern "C" fn range_start_a(m: *const c_char) -> u64 {
    let id = next_id();
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { events::record_simple(Kind::Start, 0, id, m) };
    id
}
unsafe extern "C" fn range_start_w(m: *const i32) -> u64 {
    start(text_event(Kind::Start, 0, next_id(), Some(Text::Wide(m))))
}
unsafe extern "C" fn domain_range_start_ex(d: Handle, a: *const EventAttributes) -> u64 {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { start(from_attributes(Kind::Start, id_of(d), next_id(), a)) }
}
unsafe extern "C" fn range_end(id: u64) {
    // SAFETY: no text.
    unsafe { events::record_simple(Kind::End, 0, id, std::ptr::null()) };
}
unsafe extern "C" fn domain_range_end(d: Handle, id: u64) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record_simple(Kind::End, id_of(d), id, std::ptr::null());
    }
}

// Push/pop ranges: return the depth, as NVIDIA's tools do.
fn push(mut e: Event) -> c_int {
    events::record(&mut e)
}
fn pop(domain: u64) -> c_int {
    // SAFETY: no text.
    unsafe { events::record_simple(Kind::Pop, domain, 0, std::ptr::null()) }
}
unsafe extern "C" fn range_push_ex(a: *const EventAttributes) -> c_int {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { push(from_attributes(Kind::Push, 0, 0, a)) }
}
unsafe extern "C" fn range_push_a(m: *const c_char) -> c_int {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { events::record_simple(Kind::Push, 0, 0, m) }
}
unsafe extern "C" fn range_push_w(m: *const i32) -> c_int {
    push(text_event(Kind::Push, 0, 0, Some(Text::Wide(m))))
}
unsafe extern "C" fn domain_range_push_ex(d: Handle, a: *const EventAttributes) -> c_int {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { push(from_attributes(Kind::Push, id_of(d), 0, a)) }
}
unsafe extern "C" fn range_pop() -> c_int {
    pop(0)
}
unsafe extern "C" fn domain_range_pop(d: Handle) -> c_int {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { pop(id_of(d)) }
}

// Naming.
unsafe extern "C" fn name_category_a(category: u32, n: *const c_char) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record(&mut Event::simple(
            Kind::NameCategory,
            0,
            category.into(),
            Text::from_c(n),
        ));
    }
}
unsafe extern "C" fn name_category_w(category: u32, n: *const i32) {
    events::record(&mut Event::simple(
        Kind::NameCategory,
        0,
        category.into(),
        Some(Text::Wide(n)),
    ));
}
unsafe extern "C" fn domain_name_category_a(d: Handle, category: u32, n: *const c_char) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record(&mut Event::simple(
            Kind::NameCategory,
            id_of(d),
            category.into(),
            Text::from_c(n),
        ));
    }
}
unsafe extern "C" fn domain_name_category_w(d: Handle, category: u32, n: *const i32) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record(&mut Event::simple(
            Kind::NameCategory,
            id_of(d),
            category.into(),
            Some(Text::Wide(n)),
        ));
    }
}
unsafe extern "C" fn name_os_thread_a(tid: u32, n: *const c_char) {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe {
        events::record(&mut Event::simple(
            Kind::NameThread,
            0,
            tid.into(),
            Text::from_c(n),
        ));
    }
}
unsafe extern "C" fn name_os_thread_w(tid: u32, n: *const i32) {
    events::record(&mut Event::simple(
        Kind::NameThread,
        0,
        tid.into(),
        Some(Text::Wide(n)),
    ));
}

// Domains and registered strings.
fn create_domain(text: Option<Text>) -> *mut c_void {
    let id = next_id();
    events::record(&mut Event::simple(Kind::DomainCreate, id, 0, text));
    new_handle(id, None)
}
unsafe extern "C" fn domain_create_a(n: *const c_char) -> *mut c_void {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { create_domain(Text::from_c(n)) }
}
unsafe extern "C" fn domain_create_w(n: *const i32) -> *mut c_void {
    create_domain(Some(Text::Wide(n)))
}
fn register(domain: u64, text: Option<Text>) -> *mut c_void {
    let id = next_id();
    let mut e = Event::simple(Kind::RegisterString, domain, id, text);
    events::record(&mut e);
    let owned = e.text.map(|t| t.to_owned_string());
    new_handle(id, owned)
}
unsafe extern "C" fn domain_register_string_a(d: Handle, s: *const c_char) -> *mut c_void {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { register(id_of(d), Text::from_c(s)) }
}
unsafe extern "C" fn domain_register_string_w(d: Handle, s: *const i32) -> *mut c_void {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { register(id_of(d), Some(Text::Wide(s))) }
}
/// Domains stay known after destruction (their events are already recorded).
unsafe extern "C" fn domain_destroy(_d: Handle) {}
unsafe extern "C" fn initialize(_reserved: *const c_void) {}

/// The tool's functions, by slot (resources and the naming modules are not recorded).
pub fn functions() -> ToolFunctions {
    let mut f = ToolFunctions::new();
    f.set(slot::MARK_EX, mark_ex)
        .set(slot::MARK_A, mark_a)
        .set(slot::MARK_W, mark_w)
        .set(slot::RANGE_START_EX, range_start_ex)
        .set(slot::RANGE_START_A, range_start_a)
        .set(slot::RANGE_START_W, range_start_w)
        .set(slot::RANGE_END, range_end)
        .set(slot::RANGE_PUSH_EX, range_push_ex)
        .set(slot::RANGE_PUSH_A, range_push_a)
        .set(slot::RANGE_PUSH_W, range_push_w)
        .set(slot::RANGE_POP, range_pop)
        .set(slot::NAME_CATEGORY_A, name_category_a)
        .set(slot::NAME_CATEGORY_W, name_category_w)
        .set(slot::NAME_OS_THREAD_A, name_os_thread_a)
        .set(slot::NAME_OS_THREAD_W, name_os_thread_w)
        .set(slot::DOMAIN_MARK_EX, domain_mark_ex)
        .set(slot::DOMAIN_RANGE_START_EX, domain_range_start_ex)
        .set(slot::DOMAIN_RANGE_END, domain_range_end)
        .set(slot::DOMAIN_RANGE_PUSH_EX, domain_range_push_ex)
        .set(slot::DOMAIN_RANGE_POP, domain_range_pop)
        .set(slot::DOMAIN_NAME_CATEGORY_A, domain_name_category_a)
        .set(slot::DOMAIN_NAME_CATEGORY_W, domain_name_category_w)
        .set(slot::DOMAIN_REGISTER_STRING_A, domain_register_string_a)
        .set(slot::DOMAIN_REGISTER_STRING_W, domain_register_string_w)
        .set(slot::DOMAIN_CREATE_A, domain_create_a)
        .set(slot::DOMAIN_CREATE_W, domain_create_w)
        .set(slot::DOMAIN_DESTROY, domain_destroy)
        .set(slot::INITIALIZE, initialize);
    f
}
