/*
 * bphp_module.c - the extension's entry point: module life cycle (init
 * holds no segment; request shutdown cancels the permits still out),
 * the exceptions and the namespace functions; MINIT calls every type
 * file's init. The error and argument helpers the type files share are
 * in bphp_util.c (which calls no type file).
 */
#include <pthread.h>

#include <ext/spl/spl_exceptions.h>
#include <ext/standard/info.h>

#include "bphp_core.h"

static void on_fork_child(void)
{
	bphp_pid = getpid();
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
