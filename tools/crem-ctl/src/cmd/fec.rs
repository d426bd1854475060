//! `crem-ctl fec encode|decode`: offline FEC over hex payloads on standard
//! input, with crem-core's encoder and decoder (the I/O is fec.rs's).

use crate::stdio::{stdin_text, Format};
use crate::{fec, Fail, Res};

const FEC_HELP: &str = "\
I/O FORMAT:
    encode reads the block's source packets on standard input as hex UDP
    payloads, one per line: position j = line j, an empty line is an absent
    position ('0x' is a present zero-length payload), k = the number of
    lines (1..=255). It prints one line 'I HEX' per repair symbol (HEX = the
    T-octet repair symbol, lower case).
    decode reads lines
        S J [HEX]                a received source payload at position J
                                 (no HEX: a zero-length payload)
        R I HEX [over=J,J,...]   a repair symbol with Repair Index I, over
                                 every present position unless over= is given
    and prints 'J HEX' (the payload, unpadded) for every source it recovers,
    sorted by J. The source symbol of payload P is uint16(len(P)) || P ||
    zero padding to T octets, so payloads hold at most T-2 octets.

JSON (-j):
    encode prints {\"repair\": [{\"index\": I, \"symbol\": HEX}, ...]}, decode
    {\"source\": [{\"position\": J, \"payload\": HEX}, ...]}; -p indents.

EXAMPLE:
    printf '%s\\n' 52444d412d504b542d30 52444d412d504b542d31 \\
        52444d412d504b542d32 52444d412d504b542d33 |
        crem-ctl fec encode --symbol-len 16 --repair 0,1
    # 0 001ef6ccd7c377f0ddfc774c00000000
    # 1 001ef6ccd7c377f0ddfc774f00000000
    printf 'S 3 52444d412d504b542d33\\nR 0 001e...\\nR 1 001e...\\n' |
        crem-ctl fec decode --k 4 --symbol-len 16 --absent 2

EXIT STATUS:
    0 success; 1 cannot decode (too few symbols, inconsistent symbols);
    2 usage error: an argument or input line is wrong (out of range, given
    twice, an absent position, too long for T, no input), named with the
    allowed range; nothing is computed.";

/// Offline FEC: repair symbols from hex payloads, recover lost sources
#[derive(clap::Args, Debug)]
#[command(after_long_help = FEC_HELP)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Compute repair symbols from hex source payloads on standard input
    #[command(
        long_about = "\
Reads the block's source packets on standard input, one hex UDP payload per
line (line j = position j, an empty line = an absent position, k = the
number of lines), and prints 'I HEX' for every Repair Index I of --repair:
the T-octet repair symbol, the sum over every present position, or over the
set L of --over (a coded retransmission). crem-ctl's source symbol is
uint16(len(P)) || P || zero padding to T (crem-core's encoder).",
        after_long_help = FEC_HELP
    )]
    Encode {
        /// Symbol length T in octets, 2..=65535 (payloads may be up to T-2 octets)
        #[arg(long = "symbol-len", value_name = "T", value_parser = symbol_len_parser())]
        symbol_len: u16,
        /// Repair Indices to compute
        #[arg(long, value_name = "I[,I...]", value_delimiter = ',', required = true)]
        repair: Vec<u8>,
        /// Sum over these positions only (coded retransmission set L)
        #[arg(long, value_name = "J[,J...]", value_delimiter = ',')]
        over: Option<Vec<u8>>,
        /// FEC scheme: cauchy (scheme 1) or xor (scheme 2)
        #[arg(long, default_value = "cauchy", value_parser = ["cauchy", "xor"])]
        scheme: String,
    },
    /// Recover lost source payloads from 'S'/'R' lines on standard input
    #[command(
        long_about = "\
Reads 'S J [HEX]' (a received source payload) and 'R I HEX [over=J,J,...]' (a
repair symbol, over every present position unless over= is given) lines on
standard input and prints 'J HEX' (the payload, unpadded) for every present
source it recovers, sorted by J (crem-core's decoder). Exits 1 when the
symbols do not suffice or are inconsistent (e.g. a recovered length prefix
larger than T-2).",
        after_long_help = FEC_HELP
    )]
    Decode {
        /// Block size k, 1..=255
        #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
        k: u8,
        /// Symbol length T in octets, 2..=65535
        #[arg(long = "symbol-len", value_name = "T", value_parser = symbol_len_parser())]
        symbol_len: u16,
        /// Absent positions (no source packet there)
        #[arg(long, value_name = "J[,J...]", value_delimiter = ',')]
        absent: Vec<u8>,
        /// FEC scheme: cauchy (scheme 1) or xor (scheme 2)
        #[arg(long, default_value = "cauchy", value_parser = ["cauchy", "xor"])]
        scheme: String,
    },
}

/// --symbol-len: a source symbol holds its 2-octet length prefix, and T is
/// a u16 on the wire.
fn symbol_len_parser() -> clap::builder::RangedI64ValueParser<u16> {
    clap::value_parser!(u16).range(crem_core::fec::LENGTH_PREFIX as i64..)
}

pub fn run(a: Args, fmt: Format) -> Res {
    match a.action {
        Action::Encode {
            symbol_len,
            repair,
            over,
            scheme,
        } => {
            let scheme = fec::scheme_from_name(&scheme).map_err(Fail::Usage)?;
            let t = symbol_len.into();
            let sources = fec::parse_sources(&stdin_text()?, t).map_err(Fail::Usage)?;
            let reps =
                fec::encode(scheme, t, &sources, &repair, over.as_deref()).map_err(Fail::Usage)?;
            print(&reps, ["repair", "index", "symbol"], fmt);
        }
        Action::Decode {
            k,
            symbol_len,
            absent,
            scheme,
        } => {
            let scheme = fec::scheme_from_name(&scheme).map_err(Fail::Usage)?;
            // The arguments first: a mistake there needs no input typed.
            let block =
                fec::Block::new(scheme, k, symbol_len.into(), &absent).map_err(Fail::Usage)?;
            let rx = fec::parse_symbols(&stdin_text()?, &block).map_err(Fail::Usage)?;
            let rec = fec::decode(&block, &rx).map_err(Fail::Failed)?;
            print(&rec, ["source", "position", "payload"], fmt);
        }
    }
    Ok(())
}

/// Prints fec's (number, octets) items as lines, or with -j as JSON named
/// by `keys` (see [`fec::json_items`]).
fn print(items: &[(u8, Vec<u8>)], keys: [&str; 3], fmt: Format) {
    fmt.print(&fec::json_items(keys, items), || fec::format_lines(items));
}
