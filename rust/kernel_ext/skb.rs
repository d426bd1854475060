// SPDX-License-Identifier: GPL-2.0
//! Socket buffers: an owned reference ([`Skb`]) that gives its reference up
//! exactly once, to `consume_skb` on drop (a normal end), to
//! [`Skb::drop_reason`] (a real drop, seen by drop monitors), or to a kernel
//! call that consumes it ([`Skb::into_raw`]).
//!
//! 6.12's `kernel` crate has no skb type; this is the part of one the
//! module needs, shaped so that an upstream abstraction can replace it.

use super::netdev::NetDevice;
use crate::ffi;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::bindings;

pub(crate) use kernel::bindings::sk_buff;

/// Why a packet was dropped (`enum skb_drop_reason`), for drop monitors.
#[derive(Clone, Copy)]
#[repr(u32)]
pub(crate) enum DropReason {
    /// The device it was to enter or leave by is gone.
    DevReady = bindings::skb_drop_reason_SKB_DROP_REASON_DEV_READY,
    /// Its checksum (for us: the RoCEv2 ICRC) did not verify.
    SkbCsum = bindings::skb_drop_reason_SKB_DROP_REASON_SKB_CSUM,
    /// It was still queued when its queue went away.
    QueuePurge = bindings::skb_drop_reason_SKB_DROP_REASON_QUEUE_PURGE,
    /// Reverse-path filtering refused it.
    IpRpFilter = bindings::skb_drop_reason_SKB_DROP_REASON_IP_RPFILTER,
    /// No input route forwards it.
    IpInNoRoutes = bindings::skb_drop_reason_SKB_DROP_REASON_IP_INNOROUTES,
    /// A netfilter hook's verdict dropped it.
    NetfilterDrop = bindings::skb_drop_reason_SKB_DROP_REASON_NETFILTER_DROP,
    /// Its socket is closing, or closed.
    SocketClose = bindings::skb_drop_reason_SKB_DROP_REASON_SOCKET_CLOSE,
    /// Not a protocol it was expected to be.
    UnhandledProto = bindings::skb_drop_reason_SKB_DROP_REASON_UNHANDLED_PROTO,
    /// Shorter than its headers.
    PktTooSmall = bindings::skb_drop_reason_SKB_DROP_REASON_PKT_TOO_SMALL,
    /// Out of memory.
    Nomem = bindings::skb_drop_reason_SKB_DROP_REASON_NOMEM,
    /// No output route to its destination.
    IpOutNoRoutes = bindings::skb_drop_reason_SKB_DROP_REASON_IP_OUTNOROUTES,
    /// An address no sender may have (an IPv4-mapped IPv6 source).
    IpInAddrErrors = bindings::skb_drop_reason_SKB_DROP_REASON_IP_INADDRERRORS,
}

/// An owned reference to a socket buffer.
///
/// # Invariants
///
/// `self.0` points to a live `sk_buff` on which this value holds one
/// reference, given up exactly once (drop, [`Skb::drop_reason`] or
/// [`Skb::into_raw`]).
pub(crate) struct Skb(NonNull<sk_buff>);

impl Skb {
    /// Takes over the reference the caller holds on `skb` (None if null).
    ///
    /// # Safety
    ///
    /// `skb` is null or a live `sk_buff` on which the caller owns a
    /// reference that it hands over (it never uses the pointer again).
    pub(crate) unsafe fn from_raw(skb: *mut sk_buff) -> Option<Self> {
        NonNull::new(skb).map(Skb)
    }

    /// A clone of `skb` (its own `sk_buff`, the data shared and so never to
    /// be written), in atomic context (None if out of memory).
    ///
    /// # Safety
    ///
    /// `skb` is a live `sk_buff` for the duration of the call.
    pub(crate) unsafe fn clone_atomic(skb: *mut sk_buff) -> Option<Self> {
        // SAFETY: `skb` is live (the caller's promise); `skb_clone` may be
        // called in any context with GFP_ATOMIC and returns null or a new
        // skb whose one reference is ours.
        unsafe { Skb::from_raw(bindings::skb_clone(skb, bindings::GFP_ATOMIC)) }
    }

    /// Gives the reference up to C (a kernel call that consumes it).
    pub(crate) fn into_raw(self) -> *mut sk_buff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }

    /// The buffer, for a helper that reads or changes it in place.
    pub(crate) fn as_ptr(&self) -> *mut sk_buff {
        self.0.as_ptr()
    }

    /// A new empty linear buffer with at least `headroom` octets before its
    /// data and `tailroom` after, in atomic context (None if out of memory).
    pub(crate) fn alloc_atomic(headroom: u32, tailroom: u32) -> Option<Self> {
        let size = headroom.checked_add(tailroom)?;
        // SAFETY: `__alloc_skb` may be called in any context with
        // GFP_ATOMIC; it returns null or a new skb whose one reference is
        // ours.
        let p =
            unsafe { bindings::__alloc_skb(size, bindings::GFP_ATOMIC, 0, bindings::NUMA_NO_NODE) };
        // SAFETY: `p` is null or a fresh skb we own (see above).
        let mut skb = unsafe { Skb::from_raw(p) }?;
        skb.reserve(headroom);
        Some(skb)
    }

    /// Octets of linear headroom.
    pub(crate) fn headroom(&self) -> u32 {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_headroom(self.0.as_ptr()) }
    }

    /// Octets of linear tailroom.
    fn tailroom(&self) -> u32 {
        // SAFETY: the invariant makes `self.0` a live skb.
        u32::try_from(unsafe { ffi::crem_h_skb_tailroom(self.0.as_ptr()) }).unwrap_or(0)
    }

    /// Moves `len` octets of tailroom to the headroom (an empty buffer).
    fn reserve(&mut self, len: u32) {
        if self.len() == 0 && self.tailroom() >= len {
            // SAFETY: the skb is live, empty and has `len` octets of
            // tailroom, which is all `skb_reserve` requires.
            unsafe { ffi::crem_h_skb_reserve(self.0.as_ptr(), len as i32) };
        }
    }

    /// Octets of data (linear or not).
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_len(self.0.as_ptr()) }
    }

    /// Appends `data` (false, unchanged, without the tailroom for it).
    pub(crate) fn put_data(&mut self, data: &[u8]) -> bool {
        let Ok(n) = u32::try_from(data.len()) else {
            return false;
        };
        if self.tailroom() < n || self.is_shared() {
            return false;
        }
        // SAFETY: the skb is live, unshared and has `n` octets of tailroom,
        // so `skb_put` returns `n` writable octets that `data` (a Rust
        // slice) cannot overlap.
        unsafe {
            let dst = bindings::skb_put(self.0.as_ptr(), n).cast::<u8>();
            core::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len());
        }
        true
    }

    /// Prepends `N` octets, which the caller fills (None, unchanged,
    /// without the headroom for them).
    pub(crate) fn push<const N: usize>(&mut self) -> Option<&mut [u8; N]> {
        let n = u32::try_from(N).ok()?;
        if self.headroom() < n || self.is_shared() {
            return None;
        }
        // SAFETY: the skb is live, unshared and has `n` octets of headroom:
        // `skb_push` returns a pointer to `n` linear octets of it, ours
        // for as long as we borrow `self` mutably.
        Some(unsafe { &mut *bindings::skb_push(self.0.as_ptr(), n).cast::<[u8; N]>() })
    }

    /// Re-exposes the `len` octets before its data (a header it has been
    /// pulled past) as data, without writing them; false, unchanged,
    /// without that much headroom.
    pub(crate) fn unpull(&mut self, len: u32) -> bool {
        if self.headroom() < len {
            return false;
        }
        // SAFETY: the skb is live and has `len` octets of headroom;
        // `skb_push` only moves its data pointer back over them.
        unsafe { bindings::skb_push(self.0.as_ptr(), len) };
        true
    }

    /// The linear part of its data (all of it, or the headers of a paged
    /// packet).
    pub(crate) fn head(&self) -> &[u8] {
        let p = self.0.as_ptr();
        // SAFETY: the skb is live; its `headlen` octets at `data` stay
        // valid and unchanged while we borrow `self` (only `&mut self`
        // methods change them).
        unsafe {
            core::slice::from_raw_parts(
                ffi::crem_h_skb_data(p),
                ffi::crem_h_skb_headlen(p) as usize,
            )
        }
    }

    /// The first `N` octets of its network header (None unless they are in
    /// the linear part).
    pub(crate) fn network_header<const N: usize>(&self) -> Option<[u8; N]> {
        let p = self.0.as_ptr();
        // SAFETY: the skb is live.
        let (off, head) = unsafe {
            (
                ffi::crem_h_skb_network_offset(p),
                ffi::crem_h_skb_headlen(p),
            )
        };
        let end = i64::from(off).checked_add(N as i64)?;
        if end > i64::from(head) {
            return None;
        }
        // SAFETY: the network header lies in the skb's buffer (the kernel
        // sets it there) and its `N` octets end within the linear data
        // (checked above), which stays unchanged while we borrow `self`.
        Some(unsafe {
            core::ptr::read_unaligned(ffi::crem_h_skb_network_header(p).cast::<[u8; N]>())
        })
    }

    /// Whether its data may be shared with a clone (then never written).
    fn is_shared(&self) -> bool {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_cloned(self.0.as_ptr()) != 0 }
    }

    /// The linear data, writable, if all of it is linear and unshared.
    pub(crate) fn linear_mut(&mut self) -> Option<&mut [u8]> {
        if self.is_shared() {
            return None;
        }
        let p = self.0.as_ptr();
        // SAFETY: the skb is live; its `headlen` octets at `data` are not
        // shared with a clone, so this `&mut self` borrow is their only
        // access while it lasts.
        unsafe {
            let (len, head) = (ffi::crem_h_skb_len(p), ffi::crem_h_skb_headlen(p));
            (len == head)
                .then(|| core::slice::from_raw_parts_mut(ffi::crem_h_skb_data(p), len as usize))
        }
    }

    /// Where its network header is, from its data (negative: before).
    #[cfg(crem_kunit)] // read by the KUnit suites only
    pub(crate) fn network_offset(&self) -> i32 {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_network_offset(self.0.as_ptr()) }
    }

    /// Where its transport header is, from its data.
    #[cfg(crem_kunit)] // read by the KUnit suites only
    pub(crate) fn transport_offset(&self) -> i32 {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_transport_offset(self.0.as_ptr()) }
    }

    /// Its protocol (an ETH_P_* value in host order).
    pub(crate) fn protocol(&self) -> u16 {
        // SAFETY: the invariant makes `self.0` a live skb.
        u16::from_be(unsafe { ffi::crem_h_skb_protocol(self.0.as_ptr()) })
    }

    /// Its firewall mark.
    #[cfg(crem_kunit)] // read by the KUnit suites only
    pub(crate) fn mark(&self) -> u32 {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_mark(self.0.as_ptr()) }
    }

    /// Network header here, where the data begins.
    pub(crate) fn reset_network_header(&mut self) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_reset_network_header(self.0.as_ptr()) }
    }

    /// Transport header here, where the data begins.
    pub(crate) fn reset_transport_header(&mut self) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_reset_transport_header(self.0.as_ptr()) }
    }

    /// MAC header here, where the data begins.
    pub(crate) fn reset_mac_header(&mut self) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_reset_mac_header(self.0.as_ptr()) }
    }

    /// Its link header was set and is the `len` octets before its data.
    pub(crate) fn mac_header_before_data(&self, len: u32) -> bool {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_mac_header_at_data(self.0.as_ptr(), len) }
    }

    /// Sets the link header length.
    pub(crate) fn set_mac_len(&mut self, len: u16) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_mac_len(self.0.as_ptr(), len) }
    }

    /// Sets the protocol (an ETH_P_* value in host order).
    pub(crate) fn set_protocol(&mut self, proto: u16) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_protocol(self.0.as_ptr(), proto.to_be()) }
    }

    /// Sets the firewall mark.
    pub(crate) fn set_mark(&mut self, mark: u32) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_mark(self.0.as_ptr(), mark) }
    }

    /// Sets the packet type (PACKET_*).
    pub(crate) fn set_pkt_type(&mut self, t: u8) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_pkt_type(self.0.as_ptr(), t) }
    }

    /// No checksum was computed or verified for it (CHECKSUM_NONE).
    pub(crate) fn set_csum_none(&mut self) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_csum_none(self.0.as_ptr()) }
    }

    /// Its device (null if none): a pointer for kernel calls, valid while
    /// the device is (under RCU, or while the skb is on its way).
    pub(crate) fn dev(&self) -> *mut bindings::net_device {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_dev(self.0.as_ptr()) }
    }

    /// Forgets its device (one that is going away; the skb is only read
    /// for its data from now on).
    pub(crate) fn clear_dev(&mut self) {
        // SAFETY: the invariant makes `self.0` a live skb; a null device is
        // what a fresh skb has.
        unsafe { ffi::crem_h_skb_set_dev(self.0.as_ptr(), core::ptr::null_mut()) }
    }

    /// Octets charged for it (data, `sk_buff` and shared info).
    pub(crate) fn truesize(&self) -> u32 {
        // SAFETY: the invariant makes `self.0` a live skb; `truesize` is a
        // plain field.
        unsafe { (*self.0.as_ptr()).truesize }
    }

    /// It arrived on `dev`, as far as the receive path is concerned. The
    /// skb holds no reference on the device (as in the kernel's own receive
    /// path): it is used up before `dev` can be freed.
    pub(crate) fn set_dev(&mut self, dev: &NetDevice) {
        // SAFETY: both are live.
        unsafe { ffi::crem_h_skb_set_dev(self.0.as_ptr(), dev.as_ptr()) }
    }

    /// It is forwarded from the device of index `ifindex` (`skb_iif` and
    /// `IPCB(skb)->iif`).
    pub(crate) fn set_iif(&mut self, ifindex: i32) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_iif(self.0.as_ptr(), ifindex) }
    }

    /// It is forwarded from the device of index `ifindex`, as IPv6 sees
    /// it: `skb_iif`, and `IP6CB(skb)` as `ipv6_rcv` leaves it (`iif`,
    /// `nhoff`, no flags).
    pub(crate) fn set_iif6(&mut self, ifindex: i32) {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_set_iif6(self.0.as_ptr(), ifindex) }
    }

    /// Sets the link header from the `ETH_HLEN` octets at its data, which
    /// it pulls, and its protocol and packet type from them, for `dev`
    /// (`eth_type_trans`).
    pub(crate) fn eth_type_trans(&mut self, dev: &NetDevice) {
        let p = self.0.as_ptr();
        // SAFETY: the skb and `dev` are live, and the callers put the
        // Ethernet header at its data.
        unsafe {
            let proto = ffi::eth_type_trans(p, dev.as_ptr());
            ffi::crem_h_skb_set_protocol(p, proto);
        }
    }

    /// Its route's type (RTN_*); 0 without a route.
    pub(crate) fn rt_type(&self) -> u32 {
        if !self.has_dst() {
            return 0;
        }
        // SAFETY: the skb is live and has a route, an IPv4 one for the
        // IPv4 packets this is asked of.
        unsafe { ffi::crem_h_skb_rt_type(self.0.as_ptr()) }
    }

    /// Its route forwards (an IPv6 one: not local, anycast or reject);
    /// false without a route.
    pub(crate) fn rt6_forwards(&self) -> bool {
        // SAFETY: the skb is live and has a route, an IPv6 one for the
        // IPv6 packets this is asked of.
        self.has_dst() && unsafe { ffi::crem_h_skb_rt6_forwards(self.0.as_ptr()) }
    }

    /// Whether it has a route (a dst).
    pub(crate) fn has_dst(&self) -> bool {
        // SAFETY: the invariant makes `self.0` a live skb.
        unsafe { ffi::crem_h_skb_has_dst(self.0.as_ptr()) }
    }

    /// Forgets its route and conntrack entry: it enters a receive path anew.
    pub(crate) fn reset_route_and_ct(&mut self) {
        // SAFETY: the invariant makes `self.0` a live skb; both release
        // what the skb references, and leave it without.
        unsafe {
            ffi::crem_h_skb_dst_drop(self.0.as_ptr());
            ffi::crem_h_nf_reset_ct(self.0.as_ptr());
        }
    }

    /// Drops it as a real drop, with its reason.
    pub(crate) fn drop_reason(self, reason: DropReason) {
        // SAFETY: `into_raw` hands over our reference, which
        // `kfree_skb_reason` consumes.
        unsafe { ffi::crem_h_kfree_skb_reason(self.into_raw(), reason as u32) }
    }
}

impl Drop for Skb {
    fn drop(&mut self) {
        // SAFETY: by the invariant this is our one reference, given up here
        // (a normal end, not a drop).
        unsafe { bindings::consume_skb(self.0.as_ptr()) }
    }
}

impl Skb {
    /// The packets a GSO packet carries, each its own `Skb` (None: not
    /// segmented, for want of memory or support; the packet is unchanged
    /// either way, and still the caller's). Any context.
    pub(crate) fn gso_segments(pkt: &Lent<'_>) -> Option<Segments> {
        // SAFETY: a live packet; `skb_gso_segment` leaves it as it was and
        // returns a list of new packets, each with one reference, ours.
        let first = unsafe { ffi::crem_h_skb_gso_segment(pkt.as_ptr()) };
        NonNull::new(first).map(|n| Segments(Some(n)))
    }
}

/// The segments of a GSO packet not yet taken, freed (consumed) if the
/// iteration stops early.
///
/// # Invariants
///
/// `0` is the head of a list of packets linked by `next`, on each of which
/// this value holds the one reference.
pub(crate) struct Segments(Option<NonNull<sk_buff>>);

impl Iterator for Segments {
    type Item = Skb;

    fn next(&mut self) -> Option<Skb> {
        let s = self.0?;
        // SAFETY: the invariant: `s` is live and ours; taken off the list
        // before it is handed out alone.
        unsafe {
            self.0 = NonNull::new(ffi::crem_h_skb_list_next(s.as_ptr()));
            ffi::crem_h_skb_mark_not_on_list(s.as_ptr());
        }
        // INVARIANT: our reference on `s`, now the `Skb`'s.
        Some(Skb(s))
    }
}

impl Drop for Segments {
    fn drop(&mut self) {
        for _ in self.by_ref() {}
    }
}

/// A packet a netfilter hook is given for one call: not owned (the hook
/// returns a verdict for it; a held packet is taken over with
/// [`Skb::clone_atomic`] or by the flow that steals it).
///
/// # Invariants
///
/// `skb` is live for `'a`, and only the code holding this value touches it
/// meanwhile (netfilter's rule for a hook's packet), until it hands the
/// packet on (okfn, or a flow that holds it: the hook's `NF_STOLEN`), after
/// which the value is not used again.
pub(crate) struct Lent<'a> {
    skb: NonNull<sk_buff>,
    _call: PhantomData<&'a mut sk_buff>,
}

impl Lent<'_> {
    /// The hook's packet `skb` (None if null).
    ///
    /// # Safety
    ///
    /// `skb` is null or the live packet of a hook call, for as long as the
    /// value lives, which no one else touches meanwhile.
    pub(crate) unsafe fn new(skb: *mut sk_buff) -> Option<Self> {
        NonNull::new(skb).map(|skb| Lent {
            skb,
            _call: PhantomData,
        })
    }

    /// A packet of ours, lent to the hook path for a while.
    pub(crate) fn of(skb: &mut Skb) -> Lent<'_> {
        Lent {
            skb: skb.0,
            _call: PhantomData,
        }
    }

    pub(crate) fn as_ptr(&self) -> *mut sk_buff {
        self.skb.as_ptr()
    }

    /// Octets of data (linear or not).
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: the invariant makes `skb` a live skb.
        unsafe { ffi::crem_h_skb_len(self.as_ptr()) }
    }

    /// Where its network header is, from its data.
    pub(crate) fn network_offset(&self) -> i32 {
        // SAFETY: as in `len`.
        unsafe { ffi::crem_h_skb_network_offset(self.as_ptr()) }
    }

    /// Its protocol (an ETH_P_* value in host order).
    pub(crate) fn protocol(&self) -> u16 {
        // SAFETY: as in `len`.
        u16::from_be(unsafe { ffi::crem_h_skb_protocol(self.as_ptr()) })
    }

    /// Its firewall mark.
    pub(crate) fn mark(&self) -> u32 {
        // SAFETY: as in `len`.
        unsafe { ffi::crem_h_skb_mark(self.as_ptr()) }
    }

    /// Past the IPv6 extension headers from the one at `start` (from its
    /// data), of type `first` (the fixed header's next header): where the
    /// first other header is, its type,
    /// and a fragment header's offset-and-flags field (network order;
    /// its offset bits 0 in a first fragment; 0 without one)
    /// (`ipv6_skip_exthdr`); None if the chain is truncated or ends.
    pub(crate) fn ipv6_skip_exthdr(&self, start: i32, first: u8) -> Option<(i32, u8, u16)> {
        let (mut next, mut frag) = (first, 0u16);
        // SAFETY: a live packet (the invariant); the out-pointers are
        // locals, written before the call returns. (Exported and built
        // whenever INET is, IPv6 or not: no wrapper needed.)
        let off = unsafe { ffi::ipv6_skip_exthdr(self.as_ptr(), start, &mut next, &mut frag) };
        (off >= 0).then_some((off, next, frag))
    }

    /// `buf.len()` octets at `off` from its data: in place if they are
    /// linear, else copied into `buf` (`skb_header_pointer`); None past the
    /// end.
    pub(crate) fn header<'b>(&'b self, off: i32, buf: &'b mut [u8]) -> Option<&'b [u8]> {
        let n = i32::try_from(buf.len()).ok()?;
        // SAFETY: a live packet (the invariant) and `n` writable octets at
        // `buf`; the result is null, `buf`, or `n` octets of its linear
        // data, which stay put while it is not changed (it cannot be while
        // `self` is borrowed).
        unsafe {
            let p = ffi::crem_h_skb_header_pointer(self.as_ptr(), off, n, buf.as_mut_ptr().cast());
            (!p.is_null()).then(|| core::slice::from_raw_parts(p.cast::<u8>(), buf.len()))
        }
    }

    /// A GSO packet (several packets behind one header).
    pub(crate) fn is_gso(&self) -> bool {
        // SAFETY: as in `len`.
        unsafe { ffi::crem_h_skb_is_gso(self.as_ptr()) }
    }

    /// A GSO packet's segments behind its one header and their payload's
    /// size (None: not GSO, or a frag list, whose segments are packets of
    /// their own).
    pub(crate) fn gso_layout(&self) -> Option<(u32, u32)> {
        let mut size = 0u32;
        // SAFETY: as in `len`; `size` is written before the call returns.
        let segs = unsafe { ffi::crem_h_skb_gso_segs(self.as_ptr(), &mut size) };
        (self.is_gso() && segs > 0 && size > 0).then_some((segs, size))
    }

    /// br_netfilter's: a bridged packet.
    pub(crate) fn bridged(&self) -> bool {
        // SAFETY: as in `len`.
        unsafe { ffi::crem_h_skb_bridged(self.as_ptr()) }
    }

    /// Makes all its data linear (false: out of memory, unchanged).
    pub(crate) fn linearize(&mut self) -> bool {
        // SAFETY: a live packet only we touch (the invariant); what
        // pointed into its data is gone with the `&mut`.
        unsafe { ffi::crem_h_skb_linearize(self.as_ptr()) == 0 }
    }

    /// Its linear data.
    pub(crate) fn linear(&self) -> &[u8] {
        // SAFETY: a live packet; its first `headlen` octets of data are
        // linear and stay put while it is not changed.
        unsafe {
            let p = self.as_ptr();
            let head = ffi::crem_h_skb_headlen(p) as usize;
            core::slice::from_raw_parts(ffi::crem_h_skb_data(p), head)
        }
    }

    /// The index and MTU of the device it arrived on or leaves by.
    pub(crate) fn dev(&self) -> Option<(i32, u32)> {
        // SAFETY: a live packet; its device is live while it is.
        unsafe {
            let d = ffi::crem_h_skb_dev(self.as_ptr());
            (!d.is_null()).then(|| (ffi::crem_h_dev_ifindex(d), ffi::crem_h_dev_mtu(d)))
        }
    }

    /// Its Ethernet source, if it has an Ethernet header.
    pub(crate) fn eth_source(&self) -> Option<[u8; 6]> {
        // SAFETY: a live packet; the address is 6 octets of its head.
        unsafe {
            let p = ffi::crem_h_skb_eth_source(self.as_ptr());
            (!p.is_null()).then(|| *p.cast::<[u8; 6]>())
        }
    }
}
