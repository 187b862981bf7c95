/*
 * bctl_help.c - `bctl --help`.
 */
#include <stdio.h>

#include "bctl.h"

static const char bctl_usage[] =
"usage: bctl [--shm NAME] [-v] COMMAND [ARGS...]\n"
"\n"
"Inspect and drive the host-wide circuit breakers of breakerd.\n"
"\n"
"Commands:\n"
"  list [--json]                 every breaker, its state and counters\n"
"  inspect NAME [--json]         one breaker in full, and the daemon heartbeat\n"
"  config NAME [SETTINGS...]     create NAME, or change only the given settings:\n"
"      --failure-threshold N     consecutive failures that open (default 5)\n"
"      --open DUR                first cooling period (60s)\n"
"      --max-open DUR            cap of the doubling cooling period (10m)\n"
"      --half-open-probes N      probes admitted at once, 1-8 (1)\n"
"      --success-threshold N     successful probes that close (1)\n"
"      --probe-timeout DUR       a probe older than this failed (30s)\n"
"      --max-wait DUR            longer Retry-After opens instead (5m)\n"
"      --max-concurrent N        bulkhead: calls in flight, 0-64, 0 = off (0)\n"
"      --failure-rate PCT --window DUR --min-calls N\n"
"                                open at this failure rate (off, 10s, 20)\n"
"      --slow-call DUR --slow-rate PCT\n"
"                                calls slower than DUR count toward a rate (off)\n"
"      --min-distinct-processes N\n"
"                                open only when the window's failures came\n"
"                                from at least N processes, 2-8 (off)\n"
"  reset NAME                    force closed; clear counts, cooling level, leases\n"
"  trip NAME --for DUR           force open for DUR\n"
"  events [--follow] [--json]    transitions and reclaims, oldest first;\n"
"                                --follow waits for more until interrupted\n"
"  exec NAME [--timeout DUR] [--wait DUR] [--healthy-exit CODES]\n"
"            [--ignore-exit CODES] -- CMD [ARG...]\n"
"                                run CMD under the breaker (see below)\n"
"  help                          this text\n"
"\n"
"Options (before or after the command):\n"
"  --shm NAME    the segment, \"/name\" (else $BREAKERD_SHM, else /breakerd)\n"
"  -v, --verbose say more (exec: the reported outcome)\n"
"  -h, --help    this text\n"
"\n"
"DUR is a number with a unit: 250ms, 30s, 5m, 2h (a bare number is an error).\n"
"CODES is a list of exit codes and ranges: 3,7,10-12.\n"
"\n"
"exec: if the breaker refuses, CMD is not run and bctl exits 75 saying why\n"
"and for how long; --wait DUR first sleeps out a Retry-After cooling wait of\n"
"at most DUR. Otherwise CMD runs holding the permit; its output passes\n"
"through unchanged and is scanned for HTTP 429/503/529, Retry-After: N and\n"
"\"try again in N seconds\". A sign of rate limiting or overload is a failure\n"
"(whatever the exit code); --timeout kills CMD's process group (exit 124);\n"
"exit 0 is a success, --healthy-exit codes count as healthy, --ignore-exit\n"
"codes count neither way, anything else is a failure. bctl exits with CMD's\n"
"status (128+N if it died of signal N; 127/126 if it could not be run).\n"
"\n"
"Exit status: 0 ok, 1 segment or system error, 2 usage error, 75 refused.\n";

void bctl_help(void)
{
	fputs(bctl_usage, stdout);
}
