# tests/common/check.sh - the verdict helpers of the shell tests (sourced).
#   ok DESC             count a pass and print "ok   - DESC"
#   bad DESC [LINE...]  count a failure, print "FAIL - DESC" and each LINE
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
