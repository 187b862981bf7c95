#!/usr/bin/env bash
# fleet_trust.sh BREAKERD BCTL PEEK PY SIGN - the fleet link trusts only
# signed, fresh messages from known peers (issue 26), against a real
# redis-server on loopback; messages are forged with redis-cli PUBLISH and
# signed with SIGN (tests/daemon/fleet_sign.py, Python's hmac):
#  1. a key file others may read is a usage error (exit 2);
#  2. a link without a key warns at start that it is unauthenticated, and
#     the first message from a never-seen host id is logged at warn;
#  3. two hosts with --fleet-key-file: a trip and a reset cross (v2);
#  4. an unsigned message (a recorded v1 one: what an old breakerd sends)
#     and a wrongly signed one are refused, cause auth;
#  5. a signed message from a host id not in --fleet-peer is refused
#     (auth) and its first message logged at warn, allowed=no;
#  6. a genuine "disabled" and a genuine "open" replayed after a reset are
#     refused (replay), and so is one sent longer ago than the window;
#  7. the keyless host reads v1 and v2 alike (a rolling upgrade).
# Stops every process it starts and removes its segments.
set -u
BREAKERD=${1:?usage: fleet_trust.sh BREAKERD BCTL PEEK PY SIGN}
BCTL=${2:?}
PEEK=${3:?}
PY=${4:?}
SIGN=${5:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleettrust
fleet_redis
KEY=$TMP/key
(umask 077; echo 'fleet-key-one-0123456789abcdef' >"$KEY"; echo 'fleet-key-two-0123456789abcdef' >"$TMP/key2")
sign() { "$PY" "$SIGN" sign "$1" "$2"; }
b() { "$BCTL" --shm "${SHM[b]}" "$@"; }
drop_ge() { st_ge "$1" "drop_$2" "$3"; }

# 1. key file permissions
cp "$KEY" "$TMP/key.open" && chmod 640 "$TMP/key.open"
"$BREAKERD" --shm "/brk-fleettrust-x-$$" --fleet "$REDIS_URL" --host-id x \
	--fleet-key-file "$TMP/key.open" >"$TMP/perm.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'mode 0640' "$TMP/perm.out" &&
	ok "a key file others may read: usage error (exit 2) naming its mode" ||
	bad "key file 0640: exit $rc" "$(cat "$TMP/perm.out")"
rm -f "/dev/shm/brk-fleettrust-x-$$"

# 2. a keyless host: warned; a never-seen host id logged at warn
host_start u
host_connected u
logged u 'level=warn .*fleet=unauthenticated' &&
	ok "a link without a key warns that it is unauthenticated" ||
	bad "no unauthenticated warning" "$(head -5 "$TMP/breakerd.u")"
"$BCTL" --shm "${SHM[u]}" config pay --fleet on >/dev/null
now=$(now_ms)
fleet_pub "{\"v\":1,\"host\":\"stranger\",\"seq\":1,\"sent_ms\":$now,\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":30000}"
until_s 3 logged u 'level=warn .*fleet=new_peer host=stranger' &&
	ok "the first message from a never-seen host id is logged at warn" ||
	bad "no new_peer warning" "$(tail -5 "$TMP/breakerd.u")"
"$BCTL" --shm "${SHM[u]}" reset pay >/dev/null

# 3. two keyed hosts
for h in a b; do
	host_start $h --fleet "$REDIS_URL" --fleet-key-file "$KEY" \
		--fleet-peer a --fleet-peer b --fleet-peer ops
done
host_connected a
host_connected b
logged a 'fleet=unauthenticated' && bad "a keyed host says it is unauthenticated" ||
	ok "a keyed host does not warn of an unauthenticated link"
for h in a b; do "$BCTL" --shm "${SHM[$h]}" config pay --fleet on >/dev/null; done
"$BCTL" --shm "${SHM[a]}" trip pay --for 30s >/dev/null
until_s 5 state_is b pay open && ok "signed: a trip on A opens pay on B" ||
	bad "B open" "$(state b pay)" "$(tail -5 "$TMP/breakerd.b")"
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
until_s 5 state_is b pay closed && ok "signed: a reset on A closes B" ||
	bad "B closed" "$(state b pay)"
val=$(redis_cli GET breakerd:state:pay)
until_s 3 state_is u pay closed
[ "$(st b drop_auth)" = 0 ] && ok "nothing genuine refused (drop_auth 0)" ||
	bad "genuine messages refused" "$(grep refused "$TMP/breakerd.b" | tail -3)"

# 4. unsigned (recorded v1) and wrongly signed
now=$(now_ms)
V1="{\"v\":1,\"host\":\"a\",\"seq\":900,\"sent_ms\":$now,\"kind\":\"forced\",\"name\":\"pay\",\"mode\":\"disabled\"}"
fleet_pub "$V1"
until_s 3 drop_ge b auth 1 && ok "an unsigned v1 message is refused, cause auth" ||
	bad "unsigned not refused" "drop_auth=$(st b drop_auth)" "$(tail -3 "$TMP/breakerd.b")"
mode_is b pay normal && ok "... and not applied (pay normal on B)" || bad "unsigned applied: $(mode b pay)"
sleep 1.1 # a refusal line per cause and second
fleet_pub "$(sign "$TMP/key2" "{\"v\":2,\"host\":\"ops\",\"boot\":$now,\"seq\":1,\"sent_ms\":$now,\"kind\":\"forced\",\"name\":\"pay\",\"remaining_ms\":60000,\"mode\":\"disabled\"}")"
until_s 3 drop_ge b auth 2 && ok "a wrongly signed message is refused, cause auth" ||
	bad "wrong key not refused" "drop_auth=$(st b drop_auth)"
mode_is b pay normal && ok "... and not applied" || bad "wrongly signed applied: $(mode b pay)"
logged b 'cause=auth .*why="tag: wrong' && ok "the refusal says the tag is wrong" ||
	bad "no tag: wrong line" "$(grep refused "$TMP/breakerd.b" | tail -3)"
# a tag that is right but not last (bytes after the signed text)
fleet_pub "$(sign - "{\"v\":2,\"host\":\"ops\",\"boot\":$now,\"seq\":2,\"sent_ms\":$now,\"kind\":\"reset\",\"name\":\"pay\"}")"
until_s 3 drop_ge b auth 3 && ok "a v2 message without a tag is refused, cause auth" ||
	bad "untagged v2 not refused" "drop_auth=$(st b drop_auth)"

# 5. not in --fleet-peer
fleet_pub "$(sign "$KEY" "{\"v\":2,\"host\":\"evil\",\"boot\":$now,\"seq\":1,\"sent_ms\":$now,\"kind\":\"forced\",\"name\":\"pay\",\"remaining_ms\":60000,\"mode\":\"disabled\"}")"
until_s 3 drop_ge b auth 4 && ok "a signed message from a host id not in --fleet-peer is refused (auth)" ||
	bad "unlisted peer not refused" "drop_auth=$(st b drop_auth)"
mode_is b pay normal && ok "... and not applied" || bad "unlisted peer applied"
logged b 'level=warn .*fleet=new_peer host=evil allowed=no' &&
	ok "its first message is logged at warn, allowed=no" ||
	bad "no new_peer line for evil" "$(grep new_peer "$TMP/breakerd.b")"

# 6. replay of genuine messages
now=$(now_ms)
DIS=$(sign "$KEY" "{\"v\":2,\"host\":\"ops\",\"boot\":$now,\"seq\":10,\"sent_ms\":$now,\"kind\":\"forced\",\"name\":\"pay\",\"remaining_ms\":60000,\"mode\":\"disabled\"}")
fleet_pub "$DIS"
until_s 3 mode_is b pay disabled && ok "a genuine signed 'disabled' from a listed peer applies" ||
	bad "genuine disabled not applied: $(mode b pay)" "$(tail -3 "$TMP/breakerd.b")"
b reset pay >/dev/null
fleet_pub "$DIS"
until_s 3 drop_ge b replay 1 && ok "the same 'disabled' replayed is refused, cause replay" ||
	bad "replay not refused" "drop_replay=$(st b drop_replay)"
mode_is b pay normal && ok "... and not applied (pay normal)" || bad "replayed disabled applied: $(mode b pay)"
OPEN=$(sign "$KEY" "{\"v\":2,\"host\":\"ops\",\"boot\":$now,\"seq\":11,\"sent_ms\":$now,\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":60000}")
fleet_pub "$OPEN"
until_s 3 state_is b pay open && ok "a genuine signed 'open' applies" || bad "genuine open: $(state b pay)"
b reset pay >/dev/null
fleet_pub "$OPEN"
until_s 3 drop_ge b replay 2 && ok "the same 'open' replayed is refused, cause replay" ||
	bad "open replay not refused" "drop_replay=$(st b drop_replay)"
state_is b pay closed && ok "... and not applied (pay closed)" || bad "replayed open applied: $(state b pay)"
old=$((now - 40000))
fleet_pub "$(sign "$KEY" "{\"v\":2,\"host\":\"ops\",\"boot\":$now,\"seq\":50,\"sent_ms\":$old,\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":600000}")"
until_s 3 drop_ge b replay 3 && ok "a message sent 40 s ago (window 30 s) is refused, cause replay" ||
	bad "old message not refused" "drop_replay=$(st b drop_replay)"
state_is b pay closed && ok "... and not applied" || bad "old open applied"
"$BCTL" --shm "${SHM[b]}" inspect >"$TMP/insp"
grep -Eq 'dropped: .*auth [1-9].*replay [1-9]' "$TMP/insp" &&
	ok "bctl shows the auth and replay drops" || bad "bctl inspect" "$(grep dropped "$TMP/insp")"

# 7. the keyless (new) host reads v2 without checking and v1 as before
"$BCTL" --shm "${SHM[u]}" config pay --fleet on >/dev/null
"$BCTL" --shm "${SHM[a]}" trip pay --for 30s >/dev/null
until_s 5 state_is u pay open && ok "a keyless host applies a keyed host's v2 trip" ||
	bad "keyless host: $(state u pay)" "$(tail -3 "$TMP/breakerd.u")"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
