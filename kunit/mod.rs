// SPDX-License-Identifier: GPL-2.0
//! Rust bodies of the KUnit cases declared in `kunit/crem_kunit.c`. Each
//! returns 0 on success or -1 with a reason written into the C buffer.

use core::ffi::{c_char, c_int};
use core::fmt::{self, Write};

use crate::crem_core as cc;

mod addr;
mod backlog;
mod bench;
mod bench_hook;
mod bench_work;
mod config;
mod create;
mod flow;
mod genl;
mod genl_config;
mod gf;
mod inject;
mod pool;
mod rcu_hlist;
mod removal;
mod socket;
mod store;
mod table;
mod timer;
mod workspace;

/// A `fmt::Write` into the C message buffer, always NUL-terminated, truncating.
struct MsgBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for MsgBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len().saturating_sub(self.len + 1);
        let n = core::cmp::min(room, s.len());
        if let (Some(dst), Some(src)) = (
            self.buf.get_mut(self.len..self.len + n),
            s.as_bytes().get(..n),
        ) {
            dst.copy_from_slice(src);
            self.len += n;
        }
        if let Some(z) = self.buf.get_mut(self.len) {
            *z = 0;
        }
        Ok(())
    }
}

/// A case's checks: each failed one is written out, and the case fails.
struct Checks<'a> {
    w: &'a mut dyn Write,
    ok: bool,
}

impl<'a> Checks<'a> {
    fn new(w: &'a mut dyn Write) -> Self {
        Checks { w, ok: true }
    }

    fn check(&mut self, c: bool, what: &str) {
        if !c {
            let _ = write!(self.w, "{what}; ");
            self.ok = false;
        }
    }
}

/// Runs a test body and reports its error text through the C buffer.
fn run(msg: *mut c_char, len: usize, body: impl FnOnce(&mut dyn Write) -> bool) -> c_int {
    if msg.is_null() || len == 0 {
        return -1;
    }
    // SAFETY: the C caller passes a writable buffer of `len` bytes.
    let buf = unsafe { core::slice::from_raw_parts_mut(msg.cast::<u8>(), len) };
    let mut w = MsgBuf { buf, len: 0 };
    if body(&mut w) {
        0
    } else {
        -1
    }
}
