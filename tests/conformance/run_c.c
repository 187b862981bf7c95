/*
 * run_c.c - the conformance runner for the C API: runs every scenario of
 * the JSON files named on the command line (tests/conformance/scenarios/)
 * on libbreaker with an injected fake clock, one private segment per
 * scenario. The format is described in tests/conformance/README.md; the
 * Python and Ruby runners read the same files.
 *
 * Exit 0 when every scenario passed (or was skipped with its reason), 1
 * otherwise. One line per scenario: "ok", "not ok" with the step and what
 * differed, or "skip" with the reason.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "breaker.h"

#define LANG "c"
#define MAX_RECORDS 8
#define MAX_HELD 16

struct rec {
	const char *name;
	int kind; /* enum brk_kind; a pace is a BRK_KIND_BUCKET */
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *g;
};

struct held {
	const char *as;
	int is_token;          /* 1: a pace token, 0: a breaker permit */
	int is_admission;      /* 1: a brk_admit() GO (adm) */
	struct brk_admission adm;
	brk_permit p;
	brk_bucket *k;
	uint64_t taken_at_ns;
};

struct run {
	brk_segment *seg;
	uint64_t now_ns;       /* the fake clock, read by the library */
	struct rec recs[MAX_RECORDS];
	size_t nrecs;
	struct held held[MAX_HELD];
	size_t nheld;
	char err[512];         /* the first mismatch */
};

static uint64_t fake_clock(void *ctx)
{
	return __atomic_load_n((uint64_t *)ctx, __ATOMIC_ACQUIRE);
}

__attribute__((format(printf, 2, 3)))
static int fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->err[0]) {
		va_start(ap, fmt);
		vsnprintf(r->err, sizeof(r->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static struct rec *rec_of(struct run *r, const char *name)
{
	for (size_t i = 0; i < r->nrecs; i++)
		if (!strcmp(r->recs[i].name, name))
			return &r->recs[i];
	return NULL;
}

static struct held *held_of(struct run *r, const char *as)
{
	for (size_t i = 0; i < r->nheld; i++)
		if (!strcmp(r->held[i].as, as))
			return &r->held[i];
	return NULL;
}

/* A duration of the data: a string for brk_parse_duration(), or ms. */
static int duration_ms(json_t *v, uint64_t *ms)
{
	if (json_is_string(v))
		return brk_parse_duration(json_string_value(v), ms);
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*ms = (uint64_t)json_integer_value(v);
		return 0;
	}
	return -EINVAL;
}

/* A setting of the bindings' vocabulary ("open", "failure_rate": the
 * Python/Ruby keyword) to its brk_config member: the name itself, or the
 * name with _ms (a duration) or _pct (a percentage). */
static int set_setting(struct brk_config *c, const char *name, json_t *v)
{
	char field[80];
	uint64_t bit, val;

	snprintf(field, sizeof(field), "%s_ms", name);
	if (!brk_config_field_lookup(field, &bit)) {
		if (duration_ms(v, &val))
			return -EINVAL;
		return brk_config_field_set(c, bit, val);
	}
	snprintf(field, sizeof(field), "%s_pct", name);
	if (brk_config_field_lookup(field, &bit) && brk_config_field_lookup(name, &bit))
		return -EINVAL;
	if (json_is_true(v) || json_is_false(v))
		return brk_config_field_set(c, bit, json_is_true(v));
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -EINVAL;
	return brk_config_field_set(c, bit, (uint64_t)json_integer_value(v));
}

static int make_record(struct run *r, const char *name, json_t *spec)
{
	const char *kind = json_string_value(json_object_get(spec, "kind"));
	struct rec *x = &r->recs[r->nrecs];
	int rc = -EINVAL;

	if (!kind || r->nrecs == MAX_RECORDS)
		return fail(r, "record %s: no kind, or too many records", name);
	x->name = name;
	if (!strcmp(kind, "breaker")) {
		struct brk_config c;
		const char *key;
		json_t *v;

		brk_config_init(&c);
		json_object_foreach(json_object_get(spec, "settings"), key, v)
			if (set_setting(&c, key, v))
				return fail(r, "record %s: bad setting %s", name, key);
		x->kind = BRK_KIND_BREAKER;
		rc = brk_breaker_get(r->seg, name, &c, &x->b);
	} else if (!strcmp(kind, "bucket")) {
		x->kind = BRK_KIND_BUCKET;
		rc = brk_bucket_get(r->seg, name,
				    json_number_value(json_object_get(spec, "rate")),
				    (uint32_t)json_integer_value(json_object_get(spec, "burst")),
				    &x->k);
	} else if (!strcmp(kind, "pace")) {
		struct brk_pace_config pc;

		brk_pace_config_init(&pc);
		pc.ceiling_per_s = json_number_value(json_object_get(spec, "ceiling"));
		if (json_object_get(spec, "floor"))
			pc.floor_per_s = json_number_value(json_object_get(spec, "floor"));
		if (json_object_get(spec, "burst"))
			pc.burst = (uint32_t)json_integer_value(json_object_get(spec, "burst"));
		x->kind = BRK_KIND_BUCKET;
		rc = brk_pace_get(r->seg, name, &pc, &x->k);
	} else if (!strcmp(kind, "budget")) {
		x->kind = BRK_KIND_BUDGET;
		rc = brk_budget_get(r->seg, name,
				    json_number_value(json_object_get(spec, "floor")),
				    json_number_value(json_object_get(spec, "ratio")), &x->g);
	}
	if (rc)
		return fail(r, "record %s (%s): %s", name, kind, brk_strerror(rc));
	r->nrecs++;
	return 0;
}

/* ---- info as the JSON of `bctl inspect --json` (the fields used) ---- */

#define SETU(o, k, v) json_object_set_new((o), (k), json_integer((json_int_t)(v)))

static json_t *breaker_info(brk_breaker *b)
{
	static const char *const reasons[] = { "none", "timeout", "connect", "server_error",
					       "overloaded", "rate_limited", "other" };
	struct brk_info in;
	json_t *o, *w, *c, *fr;

	if (brk_breaker_info(b, &in))
		return NULL;
	o = json_object();
	json_object_set_new(o, "name", json_string(in.name));
	json_object_set_new(o, "state", json_string(brk_state_name(in.state)));
	json_object_set_new(o, "mode", json_string(brk_mode_name(in.mode)));
	SETU(o, "generation", in.generation);
	SETU(o, "consecutive_failures", in.consecutive_failures);
	SETU(o, "failure_streak", in.failure_streak);
	SETU(o, "cooling_level", in.cooling_level);
	SETU(o, "open_remaining_ms", in.open_remaining_ms);
	SETU(o, "cool_until_remaining_ms", in.cool_until_remaining_ms);
	SETU(o, "half_open_successes", in.half_open_successes);
	SETU(o, "probes_in_flight", in.probes_in_flight);
	SETU(o, "in_flight", in.in_flight);
	json_object_set_new(o, "implicit_pace_per_s", in.implicit_pace_per_s > 0.0 ?
			    json_real(in.implicit_pace_per_s) : json_null());
	w = json_object();
	SETU(w, "calls", in.window_calls);
	SETU(w, "failures", in.window_failures);
	SETU(w, "slow", in.window_slow);
	json_object_set_new(o, "window", w);
	c = json_object();
	SETU(c, "allowed", in.counters.allowed);
	SETU(c, "rejected_open", in.counters.rejected_open);
	SETU(c, "rejected_cooling", in.counters.rejected_cooling);
	SETU(c, "rejected_full", in.counters.rejected_full);
	SETU(c, "successes", in.counters.successes);
	SETU(c, "failures", in.counters.failures);
	SETU(c, "healthy_errors", in.counters.healthy_errors);
	SETU(c, "ignored", in.counters.ignored);
	SETU(c, "cancelled", in.counters.cancelled);
	SETU(c, "throttled", in.counters.throttled);
	SETU(c, "probes", in.counters.probes);
	SETU(c, "reclaimed", in.counters.reclaimed);
	SETU(c, "transitions", in.counters.transitions);
	SETU(c, "stale", in.counters.stale);
	fr = json_object();
	for (int i = BRK_REASON_TIMEOUT; i < BRK_REASON_COUNT; i++)
		SETU(fr, reasons[i], in.counters.failures_by_reason[i]);
	json_object_set_new(c, "failures_by_reason", fr);
	json_object_set_new(o, "counters", c);
	return o;
}

static json_t *bucket_info(brk_bucket *k)
{
	struct brk_bucket_info in;
	json_t *o, *c, *p, *pc;

	if (brk_bucket_info(k, &in))
		return NULL;
	o = json_object();
	json_object_set_new(o, "name", json_string(in.name));
	json_object_set_new(o, "rate_per_s", json_real(in.rate_per_s));
	SETU(o, "burst", in.burst);
	json_object_set_new(o, "tokens", json_real(in.tokens));
	c = json_object();
	SETU(c, "taken", in.taken);
	SETU(c, "denied", in.denied);
	SETU(c, "tokens_taken", in.tokens_taken);
	json_object_set_new(o, "counters", c);
	if (in.paced) {
		p = json_object();
		json_object_set_new(p, "rate", json_real(in.learned_per_s));
		json_object_set_new(p, "ceiling", json_real(in.ceiling_per_s));
		json_object_set_new(p, "floor", json_real(in.floor_per_s));
		pc = json_object();
		SETU(pc, "cuts", in.cuts);
		SETU(pc, "limited", in.limited);
		SETU(pc, "ok", in.ok);
		json_object_set_new(p, "counters", pc);
		json_object_set_new(o, "pace", p);
	}
	return o;
}

static json_t *budget_info(brk_budget *g)
{
	struct brk_budget_info in;
	json_t *o, *c;

	if (brk_budget_info(g, &in))
		return NULL;
	o = json_object();
	json_object_set_new(o, "name", json_string(in.name));
	json_object_set_new(o, "balance", json_real(in.balance));
	json_object_set_new(o, "pool", json_real(in.pool));
	c = json_object();
	SETU(c, "deposits", in.deposits);
	SETU(c, "retries", in.retries);
	SETU(c, "retries_floor", in.retries_floor);
	SETU(c, "deferred", in.deferred);
	json_object_set_new(o, "counters", c);
	return o;
}

/* The value at a dotted path ("counters.failures_by_reason.timeout"). */
static json_t *at_path(json_t *o, const char *path)
{
	char buf[128], *save = NULL, *part;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part && o; part = strtok_r(NULL, ".", &save))
		o = json_object_get(o, part);
	return o;
}

/* Does @got match @want: an exact number, string or boolean, or an
 * inclusive range [lo, hi] of numbers (with @slack on each side). */
static int matches(json_t *want, json_t *got, double slack)
{
	if (json_is_array(want)) {
		double lo = json_number_value(json_array_get(want, 0));
		double hi = json_number_value(json_array_get(want, 1));
		double v = json_number_value(got);

		return json_is_number(got) && v >= lo - slack && v <= hi + slack;
	}
	if (json_is_number(want))
		return json_is_number(got) &&
		       fabs(json_number_value(want) - json_number_value(got)) <= slack + 1e-9;
	return json_equal(want, got);
}

static int step_expect(struct run *r, json_t *st)
{
	struct rec *x = rec_of(r, json_string_value(json_object_get(st, "expect")));
	const char *key;
	json_t *want, *info = NULL;
	int rc = 0;

	if (!x)
		return fail(r, "expect: unknown record");
	if (x->kind == BRK_KIND_BREAKER)
		info = breaker_info(x->b);
	else if (x->kind == BRK_KIND_BUCKET)
		info = bucket_info(x->k);
	else
		info = budget_info(x->g);
	if (!info)
		return fail(r, "expect %s: info failed", x->name);
	json_object_foreach(json_object_get(st, "info"), key, want) {
		json_t *got = at_path(info, key);

		if (!got || !matches(want, got, 0)) {
			char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
			char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

			rc = fail(r, "%s: %s is %s, want %s", x->name, key, g ? g : "absent", w);
			free(w);
			free(g);
			break;
		}
	}
	json_decref(info);
	return rc;
}

static const char *class_of(int rc)
{
	switch (-rc) {
	case BRK_EOPEN: case BRK_ECONTENDED: return "CircuitOpen";
	case BRK_ECOOLING: return "Cooling";
	case BRK_EFULL: return "BulkheadFull";
	case BRK_ENOTOKENS: return "NoTokens";
	case BRK_EDEFERRED: return "RetryDeferred";
	case 0: return "admitted";
	default: return brk_strerror(rc);
	}
}

/* Check a gate's answer against the step: admitted unless "refused" says
 * the class; then the cause, the refusing record and the wait. */
static int check_answer(struct run *r, json_t *st, const char *what, int rc,
			const char *cause, const char *by, double wait_ms)
{
	const char *want = json_string_value(json_object_get(st, "refused"));
	json_t *v;

	if (strcmp(class_of(rc), want ? want : "admitted"))
		return fail(r, "%s: %s, want %s", what, class_of(rc), want ? want : "admitted");
	if (!want)
		return 0;
	v = json_object_get(st, "cause");
	if (v && (!cause || strcmp(cause, json_string_value(v))))
		return fail(r, "%s: cause %s, want %s", what, cause ? cause : "none",
			    json_string_value(v));
	v = json_object_get(st, "by");
	if (v && (!by || strcmp(by, json_string_value(v))))
		return fail(r, "%s: by %s, want %s", what, by ? by : "none", json_string_value(v));
	v = json_object_get(st, "wait_ms");
	if (v) {
		json_t *got = json_real(wait_ms);
		int ok = matches(v, got, 1.0);

		json_decref(got);
		if (!ok)
			return fail(r, "%s: wait %.3f ms outside what the step wants", what, wait_ms);
	}
	return 0;
}

static int release_any(struct run *r, json_t *st, brk_permit *p, struct brk_admission *adm,
		       int *counted);

static int outcome_code(const char *s)
{
	static const char *const names[] = { "", "success", "failure", "healthy_error",
					     "rejected_request", "cancelled", "throttled" };

	for (int i = 1; i < 7; i++)
		if (s && !strcmp(s, names[i]))
			return i;
	return -1;
}

static int reason_code(const char *s)
{
	if (!s)
		return BRK_REASON_NONE;
	for (int i = 0; i < BRK_REASON_COUNT; i++)
		if (!strcmp(s, brk_reason_name(i)))
			return i;
	return -1;
}

/* Release @p (or, with @adm, an admission) as the step says: "http"
 * (status + "retry_after" header through brk_http_classify()), or
 * "outcome" / "reason" / "retry_after_ms". */
static int release_as(struct run *r, json_t *st, brk_permit *p, int *counted)
{
	return release_any(r, st, p, NULL, counted);
}

static int release_any(struct run *r, json_t *st, brk_permit *p, struct brk_admission *adm,
		       int *counted)
{
	json_t *http = json_object_get(st, "http");
	int outcome, reason, rc;
	int64_t ra = json_integer_value(json_object_get(st, "retry_after_ms"));

	if (http) {
		struct brk_result res;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		rc = brk_http_classify((int)json_integer_value(http),
				       json_string_value(json_object_get(st, "retry_after")),
				       NULL, 0, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
				       &res);
		if (rc)
			return fail(r, "http %d: %s", (int)json_integer_value(http), brk_strerror(rc));
		outcome = res.outcome;
		reason = res.reason;
		ra = res.retry_after_ms;
	} else {
		outcome = outcome_code(json_string_value(json_object_get(st, "outcome")));
		reason = reason_code(json_string_value(json_object_get(st, "reason")));
		if (outcome < 0 || reason < 0)
			return fail(r, "bad outcome or reason");
		if (outcome == BRK_FAILURE && reason == BRK_REASON_NONE)
			reason = BRK_REASON_SERVER_ERROR; /* the bindings' default */
	}
	rc = adm ? brk_admit_release(adm, outcome, reason, ra) : brk_release(p, outcome, reason, ra);
	if (rc && rc != -BRK_ESTALE)
		return fail(r, "release: %s", brk_strerror(rc));
	*counted = rc == 0;
	return 0;
}

static int acquire(struct run *r, json_t *st, const char *name, brk_permit *p, int *admitted)
{
	struct rec *x = rec_of(r, name);
	struct brk_refusal why;
	char what[128];
	int rc;

	if (!x || x->kind != BRK_KIND_BREAKER)
		return fail(r, "acquire: %s is not a breaker of the scenario", name);
	rc = brk_acquire(x->b, p, &why);
	if (rc && !brk_is_refusal(rc))
		return fail(r, "acquire %s: %s", name, brk_strerror(rc));
	*admitted = rc == 0;
	snprintf(what, sizeof(what), "acquire %s", name);
	return check_answer(r, st, what, rc, rc ? brk_cause_name(why.cause) : NULL,
			    rc ? why.by : NULL, rc ? (double)why.wait_ms : 0);
}

static int step_acquire(struct run *r, json_t *st)
{
	const char *as = json_string_value(json_object_get(st, "as"));
	brk_permit p;
	int admitted;

	if (acquire(r, st, json_string_value(json_object_get(st, "acquire")), &p, &admitted))
		return -1;
	if (admitted && !as) /* admitted but not kept: give it back unjudged */
		brk_release(&p, BRK_CANCELLED, 0, 0);
	if (admitted && as) {
		if (r->nheld == MAX_HELD)
			return fail(r, "too many held permits");
		r->held[r->nheld] = (struct held){ .as = as, .p = p };
		r->nheld++;
	}
	return 0;
}

static int step_call(struct run *r, json_t *st)
{
	json_t *t = json_object_get(st, "times");
	int n = t ? (int)json_integer_value(t) : 1, admitted, counted;
	brk_permit p;

	for (int i = 0; i < n; i++) {
		if (acquire(r, st, json_string_value(json_object_get(st, "call")), &p, &admitted))
			return -1;
		if (release_as(r, st, &p, &counted))
			return -1;
	}
	return 0;
}

static int step_release(struct run *r, json_t *st)
{
	struct held *h = held_of(r, json_string_value(json_object_get(st, "release")));
	json_t *want = json_object_get(st, "counted");
	int counted;

	if (!h || h->is_token)
		return fail(r, "release: no such permit");
	if (release_any(r, st, &h->p, h->is_admission ? &h->adm : NULL, &counted))
		return -1;
	if (want && json_is_true(want) != counted)
		return fail(r, "release %s: counted %d, want %d", h->as, counted, json_is_true(want));
	return 0;
}

/* brk_admit() of one breaker with a priority ("normal" or "high"); a GO
 * is kept as "as" (else released cancelled). */
static int step_admit(struct run *r, json_t *st)
{
	struct rec *x = rec_of(r, json_string_value(json_object_get(st, "admit")));
	const char *prio = json_string_value(json_object_get(st, "priority"));
	const char *as = json_string_value(json_object_get(st, "as"));
	struct brk_admit_req req;
	struct held *h;
	int rc;

	if (!x || x->kind != BRK_KIND_BREAKER)
		return fail(r, "admit: no such breaker");
	if (r->nheld == MAX_HELD)
		return fail(r, "too many held permits");
	h = &r->held[r->nheld];
	memset(h, 0, sizeof(*h));
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.breaker = x->b;
	req.attempt = BRK_FIRST_ATTEMPT;
	req.priority = prio && !strcmp(prio, "high") ? BRK_PRIORITY_HIGH : BRK_PRIORITY_NORMAL;
	rc = brk_admit(&req, &h->adm);
	if (rc && !brk_is_refusal(rc))
		return fail(r, "admit: %s", brk_strerror(rc));
	if (check_answer(r, st, "admit", rc, rc ? brk_cause_name(h->adm.cause) : NULL,
			 rc ? h->adm.by : NULL, rc ? (double)h->adm.wait_ms : 0))
		return -1;
	if (rc)
		return 0;
	if (!as)
		return brk_admit_release(&h->adm, BRK_CANCELLED, 0, 0) ? fail(r, "admit release") : 0;
	h->as = as;
	h->is_admission = 1;
	r->nheld++;
	return 0;
}

static int step_op(struct run *r, json_t *st)
{
	const char *op = json_string_value(json_object_get(st, "op"));
	struct rec *x = rec_of(r, json_string_value(json_object_get(st, "breaker")));
	uint64_t ms = 0;
	int rc;

	if (!x || x->kind != BRK_KIND_BREAKER)
		return fail(r, "op %s: no such breaker", op);
	if (!strcmp(op, "reset"))
		rc = brk_reset(x->b);
	else if (!strcmp(op, "trip")) {
		if (duration_ms(json_object_get(st, "for"), &ms))
			return fail(r, "trip: bad 'for'");
		rc = brk_trip(x->b, ms);
		if (rc == -EALREADY)
			rc = 0;
	} else if (!strcmp(op, "force_open"))
		rc = brk_set_mode(x->b, BRK_MODE_FORCED_OPEN);
	else if (!strcmp(op, "disable"))
		rc = brk_set_mode(x->b, BRK_MODE_DISABLED);
	else if (!strcmp(op, "metrics_only"))
		rc = brk_set_mode(x->b, BRK_MODE_METRICS_ONLY);
	else if (!strcmp(op, "normal"))
		rc = brk_set_mode(x->b, BRK_MODE_NORMAL);
	else
		return fail(r, "unknown op %s", op);
	return rc ? fail(r, "op %s: %s", op, brk_strerror(rc)) : 0;
}

static double wake_ms(struct run *r, brk_bucket *k, uint64_t not_before)
{
	uint64_t wake = brk_bucket_wake_ns(k, not_before), now = brk_now_ns(r->seg);

	return wake > now ? (double)(wake - now) / 1e6 : 0;
}

static int step_take(struct run *r, json_t *st)
{
	struct rec *x = rec_of(r, json_string_value(json_object_get(st, "take")));
	json_t *n = json_object_get(st, "n");
	uint64_t nb = 0;
	int rc;

	if (!x || x->kind != BRK_KIND_BUCKET)
		return fail(r, "take: no such bucket");
	rc = brk_bucket_take(x->k, n ? (uint32_t)json_integer_value(n) : 1, &nb);
	if (rc && rc != -BRK_ENOTOKENS)
		return fail(r, "take: %s", brk_strerror(rc));
	return check_answer(r, st, "take", rc, "no_tokens", x->name, rc ? wake_ms(r, x->k, nb) : 0);
}

static int step_pace_take(struct run *r, json_t *st)
{
	struct rec *x = rec_of(r, json_string_value(json_object_get(st, "pace_take")));
	const char *as = json_string_value(json_object_get(st, "as"));
	uint64_t at = 0, nb = 0;
	int rc;

	if (!x || x->kind != BRK_KIND_BUCKET)
		return fail(r, "pace_take: no such pace");
	rc = brk_pace_take(x->k, BRK_PRIORITY_NORMAL, &at, &nb);
	if (rc && rc != -BRK_ENOTOKENS)
		return fail(r, "pace_take: %s", brk_strerror(rc));
	if (check_answer(r, st, "pace_take", rc, "no_tokens", x->name,
			 rc ? wake_ms(r, x->k, nb) : 0))
		return -1;
	if (!rc && as) {
		if (r->nheld == MAX_HELD)
			return fail(r, "too many held tokens");
		r->held[r->nheld] = (struct held){ .as = as, .is_token = 1, .k = x->k,
						   .taken_at_ns = at };
		r->nheld++;
	}
	return 0;
}

static int step_pace_report(struct run *r, json_t *st)
{
	struct held *h = held_of(r, json_string_value(json_object_get(st, "pace_report")));
	json_t *want = json_object_get(st, "cut");
	struct brk_result res;
	int rc, sig;

	if (!h || !h->is_token)
		return fail(r, "pace_report: no such token");
	rc = brk_http_classify((int)json_integer_value(json_object_get(st, "http")),
			       json_string_value(json_object_get(st, "retry_after")), NULL, 0,
			       0, &res);
	if (rc)
		return fail(r, "pace_report: %s", brk_strerror(rc));
	sig = brk_pace_signal_of(res.outcome, res.reason, res.retry_after_ms);
	rc = brk_pace_report(h->k, h->taken_at_ns, sig, res.retry_after_ms);
	if (rc < 0)
		return fail(r, "pace_report: %s", brk_strerror(rc));
	if (want && json_is_true(want) != (rc == 1))
		return fail(r, "pace_report %s: cut %d, want %d", h->as, rc == 1, json_is_true(want));
	return 0;
}

static int step_budget(struct run *r, json_t *st, int retry)
{
	struct rec *x = rec_of(r, json_string_value(json_object_get(st, retry ? "retry" : "deposit")));
	json_t *t = json_object_get(st, "times");
	int n = t ? (int)json_integer_value(t) : 1, rc;

	if (!x || x->kind != BRK_KIND_BUDGET)
		return fail(r, "budget step: no such budget");
	for (int i = 0; i < n; i++) {
		if (!retry) {
			if ((rc = brk_budget_deposit(x->g)))
				return fail(r, "deposit: %s", brk_strerror(rc));
			continue;
		}
		rc = brk_retry_permitted(x->g);
		if (rc && rc != -BRK_EDEFERRED)
			return fail(r, "retry: %s", brk_strerror(rc));
		if (check_answer(r, st, "retry", rc, "deferred", x->name, 0))
			return -1;
	}
	return 0;
}

static int run_step(struct run *r, json_t *st)
{
	uint64_t ms;

	if (json_object_get(st, "advance")) {
		if (duration_ms(json_object_get(st, "advance"), &ms))
			return fail(r, "advance: bad duration");
		__atomic_add_fetch(&r->now_ns, ms * 1000000u, __ATOMIC_ACQ_REL);
		return 0;
	}
	if (json_object_get(st, "expect"))
		return step_expect(r, st);
	if (json_object_get(st, "call"))
		return step_call(r, st);
	if (json_object_get(st, "acquire"))
		return step_acquire(r, st);
	if (json_object_get(st, "release"))
		return step_release(r, st);
	if (json_object_get(st, "op"))
		return step_op(r, st);
	if (json_object_get(st, "admit"))
		return step_admit(r, st);
	if (json_object_get(st, "take"))
		return step_take(r, st);
	if (json_object_get(st, "pace_take"))
		return step_pace_take(r, st);
	if (json_object_get(st, "pace_report"))
		return step_pace_report(r, st);
	if (json_object_get(st, "deposit"))
		return step_budget(r, st, 0);
	if (json_object_get(st, "retry"))
		return step_budget(r, st, 1);
	return fail(r, "unknown step");
}

static int run_scenario(json_t *sc, int n, char *err, size_t errlen)
{
	struct run *r = calloc(1, sizeof(*r));
	struct brk_attach_opts o;
	char shm[64], ebuf[256] = "";
	const char *key;
	json_t *v;
	size_t i;
	int rc = -1;

	if (!r)
		return -1;
	snprintf(shm, sizeof(shm), "/brkconf-c-%d-%d", (int)getpid(), n);
	r->now_ns = 1000000000000ull; /* 1000 s, as the bindings' FakeClock */
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.capacity = 64;
	o.clock = fake_clock;
	o.clock_ctx = &r->now_ns;
	o.errbuf = ebuf;
	o.errbuf_len = sizeof(ebuf);
	if ((rc = brk_attach(&o, &r->seg))) {
		snprintf(err, errlen, "attach %s: %s", shm, ebuf);
		free(r);
		return -1;
	}
	rc = 0;
	json_object_foreach(json_object_get(sc, "records"), key, v)
		if ((rc = make_record(r, key, v)))
			break;
	json_array_foreach(json_object_get(sc, "steps"), i, v) {
		if (rc)
			break;
		if ((rc = run_step(r, v))) {
			char *s = json_dumps(v, JSON_COMPACT);

			snprintf(err, errlen, "step %zu %s: %s", i + 1, s ? s : "?", r->err);
			free(s);
		}
	}
	if (rc && !err[0])
		snprintf(err, errlen, "%s", r->err);
	brk_detach(r->seg);
	brk_segment_unlink(shm);
	free(r);
	return rc;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0, n = 0;

	for (int a = 1; a < argc; a++) {
		json_error_t je;
		json_t *root = json_load_file(argv[a], 0, &je), *sc;
		size_t i;

		if (!root) {
			fprintf(stderr, "%s:%d: %s\n", argv[a], je.line, je.text);
			return 1;
		}
		json_array_foreach(json_object_get(root, "scenarios"), i, sc) {
			const char *name = json_string_value(json_object_get(sc, "name"));
			json_t *skip = json_object_get(json_object_get(sc, "unsupported"), LANG);
			char err[1024] = "";

			n++;
			if (skip) {
				printf("skip %s: %s\n", name, json_string_value(skip));
				skipped++;
			} else if (run_scenario(sc, n, err, sizeof(err))) {
				printf("not ok %s: %s\n", name, err);
				failed++;
			} else {
				printf("ok %s\n", name);
				passed++;
			}
		}
		json_decref(root);
	}
	printf("conformance (" LANG "): %d passed, %d failed, %d skipped\n", passed, failed,
	       skipped);
	return failed ? 1 : 0;
}
