/*
 * rb_breakerd.c - the extension's entry point: module functions (durations,
 * HTTP classification, config checks), constants, exceptions, argument
 * helpers, and the pid that fork() refreshes.
 */
#include <math.h>
#include <pthread.h>

#include "rb_core.h"

VALUE rbk_mBreakerd, rbk_eError, rbk_eRefused, rbk_eCircuitOpen, rbk_eCooling,
	rbk_eBulkheadFull, rbk_eNoTokens, rbk_eRetryDeferred;

pid_t rbk_pid;

static void on_fork_child(void)
{
	rbk_pid = getpid();
}

/* ---- errors ---------------------------------------------------------------- */

void rbk_raise(int code, const char *what)
{
	VALUE msg = rb_sprintf("%s: %s", what ? what : "breakerd", brk_strerror(code));
	VALUE e = rb_exc_new_str(rbk_eError, msg);

	rb_iv_set(e, "@code", INT2NUM(code < 0 ? -code : code));
	rb_exc_raise(e);
}

void rbk_raise_refused(int code, double wait_s, const char *cause, const char *by)
{
	VALUE cls, e, kw;

	switch (code < 0 ? -code : code) {
	case BRK_ECOOLING: cls = rbk_eCooling; break;
	case BRK_EFULL: cls = rbk_eBulkheadFull; break;
	case BRK_ENOTOKENS: cls = rbk_eNoTokens; break;
	case BRK_EDEFERRED: cls = rbk_eRetryDeferred; break;
	default: cls = rbk_eCircuitOpen; break; /* open, probes busy, forced, contended */
	}
	kw = rb_hash_new();
	rb_hash_aset(kw, ID2SYM(rb_intern("wait")), DBL2NUM(wait_s));
	rb_hash_aset(kw, ID2SYM(rb_intern("cause")), rb_str_new_cstr(cause));
	rb_hash_aset(kw, ID2SYM(rb_intern("breaker")), rb_str_new_cstr(by ? by : ""));
	e = rb_funcallv_kw(cls, rb_intern("new"), 1, &kw, RB_PASS_KEYWORDS);
	rb_exc_raise(e);
}

/* ---- arguments ------------------------------------------------------------- */

uint64_t rbk_u64(VALUE v, const char *name, uint64_t max)
{
	if (!RB_INTEGER_TYPE_P(v))
		rb_raise(rb_eTypeError, "%s must be an Integer, not %s", name, rb_obj_classname(v));
	if (rb_funcall(v, '<', 1, INT2FIX(0)) == Qtrue ||
	    rb_funcall(v, '>', 1, ULL2NUM(max)) == Qtrue)
		rb_raise(rb_eArgError, "%s must be 0..%llu, not %" PRIsVALUE, name,
			 (unsigned long long)max, v);
	return NUM2ULL(v);
}

double rbk_num(VALUE v, const char *name)
{
	double d;

	if (!RB_INTEGER_TYPE_P(v) && !RB_FLOAT_TYPE_P(v))
		rb_raise(rb_eTypeError, "%s must be a number, not %s", name, rb_obj_classname(v));
	d = NUM2DBL(v);
	if (!isfinite(d))
		rb_raise(rb_eArgError, "%s must be finite, not %" PRIsVALUE, name, v);
	return d;
}

const char *rbk_cstr(VALUE v, const char *name)
{
	if (RB_TYPE_P(v, T_SYMBOL))
		v = rb_sym2str(v);
	if (!RB_TYPE_P(v, T_STRING))
		rb_raise(rb_eTypeError, "%s must be a String, not %s", name, rb_obj_classname(v));
	if (memchr(RSTRING_PTR(v), 0, RSTRING_LEN(v)))
		rb_raise(rb_eArgError, "%s must not contain a NUL byte", name);
	return StringValueCStr(v);
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
static int fill_field(VALUE key, VALUE val, VALUE arg)
{
	struct brk_config *c = (struct brk_config *)arg;
	const char *name = rbk_cstr(key, "setting");
	uint64_t bit;

	if (brk_config_field_lookup(name, &bit))
		rb_raise(rb_eArgError, "unknown setting %s", name);
	if (brk_config_field_set(c, bit, rbk_u64(val, name, UINT64_MAX)))
		rb_raise(rb_eArgError, "%s: %" PRIsVALUE " is out of range", name, val);
	return ST_CONTINUE;
}

void rbk_config_from_hash(VALUE h, struct brk_config *c)
{
	brk_config_init(c);
	Check_Type(h, T_HASH);
	rb_hash_foreach(h, fill_field, (VALUE)c);
}

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
