#!/usr/bin/env python3
"""panic-sites.py MODULE BASELINE [--update]: the places in crem.ko that can
panic, against a committed list.

crem-core and the module's Rust must not panic on any input, but the
compiler keeps a call to a panic routine wherever it cannot prove an index,
an unwrap or an arithmetic step safe (in the kernel a Rust panic is a BUG:
an oops). This lists every call from the module's code to the panic
routines of `core` (core::panicking::*, unwrap/expect failures, slice index
failures) as "CALLER CALLEE COUNT" lines, from the relocations of
`llvm-objdump -dr`, with the crate hashes of the v0 mangled names removed so
that the list is stable for one toolchain.

The check fails when a caller has more call sites than BASELINE records (a
new possible panic: remove it, or justify it and run with --update), and
reports callers that have fewer (the baseline may shrink with --update).
Exit status 0 when nothing is new, 1 otherwise, 2 on a usage error."""
import collections
import re
import subprocess
import sys

PANIC = re.compile(r'(4core9panicking|unwrap_failed|expect_failed|5slice5index|'
                   r'panic_const|panic_bounds_check|rust_begin_unwind|_RNvNtCs[^ ]*8panicking)')
FUNC = re.compile(r'^[0-9a-f]+ <(.+)>:$')
RELOC = re.compile(r'R_X86_64_\w+\s+(\S+?)(?:[+-]0x[0-9a-f]+)?$')


def stable(name):
    """A v0 mangled name without its crate disambiguators (Cs<hash>_)."""
    return re.sub(r'Cs[0-9A-Za-z]+_', 'C_', name)


def sites(module):
    out = subprocess.run(['llvm-objdump', '-dr', '--no-show-raw-insn', module],
                         capture_output=True, text=True, check=True).stdout
    count = collections.Counter()
    caller = '?'
    for line in out.splitlines():
        m = FUNC.match(line.strip())
        if m:
            caller = m.group(1)
            continue
        r = RELOC.search(line)
        if r and PANIC.search(r.group(1)) and not PANIC.search(caller):
            count[(stable(caller), stable(r.group(1)))] += 1
    return count


def load(path):
    base = collections.Counter()
    try:
        for line in open(path):
            if line.strip() and not line.startswith('#'):
                caller, callee, n = line.split()
                base[(caller, callee)] = int(n)
    except FileNotFoundError:
        pass
    return base


def main():
    args = [a for a in sys.argv[1:] if a != '--update']
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    module, baseline = args
    now, base = sites(module), load(baseline)
    total = sum(now.values())
    if '--update' in sys.argv:
        with open(baseline, 'w') as f:
            f.write('# Panic call sites in crem.ko (vm/panic-sites.py --update); '
                    f'{total} in all.\n# CALLER CALLEE COUNT\n')
            for (caller, callee), n in sorted(now.items()):
                f.write(f'{caller} {callee} {n}\n')
        print(f'panic-sites: baseline written, {total} call sites in {len(now)} places')
        return 0
    new = {k: n - base[k] for k, n in now.items() if n > base[k]}
    gone = {k: base[k] - now[k] for k in base if now[k] < base[k]}
    for (caller, callee), n in sorted(new.items()):
        print(f'NEW: {n} call(s) from {caller} to {callee}')
    for (caller, callee), n in sorted(gone.items()):
        print(f'gone: {n} call(s) from {caller} to {callee} (--update to record)')
    print(f'panic-sites: {total} call sites in {len(now)} places; {sum(new.values())} new, '
          f'{sum(gone.values())} gone since the baseline')
    return 1 if new else 0


if __name__ == '__main__':
    sys.exit(main())
