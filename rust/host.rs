// SPDX-License-Identifier: GPL-2.0
//! What an engine call reaches outside its engine: the C flow it works for
//! ([`Host`]: the CREM socket its messages go to, its Flow ID in the table,
//! its events) and, for the CRF, that and the flow's stores as crem-core's
//! one `CrfHost` ([`CrfIo`]). Every call is made under the flow's lock, from
//! inside a `crem_rs_*` entry point.

use crate::crem_core::engine::crf::{Delivery, Restored, SymbolStore};
use crate::crem_core::engine::Sink;
use crate::crem_core::psn::Psn;
use crate::ffi;
use crate::store::Stores;
use core::ptr::NonNull;

/// The C flow an engine call works for.
pub(crate) struct Host {
    flow: NonNull<ffi::crem_flow>,
}

impl Host {
    /// # Safety
    /// `flow` is a live flow whose lock the caller holds for the lifetime of
    /// the returned value.
    pub(crate) unsafe fn new(flow: *mut ffi::crem_flow) -> Option<Host> {
        NonNull::new(flow).map(|flow| Host { flow })
    }

    fn f(&self) -> *mut ffi::crem_flow {
        self.flow.as_ptr()
    }

    /// The CRF negotiation assigned (or the CSF learnt) the Flow ID.
    pub(crate) fn set_flow_id(&mut self, id: u32) {
        // SAFETY: the flow is live and locked.
        unsafe { ffi::crem_glue_flow_set_id(self.f(), id) };
    }

    /// Marks a flow-change event for the netlink listeners
    /// (`CREM_FLOW_EVENT_*`; `reason` for close-received).
    pub(crate) fn flow_event(&mut self, ev: u32, reason: u16) {
        // SAFETY: the flow is live and locked.
        unsafe { ffi::crem_glue_flow_event(self.f(), ev as u8, reason) };
    }

    /// Who can say which Flow IDs this flow's peer and side use.
    pub(crate) fn ids(&self) -> FlowIds {
        FlowIds { flow: self.flow }
    }
}

/// Reads which Flow IDs are in use for a flow's peer and side (the table,
/// under RCU): nothing of the flow's own state, so it may sit beside a
/// `&mut Host` (the CRF picks a new ID while its engine runs).
#[derive(Clone, Copy)]
pub(crate) struct FlowIds {
    flow: NonNull<ffi::crem_flow>,
}

impl FlowIds {
    /// Whether another flow of this peer and side uses `id`.
    pub(crate) fn in_use(&self, id: u32) -> bool {
        // SAFETY: made from a `Host`, so the flow is live and locked for as
        // long as it is used (within the same entry point); C reads the
        // table under RCU and the flow's immutable key.
        unsafe { ffi::crem_glue_flow_id_in_use(self.flow.as_ptr(), id) }
    }
}

impl Sink for Host {
    fn send(&mut self, msg: &[u8]) {
        // SAFETY: the flow is live and locked (Host::new); C copies `msg`.
        unsafe { ffi::crem_glue_send(self.f(), msg.as_ptr(), msg.len() as u32) };
    }
}

/// A CRF's host for crem-core: messages to the flow's socket, symbols and
/// deliveries to its stores.
pub(crate) struct CrfIo<'a> {
    pub(crate) sink: &'a mut Host,
    pub(crate) stores: &'a mut Stores,
}

impl Sink for CrfIo<'_> {
    fn send(&mut self, msg: &[u8]) {
        self.sink.send(msg)
    }
}

impl SymbolStore for CrfIo<'_> {
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

impl Delivery for CrfIo<'_> {
    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored {
        self.stores.restored(psn, payload, hold)
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
