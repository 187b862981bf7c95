# tests/common/check.sh - the verdict helpers of the shell tests (sourced).
#   ok DESC             count a pass and print "ok   - DESC"
#   bad DESC [LINE...]  count a failure, print "FAIL - DESC" and each LINE
#   until_s S CMD...    run CMD every 50 ms until it succeeds, for at most S
#                       seconds; returns 1 if it never did
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
