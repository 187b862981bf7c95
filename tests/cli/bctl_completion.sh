#!/usr/bin/env bash
# bctl_completion.sh BCTL COMPLETION_FILE - the bash completion of bctl,
# driven as bash drives it: bash-completion's library sourced, then
# COMP_WORDS / COMP_CWORD / COMP_LINE / COMP_POINT set and the completion
# function called, and COMPREPLY checked: the first word (every command of
# `bctl help`, and nothing else), a command's options, option values, a
# record name prefix read from a real segment (--shm before or after the
# command, $BREAKERD_SHM in the environment; the kind a command takes),
# files for apply, on|off of fallback, segment's subcommands, the command
# after exec's "--".
#
# Uses its own segment /brkcomp-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_completion.sh PATH_TO_BCTL COMPLETION_FILE}
COMPLETION=${2:?usage: bctl_completion.sh PATH_TO_BCTL COMPLETION_FILE}
LIB=/usr/share/bash-completion/bash_completion
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkcomp

if [[ ! -r $LIB ]]; then
	echo "SKIP: $LIB not found (Debian: bash-completion)"
	exit 77
fi
. "$LIB"
. "$COMPLETION"
unset BREAKERD_SHM
# Outside a completion bash refuses compopt: record what it was asked.
compopt() { echo "$*" >>"$TMP/compopt"; }

# comp WORD...: complete the last WORD (may be "") of the line
# "bctl WORD...", as bash would call the function; COMPREPLY, sorted, is in
# $got (one line). $line, if set, is the line (for words bash splits
# at COMP_WORDBREAKS, such as ':').
comp() {
	COMP_WORDS=("$BCTL" "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=${line:-"${COMP_WORDS[*]}"}
	COMP_POINT=${#COMP_LINE}
	COMP_TYPE=9
	COMP_KEY=9
	COMPREPLY=()
	: >"$TMP/compopt"
	_bctl "$BCTL" "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}" 2>"$TMP/comp.err"
	# sort -u: compgen -c lists a command once per PATH directory
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ')
	got=${got% }
}

# completes DESC WANT WORD...: COMPREPLY of WORD... is WANT (sorted words).
completes() {
	local desc=$1 want
	want=$(printf '%s\n' $2 | sort | tr '\n' ' ')
	want=${want% }
	shift 2
	comp "$@"
	if [[ $got == "$want" && ! -s $TMP/comp.err ]]; then
		ok "$desc"
	else
		bad "$desc" "line: bctl $*" "want: '$want'" "got:  '$got'" \
			"$(cat "$TMP/comp.err")"
	fi
}

# The commands `bctl help` lists: "  NAME ..." lines of its Commands part.
help_cmds=$("$BCTL" help | sed -n '/^Commands:/,/^$/p' |
	sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p' | sort -u | tr '\n' ' ')
help_cmds=${help_cmds% }
[[ $help_cmds == *list* && $help_cmds == *segment* && $help_cmds == *help* ]] ||
	bad "bctl help lists commands" "$help_cmds"

completes "first word: every command of bctl help, nothing else" "$help_cmds" ""
completes "first word prefix" "inspect" in
completes "first word after a global option" "metrics metrics-only" --shm "$SHM" me
completes "global options before the command" "--shm= --help --verbose --version" --
completes "config NAME --fa: config's settings" \
	"--failure-rate= --failure-threshold=" config api/users --fa
completes "trip --f: --for" "--for=" trip api --f
if grep -qx -- "-o nospace" "$TMP/compopt"; then
	ok "an option that takes a value: no space after its '='"
else
	bad "--for=: compopt -o nospace" "$(cat "$TMP/compopt")"
fi
completes "metrics --not-c: a value-less option" "--not-closed" metrics --not-c
comp list --json
[[ ! -s $TMP/compopt ]] && ok "--json: a space after it" || bad "--json: nospace"
completes "reset offers no --for (it refuses it)" "" reset api --f
completes "list --kind VALUE: the kinds" "breaker bucket budget pace" list --kind ""
completes "list --state=h (split at =)" "half_open" list --state=h
completes "metrics --state VALUE" "closed half_open open" metrics --state ""
completes "a value-less option is not a value slot" "" list --json ""
completes "an option with a free value offers nothing" "" config api --open ""
completes "segment SUB" "create info remove" segment ""
completes "segment create --c" "--capacity=" segment create --c
completes "segment remove options" "--force" segment remove --fo
completes "fallback NAME o: on|off" "off on" fallback api/users o
completes "fallback NAME on (nothing after)" "" fallback api/users on ""
completes "exec NAME -- CMD: a command" "truncate" exec api -- truncat
completes "exec --priority VALUE" "high normal" exec api --priority ""
completes "exec --pri (an option)" "--priority=" exec api --pri
completes "no segment: no names, no error shown" "" --shm "$SHM" inspect a

# A real segment.
mk() { "$BCTL" --shm "$SHM" "$@" >/dev/null 2>&1 || bad "setup: bctl $*"; }
mk config api/users
mk config api/orders
mk config db
mk bucket api/out --rate 5 --burst 2
mk pace api/slow --ceiling 10
mk budget api/retry
completes "record names by prefix (--shm)" \
	"api/orders api/out api/retry api/slow api/users" --shm "$SHM" inspect api/
completes "record names (--shm=VALUE after the command)" \
	"api/users" inspect --shm="$SHM" api/u
BREAKERD_SHM=$SHM completes "record names: BREAKERD_SHM in the environment" \
	"db" health d
completes "config NAME: breakers only" "api/orders api/users db" --shm "$SHM" config ""
completes "take NAME: buckets (paces are buckets)" "api/out api/slow" --shm "$SHM" take ""
completes "pace NAME: buckets" "api/out api/slow" --shm "$SHM" pace api/
completes "budget NAME: budgets" "api/retry" --shm "$SHM" budget ""
completes "take NAME N: nothing for N" "" --shm "$SHM" take api/out ""
completes "exec --pace VALUE: buckets" "api/out api/slow" --shm "$SHM" exec --pace ""
completes "exec --retry-budget VALUE" "api/retry" --shm "$SHM" exec api/users --retry-budget a
completes "retire NAME...: names again" "api/orders api/out" --shm "$SHM" retire api/out api/o
completes "inspect NAME then nothing" "" --shm "$SHM" inspect db ""
completes "fallback NAME: breakers" "db" --shm "$SHM" fallback d
# "--" before the command ends bctl's own options (getopt_long): the next
# word is the command, as bctl runs it ("bctl -- inspect db" works).
completes "after a leading --, the command's operands" "db" --shm "$SHM" -- inspect d
completes "after a leading --, the command" "inspect" --shm "$SHM" -- insp
completes "after a leading --, exec NAME -- CMD" "truncate" -- exec api -- truncat
# bash splits "api:v1/" at ':' into api : v1/; bash-completion rejoins it,
# and the replies are what follows the last ':' (what bash inserts).
mk config api:v1/users
mk config api:v1/orders
line="$BCTL --shm $SHM inspect api:v1/" completes "names with ':'" \
	"v1/orders v1/users" --shm "$SHM" inspect api : v1/

# apply FILE: files and directories.
F=$TMP/files
mkdir -p "$F/conf.d"
: >"$F/breakers.ini"
: >"$F/other.txt"
completes "apply FILE" "$F/breakers.ini" apply "$F/br"
completes "apply FILE: a directory" "$F/conf.d" apply "$F/co"
completes "apply --dry-run FILE" "$F/breakers.ini" apply --dry-run "$F/b"
completes "apply FILE: every file" "$F/breakers.ini $F/conf.d $F/other.txt" apply "$F/"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
