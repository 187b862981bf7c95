#!/usr/bin/env bash
# bench/pace.sh BUILD [pace options] - the pacing benchmark (issue 11):
# starts a loopback nginx (tests/common/nginx_harness.sh: limit_req 5 r/s,
# burst 5 nodelay, 429 + Retry-After: 1; one zone per strategy), runs
# BUILD/bench/pace on it (8 worker processes, 10 s per strategy unless
# told otherwise, e.g. --seconds 20; --only 4,5 runs pacing (shared) and
# pacing (fair) alone) and stops nginx. Needs nginx-light.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: bench/pace.sh BUILD [--seconds S] [--workers N] [--ceiling R]}
shift
exe="$build/bench/pace"
[ -x "$exe" ] || { echo "pace.sh: $exe not built (ninja -C $build bench/pace)" >&2; exit 1; }
. "$here/../tests/common/nginx_harness.sh"
nginx_have || { echo "pace.sh: nginx not installed (apt-get install -y nginx-light)" >&2; exit 1; }
nginx_start 5 6 || exit 1
nice -n 0 "$exe" --url "$NGINX_URL" --rate 5 --burst "$NGINX_BURST" "$@"
rc=$?
nginx_stop
exit $rc
