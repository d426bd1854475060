//! `crem-ctl fec` as the operator runs it: exit status, messages and
//! output of the built binary (no kernel module needed).

mod common;

/// Runs crem-ctl with `args` and text on stdin.
fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    common::run(args, stdin.as_bytes())
}

/// The draft's Coding Example block: "RDMA-PKT-0".."RDMA-PKT-3".
const BLOCK: &str = "52444d412d504b542d30\n52444d412d504b542d31\n\
                     52444d412d504b542d32\n52444d412d504b542d33\n";
/// A T = 16 symbol of zeros, for R lines.
const ZEROS: &str = "00000000000000000000000000000000";

fn enc(args: &[&str], stdin: &str) -> (i32, String, String) {
    run(&[&["fec", "encode"], args].concat(), stdin)
}

fn dec(args: &[&str], stdin: &str) -> (i32, String, String) {
    run(&[&["fec", "decode"], args].concat(), stdin)
}

/// `got` must be a usage error (exit 2, nothing on stdout) whose message
/// contains every part of `want`.
#[track_caller]
fn usage(got: (i32, String, String), want: &[&str]) {
    let (code, out, err) = got;
    assert_eq!(code, 2, "exit status; stderr: {err}");
    assert_eq!(out, "", "stdout");
    for w in want {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
}

#[test]
fn bad_symbol_len_and_k_are_usage_errors() {
    for t in ["0", "1", "70000"] {
        usage(
            enc(&["--symbol-len", t, "--repair", "0"], BLOCK),
            &["--symbol-len", &format!("{t} is not in 2..=65535")],
        );
        usage(
            dec(&["--k", "4", "--symbol-len", t], "S 0 00\n"),
            &["--symbol-len", &format!("{t} is not in 2..=65535")],
        );
    }
    for k in ["0", "256"] {
        usage(
            dec(&["--k", k, "--symbol-len", "16"], "S 0 00\n"),
            &["--k", &format!("{k} is not in 1..=255")],
        );
    }
}

#[test]
fn positions_outside_the_block_are_usage_errors() {
    let t = ["--symbol-len", "16"];
    usage(
        dec(
            &[&["--k", "4", "--absent", "9"], &t[..]].concat(),
            "S 0 00\n",
        ),
        &["--absent: position 9 is outside the block (0..=3 for k = 4)"],
    );
    usage(
        dec(&[&["--k", "4"], &t[..]].concat(), "S 0 00\nS 4 00\n"),
        &["line 2: S: position 4 is outside the block (0..=3 for k = 4)"],
    );
    usage(
        dec(
            &[&["--k", "4"], &t[..]].concat(),
            &format!("R 0 {ZEROS} over=0,9\n"),
        ),
        &["line 1: R: over= position 9 is outside the block (0..=3 for k = 4)"],
    );
    usage(
        enc(&[&t[..], &["--repair", "0", "--over", "9"]].concat(), BLOCK),
        &["--over: position 9 is outside the block (0..=3 for k = 4)"],
    );
}

#[test]
fn absent_positions_are_usage_errors() {
    let args = ["--k", "4", "--symbol-len", "16", "--absent", "1"];
    usage(
        dec(&args, "S 1 00\n"),
        &["line 1: S: position 1 is absent (--absent)"],
    );
    usage(
        dec(&args, &format!("R 0 {ZEROS} over=1\n")),
        &["line 1: R: over= position 1 is absent (--absent)"],
    );
    let block = BLOCK.replacen("52444d412d504b542d31", "", 1);
    usage(
        enc(
            &["--symbol-len", "16", "--repair", "0", "--over", "1"],
            &block,
        ),
        &["--over: position 1 is absent (an empty line)"],
    );
}

#[test]
fn duplicates_are_usage_errors() {
    let args = ["--k", "4", "--symbol-len", "16"];
    usage(
        dec(&args, "S 1 00\nS 1 00\n"),
        &["line 2: S: position 1 given twice"],
    );
    usage(
        dec(&args, &format!("R 0 {ZEROS}\nR 0 {ZEROS}\n")),
        &["line 2: R: repair index 0 given twice"],
    );
    usage(
        dec(&[&args[..], &["--absent", "1,1"]].concat(), "S 0 00\n"),
        &["--absent: position 1 given twice"],
    );
    usage(
        enc(&["--symbol-len", "16", "--repair", "0,0"], BLOCK),
        &["--repair: index 0 given twice"],
    );
}

#[test]
fn repair_indices_outside_the_scheme_are_usage_errors() {
    usage(
        enc(&["--symbol-len", "16", "--repair", "253"], BLOCK),
        &["--repair: index 253 is not valid for cauchy with k = 4 (0..=251)"],
    );
    usage(
        enc(
            &["--symbol-len", "16", "--repair", "1", "--scheme", "xor"],
            BLOCK,
        ),
        &["--repair: index 1 is not valid for xor with k = 4 (0..=0)"],
    );
    usage(
        dec(
            &["--k", "4", "--symbol-len", "16"],
            &format!("R 253 {ZEROS}\n"),
        ),
        &["line 1: R: repair index 253 is not valid for cauchy with k = 4 (0..=251)"],
    );
}

#[test]
fn sizes_are_usage_errors() {
    let long = "00".repeat(15);
    usage(
        enc(
            &["--symbol-len", "16", "--repair", "0"],
            &format!("{long}\n"),
        ),
        &["line 1 (position 0): 15 octets; --symbol-len 16 holds 0..=14"],
    );
    usage(
        dec(
            &["--k", "4", "--symbol-len", "16"],
            &format!("S 0 {long}\n"),
        ),
        &["line 1: S 0: 15 octets; --symbol-len 16 holds 0..=14"],
    );
    usage(
        dec(&["--k", "4", "--symbol-len", "16"], "R 0 00\n"),
        &["line 1: R 0: 1 octets; a repair symbol has --symbol-len 16"],
    );
    let lines = "00\n".repeat(256);
    usage(
        enc(&["--symbol-len", "16", "--repair", "0"], &lines),
        &["standard input: 256 source lines; a block has 1..=255"],
    );
}

#[test]
fn empty_input_is_a_usage_error() {
    usage(
        enc(&["--symbol-len", "16", "--repair", "0"], ""),
        &["standard input: no source lines (one hex payload per position, 1..=255 lines)"],
    );
    usage(
        dec(&["--k", "4", "--symbol-len", "16"], "\n\n"),
        &["standard input: no 'S J HEX' or 'R I HEX' lines"],
    );
}

#[test]
fn too_few_repairs_still_fail_with_1() {
    let (code, out, err) = dec(&["--k", "4", "--symbol-len", "16"], "S 0 00\n");
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("cannot decode: insufficient repairs: 0 for 3 unknown sources"),
        "{err}"
    );
}

#[test]
fn a_zero_length_payload_decodes() {
    // Sources 0 and 2 are empty payloads, 1 is "x"; the repair recovers 2.
    let (code, reps, err) = enc(&["--symbol-len", "4", "--repair", "0"], "0x\n78\n0x\n");
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = dec(
        &["--k", "3", "--symbol-len", "4"],
        &format!("S 0\nS 1 78\nR {reps}"),
    );
    assert_eq!((code, out.as_str()), (0, "2 \n"), "{err}");
}

#[test]
fn json_output() {
    let (code, out, err) = run(
        &[
            "-j",
            "fec",
            "encode",
            "--symbol-len",
            "16",
            "--repair",
            "0,1",
        ],
        BLOCK,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"repair\":[{\"index\":0,\"symbol\":\"001ef6ccd7c377f0ddfc774c00000000\"},\
         {\"index\":1,\"symbol\":\"001ef6ccd7c377f0ddfc774f00000000\"}]}\n"
    );
    let input = "S 2 52444d412d504b542d32\nS 3 52444d412d504b542d33\n\
                 R 0 001ef6ccd7c377f0ddfc774c00000000\n\
                 R 1 001ef6ccd7c377f0ddfc774f00000000\n";
    let (code, out, err) = run(
        &["-j", "fec", "decode", "--k", "4", "--symbol-len", "16"],
        input,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"source\":[{\"position\":0,\"payload\":\"52444d412d504b542d30\"},\
         {\"position\":1,\"payload\":\"52444d412d504b542d31\"}]}\n"
    );
    let (code, out, _) = run(
        &[
            "-j",
            "-p",
            "fec",
            "encode",
            "--symbol-len",
            "16",
            "--repair",
            "0",
        ],
        BLOCK,
    );
    assert_eq!(code, 0);
    assert!(out.starts_with("{\n  \"repair\": [\n"), "{out}");
}
