#!/usr/bin/env bash
# tests/layout/layers.sh: the folder layers of the source tree hold.
#
#   layers.sh [--graph] [SOURCE_ROOT]
#
# The folders, bottom up (a folder may include from its own layer's
# folder and from the layers below it, never from one above):
#
#   1  lib/                    libbreaker
#   2  cli/                    the code shared by bctl and breakerd
#   3  tools/  daemon/         bctl; breakerd (these two never include
#                              each other)
#   4  bindings/ python/ bench/ demo/
#
# Every `#include "..."` of a C source (*.c, *.h) in those folders
# (tests/ is not read) is resolved to a file: first beside the including
# file, then in the include folders of the build (lib/include, lib/src,
# cli, tools, daemon, daemon/fleet, ...). A name found in none of them is
# a generated header of the build (breakerd_version.h) or a system one
# and is passed over; a name found in two of them is ambiguous and fails.
# The test fails, naming the include, where a folder includes from a
# folder above it or beside it (tools <-> daemon), and where two C
# sources (*.c) anywhere outside tests/ share a file name.
#
# --graph prints the include graph by folder instead of checking it:
# one line an edge, "from -> to: N includes" (a folder's includes of its
# own files too).
#
# LAYERS_EXCLUDE="python" (folders, space-separated) leaves folders out
# of both checks, e.g. to see the rest pass while a rename elsewhere is
# pending.
set -u
graph=0
if [ "${1:-}" = "--graph" ]; then graph=1; shift; fi
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || { echo "layers: cannot enter $root" >&2; exit 2; }

exclude=" ${LAYERS_EXCLUDE:-} "

# The files of the tree: git's list (tracked, and untracked that are not
# ignored) in a checkout; every file but .git and build folders otherwise.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
  list=$(git ls-files --cached --others --exclude-standard)
else
  list=$(find . \( -name .git -o -name 'build*' -o -name meson-private \) -prune \
           -o -type f -print | sed 's|^\./||')
fi
# git ls-files still lists a file deleted in the work tree: keep what is there.
declare -A have=()
files=()
while IFS= read -r f; do
  [ -n "$f" ] && [ -f "$f" ] || continue
  have[$f]=1
  files+=("$f")
done <<<"$list"

# folder: the layer unit a file belongs to ("" = not a layered folder)
folder_of() {
  case $1 in
    lib/*) echo lib ;;
    cli/*) echo cli ;;
    tools/*) echo tools ;;
    daemon/*) echo daemon ;;
    bindings/*/*) local r=${1#bindings/}; echo "bindings/${r%%/*}" ;;
    python/*) echo python ;;
    bench/*) echo bench ;;
    demo/*) echo demo ;;
    *) echo "" ;;
  esac
}
layer_of() {
  case $1 in
    lib) echo 1 ;;
    cli) echo 2 ;;
    tools|daemon) echo 3 ;;
    bindings/*|python|bench|demo) echo 4 ;;
  esac
}
excluded() {
  local top=${1%%/*}
  [[ $exclude == *" $top "* || $exclude == *" $1 "* ]]
}

# The include folders of the build, in the order the resolution tries them.
search=(lib/include lib/src cli tools daemon daemon/fleet bench demo)
for f in "${files[@]}"; do
  case $f in bindings/*/src/*.[ch]|python/src/*.[ch]) d=${f%/*}
    [[ " ${search[*]} " == *" $d "* ]] || search+=("$d") ;;
  esac
done

fail=0
declare -A edges=()
for f in "${files[@]}"; do
  case $f in *.c|*.h) ;; *) continue ;; esac
  from=$(folder_of "$f")
  [ -n "$from" ] || continue
  excluded "$from" && continue
  dir=${f%/*}
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
    name=${BASH_REMATCH[1]}
    target=""
    if [ -n "${have[$dir/$name]:-}" ]; then
      target=$dir/$name
    else
      found=()
      for s in "${search[@]}"; do
        [ -n "${have[$s/$name]:-}" ] && found+=("$s/$name")
      done
      if [ ${#found[@]} -gt 1 ]; then
        echo "layers: $f:$n: #include \"$name\" is ambiguous: ${found[*]}"
        fail=1
        continue
      fi
      target=${found[0]:-}
    fi
    [ -n "$target" ] || continue   # generated or system header
    target=$(realpath -m --relative-to=. "$target")
    to=$(folder_of "$target")
    [ -n "$to" ] || continue
    edges["$from -> $to"]=$(( ${edges["$from -> $to"]:-0} + 1 ))
    [ $graph = 1 ] && continue
    [ "$from" = "$to" ] && continue
    lf=$(layer_of "$from"); lt=$(layer_of "$to")
    if [ "$lt" -gt "$lf" ]; then
      echo "layers: $f:$n: #include \"$name\" ($target): $from/ includes from $to/, a folder above it"
      fail=1
    elif [ "$lt" -eq "$lf" ]; then
      echo "layers: $f:$n: #include \"$name\" ($target): $from/ includes from $to/, a folder beside it"
      fail=1
    fi
  done <"$f"
done

if [ $graph = 1 ]; then
  for e in "${!edges[@]}"; do
    echo "$e: ${edges[$e]} includes"
  done | sort
  exit 0
fi

# No two C sources outside tests/ share a file name.
dups=$(for f in "${files[@]}"; do
         case $f in tests/*) continue ;; *.c) ;; *) continue ;; esac
         excluded "$f" && continue
         printf '%s %s\n' "${f##*/}" "$f"
       done | sort | awk '{ n[$1]++; p[$1] = p[$1] " " $2 }
                          END { for (b in n) if (n[b] > 1) print b ":" p[b] }' | sort)
if [ -n "$dups" ]; then
  while IFS= read -r d; do
    echo "layers: C sources share the file name ${d%%:*}:${d#*:}"
  done <<<"$dups"
  fail=1
fi

if [ $fail = 0 ]; then
  echo "layers: ok (${#files[@]} files; folders lib -> cli -> tools, daemon -> bindings, bench, demo)"
fi
exit $fail
