//! Fuzz the CREM wire decoders: arbitrary bytes must never panic; whatever
//! decodes must re-encode (to exactly `encoded_len()` octets) and decode back
//! to the same message, and re-encoding that is byte-identical.
#![no_main]

use crem_core::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = wire::Header::decode(data);
    let _ = wire::TcAeth::decode(data);
    if let Ok(m) = wire::decode(data) {
        let len = m.encoded_len();
        let mut buf = vec![0u8; len];
        let n = m
            .encode(&mut buf)
            .expect("a decoded message must re-encode");
        assert_eq!(n, len);
        let m2 = wire::decode(&buf[..n]).expect("a re-encoded message must decode");
        assert_eq!(m, m2);
        let mut buf2 = vec![0u8; len];
        assert_eq!(m2.encode(&mut buf2), Ok(n));
        assert_eq!(buf, buf2);
        // The re-encoding equals the input apart from reserved fields, so it
        // is never longer than the input's Length.
        let (h, msg) = wire::Header::decode(data).expect("header of a decodable message");
        assert_eq!(msg.len(), h.length as usize);
        assert_eq!(n, msg.len());
        if n > 0 {
            assert_eq!(
                m.encode(&mut buf[..n - 1]),
                Err(wire::Error::BufferTooSmall { needed: n })
            );
        }
    }
});
