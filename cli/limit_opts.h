/*
 * limit_opts.h - the settings of breakers, buckets, retry budgets and
 * paces as named on bctl's command line, with the one parser of each
 * value. Shared by bctl's commands (config, bucket, budget, pace) and the
 * breakers file (breakers_file.c, used by `bctl apply` and breakerd), so
 * a setting has one name, one range and one message everywhere.
 *
 * Keys are the long option names without "--" ("failure-threshold");
 * the breakers file writes them with '_' for '-'. Each *_opt() returns 0,
 * CLI_EXIT_USAGE (a one-line usage error naming @label was printed) or
 * -ENOENT (no such setting for that kind; nothing printed).
 */
#ifndef LIMIT_OPTS_H
#define LIMIT_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "breaker.h"

/* ---- breakers (bctl config) ---- */

#define CFG_MAX_FIELDS 32

struct cfg_field {
	const char *opt;  /* long option */
	const char *key;  /* struct brk_config member (the library's name) */
	int kind;         /* CFG_UINT, CFG_DUR, CFG_PCT, CFG_BOOL */
	uint64_t min, max;
	uint64_t bit;     /* enum brk_config_field */
};

enum cfg_kind { CFG_UINT, CFG_DUR, CFG_PCT, CFG_BOOL /* on|off: 1|0 */,
	       CFG_MC,   /* max_concurrent: N, auto or auto:N (sets CFG_AUTO) */
	       CFG_AUTO  /* concurrency_auto: no option or key of its own;
			    set by CFG_MC's value (auto: 1, a number: 0) */ };

extern const struct cfg_field cfg_fields[];
extern const size_t cfg_n;

/* The settings given (a command line, or a [breaker NAME] section). */
struct cfg_set {
	uint64_t val[CFG_MAX_FIELDS];
	uint32_t mask;
};

uint64_t cfg_get(const struct brk_config *c, const struct cfg_field *f);
/** cfg_bits - the library's enum brk_config_field bits of @set. */
uint64_t cfg_bits(const struct cfg_set *set);
/**
 * cfg_fleet_notes - when @set gives fleet or fleet_probe and the result @c
 * does nothing yet, a note on stderr (cli_note(), "prog: NAME: ..."):
 * fleet_probe on with fleet off: "fleet_probe acts only with fleet on";
 * else fleet on while @seg (may be NULL: not checked) has no breakerd
 * --fleet link now (brk_fleet_status() state off): "no breakerd --fleet
 * link on this segment now (fleet link: off): the setting takes effect
 * when one runs". At most one note; nothing else changes. bctl config and
 * bctl apply (one per section).
 */
void cfg_fleet_notes(brk_segment *seg, const char *name,
		     const struct brk_config *c, const struct cfg_set *set);

/* The note of cfg_fleet_notes() for a record made fleet-wide (a breaker,
 * or a pace by `bctl pace --fleet on`) on a segment whose fleet link is
 * off now; nothing when it runs or its status cannot be read. */
void cfg_fleet_link_note(brk_segment *seg, const char *name);
/** cfg_apply - write @set into @c; returns how many settings changed. */
int cfg_apply(struct brk_config *c, const struct cfg_set *set);
/** cfg_parse_value - value of cfg_fields[@i] into @set; @label names it
 * in the message. 0 or CLI_EXIT_USAGE. */
int cfg_parse_value(size_t i, const char *label, const char *arg,
		    struct cfg_set *set);
/** cfg_opt - cfg_parse_value() of the setting named @key. */
int cfg_opt(const char *key, const char *label, const char *arg,
	    struct cfg_set *set);
/** cfg_hint - the hint after "invalid setting KEY" (" (need ...)" or ""). */
const char *cfg_hint(const char *key);
/** cfg_field_by_key - the field of the library's member name @key, or NULL. */
const struct cfg_field *cfg_field_by_key(const char *key);
/**
 * cfg_changes - the settings of @set whose value differs between @old and
 * @new, as bctl apply and bctl config say them: "failure_threshold 5 -> 3,
 * hold_histogram off -> on" into @buf ("" if none; cut to @len).
 */
void cfg_changes(const struct brk_config *old, const struct brk_config *new,
		 const struct cfg_set *set, char *buf, size_t len);
/**
 * cfg_list - the settings of @set with their value in @c, in the words of
 * cfg_changes(): "failure_threshold 3, hold_histogram on" ("" if none).
 */
void cfg_list(const struct brk_config *c, const struct cfg_set *set,
	      char *buf, size_t len);

/* ---- strict decimals (rates, ratios) ---- */

/**
 * cli_opt_decimal - a strict decimal value: no hex, inf, nan or trailing
 * text; @min_pos .. @max, 0 only if @zero_ok; @what says what it counts.
 * 0 or CLI_EXIT_USAGE (one line naming @opt).
 */
int cli_opt_decimal(const char *opt, const char *s, int zero_ok,
		    double min_pos, double max, const char *what, double *out);

/* ---- buckets (bctl bucket) ---- */

struct bucket_set {
	double rate;
	uint64_t burst;
	int has_rate, has_burst;
};

/** bucket_interval_ns - the emission interval the library stores for
 * @rate tokens/s (see breaker.h), to tell "unchanged". */
uint64_t bucket_interval_ns(double rate);

/** bucket_opt - "rate" (tokens/s) or "burst" (tokens). */
int bucket_opt(const char *key, const char *label, const char *arg,
	       struct bucket_set *a);

/* ---- retry budgets (bctl budget) ---- */

#define BUDGET_CLI_MAX_RATIO 1.0 /* a retry per first attempt at most */

struct budget_set {
	double floor, ratio;
	int has_floor, has_ratio;
};

/** budget_milli_eq - the library stores a budget's floor and ratio to
 * the nearest 0.001: equal there. */
int budget_milli_eq(double a, double b);

/** budget_opt - "floor" (retries/s) or "ratio" (retries per first attempt). */
int budget_opt(const char *key, const char *label, const char *arg,
	       struct budget_set *a);

/* ---- paces (bctl pace) ---- */

struct pace_set {
	struct brk_pace_config c; /* brk_pace_config_init() first */
	unsigned fields;          /* enum brk_pace_field: the settings given */
};

/** pace_opt - "ceiling", "floor" (tokens/s), "burst", "reserve" (percent),
 * "fleet" (on|off). */
int pace_opt(const char *key, const char *label, const char *arg,
	     struct pace_set *a);
/** pace_check - a floor above the ceiling, both given: usage error
 * naming @floor_label and @ceiling_label; else 0. */
int pace_check(const struct pace_set *a, const char *floor_label,
	       const char *ceiling_label);

#endif /* LIMIT_OPTS_H */
