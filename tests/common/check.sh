# tests/common/check.sh - the verdict helpers of the shell tests (sourced).
#   ok DESC             count a pass and print "ok   - DESC"
#   bad DESC [LINE...]  count a failure, print "FAIL - DESC" and each LINE
#   until_s S CMD...    run CMD every 50 ms until it succeeds, for at most S
#                       seconds; returns 1 if it never did
#   scratch NAME        TMP = a new /tmp/NAME.XXXXXX, SHM = /NAME-$$ (not
#                       created); at EXIT scratch_cleanup runs
#   scratch_cleanup     kill and wait for the script's background jobs,
#                       remove the segments /NAME-$$ and /NAME-$$-*, and $TMP
#                       (a script with more to undo traps its own cleanup,
#                       which calls this)
# The counts are $pass and $fail (initialised here if the script has not).
pass=${pass:-0}
fail=${fail:-0}

ok() {
	pass=$((pass + 1))
	echo "ok   - $1"
}

bad() {
	local desc=$1 line
	shift
	fail=$((fail + 1))
	echo "FAIL - $desc"
	for line in "$@"; do
		echo "       $line"
	done
}

until_s() {
	local s=$1 i
	shift
	for ((i = 0; i < s * 20; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

scratch() {
	TMP=$(mktemp -d "/tmp/$1.XXXXXX")
	SHM=/$1-$$
	trap scratch_cleanup EXIT
}

scratch_cleanup() {
	local jobs
	jobs=$(jobs -p)
	if [ -n "$jobs" ]; then
		# shellcheck disable=SC2086 # one word a pid
		kill $jobs 2>/dev/null
		wait 2>/dev/null
	fi
	rm -f "/dev/shm$SHM" "/dev/shm$SHM"-*
	rm -rf "$TMP"
}
