/*
 * bphp_util.c - the helpers every file of the extension shares: the
 * exception classes, library codes thrown as PHP exceptions, duration and
 * reason arguments, HTTP classification, the private constructor, and the
 * pid of this process. It calls no type file; bphp_module.c (the entry
 * point) registers the exception classes and refreshes the pid in a
 * fork()ed child.
 */
#include <math.h>
#include <time.h>

#include "bphp_core.h"

zend_class_entry *bphp_ce_error, *bphp_ce_refused, *bphp_ce_circuit_open, *bphp_ce_cooling,
	*bphp_ce_bulkhead_full, *bphp_ce_no_tokens, *bphp_ce_retry_deferred;

pid_t bphp_pid;

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
