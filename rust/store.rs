// SPDX-License-Identifier: GPL-2.0
//! The packet stores of one flow: the CSF's retained sources (by PSN,
//! released by the RDMA ACKs), the CRF's kept sources and repair symbols (by
//! the engine's slot), its held packets (by PSN, for in-order release) and
//! the RDMA ACKs kept back behind them ([`Acks`]).
//! They are crem-core's `SourceStore`, `SymbolStore` and `Delivery` for the
//! kernel: a source is kept as a clone of the packet being processed (no
//! copy of its payload) or, when it is not in that packet (a restored
//! one), as a private copy; repair symbols are always copies (decoding
//! writes them). Every octet is charged to the netns's budget
//! (`max-memory`): a refusal is counted and the engine carries on without
//! the packet.
//!
//! A flow's stores live in its engine blob ([`crate::engine`]) and are used
//! only under the flow's lock, with BH off.

use crate::acks::{Acks, ACKS};
use crate::backlog::{Backlog, AHEAD};
use crate::crem_core::engine::crf::{Delivery, Restored, SymbolStore};
use crate::crem_core::engine::csf::SourceStore;
use crate::crem_core::engine::module_caps::FlowCaps;
use crate::crem_core::engine::Nanos;
use crate::crem_core::psn::{Psn, PsnRange};
use crate::host::FlowOps;
use crate::inject::{self, Template};
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::mem::{Copied, FlowArray};
use crate::kernel_ext::skb::{sk_buff, DropReason, Skb};
use crate::netns::NetState;
use core::mem::size_of;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::prelude::*;

/// What a slot keeps of a source.
enum Kept {
    /// A clone of the packet it came in; the payload at `off` of its data.
    Clone { skb: Skb, off: u32 },
    /// A private copy of the payload.
    Copy(Copied),
}

/// One kept source (the payload's `len` octets) of PSN `psn`.
struct Slot {
    kept: Option<Kept>,
    psn: u32,
    len: u32,
}

impl Slot {
    const EMPTY: Slot = Slot {
        kept: None,
        psn: 0,
        len: 0,
    };

    fn data(&self) -> Option<&[u8]> {
        let len = self.len as usize;
        match self.kept.as_ref()? {
            Kept::Clone { skb, off } => {
                let off = *off as usize;
                skb.head().get(off..off.checked_add(len)?)
            }
            Kept::Copy(v) => v.as_slice().get(..len),
        }
    }
}

/// One held packet and its PSN.
struct Held {
    skb: Option<Skb>,
    psn: u32,
}

impl Held {
    const EMPTY: Held = Held { skb: None, psn: 0 };
}

/// The flow these stores belong to: whose budget they charge (through its
/// ops: its netns's `max-memory`, or a test's) and where their packets go
/// on. The flow frees its engine (and so these stores) before itself.
pub(crate) struct Owner {
    /// What a test's ops charge (its stand-in budget; KUnit only).
    #[cfg(crem_kunit)]
    pub(crate) ctx: NonNull<core::ffi::c_void>,
    pub(crate) net: NonNull<bindings::net>,
    /// The netns's state (none: a KUnit case's flow), which outlives its
    /// flows.
    pub(crate) netns: Option<NonNull<NetState>>,
    pub(crate) ops: &'static FlowOps,
}

impl Owner {
    /// The flow's netns's state, if any.
    pub(crate) fn netns(&self) -> Option<&NetState> {
        // SAFETY: the netns outlives its flows (`netns`'s rule).
        self.netns.map(|st| unsafe { st.as_ref() })
    }
}

/// What the stores count (flow-stats attributes store-full to
/// inject-failures, store-overwritten, held-overwritten, queued-behind and
/// the backlog counters: their places are `crate::flow`'s `info_locked`'s).
#[derive(Clone, Copy, Default)]
pub(crate) struct Counters {
    pub(crate) store_full: u64,
    pub(crate) clone_fail: u64,
    pub(crate) held_dropped: u64,
    pub(crate) injected: u64,
    pub(crate) inject_fail: u64,
    /// Kept sources lost to another PSN's keep in their slot.
    pub(crate) overwritten: u64,
    /// Held packets let go early for another PSN's hold in their slot.
    pub(crate) held_overwritten: u64,
    /// Host mode: originals queued behind packets the flow had queued
    /// (`crate::backlog`).
    pub(crate) queued_behind: u64,
    /// RDMA ACKs kept back behind held READ responses, and those that
    /// would have been but went on at once (`crate::acks`).
    pub(crate) acks_held: u64,
    pub(crate) acks_passed: u64,
    /// Host mode: packets the flow queued and did not see come back, or
    /// had no room to recognise (`crate::backlog`).
    pub(crate) backlog_unreturned: u64,
    pub(crate) backlog_untracked: u64,
}

/// The packet being processed, while an engine call for it runs: a source
/// it keeps is a clone of it when its payload lies in it.
#[derive(Clone, Copy)]
pub(crate) struct Current {
    pub(crate) skb: NonNull<sk_buff>,
    /// Offset of its RoCEv2 UDP payload from its data.
    pub(crate) off: u32,
    /// Where that payload is (its data + `off`), found once per packet.
    pub(crate) payload: *const u8,
}

/// A flow's stores (CSF: `slots` by PSN, `caps.csf_store` of them; CRF:
/// `slots` by window slot, `repairs` and `held`, the latter by PSN modulo
/// the window's size, so that no two PSNs the CRF may hold at once, both in
/// its window, share a slot). Rings by PSN are powers of two.
pub(crate) struct Stores {
    owner: Owner,
    caps: FlowCaps,
    /// Octets of the flow's structures (these stores' arrays and its
    /// engine's), reserved from the netns's budget while they exist.
    fixed: u64,
    pub(crate) current: Option<Current>,
    /// How restored and held packets are rebuilt and where they enter
    /// (written by the flow from its packets, `crate::flow`).
    pub(crate) tpl: Template,
    counters: Counters,
    /// Octets charged for what the stores keep now.
    mem: u64,
    slots: FlowArray<Slot>,
    repairs: FlowArray<Option<Copied>>,
    held: FlowArray<Held>,
    /// RDMA ACKs kept back behind `held` (a CRF's; none for a CSF).
    acks: Acks,
    /// Host mode: the packets queued to the backlog, until they come back.
    backlog: Backlog,
}

// SAFETY: the pointers in `Owner` and `Current` are only dereferenced under
// the flow's lock (the module's only way to reach the stores), whichever
// CPU holds it, or once the flow is unreachable (the stores' drop, when the
// flow is freed); the skbs are owned references usable from any CPU.
unsafe impl Send for Stores {}

impl Stores {
    /// Empty stores of a flow of side `csf` with capacities `caps`
    /// (process context: allocates with the flow's GFP flags, in the memory
    /// cgroup its caller chose), reserving their octets and the engine's
    /// `engine` from the netns's budget (`max-memory`): refused (ENOMEM,
    /// not counted here) when they do not fit.
    pub(crate) fn new(owner: Owner, csf: bool, caps: &FlowCaps, engine: usize) -> Result<Self> {
        let (slots, repairs, held, ahead, acks) = if csf {
            (caps.csf_store, 0, 0, 0, 0)
        } else {
            (
                caps.crf.window,
                caps.crf.repairs,
                caps.crf.window,
                AHEAD,
                ACKS,
            )
        };
        if !slots.is_power_of_two() || (held != 0 && !held.is_power_of_two()) {
            return Err(EINVAL);
        }
        let fixed = [
            slots.saturating_mul(size_of::<Slot>()),
            repairs.saturating_mul(size_of::<Option<Copied>>()),
            held.saturating_mul(size_of::<Held>()),
            Backlog::octets(ahead),
            Acks::octets(acks),
            engine,
        ]
        .iter()
        .fold(0u64, |a, &n| a.saturating_add(n as u64));
        if let Some(st) = owner.netns() {
            if !st.reserve(fixed) {
                return Err(ENOMEM);
            }
        }
        let arrays = (|| {
            Ok::<_, Error>((
                FlowArray::new(slots, || Slot::EMPTY)?,
                FlowArray::new(repairs, || None)?,
                FlowArray::new(held, || Held::EMPTY)?,
                Acks::new(acks)?,
                Backlog::new(ahead)?,
            ))
        })();
        let (slots, repairs, held, acks, backlog) = match arrays {
            Ok(a) => a,
            Err(e) => {
                if let Some(st) = owner.netns() {
                    st.release(fixed);
                }
                return Err(e);
            }
        };
        Ok(Stores {
            owner,
            caps: *caps,
            fixed,
            current: None,
            // No packet seen yet: nothing can be restored.
            tpl: Template::default(),
            counters: Counters::default(),
            mem: 0,
            slots,
            repairs,
            held,
            acks,
            backlog,
        })
    }

    /// The flow's capacities.
    pub(crate) fn caps(&self) -> &FlowCaps {
        &self.caps
    }

    /// Octets of the flow's structures these stores reserved.
    #[cfg(crem_kunit)]
    pub(crate) fn fixed(&self) -> u64 {
        self.fixed
    }

    fn counters(&mut self) -> &mut Counters {
        &mut self.counters
    }

    /// What the stores counted.
    pub(crate) fn counted(&self) -> Counters {
        Counters {
            backlog_unreturned: self.backlog.unreturned,
            backlog_untracked: self.backlog.untracked,
            ..self.counters
        }
    }

    /// Host mode: the packets passed on to the backlog (KUnit).
    #[cfg(crem_kunit)]
    pub(crate) fn backlog(&self) -> &Backlog {
        &self.backlog
    }

    /// Octets charged for what the stores keep now.
    pub(crate) fn mem(&self) -> u64 {
        self.mem
    }

    fn charge(&mut self, n: u32) -> bool {
        // SAFETY: the flow is live (`Owner`), and locked (our `&mut self`
        // comes from an engine call) or unreachable (the stores' drop, which
        // only uncharges); its budget charges and counts a refusal.
        if !unsafe { (self.owner.ops.charge)(&self.owner, n) } {
            bump(&mut self.counters.store_full);
            return false;
        }
        self.mem = self.mem.wrapping_add(u64::from(n));
        true
    }

    fn uncharge(&mut self, n: u32) {
        // SAFETY: as in `charge`.
        unsafe { (self.owner.ops.uncharge)(&self.owner, n) };
        self.mem = self.mem.wrapping_sub(u64::from(n));
    }

    /// Octets slot `s`'s content is charged.
    fn charged(kept: &Kept, len: u32) -> u32 {
        match kept {
            Kept::Clone { skb, .. } => skb.truesize(),
            Kept::Copy(_) => len,
        }
    }

    /// Frees what slot `i` keeps (a normal free: our copy of a packet that
    /// went on its way).
    fn clear(&mut self, i: usize) {
        let Some(s) = self.slots.get_mut(i) else {
            return;
        };
        let len = s.len;
        if let Some(kept) = s.kept.take() {
            let n = Self::charged(&kept, len);
            drop(kept);
            self.uncharge(n);
        }
    }

    /// Keeps `payload` of PSN `psn` in slot `i`: a clone of the current
    /// packet when `payload` lies in it at its payload offset, a copy
    /// otherwise.
    fn keep(&mut self, i: usize, psn: u32, payload: &[u8]) -> bool {
        let Some(s) = self.slots.get(i) else {
            return false;
        };
        if s.kept.is_some() && s.psn != psn {
            // Another PSN's source, still kept: lost to this one (the CSF's
            // ring is shorter than what it retains; the CRF's engine frees a
            // window slot before it reuses it, so never there).
            bump(&mut self.counters.overwritten);
        }
        self.clear(i);
        let Ok(len) = u32::try_from(payload.len()) else {
            return false;
        };
        let current = self.current;
        let kept = match current.filter(|c| core::ptr::eq(c.payload, payload.as_ptr())) {
            Some(c) => {
                // SAFETY: `current` is live while set (the caller's packet,
                // for the duration of the engine call that set it).
                let truesize = unsafe { (*c.skb.as_ptr()).truesize };
                if !self.charge(truesize) {
                    return false;
                }
                // SAFETY: as above; a clone shares its (read-only) data.
                match unsafe { Skb::clone_atomic(c.skb.as_ptr()) } {
                    Some(skb) => Kept::Clone { skb, off: c.off },
                    None => {
                        self.uncharge(truesize);
                        bump(&mut self.counters().clone_fail);
                        return false;
                    }
                }
            }
            None => match self.copy(payload) {
                Some(v) => Kept::Copy(v),
                None => return false,
            },
        };
        if let Some(s) = self.slots.get_mut(i) {
            *s = Slot {
                kept: Some(kept),
                psn,
                len,
            };
        }
        true
    }

    /// A private copy of `data`, charged its length (None, nothing
    /// charged, if the budget or the allocator refuses: counted).
    fn copy(&mut self, data: &[u8]) -> Option<Copied> {
        let len = u32::try_from(data.len()).ok()?;
        if !self.charge(len) {
            return None;
        }
        let v = Copied::new_atomic(data);
        if v.is_none() {
            self.uncharge(len);
            bump(&mut self.counters().clone_fail);
        }
        v
    }

    /// Keeps the source the CSF engine just accepted.
    pub(crate) fn csf_keep(&mut self, psn: Psn, payload: &[u8]) -> bool {
        self.keep(
            psn_slot(psn.value(), self.slots.len()),
            psn.value(),
            payload,
        )
    }

    fn drop_repair_slot(&mut self, slot: usize) {
        let Some(r) = self.repairs.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let n = r.as_slice().len() as u32;
        drop(r);
        self.uncharge(n);
    }

    /// Sends `skb` (PSN `psn`) on toward its RDMA receiver (counted); false
    /// if it did not go.
    fn inject(&mut self, skb: Skb, psn: u32) -> bool {
        // SAFETY: the stores are used only under the flow's lock, taken
        // with BH disabled.
        let bh = unsafe { Bh::assume() };
        // Only compared, never followed (`crate::backlog`).
        let addr = skb.as_ptr().cast_const();
        let failed = inject::inject(self.owner.net.as_ptr(), &self.tpl, skb, &bh) != 0;
        if !failed && self.tpl.host {
            // Past AHEAD it goes unrecognised, as before.
            let _ = self.backlog.queued(addr, psn, crate::flow::now());
        }
        let c = self.counters();
        bump(if failed {
            &mut c.inject_fail
        } else {
            &mut c.injected
        });
        !failed
    }

    /// A packet rebuilt around a RoCEv2 payload (`built`) goes on now, or is
    /// held for `psn` (`hold`; at once if it cannot be). Verified only if it
    /// went or is held: one that could not be built or sent is Dropped
    /// (counted), and the CRF does not count its PSN as had.
    fn send_rebuilt(&mut self, built: Result<Skb, Restored>, psn: Psn, hold: bool) -> Restored {
        let skb = match built {
            Ok(skb) => skb,
            Err(Restored::Dropped) => {
                bump(&mut self.counters().inject_fail);
                return Restored::Dropped;
            }
            Err(r) => return r,
        };
        let skb = if hold {
            match self.hold(psn.value(), skb) {
                Ok(()) => return Restored::Verified,
                Err(skb) => skb,
            }
        } else {
            skb
        };
        if self.inject(skb, psn.value()) {
            Restored::Verified
        } else {
            Restored::Dropped
        }
    }

    /// Holds `skb` (PSN `psn`) for in-order release; gives it back if it
    /// cannot be charged. A slot still busy with another PSN lets that
    /// one go first (counted: it was not released in order; the slots span
    /// the CRF's window, so only a PSN the CRF no longer tracks can be
    /// there).
    pub(crate) fn hold(&mut self, psn: u32, skb: Skb) -> core::result::Result<(), Skb> {
        let i = psn_slot(psn, self.held.len());
        let had = self.held.get(i).map_or(psn, |h| h.psn);
        if let Some(old) = self.held.get_mut(i).and_then(|h| h.skb.take()) {
            self.uncharge(old.truesize());
            if had != psn {
                bump(&mut self.counters().held_overwritten);
            }
            self.inject(old, had);
        }
        if i >= self.held.len() || !self.charge(skb.truesize()) {
            return Err(skb);
        }
        if let Some(h) = self.held.get_mut(i) {
            *h = Held {
                skb: Some(skb),
                psn,
            };
        }
        Ok(())
    }

    /// Host mode: whether the hook's packet `skb` (PSN `psn`) is one the
    /// flow queued to the backlog, come back (`crate::backlog`).
    pub(crate) fn back_from_backlog(&mut self, skb: *const sk_buff, psn: u32, now: Nanos) -> bool {
        self.tpl.host && self.backlog.returned(skb, psn, now)
    }

    /// Host mode: the hook's packet `skb` (PSN `psn`), which would go on,
    /// goes behind the packets the flow queued to the backlog while any is
    /// ahead (`crate::backlog`; counted); true if so (then the stores took
    /// it).
    ///
    /// # Safety
    ///
    /// `skb` is the hook's live packet, whose reference the caller gives up
    /// when this returns true, and which nothing borrows any more.
    pub(crate) unsafe fn queue_behind(&mut self, now: Nanos, psn: u32, skb: *mut sk_buff) -> bool {
        if !self.tpl.host || !self.backlog.ahead(now) {
            return false;
        }
        if !self.backlog.room() {
            // Queued now, it would come back unrecognised, and the CRF,
            // which never passed it on, would take it for a duplicate
            // (counted: the RDMA receiver may see it early).
            return false;
        }
        // SAFETY: the caller's (above).
        let Some(skb) = (unsafe { Skb::from_raw(skb) }) else {
            return false;
        };
        bump(&mut self.counters().queued_behind);
        let _ = self.inject(skb, psn);
        true
    }

    /// A packet the CRF would have held went on at once.
    pub(crate) fn count_held_dropped(&mut self) {
        bump(&mut self.counters().held_dropped);
    }

    /// Keeps back `skb`, an RDMA ACK or NAK at `psn`, behind the held
    /// packets before it, until `until` at the latest (`crate::acks`;
    /// counted); with 32 waiting the oldest goes on first (counted as
    /// passed). Gives it back if it cannot be charged.
    pub(crate) fn hold_ack(
        &mut self,
        psn: Psn,
        until: Nanos,
        skb: Skb,
    ) -> core::result::Result<(), Skb> {
        if self.acks.is_full() {
            self.release_ack();
            self.count_ack_passed();
        }
        if !self.charge(skb.truesize()) {
            return Err(skb);
        }
        match self.acks.push(psn, until, skb) {
            Ok(()) => {
                bump(&mut self.counters().acks_held);
                Ok(())
            }
            // Not full (above, or a FIFO of none: a sender's): never.
            Err(skb) => {
                self.uncharge(skb.truesize());
                Err(skb)
            }
        }
    }

    /// An ACK went on with held packets still before it.
    pub(crate) fn count_ack_passed(&mut self) {
        bump(&mut self.counters().acks_passed);
    }

    /// The PSN of the oldest ACK kept back, if any, and when it goes on
    /// at the latest.
    pub(crate) fn ack_front(&self) -> Option<(Psn, Nanos)> {
        self.acks.front()
    }

    /// Sends on the oldest ACK kept back.
    pub(crate) fn release_ack(&mut self) {
        if let Some((psn, skb)) = self.acks.pop() {
            self.uncharge(skb.truesize());
            self.inject(skb, psn.value());
        }
    }

    /// Sends on the ACKs kept back, oldest first, up to the first whose
    /// PSN is not before `psn`.
    fn release_acks_before(&mut self, psn: Psn) {
        while self.acks.front().is_some_and(|(a, _)| a.is_before(psn)) {
            self.release_ack();
        }
    }

    /// Whether ACKs are kept back (a new one goes behind them).
    pub(crate) fn acks_waiting(&self) -> bool {
        self.acks.front().is_some()
    }

    /// `dev` is being unregistered. Our skbs hold no reference on the
    /// device they arrived on, so none may outlive it with a pointer to it:
    /// held packets that came on it are dropped (released later, they would
    /// carry a freed device into the output path's hooks as their input
    /// device); kept clones are only ever read for their payload, and
    /// forget it. Returns how many held packets were dropped.
    pub(crate) fn dev_gone(&mut self, dev: *const bindings::net_device) -> u32 {
        for s in self.slots.iter_mut() {
            if let Some(Kept::Clone { skb, .. }) = s.kept.as_mut() {
                if core::ptr::eq(skb.dev(), dev) {
                    skb.clear_dev();
                }
            }
        }
        let mut dropped = 0u32;
        for i in 0..self.held.len() {
            let Some(h) = self.held.get_mut(i) else {
                break;
            };
            if !h.skb.as_ref().is_some_and(|s| core::ptr::eq(s.dev(), dev)) {
                continue;
            }
            if let Some(skb) = h.skb.take() {
                self.uncharge(skb.truesize());
                skb.drop_reason(DropReason::DevReady);
                bump(&mut self.counters().held_dropped);
                dropped = dropped.wrapping_add(1);
            }
        }
        while let Some(skb) = self.acks.take_on(dev) {
            self.uncharge(skb.truesize());
            skb.drop_reason(DropReason::DevReady);
            bump(&mut self.counters().held_dropped);
            dropped = dropped.wrapping_add(1);
        }
        dropped
    }
}

impl Drop for Stores {
    fn drop(&mut self) {
        if let Some(st) = self.owner.netns() {
            st.release(self.fixed);
        }
        // Kept sources and repairs are copies: a normal free. Held packets
        // were released before (the CRF's close); one left here never
        // reaches its receiver: a real drop.
        for i in 0..self.slots.len() {
            self.clear(i);
        }
        for i in 0..self.repairs.len() {
            self.drop_repair_slot(i);
        }
        for i in 0..self.held.len() {
            if let Some(skb) = self.held.get_mut(i).and_then(|h| h.skb.take()) {
                self.uncharge(skb.truesize());
                skb.drop_reason(DropReason::QueuePurge);
            }
        }
        while let Some((_, skb)) = self.acks.pop() {
            self.uncharge(skb.truesize());
            skb.drop_reason(DropReason::QueuePurge);
        }
    }
}

/// The slot of PSN `psn` in a ring of `n` (a power of two) slots.
fn psn_slot(psn: u32, n: usize) -> usize {
    psn as usize & n.wrapping_sub(1)
}

/// Counts one (wrapping, as the engine's counters do).
fn bump(c: &mut u64) {
    *c = c.wrapping_add(1);
}

impl SourceStore for Stores {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        let s = self.slots.get(psn_slot(psn.value(), self.slots.len()))?;
        (s.psn == psn.value()).then(|| s.data()).flatten()
    }

    fn release(&mut self, range: PsnRange) {
        let n = self.slots.len();
        for psn in range.into_iter().take(n) {
            let slot = psn_slot(psn.value(), n);
            if self.slots.get(slot).is_some_and(|s| s.psn == psn.value()) {
                self.clear(slot);
            }
        }
    }
}

impl SymbolStore for Stores {
    fn keep_source(&mut self, slot: usize, psn: Psn, payload: &[u8]) -> bool {
        self.keep(slot, psn.value(), payload)
    }

    fn source(&self, slot: usize) -> Option<&[u8]> {
        self.slots.get(slot)?.data()
    }

    fn drop_source(&mut self, slot: usize) {
        self.clear(slot);
    }

    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        if slot >= self.repairs.len() {
            return false;
        }
        self.drop_repair_slot(slot);
        let Some(v) = self.copy(symbol) else {
            return false;
        };
        if let Some(r) = self.repairs.get_mut(slot) {
            *r = Some(v);
        }
        true
    }

    fn repair(&self, slot: usize) -> Option<&[u8]> {
        self.repairs.get(slot)?.as_ref().map(Copied::as_slice)
    }

    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        // Two fields: a kept source and a repair copy never share memory.
        let s = self.slots.get(source).and_then(Slot::data);
        let r = self
            .repairs
            .get_mut(repair)
            .and_then(|r| r.as_mut().map(Copied::as_mut_slice));
        (s, r)
    }

    fn drop_repair(&mut self, slot: usize) {
        self.drop_repair_slot(slot);
    }
}

impl Delivery for Stores {
    fn can_restore(&self) -> bool {
        // `inject::restore` builds a packet from the flow's template, which
        // its first packet fills in (a receiver flow made by a HELLO has
        // none until then).
        self.tpl.noted
    }

    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored {
        let built = inject::restore(&self.tpl, payload);
        self.send_rebuilt(built, psn, hold)
    }

    fn replay(&mut self, slot: usize, psn: Psn) -> Restored {
        // A copy of what the slot keeps: the packet as it first arrived
        // (its Identification solved from its ICRC, as for a restored one).
        let built = match self.slots.get(slot).and_then(Slot::data) {
            Some(payload) => inject::restore(&self.tpl, payload),
            // Nothing kept there: nothing tried.
            None => return Restored::Dropped,
        };
        self.send_rebuilt(built, psn, false)
    }

    fn release(&mut self, psn: Psn) {
        let i = psn_slot(psn.value(), self.held.len());
        let Some(h) = self.held.get_mut(i) else {
            return;
        };
        if h.psn != psn.value() {
            return;
        }
        let Some(skb) = h.skb.take() else {
            return;
        };
        // Releases come in PSN order, each once everything before it has
        // gone on: an ACK before `psn` overtakes nothing held any more.
        self.release_acks_before(psn);
        self.uncharge(skb.truesize());
        self.inject(skb, psn.value());
    }
}
