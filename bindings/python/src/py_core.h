/*
 * py_core.h - what the files of breakerd._core share: the object layouts of
 * its types, the type objects, the exception classes (defined in
 * breakerd/_errors.py) and the argument and error helpers. Internal to the
 * extension (built with hidden visibility: nothing here is exported).
 */
#ifndef BRKPY_CORE_H
#define BRKPY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <breaker.h>

typedef struct {
	PyObject_HEAD
	uint64_t now_ns; /* read by the library through brkpy_fake_clock_read() */
} FakeClockObject;

typedef struct {
	PyObject_HEAD
	brk_segment *seg;   /* NULL once closed */
	PyObject *clock;    /* a FakeClock kept alive while attached, or NULL */
	PyObject *shm;      /* str */
	int readonly;
	int busy;           /* admit() calls sleeping without the GIL:
	                       close() refuses while not 0 (py_admit.c) */
} SegmentObject;

typedef struct {
	PyObject_HEAD
	SegmentObject *seg;
	brk_breaker *b;
	int created;        /* this get created the record (brk_breaker_get_ex) */
} BreakerObject;

typedef struct {
	PyObject_HEAD
	BreakerObject *br;
	brk_permit p;
	pid_t pid;      /* the process that acquired it */
	int released;   /* reported (or given up) once */
	int counted;    /* -1 not yet released; 0 / 1 */
} PermitObject;

/* The C base of breakerd.Breaker: `with br:`, `br.call()` (py_guard.c). */
typedef struct {
	PyObject_HEAD
	BreakerObject *core;      /* the record */
	PyTypeObject *permit_cls; /* breakerd.Permit: what __enter__ returns */
} GuardObject;

/* The `with` blocks open in one context (py_held.c). */
typedef struct brkpy_held brkpy_held;

typedef struct {
	PyObject_HEAD
	SegmentObject *seg;
	brk_bucket *k;
} BucketObject;

typedef struct {
	PyObject_HEAD
	SegmentObject *seg;
	brk_budget *g;
} BudgetObject;

extern PyTypeObject brkpy_FakeClockType, brkpy_SegmentType, brkpy_BreakerType,
	brkpy_PermitType, brkpy_BucketType, brkpy_BudgetType, brkpy_GuardType, brkpy_HeldType;
/* A pace is a BucketObject of its own type (py_pace.c). */
extern PyTypeObject brkpy_PaceType;

/* An admitted job (py_admit.c). */
typedef struct {
	PyObject_HEAD
	SegmentObject *seg;   /* NULL until admitted */
	struct brk_admission adm;
	pid_t pid;            /* the process that was admitted */
	int released;         /* released (or given up) once */
	int paced;            /* a pace was given */
} AdmissionObject;
extern PyTypeObject brkpy_AdmissionType;

/* breakerd._errors classes, loaded by PyInit__core() */
extern PyObject *brkpy_Error_cls, *brkpy_CircuitOpen_cls, *brkpy_Cooling_cls,
	*brkpy_BulkheadFull_cls, *brkpy_RetryDeferred_cls, *brkpy_NoTokens_cls,
	*brkpy_DeadlineExpired_cls;

/* this process's pid (py_permit.c), refreshed in fork()ed children */
extern pid_t brkpy_self_pid;

void brkpy_refresh_pid(void);
PyObject *brkpy_raise_error(int rc, const char *what, const char *errbuf);
PyObject *brkpy_raise_refusal(PyObject *cls, double wait_s, const char *cause,
			       const char *by);
PyObject *brkpy_set_error(int rc, const char *what, const char *errbuf);
/* ValueError with a printf-formatted message (PyErr_Format has no %g:
 * a double would print as a literal "%g"); returns NULL. */
PyObject *brkpy_value_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
int brkpy_get_u64(PyObject *o, const char *name, uint64_t max, uint64_t *out);
const char *brkpy_get_name(PyObject *o, const char *argname);
int brkpy_put(PyObject *d, const char *key, PyObject *v);
uint64_t brkpy_fake_clock_read(void *ctx);
int brkpy_seg_check(SegmentObject *s);
PyObject *brkpy_attach(PyObject *mod, PyObject *args, PyObject *kw);
int brkpy_cfg_from_dict(PyObject *d, struct brk_config *c);
PyObject *brkpy_cfg_to_dict(const struct brk_config *c);
PyObject *brkpy_config_check(PyObject *mod, PyObject *d);
PyObject *brkpy_config_defaults(PyObject *mod, PyObject *unused);
int brkpy_permit_fill(PermitObject *p, BreakerObject *br, struct brk_refusal *why);
PyObject *brkpy_permit_release(PermitObject *self, int outcome, int reason, long long ra);
PyObject *brkpy_raise_acquire(BreakerObject *self, int rc, const struct brk_refusal *why);
int brkpy_acquire(BreakerObject *br, brk_permit *p, struct brk_refusal *why);

/* py_held.c: the permits of the open `with` blocks of the current context */
int brkpy_held_init(void);
int brkpy_guard_init(void);
const void *brkpy_frame_tag(PyThreadState *ts);
brkpy_held *brkpy_held_get(PyThreadState *ts, int create);
void brkpy_held_unref(brkpy_held *h);
PermitObject *brkpy_held_take_spare(brkpy_held *h, PyTypeObject *cls);
void brkpy_held_recycle(brkpy_held *h, PermitObject *p);
int brkpy_held_push(brkpy_held *h, PyObject *guard, PermitObject *p, const void *frame);
PermitObject *brkpy_held_pop(brkpy_held *h, PyObject *guard, const void *frame);
PyObject *brkpy_held_list(PyObject *mod, PyObject *unused);
PyObject *brkpy_segment_breaker(SegmentObject *self, PyObject *args);
PyObject *brkpy_make_info(const struct brk_info *in);
PyObject *brkpy_make_bucket_info(const struct brk_bucket_info *b);
PyObject *brkpy_make_budget_info(const struct brk_budget_info *g);
int brkpy_get_rate(PyObject *o, const char *name, double *out);
PyObject *brkpy_segment_bucket(SegmentObject *self, PyObject *args);
PyObject *brkpy_segment_budget(SegmentObject *self, PyObject *args);
PyObject *brkpy_segment_pace(SegmentObject *self, PyObject *args);
PyObject *brkpy_pace_signal_of(PyObject *mod, PyObject *args);
PyObject *brkpy_segment_health(SegmentObject *self, PyObject *arg);
PyObject *brkpy_segment_set_fallback(SegmentObject *self, PyObject *args);
PyObject *brkpy_segment_admit(SegmentObject *self, PyObject *args);
PyObject *brkpy_outcome_code(PyObject *mod, PyObject *args);
PyObject *brkpy_admit_code_name(PyObject *mod, PyObject *arg);

#define PUTU(d, k, v) brkpy_put(d, k, PyLong_FromUnsignedLongLong((unsigned long long)(v)))
#define PUTI(d, k, v) brkpy_put(d, k, PyLong_FromLongLong((long long)(v)))
#define PUTS(d, k, v) brkpy_put(d, k, PyUnicode_FromString(v))
#define PUTD(d, k, v) brkpy_put(d, k, PyFloat_FromDouble(v))

#endif /* BRKPY_CORE_H */
