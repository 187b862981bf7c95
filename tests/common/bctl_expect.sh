# bctl_expect.sh - the cli tests' bctl helpers: b, run, bctl_run, check,
# check_both, expect, stored.
# Source after tests/common/check.sh (ok, bad), with BCTL, SHM and TMP set.
# shellcheck shell=bash

# bctl_run [PREFIX...] -- ARGS: PREFIX... bctl ARGS (no --shm added; PREFIX
# e.g. setpriv or env), stdout/stderr in $TMP/out, $TMP/err; its exit
# status in $rc and returned.
bctl_run() {
	local pre=()
	while [ "$1" != "--" ]; do
		pre+=("$1")
		shift
	done
	shift
	"${pre[@]}" "$BCTL" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	return $rc
}

# b ARGS: bctl --shm $SHM ARGS, its output and exit status as they are.
b() { "$BCTL" --shm "$SHM" "$@"; }

# run ARGS: bctl --shm $SHM ARGS, as bctl_run.
run() {
	bctl_run -- --shm "$SHM" "$@"
}

# check DESC CODE REGEX: the last run exited CODE and wrote exactly one line
# on stderr matching REGEX (ignoring the --help hint, which must be there
# for usage errors); an empty REGEX means nothing on stderr.
check() {
	local desc=$1 code=$2 re=$3 first lines
	first=$(grep -v "^try 'bctl --help'\$" "$TMP/err" | head -n 1)
	lines=$(grep -vc "^try 'bctl --help'\$" "$TMP/err")
	if [ "$rc" -ne "$code" ]; then
		bad "$desc" "exit status $rc, want $code" "stderr: $(head -c 300 "$TMP/err")"
	elif [ -z "$re" ] && [ -s "$TMP/err" ]; then
		bad "$desc" "unexpected stderr: $(head -c 300 "$TMP/err")"
	elif [ -z "$re" ]; then
		ok "$desc"
	elif ! printf '%s\n' "$first" | grep -Eq -- "$re"; then
		bad "$desc" "stderr line: $first" "does not match: $re"
	elif [ "$lines" -ne 1 ]; then
		bad "$desc" "stderr has $lines lines, want one:" "$(cat "$TMP/err")"
	elif [ "$code" -eq 2 ] && ! grep -q "^try 'bctl --help'\$" "$TMP/err"; then
		bad "$desc" "usage error without the --help hint"
	else
		ok "$desc"
	fi
}

# check_both DESC CODE OUT_REGEX ERR_REGEX: the last run exited CODE, its
# stdout matches OUT_REGEX and a line of its stderr (the --help hint left
# out) matches ERR_REGEX; an empty REGEX means nothing on stderr, anything
# on stdout. A usage error (2) must have the --help hint.
check_both() {
	local desc=$1 code=$2 ore=$3 ere=$4 err
	err=$(grep -v "^try 'bctl --help'\$" "$TMP/err")
	if [ "$rc" -ne "$code" ]; then
		bad "$desc" "exit status $rc, want $code" "out: $(head -c 300 "$TMP/out")" \
			"err: $(head -c 300 "$TMP/err")"
	elif [ -n "$ore" ] && ! grep -Eq -- "$ore" "$TMP/out"; then
		bad "$desc" "stdout: $(head -c 300 "$TMP/out")" "does not match: $ore"
	elif [ -z "$ere" ] && [ -n "$err" ]; then
		bad "$desc" "unexpected stderr: $err"
	elif [ -n "$ere" ] && ! printf '%s\n' "$err" | grep -Eq -- "$ere"; then
		bad "$desc" "stderr: $err" "does not match: $ere"
	elif [ "$code" -eq 2 ] && ! grep -q "^try 'bctl --help'\$" "$TMP/err"; then
		bad "$desc" "usage error without the --help hint"
	else
		ok "$desc"
	fi
}

# expect DESC CODE REGEX ARGS...
expect() {
	local desc=$1 code=$2 re=$3
	shift 3
	run "$@"
	check "$desc" "$code" "$re"
}

# stored DESC NAME REGEX...: `bctl inspect NAME --json` matches every REGEX.
stored() {
	local desc=$1 name=$2 re
	shift 2
	run inspect "$name" --json
	if [ "$rc" -ne 0 ]; then
		bad "$desc" "bctl inspect $name: exit $rc: $(head -c 300 "$TMP/err")"
		return
	fi
	for re in "$@"; do
		if ! grep -Eq -- "$re" "$TMP/out"; then
			bad "$desc" "inspect $name --json does not match: $re" \
				"$(tr -d '\n' <"$TMP/out" | head -c 400)"
			return
		fi
	done
	ok "$desc"
}
