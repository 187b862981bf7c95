/*
 * bphp_permit.c - Breakerd\Permit: one admitted call, released exactly
 * once.
 *
 * A permit belongs to the process that was admitted (the library's lease
 * owner): a fork()ed child's copy neither reports (false) nor releases.
 * A permit whose object goes unreported (its last reference dropped) is
 * released as cancelled (no verdict), and so is every permit still out at
 * request shutdown (RSHUTDOWN runs before the engine frees the request's
 * objects, and after exit() or a fatal error, when destructors may not
 * run at all): a lost permit never holds a probe slot or a bulkhead
 * permit into the next request of an FPM child.
 */
#include <math.h>

#include "bphp_core.h"

zend_class_entry *bphp_ce_permit, *bphp_ce_admission;
static zend_object_handlers permit_handlers;

/* The permits out in this process, not yet released. */
static struct bphp_permit_obj *out_head;

static void unlink_out(struct bphp_permit_obj *o)
{
	if (o->prev)
		o->prev->next = o->next;
	else if (out_head == o)
		out_head = o->next;
	if (o->next)
		o->next->prev = o->prev;
	o->prev = o->next = NULL;
}

/* brk_release() once: 0 counted, 1 not counted, -1 thrown. */
static int release(struct bphp_permit_obj *o, int outcome, int reason, int64_t ra_ms)
{
	int rc;

	if (o->released || o->pid != bphp_pid || !o->s || !o->s->seg)
		return 1;
	o->released = 1;
	unlink_out(o);
	rc = o->admission ? brk_admit_release(&o->adm, outcome, reason, ra_ms)
			  : brk_release(&o->p, outcome, reason, ra_ms);
	if (rc == 0) {
		o->counted = 1;
		return 0;
	}
	if (rc == -BRK_ESTALE || rc == -BRK_ECONTENDED)
		return 1;
	bphp_throw(rc, "release");
	return -1;
}

void bphp_permits_cancel_all(void)
{
	while (out_head) {
		struct bphp_permit_obj *o = out_head;

		release(o, BRK_CANCELLED, BRK_REASON_NONE, 0);
		unlink_out(o); /* a fork()ed parent's is only dropped */
	}
}

static zend_object *permit_create(zend_class_entry *ce)
{
	struct bphp_permit_obj *o = zend_object_alloc(sizeof(*o), ce);

	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &permit_handlers;
	o->released = 1; /* until bphp_permit_new() fills it */
	return &o->std;
}

static void permit_free(zend_object *obj)
{
	struct bphp_permit_obj *o = BPHP_OBJ(bphp_permit_obj, obj);

	release(o, BRK_CANCELLED, BRK_REASON_NONE, 0);
	unlink_out(o);
	bphp_seg_unref(o->s);
	zend_object_std_dtor(obj);
}

void bphp_permit_new(zval *rv, struct bphp_seg *s, const brk_permit *p, const char *breaker)
{
	struct bphp_permit_obj *o;

	object_init_ex(rv, bphp_ce_permit);
	o = BPHP_OBJ(bphp_permit_obj, Z_OBJ_P(rv));
	o->s = bphp_seg_ref(s);
	o->p = *p;
	o->pid = bphp_pid;
	o->released = 0;
	snprintf(o->breaker, sizeof(o->breaker), "%s", breaker);
	o->next = out_head;
	if (out_head)
		out_head->prev = o;
	out_head = o;
}

void bphp_admission_new(zval *rv, struct bphp_seg *s, const struct brk_admission *adm,
			const char *breaker)
{
	struct bphp_permit_obj *o;

	object_init_ex(rv, bphp_ce_admission);
	o = BPHP_OBJ(bphp_permit_obj, Z_OBJ_P(rv));
	o->s = bphp_seg_ref(s);
	o->admission = 1;
	o->adm = *adm;
	o->pid = bphp_pid;
	o->released = 0;
	snprintf(o->breaker, sizeof(o->breaker), "%s", breaker);
	o->next = out_head;
	if (out_head)
		out_head->prev = o;
	out_head = o;
}

/* ?float $retryAfter (seconds) -> ms; -1 thrown. */
static int retry_ms(zval *ra, uint32_t argn, int64_t *ms)
{
	double d;

	*ms = 0;
	if (!ra || Z_TYPE_P(ra) == IS_NULL)
		return 0;
	d = zval_get_double(ra);
	if (!isfinite(d) || d < 0) {
		zend_argument_value_error(argn, "must be a finite number of seconds >= 0 or null");
		return -1;
	}
	d *= 1000.0;
	*ms = d >= (double)BRK_MAX_DURATION_MS ? (int64_t)BRK_MAX_DURATION_MS : llround(d);
	return 0;
}

static void finish(zval *return_value, struct bphp_permit_obj *o, int outcome, int reason,
		   int64_t ms)
{
	int rc = release(o, outcome, reason, ms);

	if (rc < 0)
		RETURN_THROWS();
	RETURN_BOOL(rc == 0);
}

static void simple(INTERNAL_FUNCTION_PARAMETERS, int outcome)
{
	zval *ra = NULL;
	int64_t ms;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_NUMBER_OR_NULL(ra)
	ZEND_PARSE_PARAMETERS_END();
	if (retry_ms(ra, 1, &ms))
		RETURN_THROWS();
	finish(return_value, BPHP_THIS(bphp_permit_obj), outcome, BRK_REASON_NONE, ms);
}

/* success(?float $retryAfter = null): bool - true if the library counted
 * it; false if not (released before, another process's, the lease
 * reclaimed, the breaker reset or in a newer generation). */
PHP_METHOD(Breakerd_Permit, success) { simple(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_SUCCESS); }
/* healthyError(): a correct business error (404): counts as a success. */
PHP_METHOD(Breakerd_Permit, healthyError) { simple(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_HEALTHY_ERROR); }
/* rejected(): our fault (auth, a bad request): counts neither way. */
PHP_METHOD(Breakerd_Permit, rejected) { simple(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_REJECTED_REQUEST); }

/* failure(string $reason = 'server_error', ?float $retryAfter = null): bool */
PHP_METHOD(Breakerd_Permit, failure)
{
	zend_string *reason = NULL;
	zval *ra = NULL;
	int64_t ms;
	int r = BRK_REASON_SERVER_ERROR;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_STR(reason)
		Z_PARAM_NUMBER_OR_NULL(ra)
	ZEND_PARSE_PARAMETERS_END();
	if (reason && (r = bphp_reason_code(ZSTR_VAL(reason))) < 0) {
		zend_argument_value_error(1, "must be one of timeout, connect, server_error, "
					  "overloaded, rate_limited, other, not \"%s\"",
					  ZSTR_VAL(reason));
		RETURN_THROWS();
	}
	if (retry_ms(ra, 2, &ms))
		RETURN_THROWS();
	finish(return_value, BPHP_THIS(bphp_permit_obj), BRK_FAILURE, r, ms);
}

/* cancel(): we gave up locally: frees the lease, no verdict. */
PHP_METHOD(Breakerd_Permit, cancel)
{
	ZEND_PARSE_PARAMETERS_NONE();
	finish(return_value, BPHP_THIS(bphp_permit_obj), BRK_CANCELLED, BRK_REASON_NONE, 0);
}

/* reportHttp(int $status, array $headers = []): bool - the answer
 * classified by brk_http_classify() (Retry-After from $headers, any case,
 * a value or a list of values as PSR-7's getHeaders() gives). */
PHP_METHOD(Breakerd_Permit, reportHttp)
{
	zend_long status;
	HashTable *headers = NULL;
	struct brk_result r;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_LONG(status)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(headers)
	ZEND_PARSE_PARAMETERS_END();
	if (bphp_http_classify(status, headers, 2, &r))
		RETURN_THROWS();
	if (r.outcome == 0) {
		zend_argument_value_error(1, "status 0 gives no verdict: report the permit yourself");
		RETURN_THROWS();
	}
	finish(return_value, BPHP_THIS(bphp_permit_obj), r.outcome, r.reason, r.retry_after_ms);
}

PHP_METHOD(Breakerd_Permit, isReleased)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_BOOL(BPHP_THIS(bphp_permit_obj)->released);
}

/* counted(): null until released, then whether the verdict was counted. */
PHP_METHOD(Breakerd_Permit, counted)
{
	struct bphp_permit_obj *o = BPHP_THIS(bphp_permit_obj);

	ZEND_PARSE_PARAMETERS_NONE();
	if (!o->released)
		RETURN_NULL();
	RETURN_BOOL(o->counted);
}

PHP_METHOD(Breakerd_Permit, breaker)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_STRING(BPHP_THIS(bphp_permit_obj)->breaker);
}

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_simple, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, retryAfter, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_failure, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, reason, IS_STRING, 0, "'server_error'")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, retryAfter, IS_DOUBLE, 1, "null")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_bool, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_nbool, 0, 0, _IS_BOOL, 1)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_http, 0, 1, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO(0, status, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, headers, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()

static const zend_function_entry permit_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_ME(Breakerd_Permit, success, ai_simple, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, failure, ai_failure, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, healthyError, ai_simple, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, rejected, ai_simple, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, cancel, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, reportHttp, ai_http, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, isReleased, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, counted, ai_nbool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Permit, breaker, ai_string, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

void bphp_init_permit(void)
{
	zend_class_entry ce;

	INIT_CLASS_ENTRY(ce, "Breakerd\\Permit", permit_methods);
	bphp_ce_permit = zend_register_internal_class(&ce);
	bphp_ce_permit->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES |
				    ZEND_ACC_NOT_SERIALIZABLE;
	bphp_ce_permit->create_object = permit_create;
	memcpy(&permit_handlers, zend_get_std_object_handlers(), sizeof(permit_handlers));
	permit_handlers.offset = XtOffsetOf(struct bphp_permit_obj, std);
	permit_handlers.free_obj = permit_free;
	permit_handlers.clone_obj = NULL;

	/* Breakerd\Admission (Segment->admit()): the same reports, released
	 * by brk_admit_release() (a paced 429 is THROTTLED and cuts the pace). */
	INIT_CLASS_ENTRY(ce, "Breakerd\\Admission", permit_methods);
	bphp_ce_admission = zend_register_internal_class(&ce);
	bphp_ce_admission->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES |
				       ZEND_ACC_NOT_SERIALIZABLE;
	bphp_ce_admission->create_object = permit_create;
}
