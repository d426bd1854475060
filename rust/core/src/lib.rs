//! crem-core: the whole CREM protocol logic, `#![no_std]`, without `alloc`,
//! floating point or panics on any input.
//!
//! This crate is compiled twice: by cargo as a normal crate (tests, fuzzing,
//! benches) and unchanged inside the kernel module, where `rust/crem.rs` includes
//! this file as a module with `#[path]`. Sibling modules therefore refer to each
//! other with `super::` paths, never `crate::`, so both builds resolve the same.
#![cfg_attr(not(test), no_std)] // unit tests link std; the library never does
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(
    not(test),
    deny(clippy::panic, clippy::unwrap_used, clippy::expect_used)
)]

pub mod ctl;
pub mod engine;
pub mod fec;
pub mod gf;
pub mod nl;
pub mod psn;
pub mod report;
pub mod roce;
pub mod wire;
