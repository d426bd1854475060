// SPDX-License-Identifier: GPL-2.0
//! The per-netns flow table (step 4 of docs/rust-datapath.md): flows by
//! key (the hooks), by peer and Flow ID (the socket's messages), by
//! address pair (the reverse direction's RDMA ACKs) and, for sender flows
//! whose HELLO is unanswered, by HELLO nonce. Readers (hooks, socket,
//! timers: softirq) look up under RCU without a lock; writers (creation,
//! removal, a Flow ID learnt) are serialised by the table's [`BhLock`].
//!
//! A flow is in the table through the [`Links`] it embeds ([`InTable`]).
//! The owner's rule, which makes the lock-free reads sound: a flow
//! unlinked from the table ([`FlowTable::unlink`]) is freed only after an
//! RCU grace period; nothing links it again.
//!
//! Bucket hashes are keyed by a per-table random seed: a peer (or anyone
//! who can make RDMA traffic cross us) must not be able to choose flows
//! that all land in one chain. So every bit of an address is mixed in
//! (`jhash2` over all its words, never a fold that would let two
//! addresses differing in cancelling bits collide for every seed).

use crate::addr::NetAddr;
use crate::crem_core::wire::FlowKind;
use crate::kernel_ext::bh::{new_bh_lock, Bh, BhLock};
use crate::kernel_ext::rcu::Reader;
use crate::kernel_ext::rcu_hlist::{Chains, Link};
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::bindings;
use kernel::prelude::*;

/// Chains per index, unless a table says otherwise (the KUnit cases use
/// one, so that every lookup compares keys).
pub(crate) const BUCKETS: usize = 256;

/// Which half of CREM a flow is: the sender (CSF) or the receiver (CRF).
pub(crate) const SIDE_CSF: u8 = 0;
pub(crate) const SIDE_CRF: u8 = 1;

/// The flow kind codes of the keys (`nl::flow_kind`).
pub(crate) const KIND_REQUESTS: u8 = 0;
pub(crate) const KIND_RESPONSES: u8 = 1;

/// A flow kind's code in the keys.
pub(crate) fn kind_code(k: FlowKind) -> u8 {
    match k {
        FlowKind::Requests => KIND_REQUESTS,
        FlowKind::Responses => KIND_RESPONSES,
    }
}

/// The flow kind of a key's code (any code but requests': responses).
pub(crate) fn kind_of(code: u8) -> FlowKind {
    if code == KIND_REQUESTS {
        FlowKind::Requests
    } else {
        FlowKind::Responses
    }
}

/// A flow is one direction of one RC QP (addresses, the destination QP),
/// on one side, of one kind (requests, or READ responses and ATOMIC ACKs:
/// their PSN spaces differ).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct FlowKey {
    pub(crate) saddr: NetAddr,
    pub(crate) daddr: NetAddr,
    pub(crate) dqp: u32,
    pub(crate) side: u8,
    pub(crate) kind: u8,
}

/// `jhash`'s final mix (`include/linux/jhash.h`).
fn jhash_final(mut a: u32, mut b: u32, mut c: u32) -> u32 {
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// `__jhash_mix` (`include/linux/jhash.h`), on `(a, b, c)`.
fn jhash_mix(a: u32, b: u32, c: u32) -> (u32, u32, u32) {
    let (mut a, mut b, mut c) = (a, b, c);
    a = a.wrapping_sub(c);
    a ^= c.rotate_left(4);
    c = c.wrapping_add(b);
    b = b.wrapping_sub(a);
    b ^= a.rotate_left(6);
    a = a.wrapping_add(c);
    c = c.wrapping_sub(b);
    c ^= b.rotate_left(8);
    b = b.wrapping_add(a);
    a = a.wrapping_sub(c);
    a ^= c.rotate_left(16);
    c = c.wrapping_add(b);
    b = b.wrapping_sub(a);
    b ^= a.rotate_left(19);
    a = a.wrapping_add(c);
    c = c.wrapping_sub(b);
    c ^= b.rotate_left(4);
    b = b.wrapping_add(a);
    (a, b, c)
}

/// `JHASH_INITVAL`.
const JHASH_INITVAL: u32 = 0xdead_beef;

/// `jhash2(k, k.len(), seed)` (`include/linux/jhash.h`, a static inline:
/// ported, bit for bit; KUnit compares it with the kernel's).
pub(crate) fn jhash2(k: &[u32], seed: u32) -> u32 {
    // A key is a handful of words: its length in octets fits (wrapping
    // only so that no overflow check is compiled in, as in C).
    let init = JHASH_INITVAL
        .wrapping_add((k.len() as u32).wrapping_mul(4))
        .wrapping_add(seed);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut rest = k;
    // Three words at a time while more than three are left: the last one
    // to three go through the final mix.
    while rest.len() > 3 {
        let Some(([x, y, z], tail)) = rest.split_first_chunk::<3>() else {
            break;
        };
        (a, b, c) = jhash_mix(a.wrapping_add(*x), b.wrapping_add(*y), c.wrapping_add(*z));
        rest = tail;
    }
    match *rest {
        [x, y, z] => jhash_final(a.wrapping_add(x), b.wrapping_add(y), c.wrapping_add(z)),
        [x, y] => jhash_final(a.wrapping_add(x), b.wrapping_add(y), c),
        [x] => jhash_final(a.wrapping_add(x), b, c),
        _ => c,
    }
}

/// `words` of an address then `tail`, hashed ([`jhash2`]).
fn jhash_addr<const N: usize>(addrs: [&NetAddr; N], tail: &[u32], seed: u32) -> u32 {
    // At most two addresses and three words: 11 words.
    let mut w = [0u32; 11];
    let mut n = 0usize;
    let mut push = |v: u32| {
        if let Some(slot) = w.get_mut(n) {
            *slot = v;
            n = n.wrapping_add(1);
        }
    };
    for a in addrs {
        a.words().into_iter().for_each(&mut push);
    }
    tail.iter().copied().for_each(&mut push);
    jhash2(w.get(..n).unwrap_or(&w), seed)
}

/// A flow's membership of the table: its identity (fixed before it is
/// inserted), its Flow ID and HELLO nonce, and one link per index.
pub(crate) struct Links {
    key: FlowKey,
    /// The peer CREM node.
    peer: NetAddr,
    /// 0 until known (a sender learns it from HELLO_ACK). Readers compare
    /// it while the flow may move between ID chains (re-walked).
    flow_id: AtomicU32,
    /// Sender flows: of its HELLO, written before the flow is inserted.
    nonce: AtomicU64,
    by_key: Link,
    by_pair: Link,
    by_id: Link,
    by_nonce: Link,
}

impl Links {
    pub(crate) fn new(key: FlowKey, peer: NetAddr) -> Self {
        Links {
            key,
            peer,
            flow_id: AtomicU32::new(0),
            nonce: AtomicU64::new(0),
            by_key: Link::new(),
            by_pair: Link::new(),
            by_id: Link::new(),
            by_nonce: Link::new(),
        }
    }

    /// Gives a flow made ahead of its traffic (a spare) its identity;
    /// `&mut`: only before it is inserted, while its maker holds the only
    /// reference.
    pub(crate) fn set_identity(&mut self, key: FlowKey, peer: NetAddr) {
        self.key = key;
        self.peer = peer;
    }

    /// The side of a flow not set up yet (a spare's), as `set_identity`.
    pub(crate) fn set_side(&mut self, side: u8) {
        self.key.side = side;
    }

    pub(crate) fn key(&self) -> &FlowKey {
        &self.key
    }

    pub(crate) fn peer(&self) -> NetAddr {
        self.peer
    }

    pub(crate) fn flow_id(&self) -> u32 {
        self.flow_id.load(Ordering::Relaxed)
    }

    pub(crate) fn nonce(&self) -> u64 {
        self.nonce.load(Ordering::Relaxed)
    }
}

/// The `Links` whose field `$field` is `$link` (the kernel's
/// `container_of!`).
macro_rules! links_of {
    ($link:expr, $field:ident) => {
        // SAFETY: every link of a table's chains is the `$field` of a
        // `Links` (the table links only those), alive for the reader's
        // section (the owner's rule).
        unsafe { &*kernel::container_of!($link, Links, $field) }
    };
}

fn of_key(l: &Link) -> &Links {
    links_of!(l, by_key)
}

fn of_id(l: &Link) -> &Links {
    links_of!(l, by_id)
}

fn of_pair(l: &Link) -> &Links {
    links_of!(l, by_pair)
}

fn of_nonce(l: &Link) -> &Links {
    links_of!(l, by_nonce)
}

/// A type whose values are in a [`FlowTable`] through the [`Links`] they
/// embed.
///
/// # Safety
///
/// `links` returns a field of `self`, the same one every time, and
/// `from_links` maps that field back to its value.
pub(crate) unsafe trait InTable {
    fn links(&self) -> &Links;

    /// # Safety
    ///
    /// `l` is the `Links` of a live `Self` ([`Self::links`]).
    unsafe fn from_links(l: &Links) -> &Self;
}

/// Where a walk of the table ([`FlowTable::next`]) stands: a key chain
/// and an index in it. Plain numbers, so that it survives between RCU
/// sections (a netlink dump's parts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    bucket: u32,
    index: u32,
}

impl Cursor {
    /// As one word (a netlink dump's `cb->args`).
    pub(crate) fn to_u64(self) -> u64 {
        (u64::from(self.bucket) << 32) | u64::from(self.index)
    }

    pub(crate) fn from_u64(v: u64) -> Self {
        Cursor {
            bucket: (v >> 32) as u32,
            index: v as u32,
        }
    }
}

/// Why an insertion was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A flow of the same key is in the table.
    Exists,
    /// The side has its `max-flows` flows already.
    Limit,
}

/// The flow table (see the module docs). Its lock is boxed (pinned there)
/// so that the table itself need not be pinned.
pub(crate) struct FlowTable<F: InTable, const B: usize = BUCKETS> {
    by_key: Chains<B>,
    by_pair: Chains<B>,
    by_id: Chains<B>,
    by_nonce: Chains<B>,
    seed: u32,
    /// Serialises writers (what it guards is the chains' links). Closing
    /// the table to insertions when the netns goes is its owner's: it
    /// stops creating flows then, not only inserting them.
    writer: Pin<KBox<BhLock<()>>>,
    /// Flows by side; read without the lock for the datapath's early
    /// limit check (the insertion checks again under it).
    n_side: [AtomicU32; 2],
    /// Bumped by every insertion, removal and Flow ID change: a dump that
    /// sees it change has seen an inconsistent table.
    gen: AtomicU32,
    _entries: PhantomData<F>,
}

impl<F: InTable, const B: usize> FlowTable<F, B> {
    /// An empty table with a fresh random seed (process context).
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: `get_random_u32` may be called from any context.
        let seed = unsafe { bindings::get_random_u32() };
        Ok(FlowTable {
            by_key: Chains::new()?,
            by_pair: Chains::new()?,
            by_id: Chains::new()?,
            by_nonce: Chains::new()?,
            seed,
            writer: KBox::pin_init(new_bh_lock!((), "crem_flow_table"), GFP_KERNEL_ACCOUNT)?,
            n_side: [AtomicU32::new(0), AtomicU32::new(0)],
            gen: AtomicU32::new(0),
            _entries: PhantomData,
        })
    }

    /// The hash of a key (its chain: modulo the chains), 9 words.
    pub(crate) fn key_hash(&self, k: &FlowKey) -> u32 {
        let c = k.dqp ^ (u32::from(k.side) << 24) ^ (u32::from(k.kind) << 25);
        jhash_addr([&k.saddr, &k.daddr], &[c], self.seed)
    }

    fn key_bucket(&self, k: &FlowKey) -> usize {
        self.key_hash(k) as usize
    }

    fn id_bucket(&self, peer: &NetAddr, id: u32, side: u8) -> usize {
        jhash_addr([peer], &[id ^ (u32::from(side) << 31)], self.seed ^ 1) as usize
    }

    fn pair_bucket(&self, saddr: &NetAddr, daddr: &NetAddr) -> usize {
        jhash_addr([saddr, daddr], &[], self.seed ^ 2) as usize
    }

    fn nonce_bucket(&self, peer: &NetAddr, nonce: u64) -> usize {
        let words = [nonce as u32, (nonce >> 32) as u32];
        jhash_addr([peer], &words, self.seed ^ 3) as usize
    }

    /// The first flow of chain `bucket` of `chains` (whose links are the
    /// field that `of` maps back from) for which `hit` holds.
    fn first<'a>(
        chains: &'a Chains<B>,
        bucket: usize,
        r: &'a impl Reader,
        of: fn(&Link) -> &Links,
        hit: impl Fn(&Links) -> bool,
    ) -> Option<&'a F> {
        chains.find(bucket, r, |l| {
            let links = of(l);
            // SAFETY: the links of a live `F` (the table's entries).
            hit(links).then(|| unsafe { F::from_links(links) })
        })
    }

    /// The flow of key `k`.
    pub(crate) fn lookup<'a>(&'a self, k: &FlowKey, r: &'a impl Reader) -> Option<&'a F> {
        Self::first(&self.by_key, self.key_bucket(k), r, of_key, |l| l.key == *k)
    }

    /// The flow of `side` whose peer `peer` knows it by Flow ID `id`.
    pub(crate) fn lookup_id<'a>(
        &'a self,
        peer: &NetAddr,
        id: u32,
        side: u8,
        r: &'a impl Reader,
    ) -> Option<&'a F> {
        Self::first(&self.by_id, self.id_bucket(peer, id, side), r, of_id, |l| {
            l.flow_id() == id && l.peer == *peer && l.key.side == side
        })
    }

    /// The sender flow whose HELLO to `peer` carried `nonce`, while its
    /// Flow ID is not known.
    pub(crate) fn lookup_nonce<'a>(
        &'a self,
        peer: &NetAddr,
        nonce: u64,
        r: &'a impl Reader,
    ) -> Option<&'a F> {
        let bucket = self.nonce_bucket(peer, nonce);
        Self::first(&self.by_nonce, bucket, r, of_nonce, |l| {
            l.peer == *peer && l.nonce() == nonce
        })
    }

    /// Calls `f` with every flow from `saddr` to `daddr` (either side and
    /// kind; a flow that moved chains meanwhile may come twice, which
    /// address pairs never do).
    pub(crate) fn for_each_pair<'a>(
        &'a self,
        saddr: &NetAddr,
        daddr: &NetAddr,
        r: &'a impl Reader,
        mut f: impl FnMut(&'a F),
    ) {
        self.by_pair.find(self.pair_bucket(saddr, daddr), r, |l| {
            let links = of_pair(l);
            if links.key.saddr == *saddr && links.key.daddr == *daddr {
                // SAFETY: as in `first`.
                f(unsafe { F::from_links(links) });
            }
            None::<()>
        });
    }

    /// Whether a flow of `peer` and `side` uses Flow ID `id` (0: always).
    pub(crate) fn id_in_use(&self, peer: &NetAddr, id: u32, side: u8, r: &impl Reader) -> bool {
        id == 0 || self.lookup_id(peer, id, side, r).is_some()
    }

    /// Flows of `side` in the table.
    pub(crate) fn count(&self, side: u8) -> u32 {
        self.n_side
            .get(usize::from(side))
            .map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// The generation (see the field).
    pub(crate) fn gen(&self) -> u32 {
        self.gen.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.gen.fetch_add(1, Ordering::Release);
    }

    /// Puts `e` in the table, unless a flow of its key is in it or its
    /// side has `max` flows. A sender flow gets
    /// `nonce` (its HELLO's), by which its HELLO_ACK finds it.
    ///
    /// Once it is in, another writer may unlink it at once: a caller that
    /// goes on using `e` (starting it) does so inside the same BH-off
    /// section (`bh`), which holds off its freeing.
    ///
    /// # Safety
    ///
    /// `e` is not in a table and stays where it is, alive, until an RCU
    /// grace period after [`Self::unlink`] returned true for it.
    pub(crate) unsafe fn insert(
        &self,
        e: &F,
        max: u32,
        nonce: u64,
        bh: &Bh,
    ) -> Result<(), Refused> {
        let l = e.links();
        let side = usize::from(l.key.side);
        let n = self.n_side.get(side).ok_or(Refused::Limit)?;
        let w = self.writer.lock(bh);
        // In a table already (a caller's bug): never linked twice.
        if l.by_key.is_linked() {
            return Err(Refused::Exists);
        }
        if self.lookup(&l.key, bh).is_some() {
            return Err(Refused::Exists);
        }
        if n.load(Ordering::Relaxed) >= max {
            return Err(Refused::Limit);
        }
        // SAFETY: writers are serialised by `writer` (held); `e` stays
        // alive as the caller promises, its links in this table only.
        unsafe {
            // At the end of its key chain: a resumed walk (`next`) does not
            // see it twice.
            self.by_key.add_tail(self.key_bucket(&l.key), &l.by_key);
            self.by_pair
                .add(self.pair_bucket(&l.key.saddr, &l.key.daddr), &l.by_pair);
            if l.key.side == SIDE_CSF {
                // Published with the link (Release).
                l.nonce.store(nonce, Ordering::Relaxed);
                self.by_nonce
                    .add(self.nonce_bucket(&l.peer, nonce), &l.by_nonce);
            }
        }
        n.fetch_add(1, Ordering::Relaxed);
        self.bump();
        drop(w);
        Ok(())
    }

    /// `e`'s Flow ID is now `id`: it is found by it (moved to its chain
    /// without a grace period; readers on it walk theirs again), and no
    /// longer by its HELLO nonce. Nothing if `e` is not in the table (it
    /// was unlinked: it must not become reachable again).
    ///
    /// # Safety
    ///
    /// `e` was inserted in this table (and in no other since), whether or
    /// not it is still in it: its links are this table's or none.
    pub(crate) unsafe fn set_id(&self, e: &F, id: u32, bh: &Bh) {
        let l = e.links();
        let _w = self.writer.lock(bh);
        l.flow_id.store(id, Ordering::Relaxed);
        if !l.by_key.is_linked() {
            return;
        }
        // SAFETY: writers serialised (`_w`); `e` is linked, so in this
        // table (the caller's contract), whose entries keep the owner's
        // rule (`insert`).
        unsafe {
            self.by_nonce.del(&l.by_nonce);
            self.by_id
                .move_to(self.id_bucket(&l.peer, id, l.key.side), &l.by_id);
        }
        self.bump();
    }

    /// Takes `e` out of the table: false if it was not in it (another
    /// remover took it first). After true, the caller frees it a grace
    /// period later at the earliest.
    ///
    /// # Safety
    ///
    /// As for [`Self::set_id`].
    pub(crate) unsafe fn unlink(&self, e: &F, bh: &Bh) -> bool {
        let l = e.links();
        let _w = self.writer.lock(bh);
        if !l.by_key.is_linked() {
            return false;
        }
        // SAFETY: writers serialised (`_w`); `e` is linked, so in this
        // table (the caller's contract).
        unsafe {
            self.by_key.del(&l.by_key);
            self.by_pair.del(&l.by_pair);
            self.by_id.del(&l.by_id);
            self.by_nonce.del(&l.by_nonce);
        }
        if let Some(n) = self.n_side.get(usize::from(l.key.side)) {
            n.fetch_sub(1, Ordering::Relaxed);
        }
        self.bump();
        true
    }

    /// Calls `f` with every flow from `cur` on, in key-chain order, until
    /// it returns true: `cur` is then that flow's position (the walk goes
    /// on from it, in this section or a later one: a netlink dump's next
    /// part), else the end. One walk of each chain, from its head to where
    /// `cur` points and on (the index is counted, not stored).
    ///
    /// Resumed in another section, the walk sees a flow inserted meanwhile
    /// once or not at all, never twice (flows go to the end of their key
    /// chain); a flow removed before `cur` makes it skip one. Both move the
    /// generation ([`Self::gen`]), by which the walker can tell. `f` may
    /// unlink the flow it is given (under the writers' serialisation, as
    /// [`Self::unlink`] requires): the walk goes on to the next one.
    pub(crate) fn walk<'a>(
        &'a self,
        cur: &mut Cursor,
        r: &'a impl Reader,
        mut f: impl FnMut(&'a F) -> bool,
    ) {
        while (cur.bucket as usize) < B {
            let skip = cur.index;
            let mut i = 0u32;
            let stop = self.by_key.find(cur.bucket as usize, r, |l| {
                let at = i;
                i = i.saturating_add(1);
                if at < skip {
                    return None;
                }
                // SAFETY: as in `first`.
                f(unsafe { F::from_links(of_key(l)) }).then_some(at)
            });
            if let Some(at) = stop {
                cur.index = at;
                return;
            }
            cur.bucket = cur.bucket.saturating_add(1);
            cur.index = 0;
        }
    }

    /// Calls `f` with every flow in the table (a flow that moved ID chains
    /// is still walked once: this walks the key chains, which never move).
    pub(crate) fn for_each<'a>(&'a self, r: &'a impl Reader, mut f: impl FnMut(&'a F)) {
        self.walk(&mut Cursor::default(), r, |e| {
            f(e);
            false
        });
    }
}

impl<F: InTable, const B: usize> Drop for FlowTable<F, B> {
    fn drop(&mut self) {
        // Its owner empties it first (every flow unlinked, then freed a
        // grace period later): a flow still linked here would keep
        // pointers into chains that are about to go.
        let left = self.count(SIDE_CSF).saturating_add(self.count(SIDE_CRF));
        if left != 0 {
            pr_warn!("flow table dropped with {} flows in it\n", left);
        }
    }
}
