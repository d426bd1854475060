//! What one flow's two sides hold, in octets, as crem.ko would hold it:
//! packet data (peaks over the run) and structures (the engines with their
//! arrays, and the stores' arrays as the module sizes them), against the
//! path's bandwidth-delay product.
//!
//! * CSF data: the retained sources (`csf.retention_octets_max`, the
//!   engine's gauge; the caller's store is checked against it).
//! * CRF data: kept sources, kept repair symbols and held packets
//!   ([`crate::hosts::DataOctets`]), the peak of their sum.
//! * Engines: `size_of` of the simulated engine plus its arrays' lengths
//!   times their elements' sizes, as `rust/engine.rs`'s `engine_octets`
//!   counts the module's (its arrays are `FlowArray`s of 16 octets where
//!   the simulation's are `Vec`s of 24: a few octets more here).
//! * Stores: the module's arrays (`rust/store.rs`, `Stores::new`) for the
//!   flow's capacities, with the module's element sizes ([`STORE_SLOT`],
//!   [`STORE_REPAIR`], [`STORE_HELD`], checked against a copy of their
//!   layout below). The simulation's own stores are maps and vectors of
//!   payloads, not counted.
//!
//! Data are UDP payloads (BTH through ICRC): the module charges a clone's
//! skb truesize instead, so its figure is larger (see docs/perf.md).

use crem_core::engine::crf::CrfCaps;
use crem_core::engine::SEC;

/// `size_of::<Slot>()` of `rust/store.rs` (64-bit): a kept source (a clone
/// or a copy, its PSN and length). The CSF's store and the CRF's source
/// store have one per slot.
pub const STORE_SLOT: usize = 32;
/// `size_of::<Option<Copied>>()`: a CRF repair slot.
pub const STORE_REPAIR: usize = 16;
/// `size_of::<Held>()`: a CRF held-packet slot.
pub const STORE_HELD: usize = 16;

/// Octets of the module's stores for one side: the CSF's ring of
/// `csf_store` slots by PSN, or the CRF's source slots (one per window
/// slot), repair slots and held slots (one per window slot).
pub fn store_octets(csf: bool, csf_store: usize, crf: &CrfCaps) -> u64 {
    let n = if csf {
        csf_store * STORE_SLOT
    } else {
        crf.window * STORE_SLOT + crf.repairs * STORE_REPAIR + crf.window * STORE_HELD
    };
    n as u64
}

/// One side's memory, octets.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SideMemory {
    /// Packet data, the peak over the run.
    pub data_max: u64,
    /// The engine, its arrays included.
    pub engine: u64,
    /// The module's store arrays for the flow's capacities.
    pub stores: u64,
    /// `data_max + engine + stores`: the most the side held at once.
    pub total: u64,
    /// `total` / the bandwidth-delay product.
    pub bdp_ratio: f64,
}

impl SideMemory {
    /// A side's figures against `bdp` octets.
    pub fn new(data_max: u64, engine: u64, stores: u64, bdp: u64) -> SideMemory {
        let total = data_max + engine + stores;
        SideMemory {
            data_max,
            engine,
            stores,
            total,
            bdp_ratio: if bdp == 0 {
                0.0
            } else {
                total as f64 / bdp as f64
            },
        }
    }

    /// `engine + stores`.
    pub fn structures(&self) -> u64 {
        self.engine + self.stores
    }
}

/// Both sides' memory, against the path's bandwidth-delay product.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Memory {
    /// Link rate × RTT / 8, octets.
    pub bdp_octets: u64,
    /// The sender's side.
    pub csf: SideMemory,
    /// The receiver's side.
    pub crf: SideMemory,
    /// CRF data peaks, each on its own: kept sources, repair symbols,
    /// held packets.
    pub crf_sources_max: u64,
    /// See `crf_sources_max`.
    pub crf_repairs_max: u64,
    /// See `crf_sources_max`.
    pub crf_held_max: u64,
}

/// The bandwidth-delay product of a path, octets.
pub fn bdp_octets(link_bps: u64, rtt: u64) -> u64 {
    (u128::from(link_bps) * u128::from(rtt) / 8 / u128::from(SEC)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::size_of;
    use core::ptr::NonNull;

    // A copy of rust/store.rs's types' layout (an skb and a kmemdup'd copy
    // are a pointer each, a copy also has its length).
    #[allow(dead_code)]
    struct Copied {
        ptr: NonNull<u8>,
        len: usize,
    }
    #[allow(dead_code)]
    enum Kept {
        Clone { skb: NonNull<u8>, off: u32 },
        Copy(Copied),
    }
    #[allow(dead_code)]
    struct Slot {
        kept: Option<Kept>,
        psn: u32,
        len: u32,
    }
    #[allow(dead_code)]
    struct Held {
        skb: Option<NonNull<u8>>,
        psn: u32,
    }

    #[test]
    fn store_elements_as_the_module_lays_them_out() {
        assert_eq!(size_of::<Slot>(), STORE_SLOT);
        assert_eq!(size_of::<Option<Copied>>(), STORE_REPAIR);
        assert_eq!(size_of::<Held>(), STORE_HELD);
    }

    #[test]
    fn bdp_of_10_gbits_by_20_ms() {
        assert_eq!(bdp_octets(10_000_000_000, 20_000_000), 25_000_000);
        assert_eq!(bdp_octets(100_000_000_000, 20_000_000), 250_000_000);
    }
}
