#!/bin/sh
# crem-ctl against the real module: every command, exit codes, the kernel's
# extack reasons shown verbatim, local validation, permissions, netns, the
# config-change notification, setconf/showconf round trip, and agreement of
# `crem-ctl -j` with the kernel's own YNL client (tools/net/ynl/cli.py with
# our spec) on config, stats and flows.
# Arguments: module=KO ctl=CREM-CTL-BINARY ksrc=DIR spec=YAML
# Writes example outputs for the README to $OUT/examples/.
set -u
. "$(dirname "$0")/common.sh"
CTL=$arg_ctl
# A world-readable copy of the YNL client, as in netlink.sh.
mkdir -p /tmp/ynl && cp -r "$arg_ksrc/tools/net/ynl/cli.py" "$arg_ksrc/tools/net/ynl/lib" /tmp/ynl/
cp "$arg_spec" /tmp/ynl/crem.yaml && cp "$arg_ksrc/Documentation/netlink/genetlink-legacy.yaml" /tmp/ynl/
chmod -R a+rX /tmp/ynl
YNL="python3 /tmp/ynl/cli.py --spec /tmp/ynl/crem.yaml --schema /tmp/ynl/genetlink-legacy.yaml --output-json"
EX=$OUT/examples
mkdir -p "$EX"

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; echo "$2" | sed 's/^/    # /'; }
# check NAME RC PATTERN CMD...: CMD must exit with RC and its stdout+stderr
# must match the extended regex PATTERN (newlines folded to spaces).
check() {
  name=$1 want=$2 pat=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && printf '%s\n' "$out" | tr '\n' ' ' | grep -Eq -- "$pat"; then
    ok "$name"
  else
    bad "$name" "exit $rc (want $want); output:
$out"
  fi
}
# fixed NAME RC TEXT CMD...: like check, but TEXT is a fixed string.
fixed() {
  name=$1 want=$2 text=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && printf '%s' "$out" | grep -Fq -- "$text"; then
    ok "$name"
  else
    bad "$name" "exit $rc (want $want); output:
$out"
  fi
}

# same_as_ynl NAME OP [--dump]: `crem-ctl -j` output (file $2.ctl) must
# equal cli.py's answer. Addresses come as text from both (the spec's
# display-hint); an enum-as-flags set (schemes) is a list whose order
# cli.py does not keep (a Python set): compared as sets.
cat >/tmp/cmp.py <<'EOF'
import json, sys
def norm(v):
    if isinstance(v, dict):
        return {k: sorted(map(str, x)) if k == "schemes" else norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v
ynl = json.load(open(sys.argv[1]))
ctl = json.load(open(sys.argv[2]))
key = sys.argv[3]
# cli.py gives each message's attributes as they are, at the top level (no
# nest per op); crem-ctl -j wraps them in {key: ...}.
if key == "flow":      # a dump: a list of messages, each one flow's attributes
    ynl = {"flow": list(ynl or [])}
else:                  # a do: the reply's attributes; empty lists are absent
    ynl = {key: dict(ynl or {})}
    if key == "config":
        ynl["config"].setdefault("reporter", [])
        ynl["config"].setdefault("peer", [])
a, b = norm(ynl), norm(ctl)
if a != b:
    print("ynl:     ", json.dumps(a, sort_keys=True))
    print("crem-ctl:", json.dumps(b, sort_keys=True))
    sys.exit(1)
print("same:", json.dumps(b, sort_keys=True))
EOF
same_as_ynl() {
  name=$1 what=$2 mode=$3 op=$4
  $YNL $mode "$op" >/tmp/ynl.json 2>/tmp/ynl.err || { bad "$name" "cli.py failed: $(cat /tmp/ynl.err)"; return; }
  # shellcheck disable=SC2086 # $what is a command and its argument
  "$CTL" -j $what >/tmp/ctl.json 2>&1 || { bad "$name" "crem-ctl failed: $(cat /tmp/ctl.json)"; return; }
  res=$(python3 /tmp/cmp.py /tmp/ynl.json /tmp/ctl.json "$5" 2>&1) && ok "$name" || bad "$name" "$res"
}

check "without the module: exit 3 and says so" 3 "module is not loaded" "$CTL" show
insmod "$arg_module" || exit 1

# --- reading -----------------------------------------------------------------
check "show: config, stats, flows" 0 "^config: .*port: +0 .*role: +disabled .*stats: .*flows: none" "$CTL" show
"$CTL" show >"$EX/show-defaults.txt" 2>&1
check "no command = show" 0 "^config: .*stats: .*flows: none" "$CTL"
check "show config only" 0 "^config: .*k: +32 " "$CTL" show config
check "-j show config is JSON with YAML names" 0 '^\{"config":\{"port":0,"role":"disabled","recovery":"coded","adaptive":"on","k":32,"m":2,"symbol-len":0,"epsilon-ppb":100000,"m-cong":1,"hold-us":0,"max-flows":1024,"max-memory":67108864,"max-bdp":256,"report":"off","node-id":0,"report-interval-us":50,"report-flow-gap-us":1000,"report-port-rate":10000,"report-psns":64,"spare-flows":8,"reporter":\[\],"peer":\[\]\}\}' "$CTL" -j show config
same_as_ynl "defaults: crem-ctl -j show config == cli.py config-get" "show config" --do config-get config

# --- set, checked locally ------------------------------------------------------
check "bad number refused locally (exit 2)" 2 "k: 0 is out of range \(1\.\.=255\)" "$CTL" set k 0
check "bad address refused locally (exit 2)" 2 "reporter: '198\.51\.100' is not an IPv4 or IPv6 address" "$CTL" set reporter 198.51.100
check "bad unit refused locally (exit 2)" 2 "hold: .*longer than the kernel's maximum of 1s" "$CTL" set hold 2s
check "unknown key refused locally (exit 2)" 2 "unknown key 'colour'" "$CTL" set colour blue

# --- set, refused by the kernel: its reason verbatim, exit 1 ----------------
fixed "extack: role before port, verbatim" 1 "set a CREM port before enabling a role (there is no default port)" "$CTL" set role host
fixed "extack: k + m > 255, verbatim" 1 "k + m must not exceed 255 (Repair Indices need i + k <= 255)" "$CTL" set k 200 m 100
fixed "extack: names the offending attribute" 1 "(config-set: Invalid argument; attribute config.m)" "$CTL" set k 200 m 100
fixed "extack: symbol-len below 64, verbatim" 1 "symbol-len must be 0 (derived) or at least 64" "$CTL" set symbol-len 10
fixed "extack: peer family mix, verbatim" 1 "peer address family differs from its prefix's" "$CTL" set peer 203.0.113.0/24=2001:db8::2
"$CTL" set k 200 m 100 >"$EX/set-refused.txt" 2>&1; echo "exit status $?" >>"$EX/set-refused.txt"
"$CTL" set role host >"$EX/set-role-refused.txt" 2>&1; echo "exit status $?" >>"$EX/set-role-refused.txt"
"$CTL" set k 0 >"$EX/set-local.txt" 2>&1; echo "exit status $?" >>"$EX/set-local.txt"
check "refused sets changed nothing" 0 '"k":32,"m":2,' "$CTL" -j show config

# --- set, accepted -------------------------------------------------------------
check "set many keys at once" 0 "^ $" "$CTL" set port 50000 role gateway recovery both adaptive off \
  k 16 m 4 symbol-len 1100 epsilon 1e-5 m-cong 2 hold 2ms max-flows 4096 max-memory 128M \
  reporter 198.51.100.1,2001:db8::1 peer 203.0.113.0/24=198.51.100.2 peer 2001:db8:1::/48=2001:db8::2
check "show reflects the set" 0 "port: +50000 .*role: +gateway .*epsilon: +1e-5 \(10000 ppb\) .*hold: +2ms .*max-memory: +128M .*reporter: +198\.51\.100\.1 +2001:db8::1 .*peer: +203\.0\.113\.0/24 via 198\.51\.100\.2 +2001:db8:1::/48 via 2001:db8::2" "$CTL" show config
"$CTL" show >"$EX/show.txt" 2>&1
"$CTL" -j show >"$EX/show.json" 2>&1
"$CTL" -j -p show config >"$EX/show-config-pretty.json" 2>&1
same_as_ynl "configured: crem-ctl -j show config == cli.py config-get" "show config" --do config-get config
check "lists are replaced, not merged" 0 '"reporter":\["198\.51\.100\.7"\]' sh -c "'$CTL' set reporter 198.51.100.7 && '$CTL' -j show config"
check "other keys keep their values" 0 '"k":16,"m":4,' "$CTL" -j show config

# --- stats and flows -------------------------------------------------------------
check "stats" 0 "^stats: .*roce-local-in: +[0-9]+ .*malformed: +[0-9]+" "$CTL" stats
same_as_ynl "crem-ctl -j stats == cli.py stats-get" "stats" --do stats-get stats
check "stats reset" 0 "^ $" "$CTL" stats reset
check "counters are zero after reset" 0 '"sources":0,"non-sources":0,"malformed":0' "$CTL" -j show stats
check "stats --watch samples (-j: a line each)" 0 '^\{"stats":\{.*\}\} \{"stats":\{.*\}\} $' "$CTL" -j stats --watch 0.2 --count 2
check "stats --watch -j -p: still a line each" 0 '^\{"stats":\{.*\}\} \{"stats":\{.*\}\} $' "$CTL" -j -p stats --watch 0.2 --count 2
"$CTL" stats >"$EX/stats.txt" 2>&1
"$CTL" stats --watch 1 --count 2 >"$EX/stats-watch.txt" 2>&1
check "flow list: none yet" 0 "^flows: none" "$CTL" flow list
check "-j flow list" 0 '^\{"flow":\[\]\}' "$CTL" -j flow list
same_as_ynl "crem-ctl -j flow list == cli.py flow-get dump" "flow list" --dump flow-get flow
fixed "flow del of an unknown ID: the kernel's reason (exit 1)" 1 "no flow with id 1" "$CTL" flow del 1
fixed "flow set of an unknown ID: the kernel's reason (exit 1)" 1 "no flow with id 1" "$CTL" flow set 1 k 8 m 1
fixed "flow set: m alone is a usage error (exit 2)" 2 "give both k and m, or adaptive" "$CTL" flow set 1 m 3
check "flow del: bad ID (exit 2)" 2 "not a flow ID" "$CTL" flow del x

# --- notifications -----------------------------------------------------------------
base=$(joined </proc/net/netlink)
timeout 120 "$CTL" -j monitor --count 2 >/tmp/mon.json 2>&1 &
mpid=$!
timeout 120 "$CTL" monitor --count 2 >/tmp/mon.txt 2>&1 &
tpid=$!
wait_joined $((base + 2)) 60 || bad "both monitors subscribed within 60 s" "$(cat /proc/net/netlink)"
"$CTL" set m 3
"$CTL" set hold 500us
wait $mpid; wait $tpid
check "monitor -j: one JSON object per notification" 0 '^\{"event":"config-change","config":\{.*"m":3,.*\}\} \{"event":"config-change","config":\{.*"hold-us":500,.*\}\} $' cat /tmp/mon.json
check "monitor: one line per notification" 0 "^config-change: port 50000 role gateway .* m 3 .* config-change: .* hold 500us " cat /tmp/mon.txt
cp /tmp/mon.json "$EX/monitor.json"; cp /tmp/mon.txt "$EX/monitor.txt"

# --- setconf / showconf ------------------------------------------------------------
"$CTL" -j show config >/tmp/before.json
"$CTL" showconf >/tmp/saved.conf
cp /tmp/saved.conf "$EX/showconf.txt"
check "showconf is a [CREM] file with [Peer] sections" 0 "^\[CREM\] Port = 50000 Role = gateway .*Hold = 500us .*\[Peer\] Prefix = 203\.0\.113\.0/24 Address = 198\.51\.100\.2" cat /tmp/saved.conf
"$CTL" set k 8 m 1 hold 0 reporter 192.0.2.99 peer 192.0.2.0/24=192.0.2.1
check "setconf restores a saved configuration" 0 "^ $" "$CTL" setconf /tmp/saved.conf
check "...exactly" 0 "^ $" sh -c "'$CTL' -j show config | cmp - /tmp/before.json"
# devtmpfs has no /dev/stdin (udev makes it on a real system).
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
check "showconf | setconf /dev/stdin changes nothing" 0 "^ $" sh -c "'$CTL' showconf | '$CTL' setconf /dev/stdin && '$CTL' -j show config | cmp - /tmp/before.json"
check "setconf - reads standard input" 0 "^ $" sh -c "'$CTL' setconf - </tmp/saved.conf && '$CTL' -j show config | cmp - /tmp/before.json"
check "-j showconf is the JSON of show config" 0 "^ $" sh -c "'$CTL' -j showconf | cmp - /tmp/before.json"
printf '[CREM]\nK = 16\nColour = blue\n' >/tmp/bad.conf
check "setconf: a bad file names the line (exit 2)" 2 "/tmp/bad.conf: line 3: unknown key 'Colour'" "$CTL" setconf /tmp/bad.conf
printf '[CREM]\nK = 200\nM = 100\n' >/tmp/refused.conf
fixed "setconf: the kernel's reason verbatim (exit 1)" 1 "k + m must not exceed 255" "$CTL" setconf /tmp/refused.conf
# A file is a change: lists it does not have are kept (not cleared, which
# would end all protection); 'none' empties one, and showconf writes it.
printf '[CREM]\nK = 8\n' >/tmp/partial.conf
check "setconf: a partial file keeps the reporters and peers" 0 '"k":8,.*"reporter":\["198\.51\.100\.7"\],"peer":\[\{"prefix":"203\.0\.113\.0","prefix-len":24,"addr":"198\.51\.100\.2"\},\{"prefix":"2001:db8:1::",' sh -c "'$CTL' setconf /tmp/partial.conf && '$CTL' -j show config"
printf '[Peer]\nPrefix = 192.0.2.0/24\nAddress = 192.0.2.1\n' >/tmp/peers.conf
check "setconf: [Peer] sections replace the peers, the reporters stay" 0 '"k":8,.*"reporter":\["198\.51\.100\.7"\],"peer":\[\{"prefix":"192\.0\.2\.0","prefix-len":24,"addr":"192\.0\.2\.1"\}\]\}\}' sh -c "'$CTL' setconf /tmp/peers.conf && '$CTL' -j show config"
printf '[CREM]\nReporter = none\nPeer = none\n' >/tmp/none.conf
check "setconf: Reporter = none, Peer = none empty the lists" 0 '"k":8,.*"reporter":\[\],"peer":\[\]\}\}' sh -c "'$CTL' setconf /tmp/none.conf && '$CTL' -j show config"
"$CTL" showconf >/tmp/none-saved.conf
check "showconf writes empty lists as none" 0 "^\[CREM\] .*K = 8 .*Reporter = none Peer = none $" cat /tmp/none-saved.conf
LISTS="reporter 198.51.100.9 peer 192.0.2.0/24=192.0.2.1"
check "...so setconf of that file empties them again" 0 '"reporter":\[\],"peer":\[\]\}\}' sh -c "'$CTL' set $LISTS && '$CTL' setconf /tmp/none-saved.conf && '$CTL' -j show config"
check "set reporter none peer none empties the lists" 0 '"reporter":\[\],"peer":\[\]\}\}' sh -c "'$CTL' set $LISTS && '$CTL' set reporter none peer none && '$CTL' -j show config"
fixed "set: none beside an address is a usage error (exit 2)" 2 "reporter: 'none' empties the list and cannot be combined" "$CTL" set reporter none reporter 198.51.100.9
check "setconf of the saved file restores the lists" 0 "^ $" sh -c "'$CTL' setconf /tmp/saved.conf && '$CTL' -j show config | cmp - /tmp/before.json"

# --- permissions and namespaces -----------------------------------------------------
chmod a+rx "$CTL" 2>/dev/null
NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
check "an unprivileged user can read" 0 "port: +50000" $NOBODY "$CTL" show config
$NOBODY "$CTL" set port 1 >"$EX/nobody.txt" 2>&1; echo "exit status $?" >>"$EX/nobody.txt"
check "an unprivileged user cannot set (exit 4)" 4 "Operation not permitted.*CAP_NET_ADMIN" $NOBODY "$CTL" set port 1
check "...nor reset the counters (exit 4)" 4 "Operation not permitted" $NOBODY "$CTL" stats reset
ip netns add other
check "another netns has its own (default) configuration" 0 '^\{"config":\{"port":0,' ip netns exec other "$CTL" -j show config
check "...and is configured separately" 0 '"port":7,' sh -c "ip netns exec other '$CTL' set port 7 && ip netns exec other '$CTL' -j show config"
check "...leaving this one alone" 0 '"port":50000,' "$CTL" -j show config
ip netns del other

# --- a Path Reporter --------------------------------------------------------------
ip netns add rep
check "set role reporter = role disabled report on" 0 '"role":"disabled",.*"report":"on","node-id":7,' \
  sh -c "ip netns exec rep '$CTL' set port 7470 role reporter node-id 7 && ip netns exec rep '$CTL' -j show config"
check "show prints the role and report side by side" 0 "role: +disabled +report: +on " ip netns exec rep "$CTL" show config
ip netns exec rep "$CTL" show config >"$EX/show-reporter.txt" 2>&1
fixed "extack: report-psns 65, verbatim" 1 "report-psns must be 1 to 64 (the PSNs a report lists at most)" \
  ip netns exec rep "$CTL" set report-psns 65
fixed "...naming the attribute" 1 "attribute config.report-psns)" ip netns exec rep "$CTL" set report-psns 65
fixed "role reporter beside report: usage error (exit 2)" 2 "report given more than once" \
  ip netns exec rep "$CTL" set role reporter report off
check "showconf: Role = disabled, Report = on" 0 "Role = disabled .*Report = on NodeId = 7 " ip netns exec rep "$CTL" showconf
check "stats: the path reporter section" 0 "path reporter: +report-drops-overflow: +0 " ip netns exec rep "$CTL" stats
ip netns del rep

# --- offline commands and help ---------------------------------------------------------
check "completions bash" 0 "crem-ctl" "$CTL" completions bash
check "set --help documents keys and exit status" 0 "max-memory SIZE .*EXIT STATUS" "$CTL" set --help
"$CTL" --help >"$EX/help.txt" 2>&1
"$CTL" set --help >"$EX/set-help.txt" 2>&1

rmmod crem || bad "rmmod" ""
check "after rmmod: exit 3 and says so" 3 "module is not loaded" "$CTL" -j show
"$CTL" show >"$EX/no-module.txt" 2>&1; echo "exit status $?" >>"$EX/no-module.txt"
kmemleak_report
echo "crem-ctl: $pass passed, $fail failed"
[ "$fail" = 0 ]
