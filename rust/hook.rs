// SPDX-License-Identifier: GPL-2.0
//! The netfilter hook's Rust half: classifies and counts the RoCEv2 packets
//! that the C filter passes up (roce-local-in/forward/local-out, sources,
//! non-sources, malformed). It always accepts: the CSF/CRF datapath
//! (`crem_flow_roce` in C, the engines in `engine.rs`) runs after it.

use crate::crem_core::roce::{Bth, IPV4_HDR_LEN, IPV6_HDR_LEN, UDP_HDR_LEN};
use crate::ffi;
use crate::netns::{self, Counter};
use core::ffi::c_void;

/// Offset of the BTH in a packet that starts at its IP header.
fn bth_offset(family: u8, hdr: &[u8]) -> Option<usize> {
    let ip_len = match family {
        ffi::NFPROTO_IPV4 => usize::from(hdr.first()? & 0x0f) * 4,
        ffi::NFPROTO_IPV6 => IPV6_HDR_LEN,
        _ => return None,
    };
    (ip_len >= IPV4_HDR_LEN).then_some(ip_len + UDP_HDR_LEN)
}

#[no_mangle]
extern "C" fn crem_rs_roce_packet(
    state: *mut c_void,
    hook: u32,
    family: u8,
    hdr: *const u8,
    hdr_len: u32,
    _pkt_len: u32,
) -> u32 {
    if state.is_null() || hdr.is_null() {
        return ffi::NF_ACCEPT;
    }
    // SAFETY: the C hook passes its live per-netns state and `hdr_len` bytes
    // copied from (or pointing into) the skb, valid for this call.
    let (st, hdr) = unsafe {
        (
            netns::state(state),
            core::slice::from_raw_parts(hdr, hdr_len as usize),
        )
    };
    st.count(match hook {
        ffi::HOOK_LOCAL_IN => Counter::RoceLocalIn,
        ffi::HOOK_FORWARD => Counter::RoceForward,
        ffi::HOOK_LOCAL_OUT => Counter::RoceLocalOut,
        _ => return ffi::NF_ACCEPT,
    });
    let bth = bth_offset(family, hdr)
        .and_then(|off| hdr.get(off..))
        .and_then(|b| Bth::parse(b).ok());
    match bth {
        Some(b) if b.info().role.is_source() => st.count(Counter::RoceSources),
        Some(_) => st.count(Counter::RoceOther),
        None => st.count(Counter::RoceMalformed),
    }
    ffi::NF_ACCEPT
}
