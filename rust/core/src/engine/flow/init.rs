//! In-place initialisation of the flows: the kernel allocates them with
//! `vzalloc` and must never build these structs (hundreds of KiB with the
//! engines' arrays) on its 16 KiB stack.

use core::ptr::addr_of_mut;

use super::super::crf::{self, Crf, CrfStorage};
use super::super::csf::{Csf, CsfStorage, Inline};
use super::super::loss_window::LossWindow;
use super::super::policy::Policy;
use super::super::rtt::RttEstimator;
use super::ack_probe::AckProbe;
use super::config_book::ConfigBook;
use super::receiver::{ReceiverCounters, ReceiverFlow, ReceiverParams};
use super::repair_log::RepairLog;
use super::sender::{SenderCounters, SenderFlow, SenderParams, CONFIG_IDS};

impl<St: CsfStorage> SenderFlow<St> {
    /// Writes a flow equal to [`SenderFlow::with_storage`]`(params, ring,
    /// acc)` at `slot` without building it on the stack (the CSF through
    /// [`Csf::init_at_with`]).
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self`, and must not hold a live flow: its contents are
    /// overwritten without being dropped, and a flow owns its engine's
    /// storage (which would leak).
    pub unsafe fn init_at_with(
        slot: *mut Self,
        params: SenderParams,
        ring: St::Ring,
        acc: [St::Acc; 2],
    ) {
        // SAFETY: `slot` is valid and aligned (caller); the CSF is written
        // by its own `init_at_with`, the rest by `init_fields`.
        unsafe {
            Csf::init_at_with(addr_of_mut!((*slot).csf), params.csf, ring, acc);
            Self::init_fields(slot, params);
        }
    }

    /// Writes every field but the CSF, as `new` sets them.
    ///
    /// # Safety
    ///
    /// `slot` valid for writes and aligned for `Self`.
    unsafe fn init_fields(slot: *mut Self, params: SenderParams) {
        // SAFETY: `slot` is valid and aligned (caller); every field but the
        // CSF is written once through a raw field pointer, the block counts
        // element by element within their array; no reference to
        // uninitialised memory is created.
        unsafe {
            addr_of_mut!((*slot).params).write(params);
            addr_of_mut!((*slot).neg).write(Self::new_negotiation(&params));
            addr_of_mut!((*slot).policy).write(Policy::new(Self::policy_config(&params)));
            addr_of_mut!((*slot).limits).write(None);
            addr_of_mut!((*slot).protected).write(false);
            addr_of_mut!((*slot).rtt).write(RttEstimator::new(params.rtt_hint));
            let blocks = addr_of_mut!((*slot).blocks).cast::<u32>();
            for i in 0..CONFIG_IDS {
                blocks.add(i).write(0);
            }
            addr_of_mut!((*slot).repair_log).write(RepairLog::new());
            addr_of_mut!((*slot).repairs_logged).write(0);
            addr_of_mut!((*slot).block_time).write(0);
            addr_of_mut!((*slot).last_open).write(None);
            addr_of_mut!((*slot).pinned).write(false);
            addr_of_mut!((*slot).mtu).write(Self::flow_mtu(&params));
            addr_of_mut!((*slot).ack_probe).write(AckProbe::new());
            addr_of_mut!((*slot).counters).write(SenderCounters::default());
        }
    }
}

impl<const BLOCKS: usize, const ACC: usize> SenderFlow<Inline<BLOCKS, ACC>> {
    /// Writes a flow equal to [`SenderFlow::new`]`(params)` at `slot`
    /// without any large temporary (the CSF through [`Csf::init_at`]).
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self` (`vzalloc`, `Box::<MaybeUninit<Self>>::new_uninit`).
    /// Previous contents are overwritten without being dropped (the flow
    /// holds nothing to drop). Afterwards the memory holds a valid flow.
    pub unsafe fn init_at(slot: *mut Self, params: SenderParams) {
        // SAFETY: `slot` is valid and aligned (caller); the CSF is written
        // by its own `init_at`, the rest by `init_fields`.
        unsafe {
            Csf::init_at(addr_of_mut!((*slot).csf), params.csf);
            Self::init_fields(slot, params);
        }
    }
}

impl<St: CrfStorage> ReceiverFlow<St> {
    /// Writes a flow equal to [`ReceiverFlow::with_storage`]`(params,
    /// storage)` at `slot` without building it on the stack (the CRF
    /// through [`Crf::init_at_with`]); storage the CRF refuses is handed
    /// back with the reason, and `slot` is then left unwritten.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self`, and must not hold a live flow: its contents are
    /// overwritten without being dropped, and a flow owns its engine's
    /// storage (which would leak).
    pub unsafe fn init_at_with(
        slot: *mut Self,
        params: ReceiverParams,
        storage: crf::Storage<St>,
    ) -> Result<(), (crf::CapsError, crf::Storage<St>)> {
        // SAFETY: `slot` is valid and aligned (caller); the CRF is written
        // by its own `init_at_with` (nothing written if it refuses), the
        // rest by `init_fields`.
        unsafe {
            Crf::init_at_with(addr_of_mut!((*slot).crf), params.crf, storage)?;
            Self::init_fields(slot, params);
        }
        Ok(())
    }

    /// Writes every field but the CRF, as `new` sets them, then follows
    /// the RTT as `new` ends.
    ///
    /// # Safety
    ///
    /// `slot` valid for writes and aligned for `Self`, its CRF written.
    unsafe fn init_fields(slot: *mut Self, params: ReceiverParams) {
        // SAFETY: `slot` is valid and aligned (caller); every other field
        // is written once through a raw field pointer; the one reference
        // made, for `follow_rtt`, is made after the last field is written,
        // to the valid flow the caller then owns.
        unsafe {
            addr_of_mut!((*slot).params).write(params);
            addr_of_mut!((*slot).neg).write(Self::new_negotiation(&params));
            addr_of_mut!((*slot).book).write(ConfigBook::new());
            addr_of_mut!((*slot).loss).write(LossWindow::new());
            addr_of_mut!((*slot).reports_seen).write(0);
            addr_of_mut!((*slot).rtt).write(RttEstimator::new(params.crf.srtt));
            addr_of_mut!((*slot).counters).write(ReceiverCounters::default());
            (*slot).follow_rtt();
        }
    }
}

impl<const B: usize, const W: usize, const HQ: usize, const R: usize>
    ReceiverFlow<crf::Inline<B, W, HQ, R>>
{
    /// Writes a flow equal to [`ReceiverFlow::new`]`(params)` at `slot`
    /// without any large temporary (the CRF through [`Crf::init_at`]).
    ///
    /// # Safety
    ///
    /// As for [`SenderFlow::init_at`]: `slot` valid for writes and aligned
    /// for `Self`; previous contents are overwritten without being dropped.
    pub unsafe fn init_at(slot: *mut Self, params: ReceiverParams) {
        // SAFETY: `slot` is valid and aligned (caller); the CRF is written
        // by its own `init_at`, the rest by `init_fields`.
        unsafe {
            Crf::init_at(addr_of_mut!((*slot).crf), params.crf);
            Self::init_fields(slot, params);
        }
    }
}
