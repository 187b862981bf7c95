/*
 * _core.c - breakerd._core: the CPython extension over libbreaker.
 *
 * Types: Segment (brk_segment), Breaker (brk_breaker), Permit (brk_permit),
 * Bucket (brk_bucket), Budget (brk_budget), FakeClock (an injected clock
 * whose value lives in this object, read by the library as a uint64 with
 * no Python call and no GIL). The friendly surface (durations, exception
 * classification, context managers, decorators) is the breakerd package; this
 * file only translates between Python objects and the C API and maps every
 * library code to a Python exception (see set_error()).
 *
 * The GIL: kept held around every call on a breaker, bucket or budget
 * (acquire, release, take, deposit, info): each is a few atomics in shared
 * memory, about 40 ns, while releasing and re-taking the GIL costs more and
 * would let another thread run brk_detach() (Segment.close()) under the
 * call. It is released only around brk_attach(), which may wait up to
 * init_wait_ms for another process to finish creating the segment and is
 * made before any handle exists.
 *
 * Fork: a brk_permit records its owner's pid; brk_release() from another
 * process (a fork()ed child holding a copy of its parent's Permit object)
 * returns -BRK_ESTALE and frees nothing, so Permit.release reports "not
 * counted" there. A Permit garbage-collected unreported in the process that
 * acquired it is released as cancelled with a ResourceWarning; one that a
 * child inherited is dropped silently (it is the parent's to release).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <breaker.h>

/* This process's pid, refreshed in a fork()ed child (getpid() is a
 * syscall; a permit records its owner on every acquire). */
static pid_t self_pid;

static void refresh_pid(void)
{
	self_pid = getpid();
}

/* ---- exceptions (classes defined in breakerd/_errors.py) -------------- */

static PyObject *Error_cls, *CircuitOpen_cls, *Cooling_cls, *BulkheadFull_cls,
	*RetryDeferred_cls, *NoTokens_cls;

/* Raise breakerd.Error(errno, message) for a library or system code. */
static PyObject *raise_error(int rc, const char *what, const char *errbuf)
{
	PyObject *exc;
	int code = rc < 0 ? -rc : rc;

	if (errbuf && errbuf[0])
		exc = PyObject_CallFunction(Error_cls, "is", code, errbuf);
	else if (what) {
		PyObject *msg = PyUnicode_FromFormat("%s: %s", what, brk_strerror(rc));

		if (!msg)
			return NULL;
		exc = PyObject_CallFunction(Error_cls, "iO", code, msg);
		Py_DECREF(msg);
	}
	else
		exc = PyObject_CallFunction(Error_cls, "is", code, brk_strerror(rc));
	if (exc) {
		PyErr_SetObject(Error_cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

/* Raise a Refused subclass with wait (s), cause and breaker. */
static PyObject *raise_refusal(PyObject *cls, double wait_s, const char *cause,
			       const char *by)
{
	PyObject *kw, *args, *exc;

	kw = Py_BuildValue("{s:d,s:s,s:s}", "wait", wait_s, "cause", cause,
			   "breaker", by);
	if (!kw)
		return NULL;
	args = PyTuple_New(0);
	if (!args) {
		Py_DECREF(kw);
		return NULL;
	}
	exc = PyObject_Call(cls, args, kw);
	Py_DECREF(args);
	Py_DECREF(kw);
	if (exc) {
		PyErr_SetObject(cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

/*
 * set_error - map a negative library code to a Python exception.
 * @what: the argument or object the call was about, for the message.
 * Bad arguments are ValueError (TypeError is raised earlier, on types);
 * everything else is breakerd.Error (an OSError with .errno).
 */
static PyObject *set_error(int rc, const char *what, const char *errbuf)
{
	switch (-rc) {
	case EINVAL:
	case ENAMETOOLONG:
	case ERANGE:
		if (errbuf && errbuf[0])
			return PyErr_Format(PyExc_ValueError, "%s: %s", what, errbuf);
		return PyErr_Format(PyExc_ValueError, "%s: %s", what, brk_strerror(rc));
	case EMEDIUMTYPE:
		return PyErr_Format(PyExc_ValueError,
				    "%s: the name is already used by a record of another kind",
				    what);
	default:
		return raise_error(rc, what, errbuf);
	}
}

/* ---- argument helpers --------------------------------------------------- */

/* An int in 0..max (bool refused), named @name in the errors. */
static int get_u64(PyObject *o, const char *name, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	int overflow = 0;
	long long sv;

	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	sv = PyLong_AsLongLongAndOverflow(o, &overflow);
	if (sv == -1 && PyErr_Occurred())
		return -1;
	if (overflow < 0 || (!overflow && sv < 0)) {
		PyErr_Format(PyExc_ValueError, "%s must not be negative", name);
		return -1;
	}
	if (overflow > 0) {
		v = PyLong_AsUnsignedLongLong(o);
		if (v == (unsigned long long)-1 && PyErr_Occurred()) {
			PyErr_Clear();
			v = ULLONG_MAX;
		}
	} else {
		v = (unsigned long long)sv;
	}
	if (v > max) {
		PyErr_Format(PyExc_ValueError, "%s must be at most %llu", name,
			     (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* A str naming a record: validated by the library, as UTF-8. */
static const char *get_name(PyObject *o, const char *argname)
{
	const char *s;
	Py_ssize_t len;
	int rc;

	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", argname,
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	s = PyUnicode_AsUTF8AndSize(o, &len);
	if (!s)
		return NULL;
	if ((size_t)len != strlen(s)) {
		PyErr_Format(PyExc_ValueError, "%s must not contain NUL", argname);
		return NULL;
	}
	rc = brk_name_validate(s);
	if (rc == -ENAMETOOLONG) {
		PyErr_Format(PyExc_ValueError, "%s %R is longer than %d bytes", argname,
			     o, BRK_NAME_MAX);
		return NULL;
	}
	if (rc) {
		PyErr_Format(PyExc_ValueError,
			     "%s %R is not 1-%d bytes of [A-Za-z0-9._:/-] with no empty level",
			     argname, o, BRK_NAME_MAX);
		return NULL;
	}
	return s;
}

static int put(PyObject *d, const char *key, PyObject *v)
{
	int rc;

	if (!v)
		return -1;
	rc = PyDict_SetItemString(d, key, v);
	Py_DECREF(v);
	return rc;
}

#define PUTU(d, k, v) put(d, k, PyLong_FromUnsignedLongLong((unsigned long long)(v)))
#define PUTI(d, k, v) put(d, k, PyLong_FromLongLong((long long)(v)))
#define PUTS(d, k, v) put(d, k, PyUnicode_FromString(v))
#define PUTD(d, k, v) put(d, k, PyFloat_FromDouble(v))

/* ---- FakeClock ---------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	uint64_t now_ns; /* read by the library through fake_clock_read() */
} FakeClockObject;

static uint64_t fake_clock_read(void *ctx)
{
	return __atomic_load_n((uint64_t *)ctx, __ATOMIC_ACQUIRE);
}

static int fakeclock_init(FakeClockObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "start_ns", NULL };
	PyObject *start = NULL;
	uint64_t v = 1000000000000ULL; /* 1000 s: a clock that is not at 0 */

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:FakeClock", kwlist, &start))
		return -1;
	if (start && get_u64(start, "start_ns", UINT64_MAX / 2, &v))
		return -1;
	__atomic_store_n(&self->now_ns, v, __ATOMIC_RELEASE);
	return 0;
}

static PyObject *fakeclock_get_now(FakeClockObject *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(__atomic_load_n(&self->now_ns, __ATOMIC_ACQUIRE));
}

static PyObject *fakeclock_advance_ns(FakeClockObject *self, PyObject *arg)
{
	uint64_t d, now;

	if (get_u64(arg, "ns", UINT64_MAX / 4, &d))
		return NULL;
	now = __atomic_add_fetch(&self->now_ns, d, __ATOMIC_ACQ_REL);
	return PyLong_FromUnsignedLongLong(now);
}

static PyMethodDef fakeclock_methods[] = {
	{ "_advance_ns", (PyCFunction)fakeclock_advance_ns, METH_O,
	  "Move the clock forward by ns nanoseconds; returns the new time." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef fakeclock_getset[] = {
	{ "now_ns", (getter)fakeclock_get_now, NULL,
	  "The clock's time in ns (what the library reads).", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject FakeClockType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.FakeClock",
	.tp_basicsize = sizeof(FakeClockObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A monotonic clock for tests whose value lives in C.",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)fakeclock_init,
	.tp_methods = fakeclock_methods,
	.tp_getset = fakeclock_getset,
};

/* ---- Segment ------------------------------------------------------------ */

typedef struct {
	PyObject_HEAD
	brk_segment *seg;   /* NULL once closed */
	PyObject *clock;    /* a FakeClock kept alive while attached, or NULL */
	PyObject *shm;      /* str */
	int readonly;
} SegmentObject;

static PyTypeObject SegmentType, BreakerType, PermitType, BucketType, BudgetType;

static int seg_check(SegmentObject *s)
{
	if (!s->seg) {
		PyErr_SetString(PyExc_ValueError, "the segment is closed");
		return -1;
	}
	return 0;
}

static void segment_dealloc(SegmentObject *self)
{
	if (self->seg)
		brk_detach(self->seg);
	self->seg = NULL;
	Py_CLEAR(self->clock);
	Py_CLEAR(self->shm);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* attach(shm=None, capacity=0, readonly=False, clock=None) */
static PyObject *core_attach(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "shm", "capacity", "readonly", "clock", NULL };
	PyObject *shm = Py_None, *cap = NULL, *clock = Py_None;
	int readonly = 0, rc;
	uint64_t capacity = 0;
	struct brk_attach_opts o;
	const char *name = NULL;
	char errbuf[512] = "";
	brk_segment *seg = NULL;
	SegmentObject *self;

	(void)mod;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOpO:attach", kwlist, &shm, &cap,
					 &readonly, &clock))
		return NULL;
	if (shm != Py_None) {
		if (!PyUnicode_Check(shm))
			return PyErr_Format(PyExc_TypeError, "shm must be a str or None, not %.100s",
					    Py_TYPE(shm)->tp_name);
		Py_ssize_t len;

		name = PyUnicode_AsUTF8AndSize(shm, &len);
		if (!name)
			return NULL;
		if ((size_t)len != strlen(name))
			return PyErr_Format(PyExc_ValueError, "shm must not contain NUL");
	}
	if (cap && cap != Py_None) {
		if (get_u64(cap, "capacity", BRK_MAX_CAPACITY, &capacity))
			return NULL;
		if (capacity == 0)
			return PyErr_Format(PyExc_ValueError, "capacity must be 1..%u",
					    BRK_MAX_CAPACITY);
	}
	if (clock != Py_None && !PyObject_TypeCheck(clock, &FakeClockType))
		return PyErr_Format(PyExc_TypeError,
				    "clock must be a breakerd.testing.FakeClock or None, not %.100s",
				    Py_TYPE(clock)->tp_name);
	self = (SegmentObject *)SegmentType.tp_alloc(&SegmentType, 0);
	if (!self)
		return NULL;
	name = brk_resolve_shm_name(name);
	self->shm = PyUnicode_FromString(name);
	if (!self->shm) {
		Py_DECREF(self);
		return NULL;
	}
	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.capacity = (uint32_t)capacity;
	o.flags = readonly ? BRK_ATTACH_READONLY : 0;
	o.errbuf = errbuf;
	o.errbuf_len = sizeof(errbuf);
	if (clock != Py_None) {
		o.clock = fake_clock_read;
		o.clock_ctx = &((FakeClockObject *)clock)->now_ns;
	}
	/* May wait up to init_wait_ms for a creator: let other threads run. */
	Py_BEGIN_ALLOW_THREADS
	rc = brk_attach(&o, &seg);
	Py_END_ALLOW_THREADS
	if (rc) {
		Py_DECREF(self);
		if (rc == -EINVAL)
			return PyErr_Format(PyExc_ValueError, "shm: %s",
					    errbuf[0] ? errbuf : brk_strerror(rc));
		return raise_error(rc, name, errbuf);
	}
	self->seg = seg;
	self->readonly = readonly;
	if (clock != Py_None) {
		Py_INCREF(clock);
		self->clock = clock;
	}
	return (PyObject *)self;
}

static PyObject *segment_close(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	/* Handles of breakers from this segment now refuse every call
	 * (seg_check) before they touch the unmapped memory. */
	if (self->seg)
		brk_detach(self->seg);
	self->seg = NULL;
	Py_RETURN_NONE;
}

/* Fill a brk_config from the defaults and a dict of C field names. */
struct cfg_field {
	const char *name;
	size_t off;
	int is64;
};

#define CF32(f) { #f, offsetof(struct brk_config, f), 0 }
#define CF64(f) { #f, offsetof(struct brk_config, f), 1 }
static const struct cfg_field cfg_fields[] = {
	CF32(failure_threshold), CF32(failure_rate_pct), CF64(window_ms),
	CF32(min_calls), CF64(slow_call_ms), CF32(slow_rate_pct), CF64(open_ms),
	CF64(max_open_ms), CF32(half_open_probes), CF32(success_threshold),
	CF64(probe_timeout_ms), CF64(max_wait_ms), CF32(max_concurrent),
	CF32(min_distinct_processes),
};
#define N_CFG (sizeof(cfg_fields) / sizeof(cfg_fields[0]))

static int cfg_from_dict(PyObject *d, struct brk_config *c)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	size_t i;
	uint64_t x;

	if (d == Py_None)
		return 0;
	if (!PyDict_Check(d)) {
		PyErr_SetString(PyExc_TypeError, "settings must be a dict");
		return -1;
	}
	while (PyDict_Next(d, &pos, &k, &v)) {
		const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;

		if (!ks) {
			PyErr_SetString(PyExc_TypeError, "setting names must be str");
			return -1;
		}
		for (i = 0; i < N_CFG; i++)
			if (strcmp(cfg_fields[i].name, ks) == 0)
				break;
		if (i == N_CFG) {
			PyErr_Format(PyExc_TypeError, "unknown setting %R", k);
			return -1;
		}
		if (get_u64(v, ks, cfg_fields[i].is64 ? UINT64_MAX : UINT32_MAX, &x))
			return -1;
		if (cfg_fields[i].is64)
			memcpy((char *)c + cfg_fields[i].off, &x, sizeof(uint64_t));
		else {
			uint32_t y = (uint32_t)x;

			memcpy((char *)c + cfg_fields[i].off, &y, sizeof(uint32_t));
		}
	}
	return 0;
}

/* The defaults (brk_config_init()) as a dict of C field names. */
static PyObject *cfg_to_dict(const struct brk_config *c)
{
	PyObject *d = PyDict_New();
	size_t i;
	uint64_t x;

	if (!d)
		return NULL;
	for (i = 0; i < N_CFG; i++) {
		if (cfg_fields[i].is64)
			memcpy(&x, (const char *)c + cfg_fields[i].off, sizeof(x));
		else {
			uint32_t y;

			memcpy(&y, (const char *)c + cfg_fields[i].off, sizeof(y));
			x = y;
		}
		if (PUTU(d, cfg_fields[i].name, x)) {
			Py_DECREF(d);
			return NULL;
		}
	}
	return d;
}

/* config_check(settings) -> None, or the C name of the first bad setting. */
static PyObject *core_config_check(PyObject *mod, PyObject *d)
{
	struct brk_config c;
	const char *what = NULL;

	(void)mod;
	brk_config_init(&c);
	if (cfg_from_dict(d, &c))
		return NULL;
	if (brk_config_validate(&c, &what) == 0)
		Py_RETURN_NONE;
	return PyUnicode_FromString(what ? what : "settings");
}

static PyObject *core_config_defaults(PyObject *mod, PyObject *unused)
{
	struct brk_config c;

	(void)mod;
	(void)unused;
	brk_config_init(&c);
	return cfg_to_dict(&c);
}

/* ---- Breaker ------------------------------------------------------------ */

typedef struct {
	PyObject_HEAD
	SegmentObject *seg;
	brk_breaker *b;
} BreakerObject;

static void breaker_dealloc(BreakerObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int brk_check(BreakerObject *self)
{
	return seg_check(self->seg);
}

typedef struct {
	PyObject_HEAD
	BreakerObject *br;
	brk_permit p;
	pid_t pid;      /* the process that acquired it */
	int released;   /* reported (or given up) once */
	int counted;    /* -1 not yet released; 0 / 1 */
} PermitObject;

static int permit_fill(PermitObject *p, BreakerObject *br, struct brk_refusal *why)
{
	int rc;

	p->released = 1; /* until admitted: nothing to release */
	p->counted = -1;
	rc = brk_acquire(br->b, &p->p, why);
	if (rc)
		return rc;
	Py_INCREF(br);
	p->br = br;
	p->pid = self_pid;
	p->released = 0;
	return 0;
}

/* Segment.breaker(name, settings=None) */
static PyObject *segment_breaker(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *d = Py_None;
	const char *name;
	struct brk_config c;
	const char *what = NULL;
	brk_breaker *b;
	BreakerObject *o;
	int rc;

	if (!PyArg_ParseTuple(args, "O|O:breaker", &nameo, &d))
		return NULL;
	if (seg_check(self))
		return NULL;
	name = get_name(nameo, "name");
	if (!name)
		return NULL;
	brk_config_init(&c);
	if (cfg_from_dict(d, &c))
		return NULL;
	if (brk_config_validate(&c, &what))
		return PyErr_Format(PyExc_ValueError, "bad setting %s", what ? what : "?");
	o = (BreakerObject *)BreakerType.tp_alloc(&BreakerType, 0);
	if (!o)
		return NULL;
	if (self->readonly)
		rc = brk_breaker_find(self->seg, name, &b);
	else
		rc = brk_breaker_get(self->seg, name, &c, &b);
	if (rc) {
		Py_DECREF(o);
		if (rc == -ENOENT)
			return PyErr_Format(PyExc_LookupError,
					    "no breaker %R in a read-only segment", nameo);
		return set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->b = b;
	return (PyObject *)o;
}

static PyObject *breaker_acquire(BreakerObject *self, PyObject *cls)
{
	struct brk_refusal why;
	PyObject *po;
	int rc;

	if (brk_check(self))
		return NULL;
	if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PermitType))
		return PyErr_Format(PyExc_TypeError, "acquire() needs a Permit class");
	/* Allocate first: no Python error may come between an admitted
	 * acquire and the object that releases it. */
	po = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
	if (!po)
		return NULL;
	memset(&why, 0, sizeof(why));
	rc = permit_fill((PermitObject *)po, self, &why);
	if (rc == 0)
		return po;
	Py_DECREF(po);
	if (brk_is_refusal(rc) && rc != -BRK_ENOTOKENS && rc != -BRK_EDEFERRED) {
		const char *by = why.by[0] ? why.by : brk_breaker_name(self->b);
		double wait = (double)why.wait_ms / 1000.0;
		PyObject *c = CircuitOpen_cls;

		if (rc == -BRK_EFULL)
			c = BulkheadFull_cls;
		else if (rc == -BRK_ECOOLING)
			c = Cooling_cls;
		return raise_refusal(c, wait, brk_cause_name(why.cause), by);
	}
	return set_error(rc, brk_breaker_name(self->b), NULL);
}

static PyObject *make_info(const struct brk_info *in);

static PyObject *breaker_info(BreakerObject *self, PyObject *unused)
{
	struct brk_info in;
	int rc;

	(void)unused;
	if (brk_check(self))
		return NULL;
	rc = brk_breaker_info(self->b, &in);
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	return make_info(&in);
}

static PyObject *breaker_state(BreakerObject *self, void *c)
{
	struct brk_info in;
	int rc;

	(void)c;
	if (brk_check(self))
		return NULL;
	rc = brk_breaker_info(self->b, &in);
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	return PyUnicode_FromString(brk_state_name(in.state));
}

static PyObject *breaker_name(BreakerObject *self, void *c)
{
	(void)c;
	if (brk_check(self))
		return NULL;
	return PyUnicode_FromString(brk_breaker_name(self->b));
}

static PyObject *breaker_reset(BreakerObject *self, PyObject *unused)
{
	int rc;

	(void)unused;
	if (brk_check(self))
		return NULL;
	rc = brk_reset(self->b);
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_NONE;
}

/* trip(ms) -> True, or False if it was already open. */
static PyObject *breaker_trip(BreakerObject *self, PyObject *arg)
{
	uint64_t ms;
	int rc;

	if (brk_check(self))
		return NULL;
	if (get_u64(arg, "for_", UINT64_MAX, &ms))
		return NULL;
	if (ms == 0)
		return PyErr_Format(PyExc_ValueError, "for_ must be at least 1 ms");
	rc = brk_trip(self->b, ms);
	if (rc == -EALREADY)
		Py_RETURN_FALSE;
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_TRUE;
}

/* set_mode(int) -> True, or False if already in that mode. */
static PyObject *breaker_set_mode(BreakerObject *self, PyObject *arg)
{
	uint64_t m;
	int rc;

	if (brk_check(self))
		return NULL;
	if (get_u64(arg, "mode", BRK_MODE_METRICS_ONLY, &m))
		return NULL;
	rc = brk_set_mode(self->b, (int)m);
	if (rc == -EALREADY)
		Py_RETURN_FALSE;
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_TRUE;
}

/* configure(settings): the current settings with @settings applied. */
static PyObject *breaker_configure(BreakerObject *self, PyObject *d)
{
	struct brk_info in;
	const char *what = NULL;
	int rc;

	if (brk_check(self))
		return NULL;
	rc = brk_breaker_info(self->b, &in);
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	if (cfg_from_dict(d, &in.config))
		return NULL;
	if (brk_config_validate(&in.config, &what))
		return PyErr_Format(PyExc_ValueError, "bad setting %s", what ? what : "?");
	rc = brk_breaker_configure(self->b, &in.config);
	if (rc)
		return set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_NONE;
}

static PyMethodDef breaker_methods[] = {
	{ "acquire", (PyCFunction)breaker_acquire, METH_O,
	  "acquire(permit_class) -> permit, or raise a Refused subclass." },
	{ "info", (PyCFunction)breaker_info, METH_NOARGS, "A snapshot as a dict." },
	{ "reset", (PyCFunction)breaker_reset, METH_NOARGS, "brk_reset()." },
	{ "trip", (PyCFunction)breaker_trip, METH_O, "trip(ms) -> bool (False: already open)." },
	{ "set_mode", (PyCFunction)breaker_set_mode, METH_O, "set_mode(int) -> bool." },
	{ "configure", (PyCFunction)breaker_configure, METH_O,
	  "configure(dict of C setting names)." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef breaker_getset[] = {
	{ "name", (getter)breaker_name, NULL, "The breaker's name.", NULL },
	{ "state", (getter)breaker_state, NULL, "closed, open or half_open.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject BreakerType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Breaker",
	.tp_basicsize = sizeof(BreakerObject),
	.tp_dealloc = (destructor)breaker_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A breaker record of a segment (brk_breaker).",
	.tp_methods = breaker_methods,
	.tp_getset = breaker_getset,
};

/* ---- Permit ------------------------------------------------------------- */

static void permit_finalize(PyObject *self)
{
	PermitObject *p = (PermitObject *)self;
	PyObject *et, *ev, *tb;

	if (p->released || !p->br)
		return;
	p->released = 1;
	if (p->pid != self_pid)
		return; /* a fork child's copy of its parent's permit */
	PyErr_Fetch(&et, &ev, &tb);
	if (p->br->seg->seg)
		p->counted = brk_release(&p->p, BRK_CANCELLED, BRK_REASON_NONE, 0) == 0;
	if (PyErr_WarnFormat(PyExc_ResourceWarning, 1,
			     "breakerd: a permit of %s was garbage-collected unreported; "
			     "released as cancelled",
			     p->br->seg->seg ? brk_breaker_name(p->br->b) : "a closed segment"))
		PyErr_WriteUnraisable(self);
	PyErr_Restore(et, ev, tb);
}

static void permit_dealloc(PermitObject *self)
{
	if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
		return; /* resurrected */
	Py_CLEAR(self->br);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* _release(outcome, reason, retry_after_ms) -> True (counted) / False. A
 * second call is a no-op returning False. */
static PyObject *permit_release(PermitObject *self, PyObject *args)
{
	int outcome, reason;
	long long ra;
	int rc;

	if (!PyArg_ParseTuple(args, "iiL:_release", &outcome, &reason, &ra))
		return NULL;
	if (outcome < BRK_SUCCESS || outcome > BRK_CANCELLED)
		return PyErr_Format(PyExc_ValueError, "outcome %d is unknown", outcome);
	if (reason < 0 || reason >= BRK_REASON_COUNT)
		return PyErr_Format(PyExc_ValueError, "reason %d is unknown", reason);
	if (self->released || !self->br)
		Py_RETURN_FALSE;
	if (seg_check(self->br->seg))
		return NULL;
	self->released = 1;
	rc = brk_release(&self->p, outcome, reason, ra);
	self->counted = rc == 0;
	if (rc == 0)
		Py_RETURN_TRUE;
	if (rc == -BRK_ESTALE || rc == -BRK_ECONTENDED)
		Py_RETURN_FALSE;
	return set_error(rc, brk_breaker_name(self->br->b), NULL);
}

static PyObject *permit_get_released(PermitObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->released);
}

static PyObject *permit_get_counted(PermitObject *self, void *c)
{
	(void)c;
	if (self->counted < 0)
		Py_RETURN_NONE;
	return PyBool_FromLong(self->counted);
}

static PyObject *permit_get_breaker(PermitObject *self, void *c)
{
	(void)c;
	if (!self->br)
		Py_RETURN_NONE;
	Py_INCREF(self->br);
	return (PyObject *)self->br;
}

static PyObject *permit_get_pid(PermitObject *self, void *c)
{
	(void)c;
	return PyLong_FromLong((long)self->pid);
}

static PyMethodDef permit_methods[] = {
	{ "_release", (PyCFunction)permit_release, METH_VARARGS,
	  "_release(outcome, reason, retry_after_ms) -> bool counted." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef permit_getset[] = {
	{ "released", (getter)permit_get_released, NULL, "Reported (once).", NULL },
	{ "counted", (getter)permit_get_counted, NULL,
	  "None before the report; then whether the library counted it.", NULL },
	{ "_core_breaker", (getter)permit_get_breaker, NULL, "The _core.Breaker.", NULL },
	{ "pid", (getter)permit_get_pid, NULL, "The process that acquired it.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject PermitType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Permit",
	.tp_basicsize = sizeof(PermitObject),
	.tp_dealloc = (destructor)permit_dealloc,
	.tp_finalize = permit_finalize,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "An admitted call (brk_permit): release it exactly once.",
	.tp_methods = permit_methods,
	.tp_getset = permit_getset,
};

/* ---- info dicts --------------------------------------------------------- */

static PyObject *make_info(const struct brk_info *in)
{
	static const struct { const char *key; int reason; } rk[] = {
		{ "timeout", BRK_REASON_TIMEOUT },
		{ "connect", BRK_REASON_CONNECT },
		{ "server_error", BRK_REASON_SERVER_ERROR },
		{ "overloaded", BRK_REASON_OVERLOADED },
		{ "rate_limited", BRK_REASON_RATE_LIMITED },
		{ "other", BRK_REASON_OTHER },
	};
	const struct brk_counters *c = &in->counters;
	PyObject *d = PyDict_New(), *x = NULL, *l, *r;
	size_t i, n;

	if (!d)
		return NULL;
	if (PUTS(d, "name", in->name) || PUTS(d, "kind", "breaker") ||
	    PUTS(d, "state", brk_state_name(in->state)) ||
	    PUTS(d, "mode", brk_mode_name(in->mode)) ||
	    PUTU(d, "generation", in->generation) ||
	    PUTU(d, "consecutive_failures", in->consecutive_failures) ||
	    PUTU(d, "cooling_level", in->cooling_level) ||
	    PUTU(d, "open_remaining_ms", in->open_remaining_ms) ||
	    PUTU(d, "cool_until_remaining_ms", in->cool_until_remaining_ms) ||
	    PUTU(d, "half_open_successes", in->half_open_successes) ||
	    PUTU(d, "probes_in_flight", in->probes_in_flight) ||
	    PUTU(d, "in_flight", in->in_flight))
		goto fail;
	if (!(x = PyList_New(0)))
		goto fail;
	n = in->n_leases < sizeof(in->leases) / sizeof(in->leases[0])
		    ? in->n_leases : sizeof(in->leases) / sizeof(in->leases[0]);
	for (i = 0; i < n; i++) {
		l = PyDict_New();
		if (!l || PUTI(l, "pid", in->leases[i].pid) ||
		    PUTS(l, "kind", brk_lease_kind_name(in->leases[i].kind)) ||
		    PUTU(l, "age_ms", in->leases[i].age_ms) || PyList_Append(x, l)) {
			Py_XDECREF(l);
			goto fail;
		}
		Py_DECREF(l);
	}
	if (put(d, "leases", x))
		goto fail_nox;
	if (!(x = PyDict_New()) || PUTU(x, "calls", in->window_calls) ||
	    PUTU(x, "failures", in->window_failures) || PUTU(x, "slow", in->window_slow) ||
	    PUTU(x, "distinct_failing_processes", in->distinct_failing_processes))
		goto fail;
	if (put(d, "window", x))
		goto fail_nox;
	if (put(d, "config", cfg_to_dict(&in->config)))
		goto fail_nox;
	if (!(x = PyDict_New()) || PUTU(x, "allowed", c->allowed) ||
	    PUTU(x, "rejected_open", c->rejected_open) ||
	    PUTU(x, "rejected_cooling", c->rejected_cooling) ||
	    PUTU(x, "rejected_full", c->rejected_full) ||
	    PUTU(x, "successes", c->successes) || PUTU(x, "failures", c->failures) ||
	    PUTU(x, "healthy_errors", c->healthy_errors) ||
	    PUTU(x, "ignored", c->ignored) || PUTU(x, "cancelled", c->cancelled) ||
	    PUTU(x, "probes", c->probes) || PUTU(x, "reclaimed", c->reclaimed) ||
	    PUTU(x, "transitions", c->transitions) || PUTU(x, "stale", c->stale))
		goto fail;
	if (!(r = PyDict_New()))
		goto fail;
	for (i = 0; i < sizeof(rk) / sizeof(rk[0]); i++)
		if (PUTU(r, rk[i].key, c->failures_by_reason[rk[i].reason])) {
			Py_DECREF(r);
			goto fail;
		}
	if (put(x, "failures_by_reason", r))
		goto fail;
	if (put(d, "counters", x))
		goto fail_nox;
	return d;
fail:
	Py_XDECREF(x);
fail_nox:
	Py_DECREF(d);
	return NULL;
}

/* The fields and shape of `bctl inspect --json` for a bucket / budget. */
static PyObject *make_bucket_info(const struct brk_bucket_info *b)
{
	uint64_t full_ms = b->full_in_ns / 1000000u + (b->full_in_ns % 1000000u != 0);

	return Py_BuildValue("{s:s,s:s,s:O,s:d,s:I,s:K,s:d,s:K,s:{s:K,s:K,s:K}}",
			     "name", b->name, "kind", "bucket",
			     "configured", b->configured ? Py_True : Py_False,
			     "rate_per_s", b->rate_per_s, "burst", (unsigned)b->burst,
			     "interval_ns", (unsigned long long)b->interval_ns,
			     "tokens", b->tokens, "full_in_ms", (unsigned long long)full_ms,
			     "counters", "taken", (unsigned long long)b->taken,
			     "denied", (unsigned long long)b->denied,
			     "tokens_taken", (unsigned long long)b->tokens_taken);
}

static PyObject *make_budget_info(const struct brk_budget_info *g)
{
	return Py_BuildValue("{s:s,s:s,s:O,s:d,s:d,s:I,s:d,s:d,s:d,s:{s:K,s:K,s:K,s:K}}",
			     "name", g->name, "kind", "budget",
			     "configured", g->configured ? Py_True : Py_False,
			     "floor_per_s", g->floor_per_s, "ratio", g->ratio,
			     "floor_burst", (unsigned)g->floor_burst,
			     "balance", g->balance, "pool", g->pool,
			     "floor_tokens", g->floor_tokens,
			     "counters", "deposits", (unsigned long long)g->deposits,
			     "retries", (unsigned long long)g->retries,
			     "retries_floor", (unsigned long long)g->retries_floor,
			     "deferred", (unsigned long long)g->deferred);
}

/* ---- Segment methods ---------------------------------------------------- */

static PyObject *segment_info(SegmentObject *self, PyObject *unused)
{
	struct brk_segment_info si;
	PyObject *d, *hb;

	(void)unused;
	if (seg_check(self))
		return NULL;
	brk_segment_info(self->seg, &si);
	if (si.heartbeat_age_ms == UINT64_MAX) {
		hb = Py_None;
		Py_INCREF(hb);
	} else {
		hb = PyLong_FromUnsignedLongLong(si.heartbeat_age_ms);
	}
	if (!hb)
		return NULL;
	d = Py_BuildValue("{s:s,s:I,s:I,s:I,s:I,s:K,s:K,s:i,s:i,s:N,s:K,s:K,s:O}",
			  "shm", si.shm_name, "layout_version", si.layout_version,
			  "capacity", si.capacity, "used", si.used,
			  "record_size", si.record_size,
			  "total_size", (unsigned long long)si.total_size,
			  "created_wall_ms", (unsigned long long)si.created_wall_ms,
			  "creator_pid", (int)si.creator_pid, "daemon_pid", (int)si.daemon_pid,
			  "heartbeat_age_ms", hb,
			  "daemon_interval_ms", (unsigned long long)si.daemon_interval_ms,
			  "events_written", (unsigned long long)si.events_written,
			  "readonly", si.readonly ? Py_True : Py_False);
	return d;
}

static PyObject *segment_record_count(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	if (seg_check(self))
		return NULL;
	return PyLong_FromUnsignedLong(brk_record_count(self->seg));
}

/* records() -> list of info dicts of every published record. */
static PyObject *segment_records(SegmentObject *self, PyObject *unused)
{
	struct brk_info *in;
	PyObject *l, *d;
	uint32_t i, n;
	int rc;

	(void)unused;
	if (seg_check(self))
		return NULL;
	in = PyMem_Malloc(sizeof(*in));
	if (!in)
		return PyErr_NoMemory();
	l = PyList_New(0);
	n = brk_record_count(self->seg);
	for (i = 0; l && i < n; i++) {
		rc = brk_info_at(self->seg, i, in);
		if (rc == -ENOENT)
			continue;
		if (rc) {
			Py_CLEAR(l);
			set_error(rc, "record", NULL);
			break;
		}
		if (in->kind == BRK_KIND_BUCKET) {
			memcpy(in->bucket.name, in->name, sizeof(in->name));
			d = make_bucket_info(&in->bucket);
		} else if (in->kind == BRK_KIND_BUDGET) {
			memcpy(in->budget.name, in->name, sizeof(in->name));
			d = make_budget_info(&in->budget);
		}
		else
			d = make_info(in);
		if (!d || PyList_Append(l, d))
			Py_CLEAR(l);
		Py_XDECREF(d);
	}
	PyMem_Free(in);
	return l;
}

static PyObject *segment_now_ns(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	if (seg_check(self))
		return NULL;
	return PyLong_FromUnsignedLongLong(brk_now_ns(self->seg));
}

static PyObject *make_event(const struct brk_event *e)
{
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	if (PUTU(d, "seq", e->seq) || PUTU(d, "wall_ms", e->wall_ms) ||
	    PUTU(d, "mono_ns", e->mono_ns) || PUTS(d, "name", e->name) ||
	    PUTS(d, "from", brk_state_name(e->from)) || PUTS(d, "to", brk_state_name(e->to)) ||
	    PUTS(d, "reason", brk_event_reason_name(e->reason)) || PUTI(d, "pid", e->pid) ||
	    PUTU(d, "value", e->value) ||
	    (e->reason == BRK_EV_FORCED &&
	     PUTS(d, "mode", brk_mode_name((int)(e->value > 255 ? 255 : e->value))))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* events(cursor) -> (list, next_cursor, lost) */
static PyObject *segment_events(SegmentObject *self, PyObject *arg)
{
	enum { BATCH = 256 };
	struct brk_event *buf;
	uint64_t cursor, lost = 0, l;
	PyObject *list, *e;
	int n, i;

	if (seg_check(self))
		return NULL;
	if (get_u64(arg, "cursor", UINT64_MAX, &cursor))
		return NULL;
	buf = PyMem_Malloc(sizeof(*buf) * BATCH);
	if (!buf)
		return PyErr_NoMemory();
	list = PyList_New(0);
	while (list) {
		l = 0;
		n = brk_events_read(self->seg, &cursor, buf, BATCH, &l);
		lost += l;
		for (i = 0; i < n && list; i++) {
			e = make_event(&buf[i]);
			if (!e || PyList_Append(list, e))
				Py_CLEAR(list);
			Py_XDECREF(e);
		}
		if (n < BATCH)
			break;
	}
	PyMem_Free(buf);
	if (!list)
		return NULL;
	return Py_BuildValue("NKK", list, (unsigned long long)cursor,
			     (unsigned long long)lost);
}

/* ---- Bucket ------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	SegmentObject *seg;
	brk_bucket *k;
} BucketObject;

static void bucket_dealloc(BucketObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int get_rate(PyObject *o, const char *name, double *out)
{
	if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o))) {
		PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", name,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyFloat_AsDouble(o);
	return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* Segment.bucket(name, rate, burst) */
static PyObject *segment_bucket(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *rateo, *bursto;
	const char *name;
	double rate;
	uint64_t burst;
	BucketObject *o;
	brk_bucket *k;
	int rc;

	if (!PyArg_ParseTuple(args, "OOO:bucket", &nameo, &rateo, &bursto))
		return NULL;
	if (seg_check(self))
		return NULL;
	if (!(name = get_name(nameo, "name")) || get_rate(rateo, "rate", &rate) ||
	    get_u64(bursto, "burst", BRK_BUCKET_MAX_BURST, &burst))
		return NULL;
	if (!(rate >= BRK_BUCKET_MIN_RATE && rate <= BRK_BUCKET_MAX_RATE))
		return PyErr_Format(PyExc_ValueError, "rate must be %g..%g tokens/s",
				    BRK_BUCKET_MIN_RATE, BRK_BUCKET_MAX_RATE);
	if (burst < 1)
		return PyErr_Format(PyExc_ValueError, "burst must be 1..%u",
				    BRK_BUCKET_MAX_BURST);
	o = (BucketObject *)BucketType.tp_alloc(&BucketType, 0);
	if (!o)
		return NULL;
	rc = self->readonly ? brk_bucket_find(self->seg, name, &k)
			    : brk_bucket_get(self->seg, name, rate, (uint32_t)burst, &k);
	if (rc) {
		Py_DECREF(o);
		return set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->k = k;
	return (PyObject *)o;
}

/* _take(n) -> 0.0 if taken, else the jittered wait in seconds. */
static PyObject *bucket_take(BucketObject *self, PyObject *arg)
{
	uint64_t n, nb = 0, wake, now;
	int rc;

	if (seg_check(self->seg))
		return NULL;
	if (get_u64(arg, "n", UINT32_MAX, &n))
		return NULL;
	if (n == 0)
		return PyErr_Format(PyExc_ValueError, "n must be at least 1");
	rc = brk_bucket_take(self->k, (uint32_t)n, &nb);
	if (rc == 0)
		return PyFloat_FromDouble(0.0);
	if (rc == -BRK_ENOTOKENS) {
		wake = brk_bucket_wake_ns(self->k, nb);
		now = brk_now_ns(self->seg->seg);
		if (wake == UINT64_MAX)
			return PyFloat_FromDouble(Py_HUGE_VAL);
		return PyFloat_FromDouble(wake > now ? (double)(wake - now) / 1e9 : 1e-9);
	}
	if (rc == -EINVAL)
		return PyErr_Format(PyExc_ValueError, "n=%llu is more than the bucket's burst",
				    (unsigned long long)n);
	if (rc == -BRK_ECONTENDED)
		return raise_refusal(NoTokens_cls, 0.0, "contended", brk_bucket_name(self->k));
	return set_error(rc, brk_bucket_name(self->k), NULL);
}

static PyObject *bucket_info(BucketObject *self, PyObject *unused)
{
	struct brk_bucket_info bi;
	int rc;

	(void)unused;
	if (seg_check(self->seg))
		return NULL;
	rc = brk_bucket_info(self->k, &bi);
	if (rc)
		return set_error(rc, brk_bucket_name(self->k), NULL);
	return make_bucket_info(&bi);
}

static PyObject *bucket_configure(BucketObject *self, PyObject *args)
{
	PyObject *rateo, *bursto;
	double rate;
	uint64_t burst;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:configure", &rateo, &bursto))
		return NULL;
	if (seg_check(self->seg))
		return NULL;
	if (get_rate(rateo, "rate", &rate) ||
	    get_u64(bursto, "burst", BRK_BUCKET_MAX_BURST, &burst))
		return NULL;
	rc = brk_bucket_configure(self->k, rate, (uint32_t)burst);
	if (rc == -EINVAL)
		return PyErr_Format(PyExc_ValueError, "rate must be %g..%g, burst 1..%u",
				    BRK_BUCKET_MIN_RATE, BRK_BUCKET_MAX_RATE,
				    BRK_BUCKET_MAX_BURST);
	if (rc)
		return set_error(rc, brk_bucket_name(self->k), NULL);
	Py_RETURN_NONE;
}

static PyObject *bucket_name(BucketObject *self, void *c)
{
	(void)c;
	if (seg_check(self->seg))
		return NULL;
	return PyUnicode_FromString(brk_bucket_name(self->k));
}

static PyMethodDef bucket_methods[] = {
	{ "_take", (PyCFunction)bucket_take, METH_O, "_take(n) -> wait s (0.0: taken)." },
	{ "info", (PyCFunction)bucket_info, METH_NOARGS, "A snapshot as a dict." },
	{ "configure", (PyCFunction)bucket_configure, METH_VARARGS, "configure(rate, burst)." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef bucket_getset[] = {
	{ "name", (getter)bucket_name, NULL, "The bucket's name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject BucketType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Bucket",
	.tp_basicsize = sizeof(BucketObject),
	.tp_dealloc = (destructor)bucket_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A GCRA token bucket (brk_bucket).",
	.tp_methods = bucket_methods,
	.tp_getset = bucket_getset,
};

/* ---- Budget ------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	SegmentObject *seg;
	brk_budget *g;
} BudgetObject;

static void budget_dealloc(BudgetObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *segment_budget(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *flo, *rao;
	const char *name;
	double fl, ra;
	BudgetObject *o;
	brk_budget *g;
	int rc;

	if (!PyArg_ParseTuple(args, "OOO:budget", &nameo, &flo, &rao))
		return NULL;
	if (seg_check(self))
		return NULL;
	if (!(name = get_name(nameo, "name")) || get_rate(flo, "floor", &fl) ||
	    get_rate(rao, "ratio", &ra))
		return NULL;
	if (!(fl == 0 || (fl >= 0.001 && fl <= BRK_BUDGET_MAX_FLOOR)))
		return PyErr_Format(PyExc_ValueError, "floor must be 0 or 0.001..%g retries/s",
				    BRK_BUDGET_MAX_FLOOR);
	if (!(ra == 0 || (ra >= 0.001 && ra <= BRK_BUDGET_MAX_RATIO)))
		return PyErr_Format(PyExc_ValueError, "ratio must be 0 or 0.001..%g",
				    BRK_BUDGET_MAX_RATIO);
	o = (BudgetObject *)BudgetType.tp_alloc(&BudgetType, 0);
	if (!o)
		return NULL;
	rc = self->readonly ? brk_budget_find(self->seg, name, &g)
			    : brk_budget_get(self->seg, name, fl, ra, &g);
	if (rc) {
		Py_DECREF(o);
		return set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->g = g;
	return (PyObject *)o;
}

static PyObject *budget_deposit(BudgetObject *self, PyObject *unused)
{
	int rc;

	(void)unused;
	if (seg_check(self->seg))
		return NULL;
	rc = brk_budget_deposit(self->g);
	if (rc == 0 || rc == -BRK_ECONTENDED) /* a dropped deposit errs toward fewer retries */
		Py_RETURN_NONE;
	return set_error(rc, brk_budget_name(self->g), NULL);
}

/* _retry() -> None if permitted, else raise RetryDeferred with an
 * estimate of when the floor next holds a token. */
static PyObject *budget_retry(BudgetObject *self, PyObject *unused)
{
	struct brk_budget_info gi;
	double wait = 0.0;
	int rc;

	(void)unused;
	if (seg_check(self->seg))
		return NULL;
	rc = brk_retry_permitted(self->g);
	if (rc == 0)
		Py_RETURN_NONE;
	if (rc == -BRK_EDEFERRED || rc == -BRK_ECONTENDED) {
		if (brk_budget_info(self->g, &gi) == 0 && gi.floor_per_s > 0 &&
		    gi.floor_tokens < 1.0)
			wait = (1.0 - gi.floor_tokens) / gi.floor_per_s;
		return raise_refusal(RetryDeferred_cls, wait,
				     rc == -BRK_EDEFERRED ? "deferred" : "contended",
				     brk_budget_name(self->g));
	}
	return set_error(rc, brk_budget_name(self->g), NULL);
}

static PyObject *budget_info(BudgetObject *self, PyObject *unused)
{
	struct brk_budget_info gi;
	int rc;

	(void)unused;
	if (seg_check(self->seg))
		return NULL;
	rc = brk_budget_info(self->g, &gi);
	if (rc)
		return set_error(rc, brk_budget_name(self->g), NULL);
	return make_budget_info(&gi);
}

static PyObject *budget_configure(BudgetObject *self, PyObject *args)
{
	PyObject *flo, *rao;
	double fl, ra;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:configure", &flo, &rao))
		return NULL;
	if (seg_check(self->seg))
		return NULL;
	if (get_rate(flo, "floor", &fl) || get_rate(rao, "ratio", &ra))
		return NULL;
	rc = brk_budget_configure(self->g, fl, ra);
	if (rc == -EINVAL)
		return PyErr_Format(PyExc_ValueError,
				    "floor must be 0 or 0.001..%g, ratio 0 or 0.001..%g",
				    BRK_BUDGET_MAX_FLOOR, BRK_BUDGET_MAX_RATIO);
	if (rc)
		return set_error(rc, brk_budget_name(self->g), NULL);
	Py_RETURN_NONE;
}

static PyObject *budget_name(BudgetObject *self, void *c)
{
	(void)c;
	if (seg_check(self->seg))
		return NULL;
	return PyUnicode_FromString(brk_budget_name(self->g));
}

static PyMethodDef budget_methods[] = {
	{ "deposit", (PyCFunction)budget_deposit, METH_NOARGS, "Record one first attempt." },
	{ "retry", (PyCFunction)budget_retry, METH_NOARGS,
	  "Take one retry token, or raise RetryDeferred." },
	{ "info", (PyCFunction)budget_info, METH_NOARGS, "A snapshot as a dict." },
	{ "configure", (PyCFunction)budget_configure, METH_VARARGS, "configure(floor, ratio)." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef budget_getset[] = {
	{ "name", (getter)budget_name, NULL, "The budget's name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject BudgetType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Budget",
	.tp_basicsize = sizeof(BudgetObject),
	.tp_dealloc = (destructor)budget_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A retry budget (brk_budget).",
	.tp_methods = budget_methods,
	.tp_getset = budget_getset,
};

/* ---- Segment type ------------------------------------------------------- */

static PyObject *segment_get_closed(SegmentObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->seg == NULL);
}

static PyObject *segment_get_shm(SegmentObject *self, void *c)
{
	(void)c;
	Py_INCREF(self->shm);
	return self->shm;
}

static PyObject *segment_get_readonly(SegmentObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->readonly);
}

static PyMethodDef segment_methods[] = {
	{ "close", (PyCFunction)segment_close, METH_NOARGS, "Detach (brk_detach)." },
	{ "breaker", (PyCFunction)segment_breaker, METH_VARARGS,
	  "breaker(name, settings=None) -> Breaker." },
	{ "bucket", (PyCFunction)segment_bucket, METH_VARARGS,
	  "bucket(name, rate, burst) -> Bucket." },
	{ "budget", (PyCFunction)segment_budget, METH_VARARGS,
	  "budget(name, floor, ratio) -> Budget." },
	{ "events", (PyCFunction)segment_events, METH_O,
	  "events(cursor) -> (list, next_cursor, lost)." },
	{ "info", (PyCFunction)segment_info, METH_NOARGS, "The segment header as a dict." },
	{ "record_count", (PyCFunction)segment_record_count, METH_NOARGS,
	  "Records allocated so far." },
	{ "records", (PyCFunction)segment_records, METH_NOARGS,
	  "Info dicts of every record." },
	{ "now_ns", (PyCFunction)segment_now_ns, METH_NOARGS, "The handle's clock, ns." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef segment_getset[] = {
	{ "closed", (getter)segment_get_closed, NULL, "True after close().", NULL },
	{ "shm", (getter)segment_get_shm, NULL, "The shm name.", NULL },
	{ "readonly", (getter)segment_get_readonly, NULL, "Attached read-only.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject SegmentType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Segment",
	.tp_basicsize = sizeof(SegmentObject),
	.tp_dealloc = (destructor)segment_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An attached segment (brk_segment).",
	.tp_methods = segment_methods,
	.tp_getset = segment_getset,
};

/* ---- module functions --------------------------------------------------- */

/* parse_duration_ms(str) -> int ms (brk_parse_duration). */
static PyObject *core_parse_duration_ms(PyObject *mod, PyObject *arg)
{
	const char *s;
	Py_ssize_t len;
	uint64_t ms;
	int rc;

	(void)mod;
	if (!PyUnicode_Check(arg))
		return PyErr_Format(PyExc_TypeError, "a duration string must be a str");
	s = PyUnicode_AsUTF8AndSize(arg, &len);
	if (!s)
		return NULL;
	if ((size_t)len != strlen(s))
		return PyErr_Format(PyExc_ValueError, "duration %R contains NUL", arg);
	rc = brk_parse_duration(s, &ms);
	if (rc)
		return PyErr_Format(PyExc_ValueError,
				    "duration %R is not a number with a unit (250ms, 30s, 5m, 2h)%s",
				    arg, rc == -ERANGE ? ": too long" : "");
	return PyLong_FromUnsignedLongLong(ms);
}

static PyObject *core_strerror(PyObject *mod, PyObject *arg)
{
	long code;

	(void)mod;
	code = PyLong_AsLong(arg);
	if (code == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(brk_strerror((int)code));
}

#ifdef BRKPY_HAVE_HTTP_CLASSIFY
/* http_classify(status, retry_after, text, now_unix_ms) ->
 * (outcome, reason, retry_after_ms) */
static PyObject *core_http_classify(PyObject *mod, PyObject *args)
{
	int status, rc;
	const char *ra = NULL, *text = NULL;
	Py_ssize_t text_len = 0;
	long long now = 0;
	struct brk_result r;

	(void)mod;
	if (!PyArg_ParseTuple(args, "iz#z|L:http_classify", &status, &text, &text_len, &ra,
			      &now))
		return NULL;
	memset(&r, 0, sizeof(r));
	rc = brk_http_classify(status, ra, text, (size_t)text_len, now, &r);
	if (rc)
		return PyErr_Format(PyExc_ValueError, "status %d cannot be classified", status);
	return Py_BuildValue("iiL", r.outcome, r.reason, (long long)r.retry_after_ms);
}
#endif

static PyMethodDef core_methods[] = {
	{ "attach", (PyCFunction)(void (*)(void))core_attach, METH_VARARGS | METH_KEYWORDS,
	  "attach(shm=None, capacity=None, readonly=False, clock=None) -> Segment." },
	{ "parse_duration_ms", (PyCFunction)core_parse_duration_ms, METH_O,
	  "brk_parse_duration(): '250ms' -> 250." },
	{ "strerror", (PyCFunction)core_strerror, METH_O, "brk_strerror(code)." },
	{ "config_check", (PyCFunction)core_config_check, METH_O,
	  "None, or the C name of the first bad setting." },
	{ "config_defaults", (PyCFunction)core_config_defaults, METH_NOARGS,
	  "brk_config_init() as a dict." },
#ifdef BRKPY_HAVE_HTTP_CLASSIFY
	{ "http_classify", (PyCFunction)core_http_classify, METH_VARARGS,
	  "brk_http_classify(status, text, retry_after, now_unix_ms)." },
#endif
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "breakerd._core",
	.m_doc =
		"libbreaker for Python (see breakerd).\n\n"
		"The GIL is held around acquire/release/take/deposit: each is a few "
		"atomics (~40 ns), cheaper than releasing and re-taking the GIL, and "
		"holding it keeps Segment.close() from unmapping the segment under a "
		"call. attach() releases it: it may wait up to init_wait_ms for "
		"another process that is creating the segment.",
	.m_size = -1,
	.m_methods = core_methods,
};

static int load_exc(PyObject *errs, const char *name, PyObject **out)
{
	*out = PyObject_GetAttrString(errs, name);
	return *out ? 0 : -1;
}

static int add_int(PyObject *m, const char *k, long v)
{
	return PyModule_AddIntConstant(m, k, v);
}

PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m, *errs;
	PyTypeObject *types[] = { &FakeClockType, &SegmentType, &BreakerType,
				  &PermitType, &BucketType, &BudgetType };
	const char *tnames[] = { "FakeClock", "Segment", "Breaker",
				 "Permit", "Bucket", "Budget" };
	size_t i;

	refresh_pid();
	if (pthread_atfork(NULL, NULL, refresh_pid) != 0) {
		PyErr_SetString(PyExc_ImportError, "breakerd: pthread_atfork failed");
		return NULL;
	}
	errs = PyImport_ImportModule("breakerd._errors");
	if (!errs)
		return NULL;
	if (load_exc(errs, "Error", &Error_cls) ||
	    load_exc(errs, "CircuitOpen", &CircuitOpen_cls) ||
	    load_exc(errs, "Cooling", &Cooling_cls) ||
	    load_exc(errs, "BulkheadFull", &BulkheadFull_cls) ||
	    load_exc(errs, "RetryDeferred", &RetryDeferred_cls) ||
	    load_exc(errs, "NoTokens", &NoTokens_cls)) {
		Py_DECREF(errs);
		return NULL;
	}
	Py_DECREF(errs);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (PyType_Ready(types[i]) < 0)
			return NULL;
	m = PyModule_Create(&core_module);
	if (!m)
		return NULL;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		Py_INCREF(types[i]);
		if (PyModule_AddObject(m, tnames[i], (PyObject *)types[i]) < 0) {
			Py_DECREF(types[i]);
			Py_DECREF(m);
			return NULL;
		}
	}
	if (add_int(m, "SUCCESS", BRK_SUCCESS) || add_int(m, "FAILURE", BRK_FAILURE) ||
	    add_int(m, "HEALTHY_ERROR", BRK_HEALTHY_ERROR) ||
	    add_int(m, "REJECTED_REQUEST", BRK_REJECTED_REQUEST) ||
	    add_int(m, "CANCELLED", BRK_CANCELLED) ||
	    add_int(m, "REASON_NONE", BRK_REASON_NONE) ||
	    add_int(m, "REASON_TIMEOUT", BRK_REASON_TIMEOUT) ||
	    add_int(m, "REASON_CONNECT", BRK_REASON_CONNECT) ||
	    add_int(m, "REASON_SERVER_ERROR", BRK_REASON_SERVER_ERROR) ||
	    add_int(m, "REASON_OVERLOADED", BRK_REASON_OVERLOADED) ||
	    add_int(m, "REASON_RATE_LIMITED", BRK_REASON_RATE_LIMITED) ||
	    add_int(m, "REASON_OTHER", BRK_REASON_OTHER) ||
	    add_int(m, "MODE_NORMAL", BRK_MODE_NORMAL) ||
	    add_int(m, "MODE_FORCED_OPEN", BRK_MODE_FORCED_OPEN) ||
	    add_int(m, "MODE_DISABLED", BRK_MODE_DISABLED) ||
	    add_int(m, "MODE_METRICS_ONLY", BRK_MODE_METRICS_ONLY) ||
	    add_int(m, "NAME_MAX", BRK_NAME_MAX) ||
	    PyModule_AddObject(m, "MAX_DURATION_MS",
			       PyLong_FromUnsignedLongLong(BRK_MAX_DURATION_MS)) ||
	    PyModule_AddStringConstant(m, "DEFAULT_SHM", BRK_DEFAULT_SHM)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
