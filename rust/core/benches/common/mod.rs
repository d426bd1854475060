//! Decode set-up shared by the benches: u sources lost, spread over the block,
//! and the block's ordinary repairs as decoder input.

use crem_core::fec::Repair;

/// Loses u sources of a k-block, spread evenly: (lost positions, held sources).
pub fn spread_loss(srcs: &[Vec<u8>], k: u8, u: u8) -> (Vec<usize>, Vec<Option<&[u8]>>) {
    let lost: Vec<usize> = (0..u as usize)
        .map(|n| n * k as usize / u as usize)
        .collect();
    let held = (0..k as usize)
        .map(|j| (!lost.contains(&j)).then_some(&srcs[j][..]))
        .collect();
    (lost, held)
}

/// The ordinary repairs (L = all present) held in `buf`, T octets each.
pub fn ordinary_repairs(buf: &[u8], t: usize) -> Vec<Repair<'_>> {
    buf.chunks(t)
        .enumerate()
        .map(|(i, d)| Repair {
            index: i as u8,
            lost: None,
            data: d,
        })
        .collect()
}
