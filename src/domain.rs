//! Domains and their registered strings.
//!
//! nvtxr's handles stay valid with or without a tool and are never freed:
//! domains are interned by name (creating "A" twice gives one handle with a
//! count of two), registered strings are interned per domain by text. Memory is
//! bounded by the number of distinct names and texts, and a handle used after
//! its domain was destroyed is detected instead of being a dangling pointer.

use crate::error::Error;
use crate::loader::{self, protocol::core, protocol::core2, slots};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard};

/// One domain. `name == None` is the default (global) domain.
pub struct DomainState {
    name: Option<CString>,
    /// The tool's handle for the domain (NULL with no tool, and for the default domain).
    tool_handle: AtomicPtr<c_void>,
    live: AtomicBool,
    lifecycle: Mutex<Lifecycle>,
}

struct Lifecycle {
    /// Creates minus destroys.
    count: u32,
    strings: BTreeMap<CString, &'static StringState>,
}

/// One registered string of one domain.
pub struct StringState {
    domain: &'static DomainState,
    text: CString,
    tool_handle: AtomicPtr<c_void>,
}

static DEFAULT: DomainState = DomainState::new(None, 1);
static DOMAINS: Mutex<BTreeMap<CString, &'static DomainState>> = Mutex::new(BTreeMap::new());

/// Fork safety. `create`, `destroy` and `register_string` hold these locks
/// while they call the tool; a child forked by another thread meanwhile would
/// inherit them locked and hang on its first domain call. So the forking
/// thread takes every one of them just before `fork()` (waiting for such a
/// call to finish) and releases them just after, in the parent and in the child.
mod fork {
    use super::{lock, Lifecycle, DEFAULT, DOMAINS};
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::ffi::CString;
    use std::sync::{MutexGuard, Once};

    type Held = (
        MutexGuard<'static, BTreeMap<CString, &'static super::DomainState>>,
        Vec<MutexGuard<'static, Lifecycle>>,
    );

    thread_local! {
        static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
    }

    extern "C" {
        fn pthread_atfork(
            prepare: Option<extern "C" fn()>,
            parent: Option<extern "C" fn()>,
            child: Option<extern "C" fn()>,
        ) -> i32;
    }

    /// Same order as `create`: the registry, then each domain.
    extern "C" fn before() {
        let domains = lock(&DOMAINS);
        let domain_locks = std::iter::once(&DEFAULT)
            .chain(domains.values().copied())
            .map(|d| lock(&d.lifecycle))
            .collect();
        HELD.with(|h| *h.borrow_mut() = Some((domains, domain_locks)));
    }

    extern "C" fn after() {
        HELD.with(|h| drop(h.borrow_mut().take()));
    }

    /// Registers the handlers, once, before any of these locks is first taken.
    pub(super) fn protect() {
        static ONCE: Once = Once::new();
        // SAFETY: registers two `extern "C"` functions with no preconditions.
        ONCE.call_once(|| unsafe {
            pthread_atfork(Some(before), Some(after), Some(after));
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves the map consistent: keep using it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

type DomainCreateA = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type DomainDestroy = unsafe extern "C" fn(*mut c_void);
type DomainRegisterStringA = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
type NameCategoryA = unsafe extern "C" fn(u32, *const c_char);
type DomainNameCategoryA = unsafe extern "C" fn(*mut c_void, u32, *const c_char);

impl DomainState {
    const fn new(name: Option<CString>, count: u32) -> Self {
        Self {
            name,
            tool_handle: AtomicPtr::new(ptr::null_mut()),
            live: AtomicBool::new(true),
            lifecycle: Mutex::new(Lifecycle {
                count,
                strings: BTreeMap::new(),
            }),
        }
    }

    /// The default domain: never destroyed, tool handle NULL.
    pub fn default_domain() -> &'static DomainState {
        &DEFAULT
    }

    /// Creates (or takes one more count on) the domain named `name`.
    pub fn create(name: &CStr) -> &'static DomainState {
        fork::protect();
        let attached = loader::tool_attached();
        let mut domains = lock(&DOMAINS);
        let domain = *domains
            .entry(name.to_owned())
            .or_insert_with(|| Box::leak(Box::new(DomainState::new(Some(name.to_owned()), 0))));
        let mut life = lock(&domain.lifecycle);
        life.count += 1;
        if life.count == 1 {
            // First create, or revived after being destroyed.
            if attached {
                // SAFETY: slot type fixed by the protocol; name is NUL-terminated.
                let handle = unsafe { slots::CORE2.get::<DomainCreateA>(core2::DOMAIN_CREATE_A) }
                    .map_or(ptr::null_mut(), |f| unsafe { f(name.as_ptr()) });
                domain.tool_handle.store(handle, Ordering::Relaxed);
                for s in life.strings.values() {
                    s.register_with_tool(handle);
                }
            }
            domain.live.store(true, Ordering::Release);
        }
        domain
    }

    /// Gives back one count; the last one destroys the domain in the tool.
    pub fn destroy(&'static self) -> Result<(), Error> {
        if self.name.is_none() {
            return Ok(()); // The default domain cannot be destroyed.
        }
        let mut life = lock(&self.lifecycle);
        if life.count == 0 {
            return Err(Error::Destroyed);
        }
        life.count -= 1;
        if life.count == 0 {
            self.live.store(false, Ordering::Release);
            let handle = self.tool_handle.swap(ptr::null_mut(), Ordering::Relaxed);
            if loader::tool_attached() {
                // SAFETY: slot type fixed by the protocol.
                if let Some(f) = unsafe { slots::CORE2.get::<DomainDestroy>(core2::DOMAIN_DESTROY) }
                {
                    unsafe { f(handle) };
                }
            }
        }
        Ok(())
    }

    /// The name given at creation; `None` for the default domain.
    pub fn name(&self) -> Option<&CStr> {
        self.name.as_deref()
    }

    pub fn is_default(&self) -> bool {
        self.name.is_none()
    }

    /// The tool's handle, or `Err(Destroyed)`.
    #[inline]
    pub fn tool_handle(&self) -> Result<*mut c_void, Error> {
        if self.live.load(Ordering::Acquire) {
            Ok(self.tool_handle.load(Ordering::Relaxed))
        } else {
            Err(Error::Destroyed)
        }
    }

    /// Registers `text` once; later calls with the same text return the same string.
    pub fn register_string(&'static self, text: &CStr) -> Result<&'static StringState, Error> {
        fork::protect();
        let mut life = lock(&self.lifecycle);
        if !self.live.load(Ordering::Acquire) {
            return Err(Error::Destroyed);
        }
        if let Some(s) = life.strings.get(text) {
            return Ok(s);
        }
        let s: &'static StringState = Box::leak(Box::new(StringState {
            domain: self,
            text: text.to_owned(),
            tool_handle: AtomicPtr::new(ptr::null_mut()),
        }));
        if loader::tool_attached() {
            s.register_with_tool(self.tool_handle.load(Ordering::Relaxed));
        }
        life.strings.insert(text.to_owned(), s);
        Ok(s)
    }

    /// Names category `id` in this domain.
    ///
    /// # Safety
    /// `name` must be a valid NUL-terminated string.
    pub unsafe fn name_category(&self, id: u32, name: *const c_char) -> Result<(), Error> {
        let handle = self.tool_handle()?;
        if self.is_default() {
            if let Some(f) = slots::CORE.get::<NameCategoryA>(core::NAME_CATEGORY_A) {
                f(id, name);
            }
        } else if let Some(f) =
            slots::CORE2.get::<DomainNameCategoryA>(core2::DOMAIN_NAME_CATEGORY_A)
        {
            f(handle, id, name);
        }
        Ok(())
    }
}

impl StringState {
    fn register_with_tool(&self, domain_handle: *mut c_void) {
        // SAFETY: slot type fixed by the protocol; text is NUL-terminated.
        let handle =
            unsafe { slots::CORE2.get::<DomainRegisterStringA>(core2::DOMAIN_REGISTER_STRING_A) }
                .map_or(ptr::null_mut(), |f| unsafe {
                    f(domain_handle, self.text.as_ptr())
                });
        self.tool_handle.store(handle, Ordering::Relaxed);
    }

    /// The domain the string was registered in.
    pub fn domain(&self) -> &'static DomainState {
        self.domain
    }

    /// The registered text.
    pub fn text(&self) -> &CStr {
        &self.text
    }

    #[inline]
    pub(crate) fn tool_handle(&self) -> *mut c_void {
        self.tool_handle.load(Ordering::Relaxed)
    }
}
