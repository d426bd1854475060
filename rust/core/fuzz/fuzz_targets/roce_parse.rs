//! Fuzz the RoCEv2 parsers and the ICRC: the input is tried both as a raw IP
//! packet and as a UDP payload (BTH onwards). Nothing may panic; an ICRC that
//! was just filled in must verify.
#![no_main]

use crem_core::roce;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // As a UDP payload.
    let _ = roce::Bth::parse(data);
    let _ = roce::Reth::parse(data);
    if let Ok(a) = roce::Aeth::parse(data) {
        let _ = (a.kind(), a.credits());
    }
    let _ = roce::stored_icrc(data);
    if let Ok(p) = roce::RocePacket::parse(data) {
        assert!(p.payload.len() + roce::BTH_LEN + roce::ICRC_LEN <= data.len());
        let mtu = data.first().map_or(256, |&b| (b as u32) << 4);
        let _ = p.read_span(mtu);
        let _ = p.acked_through();
        let _ = p.is_source();
    }
    if let Some(&b) = data.first() {
        let _ = roce::opcode_info(b).ext_len();
        let _ = roce::read_psn_count(u32::from_le_bytes([b, b, 0, b]), b as u32);
    }
    let _ = roce::icrc_v4(data, data);
    let _ = roce::icrc_v6(data, data);

    // As an IP packet.
    let dropped = crem_core::report::parse_drop(data);
    if let Ok(ip) = roce::split_ip_udp(data) {
        let _ = roce::RocePacket::parse(ip.payload());
        let _ = ip.ecn();
        // A reporter reads the same BTH as the full parser.
        if let (Some(d), Ok(b)) = (dropped, roce::Bth::parse(ip.payload())) {
            assert_eq!((d.dest_qp, d.psn, d.opcode), (b.dest_qp, b.psn, b.opcode));
        }
    }
    let computed = roce::icrc_from_ip_packet(data);
    let verified = roce::verify_ip_packet(data);
    assert_eq!(computed.is_ok(), verified.is_ok());
    let mut copy = data.to_vec();
    if let Ok(c) = roce::fill_icrc_ip_packet(&mut copy) {
        assert_eq!(computed, Ok(c));
        assert_eq!(roce::verify_ip_packet(&copy), Ok(true));
    }
});
