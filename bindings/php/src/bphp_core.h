/*
 * bphp_core.h - what the files of the breakerd PHP extension share: the
 * reference-counted segment handle, the object structs, the types' entry
 * points, and (bphp_util.h) the helpers that turn library codes into PHP
 * exceptions and check arguments.
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

#include "bphp_util.h"

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

extern zend_class_entry *bphp_ce_segment, *bphp_ce_breaker, *bphp_ce_permit, *bphp_ce_admission,
	*bphp_ce_bucket,
	*bphp_ce_pace, *bphp_ce_pace_token, *bphp_ce_budget, *bphp_ce_fakeclock;

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

/* The live handle, or throw "segment closed" and return NULL. */
brk_segment *bphp_seg_get(struct bphp_seg *s);

/* A brk_config from a settings array (defaults plus these): 0, or -1 with
 * the exception naming the key thrown. @bits receives the fields given. */
int bphp_config_from_array(HashTable *h, uint32_t argn, struct brk_config *c, uint64_t *bits);
/* Throw the ValueError for a setting brk_config_validate() named. */
void bphp_config_rule_error(uint32_t argn, const char *field, HashTable *given);

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

void bphp_init_segment(void);
void bphp_init_breaker(void);
void bphp_init_permit(void);
void bphp_init_limits(void);
void bphp_init_clock(void);

#endif
