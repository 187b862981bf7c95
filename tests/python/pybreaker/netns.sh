#!/usr/bin/env bash
# tests/python/pybreaker/netns.sh VENV_PYTHON DIR [PYTEST_ARG...] - run inside `unshare -n`
# (a private network namespace, so 127.0.0.1:6379 is ours whatever the host
# runs): bring loopback up, start a private redis-server on 6379 (no
# persistence, its files in a temp dir), run pybreaker's suite in DIR,
# stop the server by its PID. Exit: pytest's status.
set -u
vpy=$1 dir=$2
shift 2 # the rest: extra pytest arguments (run.sh's per-test timeout)
# In the ASan stage LD_PRELOAD carries the sanitizer runtime for Python
# (tests/python/run.sh): keep it for the Python commands only; ip and
# redis-server are not ours to leak-check (ip's exit leak failed the run).
pre=${LD_PRELOAD:-}
unset LD_PRELOAD
py() { if [ -n "$pre" ]; then LD_PRELOAD=$pre "$vpy" "$@"; else "$vpy" "$@"; fi; }
ip link set lo up || { echo "netns.sh: ip link set lo up failed"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/brk-pyb-redis.XXXXXX")
redis-server --port 6379 --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$tmp" --logfile "$tmp/redis.log" --daemonize no &
rpid=$!
for _ in $(seq 100); do
	py -c 'import redis; redis.Redis().ping()' 2>/dev/null && break
	sleep 0.05
done
py -m pytest -p no:cacheprovider -q -rfEs --import-mode=importlib \
	--rootdir "$dir" --confcutdir "$dir" "$@" "$dir/pybreaker_test.py"
rc=$?
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
rm -rf "$tmp"
exit $rc
