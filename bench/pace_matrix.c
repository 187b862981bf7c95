/*
 * pace_matrix.c - one run of one cell of the issue 21 matrix: N worker
 * processes call a rate-limited nginx (limit_req RATE r/s, burst BURST
 * nodelay; bench/pace_matrix.sh starts it and loops over the cells)
 * through a breaker with NO configuration - the defaults, so its implicit
 * pace (breaker.h "Implicit pace") learns the limit - for SECONDS:
 *
 *   each worker: brk_acquire() (a "paced" refusal: sleep its wait_ms and
 *   ask again; any other refusal: sleep its wait_ms, at least 10 ms), one
 *   GET, brk_http_classify(), brk_release() with the outcome.
 *
 * Prints one line "key=value ..." for the script to aggregate:
 *   sent, ok, limited, wave (the 429s of requests sent before the first
 *   429 came back: the cold-start wave, at most one per worker), after_sent
 *   and after_limited (requests sent after it), goodput (ok as % of
 *   RATE x SECONDS + BURST), limited_pct (after_limited % of after_sent);
 * with --change-at T --to R (the script reloads nginx to R at T s):
 *   judged from T + 5 s to the end: j_ok, j_sent, j_limited, j_goodput
 *   (% of R x the judged seconds), j_limited_pct, and t90 (s from the
 *   change until the learned rate of NAME:pace is >= 0.9 R for a rise,
 *   <= R / 0.9 for a drop; -1: never), sampled every 50 ms.
 *
 *   pace_matrix --url URL --rate R --burst B --workers N --seconds S
 *               [--change-at T --to R2] [--start-epoch-ms MS]
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breaker.h"

#define MAX_WORKERS 64
#define MAX_ANSWERS 200000u

struct answer_rec {
	uint64_t sent_ns, done_ns; /* CLOCK_REALTIME ns */
	int status;
};

struct shared {
	uint64_t n;                /* answers recorded (atomic) */
	struct answer_rec a[MAX_ANSWERS];
};

struct params {
	const char *url;
	double rate, to;
	uint32_t burst, workers, seconds;
	double change_at;          /* s; < 0: none */
	uint64_t start_ns;         /* CLOCK_REALTIME */
	char shm[64];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

struct hdr {
	char retry_after[64];
};

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct hdr *a = arg;
	size_t len = size * n, k = strlen("Retry-After:");

	if (len > k && strncasecmp(buf, "Retry-After:", k) == 0) {
		size_t v = len - k;

		if (v >= sizeof(a->retry_after))
			v = sizeof(a->retry_after) - 1;
		memcpy(a->retry_after, buf + k, v);
		a->retry_after[v] = 0;
		a->retry_after[strcspn(a->retry_after, "\r\n")] = 0;
	}
	return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	(void)buf;
	(void)arg;
	return size * n;
}

static void worker(const struct params *p, struct shared *sh)
{
	uint64_t end = p->start_ns + (uint64_t)p->seconds * 1000000000ull;
	brk_segment *seg = NULL;
	struct brk_attach_opts o;
	brk_breaker *b = NULL;
	CURL *h = curl_easy_init();

	brk_attach_opts_init(&o);
	o.shm_name = p->shm;
	if (!h || brk_attach(&o, &seg) || brk_breaker_get(seg, "api", NULL, &b))
		_exit(1);
	curl_easy_setopt(h, CURLOPT_URL, p->url);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	while (now_ns() < p->start_ns)
		sleep_ns(1000000);
	while (now_ns() < end) {
		struct brk_refusal why;
		struct brk_result res;
		struct hdr a;
		brk_permit pm;
		long status = 0;
		const char *ra;
		uint64_t sent, i;
		int rc;

		memset(&why, 0, sizeof(why));
		rc = brk_acquire(b, &pm, &why);
		if (rc) {
			uint64_t w = why.wait_ms ? why.wait_ms : 1;

			if (why.cause != BRK_CAUSE_PACED && w < 10)
				w = 10;
			sleep_ns(w * 1000000ull);
			continue;
		}
		memset(&a, 0, sizeof(a));
		curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
		sent = now_ns();
		if (curl_easy_perform(h) == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		ra = a.retry_after;
		while (*ra == ' ' || *ra == '\t')
			ra++;
		if (status < 100 || status > 999 ||
		    brk_http_classify((int)status, *ra ? ra : NULL, NULL, 0, 0, &res))
			res = (struct brk_result){ .outcome = BRK_FAILURE,
						   .reason = BRK_REASON_CONNECT };
		(void)brk_release(&pm, res.outcome, res.reason, res.retry_after_ms);
		i = __atomic_fetch_add(&sh->n, 1, __ATOMIC_RELAXED);
		if (i < MAX_ANSWERS)
			sh->a[i] = (struct answer_rec){ sent, now_ns(), (int)status };
	}
	curl_easy_cleanup(h);
	brk_detach(seg);
	_exit(0);
}

static int by_done(const void *x, const void *y)
{
	const struct answer_rec *a = x, *b = y;

	return a->done_ns < b->done_ns ? -1 : a->done_ns > b->done_ns;
}

/* The learned rate of api:pace now (0: none yet). */
static double learned(brk_segment *seg)
{
	struct brk_bucket_info bi;
	brk_bucket *k;

	if (brk_bucket_find(seg, "api:pace", &k) || brk_bucket_info(k, &bi))
		return 0.0;
	return bi.learned_per_s;
}

static int usage(void)
{
	fprintf(stderr, "usage: pace_matrix --url URL --rate R --burst B --workers N "
		"--seconds S [--change-at T --to R2] [--start-epoch-ms MS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "rate", required_argument, NULL, 'r' },
		{ "burst", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 's' },
		{ "change-at", required_argument, NULL, 'c' },
		{ "to", required_argument, NULL, 't' },
		{ "start-epoch-ms", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	struct params p = { NULL, 0, 0, 0, 0, 0, -1.0, 0, "" };
	struct brk_attach_opts o;
	brk_segment *seg = NULL;
	pid_t pids[MAX_WORKERS];
	struct shared *sh;
	uint64_t first429 = UINT64_MAX, end, n, i, t90_ns = UINT64_MAX;
	uint64_t sent = 0, ok = 0, lim = 0, wave = 0, asent = 0, alim = 0;
	uint64_t jok = 0, jsent = 0, jlim = 0, jfrom = UINT64_MAX;
	double start_ms = 0;
	char *e;
	int c, status, failed = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		errno = 0;
		e = NULL;
		switch (c) {
		case 'u': p.url = optarg; break;
		case 'r': p.rate = strtod(optarg, &e); break;
		case 'b': p.burst = (uint32_t)strtoul(optarg, &e, 10); break;
		case 'w': p.workers = (uint32_t)strtoul(optarg, &e, 10); break;
		case 's': p.seconds = (uint32_t)strtoul(optarg, &e, 10); break;
		case 'c': p.change_at = strtod(optarg, &e); break;
		case 't': p.to = strtod(optarg, &e); break;
		case 'e': start_ms = strtod(optarg, &e); break;
		default: return usage();
		}
		if (errno || (e && *e)) {
			fprintf(stderr, "pace_matrix: bad value '%s'\n", optarg);
			return 2;
		}
	}
	if (!p.url || p.rate <= 0 || !p.workers || p.workers > MAX_WORKERS ||
	    !p.seconds || (p.change_at >= 0 && p.to <= 0))
		return usage();
	snprintf(p.shm, sizeof(p.shm), "/brk-bench-matrix-%d", (int)getpid());
	p.start_ns = start_ms > 0 ? (uint64_t)(start_ms * 1e6) : now_ns() + 300000000ull;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	unsetenv("BREAKERD_DISABLED");
	brk_segment_unlink(p.shm);
	brk_attach_opts_init(&o);
	o.shm_name = p.shm;
	if (brk_attach(&o, &seg))
		return 1;
	for (i = 0; i < p.workers; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			worker(&p, sh);
		}
	}
	end = p.start_ns + (uint64_t)p.seconds * 1000000000ull;
	if (p.change_at >= 0) {
		uint64_t at = p.start_ns + (uint64_t)(p.change_at * 1e9);
		int rise = p.to > p.rate;

		jfrom = at + 5000000000ull;
		while (now_ns() < end) {
			uint64_t t = now_ns();
			double r = learned(seg);

			if (t >= at && t90_ns == UINT64_MAX &&
			    (rise ? r >= 0.9 * p.to : (r > 0 && r <= p.to / 0.9)))
				t90_ns = t - at;
			sleep_ns(50000000ull);
		}
	}
	for (i = 0; i < p.workers; i++)
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed = 1;
	n = sh->n < MAX_ANSWERS ? sh->n : MAX_ANSWERS;
	qsort(sh->a, n, sizeof(sh->a[0]), by_done);
	for (i = 0; i < n; i++) {
		const struct answer_rec *a = &sh->a[i];

		if (a->done_ns > end)
			continue;
		if (a->status == 429 && first429 == UINT64_MAX)
			first429 = a->done_ns;
	}
	for (i = 0; i < n; i++) {
		const struct answer_rec *a = &sh->a[i];

		if (a->done_ns > end)
			continue;
		sent++;
		ok += a->status == 200;
		lim += a->status == 429;
		if (a->sent_ns < first429)
			wave += a->status == 429;
		else {
			asent++;
			alim += a->status == 429;
		}
		if (a->sent_ns >= jfrom) {
			jsent++;
			jok += a->status == 200;
			jlim += a->status == 429;
		}
	}
	printf("rate=%g burst=%u workers=%u seconds=%u sent=%llu ok=%llu limited=%llu "
	       "wave=%llu after_sent=%llu after_limited=%llu goodput=%.1f limited_pct=%.1f "
	       "learned=%.3f",
	       p.rate, p.burst, p.workers, p.seconds, (unsigned long long)sent,
	       (unsigned long long)ok, (unsigned long long)lim, (unsigned long long)wave,
	       (unsigned long long)asent, (unsigned long long)alim,
	       100.0 * (double)ok / (p.rate * p.seconds + p.burst),
	       asent ? 100.0 * (double)alim / (double)asent : 0.0, learned(seg));
	if (p.change_at >= 0) {
		double js = (double)(end - jfrom) / 1e9;

		printf(" to=%g j_sent=%llu j_ok=%llu j_limited=%llu j_goodput=%.1f "
		       "j_limited_pct=%.1f t90=%.2f", p.to, (unsigned long long)jsent,
		       (unsigned long long)jok, (unsigned long long)jlim,
		       js > 0 ? 100.0 * (double)jok / (p.to * js) : 0.0,
		       jsent ? 100.0 * (double)jlim / (double)jsent : 0.0,
		       t90_ns == UINT64_MAX ? -1.0 : (double)t90_ns / 1e9);
	}
	printf("\n");
	brk_detach(seg);
	brk_segment_unlink(p.shm);
	curl_global_cleanup();
	return failed;
}
