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

enum cfg_kind { CFG_UINT, CFG_DUR, CFG_PCT };

struct cfg_field {
	const char *opt;  /* long option */
	const char *key;  /* struct brk_config member (the library's name) */
	int kind;
	uint64_t min, max;
	uint64_t bit;     /* enum brk_config_field */
};

#define CFG_F(opt, kind, min, max, field, bit) { opt, #field, kind, min, max, bit }

static const struct cfg_field cfg_fields[] = {
	CFG_F("failure-threshold", CFG_UINT, 1, BRK_MAX_FAILURE_THRESHOLD, failure_threshold,
	      BRK_CFG_FAILURE_THRESHOLD),
	CFG_F("open", CFG_DUR, 0, 0, open_ms, BRK_CFG_OPEN_MS),
	CFG_F("max-open", CFG_DUR, 0, 0, max_open_ms, BRK_CFG_MAX_OPEN_MS),
	CFG_F("half-open-probes", CFG_UINT, 1, BRK_MAX_PROBES, half_open_probes,
	      BRK_CFG_HALF_OPEN_PROBES),
	CFG_F("success-threshold", CFG_UINT, 1, BRK_MAX_SUCCESS_THRESHOLD, success_threshold,
	      BRK_CFG_SUCCESS_THRESHOLD),
	CFG_F("probe-timeout", CFG_DUR, 0, 0, probe_timeout_ms,
	      BRK_CFG_PROBE_TIMEOUT_MS),
	CFG_F("max-wait", CFG_DUR, 0, 0, max_wait_ms, BRK_CFG_MAX_WAIT_MS),
	CFG_F("max-concurrent", CFG_UINT, 0, BRK_MAX_CONCURRENT, max_concurrent,
	      BRK_CFG_MAX_CONCURRENT),
	CFG_F("failure-rate", CFG_PCT, 0, 100, failure_rate_pct,
	      BRK_CFG_FAILURE_RATE_PCT),
	CFG_F("window", CFG_DUR, 0, 0, window_ms, BRK_CFG_WINDOW_MS),
	CFG_F("min-calls", CFG_UINT, 1, BRK_MAX_MIN_CALLS, min_calls, BRK_CFG_MIN_CALLS),
	CFG_F("slow-call", CFG_DUR, 0, 0, slow_call_ms, BRK_CFG_SLOW_CALL_MS),
	CFG_F("slow-rate", CFG_PCT, 0, 100, slow_rate_pct, BRK_CFG_SLOW_RATE_PCT),
	CFG_F("min-distinct-processes", CFG_UINT, 0, BRK_MAX_QUORUM,
	      min_distinct_processes, BRK_CFG_MIN_DISTINCT_PROCESSES),
	CFG_F("reserve", CFG_PCT, 0, BRK_MAX_RESERVE_PCT, reserve_pct,
	      BRK_CFG_RESERVE_PCT),
};

#define CFG_N (sizeof(cfg_fields) / sizeof(cfg_fields[0]))

/* The settings given on the command line. */
struct cfg_set {
	uint64_t val[CFG_N];
	uint32_t mask;
};

static uint64_t cfg_get(const struct brk_config *c, const struct cfg_field *f)
{
	uint64_t v = 0;

	(void)brk_config_field_get(c, f->bit, &v);
	return v;
}

static void cfg_put(struct brk_config *c, const struct cfg_field *f, uint64_t v)
{
	(void)brk_config_field_set(c, f->bit, v); /* values are range-checked */
}

/* The library's bits of the settings given. */
static uint64_t cfg_bits(const struct cfg_set *set)
{
	uint64_t bits = 0;
	size_t i;

	for (i = 0; i < CFG_N; i++)
		if (set->mask & (1u << i))
			bits |= cfg_fields[i].bit;
	return bits;
}

/* Apply @set to @c; returns how many settings changed. */
static int cfg_apply(struct brk_config *c, const struct cfg_set *set)
{
	size_t i;
	int changed = 0;

	for (i = 0; i < CFG_N; i++) {
		if (!(set->mask & (1u << i)) ||
		    cfg_get(c, &cfg_fields[i]) == set->val[i])
			continue;
		cfg_put(c, &cfg_fields[i], set->val[i]);
		changed++;
	}
	return changed;
}

/* One option value into set->val[i]. Returns 0 or CLI_EXIT_USAGE. */
static int cfg_parse_value(size_t i, const char *arg, struct cfg_set *set)
{
	const struct cfg_field *f = &cfg_fields[i];
	char opt[40];

	snprintf(opt, sizeof(opt), "--%s", f->opt);
	set->mask |= 1u << i;
	if (f->kind == CFG_DUR && strcmp(arg, "off") == 0 &&
	    strcmp(f->key, "slow_call_ms") == 0) {
		set->val[i] = 0;
		return 0;
	}
	if (f->kind == CFG_DUR)
		return cli_opt_duration(opt, arg, &set->val[i]);
	if (f->kind == CFG_PCT)
		return cli_opt_pct(opt, arg, f->min, f->max, &set->val[i]);
	return cli_opt_uint(opt, arg, f->min, f->max, &set->val[i]);
}

static const struct option *cfg_longopts(void)
{
	static struct option lo[CFG_N + 4];
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
	const struct option *lo = cfg_longopts();
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", lo)) != -1) {
		if (c >= BCTL_OPT_FIRST_CMD && c < BCTL_OPT_FIRST_CMD + (int)CFG_N) {
			rc = cfg_parse_value((size_t)(c - BCTL_OPT_FIRST_CMD), optarg, set);
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

static const char *cfg_hint(const char *key)
{
	if (strcmp(key, "max_open_ms") == 0 || strcmp(key, "open_ms") == 0)
		return " (need 1ms <= open <= max-open)";
	if (strcmp(key, "slow_rate_pct") == 0 || strcmp(key, "slow_call_ms") == 0)
		return " (--slow-call needs --slow-rate 1-100)";
	if (strcmp(key, "min_calls") == 0 || strcmp(key, "window_ms") == 0 ||
	    strcmp(key, "failure_rate_pct") == 0)
		return " (see --failure-rate, --window, --min-calls)";
	return "";
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
	struct brk_config c;
	const char *what = NULL;
	brk_breaker *b;
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
	c = in.config;
	if (cfg_apply(&c, set) == 0) {
		printf("%s: %s\n", name, created ? "created" : "unchanged");
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
	printf("%s: updated\n", name);
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
