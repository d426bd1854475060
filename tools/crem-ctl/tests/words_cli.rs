//! Command words as the operator types them, through the built binary
//! (no kernel module needed): abbreviations, ambiguous prefixes and help at
//! every level.

mod common;

fn run(args: &[&str]) -> (i32, String, String) {
    common::run(args, b"")
}

#[test]
fn ambiguous_prefixes_exit_2_naming_the_candidates() {
    for (args, msg) in [
        (
            &["se", "k", "8"][..],
            "crem-ctl: 'se' is ambiguous: it could be set, setconf; type more of it\n",
        ),
        (
            &["fl", "s", "7"][..],
            "crem-ctl: flow: 's' is ambiguous: it could be show, set; type more of it\n",
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", msg), "{args:?}");
    }
}

#[test]
fn abbreviations_and_help_words_reach_the_command() {
    // 'fl sh help' and 'help fl sh': flow show's help, exit 0.
    for args in [["fl", "sh", "help"], ["help", "fl", "sh"]] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            out.contains("Usage: crem-ctl flow show [OPTIONS] <ID>"),
            "{args:?}: {out}"
        );
    }
    // An abbreviated offline command runs: 'fe e' is 'fec encode'.
    let (code, out, err) = common::run(
        &[
            "fe",
            "e",
            "--symbol-len",
            "16",
            "--repair",
            "0",
            "--scheme",
            "xor",
        ],
        b"00\n01\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "0 00000100000000000000000000000000\n");
}
