//! The command words of a command line, read before clap parses it, so
//! that every level takes what ip(8) takes: an unambiguous prefix of a
//! command (`crem-ctl fl sh 7`), `help` after any command (`crem-ctl flow
//! show help`, where clap knows only `--help` for a command without
//! subcommands) and `help` before a path of abbreviated commands
//! (`crem-ctl help fl sh`, which clap's help subcommand does not expand).
//! An ambiguous prefix is refused naming what it could be: clap (with
//! `infer_subcommands`, which does the same expansion) would take it for a
//! positional word where a command has those (`flow FILTER...`).

use clap::Command;
use std::ffi::OsString;

/// `args` (argv with the program name first) with every command word
/// expanded to its full name, and `help` after a command without
/// subcommands turned into `--help`; `Err` names an ambiguous prefix.
pub fn expand(root: &Command, mut args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let mut root = root.clone();
    // Propagates the global options and adds the help subcommands.
    root.build();
    let mut cur = &root;
    let mut path: Vec<String> = Vec::new();
    // After `help`: the words name a command from `cur` down.
    let mut after_help = false;
    let mut i = 1;
    while i < args.len() {
        let Some(w) = args[i].to_str().map(str::to_string) else {
            break;
        };
        if w == "--" {
            break;
        }
        if w.starts_with('-') && w.len() > 1 {
            i += 1 + usize::from(takes_separate_value(cur, &w));
            continue;
        }
        if !cur.has_subcommands() {
            // The first word of a command without subcommands.
            if w == "help" && !after_help {
                args[i] = "--help".into();
            }
            break;
        }
        let sub = match find(cur, &w) {
            Found::One(s) => s,
            Found::Ambiguous(names) => {
                let at = if path.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", path.join(" "))
                };
                return Err(format!(
                    "{at}'{w}' is ambiguous: it could be {}; type more of it",
                    names.join(", ")
                ));
            }
            // A positional word, or a mistake clap will report.
            Found::None => break,
        };
        args[i] = sub.get_name().into();
        if sub.get_name() == "help" && !after_help {
            after_help = true;
        } else {
            path.push(sub.get_name().to_string());
            cur = sub;
        }
        i += 1;
    }
    Ok(args)
}

enum Found<'a> {
    One(&'a Command),
    Ambiguous(Vec<&'a str>),
    None,
}

/// The subcommand of `cmd` that `w` names: its name or an alias, or else
/// the start of exactly one of them.
fn find<'a>(cmd: &'a Command, w: &str) -> Found<'a> {
    let subs = || cmd.get_subcommands();
    if let Some(s) = subs().find(|s| s.get_name() == w || s.get_all_aliases().any(|a| a == w)) {
        return Found::One(s);
    }
    let hits: Vec<&Command> = subs()
        .filter(|s| s.get_name().starts_with(w) || s.get_all_aliases().any(|a| a.starts_with(w)))
        .collect();
    match hits.as_slice() {
        [] => Found::None,
        [one] => Found::One(one),
        many => Found::Ambiguous(many.iter().map(|s| s.get_name()).collect()),
    }
}

/// True if option word `w` of `cmd` takes a value from the next word
/// (`-n NAME`, `--count N`; not `--count=N`, `-nNAME` or `-j`).
fn takes_separate_value(cmd: &Command, w: &str) -> bool {
    if let Some(long) = w.strip_prefix("--") {
        if long.contains('=') {
            return false;
        }
        return cmd
            .get_arguments()
            .find(|a| {
                a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|v| v.contains(&long))
            })
            .is_some_and(|a| a.get_action().takes_values());
    }
    // A cluster of short flags: the first that takes a value takes the
    // rest of the word, or the next word if it ends the cluster.
    let shorts: Vec<char> = w[1..].chars().collect();
    for (k, c) in shorts.iter().enumerate() {
        let takes = cmd
            .get_arguments()
            .find(|a| a.get_short() == Some(*c))
            .is_some_and(|a| a.get_action().takes_values());
        if takes {
            return k + 1 == shorts.len();
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cli;
    use clap::{CommandFactory, Parser};

    fn os(v: &[&str]) -> Vec<OsString> {
        std::iter::once("crem-ctl")
            .chain(v.iter().copied())
            .map(OsString::from)
            .collect()
    }

    fn ex(v: &[&str]) -> Result<Vec<String>, String> {
        expand(&Cli::command(), os(v)).map(|a| {
            a[1..]
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        })
    }

    #[test]
    fn unambiguous_prefixes_expand_at_every_level() {
        assert_eq!(ex(&["fl", "sh", "7"]).unwrap(), ["flow", "show", "7"]);
        assert_eq!(
            ex(&["-j", "-n", "gw", "fl", "l", "side", "crf"]).unwrap(),
            ["-j", "-n", "gw", "flow", "list", "side", "crf"]
        );
        // An option's value is no command word: 'st' here is a namespace.
        assert_eq!(
            ex(&["-n", "st", "fl", "d", "9"]).unwrap(),
            ["-n", "st", "flow", "del", "9"]
        );
        assert_eq!(
            ex(&["--netns=x", "st", "r"]).unwrap(),
            ["--netns=x", "stats", "reset"]
        );
        assert_eq!(
            ex(&["-pjn", "x", "fe", "e"]).unwrap(),
            ["-pjn", "x", "fec", "encode"]
        );
        assert_eq!(
            ex(&["mon", "--count", "3"]).unwrap(),
            ["monitor", "--count", "3"]
        );
        // Exact names win over longer ones they start (show, showconf).
        assert_eq!(ex(&["show", "config"]).unwrap(), ["show", "config"]);
        assert_eq!(ex(&["set", "k", "8"]).unwrap(), ["set", "k", "8"]);
        // Words after the command are left as they are, abbreviations of
        // commands or not ('flow set 7 ... s' is not 'flow set 7 ... show').
        assert_eq!(
            ex(&["fl", "se", "7", "k", "8", "m", "1"]).unwrap(),
            ["flow", "set", "7", "k", "8", "m", "1"]
        );
        assert_eq!(
            ex(&["fl", "peer", "10.0.0.2"]).unwrap(),
            ["flow", "peer", "10.0.0.2"]
        );
        // And clap takes the result: 'fl sh 7' is 'flow show 7'.
        let c = Cli::try_parse_from(expand(&Cli::command(), os(&["fl", "sh", "7"])).unwrap());
        assert!(c.is_ok());
        // clap alone (infer_subcommands) agrees where no positional word
        // competes with the commands.
        assert!(Cli::try_parse_from(os(&["fl", "sh", "7"])).is_ok());
    }

    #[test]
    fn ambiguous_prefixes_are_named() {
        assert_eq!(
            ex(&["s"]).unwrap_err(),
            "'s' is ambiguous: it could be show, set, stats, setconf, syncconf, showconf; type more of it"
        );
        assert_eq!(
            ex(&["-j", "se", "k", "8"]).unwrap_err(),
            "'se' is ambiguous: it could be set, setconf; type more of it"
        );
        assert_eq!(
            ex(&["f"]).unwrap_err(),
            "'f' is ambiguous: it could be flow, fec; type more of it"
        );
        // flow has positional words too: clap alone would take 's' for one.
        assert_eq!(
            ex(&["fl", "s", "7"]).unwrap_err(),
            "flow: 's' is ambiguous: it could be show, set; type more of it"
        );
        assert_eq!(
            ex(&["help", "fl", "s"]).unwrap_err(),
            "flow: 's' is ambiguous: it could be show, set; type more of it"
        );
    }

    /// Every command path, from the root ([] ) down.
    fn paths(cmd: &Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        for s in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(s.get_name().to_string());
            paths(s, p, out);
        }
    }

    /// `help` works at every level, three ways: `PATH --help`, `PATH help`
    /// and `help PATH`; each prints PATH's help (its usage line names it).
    #[test]
    fn help_at_every_level() {
        let mut all = Vec::new();
        paths(&Cli::command(), Vec::new(), &mut all);
        assert!(all.len() > 15, "{all:?}");
        for p in &all {
            let p: Vec<&str> = p.iter().map(String::as_str).collect();
            let usage = format!("Usage: crem-ctl {}", p.join(" "));
            let usage = usage.trim_end();
            // The usage line of exactly this command (not of showconf for
            // show).
            let names_it = |h: &str| {
                h.lines()
                    .any(|l| l == usage || l.starts_with(&format!("{usage} ")))
            };
            let help_of = |argv: Vec<&str>| {
                let a = expand(&Cli::command(), os(&argv)).unwrap();
                match Cli::try_parse_from(a) {
                    Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => e.to_string(),
                    other => panic!("{argv:?}: {other:?}"),
                }
            };
            for argv in [
                [&p[..], &["--help"][..]].concat(),
                [&p[..], &["help"][..]].concat(),
                [&["help"][..], &p[..]].concat(),
            ] {
                let h = help_of(argv.clone());
                assert!(names_it(&h), "{argv:?}: no '{usage}' in\n{h}");
            }
        }
        // Abbreviated: help fl sh, fl sh help.
        for argv in [vec!["help", "fl", "sh"], vec!["fl", "sh", "help"]] {
            let a = expand(&Cli::command(), os(&argv)).unwrap();
            let e = Cli::try_parse_from(a).unwrap_err();
            assert!(
                e.to_string()
                    .contains("Usage: crem-ctl flow show [OPTIONS] <ID>"),
                "{argv:?}"
            );
        }
    }
}
