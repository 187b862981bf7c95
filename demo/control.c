/*
 * control.c - the parent's side channel to the upstream: POST /start
 * begins a run's schedule, GET /stats reads what the upstream counted.
 * Neither is counted by the upstream. JSON through jansson.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "demo_api.h"

#define CONTROL_TIMEOUT_MS 3000L
#define CONTROL_BODY_MAX 4096u

struct body {
	char buf[CONTROL_BODY_MAX];
	size_t len;
};

static size_t body_write(char *data, size_t size, size_t n, void *ctx)
{
	struct body *b = ctx;
	size_t len = size * n;

	if (len > sizeof(b->buf) - 1 - b->len)
		return 0; /* too big: curl reports a write error */
	memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return len;
}

/* GET or POST @path; parse the JSON answer into *@out. */
static int control_fetch(const struct upstream *up, const char *path,
			 int post, json_t **out)
{
	struct body b = { .len = 0 };
	char url[128];
	json_error_t jerr;
	long code = 0;
	CURL *h = curl_easy_init();
	CURLcode rc;

	if (!h)
		return -ENOMEM;
	snprintf(url, sizeof(url), "%s%s", up->url, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, CONTROL_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	if (post)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK || code != 200) {
		fprintf(stderr, "breakerd-demo: %s: %s (HTTP %ld)\n", url,
			curl_easy_strerror(rc), code);
		return -EIO;
	}
	*out = json_loads(b.buf, 0, &jerr);
	if (!*out) {
		fprintf(stderr, "breakerd-demo: %s: bad JSON: %s\n", url,
			jerr.text);
		return -EPROTO;
	}
	return 0;
}

static int get_u64(json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EPROTO;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/*
 * The upstream stamps the schedule with time.monotonic_ns(), which is
 * CLOCK_MONOTONIC on Linux. If its start is not between our clock
 * readings around the request, the clocks differ: place the schedule on
 * our clock instead (off by at most the request's latency).
 */
static void align_clock(struct schedule *s, uint64_t before, uint64_t after)
{
	uint64_t up = s->down_ns - s->start_ns;
	uint64_t down = s->recovered_ns - s->down_ns;

	if (s->start_ns >= before && s->start_ns <= after)
		return;
	fprintf(stderr, "breakerd-demo: the upstream's clock is not ours;"
		" timing figures are approximate\n");
	s->start_ns = after;
	s->down_ns = after + up;
	s->recovered_ns = s->down_ns + down;
}

/**
 * control_start - POST /start: reset the upstream's counters and start
 * its schedule now. Fills @s (end_ns is left to the caller).
 * Returns 0 or a negative errno (message printed).
 */
int control_start(const struct upstream *up, struct schedule *s)
{
	json_t *j = NULL;
	uint64_t before = demo_now_ns(), after;
	int rc = control_fetch(up, "/start", 1, &j);

	after = demo_now_ns();
	if (rc)
		return rc;
	if (get_u64(j, "start_ns", &s->start_ns) ||
	    get_u64(j, "down_at_ns", &s->down_ns) ||
	    get_u64(j, "recovered_at_ns", &s->recovered_ns) ||
	    s->down_ns < s->start_ns || s->recovered_ns < s->down_ns) {
		fprintf(stderr, "breakerd-demo: /start: unexpected answer\n");
		rc = -EPROTO;
	}
	json_decref(j);
	if (rc == 0)
		align_clock(s, before, after);
	return rc;
}

/**
 * control_stats - GET /stats: the requests the upstream counted in the
 * current run, by phase. Returns 0 or a negative errno (message printed).
 */
int control_stats(const struct upstream *up, struct upstream_counts *c)
{
	json_t *j = NULL, *counts;
	int rc = control_fetch(up, "/stats", 0, &j);

	if (rc)
		return rc;
	counts = json_object_get(j, "counts");
	if (get_u64(counts, "up", &c->up) ||
	    get_u64(counts, "down", &c->down) ||
	    get_u64(counts, "recovered", &c->recovered)) {
		fprintf(stderr, "breakerd-demo: /stats: unexpected answer\n");
		rc = -EPROTO;
	}
	json_decref(j);
	return rc;
}
