//! The ISA-L erasure-code calls the benchmark makes (isa-l/erasure_code.h).

use std::ffi::c_int;

#[link(name = "isal")]
extern "C" {
    fn ec_init_tables(k: c_int, rows: c_int, a: *const u8, gftbls: *mut u8);
    fn ec_encode_data(
        len: c_int,
        k: c_int,
        rows: c_int,
        gftbls: *const u8,
        data: *const *const u8,
        coding: *const *mut u8,
    );
    fn gf_invert_matrix(input: *mut u8, output: *mut u8, n: c_int) -> c_int;
}

/// Expanded tables of a rows×k coefficient matrix (row-major).
pub fn init_tables(k: usize, rows: usize, a: &[u8]) -> Vec<u8> {
    assert_eq!(a.len(), k * rows);
    let mut t = vec![0u8; 32 * k * rows];
    // SAFETY: `a` holds rows·k coefficients, `t` the 32·k·rows octets
    // ec_init_tables writes.
    unsafe { ec_init_tables(k as c_int, rows as c_int, a.as_ptr(), t.as_mut_ptr()) };
    t
}

/// out[r] = Σ_j a[r][j]·data[j] over `len` octets (ISA-L's dot products).
pub fn encode(len: usize, k: usize, tables: &[u8], data: &[&[u8]], out: &mut [Vec<u8>]) {
    let rows = out.len();
    assert!(data.len() == k && tables.len() == 32 * k * rows);
    assert!(data.iter().all(|d| d.len() >= len) && out.iter().all(|o| o.len() >= len));
    let d: Vec<*const u8> = data.iter().map(|s| s.as_ptr()).collect();
    let o: Vec<*mut u8> = out.iter_mut().map(|s| s.as_mut_ptr()).collect();
    // SAFETY: k source and `rows` output pointers, each valid for `len`
    // octets (asserted), and tables for k·rows coefficients.
    unsafe {
        ec_encode_data(
            len as c_int,
            k as c_int,
            rows as c_int,
            tables.as_ptr(),
            d.as_ptr(),
            o.as_ptr(),
        )
    };
}

/// The inverse of the n×n matrix `m` (row-major), or None if singular.
pub fn invert(m: &[u8], n: usize) -> Option<Vec<u8>> {
    assert_eq!(m.len(), n * n);
    let mut input = m.to_vec();
    let mut out = vec![0u8; n * n];
    // SAFETY: both buffers hold n·n octets; ISA-L overwrites `input`.
    let r = unsafe { gf_invert_matrix(input.as_mut_ptr(), out.as_mut_ptr(), n as c_int) };
    (r == 0).then_some(out)
}
