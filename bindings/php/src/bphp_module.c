/*
 * bphp_module.c - the extension's entry point: module life cycle (init
 * holds no segment; request shutdown cancels the permits still out),
 * the exceptions, the namespace functions and the error helpers.
 */
#include <math.h>
#include <pthread.h>
#include <time.h>

#include <ext/spl/spl_exceptions.h>
#include <ext/standard/info.h>

#include "bphp_core.h"

zend_class_entry *bphp_ce_error, *bphp_ce_refused, *bphp_ce_circuit_open, *bphp_ce_cooling,
	*bphp_ce_bulkhead_full, *bphp_ce_no_tokens, *bphp_ce_retry_deferred;

pid_t bphp_pid;

static void on_fork_child(void)
{
	bphp_pid = getpid();
}

/* ---- errors ---------------------------------------------------------------- */

void bphp_throw(int code, const char *what)
{
	zend_throw_exception_ex(bphp_ce_error, code < 0 ? -code : code, "%s: %s",
				what ? what : "breakerd", brk_strerror(code));
}

void bphp_throw_refused(int code, double wait_s, const char *cause, const char *by)
{
	zend_class_entry *ce;
	zend_object *ex;

	switch (code < 0 ? -code : code) {
	case BRK_ECOOLING: ce = bphp_ce_cooling; break;
	case BRK_EFULL: ce = bphp_ce_bulkhead_full; break;
	case BRK_ENOTOKENS: ce = bphp_ce_no_tokens; break;
	case BRK_EDEFERRED: ce = bphp_ce_retry_deferred; break;
	default: ce = bphp_ce_circuit_open; break; /* open, probes busy, forced, contended */
	}
	ex = zend_throw_exception_ex(ce, code < 0 ? -code : code, "%s: %s, retry in %.3f s",
				     by ? by : "", cause, wait_s);
	zend_update_property_double(bphp_ce_refused, ex, "wait", sizeof("wait") - 1, wait_s);
	zend_update_property_string(bphp_ce_refused, ex, "cause", sizeof("cause") - 1, cause);
	zend_update_property_string(bphp_ce_refused, ex, "breaker", sizeof("breaker") - 1,
				    by ? by : "");
}

/* ---- arguments ------------------------------------------------------------- */

int bphp_duration_ms(zval *v, uint32_t argn, const char *key, uint64_t *ms)
{
	char kb[80] = "";
	const char *k = kb, *sep = "";

	if (key)
		snprintf(kb, sizeof(kb), "key \"%s\" ", key);
	double d;
	int rc;

	switch (Z_TYPE_P(v)) {
	case IS_LONG:
	case IS_DOUBLE:
		d = zval_get_double(v);
		if (!isfinite(d) || d < 0) {
			zend_argument_value_error(argn, "%s%sa duration must be a finite number of "
						  "seconds >= 0, not %g", k, sep, d);
			return -1;
		}
		d = d * 1000.0;
		*ms = d >= (double)BRK_MAX_DURATION_MS ? BRK_MAX_DURATION_MS : (uint64_t)llround(d);
		return 0;
	case IS_STRING:
		if (memchr(Z_STRVAL_P(v), 0, Z_STRLEN_P(v))) {
			zend_argument_value_error(argn, "%s%smust not contain a NUL byte", k, sep);
			return -1;
		}
		rc = brk_parse_duration(Z_STRVAL_P(v), ms);
		if (rc == -ERANGE) {
			zend_argument_value_error(argn, "%s%s\"%s\" is longer than the largest duration",
						  k, sep, Z_STRVAL_P(v));
			return -1;
		}
		if (rc) {
			zend_argument_value_error(argn,
				"%s%s\"%s\" is not a duration (a number of seconds, or a string such "
				"as \"250ms\", \"30s\", \"5m\", \"2h\")", k, sep, Z_STRVAL_P(v));
			return -1;
		}
		return 0;
	default:
		zend_argument_type_error(argn, "%s%smust be a duration (int|float seconds or a string "
					 "such as \"250ms\"), %s given", k, sep, zend_zval_type_name(v));
		return -1;
	}
}

int bphp_reason_code(const char *name)
{
	static const struct { const char *n; int r; } t[] = {
		{ "none", BRK_REASON_NONE }, { "timeout", BRK_REASON_TIMEOUT },
		{ "connect", BRK_REASON_CONNECT }, { "server_error", BRK_REASON_SERVER_ERROR },
		{ "overloaded", BRK_REASON_OVERLOADED }, { "rate_limited", BRK_REASON_RATE_LIMITED },
		{ "other", BRK_REASON_OTHER },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, name))
			return t[i].r;
	return -1;
}

/* The Retry-After of a headers array: the value of the first key equal to
 * "Retry-After" ignoring case; a list gives its first element. */
static zval *retry_after_of(HashTable *headers)
{
	zend_string *key;
	zval *val;

	if (!headers)
		return NULL;
	ZEND_HASH_FOREACH_STR_KEY_VAL(headers, key, val) {
		if (!key || ZSTR_LEN(key) != sizeof("retry-after") - 1 ||
		    strncasecmp(ZSTR_VAL(key), "retry-after", ZSTR_LEN(key)))
			continue;
		ZVAL_DEREF(val);
		if (Z_TYPE_P(val) == IS_ARRAY) {
			val = zend_hash_index_find(Z_ARRVAL_P(val), 0);
			if (!val)
				return NULL;
			ZVAL_DEREF(val);
		}
		return val;
	} ZEND_HASH_FOREACH_END();
	return NULL;
}

int bphp_http_classify(zend_long status, HashTable *headers, uint32_t argn, struct brk_result *r)
{
	struct timespec ts;
	zval *ra = retry_after_of(headers);
	zend_string *ras = NULL;
	int rc;

	if (status < 0 || status > 999) {
		zend_argument_value_error(1, "must be an HTTP status (0, or 100..999), not "
					  ZEND_LONG_FMT, status);
		return -1;
	}
	if (ra && Z_TYPE_P(ra) != IS_NULL) {
		if (Z_TYPE_P(ra) != IS_STRING && Z_TYPE_P(ra) != IS_LONG) {
			zend_argument_type_error(argn, "Retry-After must be a string, %s given",
						 zend_zval_type_name(ra));
			return -1;
		}
		ras = zval_get_string(ra);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	rc = brk_http_classify((int)status, ras ? ZSTR_VAL(ras) : NULL, NULL, 0,
			       (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, r);
	if (ras)
		zend_string_release(ras);
	if (rc) {
		zend_argument_value_error(1, "must be an HTTP status (0, or 100..999), not "
					  ZEND_LONG_FMT, status);
		return -1;
	}
	return 0;
}

ZEND_FUNCTION(bphp_no_construct)
{
	ZEND_PARSE_PARAMETERS_NONE();
}

/* ---- namespace functions --------------------------------------------------- */

/* Breakerd\classifyHttp(int $status, array $headers = []): array
 * ['outcome' => 'failure', 'reason' => 'rate_limited', 'retry_after' => 2.0|null]
 * (outcome null: no verdict, status 0). */
PHP_FUNCTION(classifyHttp)
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
	array_init(return_value);
	if (r.outcome)
		add_assoc_string(return_value, "outcome", brk_outcome_name(r.outcome));
	else
		add_assoc_null(return_value, "outcome");
	add_assoc_string(return_value, "reason",
			 r.outcome == BRK_FAILURE ? brk_reason_name(r.reason) : "none");
	if (r.retry_after_ms > 0)
		add_assoc_double(return_value, "retry_after", (double)r.retry_after_ms / 1000.0);
	else
		add_assoc_null(return_value, "retry_after");
}

/* Breakerd\parseDuration(int|float|string $d): float (seconds) */
PHP_FUNCTION(parseDuration)
{
	zval *d;
	uint64_t ms;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ZVAL(d)
	ZEND_PARSE_PARAMETERS_END();
	if (bphp_duration_ms(d, 1, NULL, &ms))
		RETURN_THROWS();
	RETURN_DOUBLE((double)ms / 1000.0);
}

/* ---- Refused --------------------------------------------------------------- */

static void refused_prop(INTERNAL_FUNCTION_PARAMETERS, const char *name)
{
	zval rv, *v;

	ZEND_PARSE_PARAMETERS_NONE();
	v = zend_read_property(bphp_ce_refused, Z_OBJ_P(ZEND_THIS), name, strlen(name), 1, &rv);
	RETURN_COPY_DEREF(v);
}

PHP_METHOD(Breakerd_Refused, getWait) { refused_prop(INTERNAL_FUNCTION_PARAM_PASSTHRU, "wait"); }
PHP_METHOD(Breakerd_Refused, getCause) { refused_prop(INTERNAL_FUNCTION_PARAM_PASSTHRU, "cause"); }
PHP_METHOD(Breakerd_Refused, getBreaker) { refused_prop(INTERNAL_FUNCTION_PARAM_PASSTHRU, "breaker"); }

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_get_double, 0, 0, IS_DOUBLE, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_get_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()

static const zend_function_entry refused_methods[] = {
	PHP_ME(Breakerd_Refused, getWait, ai_get_double, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Refused, getCause, ai_get_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Refused, getBreaker, ai_get_string, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_classify_http, 0, 1, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO(0, status, IS_LONG, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, headers, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_parse_duration, 0, 1, IS_DOUBLE, 0)
	ZEND_ARG_TYPE_MASK(0, duration, MAY_BE_LONG | MAY_BE_DOUBLE | MAY_BE_STRING, NULL)
ZEND_END_ARG_INFO()

static const zend_function_entry module_functions[] = {
	ZEND_NS_FE("Breakerd", classifyHttp, ai_classify_http)
	ZEND_NS_FE("Breakerd", parseDuration, ai_parse_duration)
	PHP_FE_END
};

static zend_class_entry *sub(const char *name, zend_class_entry *parent)
{
	zend_class_entry ce;

	INIT_CLASS_ENTRY_EX(ce, name, strlen(name), NULL);
	return zend_register_internal_class_ex(&ce, parent);
}

#define CONST_L(name, v) zend_register_long_constant("Breakerd\\" name, \
	sizeof("Breakerd\\" name) - 1, (v), CONST_CS | CONST_PERSISTENT, module_number)

static PHP_MINIT_FUNCTION(breakerd)
{
	zend_class_entry ce;

	/* No segment here: this runs in the FPM master, before fork. */
	bphp_pid = getpid();
	pthread_atfork(NULL, NULL, on_fork_child);

	INIT_CLASS_ENTRY(ce, "Breakerd\\Error", NULL);
	bphp_ce_error = zend_register_internal_class_ex(&ce, spl_ce_RuntimeException);
	INIT_CLASS_ENTRY(ce, "Breakerd\\Refused", refused_methods);
	bphp_ce_refused = zend_register_internal_class_ex(&ce, spl_ce_RuntimeException);
	bphp_ce_refused->ce_flags |= ZEND_ACC_ABSTRACT;
	zend_declare_property_double(bphp_ce_refused, "wait", sizeof("wait") - 1, 0.0,
				     ZEND_ACC_PROTECTED);
	zend_declare_property_string(bphp_ce_refused, "cause", sizeof("cause") - 1, "",
				     ZEND_ACC_PROTECTED);
	zend_declare_property_string(bphp_ce_refused, "breaker", sizeof("breaker") - 1, "",
				     ZEND_ACC_PROTECTED);
	bphp_ce_circuit_open = sub("Breakerd\\CircuitOpen", bphp_ce_refused);
	bphp_ce_cooling = sub("Breakerd\\Cooling", bphp_ce_refused);
	bphp_ce_bulkhead_full = sub("Breakerd\\BulkheadFull", bphp_ce_refused);
	bphp_ce_no_tokens = sub("Breakerd\\NoTokens", bphp_ce_refused);
	bphp_ce_retry_deferred = sub("Breakerd\\RetryDeferred", bphp_ce_refused);

	CONST_L("MAX_DURATION_MS", (zend_long)BRK_MAX_DURATION_MS);
	zend_register_string_constant("Breakerd\\VERSION", sizeof("Breakerd\\VERSION") - 1,
				      BPHP_VERSION, CONST_CS | CONST_PERSISTENT, module_number);

	bphp_init_clock();
	bphp_init_segment();
	bphp_init_breaker();
	bphp_init_permit();
	bphp_init_limits();
	return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(breakerd)
{
	bphp_seg_shutdown();
	return SUCCESS;
}

static PHP_RSHUTDOWN_FUNCTION(breakerd)
{
	/* A permit left unreported (exit(), a fatal error, a timeout, or one
	 * kept in a global) must not hold its probe slot or bulkhead permit
	 * into the next request: cancelled, no verdict. */
	bphp_permits_cancel_all();
	return SUCCESS;
}

static PHP_MINFO_FUNCTION(breakerd)
{
	php_info_print_table_start();
	php_info_print_table_header(2, "breakerd support", "enabled");
	php_info_print_table_row(2, "version", BPHP_VERSION);
	php_info_print_table_row(2, "default segment", brk_resolve_shm_name(NULL));
	php_info_print_table_end();
}

zend_module_entry breakerd_module_entry = {
	STANDARD_MODULE_HEADER,
	"breakerd",
	module_functions,
	PHP_MINIT(breakerd),
	PHP_MSHUTDOWN(breakerd),
	NULL,
	PHP_RSHUTDOWN(breakerd),
	PHP_MINFO(breakerd),
	BPHP_VERSION,
	STANDARD_MODULE_PROPERTIES
};

#ifdef COMPILE_DL_BREAKERD
ZEND_GET_MODULE(breakerd)
#endif
