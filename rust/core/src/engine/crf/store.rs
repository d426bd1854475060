//! [`SliceStore`]: a [`SymbolStore`] over caller-provided buffers, for
//! tests, tools, fuzzing and simulation (the kernel keeps skbs instead).

use super::super::super::psn::Psn;
use super::SymbolStore;

/// Marks an empty cell.
const EMPTY: u32 = u32::MAX;

/// Fixed cells carved out of caller slices: source slot `i` is
/// `src[i·c..(i+1)·c]` with `c = src.len() / src_len.len()`, its length in
/// `src_len[i]`; likewise for repairs. Give `WINDOW` source cells of the
/// largest UDP payload and `REPAIRS` repair cells of T octets.
pub struct SliceStore<'a> {
    src: &'a mut [u8],
    src_len: &'a mut [u32],
    src_cell: usize,
    rep: &'a mut [u8],
    rep_len: &'a mut [u32],
    rep_cell: usize,
}

impl<'a> SliceStore<'a> {
    /// A store over the given buffers; all cells start empty.
    pub fn new(
        src: &'a mut [u8],
        src_len: &'a mut [u32],
        rep: &'a mut [u8],
        rep_len: &'a mut [u32],
    ) -> Self {
        let src_cell = src.len().checked_div(src_len.len()).unwrap_or(0);
        let rep_cell = rep.len().checked_div(rep_len.len()).unwrap_or(0);
        src_len.fill(EMPTY);
        rep_len.fill(EMPTY);
        SliceStore {
            src,
            src_len,
            src_cell,
            rep,
            rep_len,
            rep_cell,
        }
    }

    /// Source cells in use.
    pub fn sources_kept(&self) -> usize {
        self.src_len.iter().filter(|&&l| l != EMPTY).count()
    }

    /// Repair cells in use.
    pub fn repairs_kept(&self) -> usize {
        self.rep_len.iter().filter(|&&l| l != EMPTY).count()
    }
}

fn cell(buf: &[u8], size: usize, i: usize, len: u32) -> Option<&[u8]> {
    if len == EMPTY {
        return None;
    }
    let from = i.checked_mul(size)?;
    buf.get(from..from.checked_add(len as usize)?)
}

fn cell_mut(buf: &mut [u8], size: usize, i: usize, len: u32) -> Option<&mut [u8]> {
    if len == EMPTY {
        return None;
    }
    let from = i.checked_mul(size)?;
    buf.get_mut(from..from.checked_add(len as usize)?)
}

fn put(buf: &mut [u8], lens: &mut [u32], size: usize, i: usize, data: &[u8]) -> bool {
    if data.len() > size {
        return false;
    }
    let Some(l) = lens.get_mut(i) else {
        return false;
    };
    let Some(from) = i.checked_mul(size) else {
        return false;
    };
    let Some(dst) = from
        .checked_add(data.len())
        .and_then(|to| buf.get_mut(from..to))
    else {
        return false;
    };
    dst.copy_from_slice(data);
    *l = data.len() as u32;
    true
}

impl SymbolStore for SliceStore<'_> {
    fn keep_source(&mut self, slot: usize, _psn: Psn, payload: &[u8]) -> bool {
        put(self.src, self.src_len, self.src_cell, slot, payload)
    }

    fn source(&self, slot: usize) -> Option<&[u8]> {
        cell(self.src, self.src_cell, slot, *self.src_len.get(slot)?)
    }

    fn drop_source(&mut self, slot: usize) {
        if let Some(l) = self.src_len.get_mut(slot) {
            *l = EMPTY;
        }
    }

    fn keep_repair(&mut self, slot: usize, symbol: &[u8]) -> bool {
        put(self.rep, self.rep_len, self.rep_cell, slot, symbol)
    }

    fn repair(&self, slot: usize) -> Option<&[u8]> {
        cell(self.rep, self.rep_cell, slot, *self.rep_len.get(slot)?)
    }

    fn source_and_repair_mut(
        &mut self,
        source: usize,
        repair: usize,
    ) -> (Option<&[u8]>, Option<&mut [u8]>) {
        let s = self
            .src_len
            .get(source)
            .and_then(|&l| cell(self.src, self.src_cell, source, l));
        let r = match self.rep_len.get(repair) {
            Some(&l) => cell_mut(self.rep, self.rep_cell, repair, l),
            None => None,
        };
        (s, r)
    }

    fn drop_repair(&mut self, slot: usize) {
        if let Some(l) = self.rep_len.get_mut(slot) {
            *l = EMPTY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        let mut s = [0u8; 8];
        let mut sl = [0u32; 2];
        let mut r = [0u8; 6];
        let mut rl = [0u32; 2];
        let mut st = SliceStore::new(&mut s, &mut sl, &mut r, &mut rl);
        assert!(st.keep_source(1, Psn::ZERO, b"abcd"));
        assert!(!st.keep_source(0, Psn::ZERO, b"abcde"));
        assert!(!st.keep_source(2, Psn::ZERO, b"a"));
        assert_eq!(st.source(1), Some(&b"abcd"[..]));
        assert_eq!(st.source(0), None);
        assert_eq!(st.source(5), None);
        assert!(st.keep_repair(0, b"xyz"));
        {
            let (a, b) = st.source_and_repair_mut(1, 0);
            assert_eq!(a, Some(&b"abcd"[..]));
            b.unwrap()[0] = b'X';
        }
        assert_eq!(st.repair(0), Some(&b"Xyz"[..]));
        assert_eq!(st.sources_kept(), 1);
        assert_eq!(st.repairs_kept(), 1);
        st.drop_source(1);
        st.drop_repair(0);
        st.drop_source(9);
        st.drop_repair(9);
        assert_eq!(st.source(1), None);
        assert_eq!(st.repair(0), None);
        let (a, b) = st.source_and_repair_mut(9, 9);
        assert!(a.is_none() && b.is_none());
        let mut e: [u8; 0] = [];
        let mut el: [u32; 0] = [];
        let mut e2: [u8; 0] = [];
        let mut el2: [u32; 0] = [];
        let mut st = SliceStore::new(&mut e, &mut el, &mut e2, &mut el2);
        assert!(!st.keep_source(0, Psn::ZERO, b""));
    }
}
