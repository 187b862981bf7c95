/*
 * bctl_config.c - `bctl config NAME [--setting VALUE ...]`: create a
 * breaker, or change only the given settings of an existing one (its
 * state and counters are kept).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bctl.h"

#define CFG_N cfg_n

/* One option value into set->val[i]. Returns 0 or CLI_EXIT_USAGE. */
static int cfg_parse_opt(size_t i, const char *arg, struct cfg_set *set)
{
	char opt[40];

	snprintf(opt, sizeof(opt), "--%s", cfg_fields[i].opt);
	return cfg_parse_value(i, opt, arg, set);
}

const struct option *bctl_opts_config(void)
{
	static struct option lo[CFG_MAX_FIELDS + 4];
	static const struct option common[] = { BCTL_COMMON_LONGOPTS,
						{ NULL, 0, NULL, 0 } };
	size_t i;

	for (i = 0; i < CFG_N; i++) {
		lo[i].name = cfg_fields[i].opt;
		lo[i].has_arg = required_argument;
		lo[i].flag = NULL;
		lo[i].val = BCTL_OPT_FIRST_CMD + (int)i;
	}
	memcpy(&lo[CFG_N], common, sizeof(common));
	return lo;
}

static int cfg_parse(struct bctl *g, int argc, char **argv, struct cfg_set *set)
{
	const struct option *lo = bctl_opts_config();
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", lo)) != -1) {
		if (c >= BCTL_OPT_FIRST_CMD && c < BCTL_OPT_FIRST_CMD + (int)CFG_N) {
			rc = cfg_parse_opt((size_t)(c - BCTL_OPT_FIRST_CMD), optarg, set);
			if (rc)
				return rc;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return BCTL_CONTINUE;
}

/* "invalid setting KEY = VALUE" for the setting @what of @c. */
static int cfg_invalid(const char *name, const struct brk_config *c,
		       const char *what)
{
	size_t i;

	for (i = 0; what && i < CFG_N; i++)
		if (strcmp(cfg_fields[i].key, what) == 0)
			return cli_usage_error("config %s: invalid setting %s = %llu%s",
					       cli_q(name), what,
					       (unsigned long long)cfg_get(c, &cfg_fields[i]),
					       cfg_hint(what));
	return cli_usage_error("config %s: invalid setting %s", cli_q(name),
			       what ? what : "(unknown)");
}

static int cfg_validate(const char *name, const struct brk_config *c)
{
	const char *what = NULL;

	if (brk_config_validate(c, &what) == 0)
		return 0;
	return cfg_invalid(name, c, what);
}

/* Create @name with the defaults plus @set. */
static int cfg_create(const struct bctl *g, brk_segment *seg, const char *name,
		      const struct cfg_set *set, brk_breaker **b)
{
	struct brk_config c;
	int rc;

	brk_config_init(&c);
	cfg_apply(&c, set);
	rc = cfg_validate(name, &c);
	if (rc)
		return rc;
	rc = brk_breaker_get(seg, name, &c, b);
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BREAKER);
	return rc < 0 ? bctl_fail(g, name, rc) : 0;
}

/*
 * Change only the settings given (brk_breaker_update()): another operator
 * changing other settings at the same time keeps his change. The
 * snapshot read here only decides "unchanged" and fills the message of an
 * invalid combination; the library validates against the stored values.
 */
static int cfg_run(const struct bctl *g, brk_segment *seg, const char *name,
		   const struct cfg_set *set)
{
	struct brk_info in;
	struct brk_config c, old;
	const char *what = NULL;
	brk_breaker *b;
	char ch[512];
	int rc, created = 0;

	rc = brk_breaker_find(seg, name, &b);
	if (rc == -ENOENT) {
		rc = cfg_create(g, seg, name, set, &b);
		if (rc)
			return rc;
		created = 1;
	} else if (rc < 0) {
		return bctl_find(g, seg, name, &b);
	}
	rc = brk_breaker_info(b, &in);
	if (rc < 0)
		return bctl_fail(g, name, rc);
	old = c = in.config;
	if (cfg_apply(&c, set) == 0) {
		/* created: the settings given, as bctl apply's created line */
		cfg_list(&c, set, ch, sizeof(ch));
		printf("%s: %s%s%s\n", name, created ? "created" : "unchanged",
		       created && ch[0] ? ": " : "", created ? ch : "");
		cfg_fleet_notes(seg, name, &c, set);
		return 0;
	}
	rc = brk_breaker_update(b, &c, cfg_bits(set), &what);
	if (rc == -EINVAL)
		return cfg_invalid(name, &c, what);
	if (rc == -BRK_ECONTENDED && what)
		return cli_error("config %s: a concurrent change of another setting "
				 "conflicts with this one (%s%s); nothing was "
				 "changed: look (bctl inspect) and try again",
				 cli_q(name), what, cfg_hint(what));
	if (rc < 0)
		return bctl_fail(g, name, rc);
	cfg_changes(&old, &c, set, ch, sizeof(ch)); /* bctl apply's words */
	printf("%s: updated: %s\n", name, ch);
	cfg_fleet_notes(seg, name, &c, set);
	return 0;
}

int bctl_cmd_config(struct bctl *g, int argc, char **argv)
{
	struct cfg_set set;
	brk_segment *seg;
	const char *name;
	int rc;

	memset(&set, 0, sizeof(set));
	rc = cfg_parse(g, argc, argv, &set);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_name_arg("config", argc, argv, &name);
	if (rc)
		return rc;
	rc = bctl_attach(g, 0, NULL, &seg);
	if (rc)
		return rc;
	rc = cfg_run(g, seg, name, &set);
	brk_detach(seg);
	return rc;
}
