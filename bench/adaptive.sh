#!/usr/bin/env bash
# bench/adaptive.sh BUILD [adaptive_bench options] - the adaptive-concurrency
# benchmark (issue 25; not in CI): starts Debian's gunicorn on loopback
# (tests/common/gunicorn_harness.sh: 4 sync workers serving
# bench/adaptive/upstream.py, whose handler sleeps 20 ms: 200 r/s, little
# CPU), runs BUILD/bench/adaptive_bench on it (16 client processes, 20 s
# per strategy unless told otherwise, e.g. --seconds 10; the upstream's
# workers halve at half time) and stops gunicorn (also on error or ^C).
# Needs python3-gunicorn and libcurl (the bench is built with it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: bench/adaptive.sh BUILD [--seconds S] [--clients N] [--only LIST] ...}
shift
exe="$build/bench/adaptive_bench"
[ -x "$exe" ] || { echo "adaptive.sh: $exe not built (libcurl missing? ninja -C $build bench/adaptive_bench)" >&2; exit 1; }
. "$here/../tests/common/gunicorn_harness.sh"
gunicorn_have || { echo "adaptive.sh: gunicorn not installed (apt-get install -y python3-gunicorn)" >&2; exit 1; }
WORKERS=${WORKERS:-4}
SERVICE_MS=${SERVICE_MS:-20}
gunicorn_start "$WORKERS" "$SERVICE_MS" || exit 1
"$exe" --url "$GUNICORN_URL" --upstream-pid "$GUNICORN_PID" \
	--workers "$WORKERS" --service-ms "$SERVICE_MS" "$@"
rc=$?
gunicorn_stop
exit $rc
