// SPDX-License-Identifier: GPL-2.0
//! Each CPU's workspace: the decoder's scratch and output and a message
//! buffer, too large for the kernel stack and needed by every engine call
//! that decodes or sends. One per CPU rather than one per flow: an engine
//! call runs with BH off from start to end, so a CPU serves one at a time.

use crate::crem_core::engine::module_caps::{DECODE_OUT, MESSAGE};
use crate::crem_core::fec::DecodeScratch;
use crate::kernel_ext::bh::Bh;
use crate::kernel_ext::global::{Global, Published};
use crate::kernel_ext::percpu::PerCpuBox;
use kernel::init::{zeroed, Zeroable};
use kernel::prelude::*;

/// One CPU's buffers.
pub(crate) struct Workspace {
    pub(crate) scratch: DecodeScratch,
    pub(crate) out: [u8; DECODE_OUT],
    pub(crate) msg: [u8; MESSAGE],
}

// SAFETY: every field is octet arrays, directly or in `DecodeScratch`
// (`rust/core/src/fec.rs`: `[u8; 256]` arrays only, and
// `DecodeScratch::new()` is all zeros), so all zeros is a valid value.
unsafe impl Zeroable for Workspace {}

/// Every CPU's [`Workspace`].
static WORKSPACES: Global<PerCpuBox<Workspace>> = Global::new();

/// Makes and publishes every CPU's [`Workspace`] (held by the module: made
/// before the hooks and the socket that call the engines are registered,
/// dropped after they are gone).
pub(crate) fn workspaces() -> Result<Published<PerCpuBox<Workspace>>> {
    WORKSPACES.publish(PerCpuBox::new(zeroed)?)
}

/// Runs `f` with this CPU's workspace: `None` if there is none (not made
/// yet) or it is in use further up this CPU's stack, which the datapath
/// never does (an engine call does not re-enter one).
pub(crate) fn with<R>(bh: &Bh, f: impl FnOnce(&mut Workspace) -> R) -> Option<R> {
    WORKSPACES.get()?.with(bh, f)
}
