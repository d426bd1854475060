// SPDX-License-Identifier: GPL-2.0
//! crem-core's host traits over the C stores of one flow (`glue/crem_store.c`,
//! `glue/crem_flow.c`): every call is made under the flow's lock, from inside
//! a `crem_rs_*` entry point, so the pointers C returns stay valid for the
//! borrow the trait hands out (until the engine's next store call).

use crate::crem_core::engine::crf::{Delivery, Restored, SymbolStore};
use crate::crem_core::engine::csf::SourceStore;
use crate::crem_core::engine::Sink;
use crate::crem_core::psn::{Psn, PsnRange};
use crate::ffi;
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

    /// A second handle on the same flow (the CSF takes its sink and its
    /// store as two arguments).
    pub(crate) fn alias(&self) -> Host {
        Host { flow: self.flow }
    }

    fn f(&self) -> *mut ffi::crem_flow {
        self.flow.as_ptr()
    }
}

/// A C-owned buffer as a slice (empty for NULL).
///
/// # Safety
/// `p` is NULL or valid for `len` bytes for the lifetime `'a`.
unsafe fn slice<'a>(p: *const u8, len: u32) -> Option<&'a [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: per the function contract.
    Some(unsafe { core::slice::from_raw_parts(p, len as usize) })
}

impl Sink for Host {
    fn send(&mut self, msg: &[u8]) {
        // SAFETY: the flow is live and locked (Host::new); C copies `msg`.
        unsafe { ffi::crem_glue_send(self.f(), msg.as_ptr(), msg.len() as u32) };
    }
}

impl SourceStore for Host {
    fn source(&self, psn: Psn) -> Option<&[u8]> {
        let mut len = 0u32;
        // SAFETY: the flow is live and locked; the retained skb stays until
        // `release`, which needs `&mut self`, so not during this borrow.
        unsafe {
            let p = ffi::crem_glue_csf_source(self.f(), psn.value(), &mut len);
            slice(p, len)
        }
    }

    fn release(&mut self, range: PsnRange) {
        // SAFETY: the flow is live and locked.
        unsafe { ffi::crem_glue_csf_release(self.f(), range.start.value(), range.count) };
    }
}

impl Host {
    /// Keeps the source the engine just accepted (CSF retention).
    pub(crate) fn csf_keep(&mut self, psn: Psn, payload: &[u8]) -> bool {
        // SAFETY: the flow is live and locked; C clones or copies `payload`.
        unsafe {
            ffi::crem_glue_csf_keep(
                self.f(),
                psn.value(),
                payload.as_ptr(),
                payload.len() as u32,
            )
        }
    }
}

impl SymbolStore for Host {
    fn keep_source(&mut self, slot: usize, psn: Psn, payload: &[u8]) -> bool {
        // SAFETY: the flow is live and locked; C clones or copies `payload`.
        unsafe {
            ffi::crem_glue_crf_keep_source(
                self.f(),
                slot as u32,
                psn.value(),
                payload.as_ptr(),
                payload.len() as u32,
            )
        }
    }

    fn source(&self, slot: usize) -> Option<&[u8]> {
        let mut len = 0u32;
        // SAFETY: kept until `drop_source` (needs `&mut self`).
        unsafe {
            slice(
                ffi::crem_glue_crf_source(self.f(), slot as u32, &mut len),
                len,
            )
        }
    }

    fn drop_source(&mut self, slot: usize) {
        // SAFETY: the flow is live and locked.
        unsafe { ffi::crem_glue_crf_drop_source(self.f(), slot as u32) };
    }

    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        // SAFETY: the flow is live and locked; C copies `symbol`.
        unsafe {
            ffi::crem_glue_crf_keep_repair(
                self.f(),
                slot as u32,
                symbol.as_ptr(),
                symbol.len() as u32,
            )
        }
    }

    fn repair(&self, slot: usize) -> Option<&[u8]> {
        let mut len = 0u32;
        // SAFETY: kept until `drop_repair` (needs `&mut self`).
        unsafe {
            slice(
                ffi::crem_glue_crf_repair(self.f(), slot as u32, &mut len),
                len,
            )
        }
    }

    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        let (mut sl, mut rl) = (0u32, 0u32);
        // SAFETY: a kept source and a kept repair are separate allocations
        // (an skb or a copy, and a private copy), valid until dropped, which
        // needs `&mut self` again.
        unsafe {
            let s = ffi::crem_glue_crf_source(self.f(), source as u32, &mut sl);
            let r = ffi::crem_glue_crf_repair(self.f(), repair as u32, &mut rl);
            let r = if r.is_null() {
                None
            } else {
                Some(core::slice::from_raw_parts_mut(r, rl as usize))
            };
            (slice(s, sl), r)
        }
    }

    fn drop_repair(&mut self, slot: usize) {
        // SAFETY: the flow is live and locked.
        unsafe { ffi::crem_glue_crf_drop_repair(self.f(), slot as u32) };
    }
}

impl Delivery for Host {
    fn restored(&mut self, psn: Psn, payload: &[u8], hold: bool) -> Restored {
        // SAFETY: the flow is live and locked; C builds a new skb from it.
        let r = unsafe {
            ffi::crem_glue_crf_restored(
                self.f(),
                psn.value(),
                payload.as_ptr(),
                payload.len() as u32,
                hold,
            )
        };
        match u32::from(r) {
            ffi::CREM_RESTORED_VERIFIED => Restored::Verified,
            ffi::CREM_RESTORED_ICRC_FAILED => Restored::IcrcFailed,
            ffi::CREM_RESTORED_NO_HEADER => Restored::NoHeader,
            _ => Restored::Dropped,
        }
    }

    fn release(&mut self, psn: Psn) {
        // SAFETY: the flow is live and locked.
        unsafe { ffi::crem_glue_crf_release(self.f(), psn.value()) };
    }
}

impl Host {
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

    /// Whether another flow of this peer and side uses `id`.
    pub(crate) fn flow_id_in_use(&self, id: u32) -> bool {
        // SAFETY: the flow is live and locked; C reads the table under RCU.
        unsafe { ffi::crem_glue_flow_id_in_use(self.f(), id) }
    }
}

/// A random u32 from the kernel's generator.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: no preconditions.
    unsafe { ffi::crem_glue_random() }
}
