/*
 * ops_breakerd.c - the libbreaker workloads.
 *
 * The parent creates a private segment (its own shm name, unlinked at
 * exit by bench_main.c) with:
 *   bench/cb/0..7   plain breakers (defaults: no bulkhead);
 *   bench/bh/0..7   breakers with a bulkhead of BENCH_BULKHEAD permits;
 *   bench/tb/0..7   GCRA buckets (when the bucket API is built);
 *   bench/n/0000..  BENCH_NAMES breakers for the index-lookup workload.
 * Each worker attaches its own handle (as a separately started worker
 * would) and, for the measured loop, calls the public API only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "bench.h"

#define BENCH_BULKHEAD 64u
#define BENCH_RECS BENCH_MAX_WORKERS
#define BENCH_NAMES 2500
#define BENCH_FIND_HANDLES 4
#define BENCH_CAPACITY 4096u

struct bench_brk {
	char shm[256];
	brk_segment *seg;              /* the parent's handle */
	brk_breaker *cb[BENCH_RECS];
	brk_breaker *bh[BENCH_RECS];
#ifdef BENCH_HAVE_GCRA
	brk_bucket *tb[BENCH_RECS];
#endif
};

/* What one worker holds. */
struct local {
	brk_segment *seg;
	brk_breaker *b;
	char name[BRK_NAME_MAX + 1];
	brk_segment *fresh[BENCH_FIND_HANDLES]; /* find: cold handles */
	char (*names)[16];
#ifdef BENCH_HAVE_GCRA
	brk_bucket *tb;
#endif
};

/**
 * bench_attach - brk_attach() @shm with @flags (and @capacity if it
 * creates); prints the reason on failure. Returns 0 or its code.
 */
int bench_attach(const char *shm, uint32_t flags, uint32_t capacity,
		 brk_segment **out)
{
	struct brk_attach_opts o;
	char err[256] = "";
	int rc;

	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = flags;
	o.capacity = capacity;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, out);
	if (rc)
		fprintf(stderr, "breakerd-bench: attach %s: %s%s%s\n", shm,
			brk_strerror(rc), err[0] ? ": " : "", err);
	return rc;
}

static void rec_name(char *buf, size_t len, const char *kind, int i)
{
	snprintf(buf, len, "bench/%s/%d", kind, i);
}

int bench_brk_have_gcra(void)
{
#ifdef BENCH_HAVE_GCRA
	return 1;
#else
	return 0;
#endif
}

/**
 * bench_brk_setup - create the benchmark's segment and records.
 * Returns 0 or a negative code (printed).
 */
int bench_brk_setup(const char *shm_name, struct bench_brk **out)
{
	struct bench_brk *c = calloc(1, sizeof(*c));
	struct brk_config cfg;
	char name[BRK_NAME_MAX + 1];
	brk_breaker *b;
	int i, rc;

	if (!c)
		return -ENOMEM;
	snprintf(c->shm, sizeof(c->shm), "%s", shm_name);
	rc = bench_attach(shm_name, 0, BENCH_CAPACITY, &c->seg);
	if (rc)
		goto fail;
	for (i = 0; i < BENCH_RECS; i++) {
		brk_config_init(&cfg);
		rec_name(name, sizeof(name), "cb", i);
		rc = brk_breaker_get(c->seg, name, &cfg, &c->cb[i]);
		if (rc)
			goto fail_rec;
		cfg.max_concurrent = BENCH_BULKHEAD;
		rec_name(name, sizeof(name), "bh", i);
		rc = brk_breaker_get(c->seg, name, &cfg, &c->bh[i]);
		if (rc)
			goto fail_rec;
#ifdef BENCH_HAVE_GCRA
		{
			rec_name(name, sizeof(name), "tb", i);
			/* A rate no worker can reach: every take is admitted. */
			rc = brk_bucket_get(c->seg, name, BRK_BUCKET_MAX_RATE,
					    BRK_BUCKET_MAX_BURST, &c->tb[i]);
			if (rc)
				goto fail_rec;
		}
#endif
	}
	for (i = 0; i < BENCH_NAMES; i++) {
		snprintf(name, sizeof(name), "bench/n/%04d", i);
		rc = brk_breaker_get(c->seg, name, NULL, &b);
		if (rc)
			goto fail_rec;
	}
	*out = c;
	return 0;
fail_rec:
	fprintf(stderr, "breakerd-bench: create %s: %s\n", name,
		brk_strerror(rc));
fail:
	brk_detach(c->seg);
	free(c);
	return rc;
}

void bench_brk_teardown(struct bench_brk *c)
{
	if (!c)
		return;
	brk_detach(c->seg);
	free(c);
}

/* ---- worker side ------------------------------------------------------- */

static int init_common(const char *shm, struct local **out)
{
	struct local *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return -ENOMEM;
	rc = bench_attach(shm, BRK_ATTACH_NOCREATE, 0, &l->seg);
	if (rc) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static int init_breaker(void *arg, const char *kind, int rec, void **local)
{
	struct bench_brk *c = arg;
	struct local *l;
	int rc = init_common(c->shm, &l);

	if (rc)
		return rc;
	rec_name(l->name, sizeof(l->name), kind, rec);
	rc = brk_breaker_find(l->seg, l->name, &l->b);
	if (rc) {
		fprintf(stderr, "breakerd-bench: find %s: %s\n", l->name,
			brk_strerror(rc));
		brk_detach(l->seg);
		free(l);
		return rc;
	}
	*local = l;
	return 0;
}

static int init_cb(void *arg, int worker, int rec, void **local)
{
	(void)worker;
	return init_breaker(arg, "cb", rec, local);
}

static int init_bh(void *arg, int worker, int rec, void **local)
{
	(void)worker;
	return init_breaker(arg, "bh", rec, local);
}

static void fini_local(void *p)
{
	struct local *l = p;
	int i;

	for (i = 0; i < BENCH_FIND_HANDLES; i++)
		brk_detach(l->fresh[i]);
	free(l->names);
	brk_detach(l->seg);
	free(l);
}

/* acquire + release(success): the fast path (and the bulkhead's). */
static void run_acqrel(void *p, uint64_t n, struct bench_counts *c)
{
	struct local *l = p;
	brk_permit pm;
	uint64_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = brk_acquire(l->b, &pm, NULL);
		if (rc != 0) {
			c->failed++;
			c->last_err = rc;
			continue;
		}
		c->ok++;
		rc = brk_release(&pm, BRK_SUCCESS, BRK_REASON_NONE, 0);
		if (rc == 0) {
			c->aux++;
		} else {
			c->failed++;
			c->last_err = rc;
		}
	}
}

void bench_brk_acqrel(struct bench_brk *c, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "breakerd acquire+release";
	w->arg = c;
	w->ops = 200000;
	w->warmup = 10000;
	w->init = init_cb;
	w->run = run_acqrel;
	w->fini = fini_local;
}

void bench_brk_bulkhead(struct bench_brk *c, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "breakerd bulkhead acq+rel (64)";
	w->arg = c;
	w->ops = 200000;
	w->warmup = 10000;
	w->init = init_bh;
	w->run = run_acqrel;
	w->fini = fini_local;
}

/* ---- GCRA -------------------------------------------------------------- */

#ifdef BENCH_HAVE_GCRA
static int init_tb(void *arg, int worker, int rec, void **local)
{
	struct bench_brk *c = arg;
	struct local *l;
	int rc = init_common(c->shm, &l);

	(void)worker;
	if (rc)
		return rc;
	rec_name(l->name, sizeof(l->name), "tb", rec);
	rc = brk_bucket_find(l->seg, l->name, &l->tb);
	if (rc) {
		fprintf(stderr, "breakerd-bench: bucket %s: %s\n", l->name,
			brk_strerror(rc));
		brk_detach(l->seg);
		free(l);
		return rc;
	}
	*local = l;
	return 0;
}

static void run_take(void *p, uint64_t n, struct bench_counts *c)
{
	struct local *l = p;
	uint64_t i;

	int rc;

	for (i = 0; i < n; i++) {
		rc = brk_bucket_take(l->tb, 1, NULL);
		if (rc == 0) {
			c->ok++;
		} else {
			c->failed++;
			c->last_err = rc;
		}
	}
}
#endif

/**
 * bench_brk_gcra - the GCRA take workload. Returns 0, or -ENOSYS when the
 * bucket API was not in breaker.h when this program was configured.
 */
int bench_brk_gcra(struct bench_brk *c, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "breakerd GCRA take";
	w->arg = c;
	w->ops = 200000;
	w->warmup = 10000;
#ifdef BENCH_HAVE_GCRA
	w->init = init_tb;
	w->run = run_take;
	w->fini = fini_local;
	return 0;
#else
	return -ENOSYS;
#endif
}

/* ---- name lookups ------------------------------------------------------ */

/* brk_breaker_get on an existing name: the per-process rculfhash hit. */
static void run_get(void *p, uint64_t n, struct bench_counts *c)
{
	struct local *l = p;
	brk_breaker *b;
	uint64_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = brk_breaker_get(l->seg, l->name, NULL, &b);
		if (rc == 0 && b == l->b) {
			c->ok++;
		} else {
			c->failed++;
			c->last_err = rc ? rc : -EBADSLT;
		}
	}
}

void bench_brk_get(struct bench_brk *c, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "lookup: breaker_get (cache hit)";
	w->arg = c;
	w->ops = 200000;
	w->warmup = 10000;
	w->init = init_cb;
	w->run = run_get;
	w->fini = fini_local;
}

/*
 * brk_breaker_find through fresh handles: each of BENCH_FIND_HANDLES
 * handles, attached before the barrier, looks every one of BENCH_NAMES
 * names up once, so every call misses the handle's (empty) cache and
 * probes the shm name index (then allocates the handle and caches it, as
 * a first lookup in a process does).
 */
static int init_find(void *arg, int worker, int rec, void **local)
{
	struct bench_brk *c = arg;
	struct local *l;
	int i, rc = init_common(c->shm, &l);

	(void)worker;
	(void)rec;
	if (rc)
		return rc;
	l->names = calloc(BENCH_NAMES, sizeof(*l->names));
	if (!l->names) {
		fini_local(l);
		return -ENOMEM;
	}
	for (i = 0; i < BENCH_NAMES; i++)
		snprintf(l->names[i], sizeof(l->names[i]), "bench/n/%04d", i);
	for (i = 0; i < BENCH_FIND_HANDLES; i++) {
		rc = bench_attach(c->shm, BRK_ATTACH_NOCREATE, 0, &l->fresh[i]);
		if (rc) {
			fini_local(l);
			return rc;
		}
	}
	*local = l;
	return 0;
}

static void run_find(void *p, uint64_t n, struct bench_counts *c)
{
	struct local *l = p;
	brk_breaker *b;
	uint64_t i;

	for (i = 0; i < n; i++) {
		brk_segment *s = l->fresh[(i / BENCH_NAMES) % BENCH_FIND_HANDLES];
		int rc = brk_breaker_find(s, l->names[i % BENCH_NAMES], &b);
		if (rc == 0) {
			c->ok++;
		} else {
			c->failed++;
			c->last_err = rc;
		}
	}
}

void bench_brk_find(struct bench_brk *c, struct bench_workload *w)
{
	memset(w, 0, sizeof(*w));
	w->label = "lookup: breaker_find (fresh, index)";
	w->arg = c;
	w->ops = (uint64_t)BENCH_NAMES * BENCH_FIND_HANDLES;
	w->warmup = 0; /* any warm-up would fill the caches */
	w->init = init_find;
	w->run = run_find;
	w->fini = fini_local;
}

/* ---- correctness -------------------------------------------------------- */

/**
 * bench_brk_totals - sum counters.allowed, counters.successes and
 * in_flight over records 0..@nrec-1 of the plain (@bulkhead 0) or
 * bulkhead (1) breakers, read through brk_breaker_info().
 */
int bench_brk_totals(struct bench_brk *c, int bulkhead, int nrec,
		     uint64_t *allowed, uint64_t *successes,
		     uint64_t *in_flight)
{
	struct brk_info *info = malloc(sizeof(*info));
	int i, rc = 0;

	if (!info)
		return -ENOMEM;
	*allowed = *successes = *in_flight = 0;
	for (i = 0; i < nrec && i < BENCH_RECS; i++) {
		rc = brk_breaker_info(bulkhead ? c->bh[i] : c->cb[i], info);
		if (rc)
			break;
		*allowed += info->counters.allowed;
		*successes += info->counters.successes;
		*in_flight += info->in_flight;
	}
	free(info);
	return rc;
}

/**
 * bench_brk_bucket_taken - sum of the buckets' `taken` counters over
 * records 0..@nrec-1. Returns 0, or -ENOSYS without the bucket API.
 */
int bench_brk_bucket_taken(struct bench_brk *c, int nrec, uint64_t *taken)
{
#ifdef BENCH_HAVE_GCRA
	struct brk_bucket_info bi;
	int i, rc;

	*taken = 0;
	for (i = 0; i < nrec && i < BENCH_RECS; i++) {
		rc = brk_bucket_info(c->tb[i], &bi);
		if (rc)
			return rc;
		*taken += bi.taken;
	}
	return 0;
#else
	(void)c;
	(void)nrec;
	*taken = 0;
	return -ENOSYS;
#endif
}
