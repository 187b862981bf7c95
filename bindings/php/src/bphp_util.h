/*
 * bphp_util.h - the helpers of bphp_util.c, shared by every file of the
 * extension (bphp_core.h includes this): the exception classes, library
 * codes thrown as PHP exceptions, duration and reason arguments, HTTP
 * classification, the private constructor, and the pid of this process.
 */
#ifndef BPHP_UTIL_H
#define BPHP_UTIL_H

#include <stdint.h>
#include <unistd.h>

#include <php.h>

#include <breaker.h>

/* The pid of this process, refreshed in a fork()ed child (pthread_atfork,
 * set up by bphp_module.c). */
extern pid_t bphp_pid;

/* The exception classes, registered by MINIT (bphp_module.c). */
extern zend_class_entry *bphp_ce_error, *bphp_ce_refused, *bphp_ce_circuit_open, *bphp_ce_cooling,
	*bphp_ce_bulkhead_full, *bphp_ce_no_tokens, *bphp_ce_retry_deferred;

/* Throw Breakerd\Error for a library code, naming @what. */
void bphp_throw(int code, const char *what);
/* Throw the Refused subclass of @code with the wait (s), cause and name. */
void bphp_throw_refused(int code, double wait_s, const char *cause, const char *by);

/* A duration argument: int|float seconds or a string for
 * brk_parse_duration(). 0 and *ms set, or -1 with a TypeError/ValueError
 * naming argument @argn (and @key, if not NULL) thrown. */
int bphp_duration_ms(zval *v, uint32_t argn, const char *key, uint64_t *ms);

/* Classify an HTTP answer: status, headers array (Retry-After looked up
 * case-insensitively; a value or a list of values). 0, or -1 thrown. */
int bphp_http_classify(zend_long status, HashTable *headers, uint32_t argn, struct brk_result *r);
/* A reason name ("server_error") to enum brk_reason; -1 if unknown. */
int bphp_reason_code(const char *name);

/* A private __construct for the classes only the extension makes
 * (Segment::attach(), $seg->breaker()...): `new` of them is an Error. */
ZEND_FUNCTION(bphp_no_construct);
static const zend_internal_arg_info bphp_ai_no_construct[] __attribute__((unused)) = {
	{ (const char *)(zend_uintptr_t)0, ZEND_TYPE_INIT_NONE(0), NULL },
};
#define BPHP_NO_CONSTRUCT \
	ZEND_RAW_FENTRY("__construct", zif_bphp_no_construct, bphp_ai_no_construct, ZEND_ACC_PRIVATE)

#endif
