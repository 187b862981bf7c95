#!/usr/bin/env bash
# bctl_health.sh BCTL PYTHON3 [BREAKERD] - bctl health and bctl fallback: each state
# as the operator sees it, --json that parses, and their bad input (exit
# status AND the one line on stderr; a rejected command changes nothing).
#
# Uses its own segment /brkhl-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_health.sh PATH_TO_BCTL PYTHON3}
PY=${2:-/usr/bin/python3}
BREAKERD=${3:-} # optional: the arena-full check
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkhl

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, bctl_run, check_both

# json_field KEY: the value of KEY in the --json output (parsed by python)
json_field() {
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" <"$TMP/out"
}

# ---- bad input ---------------------------------------------------------
run health nope
check_both "health on an absent segment: exit 1" 1 "" "no such segment"
run config shop; run config shop/cart; run config shop:pay
run bucket shop/rl --rate 5 --burst 2
run health
check_both "health without NAME: usage error" 2 "" "health: missing breaker NAME"
run health "a//b"
check_both "health with a bad name: usage error naming it" 2 "" "invalid breaker name 'a//b'"
run health shop extra
check_both "health with two names: usage error naming the extra" 2 "" "unexpected argument 'extra'"
run health shop --bogus
check_both "health with an unknown option: usage error naming it" 2 "" "unknown option '--bogus'"
run health nothing
check_both "health on an unknown name: exit 1" 1 "" "^bctl: nothing: no such breaker, bucket or budget$"
run health sho
check_both "a prefix is no subtree: exit 1" 1 "" "^bctl: sho: no such breaker, bucket or budget$"
run fallback
check_both "fallback without NAME: usage error" 2 "" "fallback: missing breaker NAME"
run fallback shop
check_both "fallback without on|off: usage error" 2 "" "missing 'on' or 'off' after shop"
run fallback shop maybe
check_both "fallback maybe: usage error naming it" 2 "" "'maybe' is not 'on' or 'off'"
run fallback shop on now
check_both "fallback with an extra argument: usage error naming it" 2 "" "unexpected argument 'now'"
run fallback "bad name" on
check_both "fallback with a bad name: usage error" 2 "" "invalid breaker name 'bad name'"
run fallback nothing on
check_both "fallback on an unknown name: exit 1" 1 "" "^bctl: nothing: no such breaker, bucket or budget$"
run fallback shop/rl on
check_both "fallback on a bucket: exit 1, names the kind" 1 "" "^bctl: shop/rl: is a bucket, not a breaker"
run config grp/a
run fallback grp on
check_both "fallback on a name with no breaker of its own: exit 1, says why" 1 "" \
	"no breaker named 'grp': the fallback flag lives on NAME's own breaker"
run health shop --json
[ "$(json_field state)" = live ] && ok "no rejected command changed anything" ||
	bad "no rejected command changed anything" "$(cat "$TMP/out")"

# ---- states --------------------------------------------------------------
run health shop
check_both "live: text" 0 "^shop: live$" ""
grep -q "^  children: 3 (0 unavailable)$" "$TMP/out" && ok "children counted" ||
	bad "children counted" "$(cat "$TMP/out")"
run health shop --json
check_both "live: --json" 0 '"state": "live"' ""
"$PY" -c 'import json,sys; d=json.load(sys.stdin); assert d["code"]=="GO" and d["by"]=="shop" and d["children"]==3 and isinstance(d["since_age_ms"], int)' <"$TMP/out" &&
	ok "--json parses with python3: code, by, children, since" ||
	bad "--json parses with python3" "$(cat "$TMP/out")"
run trip shop:pay --for 1m
run health shop --json
[ "$(json_field state)" = partial ] && [ "$(json_field by)" = shop:pay ] &&
	[ "$(json_field children_unavailable)" = 1 ] &&
	ok "a child open: partial by shop:pay" || bad "a child open: partial" "$(cat "$TMP/out")"
run health shop/cart --json
[ "$(json_field state)" = live ] && ok "the sibling is live" ||
	bad "the sibling is live" "$(cat "$TMP/out")"
run trip shop --for 1m
run health shop
check_both "NAME open: unavailable (beats the child's partial)" 0 "^shop: unavailable$" ""
run health shop/cart --json
[ "$(json_field state)" = unavailable ] && [ "$(json_field code)" = BREAKER_OPEN ] &&
	[ "$(json_field by)" = shop ] && ok "an ancestor open: unavailable by shop" ||
	bad "an ancestor open: unavailable" "$(cat "$TMP/out")"
run fallback shop on
check_both "fallback on: names NAME in the way back" 0 "^shop: fallback on: health is 'fallback' until 'bctl fallback shop off'$" ""
run fallback shop on
check_both "fallback on again: a note, exit 0" 0 "" "fallback already on, unchanged"
run health shop --json
[ "$(json_field state)" = fallback ] && [ "$(json_field code)" = FALLBACK ] &&
	ok "fallback wins over unavailable" || bad "fallback wins" "$(cat "$TMP/out")"
run fallback shop off
check_both "fallback off" 0 "^shop: fallback off" ""
run health shop
check_both "back to unavailable" 0 "^shop: unavailable$" ""
grep -q "^  by: shop$" "$TMP/out" && ok "by shop" || bad "by shop" "$(cat "$TMP/out")"
run health grp
check_both "a name with only children: computed, not recorded" 0 \
	"since: not recorded \\(no breaker named grp\\)" ""
run events
check_both "the transitions are events with health words" 0 \
	"shop +partial -> unavailable +health .*code BREAKER_OPEN" ""
grep -Eq "shop +unavailable -> fallback +health" "$TMP/out" &&
	grep -Eq "shop +fallback -> unavailable +health" "$TMP/out" &&
	ok "fallback on and off: one event each" || bad "fallback events" "$(cat "$TMP/out")"
[ "$(grep -c ' health ' "$TMP/out")" -eq 5 ] && ok "five health events in all" ||
	bad "five health events in all" "$(grep ' health ' "$TMP/out")"
run --help
check_both "help lists health and fallback" 0 "fallback NAME on\\|off" ""

# A breaker whose health word finds no room (the arena full): computed,
# not recorded, and not "no breaker named" it. breakerd creates a 1 MiB
# arena; 3 KiB breakers, then plain ones and buckets, fill it.
if [ -n "$BREAKERD" ]; then
	SHM2=/brkhlf-$$
	timeout -s INT 0.5 "$BREAKERD" --shm "$SHM2" --arena-mb 1 --capacity 4096 2>/dev/null
	"$BCTL" --shm "$SHM2" config target >/dev/null
	i=0
	while [ $i -lt 2000 ] && "$BCTL" --shm "$SHM2" config "f$i" --max-concurrent 64 \
		--failure-rate 50 --half-open-probes 8 >/dev/null 2>&1; do i=$((i + 1)); done
	i=0
	while [ $i -lt 200 ] && "$BCTL" --shm "$SHM2" config "g$i" >/dev/null 2>&1; do i=$((i + 1)); done
	i=0
	while [ $i -lt 200 ] && "$BCTL" --shm "$SHM2" bucket "k$i" --rate 1 --burst 1 >/dev/null 2>&1; do
		i=$((i + 1))
	done
	bctl_run -- --shm "$SHM2" health target
	check_both "arena full: the breaker's health is computed, not recorded, and it is a breaker" 0 \
		"since: not recorded \\(no room for it: the segment's arena is full" ""
	rm -f "/dev/shm$SHM2"
fi

echo "# bctl_health: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
