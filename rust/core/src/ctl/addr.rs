//! Addresses, peers and fixed-capacity lists of the configuration
//! (they replaced C's `struct crem_addr`, `struct crem_peer` and the
//! arrays of `struct crem_cfg`).

use super::super::nl;
use super::{Field, Refusal, Why};
use core::fmt;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use core::ops::Deref;

/// An IPv4 or IPv6 address (`struct crem_addr`, `len` 4 or 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Addr {
    /// 4 octets.
    V4([u8; 4]),
    /// 16 octets.
    V6([u8; 16]),
}

impl Addr {
    /// An attribute's octets: 4 or 16 of them (`crem_nl_validate_addr`),
    /// else [`Why::AddrLen`].
    pub fn from_bytes(b: &[u8]) -> Result<Addr, Why> {
        if let Ok(a) = <[u8; 4]>::try_from(b) {
            Ok(Addr::V4(a))
        } else if let Ok(a) = <[u8; 16]>::try_from(b) {
            Ok(Addr::V6(a))
        } else {
            Err(Why::AddrLen)
        }
    }

    /// The octets, 4 or 16 (as the attribute carries them).
    pub fn octets(&self) -> &[u8] {
        match self {
            Addr::V4(a) => a,
            Addr::V6(a) => a,
        }
    }

    /// Its length in bits: 32 or 128.
    pub const fn bits(&self) -> u8 {
        match self {
            Addr::V4(_) => 32,
            Addr::V6(_) => 128,
        }
    }

    /// The IPv4 address, if it is one.
    pub const fn v4(&self) -> Option<[u8; 4]> {
        match self {
            Addr::V4(a) => Some(*a),
            Addr::V6(_) => None,
        }
    }

    /// Whether a bit past the first `len` is set (`crem_host_bits`; a `len`
    /// of the address's bits or more leaves none).
    pub fn host_bits(&self, len: u8) -> bool {
        let (whole, part) = (usize::from(len / 8), len % 8);
        // (A bounded index range rather than `enumerate`, whose counter
        // the kernel build checks for overflow.)
        (0..16usize).zip(self.octets()).skip(whole).any(|(i, &o)| {
            // The octet `len` ends in keeps its first `part` bits
            // (none if `len` ends before it: `part` 0).
            let keep = if i == whole && part != 0 {
                0xffu8 << (8 - part)
            } else {
                0
            };
            o & !keep != 0
        })
    }
}

impl fmt::Display for Addr {
    /// Dotted quad (`%pI4`) or RFC 5952 text (core's `Ipv6Addr`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&IpAddr::from(*self), f)
    }
}

impl From<Addr> for IpAddr {
    fn from(a: Addr) -> IpAddr {
        match a {
            Addr::V4(a) => IpAddr::V4(Ipv4Addr::from(a)),
            Addr::V6(a) => IpAddr::V6(Ipv6Addr::from(a)),
        }
    }
}

impl From<IpAddr> for Addr {
    fn from(a: IpAddr) -> Addr {
        match a {
            IpAddr::V4(a) => Addr::V4(a.octets()),
            IpAddr::V6(a) => Addr::V6(a.octets()),
        }
    }
}

/// A peer: flows toward `prefix`/`len` are protected with the CREM
/// function at `addr` (`struct crem_peer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Peer {
    /// The destinations' prefix, no bits set past `len`.
    pub prefix: Addr,
    /// The prefix length, at most `prefix`'s bits.
    pub len: u8,
    /// The peer CREM function, of `prefix`'s family.
    pub addr: Addr,
}

impl Peer {
    /// The peer of the `n`-th peer nest (`crem_parse_peer`), from its
    /// attributes as given (`None`: absent), checked in the C's order: all
    /// three given (else the nest is named), the prefix's and the address's
    /// lengths (the policy's check, repeated), prefix-len, host bits, the
    /// family. Each refusal names the attribute the C names.
    pub fn parse(
        n: u16,
        prefix: Option<&[u8]>,
        len: Option<u8>,
        addr: Option<&[u8]>,
    ) -> Result<Peer, Refusal> {
        let attr = |id: u16, why: Why| Refusal::new(Some(Field::PeerAttr(n, id)), why);
        let (Some(prefix), Some(addr), Some(len)) = (prefix, addr, len) else {
            return Err(Refusal::new(Some(Field::Peer(n)), Why::PeerIncomplete));
        };
        let prefix = Addr::from_bytes(prefix).map_err(|w| attr(nl::PEER_PREFIX, w))?;
        let addr = Addr::from_bytes(addr).map_err(|w| attr(nl::PEER_ADDR, w))?;
        if len > prefix.bits() {
            return Err(attr(nl::PEER_PREFIX_LEN, Why::PrefixLenTooLong));
        }
        if prefix.host_bits(len) {
            return Err(attr(nl::PEER_PREFIX, Why::HostBits));
        }
        if prefix.bits() != addr.bits() {
            return Err(attr(nl::PEER_ADDR, Why::PeerFamily));
        }
        Ok(Peer { prefix, len, addr })
    }

    /// Whether `other` has the same prefix and length (`crem_peer_unique`:
    /// a list may hold each once).
    pub fn same_prefix(&self, other: &Peer) -> bool {
        self.len == other.len && self.prefix == other.prefix
    }
}

impl fmt::Display for Peer {
    /// `PREFIX/LEN=ADDR`, as crem-ctl writes a peer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}={}", self.prefix, self.len, self.addr)
    }
}

/// At most `N` values of `T`, without allocation (the C's array and its
/// count). Reads go through the slice it derefs to.
#[derive(Clone, Copy)]
pub struct List<T: Copy, const N: usize> {
    len: usize,
    items: [T; N],
}

impl<T: Copy, const N: usize> List<T, N> {
    /// Its capacity.
    pub const CAPACITY: usize = N;

    /// An empty list; `fill` stands in the unused places (never read).
    pub const fn new(fill: T) -> Self {
        List {
            len: 0,
            items: [fill; N],
        }
    }

    /// The list of `v`'s values (`fill` as in [`List::new`]), or `None` if
    /// it has more than `N`.
    pub fn from_slice(fill: T, v: &[T]) -> Option<Self> {
        let mut l = List::new(fill);
        for &x in v {
            l.push(x).ok()?;
        }
        Some(l)
    }

    /// Appends `v`; `Err(v)` if the list is full.
    pub fn push(&mut self, v: T) -> Result<(), T> {
        match self.items.get_mut(self.len) {
            Some(slot) => {
                *slot = v;
                // Below N (a slot was there): no overflow.
                self.len = self.len.saturating_add(1);
                Ok(())
            }
            None => Err(v),
        }
    }

    /// Empties the list.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Whether it holds `N` values.
    pub fn is_full(&self) -> bool {
        self.len >= N
    }

    /// The values, in order.
    pub fn as_slice(&self) -> &[T] {
        self.items.get(..self.len).unwrap_or(&[])
    }
}

impl<T: Copy, const N: usize> Deref for List<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy + PartialEq, const N: usize> PartialEq for List<T, N> {
    /// Equal values in the same order (the unused places do not count).
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Copy + Eq, const N: usize> Eq for List<T, N> {}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for List<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addr_lengths() {
        assert_eq!(
            Addr::from_bytes(&[10, 0, 0, 1]),
            Ok(Addr::V4([10, 0, 0, 1]))
        );
        assert_eq!(Addr::from_bytes(&[0; 16]), Ok(Addr::V6([0; 16])));
        for n in [0, 1, 3, 5, 15, 17, 32] {
            assert_eq!(Addr::from_bytes(&vec![0; n]), Err(Why::AddrLen), "{n}");
        }
    }

    #[test]
    fn host_bits_as_c() {
        // crem_host_bits, literally.
        fn c(a: &[u8], len: u8) -> bool {
            let mut i = usize::from(len / 8);
            while i < a.len() {
                let keep = if i == usize::from(len / 8) {
                    (0xff00u16 >> (len % 8)) as u8
                } else {
                    0
                };
                if a[i] & !keep != 0 {
                    return true;
                }
                i += 1;
            }
            false
        }
        for len in 0..=255u8 {
            for o in [0u8, 1, 0x80, 0x7f, 0xff, 0x0f, 0xf0] {
                for at in 0..4 {
                    let mut a = [0u8; 4];
                    a[at] = o;
                    assert_eq!(Addr::V4(a).host_bits(len), c(&a, len), "{a:?}/{len}");
                }
                for at in [0, 7, 15] {
                    let mut a = [0u8; 16];
                    a[at] = o;
                    assert_eq!(Addr::V6(a).host_bits(len), c(&a, len), "{a:?}/{len}");
                }
            }
        }
        assert!(!Addr::V4([203, 0, 113, 0]).host_bits(24));
        assert!(Addr::V4([203, 0, 113, 7]).host_bits(24));
        assert!(Addr::V4([203, 0, 113, 0]).host_bits(0));
        assert!(!Addr::V4([0; 4]).host_bits(0));
    }

    #[test]
    fn addr_text() {
        assert_eq!(Addr::V4([198, 51, 100, 2]).to_string(), "198.51.100.2");
        let v6: IpAddr = "2001:db8::2".parse().unwrap();
        assert_eq!(Addr::from(v6).to_string(), "2001:db8::2");
        assert_eq!(IpAddr::from(Addr::from(v6)), v6);
    }

    #[test]
    fn list() {
        let mut l: List<u8, 2> = List::new(0);
        assert!(l.is_empty() && !l.is_full());
        assert_eq!(l.push(7), Ok(()));
        assert_eq!(l.push(8), Ok(()));
        assert_eq!(l.push(9), Err(9));
        assert!(l.is_full());
        assert_eq!(&*l, &[7, 8]);
        let mut m = l;
        m.clear();
        assert_eq!(m.push(7), Ok(()));
        assert_ne!(l, m);
        assert_eq!(m, List::from_slice(0, &[7]).unwrap());
        assert_eq!(List::<u8, 2>::from_slice(0, &[1, 2, 3]), None);
        assert!(List::<u8, 2>::from_slice(5, &[]).unwrap().is_empty());
        assert_eq!(format!("{l:?}"), "[7, 8]");
    }
}
