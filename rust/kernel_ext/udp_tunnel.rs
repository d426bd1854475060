// SPDX-License-Identifier: GPL-2.0
//! In-kernel UDP sockets with a udp-tunnel receive hook ([`TunnelSock`]):
//! one port of a netns bound on IPv4 and, where the kernel has IPv6, on
//! IPv6 (a socket each, IPv6-only, as vxlan and rxe do), their datagrams
//! handed, in softirq, to an `encap_rcv` callback with the owner's pointer
//! as the sockets' user data; datagrams sent by [`TunnelSock::xmit`]
//! (`udp_tunnel_xmit_skb` or `udp_tunnel6_xmit_skb` by the destination's
//! family), which routes them itself. Released (`udp_tunnel_sock_release`:
//! the user data cleared, an RCU grace period, shut down) when dropped.
//!
//! 6.12's `kernel` crate has no socket type; the configuration structs of
//! `udp_sock_create` and `setup_udp_tunnel_sock` are filled by wrappers in
//! `helpers/helpers.c`.

use super::in6::In6Addr;
use super::skb::{DropReason, Skb};
use crate::ffi;
use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use kernel::bindings;

/// The receive callback: the socket and a datagram (its `data` at the UDP
/// header) whose reference it takes; returns 0 (consumed).
pub(crate) type EncapRcv =
    unsafe extern "C" fn(*mut bindings::sock, *mut bindings::sk_buff) -> c_int;

/// Open, bound UDP tunnel sockets of one netns, one port.
///
/// # Invariants
///
/// `sock` is a socket made by `udp_sock_create4`, `sock6` (if any) one made
/// by `udp_sock_create6` on the same port, each owned by this value and
/// released exactly once, by its drop.
pub(crate) struct TunnelSock {
    sock: NonNull<ffi::socket>,
    sock6: Option<NonNull<ffi::socket>>,
}

/// A socket made by `create` (one of the `crem_h_udp_sock_create*`), or the
/// errno.
fn made(err: c_int, sock: *mut ffi::socket) -> Result<NonNull<ffi::socket>, c_int> {
    match NonNull::new(sock) {
        Some(sock) if err == 0 => Ok(sock),
        _ => Err(if err != 0 {
            err
        } else {
            -(bindings::ENOMEM as c_int)
        }),
    }
}

// SAFETY: the socket is a kernel object any thread may use and release;
// this value is only its owner's handle.
unsafe impl Send for TunnelSock {}
// SAFETY: the methods taking `&self` (`port`, `xmit`) are kernel calls that
// may run concurrently on one socket.
unsafe impl Sync for TunnelSock {}

impl TunnelSock {
    /// UDP sockets of `net` bound to `port` (host order) on every IPv4
    /// address and every IPv6 address, or the errno (`EADDRINUSE`: another
    /// socket has the port in either family). A kernel without IPv6 (or
    /// booted with `ipv6.disable=1`: `EAFNOSUPPORT`) gets the IPv4 one
    /// alone, as rxe does. Process context. Datagrams are not handed to
    /// anyone until [`TunnelSock::receive`].
    pub(crate) fn bind(net: NonNull<bindings::net>, port: u16) -> Result<Self, c_int> {
        let mut sock = core::ptr::null_mut();
        // SAFETY: `net` is a live netns (the caller's); `udp_sock_create4`
        // sleeps, which process context allows, and sets `sock` to a new
        // socket only when it returns 0.
        let err = unsafe { ffi::crem_h_udp_sock_create4(net.as_ptr(), port.to_be(), &mut sock) };
        // Owned from here: dropped (released) if the IPv6 one fails.
        let mut this = TunnelSock {
            sock: made(err, sock)?,
            sock6: None,
        };
        let mut sock6 = core::ptr::null_mut();
        // SAFETY: as above, `udp_sock_create6`.
        let err = unsafe { ffi::crem_h_udp_sock_create6(net.as_ptr(), port.to_be(), &mut sock6) };
        if err == -(bindings::EAFNOSUPPORT as c_int) {
            return Ok(this);
        }
        this.sock6 = Some(made(err, sock6)?);
        Ok(this)
    }

    /// Each open socket.
    fn socks(&self) -> impl Iterator<Item = NonNull<ffi::socket>> {
        core::iter::once(self.sock).chain(self.sock6)
    }

    /// Datagrams from now on go to `rcv` in softirq, with `user_data` as
    /// the socket's user data ([`user_data`]).
    ///
    /// # Safety
    ///
    /// `user_data` stays valid for `rcv` until this socket is dropped
    /// (which clears it and waits for the callbacks under way).
    pub(crate) unsafe fn receive(
        &self,
        net: NonNull<bindings::net>,
        user_data: *mut c_void,
        rcv: EncapRcv,
    ) {
        for s in self.socks() {
            // SAFETY: the socket is ours and open (the invariant), `net`
            // its netns; `setup_udp_tunnel_sock` only sets its callbacks
            // (and enables the udp-tunnel encap key of its family).
            unsafe {
                ffi::crem_h_setup_udp_tunnel_sock(net.as_ptr(), s.as_ptr(), user_data, Some(rcv))
            };
        }
    }

    /// Datagrams are no longer handed on (the receive callback, if one is
    /// under way, may still run until an RCU grace period has passed).
    pub(crate) fn stop_receiving(&self) {
        for s in self.socks() {
            // SAFETY: the socket is ours and open (the invariant); clearing
            // its user data is what `udp_tunnel_sock_release` does first.
            unsafe { ffi::crem_h_sk_clear_user_data(ffi::crem_h_socket_sk(s.as_ptr())) };
        }
    }

    /// The port it is bound to (host order).
    pub(crate) fn port(&self) -> u16 {
        // SAFETY: the socket is ours and open (the invariant).
        u16::from_be(unsafe { ffi::crem_h_socket_sport(self.sock.as_ptr()) })
    }

    /// Sends `skb` (its data: the UDP payload, with headroom for the UDP,
    /// IP and link headers) from this socket's port to `to`, port `dport`
    /// (network order; 0: this socket's port) with IP `tos`, routed in
    /// `net`; consumed either way. The errno if there is no route. Any
    /// context; the caller keeps the socket open for the call.
    pub(crate) fn xmit(
        &self,
        net: NonNull<bindings::net>,
        skb: Skb,
        to: u32,
        dport: u16,
        tos: u8,
    ) -> Result<(), c_int> {
        // SAFETY: the socket is ours and open (the invariant).
        let port = unsafe { ffi::crem_h_socket_sport(self.sock.as_ptr()) };
        let dport = if dport == 0 { port } else { dport };
        let (mut saddr, mut err) = (0u32, 0);
        // SAFETY: `net` is live (the caller's); a route lookup may run in
        // any context and returns a route we own a reference to, or null.
        let rt = unsafe {
            ffi::crem_h_route_output_udp(net.as_ptr(), to, port, dport, &mut saddr, &mut err)
        };
        if rt.is_null() {
            skb.drop_reason(DropReason::IpOutNoRoutes);
            return Err(if err != 0 {
                err
            } else {
                -(bindings::EHOSTUNREACH as c_int)
            });
        }
        // SAFETY: `rt` is the live route just found.
        let ttl = unsafe { ffi::crem_h_rt_hoplimit(rt) };
        // SAFETY: the socket is open; `udp_tunnel_xmit_skb` takes over our
        // references to `rt` and to the skb (it frees both on any error).
        unsafe {
            ffi::udp_tunnel_xmit_skb(
                rt,
                ffi::crem_h_socket_sk(self.sock.as_ptr()),
                skb.into_raw(),
                saddr,
                to,
                tos,
                ttl,
                0,
                port,
                dport,
                false,
                false,
            )
        };
        Ok(())
    }

    /// As [`TunnelSock::xmit`], to IPv6 address `to` with traffic class
    /// `tclass`, from the IPv6 socket (`EAFNOSUPPORT` without one). A
    /// message above the path MTU is fragmented, as IPv4's (sent with DF
    /// clear) are.
    pub(crate) fn xmit6(
        &self,
        net: NonNull<bindings::net>,
        skb: Skb,
        to: &[u8; 16],
        dport: u16,
        tclass: u8,
    ) -> Result<(), c_int> {
        let Some(sock6) = self.sock6 else {
            skb.drop_reason(DropReason::IpOutNoRoutes);
            return Err(-(bindings::EAFNOSUPPORT as c_int));
        };
        let to = In6Addr(*to);
        // SAFETY: the socket is ours and open (the invariant).
        let port = unsafe { ffi::crem_h_socket_sport(sock6.as_ptr()) };
        let dport = if dport == 0 { port } else { dport };
        // SAFETY: `net` is live (the caller's), the socket open; the helper
        // takes over our reference to the skb (freed, with its drop reason,
        // if there is no route) and reads `to` during the call only.
        let err = unsafe {
            ffi::crem_h_udp6_xmit(
                net.as_ptr(),
                ffi::crem_h_socket_sk(sock6.as_ptr()),
                skb.into_raw(),
                to.as_ptr(),
                port,
                dport,
                tclass,
            )
        };
        if err != 0 {
            return Err(err);
        }
        Ok(())
    }
}

impl Drop for TunnelSock {
    fn drop(&mut self) {
        for s in self.socks() {
            // SAFETY: the socket is ours (the invariant) and released once,
            // here; `udp_tunnel_sock_release` clears the user data and
            // waits an RCU grace period for the receive callbacks under way.
            unsafe { ffi::udp_tunnel_sock_release(s.as_ptr()) };
        }
    }
}

/// The user data a [`TunnelSock::receive`] socket was given, for its
/// receive callback (null once the socket is being released).
///
/// # Safety
///
/// `sk` is the socket a receive callback was called for, in that callback.
pub(crate) unsafe fn user_data(sk: *mut bindings::sock) -> *mut c_void {
    // SAFETY: the callback runs in an RCU read-side section (softirq) with
    // `sk` live.
    unsafe { ffi::crem_h_sk_user_data(sk) }
}
