//! In-place initialisation of a [`Csf`] of fixed capacities for hosts with
//! a small stack (the kernel allocates the engine with `vzalloc` and must
//! never build it by value: `Csf<Inline<1024, 65536>>` is ~300 KiB).

use core::ptr::addr_of_mut;

use super::budget::RetxBudget;
use super::pace::{Bucket, SendLog};
use super::ring::Ring;
use super::{Csf, CsfCounters, CsfParams, CsfStorage, Inline, TcState};

impl<St: CsfStorage> Csf<St> {
    /// Writes a CSF equal to [`Csf::with_storage`]`(params, ring, acc)` at
    /// `slot`, field by field, so that the engine itself is never built on
    /// the stack (its storage is the caller's, moved in).
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self`, and must not hold a live engine: its contents
    /// are overwritten without being dropped, and an engine owns its
    /// storage (which would leak).
    pub unsafe fn init_at_with(
        slot: *mut Self,
        params: CsfParams,
        ring: St::Ring,
        acc: [St::Acc; 2],
    ) {
        let ring = Ring::new(ring);
        let blocks = ring.capacity();
        // SAFETY: `slot` is valid and aligned (caller); `ring` and `acc` are
        // written once each through their raw field pointers, the rest by
        // `init_fields`.
        unsafe {
            addr_of_mut!((*slot).ring).write(ring);
            addr_of_mut!((*slot).acc).write(acc);
            Self::init_fields(slot, params, blocks);
        }
    }

    /// Writes every field but the ring and the accumulators, as
    /// `with_storage` sets them (`blocks`: the ring's capacity).
    ///
    /// # Safety
    ///
    /// `slot` valid for writes and aligned for `Self`.
    unsafe fn init_fields(slot: *mut Self, params: CsfParams, blocks: usize) {
        // SAFETY: `slot` is valid and aligned (caller); every field written
        // here is written once through a raw field pointer (no reference to
        // uninitialised memory is created).
        unsafe {
            addr_of_mut!((*slot).params).write(params);
            addr_of_mut!((*slot).flow_id).write(params.flow_id);
            addr_of_mut!((*slot).cfg).write(None);
            addr_of_mut!((*slot).next_cfg).write(None);
            addr_of_mut!((*slot).coded_retx).write(true);
            addr_of_mut!((*slot).ordinary).write(true);
            addr_of_mut!((*slot).muted).write(false);
            addr_of_mut!((*slot).srtt).write(params.initial_srtt);
            addr_of_mut!((*slot).max_blocks).write(blocks);
            addr_of_mut!((*slot).enc).write(None);
            addr_of_mut!((*slot).cur_slot).write(0);
            addr_of_mut!((*slot).pending).write(None);
            addr_of_mut!((*slot).next_psn).write(None);
            addr_of_mut!((*slot).last_source).write(0);
            addr_of_mut!((*slot).bucket).write(Bucket::new());
            addr_of_mut!((*slot).retx_budget).write(RetxBudget::new());
            addr_of_mut!((*slot).log).write(SendLog::new());
            addr_of_mut!((*slot).tc).write(TcState::default());
            addr_of_mut!((*slot).quiet_from).write(None);
            addr_of_mut!((*slot).counters).write(CsfCounters::default());
        }
    }
}

impl<const BLOCKS: usize, const ACC: usize> Csf<Inline<BLOCKS, ACC>> {
    /// Writes a CSF equal to [`Csf::new`]`(params)` at `slot`, field by field
    /// and the large arrays element by element, so that no temporary larger
    /// than one block record is built on the stack.
    ///
    /// # Safety
    ///
    /// `slot` must be valid for writes of `size_of::<Self>()` octets and
    /// aligned for `Self` (for example from `vzalloc` or
    /// `Box::<MaybeUninit<Self>>::new_uninit`). Any previous contents are
    /// overwritten without being dropped (a `Csf` holds nothing to drop).
    /// Afterwards the memory holds a valid `Csf`.
    pub unsafe fn init_at(slot: *mut Self, params: CsfParams) {
        // SAFETY: `slot` is valid and aligned (caller); the ring is written
        // element by element, `acc` (a plain octet array, so zero octets are
        // valid values) zero-filled, the rest by `init_fields`.
        unsafe {
            Ring::init_at(addr_of_mut!((*slot).ring));
            addr_of_mut!((*slot).acc)
                .cast::<u8>()
                .write_bytes(0, ACC.saturating_mul(2));
            Self::init_fields(slot, params, BLOCKS);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::{alloc, dealloc, Layout};

    use super::*;

    #[test]
    fn init_at_equals_new_over_garbage() {
        type C = Csf<Inline<8, 64>>;
        let params = CsfParams {
            flow_id: 9,
            initial_srtt: 7,
            ..CsfParams::DEFAULT
        };
        let layout = Layout::new::<C>();
        // SAFETY: the layout is that of `C` (non-zero size); the memory is
        // filled with garbage, initialised by `init_at`, read and freed.
        unsafe {
            let p = alloc(layout).cast::<C>();
            assert!(!p.is_null());
            p.cast::<u8>().write_bytes(0xa5, layout.size());
            C::init_at(p, params);
            let a = format!("{:?}", &*p);
            dealloc(p.cast(), layout);
            assert_eq!(a, format!("{:?}", C::new(params)));
        }
    }

    #[derive(Debug)]
    struct Vecs;
    impl crate::engine::csf::CsfStorage for Vecs {
        type Ring = Vec<crate::engine::csf::Block>;
        type Acc = Vec<u8>;
    }

    #[test]
    fn init_at_with_equals_with_storage() {
        type C = Csf<Vecs>;
        let params = CsfParams {
            flow_id: 3,
            ..CsfParams::DEFAULT
        };
        let ring = || vec![crate::engine::csf::Block::EMPTY; 5];
        let acc = || [vec![0u8; 33], vec![0u8; 33]];
        let mut slot = std::mem::MaybeUninit::<C>::uninit();
        // SAFETY: a slot of the right type; initialised by `init_at_with`,
        // then owned (and dropped) as a `C`.
        let a = unsafe {
            C::init_at_with(slot.as_mut_ptr(), params, ring(), acc());
            slot.assume_init()
        };
        assert_eq!(
            format!("{a:?}"),
            format!("{:?}", C::with_storage(params, ring(), acc()))
        );
        assert_eq!(a.ring_capacity(), 5);
    }
}
