//! In-place initialisation of a [`Crf`] of fixed capacities for hosts with
//! a small stack (the
//! kernel allocates the engine with `vzalloc`; the CRF of a 16 Ki-PSN window
//! is hundreds of KiB and must never be built by value on a 16 KiB stack).

use core::ptr::addr_of_mut;

use super::super::super::psn::{Psn, PsnRange};
use super::blocks::{Block, RepairMeta};
use super::hold::HoldQueue;
use super::probe::Probes;
use super::replay::ReplayState;
use super::report::ReportState;
use super::tc::TcState;
use super::window::Window;
use super::{
    check_caps, CapsError, Counters, Crf, CrfConfig, CrfStorage, Inline, Storage, MAX_CONFIGS,
    NEVER, READ_SPANS,
};

impl<St: CrfStorage> Crf<St> {
    /// Writes a CRF equal to [`Crf::with_storage`]`(cfg, storage)` at
    /// `slot`, field by field, so that the engine itself is never built on
    /// the stack (its storage is the caller's, moved in). Storage
    /// [`check_caps`] refuses is handed back with the reason, and `slot` is
    /// then left unwritten.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self`, and must not hold a live engine: its contents
    /// are overwritten without being dropped, and an engine owns its
    /// storage (which would leak).
    pub unsafe fn init_at_with(
        slot: *mut Self,
        cfg: CrfConfig,
        storage: Storage<St>,
    ) -> Result<(), (CapsError, Storage<St>)> {
        let (blocks, flags, due, hold, repairs) = &storage;
        if let Err(e) = check_caps(
            blocks.as_ref().len(),
            flags.as_ref().len(),
            due.as_ref().len(),
            hold.as_ref().len(),
            repairs.as_ref().len(),
        ) {
            return Err((e, storage));
        }
        let (mut blocks, flags, due, hold, mut repairs) = storage;
        blocks.as_mut().fill(Block::EMPTY);
        repairs.as_mut().fill(RepairMeta::EMPTY);
        // SAFETY: `slot` is valid and aligned (caller); the storage fields
        // are written once each through their raw field pointers, the rest
        // by `init_fields`.
        unsafe {
            addr_of_mut!((*slot).win).write(Window::with(flags, due));
            addr_of_mut!((*slot).hold).write(HoldQueue::with(hold));
            addr_of_mut!((*slot).blocks).write(blocks);
            addr_of_mut!((*slot).repairs).write(repairs);
            Self::init_fields(slot, cfg);
            (*slot).reset_index();
        }
        Ok(())
    }

    /// Writes every field but the storage (window, hold queue, blocks,
    /// repairs), as `with_storage` sets them.
    ///
    /// # Safety
    ///
    /// `slot` valid for writes and aligned for `Self`.
    unsafe fn init_fields(slot: *mut Self, cfg: CrfConfig) {
        // SAFETY: `slot` is valid and aligned (caller); every field written
        // here is written once through a raw field pointer; no reference to
        // uninitialised memory is created. `tc` is initialised before
        // `reset` borrows it.
        unsafe {
            addr_of_mut!((*slot).cfg).write(cfg);
            addr_of_mut!((*slot).configs).write([None; MAX_CONFIGS]);
            addr_of_mut!((*slot).config_age).write([0; MAX_CONFIGS]);
            addr_of_mut!((*slot).config_clock).write(0);
            addr_of_mut!((*slot).kmax).write(1);
            addr_of_mut!((*slot).read_spans).write([PsnRange::new(Psn::ZERO, 0); READ_SPANS]);
            addr_of_mut!((*slot).read_span_next).write(0);
            addr_of_mut!((*slot).resp_end).write(None);
            addr_of_mut!((*slot).ring_head).write(0);
            addr_of_mut!((*slot).ring_len).write(0);
            addr_of_mut!((*slot).free_blocks).write(0);
            addr_of_mut!((*slot).free_repairs).write(0);
            addr_of_mut!((*slot).deadline_min).write(NEVER);
            addr_of_mut!((*slot).deadline_stale).write(false);
            addr_of_mut!((*slot).block_clock).write(0);
            addr_of_mut!((*slot).untriggered).write(0);
            addr_of_mut!((*slot).request_id).write(0);
            addr_of_mut!((*slot).gap_due_min).write(NEVER);
            addr_of_mut!((*slot).requests_from).write(None);
            addr_of_mut!((*slot).release_pending).write(false);
            addr_of_mut!((*slot).decode_pending).write(false);
            addr_of_mut!((*slot).last_now).write(0);
            addr_of_mut!((*slot).report).write(ReportState::new());
            let tc = addr_of_mut!((*slot).tc);
            tc.write(TcState::new());
            (*tc).reset(cfg.tc);
            addr_of_mut!((*slot).probes).write(Probes::new());
            addr_of_mut!((*slot).rtt_sample).write(None);
            addr_of_mut!((*slot).replay).write(ReplayState::new());
            addr_of_mut!((*slot).counters).write(Counters::default());
        }
    }
}

impl<const B: usize, const W: usize, const HQ: usize, const R: usize> Crf<Inline<B, W, HQ, R>> {
    /// Writes a CRF equal to [`Crf::new`]`(cfg)` at `slot`, field by field
    /// and the large arrays element by element, so that no temporary larger
    /// than one block record is built on the stack.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self` (for example from `vzalloc` or
    /// `Box::<MaybeUninit<Self>>::new_uninit`). Any previous contents are
    /// overwritten without being dropped (a `Crf` holds nothing to drop).
    /// Afterwards the memory holds a valid `Crf`.
    pub unsafe fn init_at(slot: *mut Self, cfg: CrfConfig) {
        #[allow(clippy::let_unit_value)]
        let () = Self::CAPACITIES_OK;
        // SAFETY: `slot` is valid and aligned (caller); the storage arrays
        // are written element by element within their arrays (i < B,
        // i < R), the rest by `init_fields`; no reference to uninitialised
        // memory is created.
        unsafe {
            Window::init_at(addr_of_mut!((*slot).win));
            HoldQueue::init_at(addr_of_mut!((*slot).hold));
            let blocks = addr_of_mut!((*slot).blocks).cast::<Block>();
            for i in 0..B {
                blocks.add(i).write(Block::EMPTY);
            }
            let repairs = addr_of_mut!((*slot).repairs).cast::<RepairMeta>();
            for i in 0..R {
                repairs.add(i).write(RepairMeta::EMPTY);
            }
            Self::init_fields(slot, cfg);
            (*slot).reset_index();
        }
    }
}
