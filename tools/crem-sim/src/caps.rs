//! Whose capacities a simulated flow has, and in what storage: crem-core's
//! engines take their arrays from the caller, fixed (`Inline`, sized at
//! compile time) or allocated at run time, as the kernel allocates them.

use crem_core::engine::crf::{self, CapsError, CrfCaps, CrfStorage, HoldEntry, RepairMeta};
use crem_core::engine::csf::{self, CsfStorage};
use crem_core::engine::flow::{ReceiverFlow, ReceiverParams, SenderFlow, SenderParams};
use crem_core::engine::module_caps as m;

/// A flow's engines and their capacities.
pub(crate) trait Caps {
    type Csf: CsfStorage;
    type Crf: CrfStorage;
    /// The CRF's capacities (its open blocks are announced in HELLO_ACK).
    fn crf_caps() -> CrfCaps;
    fn sender(p: SenderParams) -> Box<SenderFlow<Self::Csf>>;
    fn receiver(p: ReceiverParams) -> Result<Box<ReceiverFlow<Self::Crf>>, CapsError>;
}

/// Fixed arrays in the engines: CSF blocks and accumulator octets, CRF
/// blocks, window, hold queue, repairs.
pub(crate) struct Fixed<
    const CB: usize,
    const CA: usize,
    const RB: usize,
    const RW: usize,
    const RH: usize,
    const RR: usize,
>;

impl<
        const CB: usize,
        const CA: usize,
        const RB: usize,
        const RW: usize,
        const RH: usize,
        const RR: usize,
    > Caps for Fixed<CB, CA, RB, RW, RH, RR>
{
    type Csf = csf::Inline<CB, CA>;
    type Crf = crf::Inline<RB, RW, RH, RR>;
    fn crf_caps() -> CrfCaps {
        CrfCaps {
            blocks: RB,
            window: RW,
            held: RH,
            repairs: RR,
        }
    }
    fn sender(p: SenderParams) -> Box<SenderFlow<Self::Csf>> {
        Box::new(SenderFlow::new(p))
    }
    fn receiver(p: ReceiverParams) -> Result<Box<ReceiverFlow<Self::Crf>>, CapsError> {
        Ok(Box::new(ReceiverFlow::new(p)))
    }
}

/// Vectors: the storage of a run-time size.
#[derive(Debug)]
pub(crate) struct Vecs;

impl CsfStorage for Vecs {
    type Ring = Vec<csf::Block>;
    type Acc = Vec<u8>;
}

impl CrfStorage for Vecs {
    type Blocks = Vec<crf::Block>;
    type Flags = Vec<u16>;
    type Due = Vec<u32>;
    type Hold = Vec<HoldEntry>;
    type Repairs = Vec<RepairMeta>;
}

/// crem.ko's capacities (`module_caps`) in vectors allocated at run time:
/// the same engines as [`Fixed`] with the module's sizes, in the storage
/// the module will size per flow.
pub(crate) struct ModuleInVecs;

impl Caps for ModuleInVecs {
    type Csf = Vecs;
    type Crf = Vecs;
    fn crf_caps() -> CrfCaps {
        CrfCaps {
            blocks: m::CRF_BLOCKS,
            window: m::CRF_WINDOW,
            held: m::CRF_HELD,
            repairs: m::CRF_REPAIRS,
        }
    }
    fn sender(p: SenderParams) -> Box<SenderFlow<Vecs>> {
        let ring = vec![csf::Block::EMPTY; m::CSF_BLOCKS];
        let acc = [vec![0; m::CSF_ACC], vec![0; m::CSF_ACC]];
        Box::new(SenderFlow::with_storage(p, ring, acc))
    }
    fn receiver(p: ReceiverParams) -> Result<Box<ReceiverFlow<Vecs>>, CapsError> {
        let c = Self::crf_caps();
        let storage = (
            vec![crf::Block::EMPTY; c.blocks],
            vec![0; c.window],
            vec![0; c.window],
            vec![HoldEntry::EMPTY; c.held],
            vec![RepairMeta::EMPTY; c.repairs],
        );
        Ok(Box::new(ReceiverFlow::with_storage(p, storage)?))
    }
}
