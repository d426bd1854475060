// SPDX-License-Identifier: GPL-2.0
//! A flow's packet stores (`rust/store.rs`): what they keep, how they find
//! it, what they charge, and that everything kept is given back, on a test
//! budget (the netns's needs a C flow). A leaked clone or copy shows as a
//! charge left over here, and in kmemleak on the debug kernel.

use super::run;
use crate::crem_core::engine::crf::{Delivery, Restored, SymbolStore};
use crate::crem_core::engine::csf::SourceStore;
use crate::crem_core::engine::module_caps::{caps_for, FlowCaps, MAX_BDP_DEFAULT};
use crate::crem_core::psn::{Psn, PsnRange};
use crate::ffi;
use crate::flow::Flow;
use crate::host::FlowOps;
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::skb::Skb;
use crate::store::{Current, Owner, Stores};
use core::cell::Cell;
use core::ffi::{c_char, c_int};
use core::ptr::NonNull;
use kernel::bindings;

/// A test's budget, passed where the C flow would be. Cells: the stores
/// change it through a shared pointer while the test reads it.
#[derive(Default)]
struct TestBudget {
    limit: Cell<u64>,
    used: Cell<u64>,
    refused: Cell<u64>,
}

unsafe fn test_charge(o: &Owner, n: u32) -> bool {
    // SAFETY: the stores under test were given a `TestBudget` as their
    // flow (`stores`), which outlives them; only shared references to it
    // are ever made.
    let b = unsafe { o.ctx.cast::<TestBudget>().as_ref() };
    let used = b.used.get().saturating_add(u64::from(n));
    if used > b.limit.get() {
        b.refused.set(b.refused.get().saturating_add(1));
        return false;
    }
    b.used.set(used);
    true
}

unsafe fn test_uncharge(o: &Owner, n: u32) {
    // SAFETY: as in `test_charge`.
    let b = unsafe { o.ctx.cast::<TestBudget>().as_ref() };
    b.used.set(b.used.get().saturating_sub(u64::from(n)));
}

unsafe fn no_send(_: &Flow, _: &Bh, _: u8, _: *mut bindings::sk_buff_head, _: &[u8]) -> bool {
    false
}
fn no_event(_: &Flow) {}

/// The stores' ops: a test budget, nothing else reached.
static TEST_OPS: FlowOps = FlowOps {
    send: no_send,
    charge: test_charge,
    uncharge: test_uncharge,
    event: no_event,
};

/// The stores' budget (and the flow their packets would go on with: never
/// used, these tests inject nothing).
struct Fixture {
    budget: TestBudget,
    caps: FlowCaps,
}

impl Fixture {
    /// A flow of the default `max-bdp`'s capacities.
    fn new(limit: u64) -> Self {
        Self::sized(limit, caps_for(MAX_BDP_DEFAULT, 32))
    }

    fn sized(limit: u64, caps: FlowCaps) -> Self {
        Fixture {
            budget: TestBudget {
                limit: Cell::new(limit),
                ..Default::default()
            },
            caps,
        }
    }

    /// Stores of side `csf` charging `self.budget`; `self` must not move
    /// while they live.
    fn stores(&self, csf: bool) -> Option<Stores> {
        let owner = Owner {
            ctx: NonNull::from(&self.budget).cast(),
            // Read only to inject a packet: a held one that must go early
            // (its template names no device, so it is dropped, counted).
            // SAFETY: only its address is taken.
            net: NonNull::from(unsafe { &*core::ptr::addr_of!(ffi::init_net) }),
            netns: None,
            ops: &TEST_OPS,
        };
        Stores::new(owner, csf, &self.caps, 0).ok()
    }
}

fn payload(psn: u32, len: usize) -> [u8; 64] {
    let mut p = [0u8; 64];
    for (i, b) in p.iter_mut().enumerate().take(len) {
        *b = (psn as u8).wrapping_mul(31) ^ i as u8;
    }
    p
}

/// The CSF keeps copies by PSN (the ring's 4096 slots, across the 24-bit
/// wrap), finds each by its PSN only, releases ranges, and charges exactly
/// what it keeps: every octet is given back by release and drop.
#[no_mangle]
extern "C" fn crem_kunit_store_retains_and_releases(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(true) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let psns = [0xff_fffe, 0xff_ffff, 0, 1, 2];
        for (n, &psn) in psns.iter().enumerate() {
            let p = payload(psn, 40 + n);
            if !st.csf_keep(Psn::new(psn), &p[..40 + n]) {
                let _ = write!(w, "PSN {psn:#x} not kept");
                return false;
            }
        }
        let kept: u64 = (0..psns.len() as u64).map(|n| 40 + n).sum();
        for (n, &psn) in psns.iter().enumerate() {
            let p = payload(psn, 40 + n);
            if SourceStore::source(&st, Psn::new(psn)) != Some(&p[..40 + n]) {
                let _ = write!(w, "PSN {psn:#x} not found as kept");
                return false;
            }
        }
        // A PSN one ring later names the same slot, but is not what it holds.
        if SourceStore::source(&st, Psn::new(1 + 4096)).is_some() {
            let _ = write!(w, "PSN 4097 found in PSN 1's slot");
            return false;
        }
        // Release across the wrap: 0xfffffe..=0 go, 1 and 2 stay.
        SourceStore::release(&mut st, PsnRange::new(Psn::new(0xff_fffe), 3));
        let left = fx_used(&st, &psns);
        if left != [false, false, false, true, true] {
            let _ = write!(w, "after release 0xfffffe+3: kept {left:?}");
            return false;
        }
        drop(st);
        if fx.budget.used.get() != 0 || fx.budget.refused.get() != 0 {
            let _ = write!(
                w,
                "charged {kept} in all, {} left after drop, {} refused",
                fx.budget.used.get(),
                fx.budget.refused.get()
            );
            return false;
        }
        true
    })
}

fn fx_used(st: &Stores, psns: &[u32]) -> [bool; 5] {
    let mut r = [false; 5];
    for (i, &psn) in psns.iter().enumerate().take(5) {
        r[i] = SourceStore::source(st, Psn::new(psn)).is_some();
    }
    r
}

/// A source in the packet being processed is kept as a clone of it,
/// charged its truesize, and stays readable after the original is gone; a
/// payload elsewhere is a copy, charged its length.
#[no_mangle]
extern "C" fn crem_kunit_store_clones_current(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(true) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let data = payload(7, 64);
        let Some(mut skb) = Skb::alloc_atomic(64, 128) else {
            let _ = write!(w, "no skb");
            return false;
        };
        // 28 octets of headers, then the payload.
        if !skb.put_data(&[0u8; 28]) || !skb.put_data(&data) {
            let _ = write!(w, "skb too small");
            return false;
        }
        let truesize = skb.truesize();
        st.current = Some(Current {
            skb: NonNull::new(skb.as_ptr()).unwrap_or(NonNull::dangling()),
            off: 28,
            payload: skb.head().as_ptr().wrapping_add(28),
        });
        let kept = match skb.head().get(28..92) {
            Some(p) => {
                // SAFETY: `p` borrows the skb's linear data, which stays
                // put while the skb lives (dropped only below).
                let p = unsafe { core::slice::from_raw_parts(p.as_ptr(), p.len()) };
                st.csf_keep(Psn::new(7), p)
            }
            None => false,
        };
        st.current = None;
        if !kept || fx.budget.used.get() != u64::from(truesize) {
            let _ = write!(
                w,
                "kept {kept}, charged {} for a clone of truesize {truesize}",
                fx.budget.used.get()
            );
            return false;
        }
        drop(skb);
        if SourceStore::source(&st, Psn::new(7)) != Some(&data[..]) {
            let _ = write!(w, "the clone's payload changed with its original gone");
            return false;
        }
        let copy = payload(8, 50);
        if !st.csf_keep(Psn::new(8), &copy[..50])
            || fx.budget.used.get() != u64::from(truesize) + 50
        {
            let _ = write!(w, "a copy of 50 octets: charged {}", fx.budget.used.get());
            return false;
        }
        drop(st);
        if fx.budget.used.get() != 0 {
            let _ = write!(w, "{} octets left charged after drop", fx.budget.used.get());
            return false;
        }
        true
    })
}

/// Over its budget a store keeps nothing, says so, and is counted; the
/// next source that fits is kept.
#[no_mangle]
extern "C" fn crem_kunit_store_budget_refuses(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(100);
        let Some(mut st) = fx.stores(true) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let p = payload(1, 64);
        let a = st.csf_keep(Psn::new(1), &p[..60]);
        let b = st.csf_keep(Psn::new(2), &p[..60]);
        let c = st.csf_keep(Psn::new(3), &p[..40]);
        let found = SourceStore::source(&st, Psn::new(2)).is_some();
        // The stores count the refusal (store-full) and what they hold.
        let (full, mem) = (st.counted().store_full, st.mem());
        drop(st);
        if (a, b, c, found) != (true, false, true, false) || fx.budget.refused.get() != 1 {
            let _ = write!(
                w,
                "kept {a} {b} {c} (true false true), PSN 2 found {found}, {} refused",
                fx.budget.refused.get()
            );
            return false;
        }
        if (full, mem) != (1, 100) {
            let _ = write!(w, "store-full {full} (1), {mem} octets kept (100)");
            return false;
        }
        fx.budget.used.get() == 0
    })
}

/// The CRF's repair symbols are private copies by slot, writable in place
/// for the decoder beside a kept source, dropped and uncharged by slot; a
/// slot beyond the engine's is refused.
#[no_mangle]
extern "C" fn crem_kunit_store_repairs(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(false) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let src = payload(3, 64);
        let rep = payload(9, 64);
        let ok = st.keep_source(5, Psn::new(3), &src)
            && st.keep_repair(200, &rep)
            && !st.keep_repair(256, &rep)
            && !st.keep_source(1024, Psn::new(4), &src);
        if !ok || fx.budget.used.get() != 128 {
            let _ = write!(w, "keeps: {ok}, charged {} (128)", fx.budget.used.get());
            return false;
        }
        match st.source_and_repair_mut(5, 200) {
            (Some(s), Some(r)) if s == &src[..] && r == &rep[..] => {
                for (r, s) in r.iter_mut().zip(s) {
                    *r ^= *s;
                }
            }
            _ => {
                let _ = write!(w, "source 5 and repair 200 not both there");
                return false;
            }
        }
        let mut want = rep;
        for (r, s) in want.iter_mut().zip(src.iter()) {
            *r ^= *s;
        }
        if st.repair(200) != Some(&want[..]) {
            let _ = write!(w, "the repair written in place did not keep the write");
            return false;
        }
        st.drop_repair(200);
        st.drop_source(5);
        let gone = st.repair(200).is_none() && SymbolStore::source(&st, 5).is_none();
        if !gone || fx.budget.used.get() != 0 {
            let _ = write!(
                w,
                "after drops: gone {gone}, {} charged",
                fx.budget.used.get()
            );
            return false;
        }
        true
    })
}

/// Held packets are kept by PSN and charged their truesize; one over the
/// budget is handed back, not freed; a device going away takes the held
/// packets that came on it (dropped, counted, uncharged) and no others.
/// (Fresh skbs have no device: the one "going away" here is the null one,
/// which is only compared, never dereferenced.)
#[no_mangle]
extern "C" fn crem_kunit_store_holds_and_dev_gone(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(false) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let (Some(a), Some(b)) = (Skb::alloc_atomic(0, 200), Skb::alloc_atomic(0, 200)) else {
            let _ = write!(w, "no skb");
            return false;
        };
        let charged = u64::from(a.truesize()) + u64::from(b.truesize());
        if st.hold(10, a).is_err() || st.hold(11, b).is_err() || fx.budget.used.get() != charged {
            let _ = write!(w, "two held: charged {} of {charged}", fx.budget.used.get());
            return false;
        }
        // Nothing matches another device.
        let other = NonNull::<bindings::net_device>::dangling().as_ptr();
        let none = st.dev_gone(other);
        let both = st.dev_gone(core::ptr::null());
        let dropped = st.counted().held_dropped;
        if (none, both, dropped, fx.budget.used.get()) != (0, 2, 2, 0) {
            let _ = write!(
                w,
                "dev_gone: other {none} (0), theirs {both} (2), held-dropped {dropped} (2), charged {} (0)",
                fx.budget.used.get()
            );
            return false;
        }
        fx.budget.limit.set(0);
        let Some(c) = Skb::alloc_atomic(0, 200) else {
            let _ = write!(w, "no skb");
            return false;
        };
        let p = c.as_ptr();
        match st.hold(12, c) {
            Err(back) if back.as_ptr() == p => true,
            Err(_) => {
                let _ = write!(w, "over budget: another skb handed back");
                false
            }
            Ok(()) => {
                let _ = write!(w, "held over a budget of 0");
                false
            }
        }
    })
}

/// A source kept over another PSN's (the CSF's ring is indexed by PSN
/// modulo its size) takes that one's place: the older one is gone, which
/// the stores count (`overwritten`), once per loss (keeping the same PSN
/// again replaces it, nothing lost).
#[no_mangle]
extern "C" fn crem_kunit_store_counts_overwrites(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(true) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let (a, b) = (7u32, 7 + fx.caps.csf_store as u32);
        let (pa, pb) = (payload(a, 40), payload(b, 40));
        let kept = st.csf_keep(Psn::new(a), &pa[..40])
            && st.csf_keep(Psn::new(b), &pb[..40])
            && st.csf_keep(Psn::new(b), &pb[..40]);
        let gone = SourceStore::source(&st, Psn::new(a)).is_none();
        let n = st.counted().overwritten;
        if !kept || !gone || n != 1 || fx.budget.used.get() != 40 {
            let _ = write!(
                w,
                "kept {kept}, {a} gone {gone}, overwritten {n} (1), charged {} (40)",
                fx.budget.used.get()
            );
            return false;
        }
        true
    })
}

/// A replay (`crf/replay.rs`) passes on a packet built from the copy a
/// slot keeps, the packet as it first arrived (its Identification solved
/// from its ICRC): none before the flow has a header template, none from an
/// empty slot or a copy whose ICRC fails; one that cannot go on (its
/// template names no device) is counted and not taken for replayed (the
/// CRF then lets the packet after it go on as it came). The copy stays
/// kept. (The one that goes on enters init_net's receive path on `lo`,
/// where no one takes it.)
#[no_mangle]
extern "C" fn crem_kunit_store_replays_a_kept_copy(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(false) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let sent = &super::inject::PACKET[super::inject::UDP_PAYLOAD..];
        let mut bad = [0u8; 32];
        bad.copy_from_slice(sent);
        bad[20] ^= 1;
        let psn = Psn::new(0xf2_0a38);
        if !st.keep_source(5, psn, sent) || !st.keep_source(7, psn, &bad) {
            let _ = write!(w, "copies not kept");
            return false;
        }
        let bh = crate::kernel_ext::bh::disable();
        let unnoted = Delivery::replay(&mut st, 5, psn);
        st.tpl = super::inject::template(true);
        let fine = Delivery::replay(&mut st, 5, psn);
        st.tpl.ifindex = i32::MAX;
        let no_dev = Delivery::replay(&mut st, 5, psn);
        let empty = Delivery::replay(&mut st, 6, psn);
        let corrupt = Delivery::replay(&mut st, 7, psn);
        drop(bh);
        let c = st.counted();
        let got = (
            unnoted,
            fine,
            no_dev,
            empty,
            corrupt,
            c.injected,
            c.inject_fail,
        );
        let want = (
            Restored::NoHeader,
            Restored::Verified,
            Restored::Dropped,
            Restored::Dropped,
            Restored::IcrcFailed,
            1,
            1,
        );
        if got != want || SymbolStore::source(&st, 5) != Some(sent) {
            let _ = write!(w, "{got:?}, want {want:?} and the copy kept");
            return false;
        }
        true
    })
}

/// The CRF holds any two PSNs of its window at once: held packets are
/// never let go early because their PSNs share a slot (two PSNs half a
/// window apart did, uncounted but as held-dropped).
#[no_mangle]
extern "C" fn crem_kunit_store_holds_a_window(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(false) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let win = fx.caps.crf.window as u32;
        let psns = [3u32, 3 + win / 2, 3 + win - 1];
        for &psn in &psns {
            let Some(skb) = Skb::alloc_atomic(0, 200) else {
                let _ = write!(w, "no skb");
                return false;
            };
            if st.hold(psn, skb).is_err() {
                let _ = write!(w, "PSN {psn} not held");
                return false;
            }
        }
        let c = st.counted();
        let held = st.dev_gone(core::ptr::null());
        if (held, c.held_overwritten, c.held_dropped) != (3, 0, 0) {
            let _ = write!(
                w,
                "held {held} (3), held-overwritten {} (0), held-dropped {} (0)",
                c.held_overwritten, c.held_dropped
            );
            return false;
        }
        true
    })
}

/// Stores sized for more packets in flight (`max-bdp` 6104: 10 Gbit/s x
/// 20 ms at 4 KiB) span more PSNs: the CSF's ring keeps PSNs 4096 apart
/// (which shared a slot at the default size) and loses one only 65536
/// apart; the CRF holds PSNs across its 32768-PSN window.
#[no_mangle]
extern "C" fn crem_kunit_store_sized_by_bdp(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::sized(1 << 20, caps_for(6104, 32));
        let (Some(mut csf), Some(mut crf)) = (fx.stores(true), fx.stores(false)) else {
            let _ = write!(w, "no stores");
            return false;
        };
        let n = fx.caps.csf_store as u32;
        let kept = [5u32, 5 + 4096, 5 + n]
            .iter()
            .all(|&psn| csf.csf_keep(Psn::new(psn), &payload(psn, 16)[..16]));
        let there = |p: u32| SourceStore::source(&csf, Psn::new(p)).is_some();
        let (a, b, c) = (there(5), there(5 + 4096), there(5 + n));
        let over = csf.counted().overwritten;
        if (n, kept, a, b, c, over) != (65536, true, false, true, true, 1) {
            let _ = write!(
                w,
                "ring {n} (65536), kept {kept}, 5 {a} (false), 4101 {b} (true), {} {c} (true), overwritten {over} (1)",
                5 + n
            );
            return false;
        }
        let win = fx.caps.crf.window as u32;
        for psn in [9u32, 9 + 512, 9 + win - 1] {
            let Some(skb) = Skb::alloc_atomic(0, 64) else {
                let _ = write!(w, "no skb");
                return false;
            };
            if crf.hold(psn, skb).is_err() {
                let _ = write!(w, "PSN {psn} not held");
                return false;
            }
        }
        let held = crf.dev_gone(core::ptr::null());
        let c = crf.counted();
        // What a flow's structures cost (stores and engine), per side.
        let octets = |st: &Stores, csf: bool, caps: &FlowCaps| {
            st.fixed() + crate::engine::engine_octets(csf, caps) as u64
        };
        let dflt = Fixture::new(1 << 20);
        let (Some(a), Some(b)) = (dflt.stores(true), dflt.stores(false)) else {
            let _ = write!(w, "no stores");
            return false;
        };
        if (win, held, c.held_overwritten) != (32768, 3, 0) {
            let _ = write!(
                w,
                "window {win} (32768), held {held} (3), held-overwritten {} (0)",
                c.held_overwritten
            );
            return false;
        }
        let _ = write!(
            w,
            "crem-bench: flow structures, octets per side: max-bdp {} CSF {} CRF {}; max-bdp 6104 CSF {} CRF {}",
            MAX_BDP_DEFAULT,
            octets(&a, true, &dflt.caps),
            octets(&b, false, &dflt.caps),
            octets(&csf, true, &fx.caps),
            octets(&crf, false, &fx.caps)
        );
        true
    })
}

/// RDMA ACKs kept back behind held READ responses (`rust/acks.rs`) go on
/// as the releases pass them: a held packet's release first sends the ACKs
/// before its PSN, in their order, across the 24-bit wrap; the rest wait
/// for `release_ack`. (Host mode: the order they went on in is the order
/// they entered the backlog.) Each is charged exactly its truesize while it
/// waits; with 32 waiting a 33rd makes the oldest go on first (counted as
/// passed); a device going away takes those that came on it and keeps the
/// others in order; the stores' drop takes the rest: every octet is given
/// back.
#[no_mangle]
extern "C" fn crem_kunit_store_acks_wait_behind_held(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, |w| {
        let fx = Fixture::new(1 << 20);
        let Some(mut st) = fx.stores(false) else {
            let _ = write!(w, "no stores");
            return false;
        };
        st.tpl = super::inject::template(true);
        let psn = |d: u32| 0xff_fffdu32.wrapping_add(d) & 0xff_ffff;
        // The PSNs the flow passed on, oldest first.
        let order = |st: &Stores| {
            let mut o = [0u32; 48];
            let mut n = 0usize;
            for (slot, p) in o.iter_mut().zip(st.backlog().queued_psns()) {
                *slot = p;
                n += 1;
            }
            (o, n)
        };
        // READ A's responses at +0..+3, +0 lost: +1..+3 held; an ACK of a
        // SEND at +4; READ B's response at +5 held; an ACK at +6.
        let bh = crate::kernel_ext::bh::disable();
        let mut ok = true;
        let mut truesizes = 0u64;
        let mut ack_truesizes = 0u64;
        for d in [1u32, 2, 3, 5] {
            let held = Skb::alloc_atomic(64, 64).map(|s| {
                truesizes += u64::from(s.truesize());
                st.hold(psn(d), s).is_ok()
            });
            ok &= held == Some(true);
        }
        let responses_charged = fx.budget.used.get() == truesizes;
        for d in [4u32, 6] {
            let kept = Skb::alloc_atomic(64, 64).map(|s| {
                ack_truesizes += u64::from(s.truesize());
                st.hold_ack(Psn::new(psn(d)), u64::MAX, s).is_ok()
            });
            ok &= kept == Some(true);
        }
        let charged = fx.budget.used.get();
        let mem = st.mem();
        for d in [1u32, 2, 3] {
            Delivery::release(&mut st, Psn::new(psn(d)));
        }
        let front_after_a = st.ack_front().map(|(p, _)| p.value());
        Delivery::release(&mut st, Psn::new(psn(5)));
        let front_after_b = st.ack_front().map(|(p, _)| p.value());
        st.release_ack();
        drop(bh);
        let (o, n) = order(&st);
        let want = [1u32, 2, 3, 4, 5, 6].map(psn);
        let c = st.counted();
        let total = truesizes + ack_truesizes;
        if !ok
            || !responses_charged
            || o[..n] != want[..]
            || front_after_a != Some(psn(4))
            || front_after_b != Some(psn(6))
            || st.acks_waiting()
            || (c.acks_held, c.acks_passed, c.injected) != (2, 0, 6)
            || (charged, mem) != (total, total)
            || fx.budget.used.get() != 0
        {
            let _ = write!(
                w,
                "held {ok}; order {:x?} (want {want:x?}); front after A {front_after_a:x?}, \
                 after B {front_after_b:x?}; acks-held {} (2), acks-passed {} (0), \
                 injected {} (6); charged {charged}, mem {mem} (both {total}), left {} (0)",
                &o[..n],
                c.acks_held,
                c.acks_passed,
                c.injected,
                fx.budget.used.get()
            );
            return false;
        }
        // 32 wait at most: a 33rd makes the oldest go on (passed), and
        // waits itself.
        let bh = crate::kernel_ext::bh::disable();
        let mut kept = 0u32;
        for d in 0..33u32 {
            if let Some(s) = Skb::alloc_atomic(64, 64) {
                kept += u32::from(st.hold_ack(Psn::new(100 + d), u64::MAX, s).is_ok());
            }
        }
        let front = st.ack_front().map(|(p, _)| p.value());
        let (o, n) = order(&st);
        let last_out = o[..n].last().copied();
        drop(bh);
        let c = st.counted();
        if kept != 33 || front != Some(101) || last_out != Some(100) || c.acks_passed != 1 {
            let _ = write!(
                w,
                "kept {kept} (33), front {front:?} (101), last passed on {last_out:?} (100), \
                 acks-passed {} (1)",
                c.acks_passed
            );
            return false;
        }
        // A device going away: those that came on it are dropped (counted,
        // uncharged), the others keep their order. Fresh skbs have no
        // device: the null one "goes away" first (the 32 above), then lo
        // takes two of four.
        let gone = st.dev_gone(core::ptr::null());
        let rcu = crate::kernel_ext::rcu::read_lock();
        // SAFETY: init_net is live while the module is.
        let lo = unsafe {
            crate::kernel_ext::netdev::NetDevice::by_index(
                core::ptr::addr_of_mut!(ffi::init_net),
                1,
                &rcu,
            )
        };
        let Some(lo) = lo else {
            let _ = write!(w, "no lo");
            return false;
        };
        let bh = crate::kernel_ext::bh::disable();
        for d in 0..4u32 {
            if let Some(mut s) = Skb::alloc_atomic(64, 64) {
                if d % 2 == 0 {
                    s.set_dev(lo);
                }
                let _ = st.hold_ack(Psn::new(400 + d), u64::MAX, s);
            }
        }
        let on_lo = st.dev_gone(lo.as_ptr());
        drop(rcu);
        let after_lo = st.ack_front().map(|(p, _)| p.value());
        st.release_ack();
        let then = st.ack_front().map(|(p, _)| p.value());
        st.release_ack();
        drop(bh);
        let (o, n) = order(&st);
        let tail = o.get(n.saturating_sub(2)..n);
        if gone != 32
            || on_lo != 2
            || after_lo != Some(401)
            || then != Some(403)
            || tail != Some(&[401, 403][..])
            || st.acks_waiting()
            || fx.budget.used.get() != 0
        {
            let _ = write!(
                w,
                "dev_gone: null took {gone} (32), lo {on_lo} (2); then {after_lo:?}, {then:?} \
                 (401, 403) waiting, passed on {tail:?}; charged {} (0)",
                fx.budget.used.get()
            );
            return false;
        }
        // What still waits when the stores go is dropped and uncharged.
        if let Some(s) = Skb::alloc_atomic(0, 64) {
            let _ = st.hold_ack(Psn::new(300), u64::MAX, s);
        }
        let waiting = st.acks_waiting();
        drop(st);
        if !waiting || fx.budget.used.get() != 0 {
            let _ = write!(
                w,
                "waiting {waiting}; after the drop charged {} (0)",
                fx.budget.used.get()
            );
            return false;
        }
        true
    })
}
