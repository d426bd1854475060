//! Whose capacities a simulated flow has, and in what storage: crem-core's
//! engines take their arrays from the caller, fixed (`Inline`, sized at
//! compile time) or allocated at run time, as the kernel allocates them.

use core::mem::size_of;

use crem_core::engine::crf::{self, CapsError, CrfCaps, CrfStorage, HoldEntry, RepairMeta};
use crem_core::engine::csf::{self, CsfStorage};
use crem_core::engine::flow::{ReceiverFlow, ReceiverParams, SenderFlow, SenderParams};
use crem_core::engine::module_caps::{self as m, FlowCaps};

use crate::model::SimConfig;

/// A flow's engines and their capacities.
pub(crate) trait Caps {
    type Csf: CsfStorage;
    type Crf: CrfStorage;
    /// The CRF's capacities (its open blocks are announced in HELLO_ACK).
    fn crf_caps(c: &SimConfig) -> CrfCaps;
    fn sender(c: &SimConfig, p: SenderParams) -> Box<SenderFlow<Self::Csf>>;
    fn receiver(
        c: &SimConfig,
        p: ReceiverParams,
    ) -> Result<Box<ReceiverFlow<Self::Crf>>, CapsError>;
    /// Octets of the sender's and the receiver's engine, their arrays
    /// included (as `rust/engine.rs`'s `engine_octets` counts them).
    fn engine_octets(c: &SimConfig) -> (usize, usize);
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
    fn crf_caps(_: &SimConfig) -> CrfCaps {
        CrfCaps {
            blocks: RB,
            window: RW,
            held: RH,
            repairs: RR,
        }
    }
    fn sender(_: &SimConfig, p: SenderParams) -> Box<SenderFlow<Self::Csf>> {
        Box::new(SenderFlow::new(p))
    }
    fn receiver(
        _: &SimConfig,
        p: ReceiverParams,
    ) -> Result<Box<ReceiverFlow<Self::Crf>>, CapsError> {
        Ok(Box::new(ReceiverFlow::new(p)))
    }
    fn engine_octets(_: &SimConfig) -> (usize, usize) {
        // The arrays are in the engines.
        (
            size_of::<SenderFlow<Self::Csf>>(),
            size_of::<ReceiverFlow<Self::Crf>>(),
        )
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

/// crem.ko's capacities for the run's `max_bdp` and k
/// (`module_caps::caps_for`, the module's one sizing rule) in vectors
/// allocated at run time, as the module allocates each flow's.
pub(crate) struct ModuleInVecs;

fn flow_caps(c: &SimConfig) -> FlowCaps {
    m::caps_for(c.max_bdp, c.k)
}

impl Caps for ModuleInVecs {
    type Csf = Vecs;
    type Crf = Vecs;
    fn crf_caps(c: &SimConfig) -> CrfCaps {
        flow_caps(c).crf
    }
    fn sender(c: &SimConfig, p: SenderParams) -> Box<SenderFlow<Vecs>> {
        let f = flow_caps(c);
        let ring = vec![csf::Block::EMPTY; f.csf_blocks];
        let acc = [vec![0; f.csf_acc], vec![0; f.csf_acc]];
        Box::new(SenderFlow::with_storage(p, ring, acc))
    }
    fn receiver(c: &SimConfig, p: ReceiverParams) -> Result<Box<ReceiverFlow<Vecs>>, CapsError> {
        let c = Self::crf_caps(c);
        let storage = (
            vec![crf::Block::EMPTY; c.blocks],
            vec![0; c.window],
            vec![0; c.window],
            vec![HoldEntry::EMPTY; c.held],
            vec![RepairMeta::EMPTY; c.repairs],
        );
        Ok(Box::new(ReceiverFlow::with_storage(p, storage)?))
    }
    fn engine_octets(c: &SimConfig) -> (usize, usize) {
        let f = flow_caps(c);
        let r = &f.crf;
        let csf = size_of::<SenderFlow<Vecs>>()
            + f.csf_blocks * size_of::<csf::Block>()
            + 2 * f.csf_acc * size_of::<u8>();
        let crf = size_of::<ReceiverFlow<Vecs>>()
            + r.blocks * size_of::<crf::Block>()
            + r.window * (size_of::<u16>() + size_of::<u32>())
            + r.held * size_of::<HoldEntry>()
            + r.repairs * size_of::<RepairMeta>();
        (csf, crf)
    }
}
