#!/bin/sh
# check_demo.sh - run breakerd-demo --json and check that its figures show
# the point: with the shared breaker the upstream got at least 5x fewer
# requests while it was down, and the breaker opened and closed again.
#
# usage: check_demo.sh PATH/TO/breakerd-demo [demo options...]
set -eu

demo=${1:?usage: check_demo.sh PATH/TO/breakerd-demo [options]}
shift
out=$(mktemp "${TMPDIR:-/tmp}/breakerd-demo.XXXXXX")
trap 'rm -f "$out"' EXIT

"$demo" --json "$@" >"$out"

python3 - "$out" <<'PY'
import json
import sys

with open(sys.argv[1]) as f:
    d = json.load(f)
a, b = d["without"], d["with"]
fails = []

def need(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)

need(a["upstream_down"] > 0, "without breakerd the upstream was hit while down (%d)"
     % a["upstream_down"])
need(a["upstream_down"] >= 5 * max(b["upstream_down"], 1),
     "hits while down: %d without, %d with: at least 5x fewer"
     % (a["upstream_down"], b["upstream_down"]))
need(b["opened"] >= 1, "the breaker opened (%d times)" % b["opened"])
need(b["closed"] >= 1, "the breaker closed again (%d times)" % b["closed"])
need(b["transitions"] and b["transitions"][-1]["to"] == "closed",
     "the breaker ended closed")
need(b["refused"] > 0, "the breaker refused calls (%d)" % b["refused"])
need(a["refused"] == 0, "nothing refused without the breaker")
for name, r in (("without", a), ("with", b)):
    need(r["first_success_after_recovery_ms"] is not None,
         "%s: a worker succeeded after recovery (%s ms)"
         % (name, r["first_success_after_recovery_ms"]))
    need(r["bad_workers"] == 0 and r["workers_finished"] == d["workers"],
         "%s: all %d workers finished" % (name, d["workers"]))
sys.exit(1 if fails else 0)
PY
