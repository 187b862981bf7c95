/*
 * bctl_bucket.c - GCRA buckets and retry budgets on the command line:
 *
 *   bctl bucket NAME --rate PER_SECOND --burst N
 *                    create a bucket, or change its rate and/or burst
 *   bctl take NAME [N]
 *                    take N tokens (default 1): exit 0, or 75 with
 *                    "NAME: rate limited, retry in N ms" on stderr
 *   bctl budget NAME [--floor PER_SECOND] [--ratio R]
 *                    create a retry budget (defaults: Finagle's 10/s and
 *                    0.2), or change the given settings
 *
 * An existing record keeps what is not given; its state (the TAT, the
 * pool) is kept and rescaled by the library. Numbers are strict: a rate
 * is a plain decimal ("5", "0.5", "2e3"), never hex, inf or nan, and
 * nothing may follow it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bctl.h"

enum {
	OPT_RATE = BCTL_OPT_FIRST_CMD,
	OPT_BURST,
	OPT_FLOOR,
	OPT_RATIO
};

/* ---- bctl bucket --------------------------------------------------------- */

#define bucket_args bucket_set

const struct option bctl_opts_bucket[] = {
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "burst", required_argument, NULL, OPT_BURST },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static int bucket_parse(struct bctl *g, int argc, char **argv,
			struct bucket_args *a)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_bucket)) != -1) {
		if (c == OPT_RATE) {
			rc = bucket_opt("rate", "--rate", optarg, a);
		} else if (c == OPT_BURST) {
			rc = bucket_opt("burst", "--burst", optarg, a);
		} else {
			rc = bctl_opt_common(g, c, argc, argv);
			if (rc == BCTL_CONTINUE)
				continue;
		}
		if (rc)
			return rc;
	}
	return BCTL_CONTINUE;
}

#define rate_interval bucket_interval_ns

/* A snapshot with settings. The library stores them before it publishes
 * a record, so only a creator that died half-way leaves none (-EAGAIN:
 * the next brk_bucket_get() stores them). */
static int bucket_snapshot(brk_bucket *k, struct brk_bucket_info *in)
{
	int rc = brk_bucket_info(k, in);

	return rc < 0 ? rc : in->configured ? 0 : -EAGAIN;
}

static int bucket_configure(brk_bucket *k, double rate, uint32_t burst)
{
	return brk_bucket_configure(k, rate, burst);
}

/* Change only what was given: a concurrent `bctl bucket --burst` keeps
 * its change while we change the rate (one CAS loop in the library). */
static int bucket_update(brk_bucket *k, const struct bucket_args *a)
{
	return brk_bucket_update(k, a->rate, (uint32_t)a->burst,
				 (a->has_rate ? BRK_BUCKET_RATE : 0) |
				 (a->has_burst ? BRK_BUCKET_BURST : 0));
}

static int bucket_create(const struct bctl *g, brk_segment *seg,
			 const char *name, const struct bucket_args *a)
{
	struct brk_bucket_info in;
	brk_bucket *k;
	int rc;

	if (!a->has_rate || !a->has_burst)
		return cli_usage_error("bucket %s: no such bucket: --rate and --burst "
				       "are both needed to create it", cli_q(name));
	rc = brk_bucket_get(seg, name, a->rate, (uint32_t)a->burst, &k);
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BUCKET);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	rc = bucket_snapshot(k, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	/* A concurrent creator with other settings won: ours are the latest. */
	if (in.interval_ns != rate_interval(a->rate) || in.burst != a->burst) {
		rc = bucket_configure(k, a->rate, (uint32_t)a->burst);
		if (rc < 0)
			return bctl_fail(g, name, rc);
	}
	printf("%s: bucket created: rate %g/s, burst %" PRIu64 "\n", name,
	       a->rate, a->burst);
	return 0;
}

static int bucket_run(const struct bctl *g, brk_segment *seg, const char *name,
		      const struct bucket_args *a)
{
	struct brk_bucket_info in;
	brk_bucket *k;
	double rate;
	uint32_t burst;
	int rc;

	rc = brk_bucket_find(seg, name, &k);
	if (rc == -ENOENT)
		return bucket_create(g, seg, name, a);
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BUCKET);
	if (rc == 0)
		rc = bucket_snapshot(k, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	if (in.paced) {
		fprintf(stderr, "bctl: %s: '%s' is a pace (learned rate), not a plain "
			"bucket: change it with 'bctl pace %s --ceiling R'\n",
			bctl_shm(g), name, name);
		return CLI_EXIT_ERROR;
	}
	rate = a->has_rate ? a->rate : in.rate_per_s;
	burst = a->has_burst ? (uint32_t)a->burst : in.burst;
	if (rate_interval(rate) == in.interval_ns && burst == in.burst) {
		printf("%s: bucket unchanged: rate %g/s, burst %" PRIu32 "\n",
		       name, in.rate_per_s, in.burst);
		return 0;
	}
	rc = bucket_update(k, a);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	printf("%s: bucket updated: rate %g/s (was %g/s), burst %" PRIu32
	       " (was %" PRIu32 ")\n", name, rate, in.rate_per_s, burst,
	       in.burst);
	return 0;
}

int bctl_cmd_bucket(struct bctl *g, int argc, char **argv)
{
	struct bucket_args a;
	brk_segment *seg;
	const char *name;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = bucket_parse(g, argc, argv, &a);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_record_arg("bucket", "bucket ", argc, argv, &name);
	if (rc)
		return rc;
	if (!a.has_rate && !a.has_burst)
		return cli_usage_error("bucket %s: missing --rate PER_SECOND and/or "
				       "--burst N", cli_q(name));
	rc = bctl_attach(g, 0, NULL, &seg);
	if (rc)
		return rc;
	rc = bucket_run(g, seg, name, &a);
	brk_detach(seg);
	return rc;
}

/* ---- bctl take ----------------------------------------------------------- */

/* NAME [N] after the options. */
static int take_args(int argc, char **argv, const char **name, uint32_t *n)
{
	const char *s;
	uint64_t v;
	int rc;

	if (optind >= argc)
		return cli_usage_error("take: missing bucket NAME");
	if (optind + 2 < argc)
		return cli_usage_error("take: unexpected argument '%s'",
				       cli_q(argv[optind + 2]));
	*name = argv[optind];
	rc = bctl_check_name(*name);
	if (rc)
		return rc;
	*n = 1;
	if (optind + 1 >= argc)
		return 0;
	s = argv[optind + 1];
	rc = parse_uint_arg(s, 0, UINT32_MAX, &v);
	if (rc == -EINVAL)
		return cli_usage_error("take: N: '%s' is not a whole number of tokens",
				       cli_q(s));
	if (rc < 0)
		return cli_usage_error("take: N: '%s' is out of range (1..%" PRIu32
				       ")", cli_q(s), BRK_BUCKET_MAX_BURST);
	if (v == 0)
		return cli_usage_error("take: N must be at least 1 (got '%s')",
				       cli_q(s));
	*n = (uint32_t)v;
	return 0;
}

/* getopt took "-1" for an option: it is a negative N. */
static int take_negative(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] >= '0' && argv[i][1] <= '9')
			break;
	return cli_usage_error("take: N: '%s' is not a whole number of tokens",
			       i < argc ? cli_q(argv[i]) : "-");
}

static int take_too_many(const char *name, uint32_t n, uint32_t burst)
{
	return cli_usage_error("take %s: %" PRIu32 " tokens is more than the "
			       "bucket's burst (%" PRIu32 "): it can never be "
			       "granted", cli_q(name), n, burst);
}

static int take_refused(brk_segment *seg, brk_bucket *k, const char *name,
			uint64_t not_before)
{
	uint64_t now = brk_now_ns(seg), wake, ms;

	if (not_before == UINT64_MAX) {
		cli_note("%s: rate limited, not within the clock's range", name);
		return BCTL_EXIT_TEMPFAIL;
	}
	wake = brk_bucket_wake_ns(k, not_before);
	ms = wake > now ? (wake - now + 999999) / 1000000 : 1;
	cli_note("%s: rate limited, retry in %" PRIu64 " ms", name, ms);
	return BCTL_EXIT_TEMPFAIL;
}

static int take_run(const struct bctl *g, brk_segment *seg, const char *name,
		    uint32_t n)
{
	struct brk_bucket_info in;
	brk_bucket *k;
	uint64_t nb = 0;
	int rc;

	rc = brk_bucket_find(seg, name, &k);
	if (rc == -ENOENT)
		return cli_error("%s: no bucket named '%s'", cli_q(bctl_shm(g)),
				 cli_q(name));
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BUCKET);
	if (rc == 0)
		rc = bucket_snapshot(k, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	if (n > in.burst)
		return take_too_many(name, n, in.burst);
	rc = brk_bucket_take(k, n, &nb);
	if (rc == -EINVAL && bucket_snapshot(k, &in) == 0 && n > in.burst)
		return take_too_many(name, n, in.burst); /* reconfigured */
	if (rc == -BRK_ENOTOKENS)
		return take_refused(seg, k, name, nb);
	if (rc == -BRK_ECONTENDED) {
		cli_note("%s: not granted (contended), try again later", name);
		return BCTL_EXIT_TEMPFAIL;
	}
	if (rc < 0)
		return bctl_fail(g, name, rc);
	if (g->verbose && bucket_snapshot(k, &in) == 0)
		cli_note("%s: took %" PRIu32 ", %.3f left of %" PRIu32, name, n,
			 in.tokens, in.burst);
	return 0;
}

int bctl_cmd_take(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	const char *name = NULL;
	uint32_t n = 1;
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_common)) != -1) {
		if (c == '?' && optopt >= '0' && optopt <= '9')
			return take_negative(argc, argv);
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	rc = take_args(argc, argv, &name, &n);
	if (rc)
		return rc;
	rc = bctl_attach(g, BRK_ATTACH_NOCREATE, NULL, &seg);
	if (rc)
		return rc;
	rc = take_run(g, seg, name, n);
	brk_detach(seg);
	return rc;
}

/* ---- bctl budget --------------------------------------------------------- */

#define budget_args budget_set

const struct option bctl_opts_budget[] = {
	{ "floor", required_argument, NULL, OPT_FLOOR },
	{ "ratio", required_argument, NULL, OPT_RATIO },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static int budget_parse(struct bctl *g, int argc, char **argv,
			struct budget_args *a)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_budget)) != -1) {
		if (c == OPT_FLOOR) {
			rc = budget_opt("floor", "--floor", optarg, a);
		} else if (c == OPT_RATIO) {
			rc = budget_opt("ratio", "--ratio", optarg, a);
		} else {
			rc = bctl_opt_common(g, c, argc, argv);
			if (rc == BCTL_CONTINUE)
				continue;
		}
		if (rc)
			return rc;
	}
	return BCTL_CONTINUE;
}

static int budget_snapshot(brk_budget *u, struct brk_budget_info *in)
{
	int rc = brk_budget_info(u, in);

	return rc < 0 ? rc : in->configured ? 0 : -EAGAIN;
}

static int budget_configure(brk_budget *u, double floor, double ratio)
{
	return brk_budget_configure(u, floor, ratio);
}

#define milli_eq budget_milli_eq

static void budget_line(const char *name, const char *what,
			const struct brk_budget_info *in)
{
	printf("%s: budget %s: floor %g/s (burst %" PRIu32 "), ratio %g per "
	       "first attempt\n", name, what, in->floor_per_s, in->floor_burst,
	       in->ratio);
}

static int budget_run(const struct bctl *g, brk_segment *seg, const char *name,
		      const struct budget_args *a)
{
	struct brk_budget_info in;
	brk_budget *u;
	double floor, ratio;
	int rc, created = 0;

	rc = brk_budget_find(seg, name, &u);
	if (rc == -ENOENT) {
		created = 1;
		rc = brk_budget_get(seg, name,
				    a->has_floor ? a->floor : BRK_DEFAULT_BUDGET_FLOOR,
				    a->has_ratio ? a->ratio : BRK_DEFAULT_BUDGET_RATIO,
				    &u);
	}
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BUDGET);
	if (rc == 0)
		rc = budget_snapshot(u, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	/* What we want: the given settings; when creating, the defaults
	 * for the others (a concurrent creator may have won with its own). */
	floor = a->has_floor ? a->floor :
		created ? BRK_DEFAULT_BUDGET_FLOOR : in.floor_per_s;
	ratio = a->has_ratio ? a->ratio :
		created ? BRK_DEFAULT_BUDGET_RATIO : in.ratio;
	if (milli_eq(floor, in.floor_per_s) && milli_eq(ratio, in.ratio)) {
		budget_line(name, created ? "created" : "unchanged", &in);
		return 0;
	}
	/* an existing budget: change only what was given (a concurrent
	 * `bctl budget --ratio` keeps its change while we change the floor);
	 * one we created: ours are the latest, defaults included */
	if (created)
		rc = budget_configure(u, floor, ratio);
	else
		rc = brk_budget_update(u, floor, ratio,
				       (a->has_floor ? BRK_BUDGET_FLOOR : 0) |
				       (a->has_ratio ? BRK_BUDGET_RATIO : 0));
	if (rc == 0)
		rc = budget_snapshot(u, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	budget_line(name, created ? "created" : "updated", &in);
	return 0;
}

int bctl_cmd_budget(struct bctl *g, int argc, char **argv)
{
	struct budget_args a;
	brk_segment *seg;
	const char *name;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = budget_parse(g, argc, argv, &a);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_record_arg("budget", "retry budget ", argc, argv, &name);
	if (rc)
		return rc;
	rc = bctl_attach(g, 0, NULL, &seg);
	if (rc)
		return rc;
	rc = budget_run(g, seg, name, &a);
	brk_detach(seg);
	return rc;
}
