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
