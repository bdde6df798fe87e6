//! What is open on a thread as the replay goes: its push/pop ranges (every
//! domain), the start/end ranges waiting for their end, and which of them is
//! the innermost around a launch.

use super::replay::Decoded;
use super::resolve::Resolver;
use super::{Details, Projection, RangeName};

/// The innermost range around a launch: a push/pop range (its details, to
/// look its name up without copying it) or a start/end range's name.
pub(super) enum Innermost<'s> {
    Pushed(&'s Details),
    Started(RangeName),
}
use hashbrown::HashMap;

/// A thread's open push/pop ranges, per domain: their start and details
/// resolved at the push. The default domain's (most ranges) apart.
#[derive(Default)]
pub(super) struct Stacks {
    default: Vec<(u64, Details)>,
    domains: HashMap<u64, Vec<(u64, Details)>>,
}

impl Stacks {
    #[inline(always)]
    pub fn of(&mut self, domain: u64) -> &mut Vec<(u64, Details)> {
        match domain {
            0 => &mut self.default,
            _ => self.domains.entry(domain).or_default(),
        }
    }

    /// Every open range, to add GPU work to.
    pub fn open_mut(&mut self) -> impl Iterator<Item = &mut Details> {
        self.default
            .iter_mut()
            .chain(self.domains.values_mut().flatten())
            .map(|(_, d)| d)
    }

    /// The innermost open push/pop range: the last opened, of any domain.
    fn innermost(&self) -> Option<&(u64, Details)> {
        (self.domains.values().filter_map(|s| s.last()))
            .chain(self.default.last())
            .max_by_key(|(start, _)| *start)
    }

    /// Every stack, the default domain's first, then by domain id.
    pub fn into_open(self) -> impl Iterator<Item = Vec<(u64, Details)>> {
        let mut domains: Vec<_> = self.domains.into_iter().collect();
        domains.sort_by_key(|(id, _)| *id);
        std::iter::once(self.default).chain(domains.into_iter().map(|(_, s)| s))
    }
}

/// A start/end range waiting for its end.
pub(super) struct Started {
    /// The thread that started it.
    pub tid: u32,
    pub start: Decoded<'static>,
    /// Its name, once a launch needed it.
    pub name: Option<RangeName>,
    /// The GPU work launched on that thread since.
    pub gpu: Option<Box<Projection>>,
    /// The launches (indices) it is the innermost range of, each with the
    /// range named instead should it end on another thread.
    pub innermost_of: Vec<(usize, Option<RangeName>)>,
}

impl Started {
    fn name(&mut self, resolve: &Resolver) -> RangeName {
        (self.name.get_or_insert_with(|| {
            let d = resolve.details(&self.start);
            RangeName::new(&d.domain, &d.name)
        }))
        .clone()
    }
}

/// The name of the innermost range open around launch `index` on its
/// thread: the last opened of its open push/pop ranges (every domain) and
/// the start/end ranges it started and has not ended. A start/end range
/// counts only if it ends on this thread too (as for the GPU projection):
/// it keeps the launch, with the name to put back if it ends elsewhere
/// (the next range out; should that be a start/end range ending elsewhere
/// too, the launch keeps its name).
pub(super) fn innermost<'s>(
    stacks: &'s Stacks,
    started_here: &[(u64, u64)],
    starts: &mut HashMap<(u64, u64), Started>,
    index: usize,
    resolve: &Resolver,
) -> Option<Innermost<'s>> {
    // The two start/end ranges opened last (start time, key).
    type Opened = Option<(u64, (u64, u64))>;
    let (mut last, mut before): (Opened, Opened) = (None, None);
    for key in started_here {
        let Some(open) = starts.get(key) else {
            continue;
        };
        let at = (open.start.timestamp, *key);
        if last.is_none_or(|l| at > l) {
            (before, last) = (last, Some(at));
        } else if before.is_none_or(|b| at > b) {
            before = Some(at);
        }
    }
    let pushed = stacks.innermost();
    let pushed_at = pushed.map(|(at, _)| *at);
    let pushed_name = || pushed.map(|(_, d)| RangeName::new(&d.domain, &d.name));
    let Some((_, key)) = last.filter(|(at, _)| pushed_at.is_none_or(|p| *at > p)) else {
        return pushed.map(|(_, d)| Innermost::Pushed(d));
    };
    let instead = match before.filter(|(at, _)| pushed_at.is_none_or(|p| *at > p)) {
        Some((_, outer)) => starts.get_mut(&outer).map(|o| o.name(resolve)),
        None => pushed_name(),
    };
    let open = starts.get_mut(&key).expect("found above");
    open.innermost_of.push((index, instead));
    Some(Innermost::Started(open.name(resolve)))
}
