#!/bin/sh
# Netlink tests of the "crem" family, driven by the kernel's own YNL client
# (tools/net/ynl/cli.py with our spec): defaults, set/get, extack messages for
# bad input, permissions, netns isolation, stats, dumps and notifications;
# checks of several requests in a row run in one process (netlink/checks.py:
# each cli.py run costs seconds under TCG).
# Arguments: module=KO ksrc=DIR spec=YAML
set -u
. "$(dirname "$0")/common.sh"
# A world-readable copy of the client, so unprivileged users can run it too.
mkdir -p /tmp/ynl && cp -r "$arg_ksrc/tools/net/ynl/cli.py" "$arg_ksrc/tools/net/ynl/lib" /tmp/ynl/
cp "$(dirname "$0")"/netlink/*.py /tmp/ynl/
cp "$arg_spec" /tmp/ynl/crem.yaml && cp "$arg_ksrc/Documentation/netlink/genetlink-legacy.yaml" /tmp/ynl/
chmod -R a+rX /tmp/ynl
# --no-schema: netlink/gen.sh (make check's netlink-spec) validates the spec
# against genetlink-legacy.yaml; here it would cost seconds per run under TCG.
YNL="python3 /tmp/ynl/cli.py --spec /tmp/ynl/crem.yaml --no-schema"
ynl() { $YNL "$@" 2>&1; }
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; echo "$2" | sed 's/^/    # /'; }
# expect NAME PATTERN CMD...: CMD's output must match the extended regex.
expect() {
  name=$1 pat=$2; shift 2
  out=$("$@"); if echo "$out" | tr '\n' ' ' | grep -Eq -- "$pat"; then ok "$name"; else bad "$name" "$out"; fi
}
# checks CMD...: run checks.py (through CMD's prefix, e.g. a namespace) and
# count its TAP lines; a run that fails without a "not ok" counts as one.
CHECKS="python3 /tmp/ynl/checks.py"
checks() {
  out=$("$@" 2>&1); rc=$?
  printf '%s\n' "$out"
  n_ok=$(printf '%s\n' "$out" | grep -c '^ok - ') n_bad=$(printf '%s\n' "$out" | grep -c '^not ok - ')
  pass=$((pass + n_ok)) fail=$((fail + n_bad))
  [ "$rc" = 0 ] || [ "$n_bad" -gt 0 ] || { fail=$((fail + 1)); echo "not ok - $*: exit $rc"; }
}
ip link set lo up

insmod "$arg_module" || exit 1
expect "defaults: port 0 (no default port), role disabled, k 32" \
  "'k': 32,.*'port': 0,.*'role': 'disabled'" ynl --do config-get
expect "role without port is refused with a reason" \
  "set a CREM port before enabling a role" ynl --do config-set --json '{"role": 1}'
expect "set port, role, k, m" "^None $" \
  ynl --do config-set --json '{"port": 50000, "role": 1, "k": 16, "m": 4}'
expect "get shows the new values" "'k': 16" ynl --do config-get
# config-set binds the new port before the old one goes, one setter at a
# time from snapshot to commit; values the module cannot serve are refused.
checks $CHECKS port-in-use
checks $CHECKS race 40
checks $CHECKS refusals
# Each op's attributes at the top level, only those it takes (its policy):
# others refused ("Unsupported attribute", EINVAL), missing ones named.
checks $CHECKS request-attrs
ip netns add mtu
ip -n mtu link set lo up
ip -n mtu link add d0 type dummy && ip -n mtu link set d0 mtu 1000 up && ip -n mtu addr add 10.9.0.1/24 dev d0
# IPv6 needs a link MTU of at least 1280: its own device. A REPAIR at the
# largest symbol-len (1104 + 132) fits that, so the IPv6 peer's route has a
# locked MTU below it, as a tunnel's route may.
ip -n mtu link add d1 type dummy && ip -n mtu link set d1 mtu 1300 up \
  && ip -n mtu -6 addr add 2001:db8:9::1/64 dev d1 nodad \
  && ip -n mtu -6 route add 2001:db8:9::2/128 dev d1 mtu lock 1200
checks ip netns exec mtu $CHECKS mtu
ip netns del mtu
expect "k + m > 255 is refused, naming the rule" "k \+ m must not exceed 255" \
  ynl --do config-set --json '{"k": 200, "m": 100}'
expect "refused set changed nothing" "'k': 16" ynl --do config-get
expect "a 5-octet address is refused" "address must be 4 \(IPv4\) or 16 \(IPv6\) octets" \
  ynl --do config-set --json '{"reporter": ["0102030405"]}'
expect "policy range: hold-us above 1 s is refused" "out of range|range" \
  ynl --do config-set --json '{"hold-us": 2000000}'
expect "reporters and peers are stored" "'prefix-len': 24" \
  sh -c "$YNL --do config-set --json '{\"reporter\": [\"c6336401\"], \"peer\": [{\"prefix\": \"cb007100\", \"prefix-len\": 24, \"addr\": \"c6336402\"}]}' >/dev/null 2>&1; $YNL --do config-get 2>&1"
expect "a peer prefix with host bits set is refused" "prefix has host bits set beyond prefix-len" \
  ynl --do config-set --json '{"peer": [{"prefix": "cb007107", "prefix-len": 24, "addr": "c6336402"}]}'
expect "an empty reporter clears the list" "'k': 16" \
  sh -c "$YNL --do config-set --json '{\"reporter\": [\"\"]}' >/dev/null 2>&1; $YNL --do config-get 2>&1 | grep -v reporter"
expect "stats are readable" "'malformed': 0" ynl --do stats-get
expect "flow dump is empty (no flow in this netns yet)" "^\[\] $" ynl --dump flow-get
ip netns add other
expect "another netns has its own (default) configuration" "'port': 0" \
  ip netns exec other $YNL --do config-get
expect "an unprivileged user cannot change it" "Operation not permitted|EPERM|-1" \
  setpriv --reuid 65534 --regid 65534 --clear-groups $YNL \
  --do config-set --json '{"port": 1}'
expect "an unprivileged user can read it" "'port': 50000" \
  setpriv --reuid 65534 --regid 65534 --clear-groups $YNL --do config-get
expect "root of a user namespace cannot change the initial netns" "Operation not permitted|EPERM|-1" \
  unshare -r $YNL --do config-set --json '{"port": 1}'
expect "...but may configure its own netns" "^None $" \
  unshare -r -n $YNL --do config-set --json '{"port": 7}'
# Limits: capped by the policy; a netns of another user namespace gets no
# more than the initial netns's (lowered with them), and its flows stop there.
checks $CHECKS caps
$CHECKS set-limits 8 33554432
checks unshare -U -n -r $CHECKS userns
unshare -U -n -r sleep 60 &
uns=$!
sleep 0.5
checks nsenter -t $uns -U -n $CHECKS set-limits 6 16777216
$CHECKS set-limits 4 8388608 && $CHECKS set-limits 1024 67108864
checks nsenter -t $uns -U -n $CHECKS expect-limits \
  "lowering the initial netns's limits lowers a user namespace's netns's (raising them does not)" 4 8388608
kill $uns; wait $uns 2>/dev/null
# A Path Reporter (report on), in its own netns: valid with the role
# disabled, where its port is bound all the same (its reports are sent from
# it) and FORWARD is hooked for the reports it forwards (netfilter's hooks
# are not visible here, nfnetlink_hook is not built: KUnit's
# config_hooks_per_role checks them, hook_reporter_only_passes what passes);
# report off unbinds the port.
ip netns add rep
ip -n rep link set lo up
checks ip netns exec rep $CHECKS reporter
expect "role disabled report on port 7470: UDP 7470 bound (ss -uan)" ":7470 " ip netns exec rep ss -uan
# Forwarded through the reporter (a -> rep -> b): RoCEv2 passes its FORWARD
# hook untouched and uncounted while its role is disabled; as a gateway
# (the positive control) the same packets are counted.
ip netns add ra && ip netns add rb
ip link add ra0 netns ra type veth peer name r0 netns rep
ip link add rb0 netns rb type veth peer name r1 netns rep
ip -n ra addr add 10.77.1.1/24 dev ra0 && ip -n ra link set ra0 up
ip -n rep addr add 10.77.1.2/24 dev r0 && ip -n rep link set r0 up
ip -n rep addr add 10.77.2.1/24 dev r1 && ip -n rep link set r1 up
ip -n rb addr add 10.77.2.2/24 dev rb0 && ip -n rb link set rb0 up
ip -n ra route add default via 10.77.1.2 && ip -n rb route add default via 10.77.2.1
ip netns exec rep sysctl -qw net.ipv4.ip_forward=1
# forward N: N RDMA WRITE ONLY packets (BTH opcode 0x0a) a -> b port 4791;
# prints how many b received.
forward() {
  rm -f /tmp/rb.ready
  ip netns exec rb python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.77.2.2", 4791)); s.settimeout(5)
open("/tmp/rb.ready", "w").close()
n = 0
try:
    while n < int(sys.argv[1]):
        s.recv(2048); n += 1
except OSError:
    pass
print("received", n)' "$1" &
  for _ in $(seq 100); do [ -e /tmp/rb.ready ] && break; sleep 0.1; done
  ip netns exec ra python3 -c '
import socket, sys
bth = bytes([0x0a, 0, 0xff, 0xff, 0, 0, 0, 0x12, 0, 0, 0, 1]) + bytes(64)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(bth, ("10.77.2.2", 4791))' "$1"
  wait $!
}
expect "a reporter only forwards RoCEv2 untouched (all 20 arrive)" "received 20" forward 20
expect "...and counts none at its FORWARD hook" "'roce-forward': 0,.*'sources': 0" \
  ip netns exec rep $YNL --do stats-get
ip netns exec rep $YNL --do config-set --json '{"role": 2}' >/dev/null
expect "the same netns as a gateway (the control): all 20 arrive" "received 20" forward 20
expect "...and its FORWARD hook counts them" "'roce-forward': 20,.*'sources': 20" \
  ip netns exec rep $YNL --do stats-get
ip netns exec rep $YNL --do config-set --json '{"role": 0}' >/dev/null
expect "report off with role disabled: taken" "^None $" \
  ip netns exec rep $YNL --do config-set --json '{"report": 0}'
expect "...and UDP 7470 unbound (ss -uan)" "^0 $" \
  sh -c "ip netns exec rep ss -uan | grep -c ':7470 '"
expect "...nothing bound at all" "^ *$" ip netns exec rep $CHECKS udp-ports
ip netns del ra; ip netns del rb; ip netns del rep
# Notifications: a subscriber sees the change. It joins the group some
# time after it starts (Python under TCG, slower on a loaded machine: one
# CI run's subscriber missed a single change made 1.5 s after its start),
# so the change is made four times over 6 s; it ends at m 2.
ynl --subscribe events --sleep 8 >/tmp/events.txt &
for m in 3 2 3 2; do
  sleep 1.5
  ynl --do config-set --json "{\"m\": $m}" >/dev/null
done
wait
expect "config-set notifies the events group" "config-change-ntf" cat /tmp/events.txt
# The notification's attributes are config-get's, at its top level (no
# config nest): cli.py's sorted dict starts with adaptive.
expect "...with the configuration at the message's top level" "'msg': \{'adaptive': " cat /tmp/events.txt
# The group carries Flow IDs (flow-up/down/change): CAP_NET_ADMIN to join.
checks setpriv --reuid 65534 --regid 65534 --clear-groups $CHECKS subscribe refused \
  "an unprivileged user cannot join the events group"
checks unshare -r -n $CHECKS subscribe allowed "...root of a user namespace may, in its own netns"
ip netns del other
rmmod crem || { bad "rmmod" ""; }
echo "netlink: $pass passed, $fail failed"
[ "$fail" = 0 ]
