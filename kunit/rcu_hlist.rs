// SPDX-License-Identifier: GPL-2.0
//! The RCU hash chains the flow table is built on (`kernel_ext/rcu_hlist.rs`):
//! insertion and removal keep every chain walkable; a reader standing on an
//! entry that is removed goes on where it was; a reader standing on one
//! that moves to another chain (a Flow ID change) walks its own chain again
//! and misses nothing that stayed in it; and a soft-hrtimer reader walking
//! while a process-context writer inserts, moves and frees entries (a grace
//! period after removal) finds every entry that stays and never sees a
//! freed one (KASAN on the debug kernel; a poisoned mark on both).

use super::run;
use crate::kernel_ext::bh::{self, new_bh_lock, Bh, BhLock};
use crate::kernel_ext::hrtimer::HrTimer;
use crate::kernel_ext::rcu;
use crate::kernel_ext::rcu_hlist::{Chains, Link};
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::bindings;
use kernel::prelude::*;

const LIVE: u32 = 0x5eed_f10e;
const FREED: u32 = 0xdead_f10e;

/// An entry: its key, a mark that says it is alive, and its link.
struct Item {
    key: AtomicU32,
    mark: AtomicU32,
    link: Link,
}

impl Item {
    fn new(key: u32) -> Self {
        Item {
            key: AtomicU32::new(key),
            mark: AtomicU32::new(LIVE),
            link: Link::new(),
        }
    }

    fn key(&self) -> u32 {
        self.key.load(Ordering::Relaxed)
    }
}

impl Drop for Item {
    fn drop(&mut self) {
        self.mark.store(FREED, Ordering::Relaxed);
    }
}

/// The item whose link `l` is (every link in these cases is an `Item`'s).
fn item(l: &Link) -> &Item {
    // SAFETY: every link these cases put in chains is the `link` field of
    // an `Item`, alive for as long as the link is reachable.
    unsafe { &*kernel::container_of!(l, Item, link) }
}

/// The keys of chain `b`, in order, as a reader sees them.
fn keys<const N: usize>(c: &Chains<N>, b: usize, out: &mut [u32]) -> usize {
    let g = rcu::read_lock();
    let mut n = 0;
    c.find(b, &g, |l| {
        if let Some(k) = out.get_mut(n) {
            *k = item(l).key();
        }
        n += 1;
        None::<()>
    });
    n
}

fn add_remove(w: &mut dyn Write) -> bool {
    let (a, b, x) = (Item::new(1), Item::new(2), Item::new(3));
    let Ok(c) = Chains::<4>::new() else {
        let _ = write!(w, "allocation failed");
        return false;
    };
    let mut k = [0u32; 4];
    // SAFETY: this case is the only writer; the items are declared before
    // the chains, so they outlive every walk.
    unsafe {
        c.add(0, &a.link);
        c.add(0, &b.link);
        c.add(4, &x.link); // bucket 4 is bucket 0 of 4 chains
    }
    let n = keys(&c, 0, &mut k);
    let ok1 = n == 3 && k[..3] == [3, 2, 1] && a.link.is_linked();
    // The middle, then the head, then the last.
    // SAFETY: as above.
    unsafe { c.del(&b.link) };
    let n2 = keys(&c, 0, &mut k);
    let ok2 = n2 == 2 && k[..2] == [3, 1] && !b.link.is_linked();
    // SAFETY: as above.
    unsafe {
        c.del(&x.link);
        c.del(&x.link); // not linked: nothing
        c.del(&a.link);
    }
    let n3 = keys(&c, 0, &mut k);
    // Linked again, into another chain.
    // SAFETY: as above.
    unsafe { c.add(1, &a.link) };
    let n4 = keys(&c, 1, &mut k);
    let ok4 = n4 == 1 && k[0] == 1 && keys(&c, 0, &mut k) == 0;
    if !(ok1 && ok2 && n3 == 0 && ok4) {
        let _ = write!(
            w,
            "chain 0 held {n} (want 3: 3 2 1), then {n2} (want 2: 3 1), then {n3} (want 0); re-added: {n4}"
        );
        return false;
    }
    true
}

#[no_mangle]
extern "C" fn crem_kunit_hlist_add_remove(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, add_remove)
}

/// A walk of chain 0 (`moving` at its head, then `stays`), during which,
/// on `moving`, `during` changes the chains. Returns the keys seen in
/// order and what the walk found (looking for `stays`).
fn walk_while(
    c: &Chains<4>,
    moving: &Item,
    stays: &Item,
    seen: &mut [u32; 8],
    during: impl FnOnce(),
) -> (usize, Option<u32>) {
    let mut n = 0;
    let mut during = Some(during);
    let g = rcu::read_lock();
    let found = c.find(0, &g, |l| {
        let it = item(l);
        if let Some(s) = seen.get_mut(n) {
            *s = it.key();
        }
        n += 1;
        if core::ptr::eq(it, moving) {
            if let Some(d) = during.take() {
                d();
            }
        }
        (core::ptr::eq(it, stays)).then(|| it.key())
    });
    (n, found)
}

fn moved_entry(w: &mut dyn Write) -> bool {
    let (m, s, x) = (Item::new(1), Item::new(2), Item::new(3));
    let Ok(c) = Chains::<4>::new() else {
        let _ = write!(w, "allocation failed");
        return false;
    };
    let mut seen = [0u32; 8];
    // Chain 0: m, s; chain 1: x.
    // SAFETY: this case is the only writer (also inside the walk, which
    // is on this CPU); the items outlive the chains' use.
    unsafe {
        c.add(0, &s.link);
        c.add(0, &m.link);
        c.add(1, &x.link);
    }
    // Removed under the reader: it goes on from where `m` was.
    // SAFETY: as above.
    let (n1, f1) = walk_while(&c, &m, &s, &mut seen, || unsafe { c.del(&m.link) });
    let ok1 = n1 == 2 && seen[..2] == [1, 2] && f1 == Some(2);
    // Back at the head of chain 0, then moved under the reader to chain
    // 1: the walk follows it into chain 1 (x), ends on chain 1's marker,
    // and walks chain 0 again (s).
    // SAFETY: as above.
    unsafe { c.add(0, &m.link) };
    // SAFETY: as above.
    let (n2, f2) = walk_while(&c, &m, &s, &mut seen, || unsafe { c.move_to(1, &m.link) });
    let ok2 = n2 == 3 && seen[..3] == [1, 3, 2] && f2 == Some(2);
    // Moved under the reader when nothing else is in chain 0: a walk for
    // something absent follows it into chain 1 (x), then finds chain 0
    // empty, and ends (None).
    // SAFETY: as above.
    unsafe {
        c.del(&s.link);
        c.move_to(0, &m.link);
    }
    let absent = Item::new(9);
    // SAFETY: as above.
    let (n3, f3) = walk_while(&c, &m, &absent, &mut seen, || unsafe {
        c.move_to(1, &m.link)
    });
    let ok3 = n3 == 2 && seen[..2] == [1, 3] && f3.is_none();
    if !(ok1 && ok2 && ok3) {
        let _ = write!(
            w,
            "removed: {n1} seen, found {f1:?} (want 2 seen, 2); moved: {n2} seen ({:?}), found {f2:?} (want 1 3 2, 2); moved, absent: {n3} seen, found {f3:?} (want 2, None)",
            &seen[..n2.min(8)]
        );
        return false;
    }
    true
}

#[no_mangle]
extern "C" fn crem_kunit_hlist_moved_entry(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, moved_entry)
}

/// Chains, entries that stay, and a soft-hrtimer reader of them.
const CHAINS: usize = 8;
const STAYING: usize = 16;
const READ_EVERY_NS: u64 = 20_000;

#[pin_data]
struct Race {
    /// First: cancelled (and its callback waited for) before the rest goes.
    #[pin]
    timer: HrTimer,
    chains: Chains<CHAINS>,
    /// Keys 0..STAYING, in chain key % CHAINS for the whole run.
    staying: KVec<Item>,
    /// Serialises the writers (the table's lock in `table.rs`).
    #[pin]
    writers: BhLock<()>,
    stop: AtomicBool,
    walks: AtomicU32,
    missed: AtomicU32,
    freed_seen: AtomicU32,
}

fn now() -> u64 {
    // SAFETY: `ktime_get` only reads the timekeeper.
    u64::try_from(unsafe { bindings::ktime_get() }).unwrap_or(0)
}

unsafe extern "C" fn race_reader(t: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: only `Race::new` makes timers with this callback: `t` is a
    // race's `timer`, cancelled before the race goes.
    let r = unsafe { &*kernel::container_of!(t, Race, timer) };
    // SAFETY: soft hrtimers expire in softirq, BH off: an RCU reader.
    let bh = unsafe { Bh::assume() };
    for it in r.staying.iter() {
        let key = it.key();
        let found = r.chains.find(key as usize, &bh, |l| {
            let other = item(l);
            if other.mark.load(Ordering::Relaxed) != LIVE {
                r.freed_seen.fetch_add(1, Ordering::Relaxed);
            }
            (other.key() == key).then_some(())
        });
        if found.is_none() {
            r.missed.fetch_add(1, Ordering::Relaxed);
        }
    }
    r.walks.fetch_add(1, Ordering::Relaxed);
    if !r.stop.load(Ordering::Relaxed) {
        r.timer.start_abs(now() + READ_EVERY_NS);
    }
    bindings::hrtimer_restart_HRTIMER_NORESTART
}

impl Race {
    fn new() -> Result<Pin<KBox<Self>>> {
        let chains = Chains::<CHAINS>::new()?;
        let mut staying = KVec::with_capacity(STAYING, GFP_KERNEL)?;
        for k in 0..STAYING as u32 {
            staying.push(Item::new(k), GFP_KERNEL)?;
        }
        KBox::pin_init(
            pin_init!(Race {
                // SAFETY: the `timer` field of a `Race`, as `race_reader`
                // requires.
                timer <- unsafe { HrTimer::new(race_reader) },
                chains,
                staying,
                writers <- new_bh_lock!((), "crem_kunit_hlist_writers"),
                stop: AtomicBool::new(false),
                walks: AtomicU32::new(0),
                missed: AtomicU32::new(0),
                freed_seen: AtomicU32::new(0),
            }),
            GFP_KERNEL,
        )
    }
}

/// Keys of the entries the writer adds and frees: never a staying one's.
const MOVING_KEY: u32 = 1000;
const ROUNDS: u32 = 100;
const BATCH: usize = 8;

fn readers_race(w: &mut dyn Write) -> bool {
    let Ok(r) = Race::new() else {
        let _ = write!(w, "allocation failed");
        return false;
    };
    {
        let bh = bh::disable();
        let _g = r.writers.lock(&bh);
        for it in r.staying.iter() {
            // SAFETY: writers serialised (`writers`); the staying items
            // live in the race, which outlives its chains' readers (the
            // timer is cancelled first).
            unsafe { r.chains.add(it.key() as usize, &it.link) };
        }
    }
    r.timer.start_abs(now());
    let mut added = 0u32;
    let mut failed = false;
    for round in 0..ROUNDS {
        // A batch of entries added to every chain, moved between chains
        // (their key changes), then removed; freed a grace period later.
        let mut batch: KVec<KBox<Item>> = KVec::new();
        for i in 0..BATCH {
            let key = MOVING_KEY + round * BATCH as u32 + i as u32;
            let Ok(it) = KBox::new(Item::new(key), GFP_KERNEL) else {
                failed = true;
                break;
            };
            {
                let bh = bh::disable();
                let _g = r.writers.lock(&bh);
                // SAFETY: writers serialised; the box is freed only after
                // it is unlinked and a grace period has passed (below).
                unsafe { r.chains.add(key as usize, &it.link) };
            }
            if batch.push(it, GFP_KERNEL).is_err() {
                failed = true;
                break;
            }
            added += 1;
        }
        for it in batch.iter() {
            let bh = bh::disable();
            let _g = r.writers.lock(&bh);
            let key = it.key() + 1;
            it.key.store(key, Ordering::Relaxed);
            // SAFETY: as above.
            unsafe { r.chains.move_to(key as usize, &it.link) };
        }
        // The reader walks them moved.
        // SAFETY: KUnit cases run in process context.
        unsafe { bindings::msleep(1) };
        for it in batch.iter() {
            let bh = bh::disable();
            let _g = r.writers.lock(&bh);
            // SAFETY: as above.
            unsafe { r.chains.del(&it.link) };
        }
        // No reader holds them after this: then they are freed.
        // SAFETY: process context, no lock held.
        unsafe { bindings::synchronize_rcu() };
        drop(batch);
        if failed {
            break;
        }
    }
    r.stop.store(true, Ordering::Relaxed);
    r.timer.cancel();
    let (walks, missed, freed) = (
        r.walks.load(Ordering::Relaxed),
        r.missed.load(Ordering::Relaxed),
        r.freed_seen.load(Ordering::Relaxed),
    );
    if failed || walks < 10 || missed != 0 || freed != 0 {
        let _ = write!(
            w,
            "{walks} walks (want at least 10) over {added} entries added: {missed} staying entries missed, {freed} freed entries seen{}",
            if failed { "; allocation failed" } else { "" }
        );
        return false;
    }
    let _ = write!(w, "{walks} walks, {added} entries added, moved and freed");
    true
}

#[no_mangle]
extern "C" fn crem_kunit_hlist_readers_race(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, readers_race)
}
