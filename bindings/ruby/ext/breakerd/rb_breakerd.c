/*
 * rb_breakerd.c - the extension's entry point: module functions (durations,
 * HTTP classification, config checks), constants, exceptions, and the
 * refresh of the pid in a fork()ed child; Init calls every type file's
 * init. The argument and error helpers the type files share are in
 * rb_util.c (which calls no type file).
 */
#include <pthread.h>

#include "rb_core.h"

static void on_fork_child(void)
{
	rbk_pid = getpid();
}

/* ---- module functions ------------------------------------------------------ */

/* Breakerd._parse_duration_ms("250ms") -> 250, by brk_parse_duration(). */
static VALUE m_parse_duration_ms(VALUE mod, VALUE s, VALUE name)
{
	const char *what = rbk_cstr(name, "name");
	const char *str = rbk_cstr(s, what);
	uint64_t ms;
	int rc = brk_parse_duration(str, &ms);

	if (rc == -ERANGE)
		rb_raise(rb_eArgError, "%s: %s is longer than the largest duration", what, str);
	if (rc)
		rb_raise(rb_eArgError,
			 "%s: '%s' is not a duration (a number of seconds, or a string "
			 "such as '250ms', '30s', '5m', '2h')", what, str);
	return ULL2NUM(ms);
}

/* Breakerd._http_classify(status, retry_after or nil, body or nil)
 * -> [outcome, reason, retry_after_ms] (outcome 0: no verdict). */
static VALUE m_http_classify(VALUE mod, VALUE status, VALUE ra, VALUE body)
{
	struct brk_result r;
	struct timespec ts;
	const char *ras = NIL_P(ra) ? NULL : rbk_cstr(ra, "Retry-After");
	int st;

	if (!RB_INTEGER_TYPE_P(status))
		rb_raise(rb_eTypeError, "status must be an Integer, not %s", rb_obj_classname(status));
	st = NUM2INT(status);
	if (!NIL_P(body))
		StringValue(body);
	clock_gettime(CLOCK_REALTIME, &ts);
	if (brk_http_classify(st, ras, NIL_P(body) ? NULL : RSTRING_PTR(body),
			      NIL_P(body) ? 0 : (size_t)RSTRING_LEN(body),
			      (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, &r))
		rb_raise(rb_eArgError, "status %d is not an HTTP status (0, or 100..999)", st);
	return rb_ary_new_from_args(3, INT2NUM(r.outcome), INT2NUM(r.reason),
				    LL2NUM(r.retry_after_ms));
}

static VALUE m_pace_signal_of(VALUE mod, VALUE o, VALUE r, VALUE ms)
{
	return INT2NUM(brk_pace_signal_of(NUM2INT(o), NUM2INT(r), NUM2LL(ms)));
}

/* Breakerd._config_check({"open_ms" => 2000, ...}) -> nil, or the name of
 * the first bad setting (brk_config_validate() over the defaults plus
 * these). */
static VALUE m_config_check(VALUE mod, VALUE h)
{
	struct brk_config c;
	const char *what = NULL;

	rbk_config_from_hash(h, &c);
	if (brk_config_validate(&c, &what))
		return rb_str_new_cstr(what ? what : "size");
	return Qnil;
}

static VALUE m_strerror(VALUE mod, VALUE code)
{
	return rb_str_new_cstr(brk_strerror(NUM2INT(code)));
}

static VALUE m_resolve_shm_name(VALUE mod, VALUE flag)
{
	return rb_str_new_cstr(brk_resolve_shm_name(NIL_P(flag) ? NULL : rbk_cstr(flag, "shm")));
}

#define CONST(name, v) rb_define_const(rbk_mBreakerd, name, INT2NUM(v))

void Init_breakerd_ext(void)
{
	VALUE defaults;

	rbk_pid = getpid();
	pthread_atfork(NULL, NULL, on_fork_child);

	rbk_mBreakerd = rb_define_module("Breakerd");
	/* Exceptions are defined in Ruby (lib/breakerd/errors.rb), before this
	 * extension is loaded. */
	rbk_eError = rb_const_get(rbk_mBreakerd, rb_intern("Error"));
	rbk_eRefused = rb_const_get(rbk_mBreakerd, rb_intern("Refused"));
	rbk_eCircuitOpen = rb_const_get(rbk_mBreakerd, rb_intern("CircuitOpen"));
	rbk_eCooling = rb_const_get(rbk_mBreakerd, rb_intern("Cooling"));
	rbk_eBulkheadFull = rb_const_get(rbk_mBreakerd, rb_intern("BulkheadFull"));
	rbk_eNoTokens = rb_const_get(rbk_mBreakerd, rb_intern("NoTokens"));
	rbk_eRetryDeferred = rb_const_get(rbk_mBreakerd, rb_intern("RetryDeferred"));

	rb_define_module_function(rbk_mBreakerd, "_parse_duration_ms", m_parse_duration_ms, 2);
	rb_define_module_function(rbk_mBreakerd, "_http_classify", m_http_classify, 3);
	rb_define_module_function(rbk_mBreakerd, "_pace_signal_of", m_pace_signal_of, 3);
	rb_define_module_function(rbk_mBreakerd, "_config_check", m_config_check, 1);
	rb_define_module_function(rbk_mBreakerd, "strerror", m_strerror, 1);
	rb_define_module_function(rbk_mBreakerd, "resolve_shm_name", m_resolve_shm_name, 1);

	CONST("SUCCESS", BRK_SUCCESS);
	CONST("FAILURE", BRK_FAILURE);
	CONST("HEALTHY_ERROR", BRK_HEALTHY_ERROR);
	CONST("REJECTED_REQUEST", BRK_REJECTED_REQUEST);
	CONST("CANCELLED", BRK_CANCELLED);
	CONST("THROTTLED", BRK_THROTTLED);
	CONST("REASON_NONE", BRK_REASON_NONE);
	CONST("REASON_TIMEOUT", BRK_REASON_TIMEOUT);
	CONST("REASON_CONNECT", BRK_REASON_CONNECT);
	CONST("REASON_SERVER_ERROR", BRK_REASON_SERVER_ERROR);
	CONST("REASON_OVERLOADED", BRK_REASON_OVERLOADED);
	CONST("REASON_RATE_LIMITED", BRK_REASON_RATE_LIMITED);
	CONST("REASON_OTHER", BRK_REASON_OTHER);
	CONST("PACE_OK", BRK_PACE_OK);
	CONST("PACE_LIMITED", BRK_PACE_LIMITED);
	CONST("PACE_IGNORE", BRK_PACE_IGNORE);
	CONST("PRIORITY_NORMAL", BRK_PRIORITY_NORMAL);
	CONST("PRIORITY_HIGH", BRK_PRIORITY_HIGH);
	CONST("MODE_NORMAL", BRK_MODE_NORMAL);
	CONST("MODE_FORCED_OPEN", BRK_MODE_FORCED_OPEN);
	CONST("MODE_DISABLED", BRK_MODE_DISABLED);
	CONST("MODE_METRICS_ONLY", BRK_MODE_METRICS_ONLY);
	rb_define_const(rbk_mBreakerd, "MAX_DURATION_MS", ULL2NUM(BRK_MAX_DURATION_MS));

	/* The library's bounds, for the messages of the Ruby layer. */
	defaults = rb_hash_new();
	rb_hash_aset(defaults, rb_str_new_cstr("failure_threshold"), UINT2NUM(BRK_MAX_FAILURE_THRESHOLD));
	rb_hash_aset(defaults, rb_str_new_cstr("success_threshold"), UINT2NUM(BRK_MAX_SUCCESS_THRESHOLD));
	rb_hash_aset(defaults, rb_str_new_cstr("half_open_probes"), UINT2NUM(BRK_MAX_PROBES));
	rb_hash_aset(defaults, rb_str_new_cstr("max_concurrent"), UINT2NUM(BRK_MAX_CONCURRENT));
	rb_hash_aset(defaults, rb_str_new_cstr("min_calls"), UINT2NUM(BRK_MAX_MIN_CALLS));
	rb_hash_aset(defaults, rb_str_new_cstr("min_distinct_processes"), UINT2NUM(BRK_MAX_QUORUM));
	rb_hash_aset(defaults, rb_str_new_cstr("reserve_pct"), UINT2NUM(BRK_MAX_RESERVE_PCT));
	rb_define_const(rbk_mBreakerd, "LIMITS", rb_obj_freeze(defaults));

	rbk_init_fakeclock();
	rbk_init_segment();
	rbk_init_breaker();
	rbk_init_permit();
	rbk_init_bucket();
	rbk_init_budget();
}
