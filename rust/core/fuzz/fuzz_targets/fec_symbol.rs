//! Source symbol parser on arbitrary octets, and construct → parse round
//! trip with a payload and padding taken from the input.
#![no_main]

use crem_core::fec::{build_source_symbol, parse_source_symbol, Error};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Arbitrary octets: never panics; whatever parses is exactly what
    // build_source_symbol produces for that payload and T.
    if let Ok(p) = parse_source_symbol(data) {
        let mut again = vec![0u8; data.len()];
        assert_eq!(build_source_symbol(p, data.len(), &mut again), Ok(()));
        assert_eq!(again, data);
    }

    // Round trip: first octet = padding length, the rest = payload.
    if let Some((&extra, payload)) = data.split_first() {
        let t = payload.len() + 2 + extra as usize;
        let mut buf = vec![0xA5u8; t + 1];
        match build_source_symbol(payload, t, &mut buf) {
            Ok(()) => {
                assert_eq!(parse_source_symbol(&buf[..t]), Ok(payload));
                assert_eq!(buf[t], 0xA5, "wrote past T");
                if extra > 0 {
                    buf[t - 1] ^= 0x01;
                    assert_eq!(parse_source_symbol(&buf[..t]), Err(Error::NonZeroPadding));
                }
            }
            Err(e) => {
                assert!(payload.len() > u16::MAX as usize);
                assert_eq!(e, Error::PayloadTooLong);
            }
        }
        assert!(build_source_symbol(payload, payload.len() + 1, &mut buf).is_err());
        assert_eq!(
            build_source_symbol(&payload[..payload.len().min(10)], 12, &mut [0u8; 11]),
            Err(Error::BufferTooSmall)
        );
    }
});
