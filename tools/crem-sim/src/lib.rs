//! crem-sim: the crem-core CSF and CRF engines wired through a simulated
//! lossy path, with an RDMA sender and receiver model.
//!
//! The simulation is deterministic (one seed drives every random stream),
//! single-threaded and event driven in simulated nanoseconds. It is shared
//! by the cargo tests (`tests/sim.rs`) and the `crem-sim` grid tool
//! (`src/main.rs`). See [`model`] for the wiring, [`channel`] for the path,
//! [`rx`] for the RDMA receiver and its fallback, and [`report`] for what is
//! measured.

pub(crate) mod caps;
pub mod channel;
pub mod demo;
pub mod hosts;
pub mod memory;
pub mod model;
pub mod report;
pub mod rng;
pub mod rx;
pub mod traffic;

pub use channel::LossModel;
pub use model::{run, RdmaModel, Recovery, SimConfig};
pub use report::Report;
pub use traffic::TrafficModel;
