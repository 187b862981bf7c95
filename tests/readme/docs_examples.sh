#!/usr/bin/env bash
# docs_examples.sh SRCDIR BCTL - every fenced block of README.md and
# docs/guide/*.md is an example a test runs, or is marked as not one.
#
# Lists every block (also those indented in a list) and, by its language
# and the HTML comment on the line before its fence:
#   <!-- output -->          sample output, a table, a layout: not run
#   <!-- tested-by: P... --> run by the tests P (paths from SRCDIR), each
#                            of which must name this page's path
#   <!-- not run: WHY -->    an example no test can run here; printed with
#                            its reason
#   ```c       (unmarked)    tests/readme/readme_example.sh builds it
#   ```python  (unmarked)    tests/python/test_readme.py runs it
#   ```ruby    (unmarked)    tests/ruby/test_guide.rb runs it (docs/guide/ruby.md)
#   ```php     (unmarked)    tests/php/unit/GuideTest.php runs it (docs/guide/php.md)
#   ```sh      (unmarked)    only bctl lines (and '.' FILE) allowed; run
#                            here: the whole block under bash -e, with
#                            BCTL first on PATH, a private segment in
#                            $BREAKERD_SHM, stand-ins for curl and for the
#                            scripts the examples call (./call.sh ...),
#                            and tools/ of SRCDIR under the working dir
#   ```ini     (unmarked)    run here: bctl apply --dry-run on a private
#                            segment must accept it (exit 0)
#   ```yaml    scrape_configs: promtool check config (skipped without it)
# Anything else fails: a block no test runs must say why. The c and python
# runners read the same pages (README.md and docs/guide/*.md, globbed),
# which this test checks by their text.
set -u
SRC=${1:?usage: docs_examples.sh SRCDIR BCTL}
BCTL=${2:?usage: docs_examples.sh SRCDIR BCTL}
case $BCTL in /*) ;; *) BCTL=$PWD/$BCTL ;; esac
TMP=$(mktemp -d /tmp/brk-docs.XXXXXX)
SHM_PREFIX=/brk-docs-$$
cleanup() {
	rm -rf "$TMP"
	rm -f /dev/shm"$SHM_PREFIX"-*
}
trap cleanup EXIT
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/    /'; }

cd "$SRC" || exit 1
pages=(README.md docs/guide/*.md)
[ -e docs/guide/c.md ] || { echo "FAIL - no docs/guide/*.md under $SRC"; exit 1; }

# The runners of the unmarked c and python blocks read the same pages.
grep -q 'docs/guide' tests/readme/readme_example.sh &&
	grep -q 'README.md' tests/readme/readme_example.sh &&
	ok "tests/readme/readme_example.sh reads README.md and docs/guide/*.md" ||
	bad "tests/readme/readme_example.sh does not read README.md and docs/guide/*.md"
grep -q '"docs", "guide"' tests/python/test_readme.py &&
	grep -q 'README.md' tests/python/test_readme.py &&
	ok "tests/python/test_readme.py reads README.md and docs/guide/*.md" ||
	bad "tests/python/test_readme.py does not read README.md and docs/guide/*.md"
grep -q 'docs/guide/ruby.md' tests/ruby/test_guide.rb &&
	ok "tests/ruby/test_guide.rb reads docs/guide/ruby.md" ||
	bad "tests/ruby/test_guide.rb does not read docs/guide/ruby.md"
grep -q 'docs/guide/php.md' tests/php/unit/GuideTest.php &&
	ok "tests/php/unit/GuideTest.php reads docs/guide/php.md" ||
	bad "tests/php/unit/GuideTest.php does not read docs/guide/php.md"

# The manifest: one line per block, FILE LINE LANG MARKER; its body in
# $TMP/N.body, de-indented by the fence's indent.
awk -v dir="$TMP" '
FNR == 1 { prev = "" }
{
	line = $0
	if (!open && match(line, /^ *```[A-Za-z0-9_+-]* *$/)) {
		n++; open = 1; start = FNR
		indent = line; sub(/```.*/, "", indent)
		lang = line; sub(/^ *```/, "", lang); sub(/ *$/, "", lang)
		marker = prev
		sub(/^ */, "", marker)
		if (marker !~ /^<!-- .* -->$/) marker = ""
		body = dir "/" n ".body"
		printf "" > body
		next
	}
	if (open && match(line, /^ *``` *$/)) {
		open = 0; close(body); prev = "```"
		printf "%d\t%s\t%d\t%s\t%s\n", n, FILENAME, start, (lang == "" ? "-" : lang), marker
		next
	}
	if (open) {
		if (substr(line, 1, length(indent)) == indent) line = substr(line, length(indent) + 1)
		print line >> body
		next
	}
	if (line !~ /^ *$/) prev = line
}
END { if (open) printf "0\t%s\t%d\tUNCLOSED\t\n", FILENAME, start }
' "${pages[@]}" >"$TMP/manifest"

# The stand-ins the sh blocks call.
W=$TMP/work
mkdir -p "$W/bin"
ln -s "$SRC/tools" "$W/tools"
printf '#!/bin/sh\nprintf "HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\nok\\n"\n' >"$W/bin/curl"
cp "$W/bin/curl" "$W/call.sh"
cp "$W/bin/curl" "$W/call-search.sh"
chmod +x "$W/bin/curl" "$W/call.sh" "$W/call-search.sh"

run_sh() { # N WHERE
	local shm=$SHM_PREFIX-$1 out rc cmds
	# Only bctl lines (and '.' of a file) run here, never a line that
	# could change the host: such a block needs a marker.
	cmds=$(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' "$TMP/$1.body" |
		sed -e 's/^[[:space:]]*//' -e '/^#/d' -e '/^$/d' | grep -Ev '^(bctl|\.) ')
	if [ -n "$cmds" ]; then
		bad "$2: sh block has commands other than bctl; mark it (tested-by or not run)" "$cmds"
		return
	fi
	out=$(cd "$W" && BREAKERD_SHM=$shm PATH="$W/bin:$(dirname "$BCTL"):$PATH" \
		timeout 60 bash -e "$TMP/$1.body" 2>&1)
	rc=$?
	rm -f "/dev/shm$shm"
	[ $rc -eq 0 ] && ok "$2: sh block runs (bash -e, private segment)" ||
		bad "$2: sh block exits $rc" "$out"
}

run_ini() { # N WHERE
	local shm=$SHM_PREFIX-$1 out rc
	cp "$TMP/$1.body" "$TMP/$1.ini"
	out=$("$BCTL" --shm "$shm" apply --dry-run "$TMP/$1.ini" 2>&1)
	rc=$?
	rm -f "/dev/shm$shm"
	if [ $rc -eq 0 ] && ! grep -q 'error' <<<"$out"; then
		ok "$2: ini block accepted by bctl apply --dry-run"
	else
		bad "$2: bctl apply --dry-run exits $rc" "$out"
	fi
}

run_yaml() { # N WHERE
	if ! grep -q '^scrape_configs:' "$TMP/$1.body"; then
		bad "$2: yaml block is not a Prometheus config and has no marker"
		return
	fi
	if ! command -v promtool >/dev/null 2>&1; then
		skipped=$((skipped + 1)); echo "skip - $2: promtool not installed"
		return
	fi
	cp "$TMP/$1.body" "$TMP/$1.yml"
	local out
	out=$(promtool check config "$TMP/$1.yml" 2>&1) &&
		ok "$2: yaml block passes promtool check config" ||
		bad "$2: promtool check config" "$out"
}

tested_by() { # WHERE FILE PATHS...
	local where=$1 file=$2 p n=0
	shift 2
	for p in "$@"; do
		n=$((n + 1))
		if [ ! -f "$p" ]; then
			bad "$where: tested-by $p: no such file"
		elif ! grep -qF -- "$file" "$p"; then
			bad "$where: tested-by $p, which does not read $file"
		else
			ok "$where: run by $p"
		fi
	done
	[ $n -gt 0 ] || bad "$where: tested-by names no test"
}

notrun=()
nout=0
while IFS=$'\t' read -r n file line lang marker; do
	where="$file:$line"
	[ "$lang" = UNCLOSED ] && { bad "$where: fence never closed"; continue; }
	case $marker in
	'<!-- output -->')
		nout=$((nout + 1)); continue ;;
	'<!-- not run: '*' -->')
		why=${marker#<!-- not run: }; why=${why% -->}
		[ -n "$why" ] || { bad "$where: 'not run' without a reason"; continue; }
		notrun+=("$where ($lang): $why"); continue ;;
	'<!-- tested-by: '*' -->')
		paths=${marker#<!-- tested-by: }; paths=${paths% -->}
		# shellcheck disable=SC2086
		tested_by "$where" "$file" $paths; continue ;;
	'')
		;;
	*)
		bad "$where: unknown marker '$marker'"; continue ;;
	esac
	case $lang in
	c) ok "$where: c block, built by tests/readme/readme_example.sh" ;;
	python) ok "$where: python block, run by tests/python/test_readme.py" ;;
	ruby) ok "$where: ruby block, run by tests/ruby/test_guide.rb" ;;
	php) ok "$where: php block, run by tests/php/unit/GuideTest.php" ;;
	sh) run_sh "$n" "$where" ;;
	ini) run_ini "$n" "$where" ;;
	yaml) run_yaml "$n" "$where" ;;
	*) bad "$where: a \`\`\`$([ "$lang" = - ] || echo "$lang") block that no test runs and no marker explains (add <!-- output -->, <!-- tested-by: TEST --> or <!-- not run: WHY -->)" ;;
	esac
done <"$TMP/manifest"

total=$(wc -l <"$TMP/manifest")
echo "# $total blocks in ${#pages[@]} pages: $nout marked output, ${#notrun[@]} not run:"
for x in "${notrun[@]}"; do echo "#   $x"; done
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
