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
	size_t i, k = 0;

	for (i = 0; i < CFG_N; i++) {
		if (cfg_fields[i].kind == CFG_AUTO)
			continue; /* --max-concurrent auto sets it */
		lo[k].name = cfg_fields[i].opt;
		lo[k].has_arg = required_argument;
		lo[k].flag = NULL;
		lo[k++].val = BCTL_OPT_FIRST_CMD + (int)i;
	}
	memcpy(&lo[k], common, sizeof(common));
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

/* @ms as an option value: "10m", "30s", "250ms". */
static const char *cfg_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms && ms % 86400000 == 0)
		snprintf(buf, len, "%llud", (unsigned long long)(ms / 86400000));
	else if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(ms / 60000));
	else if (ms && ms % 1000 == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, len, "%llums", (unsigned long long)ms);
	return buf;
}

static int cfg_given(const struct cfg_set *set, const char *key)
{
	size_t i;

	for (i = 0; set && i < CFG_N; i++)
		if (strcmp(cfg_fields[i].key, key) == 0)
			return !!(set->mask & (1u << i));
	return 0;
}

/* open above max_open: the library names max_open_ms whichever was given;
 * say the option the user gave (issue 22: `--open 10d` blamed
 * max_open_ms). */
static int cfg_open_above_max(const char *name, const struct brk_config *c,
			      const struct cfg_set *set)
{
	int o = cfg_given(set, "open_ms"), m = cfg_given(set, "max_open_ms");
	char a[32], b[32];

	cfg_ms(c->open_ms, a, sizeof(a));
	cfg_ms(c->max_open_ms, b, sizeof(b));
	if (o && m)
		return cli_usage_error("config %s: --max-open %s is less than "
				       "--open %s", cli_q(name), b, a);
	if (o)
		return cli_usage_error("config %s: --open %s is more than "
				       "max-open (%s); raise --max-open too",
				       cli_q(name), a, b);
	return cli_usage_error("config %s: --max-open %s is less than open "
			       "(%s); lower --open too", cli_q(name), b, a);
}

/* "invalid setting KEY = VALUE" for the setting @what of @c. */
static int cfg_invalid(const char *name, const struct brk_config *c,
		       const char *what, const struct cfg_set *set)
{
	size_t i;

	if (what && strcmp(what, "max_open_ms") == 0 && c->max_open_ms < c->open_ms)
		return cfg_open_above_max(name, c, set);
	for (i = 0; what && i < CFG_N; i++)
		if (strcmp(cfg_fields[i].key, what) == 0)
			return cli_usage_error("config %s: invalid setting %s = %llu%s",
					       cli_q(name), what,
					       (unsigned long long)cfg_get(c, &cfg_fields[i]),
					       cfg_hint(what));
	return cli_usage_error("config %s: invalid setting %s", cli_q(name),
			       what ? what : "(unknown)");
}

static int cfg_validate(const char *name, const struct brk_config *c,
			const struct cfg_set *set)
{
	const char *what = NULL;

	if (brk_config_validate(c, &what) == 0)
		return 0;
	return cfg_invalid(name, c, what, set);
}

/* Create @name with the defaults plus @set. */
static int cfg_create(const struct bctl *g, brk_segment *seg, const char *name,
		      const struct cfg_set *set, brk_breaker **b)
{
	struct brk_config c;
	int rc;

	brk_config_init(&c);
	cfg_apply(&c, set);
	rc = cfg_validate(name, &c, set);
	if (rc)
		return rc;
	rc = brk_breaker_get(seg, name, &c, b);
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BREAKER);
	return rc < 0 ? bctl_create_fail(g, seg, name, rc) : 0;
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
		return cfg_invalid(name, &c, what, set);
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
