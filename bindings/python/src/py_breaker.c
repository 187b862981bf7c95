/*
 * py_breaker.c - Breaker: get or create, acquire, inspect and steer one
 * breaker record.
 */
#include "py_core.h"

/* ---- Breaker ------------------------------------------------------------ */

static void breaker_dealloc(BreakerObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int brk_check(BreakerObject *self)
{
	return brkpy_seg_check(self->seg);
}

/* Segment.breaker(name, settings=None) */
PyObject *brkpy_segment_breaker(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *d = Py_None;
	const char *name;
	struct brk_config c;
	const char *what = NULL;
	brk_breaker *b;
	BreakerObject *o;
	int rc, created = 0;

	if (!PyArg_ParseTuple(args, "O|O:breaker", &nameo, &d))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	name = brkpy_get_name(nameo, "name");
	if (!name)
		return NULL;
	brk_config_init(&c);
	if (brkpy_cfg_from_dict(d, &c))
		return NULL;
	if (brk_config_validate(&c, &what))
		return PyErr_Format(PyExc_ValueError, "bad setting %s", what ? what : "?");
	o = (BreakerObject *)brkpy_BreakerType.tp_alloc(&brkpy_BreakerType, 0);
	if (!o)
		return NULL;
	if (self->readonly)
		rc = brk_breaker_find(self->seg, name, &b);
	else
		rc = brk_breaker_get_ex(self->seg, name, &c, &b, &created);
	if (rc) {
		Py_DECREF(o);
		if (rc == -ENOENT)
			return PyErr_Format(PyExc_LookupError,
					    "no breaker %R in a read-only segment", nameo);
		return brkpy_set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->b = b;
	o->created = created;
	return (PyObject *)o;
}

/* The exception for a failed brk_acquire() of @self (rc != 0): a Refused
 * subclass for a refusal, else breakerd.Error. Always NULL. */
PyObject *brkpy_raise_acquire(BreakerObject *self, int rc, const struct brk_refusal *why)
{
	if (brk_is_refusal(rc) && rc != -BRK_ENOTOKENS && rc != -BRK_EDEFERRED) {
		const char *by = why->by[0] ? why->by : brk_breaker_name(self->b);
		double wait = (double)why->wait_ms / 1000.0;
		PyObject *c = brkpy_CircuitOpen_cls;

		if (rc == -BRK_EFULL)
			c = brkpy_BulkheadFull_cls;
		else if (rc == -BRK_ECOOLING)
			c = brkpy_Cooling_cls;
		return brkpy_raise_refusal(c, wait, brk_cause_name(why->cause), by);
	}
	return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
}

static PyObject *breaker_acquire(BreakerObject *self, PyObject *cls)
{
	struct brk_refusal why;
	PyObject *po;
	int rc;

	if (brk_check(self))
		return NULL;
	if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &brkpy_PermitType))
		return PyErr_Format(PyExc_TypeError, "acquire() needs a Permit class");
	/* Allocate first: no Python error may come between an admitted
	 * acquire and the object that releases it. */
	po = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
	if (!po)
		return NULL;
	memset(&why, 0, sizeof(why));
	rc = brkpy_permit_fill((PermitObject *)po, self, &why);
	if (rc == 0)
		return po;
	Py_DECREF(po);
	return brkpy_raise_acquire(self, rc, &why);
}

static PyObject *breaker_info(BreakerObject *self, PyObject *unused)
{
	struct brk_info in;
	int rc;

	(void)unused;
	if (brk_check(self))
		return NULL;
	rc = brk_breaker_info(self->b, &in);
	if (rc)
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	return brkpy_make_info(&in);
}

/* The few words pybreaker's fail_counter, success_counter and
 * current_state read (brk_breaker_counts(): four loads, no snapshot). */
static int counts_of(BreakerObject *self, struct brk_counts *k)
{
	int rc;

	if (brk_check(self))
		return -1;
	rc = brk_breaker_counts(self->b, k);
	if (rc) {
		brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
		return -1;
	}
	return 0;
}

static PyObject *state_names[3];

static PyObject *breaker_state(BreakerObject *self, void *c)
{
	struct brk_counts k;

	(void)c;
	if (counts_of(self, &k))
		return NULL;
	if (!state_names[k.state]) {
		state_names[k.state] = PyUnicode_InternFromString(brk_state_name(k.state));
		if (!state_names[k.state])
			return NULL;
	}
	return Py_NewRef(state_names[k.state]);
}

static PyObject *breaker_failure_streak(BreakerObject *self, void *c)
{
	struct brk_counts k;

	(void)c;
	if (counts_of(self, &k))
		return NULL;
	return PyLong_FromUnsignedLong(k.failure_streak);
}

static PyObject *breaker_ho_successes(BreakerObject *self, void *c)
{
	struct brk_counts k;

	(void)c;
	if (counts_of(self, &k))
		return NULL;
	return PyLong_FromUnsignedLong(k.half_open_successes);
}

static PyObject *breaker_created(BreakerObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->created);
}

/* counts() -> (state, generation, consecutive_failures, failure_streak,
 * half_open_successes, cooling_level, mode) */
static PyObject *breaker_counts(BreakerObject *self, PyObject *unused)
{
	struct brk_counts k;

	(void)unused;
	if (counts_of(self, &k))
		return NULL;
	return Py_BuildValue("(sKkkkki)", brk_state_name(k.state),
			     (unsigned long long)k.generation,
			     (unsigned long)k.consecutive_failures,
			     (unsigned long)k.failure_streak,
			     (unsigned long)k.half_open_successes,
			     (unsigned long)k.cooling_level, k.mode);
}

/* half_open() -> True, or False if it was half-open already. */
static PyObject *breaker_half_open(BreakerObject *self, PyObject *unused)
{
	int rc;

	(void)unused;
	if (brk_check(self))
		return NULL;
	rc = brk_half_open(self->b);
	if (rc == -EALREADY)
		Py_RETURN_FALSE;
	if (rc)
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_TRUE;
}

/* trip_restart(ms): open for exactly ms from now, whatever the state. */
static PyObject *breaker_trip_restart(BreakerObject *self, PyObject *arg)
{
	uint64_t ms;
	int rc;

	if (brk_check(self))
		return NULL;
	if (brkpy_get_u64(arg, "for_", UINT64_MAX, &ms))
		return NULL;
	if (ms == 0)
		return PyErr_Format(PyExc_ValueError, "for_ must be at least 1 ms");
	rc = brk_trip_restart(self->b, ms);
	if (rc)
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_TRUE;
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
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_NONE;
}

/* trip(ms) -> True, or False if it was already open. */
static PyObject *breaker_trip(BreakerObject *self, PyObject *arg)
{
	uint64_t ms;
	int rc;

	if (brk_check(self))
		return NULL;
	if (brkpy_get_u64(arg, "for_", UINT64_MAX, &ms))
		return NULL;
	if (ms == 0)
		return PyErr_Format(PyExc_ValueError, "for_ must be at least 1 ms");
	rc = brk_trip(self->b, ms);
	if (rc == -EALREADY)
		Py_RETURN_FALSE;
	if (rc)
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_TRUE;
}

/* set_mode(int) -> True, or False if already in that mode. */
static PyObject *breaker_set_mode(BreakerObject *self, PyObject *arg)
{
	uint64_t m;
	int rc;

	if (brk_check(self))
		return NULL;
	if (brkpy_get_u64(arg, "mode", BRK_MODE_METRICS_ONLY, &m))
		return NULL;
	rc = brk_set_mode(self->b, (int)m);
	if (rc == -EALREADY)
		Py_RETURN_FALSE;
	if (rc)
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
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
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	if (brkpy_cfg_from_dict(d, &in.config))
		return NULL;
	if (brk_config_validate(&in.config, &what))
		return PyErr_Format(PyExc_ValueError, "bad setting %s", what ? what : "?");
	rc = brk_breaker_configure(self->b, &in.config);
	if (rc)
		return brkpy_set_error(rc, brk_breaker_name(self->b), NULL);
	Py_RETURN_NONE;
}

static PyMethodDef breaker_methods[] = {
	{ "acquire", (PyCFunction)breaker_acquire, METH_O,
	  "acquire(permit_class) -> permit, or raise a Refused subclass." },
	{ "info", (PyCFunction)breaker_info, METH_NOARGS, "A snapshot as a dict." },
	{ "reset", (PyCFunction)breaker_reset, METH_NOARGS, "brk_reset()." },
	{ "trip", (PyCFunction)breaker_trip, METH_O, "trip(ms) -> bool (False: already open)." },
	{ "trip_restart", (PyCFunction)breaker_trip_restart, METH_O,
	  "trip_restart(ms): open for exactly ms from now (brk_trip_restart())." },
	{ "half_open", (PyCFunction)breaker_half_open, METH_NOARGS,
	  "half_open() -> bool (False: already half-open)." },
	{ "counts", (PyCFunction)breaker_counts, METH_NOARGS,
	  "counts() -> (state, generation, consecutive_failures, failure_streak, "
	  "half_open_successes, cooling_level, mode) (brk_breaker_counts())." },
	{ "set_mode", (PyCFunction)breaker_set_mode, METH_O, "set_mode(int) -> bool." },
	{ "configure", (PyCFunction)breaker_configure, METH_O,
	  "configure(dict of C setting names)." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef breaker_getset[] = {
	{ "name", (getter)breaker_name, NULL, "The breaker's name.", NULL },
	{ "state", (getter)breaker_state, NULL, "closed, open or half_open.", NULL },
	{ "failure_streak", (getter)breaker_failure_streak, NULL,
	  "Consecutive failures since the breaker last closed (kept through the trip).", NULL },
	{ "half_open_successes", (getter)breaker_ho_successes, NULL,
	  "Successful probes of the current half-open generation.", NULL },
	{ "created", (getter)breaker_created, NULL,
	  "True if the get that made this handle created the record.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject brkpy_BreakerType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Breaker",
	.tp_basicsize = sizeof(BreakerObject),
	.tp_dealloc = (destructor)breaker_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A breaker record of a segment (brk_breaker).",
	.tp_methods = breaker_methods,
	.tp_getset = breaker_getset,
};
