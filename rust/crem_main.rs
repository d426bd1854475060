// SPDX-License-Identifier: GPL-2.0
//! crem.ko: CREM (Congestion-Aware Reliability Enhancement Mechanism) for RoCEv2.
//!
//! The crate root only wires things together: protocol logic is crem-core
//! (compiled in unchanged from `rust/core`); the module's registrations are
//! the fields of [`Crem`]. What stays C is generated (the netlink family,
//! `netlink/crem-nl-gen.c`) or a one-line wrapper of a static inline or macro
//! (`helpers/helpers.c`, which also holds the module parameters:
//! `module_param` is a macro, and 6.12's `module!` has no parameters) and
//! the tracepoints' definitions (`helpers/crem_trace.h`: `TRACE_EVENT` is C's).

// `netns::init`'s `pin_init!` of the netns state (18 fields) nests deeper than
// the default 128.
#![recursion_limit = "256"]

use kernel::prelude::*;
use kernel_ext::genl;
use kernel_ext::global::Published;
use kernel_ext::notifier::NetdevGone;
use kernel_ext::percpu::{PerCpuBox, PerCpuWord};

#[allow(unused_attributes)] // crem-core's crate-level attributes, inert here
#[path = "core/src/lib.rs"]
pub mod crem_core;

mod acks;
mod addr;
mod backlog;
mod collector;
mod config;
mod create;
mod device;
mod dispatch;
mod engine;
mod events;
mod ffi;
mod flow;
mod flow_info;
mod gf;
mod hook;
mod hook_points;
mod host;
mod inject;
mod intercept;
mod kernel_ext;
mod netlink;
mod netns;
mod pool;
mod removal;
mod report;
mod socket;
mod store;
mod table;
mod trace;
mod workspace;

#[cfg(crem_kunit)]
#[path = "../kunit/mod.rs"]
mod kunit;

module! {
    type: Crem,
    name: "crem",
    author: "CREM for Linux developers",
    description: "CREM: adaptive FEC and coded retransmission for RoCEv2 over lossy long paths",
    license: "GPL",
    // MODULE_ALIAS_GENL_FAMILY("crem"): the family's first user loads the
    // module.
    alias: ["net-pf-16-proto-16-family-crem"],
}

/// Holds the module's registrations; dropping it unwinds them in field
/// order, the reverse of registration: the control plane and the device
/// events (which read the per-netns state) go first, then the per-netns
/// state with its hooks and socket, then the per-CPU data they use.
struct Crem {
    _genl: genl::Registration,
    _netdev: NetdevGone,
    _pernet: kernel_ext::pernet::Registration,
    _workspaces: Published<PerCpuBox<workspace::Workspace>>,
    _forward_marks: Published<PerCpuWord>,
}

impl kernel::Module for Crem {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        gf::init()?;
        // In registration order; an early return drops what was made, in
        // reverse.
        let forward_marks = inject::forward_marks()?;
        let workspaces = workspace::workspaces()?;
        let pernet = netns::register()?;
        let netdev = NetdevGone::register::<device::DevGone>()?;
        let genl = netlink::register()?;
        let caps = crem_core::engine::module_caps::caps_for(
            crem_core::engine::module_caps::MAX_BDP_DEFAULT,
            32,
        );
        pr_info!(
            "loaded (crem-core wire version {}; engine octets per flow at the default max-bdp: CSF {}, CRF {})\n",
            crem_core::wire::VERSION,
            engine::engine_octets(true, &caps),
            engine::engine_octets(false, &caps)
        );
        Ok(Crem {
            _genl: genl,
            _netdev: netdev,
            _pernet: pernet,
            _workspaces: workspaces,
            _forward_marks: forward_marks,
        })
    }
}

impl Drop for Crem {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
