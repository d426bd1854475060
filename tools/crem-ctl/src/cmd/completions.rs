//! `crem-ctl completions SHELL`: the completion scripts clap_complete
//! generates from the CLI definition, with its bash script repaired for a
//! hyphenated binary name.

use crate::stdio::out;
use crate::{Cli, Res};
use clap::{Command, CommandFactory, ValueEnum};
use clap_complete::Shell;

/// Print a shell completion script
#[derive(clap::Args, Debug)]
#[command(long_about = "\
Prints a completion script for SHELL on standard output, e.g.
    crem-ctl completions bash > /etc/bash_completion.d/crem-ctl
    crem-ctl completions zsh > \"${fpath[1]}/_crem-ctl\"
    crem-ctl completions fish > ~/.config/fish/completions/crem-ctl.fish")]
pub struct Args {
    #[arg(value_enum)]
    shell: CompletionShell,
}

// The shells whose scripts are checked (tests below); clap_complete knows more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

pub fn run(a: Args) -> Res {
    let sh = match a.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    out(&script(sh, &mut Cli::command()));
    Ok(())
}

/// The name completion is registered for.
const BIN: &str = "crem-ctl";

/// The completion script for `shell`.
fn script(shell: Shell, cmd: &mut Command) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, cmd, BIN, &mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    match shell {
        Shell::Bash => fix_bash_state_names(&text),
        _ => text,
    }
}

/// clap_complete's bash script (4.6.12 and earlier, clap-rs/clap#6421)
/// tracks the subcommand typed so far in `cmd`, spelling a hyphen of the
/// binary name `__` ("crem__ctl__subcmd__flow"), but labels the `case` arms
/// that complete each subcommand with the hyphen as `__subcmd__`
/// ("crem__subcmd__ctl__subcmd__flow"). No arm matches, COMPREPLY stays
/// empty and bash falls back to file names after the first word. Renaming
/// the arms to the loop's spelling repairs it; with a clap_complete that
/// agrees with itself, the wrong spelling does not occur and this changes
/// nothing.
fn fix_bash_state_names(script: &str) -> String {
    script.replace(&BIN.replace('-', "__subcmd__"), &BIN.replace('-', "__"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command as Process;

    fn generated(shell: Shell) -> String {
        script(shell, &mut Cli::command())
    }

    /// What bash offers for `line` (ending where TAB is pressed): the
    /// script is sourced, the function `complete -p crem-ctl` names is
    /// called as bash calls it (COMP_WORDS, COMP_CWORD, COMP_LINE,
    /// COMP_POINT set; arguments: command, word being completed, previous
    /// word), and COMPREPLY is returned, sorted.
    fn bash_complete(script_path: &std::path::Path, line: &str) -> Vec<String> {
        // Words split as readline does for these simple lines: on spaces, a
        // trailing space starting an empty word.
        let words: Vec<&str> = line.split(' ').collect();
        let driver = r#"
            source "$1" || exit 90
            shift
            spec=$(complete -p crem-ctl) || exit 91
            fn=${spec#*-F }; fn=${fn%% *}
            COMP_WORDS=("$@")
            COMP_CWORD=$(($# - 1))
            COMP_LINE="$*"
            COMP_POINT=${#COMP_LINE}
            prev=""
            [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
            "$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "$prev"
            printf '%s\n' "${COMPREPLY[@]}"
        "#;
        let out = Process::new("bash")
            .args(["--norc", "--noprofile", "-c", driver, "bash"])
            .arg(script_path)
            .args(&words)
            .output()
            .expect("bash runs (the completion test needs bash)");
        assert!(
            out.status.success(),
            "{line:?}: bash exited {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn bash_completes_past_the_first_word() {
        let dir = std::env::temp_dir().join(format!("crem-ctl-compl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("crem-ctl.bash");
        std::fs::write(&path, generated(Shell::Bash)).unwrap();
        let c = |line: &str| bash_complete(&path, line);
        let words = |v: &[&str]| {
            let mut w: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            w.sort();
            w
        };
        let globals = [
            "-j", "--json", "-p", "--pretty", "-s", "--stats", "-n", "--netns", "-h", "--help",
        ];

        let top = c("crem-ctl ");
        for sub in [
            "show",
            "set",
            "stats",
            "monitor",
            "flow",
            "setconf",
            "showconf",
            "fec",
            "decode",
            "roce",
            "completions",
            "help",
        ] {
            assert!(top.contains(&sub.to_string()), "crem-ctl <TAB>: {top:?}");
        }
        assert_eq!(c("crem-ctl sh"), words(&["show", "showconf"]));
        let mut flow = words(&["list", "show", "del", "add", "reset", "set", "help"]);
        flow.extend(words(&globals));
        flow.sort();
        assert_eq!(c("crem-ctl flow "), flow);
        assert_eq!(c("crem-ctl flow s"), words(&["set", "show"]));
        assert_eq!(c("crem-ctl -j flow s"), words(&["set", "show"]));
        assert_eq!(c("crem-ctl fec e"), words(&["encode"]));
        assert_eq!(
            c("crem-ctl fec encode --"),
            words(&[
                "--symbol-len",
                "--repair",
                "--over",
                "--scheme",
                "--json",
                "--pretty",
                "--stats",
                "--netns",
                "--help"
            ])
        );
        assert_eq!(
            c("crem-ctl fec decode --scheme "),
            words(&["cauchy", "xor"])
        );
        assert_eq!(
            c("crem-ctl completions "),
            words(&[&["bash", "fish", "zsh"][..], &globals].concat())
        );
        assert_eq!(c("crem-ctl stats r"), words(&["reset"]));
        assert_eq!(c("crem-ctl stats --w"), words(&["--watch"]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// zsh is not installed where these tests run, so its script is only
    /// checked for the bash bug's kind: every `_crem-ctl..._commands`
    /// function it calls is defined.
    #[test]
    fn zsh_defines_every_function_it_calls() {
        let text = generated(Shell::Zsh);
        let mut called = 0;
        for part in text.split(":_").skip(1) {
            let name = part.split('"').next().unwrap();
            if name.starts_with("crem-ctl") && name.ends_with("_commands") {
                called += 1;
                assert!(text.contains(&format!("\n_{name}() {{")), "{name}");
            }
        }
        assert!(called >= 4, "{called}");
    }

    /// The scripts are generated from the clap definition, so they know
    /// every subcommand, the new ones included.
    #[test]
    fn zsh_and_fish_name_the_flow_subcommands() {
        for sh in [Shell::Zsh, Shell::Fish] {
            let text = generated(sh);
            for sub in ["add", "reset", "del", "show", "set"] {
                assert!(text.contains(sub), "{sh:?}: {sub}");
            }
            // zsh and fish show the subcommands' one-line help.
            assert!(text.contains("Set up a sender flow"), "{sh:?}");
        }
    }

    #[test]
    fn only_the_checked_shells() {
        use clap::Parser;
        assert!(Cli::try_parse_from(["crem-ctl", "completions", "fish"]).is_ok());
        assert!(Cli::try_parse_from(["crem-ctl", "completions", "tcsh"]).is_err());
    }
}
