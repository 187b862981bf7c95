/*
 * rb_util.h - the helpers of rb_util.c, shared by every file of the
 * extension (rb_core.h includes this): the module and its exceptions,
 * library codes raised as Ruby exceptions, argument checks, a brk_config
 * from a Hash, and the pid of this process.
 */
#ifndef RBK_UTIL_H
#define RBK_UTIL_H

#include <stdint.h>
#include <unistd.h>

#include <ruby.h>

#include <breaker.h>

/* The pid of this process, refreshed in a fork()ed child (pthread_atfork,
 * set up by rb_breakerd.c). */
extern pid_t rbk_pid;

/* Breakerd and its exceptions, set by Init (rb_breakerd.c). */
extern VALUE rbk_mBreakerd;
extern VALUE rbk_eError, rbk_eRefused, rbk_eCircuitOpen, rbk_eCooling, rbk_eBulkheadFull,
	rbk_eNoTokens, rbk_eRetryDeferred;

/* Raise Breakerd::Error for a library code, naming @what. */
NORETURN(void rbk_raise(int code, const char *what));
/* Raise the Refused subclass of @code with the wait (s), cause and name. */
NORETURN(void rbk_raise_refused(int code, double wait_s, const char *cause, const char *by));

/* Arguments: an Integer in 0..max, else TypeError/ArgumentError naming @name. */
uint64_t rbk_u64(VALUE v, const char *name, uint64_t max);
double rbk_num(VALUE v, const char *name);
/* A String argument, NUL-free, or TypeError/ArgumentError naming @name. */
const char *rbk_cstr(VALUE v, const char *name);

/* A brk_config: the defaults plus {"open_ms" => 2000, ...} (rb_util.c). */
void rbk_config_from_hash(VALUE h, struct brk_config *c);

#endif
