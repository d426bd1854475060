//! Engines in storage their caller sizes at run time (`CsfStorage`,
//! `CrfStorage`): lengths the CRF cannot work with are refused, each with
//! its reason, and never panic; accepted lengths are the capacities it
//! reports. (That such engines run exactly as fixed arrays of the same
//! sizes is crem-sim's `runtime_storage_runs_as_fixed_arrays`.)

use crem_core::engine::crf::{
    self, CapsError, Crf, CrfCaps, CrfConfig, CrfStorage, HoldEntry, RepairMeta,
};
use crem_core::engine::csf::{self, Csf, CsfParams, CsfStorage};

#[derive(Debug)]
struct Vecs;

impl CrfStorage for Vecs {
    type Blocks = Vec<crf::Block>;
    type Flags = Vec<u16>;
    type Due = Vec<u32>;
    type Hold = Vec<HoldEntry>;
    type Repairs = Vec<RepairMeta>;
}

impl CsfStorage for Vecs {
    type Ring = Vec<csf::Block>;
    type Acc = Vec<u8>;
}

fn crf(
    blocks: usize,
    window: usize,
    due: usize,
    held: usize,
    repairs: usize,
) -> Result<Crf<Vecs>, CapsError> {
    Crf::with_storage(
        CrfConfig::new(1),
        (
            vec![crf::Block::EMPTY; blocks],
            vec![0; window],
            vec![0; due],
            vec![HoldEntry::EMPTY; held],
            vec![RepairMeta::EMPTY; repairs],
        ),
    )
}

#[test]
fn crf_storage_is_checked() {
    let refused = [
        ((4, 511, 511, 1, 1), CapsError::Window),
        ((4, 512, 513, 1, 1), CapsError::Window),
        ((4, 1 << 22, 1 << 22, 1, 1), CapsError::Window),
        ((0, 512, 512, 1, 1), CapsError::Blocks),
        ((65_536, 512, 512, 1, 1), CapsError::Blocks),
        ((4, 512, 512, 0, 1), CapsError::Hold),
        ((4, 512, 512, 1, 0), CapsError::Repairs),
        ((4, 512, 512, 1, 65_536), CapsError::Repairs),
    ];
    for ((b, w, d, h, r), want) in refused {
        assert_eq!(crf(b, w, d, h, r).err(), Some(want), "{b} {w} {d} {h} {r}");
    }
    // Any accepted lengths, powers of two or not, are its capacities.
    for (b, w, h, r) in [
        (1, 512, 1, 1),
        (33, 1000, 7, 300),
        (4096, 65_536, 16_384, 32_768),
    ] {
        let c = crf(b, w, w, h, r).expect("accepted");
        let want = CrfCaps {
            blocks: b,
            window: w,
            held: h,
            repairs: r,
        };
        assert_eq!(c.caps(), want);
        assert_eq!(c.open_blocks(), 0);
    }
}

#[test]
fn csf_storage_sizes_its_ring() {
    for n in [0usize, 1, 5, 64, 1000] {
        let c: Csf<Vecs> = Csf::with_storage(
            CsfParams::DEFAULT,
            vec![csf::Block::EMPTY; n],
            [vec![0; 100], vec![0; 100]],
        );
        assert_eq!(c.ring_capacity(), n);
    }
}

mod sizing {
    use crem_core::engine::crf::check_caps;
    use crem_core::engine::module_caps::{
        caps_for, CRF_BLOCKS, CRF_HELD, CRF_REPAIRS, CRF_WINDOW, CSF_ACC, CSF_BLOCKS,
        CSF_STORE_SLOTS, MAX_BDP_DEFAULT, MAX_BDP_MAX,
    };
    use proptest::prelude::*;

    #[test]
    fn the_default_is_the_fixed_capacities() {
        let c = caps_for(MAX_BDP_DEFAULT, 32);
        assert_eq!(
            (c.csf_blocks, c.csf_acc, c.csf_store),
            (CSF_BLOCKS, CSF_ACC, CSF_STORE_SLOTS)
        );
        assert_eq!(
            (c.crf.blocks, c.crf.window, c.crf.held, c.crf.repairs),
            (CRF_BLOCKS, CRF_WINDOW, CRF_HELD, CRF_REPAIRS)
        );
        // 10 Gbit/s x 20 ms at 4 KiB: 6104 packets in flight.
        let c = caps_for(6104, 32);
        assert_eq!(
            (c.crf.window, c.crf.blocks, c.csf_blocks, c.csf_store),
            (32_768, 1024, 2048, 65_536)
        );
    }

    proptest! {
        /// Any input gives capacities a CRF accepts, a window of at least
        /// twice the packets in flight (up to the largest), powers of two
        /// where the engines index by PSN, a CSF store that spans what the
        /// CSF retains, and more of everything for more packets.
        #[test]
        fn caps_for_is_sound_and_monotone(p in any::<u32>(), q in any::<u32>(), k in any::<u8>()) {
            let c = caps_for(p, k);
            prop_assert_eq!(check_caps(c.crf.blocks, c.crf.window, c.crf.window, c.crf.held, c.crf.repairs), Ok(()));
            prop_assert!(c.crf.window.is_power_of_two() && c.csf_store.is_power_of_two());
            prop_assert!(c.crf.window as u64 >= 4 * u64::from(p.min(MAX_BDP_MAX)));
            prop_assert!(c.csf_store >= c.csf_blocks * usize::from(k.max(1)));
            prop_assert!(c.csf_blocks >= c.crf.blocks);
            let (lo, hi) = (caps_for(p.min(q), k), caps_for(p.max(q), k));
            prop_assert!(lo.crf.window <= hi.crf.window && lo.crf.blocks <= hi.crf.blocks);
            prop_assert!(lo.crf.held <= hi.crf.held && lo.crf.repairs <= hi.crf.repairs);
            prop_assert!(lo.csf_blocks <= hi.csf_blocks && lo.csf_store <= hi.csf_store);
        }
    }
}
