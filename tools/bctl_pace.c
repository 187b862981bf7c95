/*
 * bctl_pace.c - paces (GCRA buckets with a learned rate) on the command
 * line:
 *
 *   bctl pace NAME --ceiling PER_SECOND [--floor PER_SECOND] [--burst N]
 *                  [--reserve PCT] [--fleet on|off]
 *
 * Creates the pace (--ceiling needed; defaults from breaker.h
 * BRK_PACE_DEFAULT_*), or changes only the given settings of an existing
 * one, keeping its learned rate (brk_pace_update()). Bad input exits 2
 * with a message naming the option; a breaker, budget or plain bucket of
 * that name exits 1 and says what it is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bctl.h"
#include "limit_opts.h"

enum {
	OPT_CEILING = BCTL_OPT_FIRST_CMD,
	OPT_FLOOR,
	OPT_BURST,
	OPT_RESERVE,
	OPT_FLEET
};

#define pace_args pace_set

const struct option bctl_opts_pace[] = {
	{ "ceiling", required_argument, NULL, OPT_CEILING },
	{ "floor", required_argument, NULL, OPT_FLOOR },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "reserve", required_argument, NULL, OPT_RESERVE },
	{ "fleet", required_argument, NULL, OPT_FLEET },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static int pace_parse(struct bctl *g, int argc, char **argv, struct pace_args *a)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_pace)) != -1) {
		switch (c) {
		case OPT_CEILING:
			rc = pace_opt("ceiling", "--ceiling", optarg, a);
			break;
		case OPT_FLOOR:
			rc = pace_opt("floor", "--floor", optarg, a);
			break;
		case OPT_BURST:
			rc = pace_opt("burst", "--burst", optarg, a);
			break;
		case OPT_RESERVE:
			rc = pace_opt("reserve", "--reserve", optarg, a);
			break;
		case OPT_FLEET:
			rc = pace_opt("fleet", "--fleet", optarg, a);
			break;
		default:
			rc = bctl_opt_common(g, c, argc, argv);
			if (rc == BCTL_CONTINUE)
				continue;
		}
		if (rc)
			return rc;
	}
	rc = pace_check(a, "--floor", "--ceiling");
	if (rc)
		return rc;
	return BCTL_CONTINUE;
}

/* "NAME: pace WHAT: ceiling ..., rate now R/s"; @what NULL: "NAME: ceiling
 * ..." (bctl pace NAME with no setting: just the settings). */
static void pace_line(const char *name, const char *what,
		      const struct brk_bucket_info *in)
{
	printf("%s: %s%s%sceiling %g/s, floor %g/s, burst %" PRIu32
	       ", reserve %" PRIu32 "%%, fleet %s, rate now %g/s\n", name,
	       what ? "pace " : "", what ? what : "", what ? ": " : "",
	       in->ceiling_per_s, in->floor_per_s, in->burst, in->reserve_pct,
	       in->fleet ? "on" : "off", in->learned_per_s);
}

/* A -EMEDIUMTYPE: a breaker or budget (the shared message), or a plain
 * bucket, which bctl pace does not turn into a pace. */
static int not_a_pace(const struct bctl *g, brk_segment *seg, const char *name)
{
	if (bctl_kind_of(seg, name) == BRK_KIND_BUCKET) {
		fprintf(stderr, "bctl: %s: '%s' is a plain bucket (fixed rate), not a "
			"pace: change it with 'bctl bucket', or retire it first\n",
			bctl_shm(g), name);
		return CLI_EXIT_ERROR;
	}
	return bctl_wrong_kind(g, seg, name, BRK_KIND_BUCKET);
}

/* The library's -EINVAL on update: the stored settings and the given ones
 * together are inconsistent (a floor above the kept ceiling). */
static int update_einval(const struct pace_args *a, const struct brk_bucket_info *in)
{
	if ((a->fields & BRK_PACE_F_FLOOR) && !(a->fields & BRK_PACE_F_CEILING))
		return cli_usage_error("--floor: %g is above the pace's ceiling %g/s",
				       a->c.floor_per_s, in->ceiling_per_s);
	return cli_usage_error("--ceiling: %g is below the floor given (%g/s)",
			       a->c.ceiling_per_s, a->c.floor_per_s);
}

static int pace_run(const struct bctl *g, brk_segment *seg, const char *name,
		    const struct pace_args *a)
{
	struct brk_bucket_info in;
	brk_bucket *k = NULL;
	int rc;

	rc = brk_bucket_find(seg, name, &k);
	if (rc == -ENOENT) {
		if (!(a->fields & BRK_PACE_F_CEILING))
			return cli_usage_error("pace %s: no such pace: --ceiling "
					       "PER_SECOND is needed to create it",
					       cli_q(name));
		rc = brk_pace_get(seg, name, &a->c, &k);
		if (rc == -EMEDIUMTYPE)
			return not_a_pace(g, seg, name);
		if (rc == -EINVAL)
			return cli_usage_error("--floor: %g is above --ceiling %g",
					       a->c.floor_per_s, a->c.ceiling_per_s);
		if (rc == 0)
			rc = brk_bucket_info(k, &in);
		if (rc < 0)
			return bctl_fail(g, name, rc);
		/* a concurrent creator may have won: its settings, then ours */
		rc = brk_pace_update(k, &a->c, a->fields);
		if (rc == 0)
			rc = brk_bucket_info(k, &in);
		if (rc < 0)
			return bctl_fail(g, name, rc);
		pace_line(name, "created", &in);
		if (in.fleet && (a->fields & BRK_PACE_F_FLEET))
			cfg_fleet_link_note(seg, name);
		return 0;
	}
	if (rc == -EMEDIUMTYPE)
		return not_a_pace(g, seg, name);
	if (rc == 0)
		rc = brk_bucket_info(k, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	if (!in.paced)
		return not_a_pace(g, seg, name);
	rc = brk_pace_update(k, &a->c, a->fields);
	if (rc == -EINVAL)
		return update_einval(a, &in);
	if (rc == 0)
		rc = brk_bucket_info(k, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	pace_line(name, "updated", &in);
	if (in.fleet && (a->fields & BRK_PACE_F_FLEET))
		cfg_fleet_link_note(seg, name);
	return 0;
}

/*
 * `bctl pace NAME` with no setting: an existing pace's settings, just
 * them (exit 0); no such pace (or no segment): the
 * usage error that --ceiling is needed to create one. Creates nothing.
 */
static int pace_show(const struct bctl *g, const char *name)
{
	struct brk_attach_opts o;
	struct brk_bucket_info in;
	brk_segment *seg = NULL;
	brk_bucket *k;
	int rc;

	if ((rc = bctl_check_shm(g)) != 0) /* bctl_attach's words */
		return rc;
	brk_attach_opts_init(&o);
	o.shm_name = bctl_shm(g);
	o.flags = BRK_ATTACH_NOCREATE;
	if (brk_attach(&o, &seg) != 0)
		seg = NULL;
	rc = seg ? brk_bucket_find(seg, name, &k) : -ENOENT;
	if (rc == -ENOENT) {
		if (seg)
			brk_detach(seg);
		return cli_usage_error("pace %s: no such pace: --ceiling "
				       "PER_SECOND is needed to create it",
				       cli_q(name));
	}
	if (rc == -EMEDIUMTYPE)
		rc = not_a_pace(g, seg, name);
	else if (rc < 0 || (rc = brk_bucket_info(k, &in)) < 0)
		rc = bctl_fail(g, name, rc);
	else if (!in.paced)
		rc = not_a_pace(g, seg, name);
	else {
		pace_line(name, NULL, &in);
		rc = cli_flush_stdout() ? CLI_EXIT_ERROR : 0;
	}
	brk_detach(seg);
	return rc;
}

int bctl_cmd_pace(struct bctl *g, int argc, char **argv)
{
	struct pace_args a;
	brk_segment *seg;
	const char *name;
	int rc;

	memset(&a, 0, sizeof(a));
	if (brk_pace_config_init(&a.c) != 0)
		return CLI_EXIT_ERROR;
	rc = pace_parse(g, argc, argv, &a);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_record_arg("pace", "pace ", argc, argv, &name);
	if (rc)
		return rc;
	if (a.fields == 0)
		return pace_show(g, name);
	rc = bctl_attach(g, 0, NULL, &seg);
	if (rc)
		return rc;
	rc = pace_run(g, seg, name, &a);
	brk_detach(seg);
	return rc;
}
