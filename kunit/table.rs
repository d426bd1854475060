// SPDX-License-Identifier: GPL-2.0
//! The flow table (`rust/table.rs`) on test entries: each index finds what
//! it should and nothing else; insertion refuses a duplicate key and a
//! full side; a Flow ID learnt moves a flow from its nonce
//! to its ID; an unlinked flow is found by nothing and cannot be hashed
//! again; the generation moves with every change.

use super::run;
use crate::addr::NetAddr;
use crate::kernel_ext::bh;
use crate::kernel_ext::rcu;
use crate::table::{Cursor, FlowKey, FlowTable, InTable, Links, Refused, SIDE_CRF, SIDE_CSF};

/// One chain per index: every lookup walks past the other flows and
/// compares their keys (with 256, a wrong comparison would hardly ever
/// meet another flow).
type Table = FlowTable<Entry, 1>;
use core::ffi::{c_char, c_int};
use core::fmt::Write;
use kernel::prelude::*;

/// A test flow: its links and a tag.
struct Entry {
    links: Links,
    tag: u32,
}

// SAFETY: `links` returns the `links` field, `from_links` maps it back.
unsafe impl InTable for Entry {
    fn links(&self) -> &Links {
        &self.links
    }

    unsafe fn from_links(l: &Links) -> &Self {
        // SAFETY: `l` is the `links` field of a live `Entry` (the caller's
        // contract).
        unsafe { &*kernel::container_of!(l, Entry, links) }
    }
}

const A: NetAddr = NetAddr::from_v4([10, 0, 0, 1]);
const B: NetAddr = NetAddr::from_v4([10, 0, 1, 1]);
const PEER: NetAddr = NetAddr::from_v4([192, 0, 2, 1]);

fn key(saddr: NetAddr, daddr: NetAddr, dqp: u32, side: u8, kind: u8) -> FlowKey {
    FlowKey {
        saddr,
        daddr,
        dqp,
        side,
        kind,
    }
}

fn entry(k: FlowKey, tag: u32) -> Entry {
    Entry {
        links: Links::new(k, PEER),
        tag,
    }
}

fn table_indexes(w: &mut dyn Write) -> bool {
    let Ok(t) = Table::new() else {
        let _ = write!(w, "allocation failed");
        return false;
    };
    // Declared after the table: dropped before it, after every use (this
    // case is the only reader and writer, so no grace period is needed).
    let csf = entry(key(A, B, 0x12, SIDE_CSF, 0), 1);
    let csf_resp = entry(key(A, B, 0x12, SIDE_CSF, 1), 2);
    let crf = entry(key(B, A, 0x34, SIDE_CRF, 0), 3);
    let dup = entry(key(A, B, 0x12, SIDE_CSF, 0), 4);
    let extra = entry(key(A, B, 0x99, SIDE_CSF, 0), 5);
    let mut fails: KVec<&str> = KVec::new();
    let mut check = |ok: bool, what: &'static str| {
        if !ok {
            // Atomic: some checks run with BH off.
            let _ = fails.push(what, GFP_ATOMIC);
        }
    };
    let g0 = t.gen();
    {
        let bh = bh::disable();
        // SAFETY: the entries outlive the table's use (declared in this
        // case, dropped after its last lookup); none is in a table.
        unsafe {
            check(t.insert(&csf, 2, 0xaaaa, &bh).is_ok(), "insert csf");
            check(
                t.insert(&csf_resp, 2, 0xbbbb, &bh).is_ok(),
                "insert csf kind 1",
            );
            check(t.insert(&crf, 2, 0xcccc, &bh).is_ok(), "insert crf");
            check(
                t.insert(&dup, 2, 0xdddd, &bh) == Err(Refused::Exists),
                "duplicate key refused",
            );
            check(
                t.insert(&crf, 2, 0xcccc, &bh) == Err(Refused::Exists),
                "linked entry refused",
            );
            check(
                t.insert(&extra, 2, 0xeeee, &bh) == Err(Refused::Limit),
                "third csf refused",
            );
        }
    }
    check(
        t.count(SIDE_CSF) == 2 && t.count(SIDE_CRF) == 1,
        "counts by side",
    );
    check(t.gen().wrapping_sub(g0) == 3, "gen moved by each insertion");
    let tag = |e: Option<&Entry>| e.map(|e| e.tag);
    {
        let g = rcu::read_lock();
        let found = t.lookup(csf.links.key(), &g);
        check(
            found.map(|e| e.links.peer()) == Some(PEER) && tag(found) == Some(1),
            "lookup csf",
        );
        check(
            tag(t.lookup(csf_resp.links.key(), &g)) == Some(2),
            "lookup by kind",
        );
        check(tag(t.lookup(crf.links.key(), &g)) == Some(3), "lookup crf");
        check(
            t.lookup(extra.links.key(), &g).is_none(),
            "refused not found",
        );
        // Nonces: sender flows only, with the peer.
        check(
            tag(t.lookup_nonce(&PEER, 0xaaaa, &g)) == Some(1),
            "nonce csf",
        );
        check(
            t.lookup_nonce(&PEER, 0xcccc, &g).is_none(),
            "no nonce for crf",
        );
        check(
            t.lookup_nonce(&A, 0xaaaa, &g).is_none(),
            "nonce of another peer",
        );
        // Pairs: A to B holds both sender flows, B to A the receiver.
        let mut ab = 0u32;
        t.for_each_pair(&A, &B, &g, |e| ab |= 1 << e.tag);
        let mut ba = 0u32;
        t.for_each_pair(&B, &A, &g, |e| ba |= 1 << e.tag);
        check(ab == 0b110 && ba == 0b1000, "pairs");
    }
    {
        let bh = bh::disable();
        // SAFETY: both were inserted in this table.
        unsafe {
            t.set_id(&csf, 77, &bh);
            t.set_id(&crf, 77, &bh);
        }
    }
    {
        let g = rcu::read_lock();
        check(
            tag(t.lookup_id(&PEER, 77, SIDE_CSF, &g)) == Some(1),
            "id csf",
        );
        check(
            tag(t.lookup_id(&PEER, 77, SIDE_CRF, &g)) == Some(3),
            "id crf, same id",
        );
        check(
            t.lookup_id(&A, 77, SIDE_CSF, &g).is_none(),
            "id of another peer",
        );
        check(
            t.lookup_nonce(&PEER, 0xaaaa, &g).is_none(),
            "nonce gone with the id",
        );
        check(t.id_in_use(&PEER, 77, SIDE_CSF, &g), "77 in use");
        check(!t.id_in_use(&PEER, 78, SIDE_CSF, &g), "78 free");
    }
    {
        // A new session: the ID changes (in the same chain here), the old
        // one is free.
        let bh = bh::disable();
        // SAFETY: as above.
        unsafe { t.set_id(&csf, 78, &bh) };
    }
    {
        let g = rcu::read_lock();
        check(
            tag(t.lookup_id(&PEER, 78, SIDE_CSF, &g)) == Some(1),
            "id moved",
        );
        check(
            t.lookup_id(&PEER, 77, SIDE_CSF, &g).is_none(),
            "old id gone",
        );
    }
    let g1 = t.gen();
    {
        let bh = bh::disable();
        // SAFETY: as above.
        unsafe {
            check(t.unlink(&csf, &bh), "unlink");
            check(!t.unlink(&csf, &bh), "second unlink refused");
            // An unlinked flow learning an ID stays out.
            t.set_id(&csf, 79, &bh);
        }
    }
    check(
        t.gen().wrapping_sub(g1) == 1,
        "gen moved by the removal only",
    );
    {
        let g = rcu::read_lock();
        check(t.lookup(csf.links.key(), &g).is_none(), "unlinked: no key");
        check(
            t.lookup_id(&PEER, 78, SIDE_CSF, &g).is_none(),
            "unlinked: no id",
        );
        check(
            t.lookup_id(&PEER, 79, SIDE_CSF, &g).is_none(),
            "unlinked: not rehashed",
        );
        let mut all = 0u32;
        let mut n = 0;
        t.for_each(&g, |e| {
            all |= 1 << e.tag;
            n += 1;
        });
        check(all == 0b1100 && n == 2, "for_each: the two left");
        let mut ab = 0u32;
        t.for_each_pair(&A, &B, &g, |e| ab |= 1 << e.tag);
        check(ab == 0b100, "pair without the unlinked");
    }
    check(t.count(SIDE_CSF) == 1, "count after unlink");
    {
        let bh = bh::disable();
        // Room again on the sender side.
        // SAFETY: `extra` was refused, so it is in no table (unlinked, it
        // may go in again); the others were inserted here.
        unsafe {
            check(t.insert(&extra, 2, 1, &bh).is_ok(), "room after unlink");
            check(t.unlink(&extra, &bh), "unlink extra");
            t.unlink(&csf_resp, &bh);
            t.unlink(&crf, &bh);
        }
    }
    check(
        t.count(SIDE_CSF) == 0 && t.count(SIDE_CRF) == 0,
        "empty at the end",
    );
    if !fails.is_empty() {
        let _ = write!(w, "failed:");
        for f in fails.iter() {
            let _ = write!(w, " {f};");
        }
        return false;
    }
    true
}

/// The tags a walk of `t` gives from `cur` on in one section (as a dump's
/// part), at most `max` (`cur` then points at the next one).
fn walk(t: &Table, cur: &mut Cursor, max: usize) -> KVec<u32> {
    let mut tags = [0u32; 8];
    let mut n = 0usize;
    {
        let g = rcu::read_lock();
        t.walk(cur, &g, |e| {
            let Some(slot) = tags.get_mut(n).filter(|_| n < max) else {
                return true;
            };
            *slot = e.tag;
            n += 1;
            false
        });
    }
    // Out of the section, in process context: may sleep.
    let mut seen = KVec::new();
    for &tag in tags.iter().take(n) {
        let _ = seen.push(tag, GFP_KERNEL);
    }
    seen
}

/// A walk resumed between sections (a netlink dump's parts): a flow
/// inserted meanwhile is seen once, never twice (flows go to the end of
/// their chain: with the head insertion the other indexes use, the resumed
/// walk would give a flow again); a flow removed before the cursor makes it
/// skip one, and every change moves the generation; a walk that removes
/// the flows it is given (the collector's) sees every flow once.
fn table_walk(w: &mut dyn Write) -> bool {
    let Ok(t) = Table::new() else {
        let _ = write!(w, "allocation failed");
        return false;
    };
    let e: [Entry; 5] = core::array::from_fn(|i| entry(key(A, B, i as u32, SIDE_CSF, 0), i as u32));
    let mut fails: KVec<&str> = KVec::new();
    let mut check = |ok: bool, what: &'static str| {
        if !ok {
            let _ = fails.push(what, GFP_KERNEL);
        }
    };
    let insert = |i: usize| {
        let bh = bh::disable();
        // SAFETY: the entries outlive the table's use (all unlinked before
        // they go, and no reader is left: this case is the only one).
        unsafe { t.insert(&e[i], 16, 0, &bh) }.is_ok()
    };
    let unlink = |i: usize| {
        let bh = bh::disable();
        // SAFETY: inserted in this table.
        unsafe { t.unlink(&e[i], &bh) }
    };
    check(insert(0) && insert(1) && insert(2), "three in");
    let mut cur = Cursor::default();
    let first = walk(&t, &mut cur, 2);
    let g0 = t.gen();
    check(insert(3), "a fourth in, mid-walk");
    check(t.gen() != g0, "the insertion moves the generation");
    let rest = walk(&t, &mut cur, 10);
    let mut all = first;
    for &x in rest.iter() {
        let _ = all.push(x, GFP_KERNEL);
    }
    let _ = write!(w, "walk around an insertion: {:?}; ", &all[..]);
    check(
        &all[..] == [0, 1, 2, 3],
        "resumed walk: every flow once, in order",
    );
    // A removal before the cursor: the walk skips one, the generation says so.
    let mut cur = Cursor::default();
    let first = walk(&t, &mut cur, 2);
    let g1 = t.gen();
    check(unlink(0), "first out, mid-walk");
    let rest = walk(&t, &mut cur, 10);
    let _ = write!(
        w,
        "around a removal: {:?} then {:?}; ",
        &first[..],
        &rest[..]
    );
    check(
        &first[..] == [0, 1] && &rest[..] == [3],
        "the flow after the cursor skipped",
    );
    check(t.gen() != g1, "the removal moves the generation");
    // Removing flows as the walk gives them (the collector's and flush's
    // walk, under the writers' lock): the walk goes on to the next.
    check(insert(4), "a fifth in");
    let mut seen = [0u32; 8];
    let mut n = 0usize;
    let mut unlinked = true;
    {
        let g = rcu::read_lock();
        t.walk(&mut Cursor::default(), &g, |e| {
            if let Some(slot) = seen.get_mut(n) {
                *slot = e.tag;
                n += 1;
            }
            if e.tag % 2 == 1 || e.tag == 4 {
                unlinked &= unlink(e.tag as usize);
            }
            false
        });
    }
    let seen = seen.get(..n).unwrap_or(&[]);
    let _ = write!(w, "removing walk: {:?}", seen);
    check(
        seen == [1, 2, 3, 4] && unlinked,
        "removing walk: every flow once",
    );
    check(unlink(2), "the kept one out");
    check(t.count(SIDE_CSF) == 0, "empty at the end");
    if !fails.is_empty() {
        let _ = write!(w, "; failed:");
        for f in fails.iter() {
            let _ = write!(w, " {f};");
        }
        return false;
    }
    true
}

#[no_mangle]
extern "C" fn crem_kunit_table_walk(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, table_walk)
}

#[no_mangle]
extern "C" fn crem_kunit_table_indexes(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, table_indexes)
}

/// An IPv6 address of 2001:db8::/32 ending in `last`, octet 4 `hi`.
fn v6(hi: u8, last: u8) -> NetAddr {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    a[4] = hi;
    a[15] = last;
    NetAddr::from_v6(a).unwrap_or(NetAddr::NONE)
}

/// The port of `jhash2` gives the kernel's value (the C static inline,
/// through a test-only wrapper), for every length a key can have and more,
/// and for several seeds.
fn table_jhash2(w: &mut dyn Write) -> bool {
    let mut words = [0u32; 13];
    for (i, x) in words.iter_mut().enumerate() {
        *x = (i as u32).wrapping_mul(0x9e37_79b9) ^ 0x5a5a_0f0f;
    }
    for seed in [0u32, 1, 0xdead_beef, 0x8000_0001] {
        for n in 0..=words.len() {
            let k = words.get(..n).unwrap_or(&[]);
            let port = crate::table::jhash2(k, seed);
            // SAFETY: `k` is `n` readable words.
            let c = unsafe { crate::ffi::crem_h_jhash2(k.as_ptr(), n as u32, seed) };
            if port != c {
                let _ = write!(
                    w,
                    "{n} words, seed {seed:#x}: port {port:#x}, kernel {c:#x}"
                );
                return false;
            }
        }
    }
    true
}

/// IPv6 keys: found by every index (key, peer and ID, peer and nonce,
/// address pair) and not confused with an IPv4 key of the same low words;
/// every address bit moves the key's hash; keys differing only in one high
/// octet spread over the chains.
fn table_v6(w: &mut dyn Write) -> bool {
    let Ok(t) = Table::new() else {
        let _ = write!(w, "allocation failed");
        return false;
    };
    let mut c = super::Checks::new(w);
    let (a, b, peer) = (v6(0, 1), v6(1, 1), v6(0xf, 2));
    // The IPv4 key whose addresses' last words equal the IPv6 ones'.
    let v4_twin = key(
        NetAddr::from_v4([0, 0, 0, 1]),
        NetAddr::from_v4([0, 0, 0, 1]),
        7,
        SIDE_CSF,
        0,
    );
    let e6 = Entry {
        links: Links::new(key(a, b, 7, SIDE_CSF, 0), peer),
        tag: 1,
    };
    let r6 = Entry {
        links: Links::new(key(b, a, 9, SIDE_CRF, 0), peer),
        tag: 2,
    };
    let e4 = entry(v4_twin, 3);
    {
        let bh = bh::disable();
        // SAFETY: the entries outlive the table's use (declared before its
        // last lookup, all unlinked at the end); none is in a table.
        unsafe {
            c.check(t.insert(&e6, 4, 0x6666, &bh).is_ok(), "insert v6 csf");
            c.check(t.insert(&r6, 4, 0, &bh).is_ok(), "insert v6 crf");
            c.check(t.insert(&e4, 4, 0x4444, &bh).is_ok(), "insert v4 twin");
            t.set_id(&r6, 55, &bh);
        }
    }
    {
        let g = rcu::read_lock();
        let tag = |e: Option<&Entry>| e.map(|e| e.tag);
        c.check(tag(t.lookup(e6.links.key(), &g)) == Some(1), "v6 by key");
        c.check(tag(t.lookup(&v4_twin, &g)) == Some(3), "v4 twin by key");
        c.check(
            tag(t.lookup_nonce(&peer, 0x6666, &g)) == Some(1),
            "v6 by peer and nonce",
        );
        c.check(
            t.lookup_nonce(&PEER, 0x6666, &g).is_none(),
            "not by the v4 peer",
        );
        c.check(
            tag(t.lookup_id(&peer, 55, SIDE_CRF, &g)) == Some(2),
            "v6 by peer and id",
        );
        let mut ab = 0u32;
        t.for_each_pair(&a, &b, &g, |e| ab |= 1 << e.tag);
        c.check(ab == 0b10, "v6 pair");
    }
    {
        let bh = bh::disable();
        // SAFETY: inserted in this table above.
        unsafe {
            t.unlink(&e6, &bh);
            t.unlink(&r6, &bh);
            t.unlink(&e4, &bh);
        }
    }
    // Every bit of either address moves the hash (a 32-bit hash: one
    // equal value in 256 would be chance once in 2^24 runs).
    let k0 = key(a, b, 7, SIDE_CSF, 0);
    let h0 = t.key_hash(&k0);
    let mut same = 0u32;
    for bit in 0..256usize {
        let mut o = [*a.octets(), *b.octets()];
        if let Some(x) = o.get_mut(bit / 128).and_then(|x| x.get_mut(bit % 128 / 8)) {
            *x ^= 0x80 >> (bit % 8);
        }
        let [s, d] = o;
        // (No single flip makes 2001:db8::/32 IPv4-mapped.)
        let k = FlowKey {
            saddr: NetAddr::from_v6(s).unwrap_or(NetAddr::NONE),
            daddr: NetAddr::from_v6(d).unwrap_or(NetAddr::NONE),
            ..k0
        };
        if t.key_hash(&k) == h0 {
            same += 1;
        }
    }
    c.check(same == 0, "a flipped address bit left the hash as it was");
    // 256 keys that differ in octet 4 of the source only: over 256 chains
    // a random function fills ~162; under 128 is 6 sigmas away.
    let mut hit = [false; 256];
    for hi in 0..=255u8 {
        let h = t.key_hash(&key(v6(hi, 1), b, 7, SIDE_CSF, 0));
        if let Some(x) = hit.get_mut(h as usize % 256) {
            *x = true;
        }
    }
    let used = hit.iter().filter(|&&x| x).count();
    if used < 128 {
        let _ = write!(c.w, "keys spread over {used} of 256 chains; ");
        c.ok = false;
    }
    c.ok
}

#[no_mangle]
extern "C" fn crem_kunit_table_jhash2(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, table_jhash2)
}

#[no_mangle]
extern "C" fn crem_kunit_table_v6(msg: *mut c_char, len: usize) -> c_int {
    run(msg, len, table_v6)
}
