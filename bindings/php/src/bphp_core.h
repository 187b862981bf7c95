/*
 * bphp_core.h - what the files of the breakerd PHP extension share: the
 * reference-counted segment handle, the object structs, and the helpers
 * that turn library codes into PHP exceptions.
 *
 * The extension holds no rule of its own: every decision is libbreaker's.
 *
 * FPM life cycle: module init (in the master, before fork) creates
 * classes only: no segment is attached and no lease taken there. A
 * segment is attached lazily, by the first Segment::attach() of a process,
 * and kept for the life of that process (a persistent handle, keyed by
 * name; a child that inherited one through fork attaches its own), so an
 * FPM child attaches once and re-uses its handles in every request.
 * Every Permit still out at request shutdown is released as cancelled
 * (RSHUTDOWN), so a request that ends by exit(), a fatal error or
 * max_execution_time leaks no probe slot or bulkhead permit; a child that
 * dies (kill -9, pm.max_requests) holds leases the library reclaims.
 *
 * Debian's PHP is NTS: the process-wide state below is plain statics.
 */
#ifndef BPHP_CORE_H
#define BPHP_CORE_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <php.h>
#include <zend_exceptions.h>
#include <zend_interfaces.h>

#include <breaker.h>

#ifdef ZTS
#error "the breakerd extension supports NTS PHP builds only (Debian's php8.2)"
#endif

#define BPHP_VERSION "0.1.0"

/* A segment handle. Persistent ones (no fake clock) live in a
 * process-wide table for the life of the process; others (a FakeClock's)
 * are detached when the last object made from them goes. */
struct bphp_seg {
	brk_segment *seg;
	long refs;
	pid_t pid;          /* the process that attached */
	int persistent;
	zend_object *clock; /* the FakeClock (a reference held), or NULL */
	char name[256];
};

struct bphp_seg *bphp_seg_ref(struct bphp_seg *s);
void bphp_seg_unref(struct bphp_seg *s);
/* Drop every persistent handle (module shutdown). */
void bphp_seg_shutdown(void);

/* The pid of this process, refreshed in a fork()ed child (pthread_atfork). */
extern pid_t bphp_pid;

extern zend_class_entry *bphp_ce_segment, *bphp_ce_breaker, *bphp_ce_permit, *bphp_ce_admission,
	*bphp_ce_bucket,
	*bphp_ce_pace, *bphp_ce_pace_token, *bphp_ce_budget, *bphp_ce_fakeclock;
extern zend_class_entry *bphp_ce_error, *bphp_ce_refused, *bphp_ce_circuit_open, *bphp_ce_cooling,
	*bphp_ce_bulkhead_full, *bphp_ce_no_tokens, *bphp_ce_retry_deferred;

/* ---- objects -------------------------------------------------------------- */

struct bphp_segment_obj {
	struct bphp_seg *s;
	int closed;
	zend_object std;
};

struct bphp_breaker_obj {
	struct bphp_seg *s;
	brk_breaker *b;          /* owned by the segment handle */
	zend_object std;
};

struct bphp_permit_obj {
	struct bphp_seg *s;
	brk_permit p;
	pid_t pid;               /* the process admitted */
	int released;
	int counted;
	char breaker[BRK_NAME_MAX + 1];
	int admission;           /* a Breakerd\Admission: released by brk_admit_release() */
	struct brk_admission adm;
	/* the permits still out in this request (released at RSHUTDOWN) */
	struct bphp_permit_obj *prev, *next;
	zend_object std;
};

struct bphp_limit_obj {          /* Bucket, Pace and Budget */
	struct bphp_seg *s;
	void *rec;               /* brk_bucket * or brk_budget * */
	int fake_clock;
	zend_object std;
};

struct bphp_token_obj {          /* PaceToken */
	struct bphp_seg *s;
	brk_bucket *k;
	uint64_t taken_at;
	int reported;
	int cut;
	zend_object std;
};

struct bphp_clock_obj {
	uint64_t ns;
	zend_object std;
};

#define BPHP_OBJ(type, zobj) ((struct type *)((char *)(zobj) - XtOffsetOf(struct type, std)))
#define BPHP_THIS(type) BPHP_OBJ(type, Z_OBJ_P(ZEND_THIS))

/* ---- errors and arguments ------------------------------------------------- */

/* Throw Breakerd\Error for a library code, naming @what. */
void bphp_throw(int code, const char *what);
/* Throw the Refused subclass of @code with the wait (s), cause and name. */
void bphp_throw_refused(int code, double wait_s, const char *cause, const char *by);
/* The live handle, or throw "segment closed" and return NULL. */
brk_segment *bphp_seg_get(struct bphp_seg *s);

/* A duration argument: int|float seconds or a string for
 * brk_parse_duration(). 0 and *ms set, or -1 with a TypeError/ValueError
 * naming argument @argn (and @key, if not NULL) thrown. */
int bphp_duration_ms(zval *v, uint32_t argn, const char *key, uint64_t *ms);

/* A brk_config from a settings array (defaults plus these): 0, or -1 with
 * the exception naming the key thrown. @bits receives the fields given. */
int bphp_config_from_array(HashTable *h, uint32_t argn, struct brk_config *c, uint64_t *bits);
/* Throw the ValueError for a setting brk_config_validate() named. */
void bphp_config_rule_error(uint32_t argn, const char *field, HashTable *given);

/* Classify an HTTP answer: status, headers array (Retry-After looked up
 * case-insensitively; a value or a list of values). 0, or -1 thrown. */
int bphp_http_classify(zend_long status, HashTable *headers, uint32_t argn, struct brk_result *r);
/* A reason name ("server_error") to enum brk_reason; -1 if unknown. */
int bphp_reason_code(const char *name);

/* ---- arrays of `bctl inspect --json` ------------------------------------- */

void bphp_breaker_info_array(zval *rv, const struct brk_info *in);
void bphp_bucket_info_array(zval *rv, const struct brk_bucket_info *b);
void bphp_budget_info_array(zval *rv, const struct brk_budget_info *g);

/* ---- between the files ---------------------------------------------------- */

uint64_t bphp_fake_clock_read(void *ctx);
uint64_t *bphp_fake_clock_ptr(zend_object *clock);

/* A Permit object for a permit admitted by a breaker of @s. */
void bphp_permit_new(zval *rv, struct bphp_seg *s, const brk_permit *p, const char *breaker);
/* An Admission object for a GO of brk_admit() on @s. */
void bphp_admission_new(zval *rv, struct bphp_seg *s, const struct brk_admission *adm,
			const char *breaker);
/* Release every permit still out in this process (request shutdown). */
void bphp_permits_cancel_all(void);

/* Segment object -> handle (throws and returns NULL if closed). */
struct bphp_seg *bphp_segment_of(zval *self);

/* A private __construct for the classes only the extension makes
 * (Segment::attach(), $seg->breaker()...): `new` of them is an Error. */
ZEND_FUNCTION(bphp_no_construct);
static const zend_internal_arg_info bphp_ai_no_construct[] __attribute__((unused)) = {
	{ (const char *)(zend_uintptr_t)0, ZEND_TYPE_INIT_NONE(0), NULL },
};
#define BPHP_NO_CONSTRUCT \
	ZEND_RAW_FENTRY("__construct", zif_bphp_no_construct, bphp_ai_no_construct, ZEND_ACC_PRIVATE)

void bphp_init_segment(void);
void bphp_init_breaker(void);
void bphp_init_permit(void);
void bphp_init_limits(void);
void bphp_init_clock(void);

#endif
