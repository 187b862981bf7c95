/*
 * limit_opts.c - the settings of breakers, buckets, retry budgets and
 * paces, and the parser of each value. See limit_opts.h.
 */
#include "limit_opts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

/* ---- breakers ------------------------------------------------------------ */

#define CFG_F(opt, kind, min, max, field, bit) { opt, #field, kind, min, max, bit }

const struct cfg_field cfg_fields[] = {
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
	CFG_F("max-concurrent", CFG_MC, 0, BRK_MAX_CONCURRENT, max_concurrent,
	      BRK_CFG_MAX_CONCURRENT),
	CFG_F("min-concurrent", CFG_UINT, 1, BRK_MAX_CONCURRENT, min_concurrent,
	      BRK_CFG_MIN_CONCURRENT),
	CFG_F("concurrency-auto", CFG_AUTO, 0, 1, concurrency_auto,
	      BRK_CFG_CONCURRENCY_AUTO),
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
	CFG_F("hold-histogram", CFG_BOOL, 0, 1, hold_histogram,
	      BRK_CFG_HOLD_HISTOGRAM),
	CFG_F("fleet", CFG_BOOL, 0, 1, fleet, BRK_CFG_FLEET),
	CFG_F("fleet-probe", CFG_BOOL, 0, 1, fleet_probe, BRK_CFG_FLEET_PROBE),
	CFG_F("implicit-pace", CFG_BOOL, 0, 1, implicit_pace, BRK_CFG_IMPLICIT_PACE),
};

const size_t cfg_n = sizeof(cfg_fields) / sizeof(cfg_fields[0]);

_Static_assert(sizeof(cfg_fields) / sizeof(cfg_fields[0]) <= CFG_MAX_FIELDS,
	       "cfg_set.mask holds one bit per field");

uint64_t cfg_get(const struct brk_config *c, const struct cfg_field *f)
{
	uint64_t v = 0;

	(void)brk_config_field_get(c, f->bit, &v);
	return v;
}

static void cfg_put(struct brk_config *c, const struct cfg_field *f, uint64_t v)
{
	(void)brk_config_field_set(c, f->bit, v); /* values are range-checked */
}

void cfg_fleet_notes(brk_segment *seg, const char *name,
		     const struct brk_config *c, const struct cfg_set *set)
{
	if (!(cfg_bits(set) & (BRK_CFG_FLEET | BRK_CFG_FLEET_PROBE)))
		return;
	if (c->fleet_probe && !c->fleet) {
		cli_note("%s: fleet_probe acts only with fleet on", name);
		return;
	}
	if (c->fleet)
		cfg_fleet_link_note(seg, name);
}

void cfg_fleet_link_note(brk_segment *seg, const char *name)
{
	struct brk_fleet_status st;

	/* An unreadable status (corrupt, contended) says nothing either way:
	 * no note. */
	if (seg && brk_fleet_status(seg, &st) == 0 && st.state == BRK_FLEET_OFF)
		cli_note("%s: no breakerd --fleet link on this segment now "
			 "(fleet link: %s): the setting takes effect when one runs",
			 name, brk_fleet_state_name((int)st.state));
}

uint64_t cfg_bits(const struct cfg_set *set)
{
	uint64_t bits = 0;
	size_t i;

	for (i = 0; i < cfg_n; i++)
		if (set->mask & (1u << i))
			bits |= cfg_fields[i].bit;
	return bits;
}

int cfg_apply(struct brk_config *c, const struct cfg_set *set)
{
	size_t i;
	int changed = 0;

	for (i = 0; i < cfg_n; i++) {
		if (!(set->mask & (1u << i)) ||
		    cfg_get(c, &cfg_fields[i]) == set->val[i])
			continue;
		cfg_put(c, &cfg_fields[i], set->val[i]);
		changed++;
	}
	return changed;
}

/* max_concurrent: N (a fixed bulkhead, 0 = none), auto (a limit learned
 * from latency, docs/design/limits.md "Adaptive concurrency", up to
 * BRK_MAX_CONCURRENT) or auto:N (learned, at most N). Sets
 * concurrency_auto too: a number turns a learned limit off. */
static int cfg_parse_mc(size_t i, const char *label, const char *arg,
			struct cfg_set *set)
{
	size_t k;
	int rc = 0, is_auto = strncmp(arg, "auto", 4) == 0 &&
			      (arg[4] == '\0' || arg[4] == ':');

	if (is_auto && arg[4] == ':')
		rc = cli_opt_uint(label, arg + 5, 1, BRK_MAX_CONCURRENT, &set->val[i]);
	else if (is_auto)
		set->val[i] = 0;
	else if (arg[0] < '0' || arg[0] > '9')
		return cli_usage_error("%s: '%s' is not a number 0-%u, auto or "
				       "auto:N", label, cli_q(arg), BRK_MAX_CONCURRENT);
	else
		rc = cli_opt_uint(label, arg, 0, BRK_MAX_CONCURRENT, &set->val[i]);
	if (rc)
		return rc;
	for (k = 0; k < cfg_n; k++)
		if (cfg_fields[k].kind == CFG_AUTO) {
			set->mask |= 1u << k;
			set->val[k] = (uint64_t)is_auto;
		}
	return 0;
}

int cfg_parse_value(size_t i, const char *label, const char *arg,
		    struct cfg_set *set)
{
	const struct cfg_field *f = &cfg_fields[i];

	set->mask |= 1u << i;
	if (f->kind == CFG_DUR && strcmp(arg, "off") == 0 &&
	    strcmp(f->key, "slow_call_ms") == 0) {
		set->val[i] = 0;
		return 0;
	}
	if (f->kind == CFG_BOOL) {
		if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0) {
			set->val[i] = arg[1] == 'n';
			return 0;
		}
		return cli_usage_error("%s: '%s' is not on or off", label, cli_q(arg));
	}
	if (f->kind == CFG_MC)
		return cfg_parse_mc(i, label, arg, set);
	if (f->kind == CFG_DUR)
		return cli_opt_duration(label, arg, &set->val[i]);
	if (f->kind == CFG_PCT)
		return cli_opt_pct(label, arg, f->min, f->max, &set->val[i]);
	return cli_opt_uint(label, arg, f->min, f->max, &set->val[i]);
}

int cfg_opt(const char *key, const char *label, const char *arg,
	    struct cfg_set *set)
{
	size_t i;

	for (i = 0; i < cfg_n; i++)
		if (cfg_fields[i].kind != CFG_AUTO &&
		    strcmp(cfg_fields[i].opt, key) == 0)
			return cfg_parse_value(i, label, arg, set);
	return -ENOENT;
}

const char *cfg_hint(const char *key)
{
	if (strcmp(key, "max_open_ms") == 0 || strcmp(key, "open_ms") == 0)
		return " (need 1ms <= open <= max-open)";
	if (strcmp(key, "slow_rate_pct") == 0 || strcmp(key, "slow_call_ms") == 0)
		return " (--slow-call needs --slow-rate 1-100)";
	if (strcmp(key, "min_calls") == 0 || strcmp(key, "window_ms") == 0 ||
	    strcmp(key, "failure_rate_pct") == 0)
		return " (see --failure-rate, --window, --min-calls)";
	if (strcmp(key, "min_concurrent") == 0 || strcmp(key, "concurrency_auto") == 0)
		return " (need 1 <= min-concurrent <= max-concurrent's bound with "
		       "--max-concurrent auto or auto:N)";
	return "";
}

const struct cfg_field *cfg_field_by_key(const char *key)
{
	size_t i;

	for (i = 0; key && i < cfg_n; i++)
		if (strcmp(cfg_fields[i].key, key) == 0)
			return &cfg_fields[i];
	return NULL;
}

/* ---- strict decimals ----------------------------------------------------- */

enum dec_err { DEC_OK, DEC_GARBAGE, DEC_NONFINITE, DEC_HUGE, DEC_NEGATIVE };

/*
 * A decimal number, all of @s: digits, an optional fraction and exponent
 * (strtod's grammar without space, hex, inf and nan). A leading '-' is
 * parsed, so "-1" is reported as negative rather than as garbage.
 */
static enum dec_err dec_parse(const char *s, double *v)
{
	const char *p = s[0] == '-' || s[0] == '+' ? s + 1 : s;
	char *end;

	if (*p == '\0' || strspn(p, "0123456789.eE+-") != strlen(p) ||
	    !(*p == '.' || (*p >= '0' && *p <= '9'))) {
		errno = 0;
		*v = strtod(s, &end);
		/* "inf", "nan", "infinity": numbers, but not finite ones */
		if (end != s && *end == '\0' && !isfinite(*v))
			return DEC_NONFINITE;
		return DEC_GARBAGE;
	}
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end != '\0')
		return DEC_GARBAGE;
	if (!isfinite(*v) || (errno == ERANGE && (*v > 1.0 || *v < -1.0)))
		return DEC_HUGE;
	if (s[0] == '-' && *v != 0.0)
		return DEC_NEGATIVE;
	if (*v == 0.0)
		*v = 0.0; /* "-0" */
	return DEC_OK;
}

int cli_opt_decimal(const char *opt, const char *s, int zero_ok,
		    double min_pos, double max, const char *what, double *out)
{
	double v = 0.0;

	switch (dec_parse(s, &v)) {
	case DEC_GARBAGE:
		return cli_usage_error("%s: '%s' is not a number (%s, e.g. 5 or 0.5)",
				       opt, cli_q(s), what);
	case DEC_NONFINITE:
		return cli_usage_error("%s: '%s' is not a finite number (%s)",
				       opt, cli_q(s), what);
	case DEC_HUGE:
		return cli_usage_error("%s: '%s' is out of range (at most %g %s)",
				       opt, cli_q(s), max, what);
	case DEC_NEGATIVE:
		return cli_usage_error("%s: '%s' is negative: must be %s (%s)",
				       opt, cli_q(s), zero_ok ? "0 or more" :
				       "greater than 0", what);
	case DEC_OK:
		break;
	}
	if (v == 0.0 && !zero_ok)
		return cli_usage_error("%s: '%s' must be greater than 0 (%s)",
				       opt, cli_q(s), what);
	if ((v != 0.0 && v < min_pos) || v > max)
		return cli_usage_error("%s: '%s' is out of range (%s%g..%g %s)",
				       opt, cli_q(s), zero_ok ? "0 or " : "",
				       min_pos, max, what);
	*out = v;
	return 0;
}

/* ---- buckets, budgets, paces --------------------------------------------- */

/* A whole number that may not be negative: "-1" says so. */
static int uint_nonneg(const char *label, const char *s, uint64_t min,
		       uint64_t max, const char *what, uint64_t *v)
{
	if (s[0] == '-')
		return cli_usage_error("%s: '%s' is negative: must be %" PRIu64
				       "..%" PRIu64 " %s", label, cli_q(s), min,
				       max, what);
	return cli_opt_uint(label, s, min, max, v);
}

uint64_t bucket_interval_ns(double rate)
{
	return (uint64_t)(1e9 / rate + 0.5);
}

int budget_milli_eq(double a, double b)
{
	return (int64_t)(a * 1000.0 + 0.5) == (int64_t)(b * 1000.0 + 0.5);
}

int bucket_opt(const char *key, const char *label, const char *arg,
	       struct bucket_set *a)
{
	if (strcmp(key, "rate") == 0) {
		a->has_rate = 1;
		return cli_opt_decimal(label, arg, 0, BRK_BUCKET_MIN_RATE,
				       BRK_BUCKET_MAX_RATE, "tokens per second",
				       &a->rate);
	}
	if (strcmp(key, "burst") == 0) {
		a->has_burst = 1;
		return uint_nonneg(label, arg, 1, BRK_BUCKET_MAX_BURST, "tokens",
				   &a->burst);
	}
	return -ENOENT;
}

int budget_opt(const char *key, const char *label, const char *arg,
	       struct budget_set *a)
{
	if (strcmp(key, "floor") == 0) {
		a->has_floor = 1;
		return cli_opt_decimal(label, arg, 1, 0.001, BRK_BUDGET_MAX_FLOOR,
				       "retries per second", &a->floor);
	}
	if (strcmp(key, "ratio") == 0) {
		a->has_ratio = 1;
		return cli_opt_decimal(label, arg, 1, 0.001, BUDGET_CLI_MAX_RATIO,
				       "retries per first attempt", &a->ratio);
	}
	return -ENOENT;
}

int pace_opt(const char *key, const char *label, const char *arg,
	     struct pace_set *a)
{
	uint64_t v = 0;
	int rc;

	if (strcmp(key, "ceiling") == 0) {
		a->fields |= BRK_PACE_F_CEILING;
		return cli_opt_decimal(label, arg, 0, BRK_BUCKET_MIN_RATE,
				       BRK_BUCKET_MAX_RATE, "tokens per second",
				       &a->c.ceiling_per_s);
	}
	if (strcmp(key, "floor") == 0) {
		a->fields |= BRK_PACE_F_FLOOR;
		return cli_opt_decimal(label, arg, 0, BRK_BUCKET_MIN_RATE,
				       BRK_BUCKET_MAX_RATE, "tokens per second",
				       &a->c.floor_per_s);
	}
	if (strcmp(key, "burst") == 0) {
		a->fields |= BRK_PACE_F_BURST;
		rc = uint_nonneg(label, arg, 1, BRK_BUCKET_MAX_BURST, "tokens", &v);
		a->c.burst = (uint32_t)v;
		return rc;
	}
	if (strcmp(key, "reserve") == 0) {
		a->fields |= BRK_PACE_F_RESERVE;
		rc = arg[0] == '-' ? uint_nonneg(label, arg, 0, BRK_PACE_MAX_RESERVE_PCT,
						 "percent of the rate", &v)
			: cli_opt_pct(label, arg, 0, BRK_PACE_MAX_RESERVE_PCT, &v);
		a->c.reserve_pct = (uint32_t)v;
		return rc;
	}
	if (strcmp(key, "fleet") == 0) {
		a->fields |= BRK_PACE_F_FLEET;
		if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0) {
			a->c.fleet = arg[1] == 'n';
			return 0;
		}
		return cli_usage_error("%s: '%s' is not on or off", label, cli_q(arg));
	}
	return -ENOENT;
}

int pace_check(const struct pace_set *a, const char *floor_label,
	       const char *ceiling_label)
{
	if ((a->fields & BRK_PACE_F_CEILING) && (a->fields & BRK_PACE_F_FLOOR) &&
	    a->c.floor_per_s > a->c.ceiling_per_s)
		return cli_usage_error("%s: %g is above %s %g (tokens per second)",
				       floor_label, a->c.floor_per_s, ceiling_label,
				       a->c.ceiling_per_s);
	return 0;
}

/* @v of @f as cfg_changes() says it: "on"/"off" for a switch, else the
 * number (the key names the unit: open_ms, failure_rate_pct). */
static const char *cfg_value_str(const struct cfg_field *f, uint64_t v,
				 char *buf, size_t len)
{
	if (f->kind == CFG_BOOL || f->kind == CFG_AUTO)
		return v ? "on" : "off";
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/* Append "KEY A -> B" (@old) or "KEY B" (@old NULL) for each setting of
 * @set, skipping unchanged ones when @old is given. */
static void cfg_words(const struct brk_config *old, const struct brk_config *new,
		      const struct cfg_set *set, char *buf, size_t len)
{
	char a[24], b[24];
	size_t i, at = 0;
	uint64_t va, vb;
	int n;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < cfg_n && at < len; i++) {
		if (!(set->mask & (1u << i)))
			continue;
		vb = cfg_get(new, &cfg_fields[i]);
		va = old ? cfg_get(old, &cfg_fields[i]) : vb;
		if (old && va == vb)
			continue;
		/* a created line says "concurrency_auto on" only when on (a
		 * number for max_concurrent sets it off: the default) */
		if (!old && cfg_fields[i].kind == CFG_AUTO && vb == 0)
			continue;
		n = snprintf(buf + at, len - at, "%s%s %s%s%s", at ? ", " : "",
			     cfg_fields[i].key,
			     old ? cfg_value_str(&cfg_fields[i], va, a, sizeof(a)) : "",
			     old ? " -> " : "",
			     cfg_value_str(&cfg_fields[i], vb, b, sizeof(b)));
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

void cfg_changes(const struct brk_config *old, const struct brk_config *new,
		 const struct cfg_set *set, char *buf, size_t len)
{
	cfg_words(old, new, set, buf, len);
}

void cfg_list(const struct brk_config *c, const struct cfg_set *set,
	      char *buf, size_t len)
{
	cfg_words(NULL, c, set, buf, len);
}
