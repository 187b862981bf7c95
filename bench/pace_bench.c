/*
 * pace_bench.c - the pacing benchmark (issue 11): N forked worker processes call
 * a rate-limited nginx (limit_req RATE r/s, burst BURST, nodelay, 429 with
 * Retry-After: 1; bench/pace.sh starts it) for SECONDS per strategy, the
 * strategies one after another, each on a zone of its own (URL/zN/: fresh
 * limiter state) and with fresh breakerd records. Run it with
 *     bench/pace.sh BUILD
 * It prints, per strategy: requests sent, 200s, 429s, goodput (200s as %
 * of nginx's allowance RATE x SECONDS + BURST), 429s as % of requests sent
 * and the mean and p99 of the added wait: the time a worker held a
 * request back before sending it (the strategy's sleeps; 0 for none; a
 * request still held back when the window ends counts with its wait so
 * far). Issue 25's goal for fair waits: p99 <= 2 x mean.
 *
 *   pace --url URL [--rate R] [--burst N] [--workers N] [--seconds S]
 *        [--ceiling R] [--only LIST]
 */
#include "pace.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PACE_START_DELAY_NS 300000000ull /* workers set up before the start */

struct answer {
	char retry_after[64];
};

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
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

/* One GET: the HTTP status (0: no answer) and its classification. */
static int request(CURL *h, struct brk_result *res)
{
	struct answer a;
	long status = 0;
	const char *ra;

	memset(&a, 0, sizeof(a));
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
	if (curl_easy_perform(h) != CURLE_OK) {
		*res = (struct brk_result){ .outcome = BRK_FAILURE,
					    .reason = BRK_REASON_CONNECT };
		return 0;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 100 || status > 999)
		status = 0;
	ra = a.retry_after;
	while (*ra == ' ' || *ra == '\t')
		ra++;
	if (brk_http_classify((int)status, *ra ? ra : NULL, NULL, 0, 0, res))
		*res = (struct brk_result){ .outcome = BRK_FAILURE,
					    .reason = BRK_REASON_OTHER };
	return (int)status;
}

static void worker(const struct pace_params *p, int strategy, int idx,
		   uint64_t start_ns, struct pace_slot *s)
{
	struct pace_ctx c;
	struct brk_result res;
	char url[512];
	uint64_t end_ns = start_ns + (uint64_t)p->seconds * 1000000000ull;
	uint64_t want;
	CURL *h;
	int st, rc;

	memset(&c, 0, sizeof(c));
	c.p = p;
	c.strategy = strategy;
	c.worker = idx;
	snprintf(url, sizeof(url), "%sz%d/", p->url, strategy);
	h = curl_easy_init();
	s->rc = h ? pace_ctx_open(&c) : -ENOMEM;
	if (s->rc)
		_exit(1);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	pace_sleep_until(start_ns);
	while ((want = pace_now_ns()) < end_ns) {
		rc = pace_before(&c, end_ns);
		if (rc) {
			/* held back past the end: counts with the wait so far
			 * (a lower bound) */
			if (rc > 0 && s->nwaits < PACE_MAX_WAITS)
				s->wait_us[s->nwaits++] =
					(uint32_t)((end_ns - want) / 1000);
			s->rc = rc < 0 ? rc : 0;
			break;
		}
		if (s->nwaits < PACE_MAX_WAITS)
			s->wait_us[s->nwaits++] =
				(uint32_t)((pace_now_ns() - want) / 1000);
		st = request(h, &res);
		s->sent++;
		if (st == 200)
			s->ok++;
		else if (st == 429)
			s->limited++;
		else
			s->other++;
		pace_after(&c, &res);
	}
	curl_easy_cleanup(h);
	pace_ctx_close(&c);
	_exit(0);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Mean of every worker's added waits, in ms. */
static double mean_ms(const struct pace_slot *slots, uint32_t n)
{
	uint64_t total = 0, sum = 0;
	uint32_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < slots[i].nwaits; j++, total++)
			sum += slots[i].wait_us[j];
	return total ? (double)sum / (double)total / 1000.0 : 0.0;
}

/* p99 of every worker's added waits, in ms. */
static double p99_ms(struct pace_slot *slots, uint32_t n)
{
	uint64_t total = 0, k = 0;
	uint32_t *all, i, j;
	double v;

	for (i = 0; i < n; i++)
		total += slots[i].nwaits;
	if (!total)
		return 0;
	all = malloc(total * sizeof(*all));
	if (!all)
		return -1;
	for (i = 0; i < n; i++)
		for (j = 0; j < slots[i].nwaits; j++)
			all[k++] = slots[i].wait_us[j];
	qsort(all, total, sizeof(*all), cmp_u32);
	v = all[(total * 99 + 99) / 100 - 1] / 1000.0;
	free(all);
	return v;
}

static int run_strategy(const struct pace_params *p, int strategy,
			struct pace_slot *slots)
{
	pid_t pids[PACE_MAX_WORKERS];
	uint64_t start = pace_now_ns() + PACE_START_DELAY_NS;
	uint64_t sent = 0, ok = 0, lim = 0, other = 0;
	double allowance = p->rate * p->seconds + p->burst;
	uint32_t i;
	int status, failed = 0;

	memset(slots, 0, sizeof(*slots) * p->workers);
	brk_segment_unlink(p->shm);
	for (i = 0; i < p->workers; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			worker(p, strategy, (int)i, start, &slots[i]);
		}
		if (pids[i] < 0) {
			perror("fork");
			failed = 1;
			p = NULL;
			break;
		}
	}
	for (uint32_t j = 0; j < i; j++)
		if (waitpid(pids[j], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed = 1;
	if (!p)
		return 1;
	brk_segment_unlink(p->shm);
	for (i = 0; i < p->workers; i++) {
		sent += slots[i].sent;
		ok += slots[i].ok;
		lim += slots[i].limited;
		other += slots[i].other;
		if (slots[i].rc)
			fprintf(stderr, "pace: %s: worker %u: %s\n",
				pace_strategy_name(strategy), i,
				brk_strerror(slots[i].rc));
	}
	printf("%-20s %7llu %6llu %6llu %6llu %9.1f %7.1f %12.1f %11.1f\n",
	       pace_strategy_name(strategy), (unsigned long long)sent,
	       (unsigned long long)ok, (unsigned long long)lim,
	       (unsigned long long)other, 100.0 * (double)ok / allowance,
	       sent ? 100.0 * (double)lim / (double)sent : 0.0,
	       mean_ms(slots, p->workers), p99_ms(slots, p->workers));
	fflush(stdout);
	return failed;
}

static int usage(void)
{
	fprintf(stderr, "usage: pace --url URL [--rate R] [--burst N] "
		"[--workers N] [--seconds S] [--ceiling R] [--only LIST]\n"
		"  URL: nginx's base URL ending in '/'; strategy i calls URL/zi/\n"
		"  LIST: comma-separated strategy numbers 0-%d "
		"(none, retry-after, aimd, cooling, pacing)\n",
		PACE_NSTRATEGIES - 1);
	return 2;
}

static int parse(int argc, char **argv, struct pace_params *p,
		 unsigned *only)
{
	static const struct option lo[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "rate", required_argument, NULL, 'r' },
		{ "burst", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 's' },
		{ "ceiling", required_argument, NULL, 'c' },
		{ "only", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	char *end, *tok;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		errno = 0;
		switch (c) {
		case 'u': p->url = optarg; break;
		case 'r': p->rate = strtod(optarg, &end); break;
		case 'b': p->burst = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'w': p->workers = (uint32_t)strtoul(optarg, &end, 10); break;
		case 's': p->seconds = (uint32_t)strtoul(optarg, &end, 10); break;
		case 'c': p->ceiling = strtod(optarg, &end); break;
		case 'o':
			*only = 0;
			for (tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
				*only |= 1u << (strtoul(tok, &end, 10) & 31);
			break;
		default: return usage();
		}
		if (errno || (c != 'u' && c != 'o' && *end)) {
			fprintf(stderr, "pace: bad value '%s'\n", optarg);
			return 2;
		}
	}
	if (!p->url || !*p->url || p->url[strlen(p->url) - 1] != '/' ||
	    p->rate <= 0 || !p->workers || p->workers > PACE_MAX_WORKERS ||
	    !p->seconds || p->ceiling <= 0)
		return usage();
	return 0;
}

int main(int argc, char **argv)
{
	struct pace_params p = { NULL, 5, 5, 8, 10, 50, NULL };
	struct pace_slot *slots;
	char shm[48];
	unsigned only = ~0u;
	int s, rc = 0;

	if (parse(argc, argv, &p, &only))
		return 2;
	snprintf(shm, sizeof(shm), "/brk-bench-pace-%d", (int)getpid());
	p.shm = shm;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	slots = mmap(NULL, sizeof(*slots) * p.workers, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("pace benchmark: nginx limit_req %g r/s, burst %u nodelay, 429 + "
	       "Retry-After: 1; %u worker processes; %u s per strategy, each on "
	       "a fresh zone; pace ceiling %g r/s; breaker: defaults\n",
	       p.rate, p.burst, p.workers, p.seconds, p.ceiling);
	printf("allowance per strategy: %g requests (rate x seconds + burst)\n",
	       p.rate * p.seconds + p.burst);
	printf("%-20s %7s %6s %6s %6s %9s %7s %12s %11s\n", "strategy", "sent",
	       "200", "429", "other", "goodput%", "429%", "mean wait ms",
	       "p99 wait ms");
	for (s = 0; s < PACE_NSTRATEGIES; s++) {
		if (!(only & (1u << s)))
			continue;
		rc |= run_strategy(&p, s, slots);
	}
	curl_global_cleanup();
	return rc;
}
