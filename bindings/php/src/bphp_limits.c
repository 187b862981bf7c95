/*
 * bphp_limits.c - Breakerd\Bucket (a GCRA rate limit), Breakerd\Pace (a
 * learned rate: the same record in paced mode) with its PaceToken, and
 * Breakerd\Budget (a retry budget), over brk_bucket_*(), brk_pace_*() and
 * brk_budget_*().
 */
#include <errno.h>
#include <math.h>
#include <time.h>

#include "bphp_core.h"

zend_class_entry *bphp_ce_bucket, *bphp_ce_pace, *bphp_ce_pace_token, *bphp_ce_budget;
static zend_object_handlers limit_handlers, token_handlers;

/* ---- objects ------------------------------------------------------------------ */

static zend_object *limit_create(zend_class_entry *ce)
{
	struct bphp_limit_obj *o = zend_object_alloc(sizeof(*o), ce);

	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &limit_handlers;
	return &o->std;
}

static void limit_free(zend_object *obj)
{
	struct bphp_limit_obj *o = BPHP_OBJ(bphp_limit_obj, obj);

	bphp_seg_unref(o->s);
	zend_object_std_dtor(obj);
}

static zend_object *token_create(zend_class_entry *ce)
{
	struct bphp_token_obj *o = zend_object_alloc(sizeof(*o), ce);

	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &token_handlers;
	return &o->std;
}

static void token_free(zend_object *obj)
{
	struct bphp_token_obj *o = BPHP_OBJ(bphp_token_obj, obj);

	bphp_seg_unref(o->s);
	zend_object_std_dtor(obj);
}

static struct bphp_limit_obj *this_limit(zval *self)
{
	struct bphp_limit_obj *o = BPHP_OBJ(bphp_limit_obj, Z_OBJ_P(self));

	if (!o->rec) {
		zend_throw_exception(bphp_ce_error, "record not initialised", EINVAL);
		return NULL;
	}
	return o;
}

static void wrap(zval *rv, zend_class_entry *ce, struct bphp_seg *s, void *rec)
{
	struct bphp_limit_obj *o;

	object_init_ex(rv, ce);
	o = BPHP_OBJ(bphp_limit_obj, Z_OBJ_P(rv));
	o->s = bphp_seg_ref(s);
	o->rec = rec;
	o->fake_clock = s->clock != NULL;
}

static int check_name(zend_string *name)
{
	if (brk_name_validate(ZSTR_VAL(name))) {
		zend_argument_value_error(1, "\"%s\" is not a record name (1..%d bytes of A-Z a-z "
					  "0-9 . _ : / -)", ZSTR_VAL(name), BRK_NAME_MAX);
		return -1;
	}
	return 0;
}

/* ---- Segment methods ------------------------------------------------------- */

/* Segment->bucket(string $name, float $rate, int $burst): Bucket */
PHP_METHOD(Breakerd_Segment, bucket)
{
	zend_string *name;
	double rate;
	zend_long burst;
	struct bphp_seg *s;
	brk_bucket *k;
	int rc;

	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_DOUBLE(rate)
		Z_PARAM_LONG(burst)
	ZEND_PARSE_PARAMETERS_END();
	if (check_name(name))
		RETURN_THROWS();
	if (!(rate >= BRK_BUCKET_MIN_RATE && rate <= BRK_BUCKET_MAX_RATE)) {
		zend_argument_value_error(2, "must be %g..%g tokens/s, not %g", BRK_BUCKET_MIN_RATE,
					  BRK_BUCKET_MAX_RATE, rate);
		RETURN_THROWS();
	}
	if (burst < 1 || burst > (zend_long)BRK_BUCKET_MAX_BURST) {
		zend_argument_value_error(3, "must be 1..%u, not " ZEND_LONG_FMT,
					  BRK_BUCKET_MAX_BURST, burst);
		RETURN_THROWS();
	}
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_bucket_get(s->seg, ZSTR_VAL(name), rate, (uint32_t)burst, &k))) {
		bphp_throw(rc, ZSTR_VAL(name));
		RETURN_THROWS();
	}
	wrap(return_value, bphp_ce_bucket, s, k);
}

/* Segment->pace(string $name, float $ceiling, ?float $floor = null,
 *               ?int $burst = null, ?int $reservePct = null): Pace */
PHP_METHOD(Breakerd_Segment, pace)
{
	zend_string *name;
	double ceiling, floor = 0;
	bool floor_null = 1, burst_null = 1, res_null = 1;
	zend_long burst = 0, res = 0;
	struct brk_pace_config c;
	struct bphp_seg *s;
	brk_bucket *k;
	int rc;

	ZEND_PARSE_PARAMETERS_START(2, 5)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_DOUBLE(ceiling)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE_OR_NULL(floor, floor_null)
		Z_PARAM_LONG_OR_NULL(burst, burst_null)
		Z_PARAM_LONG_OR_NULL(res, res_null)
	ZEND_PARSE_PARAMETERS_END();
	if (check_name(name))
		RETURN_THROWS();
	brk_pace_config_init(&c);
	if (!(ceiling >= BRK_BUCKET_MIN_RATE && ceiling <= BRK_BUCKET_MAX_RATE)) {
		zend_argument_value_error(2, "must be %g..%g /s, not %g", BRK_BUCKET_MIN_RATE,
					  BRK_BUCKET_MAX_RATE, ceiling);
		RETURN_THROWS();
	}
	c.ceiling_per_s = ceiling;
	if (!floor_null) {
		if (!(floor >= 0 && floor <= ceiling)) {
			zend_argument_value_error(3, "must be 0 (default) .. ceiling, not %g", floor);
			RETURN_THROWS();
		}
		c.floor_per_s = floor;
	}
	if (!burst_null) {
		if (burst < 1 || burst > (zend_long)BRK_BUCKET_MAX_BURST) {
			zend_argument_value_error(4, "must be 1..%u, not " ZEND_LONG_FMT,
						  BRK_BUCKET_MAX_BURST, burst);
			RETURN_THROWS();
		}
		c.burst = (uint32_t)burst;
	}
	if (!res_null) {
		if (res < 0 || res > (zend_long)BRK_PACE_MAX_RESERVE_PCT) {
			zend_argument_value_error(5, "must be 0..%u, not " ZEND_LONG_FMT,
						  BRK_PACE_MAX_RESERVE_PCT, res);
			RETURN_THROWS();
		}
		c.reserve_pct = (uint32_t)res;
	}
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_pace_get(s->seg, ZSTR_VAL(name), &c, &k))) {
		bphp_throw(rc, ZSTR_VAL(name));
		RETURN_THROWS();
	}
	wrap(return_value, bphp_ce_pace, s, k);
}

/* Segment->budget(string $name, float $floor = 10.0, float $ratio = 0.2): Budget */
PHP_METHOD(Breakerd_Segment, budget)
{
	zend_string *name;
	double floor = 10.0, ratio = 0.2;
	struct bphp_seg *s;
	brk_budget *g;
	int rc;

	ZEND_PARSE_PARAMETERS_START(1, 3)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_DOUBLE(floor)
		Z_PARAM_DOUBLE(ratio)
	ZEND_PARSE_PARAMETERS_END();
	if (check_name(name))
		RETURN_THROWS();
	if (floor != 0 && !(floor >= 0.001 && floor <= BRK_BUDGET_MAX_FLOOR)) {
		zend_argument_value_error(2, "must be 0 or 0.001..%g retries/s, not %g",
					  BRK_BUDGET_MAX_FLOOR, floor);
		RETURN_THROWS();
	}
	if (ratio != 0 && !(ratio >= 0.001 && ratio <= BRK_BUDGET_MAX_RATIO)) {
		zend_argument_value_error(3, "must be 0 or 0.001..%g, not %g",
					  BRK_BUDGET_MAX_RATIO, ratio);
		RETURN_THROWS();
	}
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_budget_get(s->seg, ZSTR_VAL(name), floor, ratio, &g))) {
		bphp_throw(rc, ZSTR_VAL(name));
		RETURN_THROWS();
	}
	wrap(return_value, bphp_ce_budget, s, g);
}

/* Segment->admit(?Breaker $breaker = null, Pace|Bucket|null $pace = null,
 *                ?Budget $budget = null, string $priority = 'normal',
 *                bool $retry = false, int|float|string $maxWait = 0): Admission
 * brk_admit(): the job through its gates (breaker, pace, budget) in the
 * library's order, with its priority (high may use a breaker's and a
 * pace's reserve), sleeping up to $maxWait (never on a FakeClock
 * segment); a refusal throws its Refused subclass. Report the Admission
 * as a Permit. */
PHP_METHOD(Breakerd_Segment, admit)
{
	zend_object *br = NULL, *pace = NULL, *budget = NULL;
	zend_string *prio_s = NULL;
	bool retry = 0;
	zval *wait_z = NULL;
	struct brk_admit_req req;
	struct brk_admission adm;
	struct bphp_seg *s;
	uint64_t max_wait = 0;
	const char *name = "";
	int rc;

	ZEND_PARSE_PARAMETERS_START(0, 6)
		Z_PARAM_OPTIONAL
		Z_PARAM_OBJ_OF_CLASS_OR_NULL(br, bphp_ce_breaker)
		Z_PARAM_OBJ_OR_NULL(pace)
		Z_PARAM_OBJ_OF_CLASS_OR_NULL(budget, bphp_ce_budget)
		Z_PARAM_STR(prio_s)
		Z_PARAM_BOOL(retry)
		Z_PARAM_ZVAL(wait_z)
	ZEND_PARSE_PARAMETERS_END();
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.priority = BRK_PRIORITY_NORMAL;
	if (pace && pace->ce != bphp_ce_pace && pace->ce != bphp_ce_bucket) {
		zend_argument_type_error(2, "must be of type Breakerd\\Pace|Breakerd\\Bucket|null, %s given",
					 ZSTR_VAL(pace->ce->name));
		RETURN_THROWS();
	}
	if (prio_s) {
		if (zend_string_equals_literal(prio_s, "high"))
			req.priority = BRK_PRIORITY_HIGH;
		else if (!zend_string_equals_literal(prio_s, "normal")) {
			zend_argument_value_error(4, "must be \"normal\" or \"high\", not \"%s\"",
						  ZSTR_VAL(prio_s));
			RETURN_THROWS();
		}
	}
	if (wait_z && bphp_duration_ms(wait_z, 6, NULL, &max_wait))
		RETURN_THROWS();
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	if (br) {
		req.breaker = BPHP_OBJ(bphp_breaker_obj, br)->b;
		name = brk_breaker_name(req.breaker);
	}
	if (pace)
		req.pace = BPHP_OBJ(bphp_limit_obj, pace)->rec;
	if (budget)
		req.budget = BPHP_OBJ(bphp_limit_obj, budget)->rec;
	req.attempt = retry ? BRK_RETRY : BRK_FIRST_ATTEMPT;
	req.max_wait_ms = s->clock ? 0 : max_wait;
	rc = brk_admit(&req, &adm);
	if (rc == 0) {
		bphp_admission_new(return_value, s, &adm, name);
		return;
	}
	if (brk_is_refusal(rc)) {
		const char *cause = rc == -BRK_ENOTOKENS ? "no_tokens"
				  : rc == -BRK_EDEFERRED ? "deferred"
				  : rc == -BRK_EEXPIRED ? "expired" : brk_cause_name(adm.cause);

		bphp_throw_refused(rc, (double)adm.wait_ms / 1000.0, cause, adm.by);
	} else {
		bphp_throw(rc, "admit");
	}
	RETURN_THROWS();
}

/* ---- Bucket and Pace ---------------------------------------------------------- */

static double wait_s(struct bphp_limit_obj *o, uint64_t not_before)
{
	uint64_t wake = brk_bucket_wake_ns(o->rec, not_before);
	uint64_t now = brk_now_ns(o->s->seg);

	if (wake == UINT64_MAX)
		return INFINITY;
	return wake > now ? (double)(wake - now) / 1e9 : 1e-9;
}

PHP_METHOD(Breakerd_Bucket, name)
{
	struct bphp_limit_obj *o;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	RETURN_STRING(brk_bucket_name(o->rec));
}

/* 0.0 taken, else the (jittered) seconds to wait; -1.0 thrown. */
static double bucket_take(struct bphp_limit_obj *o, zend_long n)
{
	uint64_t nb = 0;
	int rc;

	if (n < 1 || n > (zend_long)BRK_BUCKET_MAX_BURST) {
		zend_argument_value_error(1, "must be 1..burst, not " ZEND_LONG_FMT, n);
		return -1.0;
	}
	rc = brk_bucket_take(o->rec, (uint32_t)n, &nb);
	if (rc == 0)
		return 0.0;
	if (rc == -BRK_ENOTOKENS)
		return wait_s(o, nb);
	if (rc == -EINVAL)
		zend_argument_value_error(1, "must be 1..burst, not " ZEND_LONG_FMT, n);
	else
		bphp_throw(rc, brk_bucket_name(o->rec));
	return -1.0;
}

/* take(int $n = 1): void, or throw NoTokens with the wait. */
PHP_METHOD(Breakerd_Bucket, take)
{
	struct bphp_limit_obj *o;
	zend_long n = 1;
	double w;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(n)
	ZEND_PARSE_PARAMETERS_END();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	w = bucket_take(o, n);
	if (w < 0)
		RETURN_THROWS();
	if (w > 0) {
		bphp_throw_refused(-BRK_ENOTOKENS, w, "no_tokens", brk_bucket_name(o->rec));
		RETURN_THROWS();
	}
}

/* tryTake(int $n = 1): float - 0.0 taken, else the seconds to wait. */
PHP_METHOD(Breakerd_Bucket, tryTake)
{
	struct bphp_limit_obj *o;
	zend_long n = 1;
	double w;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(n)
	ZEND_PARSE_PARAMETERS_END();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	w = bucket_take(o, n);
	if (w < 0)
		RETURN_THROWS();
	RETURN_DOUBLE(w);
}

PHP_METHOD(Breakerd_Bucket, info)
{
	struct bphp_limit_obj *o;
	struct brk_bucket_info in;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_bucket_info(o->rec, &in))) {
		bphp_throw(rc, brk_bucket_name(o->rec));
		RETURN_THROWS();
	}
	bphp_bucket_info_array(return_value, &in);
}

/* Pace->take(string $priority = 'normal', int|float|string $wait = 0): PaceToken
 * Waits up to $wait for a slot reserved in arrival order across
 * processes (brk_pace_reserve; never on a FakeClock segment), else throws
 * NoTokens with the wait at once, nothing reserved. */
PHP_METHOD(Breakerd_Pace, take)
{
	struct bphp_limit_obj *o;
	zend_string *prio_s = NULL;
	zval *wait_z = NULL;
	struct bphp_token_obj *t;
	uint64_t budget_ms = 0, at = 0, horizon, t0;
	struct brk_ticket tk;
	int prio = BRK_PRIORITY_NORMAL, rc;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(prio_s)
		Z_PARAM_ZVAL(wait_z)
	ZEND_PARSE_PARAMETERS_END();
	if (prio_s) {
		if (zend_string_equals_literal(prio_s, "high"))
			prio = BRK_PRIORITY_HIGH;
		else if (!zend_string_equals_literal(prio_s, "normal")) {
			zend_argument_value_error(1, "must be \"normal\" or \"high\", not \"%s\"",
						  ZSTR_VAL(prio_s));
			RETURN_THROWS();
		}
	}
	if (wait_z && bphp_duration_ms(wait_z, 2, NULL, &budget_ms))
		RETURN_THROWS();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	/* a fair wait (breaker.h "Fair waits"): the next slot in arrival
	 * order, reserved if within $wait (0 on a FakeClock segment: only a
	 * token free now), slept to, checked; a cut may move it later */
	(void)brk_ticket_init(&tk);
	horizon = o->fake_clock ? 0 : budget_ms * 1000000u;
	t0 = brk_now_ns(o->s->seg);
	rc = brk_pace_reserve(o->rec, prio, horizon, &tk);
	while (rc >= 0) {
		uint64_t now = brk_now_ns(o->s->seg);

		if (tk.at_ns > now) {
			struct timespec ts = { (time_t)(tk.at_ns / 1000000000u),
					       (long)(tk.at_ns % 1000000000u) };

			if (o->fake_clock || tk.at_ns - t0 > horizon) {
				(void)brk_ticket_cancel(o->rec, &tk);
				rc = -BRK_ENOTOKENS;
				break;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			continue;
		}
		rc = brk_ticket_check(o->rec, &tk);
		if (rc == 0)
			break;
	}
	if (rc == -BRK_ENOTOKENS) {
		uint64_t now = brk_now_ns(o->s->seg);

		bphp_throw_refused(rc, tk.at_ns == UINT64_MAX ? INFINITY
				       : tk.at_ns > now ? (double)(tk.at_ns - now) / 1e9 : 0.0,
				   "no_tokens", brk_bucket_name(o->rec));
		RETURN_THROWS();
	}
	if (rc < 0) {
		(void)brk_ticket_cancel(o->rec, &tk);
		bphp_throw(rc, brk_bucket_name(o->rec));
		RETURN_THROWS();
	}
	at = tk.taken_at_ns;
	object_init_ex(return_value, bphp_ce_pace_token);
	t = BPHP_OBJ(bphp_token_obj, Z_OBJ_P(return_value));
	t->s = bphp_seg_ref(o->s);
	t->k = o->rec;
	t->taken_at = at;
}

/* PaceToken->report(int $status, array $headers = []): bool - the answer
 * classified by brk_http_classify(), its pace signal by
 * brk_pace_signal_of(); true if this report cut the learned rate. */
PHP_METHOD(Breakerd_PaceToken, report)
{
	struct bphp_token_obj *t = BPHP_THIS(bphp_token_obj);
	zend_long status;
	HashTable *headers = NULL;
	struct brk_result r;
	int sig, rc;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_LONG(status)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(headers)
	ZEND_PARSE_PARAMETERS_END();
	if (!t->k) {
		zend_throw_exception(bphp_ce_error, "token not initialised", EINVAL);
		RETURN_THROWS();
	}
	if (t->reported) {
		zend_throw_exception_ex(bphp_ce_error, EALREADY, "%s: this token was already reported",
					brk_bucket_name(t->k));
		RETURN_THROWS();
	}
	if (bphp_http_classify(status, headers, 2, &r))
		RETURN_THROWS();
	sig = r.outcome ? brk_pace_signal_of(r.outcome, r.reason, r.retry_after_ms)
			: BRK_PACE_IGNORE;
	rc = brk_pace_report(t->k, t->taken_at, sig, r.retry_after_ms > 0 ? r.retry_after_ms : 0);
	if (rc < 0) {
		bphp_throw(rc, brk_bucket_name(t->k));
		RETURN_THROWS();
	}
	t->reported = 1;
	t->cut = rc == 1;
	RETURN_BOOL(rc == 1);
}

PHP_METHOD(Breakerd_PaceToken, isReported)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_BOOL(BPHP_THIS(bphp_token_obj)->reported);
}

PHP_METHOD(Breakerd_PaceToken, takenAtNs)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG((zend_long)BPHP_THIS(bphp_token_obj)->taken_at);
}

/* ---- Budget ------------------------------------------------------------------- */

PHP_METHOD(Breakerd_Budget, name)
{
	struct bphp_limit_obj *o;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	RETURN_STRING(brk_budget_name(o->rec));
}

/* deposit(): one first attempt (one dropped under contention is not an
 * error: the budget errs towards fewer retries). */
PHP_METHOD(Breakerd_Budget, deposit)
{
	struct bphp_limit_obj *o;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	rc = brk_budget_deposit(o->rec);
	if (rc && rc != -BRK_ECONTENDED) {
		bphp_throw(rc, brk_budget_name(o->rec));
		RETURN_THROWS();
	}
}

static int budget_retry(struct bphp_limit_obj *o)
{
	int rc = brk_retry_permitted(o->rec);

	if (rc == 0)
		return 1;
	if (rc == -BRK_EDEFERRED || rc == -BRK_ECONTENDED)
		return 0;
	bphp_throw(rc, brk_budget_name(o->rec));
	return -1;
}

/* retry(): void - take one retry token, or throw RetryDeferred. */
PHP_METHOD(Breakerd_Budget, retry)
{
	struct bphp_limit_obj *o;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	rc = budget_retry(o);
	if (rc < 0)
		RETURN_THROWS();
	if (rc == 0) {
		bphp_throw_refused(-BRK_EDEFERRED, 0.0, "deferred", brk_budget_name(o->rec));
		RETURN_THROWS();
	}
}

/* tryRetry(): bool */
PHP_METHOD(Breakerd_Budget, tryRetry)
{
	struct bphp_limit_obj *o;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	rc = budget_retry(o);
	if (rc < 0)
		RETURN_THROWS();
	RETURN_BOOL(rc);
}

PHP_METHOD(Breakerd_Budget, info)
{
	struct bphp_limit_obj *o;
	struct brk_budget_info in;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_limit(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_budget_info(o->rec, &in))) {
		bphp_throw(rc, brk_budget_name(o->rec));
		RETURN_THROWS();
	}
	bphp_budget_info_array(return_value, &in);
}

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_array, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_void, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_bool, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_long, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_take, 0, 0, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, n, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_try_take, 0, 0, IS_DOUBLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, n, IS_LONG, 0, "1")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_pace_take, 0, 0, Breakerd\\PaceToken, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, priority, IS_STRING, 0, "'normal'")
	ZEND_ARG_TYPE_MASK(0, wait, MAY_BE_LONG | MAY_BE_DOUBLE | MAY_BE_STRING, "0")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_report, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, status, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, headers, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

static const zend_function_entry bucket_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_ME(Breakerd_Bucket, name, ai_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Bucket, take, ai_take, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Bucket, tryTake, ai_try_take, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Bucket, info, ai_array, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

static const zend_function_entry pace_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_MALIAS(Breakerd_Bucket, name, name, ai_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Pace, take, ai_pace_take, ZEND_ACC_PUBLIC)
	PHP_MALIAS(Breakerd_Bucket, info, info, ai_array, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

static const zend_function_entry token_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_ME(Breakerd_PaceToken, report, ai_report, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_PaceToken, isReported, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_PaceToken, takenAtNs, ai_long, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

static const zend_function_entry budget_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_ME(Breakerd_Budget, name, ai_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Budget, deposit, ai_void, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Budget, retry, ai_void, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Budget, tryRetry, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Budget, info, ai_array, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

static zend_class_entry *reg(const char *name, const zend_function_entry *fns,
			     zend_object *(*create)(zend_class_entry *))
{
	zend_class_entry ce, *r;

	INIT_CLASS_ENTRY_EX(ce, name, strlen(name), fns);
	r = zend_register_internal_class(&ce);
	r->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
	r->create_object = create;
	return r;
}

void bphp_init_limits(void)
{
	bphp_ce_bucket = reg("Breakerd\\Bucket", bucket_methods, limit_create);
	bphp_ce_pace = reg("Breakerd\\Pace", pace_methods, limit_create);
	bphp_ce_budget = reg("Breakerd\\Budget", budget_methods, limit_create);
	bphp_ce_pace_token = reg("Breakerd\\PaceToken", token_methods, token_create);
	memcpy(&limit_handlers, zend_get_std_object_handlers(), sizeof(limit_handlers));
	limit_handlers.offset = XtOffsetOf(struct bphp_limit_obj, std);
	limit_handlers.free_obj = limit_free;
	limit_handlers.clone_obj = NULL;
	memcpy(&token_handlers, zend_get_std_object_handlers(), sizeof(token_handlers));
	token_handlers.offset = XtOffsetOf(struct bphp_token_obj, std);
	token_handlers.free_obj = token_free;
	token_handlers.clone_obj = NULL;
}
