/*
 * bctl_limits_out.c - what `bctl list` and `bctl inspect` print for GCRA
 * buckets and retry budgets (records of kind "bucket" and "budget"), in
 * the human and the JSON form. Breakers are bctl_print.c / bctl_json.c.
 *
 * JSON, bucket:
 *   {"name", "kind": "bucket", "configured", "rate_per_s", "burst",
 *    "interval_ns", "tokens", "full_in_ms",
 *    "counters": {"taken", "denied", "tokens_taken"},
 *    and only for a pace (bctl pace) "paced": true and "pace": {"rate",
 *    "ceiling", "floor", "w_max", "reserve_pct", "accepted_per_s",
 *    "last_cut_age_ms" (null: never), "last_denied_age_ms" (null: never),
 *    "counters": {"cuts", "limited", "ok", "high_taken"}}}
 * JSON, budget:
 *   {"name", "kind": "budget", "configured", "floor_per_s", "ratio",
 *    "floor_burst", "balance", "pool", "floor_tokens",
 *    "counters": {"deposits", "retries", "retries_floor", "deferred"},
 *    "signals": {"first_attempts", "retries", "retry_share", "tokens_left"}}
 *   retry_share = retries / (first_attempts + retries), 0 before any.
 * Counters are always printed, zeros included.
 */
#include <inttypes.h>
#include <string.h>

#include "bctl_out.h"


/* JSON integers are signed 64-bit: clamp, never wrap. */
static json_t *ju(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX
						    : (json_int_t)v);
}

/* Fractional token counts, to the milli-token. */
static json_t *jr(double v)
{
	if (!(v > -1e15 && v < 1e15))
		return json_real(v == v ? v : 0.0);
	return json_real((double)(int64_t)(v * 1000.0 + (v < 0 ? -0.5 : 0.5)) /
			 1000.0);
}

static void set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v); /* a NULL @v is dropped */
}

static uint64_t ns_to_ms_up(uint64_t ns)
{
	return ns / 1000000u + (ns % 1000000u != 0);
}

static json_t *json_head(const struct brk_info *in, const char *kind,
			 int configured)
{
	char name[BRK_NAME_MAX + 1];
	json_t *o = json_object();

	if (!o)
		return NULL;
	bctl_safe_name(in->name, sizeof(in->name), name);
	set(o, "name", json_string(name));
	set(o, "kind", json_string(kind));
	set(o, "configured", json_boolean(configured));
	return o;
}

static json_t *age_or_null(uint64_t ms)
{
	return ms == UINT64_MAX ? json_null() : ju(ms);
}

static json_t *json_pace(const struct brk_bucket_info *k)
{
	json_t *p = json_object(), *c;

	if (!p)
		return NULL;
	set(p, "rate", jr(k->learned_per_s));
	set(p, "ceiling", json_real(k->ceiling_per_s));
	set(p, "floor", json_real(k->floor_per_s));
	set(p, "w_max", jr(k->w_max_per_s));
	set(p, "reserve_pct", ju(k->reserve_pct));
	set(p, "fleet", json_boolean(k->fleet));
	set(p, "implicit", json_boolean(k->implicit));
	set(p, "accepted_per_s", jr(k->accepted_per_s));
	set(p, "last_cut_age_ms", age_or_null(k->last_cut_age_ms));
	set(p, "last_denied_age_ms", age_or_null(k->last_denied_age_ms));
	c = json_object();
	if (c) {
		set(c, "cuts", ju(k->cuts));
		set(c, "limited", ju(k->limited));
		set(c, "ok", ju(k->ok));
		set(c, "high_taken", ju(k->high_taken));
	}
	set(p, "counters", c);
	return p;
}

json_t *bctl_json_bucket(const struct brk_info *in)
{
	const struct brk_bucket_info *k = &in->bucket;
	json_t *o = json_head(in, "bucket", k->configured), *c;

	if (!o)
		return NULL;
	set(o, "rate_per_s", json_real(k->rate_per_s));
	set(o, "burst", ju(k->burst));
	set(o, "interval_ns", ju(k->interval_ns));
	set(o, "tokens", jr(k->tokens));
	set(o, "full_in_ms", ju(ns_to_ms_up(k->full_in_ns)));
	c = json_object();
	if (c) {
		set(c, "taken", ju(k->taken));
		set(c, "denied", ju(k->denied));
		set(c, "tokens_taken", ju(k->tokens_taken));
	}
	set(o, "counters", c);
	/* only paces carry the keys: a plain bucket's object is unchanged */
	if (k->paced) {
		set(o, "paced", json_true());
		set(o, "pace", json_pace(k));
	}
	return o;
}

json_t *bctl_json_budget(const struct brk_info *in)
{
	const struct brk_budget_info *u = &in->budget;
	json_t *o = json_head(in, "budget", u->configured), *c;

	if (!o)
		return NULL;
	set(o, "floor_per_s", json_real(u->floor_per_s));
	set(o, "ratio", json_real(u->ratio));
	set(o, "floor_burst", ju(u->floor_burst));
	set(o, "balance", jr(u->balance));
	set(o, "pool", jr(u->pool));
	set(o, "floor_tokens", jr(u->floor_tokens));
	c = json_object();
	if (c) {
		set(c, "deposits", ju(u->deposits));
		set(c, "retries", ju(u->retries));
		set(c, "retries_floor", ju(u->retries_floor));
		set(c, "deferred", ju(u->deferred));
	}
	set(o, "counters", c);
	c = json_object();
	if (c) {
		uint64_t all = u->deposits + u->retries;

		set(c, "first_attempts", ju(u->deposits));
		set(c, "retries", ju(u->retries));
		set(c, "retry_share", jr(all ? (double)u->retries / (double)all : 0.0));
		set(c, "tokens_left", jr(u->balance));
	}
	set(o, "signals", c);
	return o;
}

json_t *bctl_json_record(const struct brk_info *in)
{
	if (in->kind == BRK_KIND_BUCKET)
		return bctl_json_bucket(in);
	if (in->kind == BRK_KIND_BUDGET)
		return bctl_json_budget(in);
	return bctl_json_breaker(in);
}

/* ---- human form ---------------------------------------------------------- */

static void print_head(FILE *f, const struct brk_info *in, const char *kind,
		       int configured)
{
	char name[BRK_NAME_MAX + 1];

	bctl_safe_name(in->name, sizeof(in->name), name);
	bctl_kv(f, 0, "name", "%s", name);
	bctl_kv(f, 0, "kind", "%s%s", kind,
	   configured ? "" : " (being created: no settings yet)");
}

void bctl_print_bucket(FILE *f, const struct brk_info *in)
{
	const struct brk_bucket_info *k = &in->bucket;

	print_head(f, in, k->paced ? "pace (a paced bucket)" : "bucket",
		   k->configured);
	bctl_kv(f, 0, "tokens", "%.3f of %" PRIu32 " available now", k->tokens,
	   k->burst);
	bctl_kv(f, 0, "rate_per_s", "%g", k->rate_per_s);
	bctl_kv(f, 0, "burst", "%" PRIu32, k->burst);
	bctl_kv(f, 0, "interval_ns", "%" PRIu64, k->interval_ns);
	bctl_kv(f, 0, "full_in_ms", "%" PRIu64, ns_to_ms_up(k->full_in_ns));
	fprintf(f, "counters:\n");
	bctl_kv(f, 2, "taken", "%" PRIu64, k->taken);
	bctl_kv(f, 2, "denied", "%" PRIu64, k->denied);
	bctl_kv(f, 2, "tokens_taken", "%" PRIu64, k->tokens_taken);
	if (!k->paced)
		return;
	fprintf(f, "pace:\n");
	bctl_kv(f, 2, "rate", "%.3f/s (learned; ceiling %g/s, floor %g/s)",
		k->learned_per_s, k->ceiling_per_s, k->floor_per_s);
	if (k->last_cut_age_ms == UINT64_MAX)
		bctl_kv(f, 2, "last_cut", "never (running at the ceiling)");
	else
		bctl_kv(f, 2, "last_cut", "%" PRIu64 " ms ago, found the limit "
			"%.3f/s", k->last_cut_age_ms, k->w_max_per_s);
	if (k->implicit)
		bctl_kv(f, 2, "implicit", "yes (made by its breaker at the first "
			"rate-limit answer; 'bctl config BREAKER --implicit-pace off' "
			"turns it off)");
	bctl_kv(f, 2, "reserve_pct", "%" PRIu32 " (of the rate, for high priority)",
		k->reserve_pct);
	bctl_kv(f, 2, "fleet", "%s", k->fleet ? "on" : "off");
	bctl_kv(f, 2, "accepted_per_s", "%.3f (successes in the last second)",
		k->accepted_per_s);
	if (k->last_denied_age_ms == UINT64_MAX)
		bctl_kv(f, 2, "last_denied", "never");
	else
		bctl_kv(f, 2, "last_denied", "%" PRIu64 " ms ago", k->last_denied_age_ms);
	bctl_kv(f, 2, "cuts", "%" PRIu64, k->cuts);
	bctl_kv(f, 2, "limited", "%" PRIu64, k->limited);
	bctl_kv(f, 2, "ok", "%" PRIu64, k->ok);
	bctl_kv(f, 2, "high_taken", "%" PRIu64, k->high_taken);
}

void bctl_print_budget(FILE *f, const struct brk_info *in)
{
	const struct brk_budget_info *u = &in->budget;

	print_head(f, in, "budget", u->configured);
	bctl_kv(f, 0, "balance", "%.3f retries available now (pool %.3f + floor %.3f)",
	   u->balance, u->pool, u->floor_tokens);
	bctl_kv(f, 0, "floor_per_s", "%g", u->floor_per_s);
	bctl_kv(f, 0, "floor_burst", "%" PRIu32, u->floor_burst);
	bctl_kv(f, 0, "ratio", "%g per first attempt", u->ratio);
	fprintf(f, "counters:\n");
	bctl_kv(f, 2, "deposits", "%" PRIu64, u->deposits);
	bctl_kv(f, 2, "retries", "%" PRIu64, u->retries);
	bctl_kv(f, 2, "retries_floor", "%" PRIu64, u->retries_floor);
	bctl_kv(f, 2, "deferred", "%" PRIu64, u->deferred);
}

void bctl_print_record(FILE *f, const struct brk_info *in)
{
	if (in->kind == BRK_KIND_BUCKET)
		bctl_print_bucket(f, in);
	else if (in->kind == BRK_KIND_BUDGET)
		bctl_print_budget(f, in);
	else
		bctl_print_breaker(f, in);
}

/* One line of `bctl list`: the kind in the STATE column, then a summary. */
void bctl_print_record_row(FILE *f, const struct brk_info *in)
{
	char name[BRK_NAME_MAX + 1];
	const struct brk_bucket_info *k = &in->bucket;
	const struct brk_budget_info *u = &in->budget;

	if (in->kind != BRK_KIND_BUCKET && in->kind != BRK_KIND_BUDGET) {
		bctl_print_list_row(f, in);
		return;
	}
	bctl_safe_name(in->name, sizeof(in->name), name);
	if (in->kind == BRK_KIND_BUCKET && k->paced)
		fprintf(f, "%-*s %-9s rate %.3f/s (ceiling %g/s, floor %g/s), "
			"tokens %.3f of %" PRIu32 ", cuts %" PRIu64 ", limited %"
			PRIu64 ", taken %" PRIu64 ", denied %" PRIu64 "\n",
			BCTL_NAME_WIDTH, name, "pace", k->learned_per_s,
			k->ceiling_per_s, k->floor_per_s, k->tokens, k->burst,
			k->cuts, k->limited, k->taken, k->denied);
	else if (in->kind == BRK_KIND_BUCKET)
		fprintf(f, "%-*s %-9s tokens %.3f of %" PRIu32 ", rate %g/s, "
			"taken %" PRIu64 ", denied %" PRIu64 "\n", BCTL_NAME_WIDTH,
			name, "bucket", k->tokens, k->burst, k->rate_per_s,
			k->taken, k->denied);
	else
		fprintf(f, "%-*s %-9s balance %.3f, floor %g/s, ratio %g, "
			"deposits %" PRIu64 ", retries %" PRIu64 ", deferred %"
			PRIu64 "\n", BCTL_NAME_WIDTH, name, "budget", u->balance,
			u->floor_per_s, u->ratio, u->deposits, u->retries,
			u->deferred);
}
