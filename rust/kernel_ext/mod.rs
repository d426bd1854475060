// SPDX-License-Identifier: GPL-2.0
//! The small kernel abstractions this module carries because 6.12's
//! `kernel` crate lacks them. Each mirrors an upstream name where one
//! exists, so that a later kernel's abstraction can replace it file by
//! file; every `unsafe` block in them says why it is sound. Static inlines
//! they need are one-line wrappers in `helpers/helpers.c`.

pub(crate) mod bh;
#[cfg(target_arch = "x86_64")]
pub(crate) mod fpu;
pub(crate) mod genl;
pub(crate) mod global;
pub(crate) mod hrtimer;
pub(crate) mod in6;
pub(crate) mod mem;
pub(crate) mod memcg;
pub(crate) mod net;
pub(crate) mod netdev;
pub(crate) mod netfilter;
pub(crate) mod notifier;
pub(crate) mod percpu;
pub(crate) mod pernet;
pub(crate) mod rcu;
pub(crate) mod rcu_hlist;
pub(crate) mod skb;
pub(crate) mod udp_tunnel;
pub(crate) mod work;
