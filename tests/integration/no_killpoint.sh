#!/bin/sh
# no_killpoint.sh NM SHIPPED_LIB HOOKS_LIB - the shipped libbreaker
# defines and calls no kill point (lib/src/killpoint.h); the test-only
# libbreaker_hooks does (so this check would see one if it were shipped).
nm=$1 shipped=$2 hooks=$3
if "$nm" "$shipped" | grep -i killpoint; then
	echo "FAIL: the shipped library $shipped has kill point symbols (above)"
	exit 1
fi
echo "ok: no killpoint symbol in $shipped"
if ! "$nm" "$hooks" | grep -q ' T brk__killpoint$'; then
	echo "FAIL: $hooks does not define brk__killpoint: the check above proves nothing"
	exit 1
fi
echo "ok: $hooks defines brk__killpoint"
