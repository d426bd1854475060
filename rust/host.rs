// SPDX-License-Identifier: GPL-2.0
//! What an engine call reaches outside its engine: the flow it works for
//! ([`Host`]: the CREM socket its messages go to, its Flow ID in the
//! netns's flow table, its events and the counters of both) and, for the CRF, that and the
//! flow's stores as crem-core's one `CrfHost` ([`CrfIo`]). Every call is
//! made under the flow's lock (`crate::flow`).

use crate::crem_core::engine::crf::{Delivery, Restored, SymbolStore};
use crate::crem_core::engine::FecConfig;
use crate::crem_core::engine::Sink;
use crate::crem_core::nl::{flow_event, msg_type};
use crate::crem_core::psn::Psn;
use crate::crem_core::wire::MessageType;
use crate::flow::Flow;
use crate::kernel_ext::bh::Bh;
use crate::store::{Owner, Stores};
use crate::table::{FlowKey, FlowTable};
use crate::trace;
use kernel::bindings::sk_buff_head;

/// Slots of the msgs-in/out-by-type counters (the msg-types set's
/// attributes): message types 1 to 9, 12 (T/C AETH), then one for
/// anything else.
pub(crate) const MSG_SLOTS: usize = msg_type::N;

/// The msgs-by-type slot (`nl::msg_type`) of CREM message `msg`: types
/// 1-9 in order, 12, then "other" (another version, an unknown type, no
/// header). The codecs (crem-core `wire`) decide validity; this only
/// counts.
pub(crate) fn msg_slot(msg: &[u8]) -> usize {
    match msg.first() {
        Some(&b) if b >> 4 == 1 => match b & 0x0f {
            t @ 1..=9 => usize::from(t - 1),
            12 => msg_type::TC_AETH,
            _ => msg_type::OTHER,
        },
        _ => msg_type::OTHER,
    }
}

// The set's order is the message types': 1 to 9 first.
const _: () = assert!(
    msg_type::REPAIR == MessageType::Repair as usize - 1
        && msg_type::CLOSE == MessageType::Close as usize - 1
        && msg_type::TC_AETH == 9
        && msg_type::OTHER == 10
);

/// The slot of REPAIR_REQUESTs.
const REQUEST_SLOT: usize = msg_type::REPAIR_REQUEST;

/// What a flow calls outside itself (its operations, as a netdevice has
/// `net_device_ops`): the socket, event work and the netns's memory
/// budget ([`FlowOps::NETNS`]), or a test's stand-ins.
pub(crate) struct FlowOps {
    /// Sends a message of the flow with a TOS (or queues it on the defer
    /// queue, if not null): false if it could not. Called under the flow's
    /// lock; the queue is null or an initialised `socket::Outbox`'s.
    pub(crate) send: unsafe fn(&Flow, &Bh, u8, *mut sk_buff_head, &[u8]) -> bool,
    /// Charges octets the flow's stores keep (false: refused, counted by
    /// the budget's owner) and gives them back.
    pub(crate) charge: unsafe fn(&Owner, u32) -> bool,
    pub(crate) uncharge: unsafe fn(&Owner, u32),
    /// The flow marked a flow-change event (under its lock).
    pub(crate) event: fn(&Flow),
}

impl FlowOps {
    /// The netns's: its socket (`socket.rs`), memory budget (`netns.rs`)
    /// and event work (`events.rs`).
    pub(crate) const NETNS: FlowOps = FlowOps {
        send: crate::socket::flow_send,
        charge: netns_charge,
        uncharge: netns_uncharge,
        event: netns_event,
    };
}

/// The flow's netns's event work sends it (a KUnit case's flow, of no
/// netns, marks it only).
fn netns_event(f: &Flow) {
    if let Some(st) = f.netns() {
        st.flow_event();
    }
}

/// The flow's netns's budget (`max-memory`); a flow of no netns (a KUnit
/// case's of the netns ops) keeps nothing.
unsafe fn netns_charge(o: &Owner, n: u32) -> bool {
    o.netns().is_some_and(|st| st.charge(n))
}

unsafe fn netns_uncharge(o: &Owner, n: u32) {
    if let Some(st) = o.netns() {
        st.uncharge(n);
    }
}

/// What a flow's engine calls change outside its engine, kept with it
/// under the flow's lock: its CREM message counters and the flow-change
/// events not yet notified.
#[derive(Default)]
pub(crate) struct Outside {
    pub(crate) msgs_in: u64,
    pub(crate) msgs_out: u64,
    pub(crate) send_fail: u64,
    pub(crate) msg_in: [u64; MSG_SLOTS],
    pub(crate) msg_out: [u64; MSG_SLOTS],
    /// Bits by `nl::flow_event` marked and not yet sent (`events.rs`).
    pub(crate) ev_pending: u8,
    /// The reason of the pending close-received.
    pub(crate) close_reason: u16,
}

impl Outside {
    /// Counts a message received.
    pub(crate) fn count_in(&mut self, msg: &[u8]) {
        self.msgs_in = self.msgs_in.wrapping_add(1);
        if let Some(c) = self.msg_in.get_mut(msg_slot(msg)) {
            *c = c.wrapping_add(1);
        }
    }
}

/// The flow an engine call works for.
pub(crate) struct Host<'a> {
    flow: &'a Flow,
    /// TOS of the messages it sends.
    tos: u8,
    /// Where they wait while a source is processed (null: sent at once).
    defer: *mut sk_buff_head,
    out: &'a mut Outside,
    ids: FlowIds<'a>,
}

impl<'a> Host<'a> {
    /// # Safety
    /// The caller holds `flow`'s lock for the lifetime of the returned
    /// value (`out` is its state under that lock); `defer` is null or an
    /// initialised `socket::Outbox`'s queue that outlives it; `ids`: the
    /// flow's place in its table.
    pub(crate) unsafe fn new(
        flow: &'a Flow,
        tos: u8,
        defer: *mut sk_buff_head,
        out: &'a mut Outside,
        ids: FlowIds<'a>,
    ) -> Self {
        Host {
            flow,
            tos,
            defer,
            out,
            ids,
        }
    }

    /// The CRF negotiation assigned (or the CSF learnt) the Flow ID: the
    /// table finds the flow by it from now on.
    pub(crate) fn set_flow_id(&mut self, id: u32) {
        self.ids.set(id);
    }

    /// Marks a flow-change event for the netlink listeners
    /// (`nl::flow_event`; `reason` for close-received); a work item of
    /// the netns sends it.
    pub(crate) fn flow_event(&mut self, ev: u8, reason: u16) {
        if ev > flow_event::CLOSE_RECEIVED {
            return;
        }
        trace::flow_change(self.key(), ev.into(), reason);
        self.out.ev_pending |= 1 << ev;
        if ev == flow_event::CLOSE_RECEIVED {
            self.out.close_reason = reason;
        }
        (self.flow.ops().event)(self.flow);
    }

    /// The flow's key.
    pub(crate) fn key(&self) -> &FlowKey {
        crate::table::InTable::links(self.flow).key()
    }

    /// The flow's FEC configuration in force is now `cfg`.
    pub(crate) fn config_changed(&self, cfg: &FecConfig) {
        trace::config(self.key(), cfg);
    }

    /// Counts a message received for the flow.
    pub(crate) fn count_in(&mut self, msg: &[u8]) {
        self.out.count_in(msg);
    }

    /// Who can say which Flow IDs this flow's peer and side use.
    pub(crate) fn ids(&self) -> FlowIds<'a> {
        self.ids
    }
}

/// A flow's place in its netns's table, for its Flow ID: which IDs its peer
/// and side use (read without a lock: nothing of the flow's own state, so
/// it may sit beside a `&mut Host`, as when the CRF picks a new ID while
/// its engine runs), and its own, once known. A flow in no table (a KUnit
/// case's) has no other flow's ID to avoid, and nothing finds it by its.
#[derive(Clone, Copy)]
pub(crate) struct FlowIds<'a> {
    table: Option<(&'a FlowTable<Flow>, &'a Flow)>,
    /// BH is off for an engine call (the flow's lock): an RCU reader, and
    /// the table's lock may be taken.
    bh: &'a Bh,
}

impl<'a> FlowIds<'a> {
    /// # Safety
    ///
    /// `table` is the table `flow` is inserted in, if it is inserted at
    /// all (in no other since: `FlowTable::set_id`'s contract).
    pub(crate) unsafe fn new(table: Option<(&'a FlowTable<Flow>, &'a Flow)>, bh: &'a Bh) -> Self {
        FlowIds { table, bh }
    }

    /// Whether another flow of this peer and side uses `id` (0: always).
    pub(crate) fn in_use(&self, id: u32) -> bool {
        match self.table {
            Some((t, f)) => {
                let l = crate::table::InTable::links(f);
                t.id_in_use(&l.peer(), id, l.key().side, self.bh)
            }
            None => id == 0,
        }
    }

    fn set(&self, id: u32) {
        if let Some((t, f)) = self.table {
            // SAFETY: `t` is the table `f` was inserted in, if any (`new`).
            unsafe { t.set_id(f, id, self.bh) };
        }
    }
}

impl Sink for Host<'_> {
    fn send(&mut self, msg: &[u8]) {
        let slot = msg_slot(msg);
        if slot == REQUEST_SLOT {
            trace::request(self.key(), msg);
        }
        // SAFETY: the flow is locked, `defer` null or an `Outbox`'s
        // (`Host::new`); `msg` is copied.
        let sent =
            unsafe { (self.flow.ops().send)(self.flow, self.ids.bh, self.tos, self.defer, msg) };
        let o = &mut *self.out;
        if !sent {
            o.send_fail = o.send_fail.wrapping_add(1);
            return;
        }
        o.msgs_out = o.msgs_out.wrapping_add(1);
        if let Some(c) = o.msg_out.get_mut(slot) {
            *c = c.wrapping_add(1);
        }
    }
}

/// A CRF's host for crem-core: messages to the flow's socket, symbols and
/// deliveries to its stores.
pub(crate) struct CrfIo<'a, 'h> {
    pub(crate) sink: &'a mut Host<'h>,
    pub(crate) stores: &'a mut Stores,
}

impl Sink for CrfIo<'_, '_> {
    fn send(&mut self, msg: &[u8]) {
        self.sink.send(msg)
    }
}

impl SymbolStore for CrfIo<'_, '_> {
    fn keep_source(&mut self, slot: usize, psn: Psn, payload: &[u8]) -> bool {
        self.stores.keep_source(slot, psn, payload)
    }

    fn source(&self, slot: usize) -> Option<&[u8]> {
        SymbolStore::source(&*self.stores, slot)
    }

    fn drop_source(&mut self, slot: usize) {
        self.stores.drop_source(slot)
    }

    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        self.stores.keep_repair(slot, symbol)
    }

    fn repair(&self, slot: usize) -> Option<&[u8]> {
        self.stores.repair(slot)
    }

    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        self.stores.source_and_repair_mut(source, repair)
    }

    fn drop_repair(&mut self, slot: usize) {
        self.stores.drop_repair(slot)
    }
}

impl Delivery for CrfIo<'_, '_> {
    fn can_restore(&self) -> bool {
        self.stores.can_restore()
    }

    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored {
        let r = self.stores.restored(psn, payload, hold);
        trace::restore(self.sink.key(), psn, hold, r == Restored::Verified);
        r
    }

    fn replay(&mut self, slot: usize, psn: Psn) -> Restored {
        let r = self.stores.replay(slot, psn);
        trace::restore(self.sink.key(), psn, false, r == Restored::Verified);
        r
    }

    fn release(&mut self, psn: Psn) {
        Delivery::release(&mut *self.stores, psn)
    }
}

/// A random u32 from the kernel's generator.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: `get_random_u32` has no preconditions and may be called in
    // any context, softirq included (it takes no sleeping lock).
    unsafe { kernel::bindings::get_random_u32() }
}
