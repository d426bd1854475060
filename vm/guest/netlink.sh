#!/bin/sh
# Netlink tests of the "crem" family, driven by the kernel's own YNL client
# (tools/net/ynl/cli.py with our spec): defaults, set/get, extack messages for
# bad input, permissions, netns isolation, stats, dumps and notifications.
# Arguments: module=KO ksrc=DIR spec=YAML
set -u
. "$(dirname "$0")/common.sh"
# A world-readable copy of the client, so unprivileged users can run it too.
mkdir -p /tmp/ynl && cp -r "$arg_ksrc/tools/net/ynl/cli.py" "$arg_ksrc/tools/net/ynl/lib" /tmp/ynl/
cp "$arg_spec" /tmp/ynl/crem.yaml && cp "$arg_ksrc/Documentation/netlink/genetlink.yaml" /tmp/ynl/
chmod -R a+rX /tmp/ynl
YNL="python3 /tmp/ynl/cli.py --spec /tmp/ynl/crem.yaml --schema /tmp/ynl/genetlink.yaml"
ynl() { $YNL "$@" 2>&1; }
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; echo "$2" | sed 's/^/    # /'; }
# expect NAME PATTERN CMD...: CMD's output must match the extended regex.
expect() {
  name=$1 pat=$2; shift 2
  out=$("$@"); if echo "$out" | tr '\n' ' ' | grep -Eq -- "$pat"; then ok "$name"; else bad "$name" "$out"; fi
}

insmod "$arg_module" || exit 1
expect "defaults: port 0 (no default port), role disabled, k 32" \
  "'k': 32,.*'port': 0,.*'role': 'disabled'" ynl --do config-get
expect "role without port is refused with a reason" \
  "set a CREM port before enabling a role" ynl --do config-set --json '{"config": {"role": 1}}'
expect "set port, role, k, m" "^None $" \
  ynl --do config-set --json '{"config": {"port": 50000, "role": 1, "k": 16, "m": 4}}'
expect "get shows the new values" "'k': 16" ynl --do config-get
expect "k + m > 255 is refused, naming the rule" "k \+ m must not exceed 255" \
  ynl --do config-set --json '{"config": {"k": 200, "m": 100}}'
expect "refused set changed nothing" "'k': 16" ynl --do config-get
expect "a 5-octet address is refused" "address must be 4 \(IPv4\) or 16 \(IPv6\) octets" \
  ynl --do config-set --json '{"config": {"reporter": ["0102030405"]}}'
expect "policy range: hold-us above 1 s is refused" "out of range|range" \
  ynl --do config-set --json '{"config": {"hold-us": 2000000}}'
expect "reporters and peers are stored" "'prefix-len': 24" \
  sh -c "$YNL --do config-set --json '{\"config\": {\"reporter\": [\"c6336401\"], \"peer\": [{\"prefix\": \"cb007100\", \"prefix-len\": 24, \"addr\": \"c6336402\"}]}}' >/dev/null 2>&1; $YNL --do config-get 2>&1"
expect "a peer prefix with host bits set is refused" "prefix has host bits set beyond prefix-len" \
  ynl --do config-set --json '{"config": {"peer": [{"prefix": "cb007107", "prefix-len": 24, "addr": "c6336402"}]}}'
expect "an empty reporter clears the list" "'k': 16" \
  sh -c "$YNL --do config-set --json '{\"config\": {\"reporter\": [\"\"]}}' >/dev/null 2>&1; $YNL --do config-get 2>&1 | grep -v reporter"
expect "stats are readable" "'malformed': 0" ynl --do stats-get
expect "flow dump is empty until the datapath lands" "^\[\] $" ynl --dump flow-get
ip netns add other
expect "another netns has its own (default) configuration" "'port': 0" \
  ip netns exec other $YNL --do config-get
expect "an unprivileged user cannot change it" "Operation not permitted|EPERM|-1" \
  setpriv --reuid 65534 --regid 65534 --clear-groups $YNL \
  --do config-set --json '{"config": {"port": 1}}'
expect "an unprivileged user can read it" "'port': 50000" \
  setpriv --reuid 65534 --regid 65534 --clear-groups $YNL --do config-get
expect "root of a user namespace cannot change the initial netns" "Operation not permitted|EPERM|-1" \
  unshare -r $YNL --do config-set --json '{"config": {"port": 1}}'
expect "...but may configure its own netns" "^None $" \
  unshare -r -n $YNL --do config-set --json '{"config": {"port": 7}}'
# Notifications: a subscriber sees the change.
ynl --subscribe events --sleep 3 >/tmp/events.txt &
sleep 1.5
ynl --do config-set --json '{"config": {"m": 2}}' >/dev/null
wait
expect "config-set notifies the events group" "config-changed" cat /tmp/events.txt
ip netns del other
rmmod crem || { bad "rmmod" ""; }
echo "netlink: $pass passed, $fail failed"
[ "$fail" = 0 ]
