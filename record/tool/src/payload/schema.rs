//! Registered payload schemas and enums, copied out of the producer's
//! structs at registration (the producer may free them after the call) and
//! laid out once: every entry of a static schema gets its offset.

use crate::probe;
use nvtx_protocol::payload::{
    entry_flag, entry_type as t, enum_field, schema_field, schema_id, schema_type, EnumAttr,
    SchemaAttr, SemanticsHeader, SemanticsTime, SEMANTIC_TIME,
};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// A schema's most entries, an enum's most values: more is refused.
const MAX_ENTRIES: usize = 4096;

/// One field of a schema.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub type_: u64,
    pub flags: u64,
    pub detail: u64,
    /// Static schemas: where it starts. Dynamic schemas: where it starts
    /// if the producer said so (else after the previous entry).
    pub offset: Option<usize>,
    /// A timestamp's time domain, from its time semantics.
    pub time_domain: Option<u64>,
}

impl Entry {
    pub fn array(&self) -> u64 {
        self.flags & entry_flag::ARRAY_MASK
    }
    pub fn is_string(&self) -> bool {
        (t::CSTRING..=t::CSTRING_UTF32).contains(&self.type_)
    }
    /// A string whose bytes are elsewhere: a pointer to them.
    pub fn is_string_pointer(&self) -> bool {
        self.is_string()
            && (self.flags & entry_flag::POINTER != 0 || (self.array() == 0 && self.detail == 0))
    }
}

#[derive(Debug)]
pub struct Schema {
    pub name: Option<String>,
    pub type_: u64,
    pub entries: Vec<Entry>,
    /// Static schemas: the size of one payload (its struct's `sizeof`).
    pub size: usize,
    pub align: usize,
}

#[derive(Debug)]
pub struct Enum {
    /// Name, value, is a flag.
    pub values: Vec<(String, u64, bool)>,
    pub size: usize,
}

#[derive(Debug)]
pub enum Definition {
    Schema(Schema),
    Enum(Enum),
}

/// Registered schemas and enums, by (domain, id).
type Registry = RwLock<HashMap<(u64, u64), Arc<Definition>>>;

/// Every domain's registered schemas and enums.
fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// The definition registered as `id` in `domain`.
pub fn find(domain: u64, id: u64) -> Option<Arc<Definition>> {
    registry().read().ok()?.get(&(domain, id)).cloned()
}

/// Ids the tool gives (the protocol's dynamic ids).
static NEXT_ID: AtomicU64 = AtomicU64::new(schema_id::DYNAMIC_START);

/// Stores `definition` as `asked` (a static id) or a new id; returns the id,
/// or `Err` when `asked` is not a valid static id or is taken.
fn store(domain: u64, asked: Option<u64>, definition: Definition) -> Result<u64, String> {
    let id = match asked {
        Some(id) if (schema_id::STATIC_START..schema_id::DYNAMIC_START).contains(&id) => id,
        Some(id) => return Err(format!("schema id {id} is not a static id")),
        None => NEXT_ID.fetch_add(1, Ordering::Relaxed),
    };
    let mut registry = registry().write().map_err(|_| "poisoned".to_string())?;
    match registry.entry((domain, id)) {
        std::collections::hash_map::Entry::Occupied(_) => {
            Err(format!("schema id {id} is registered already"))
        }
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(Arc::new(definition));
            Ok(id)
        }
    }
}

/// The time domain a chain of semantics names, if it has time semantics
/// (read fault-safe: an unreadable link ends the chain).
fn time_domain(mut semantics: *const c_void) -> Option<u64> {
    // A chain longer than this is taken as a cycle.
    for _ in 0..16 {
        // SAFETY: a semantic's header is integers and a pointer.
        let header = unsafe { probe::read(semantics.cast::<SemanticsHeader>())? };
        if header.semantic_id == SEMANTIC_TIME
            && header.struct_size as usize >= std::mem::size_of::<SemanticsTime>()
        {
            // SAFETY: a time semantic of that size: integers and a pointer.
            let time = unsafe { probe::read(semantics.cast::<SemanticsTime>())? };
            return Some(time.time_domain_id);
        }
        semantics = header.next.cast();
    }
    None
}

/// Registers the schema `a` describes; returns its id. The description is
/// read fault-safe (see `probe`): garbage is refused, never a crash.
pub fn register_schema(domain: u64, a: *const SchemaAttr) -> Result<u64, String> {
    // SAFETY: a schema's description is integers and pointers.
    let a = unsafe { probe::read(a) }.ok_or("no readable attributes")?;
    let has = |bit| a.field_mask & bit != 0;
    let required = schema_field::TYPE | schema_field::ENTRIES | schema_field::NUM_ENTRIES;
    if a.field_mask & required != required {
        return Err("a schema needs its type, entries and number of entries".into());
    }
    if a.entries.is_null() || a.num_entries == 0 || a.num_entries > MAX_ENTRIES {
        return Err(format!("{} entries", a.num_entries));
    }
    if !(schema_type::STATIC..=schema_type::UNION_WITH_INTERNAL_SELECTOR).contains(&a.type_) {
        return Err(format!("unknown schema type {}", a.type_));
    }
    // SAFETY: a schema's entry is integers and pointers.
    let entries: Vec<Entry> = unsafe { probe::slice(a.entries, a.num_entries) }
        .ok_or("unreadable entries")?
        .iter()
        .enumerate()
        .map(|(i, e)| Entry {
            name: probe::string(e.name).unwrap_or_else(|| format!("field{i}")),
            type_: e.type_,
            flags: e.flags,
            detail: e.array_or_union_detail,
            offset: (i == 0 || e.offset != 0).then_some(e.offset as usize),
            time_domain: time_domain(e.semantics),
        })
        .collect();
    let pack = if has(schema_field::ALIGNMENT) && a.pack_align > 0 {
        a.pack_align
    } else {
        usize::MAX
    };
    let mut schema = Schema {
        name: if has(schema_field::NAME) {
            probe::string(a.name)
        } else {
            None
        },
        type_: a.type_,
        entries,
        size: 0,
        align: 1,
    };
    lay_out(domain, &mut schema, pack)?;
    if a.type_ == schema_type::STATIC && has(schema_field::STATIC_SIZE) && a.payload_static_size > 0
    {
        schema.size = a.payload_static_size;
    }
    let asked = has(schema_field::SCHEMA_ID).then_some(a.schema_id);
    store(domain, asked, Definition::Schema(schema))
}

/// Registers the enum `a` describes; returns its id, as [`register_schema`].
pub fn register_enum(domain: u64, a: *const EnumAttr) -> Result<u64, String> {
    // SAFETY: an enum's description is integers and pointers.
    let a = unsafe { probe::read(a) }.ok_or("no readable attributes")?;
    let has = |bit| a.field_mask & bit != 0;
    let required = enum_field::ENTRIES | enum_field::NUM_ENTRIES | enum_field::SIZE;
    if a.field_mask & required != required {
        return Err("an enum needs its entries, their number and its size".into());
    }
    if a.entries.is_null()
        || a.num_entries > MAX_ENTRIES
        || !matches!(a.size_of_enum, 1 | 2 | 4 | 8)
    {
        return Err(format!(
            "{} values of {} bytes",
            a.num_entries, a.size_of_enum
        ));
    }
    // SAFETY: an enum's entry is integers and a pointer.
    let values = unsafe { probe::slice(a.entries, a.num_entries) }
        .ok_or("unreadable entries")?
        .iter()
        .map(|v| {
            (
                probe::string(v.name).unwrap_or_else(|| v.value.to_string()),
                v.value,
                v.is_flag != 0,
            )
        })
        .collect();
    let definition = Definition::Enum(Enum {
        values,
        size: a.size_of_enum,
    });
    store(
        domain,
        has(enum_field::SCHEMA_ID).then_some(a.schema_id),
        definition,
    )
}

/// Size and alignment of one value of a predefined type, as x86-64 Linux
/// compilers lay it out; `None` for an unknown type.
fn predefined(type_: u64) -> Option<(usize, usize)> {
    if let Some(info) = nvtx_protocol::ext::TYPE_INFO
        .get(type_ as usize)
        .filter(|i| type_ > 0 && i.size > 0)
    {
        return Some((info.size.into(), info.align.into()));
    }
    Some(match type_ {
        t::BYTE => (1, 1),
        t::INT128 | t::UINT128 | t::FLOAT128 => (16, 16),
        t::FLOAT16 | t::BF16 => (2, 2),
        t::FLOAT32 | t::TF32 | t::CATEGORY | t::COLOR_ARGB | t::PID_UINT32 | t::TID_UINT32 => {
            (4, 4)
        }
        t::FLOAT64
        | t::RANGE_ID
        | t::SCOPE_ID
        | t::PID_UINT64
        | t::TID_UINT64
        | t::REGISTERED_STRING_HANDLE => (8, 8),
        _ => return None,
    })
}

/// Size and alignment of one element of `type_` (a predefined type, a
/// string's code unit, a registered schema or enum).
pub fn element(domain: u64, type_: u64) -> Result<(usize, usize), String> {
    if let Some(unit) = string_unit(type_) {
        return Ok((unit, unit));
    }
    if let Some(size) = predefined(type_) {
        return Ok(size);
    }
    match find(domain, type_).as_deref() {
        Some(Definition::Schema(s)) if s.type_ != schema_type::DYNAMIC => Ok((s.size, s.align)),
        Some(Definition::Enum(e)) => Ok((e.size, e.size)),
        Some(Definition::Schema(_)) => Err(format!("dynamic schema {type_} nested in place")),
        None => Err(format!("unknown entry type {type_}")),
    }
}

/// A string type's code unit in bytes.
pub fn string_unit(type_: u64) -> Option<usize> {
    match type_ {
        t::CSTRING | t::CSTRING_UTF8 => Some(1),
        t::CSTRING_UTF16 => Some(2),
        t::CSTRING_UTF32 => Some(4),
        _ => None,
    }
}

/// Bytes an entry takes in place, and its alignment; `None` for one whose
/// length only its data says (dynamic schemas).
pub fn footprint(domain: u64, e: &Entry) -> Result<Option<(usize, usize)>, String> {
    if e.flags & entry_flag::POINTER != 0 || e.is_string_pointer() {
        return Ok(Some((8, 8)));
    }
    let (size, align) = element(domain, e.type_)?;
    let count = match (e.array(), e.is_string()) {
        (entry_flag::ARRAY_FIXED_SIZE, _) | (0, true) => e.detail,
        (0, false) => 1,
        _ => return Ok(None),
    };
    let bytes = usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(size))
        .filter(|&b| b <= 1 << 30)
        .ok_or_else(|| format!("entry {} is {count} elements long", e.name))?;
    Ok(Some((bytes, align)))
}

/// Gives each entry of a static schema (or union) its offset, and the
/// schema its size and alignment; checks every entry's type.
fn lay_out(domain: u64, s: &mut Schema, pack: usize) -> Result<(), String> {
    let union = matches!(
        s.type_,
        schema_type::UNION | schema_type::UNION_WITH_INTERNAL_SELECTOR
    );
    let mut cursor = 0usize;
    let mut end = 0usize;
    for e in &mut s.entries {
        let fp = footprint(domain, e)?;
        let Some((size, align)) = fp else {
            if s.type_ == schema_type::DYNAMIC {
                continue;
            }
            return Err(format!(
                "entry {}: a variable length in a static schema",
                e.name
            ));
        };
        let align = align.clamp(1, pack);
        s.align = s.align.max(align);
        if s.type_ == schema_type::DYNAMIC {
            continue;
        }
        let at = match e.offset {
            Some(at) => at,
            None if union => 0,
            None => cursor.next_multiple_of(align),
        };
        e.offset = Some(at);
        cursor = at.checked_add(size).ok_or("offset overflow")?;
        end = end.max(cursor);
    }
    s.size = end.next_multiple_of(s.align);
    Ok(())
}
