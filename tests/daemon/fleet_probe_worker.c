/*
 * fleet_probe_worker.c SHM NAME VERDICT_FILE SECONDS [PROBE_TIMEOUT_MS] -
 * a worker for fleet_probe.sh: attaches SHM, gets breaker NAME (fleet = 1,
 * fleet_probe = 1, open 1500 ms, probe timeout PROBE_TIMEOUT_MS (default
 * 1000 ms), one probe, one success closes) and calls brk_acquire() every 2 ms for SECONDS.
 * An admission while the breaker is half_open is a probe (this process
 * holds the only probe slot until it releases): it prints
 * "probe <wall_ms> <verdict>" and releases with the verdict read from
 * VERDICT_FILE ("ok" -> success, anything else -> failure). Admissions
 * while closed are released as successes, silently. Prints "ready" once
 * the breaker exists. Exits 0 after SECONDS.
 *
 * fleet_probe_worker SHM events  - one line per event of the segment:
 *   "SEQ NAME REASON VALUE ORIGIN" (ORIGIN "-" for this host's own)
 * fleet_probe_worker SHM status  - "probe_won N probe_lost N" of the link
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "breaker.h"

static int verdict_ok(const char *path)
{
	char buf[16] = "";
	FILE *f = fopen(path, "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return strncmp(buf, "ok", 2) == 0;
}

static unsigned long long wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000ull;
}

static int peek(const char *shm, const char *what)
{
	struct brk_attach_opts o;
	struct brk_fleet_status st;
	struct brk_event ev[64];
	brk_segment *seg;
	uint64_t cursor = 1;
	int n, i, rc;

	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = BRK_ATTACH_READONLY | BRK_ATTACH_NOCREATE;
	rc = brk_attach(&o, &seg);
	if (rc < 0) {
		fprintf(stderr, "fleet_probe_worker: attach: %s\n", brk_strerror(rc));
		return 1;
	}
	if (strcmp(what, "status") == 0) {
		rc = brk_fleet_status(seg, &st);
		if (rc == 0)
			printf("probe_won %llu probe_lost %llu\n",
			       (unsigned long long)st.probe_won,
			       (unsigned long long)st.probe_lost);
	} else {
		while ((n = brk_events_read(seg, &cursor, ev, 64, NULL)) > 0)
			for (i = 0; i < n; i++)
				printf("%llu %s %s %llu %s\n", (unsigned long long)ev[i].seq,
				       ev[i].name, brk_event_reason_name(ev[i].reason),
				       (unsigned long long)ev[i].value,
				       ev[i].origin[0] ? ev[i].origin : "-");
		rc = n < 0 ? n : 0;
	}
	brk_detach(seg);
	if (rc < 0)
		fprintf(stderr, "fleet_probe_worker: %s\n", brk_strerror(rc));
	return rc < 0;
}

int main(int argc, char **argv)
{
	struct timespec tick = { 0, 2000000L };
	struct brk_attach_opts o;
	struct brk_config c;
	struct brk_info in;
	brk_segment *seg;
	brk_breaker *b;
	brk_permit p;
	unsigned long long end;
	int rc, ok;

	if (argc == 3 && (strcmp(argv[2], "events") == 0 || strcmp(argv[2], "status") == 0))
		return peek(argv[1], argv[2]);
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: fleet_probe_worker SHM NAME VERDICT_FILE SECONDS "
			"[PROBE_TIMEOUT_MS]\n");
		return 2;
	}
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	rc = brk_attach(&o, &seg);
	if (rc < 0) {
		fprintf(stderr, "fleet_probe_worker: attach: %s\n", brk_strerror(rc));
		return 1;
	}
	brk_config_init(&c);
	c.failure_threshold = 1;
	c.open_ms = 1500;
	c.max_open_ms = 60000;
	c.half_open_probes = 1;
	c.success_threshold = 1;
	c.probe_timeout_ms = argc == 6 ? strtoull(argv[5], NULL, 10) : 1000;
	c.fleet = 1;
	c.fleet_probe = 1;
	rc = brk_breaker_get(seg, argv[2], &c, &b);
	if (rc < 0) {
		fprintf(stderr, "fleet_probe_worker: get: %s\n", brk_strerror(rc));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	end = wall_ms() + 1000ull * (unsigned long long)atoi(argv[4]);
	while (wall_ms() < end) {
		if (brk_acquire(b, &p, NULL) == 0) {
			if (brk_breaker_info(b, &in) == 0 && in.state == BRK_HALF_OPEN) {
				ok = verdict_ok(argv[3]);
				printf("probe %llu %s\n", wall_ms(), ok ? "ok" : "fail");
				fflush(stdout);
				brk_release(&p, ok ? BRK_SUCCESS : BRK_FAILURE,
					    ok ? BRK_REASON_NONE : BRK_REASON_SERVER_ERROR, 0);
			} else {
				brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
			}
		}
		nanosleep(&tick, NULL);
	}
	brk_detach(seg);
	return 0;
}
