/*
 * py_pace.c - Pace: a GCRA bucket in paced mode (brk_pace_*): its rate is
 * learned host-wide from the rate-limit answers reported to it. The
 * friendly surface (waiting, classification, the token's context manager)
 * is breakerd.Pace (_pace.py); this file translates the arguments and
 * the library's codes.
 */
#include <errno.h>
#include <time.h>

#include "py_core.h"

static void pace_dealloc(BucketObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A float (int accepted, bool refused) named @name in the errors. */
static int get_double(PyObject *o, const char *name, double *out)
{
	if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o))) {
		PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", name,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyFloat_AsDouble(o);
	if (*out == -1.0 && PyErr_Occurred())
		return -1;
	return 0;
}

/*
 * The settings given (None: not given) into @c, checked against the
 * library's bounds so that every error names its argument; @fields
 * receives the BRK_PACE_F_* bits of the settings given.
 */
static int pace_settings(PyObject *ceil, PyObject *floor, PyObject *burst,
			 PyObject *reserve, PyObject *fleet,
			 struct brk_pace_config *c, unsigned *fields)
{
	uint64_t v;

	brk_pace_config_init(c);
	*fields = 0;
	if (ceil != Py_None) {
		if (get_double(ceil, "ceiling", &c->ceiling_per_s))
			return -1;
		if (!(c->ceiling_per_s >= BRK_BUCKET_MIN_RATE &&
		      c->ceiling_per_s <= BRK_BUCKET_MAX_RATE)) {
			brkpy_value_error("ceiling must be %g..%g requests/s",
				     BRK_BUCKET_MIN_RATE, BRK_BUCKET_MAX_RATE);
			return -1;
		}
		*fields |= BRK_PACE_F_CEILING;
	}
	if (floor != Py_None) {
		if (get_double(floor, "floor", &c->floor_per_s))
			return -1;
		if (!(c->floor_per_s >= BRK_BUCKET_MIN_RATE &&
		      c->floor_per_s <= BRK_BUCKET_MAX_RATE)) {
			brkpy_value_error("floor must be %g..%g requests/s",
				     BRK_BUCKET_MIN_RATE, BRK_BUCKET_MAX_RATE);
			return -1;
		}
		if ((*fields & BRK_PACE_F_CEILING) && c->floor_per_s > c->ceiling_per_s) {
			brkpy_value_error("floor (%g) must not exceed ceiling (%g)",
				     c->floor_per_s, c->ceiling_per_s);
			return -1;
		}
		*fields |= BRK_PACE_F_FLOOR;
	}
	if (burst != Py_None) {
		if (brkpy_get_u64(burst, "burst", BRK_BUCKET_MAX_BURST, &v))
			return -1;
		if (v < 1) {
			PyErr_Format(PyExc_ValueError, "burst must be 1..%u", BRK_BUCKET_MAX_BURST);
			return -1;
		}
		c->burst = (uint32_t)v;
		*fields |= BRK_PACE_F_BURST;
	}
	if (reserve != Py_None) {
		if (brkpy_get_u64(reserve, "reserve_pct", BRK_PACE_MAX_RESERVE_PCT, &v))
			return -1;
		c->reserve_pct = (uint32_t)v;
		*fields |= BRK_PACE_F_RESERVE;
	}
	if (fleet != Py_None) {
		if (!PyBool_Check(fleet)) {
			PyErr_Format(PyExc_TypeError, "fleet must be True or False, not %s",
				     Py_TYPE(fleet)->tp_name);
			return -1;
		}
		c->fleet = fleet == Py_True;
		*fields |= BRK_PACE_F_FLEET;
	}
	return 0;
}

/* Segment.pace(name, ceiling, floor, burst, reserve_pct, fleet): None =
 * default */
PyObject *brkpy_segment_pace(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *ceil, *floor, *burst, *reserve, *fleet;
	struct brk_pace_config c;
	struct brk_bucket_info bi;
	const char *name;
	unsigned fields;
	BucketObject *o;
	brk_bucket *k;
	int rc;

	if (!PyArg_ParseTuple(args, "OOOOOO:pace", &nameo, &ceil, &floor, &burst,
			      &reserve, &fleet))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	if (!(name = brkpy_get_name(nameo, "name")))
		return NULL;
	if (ceil == Py_None)
		return PyErr_Format(PyExc_TypeError, "pace() needs ceiling= (requests/s)");
	if (pace_settings(ceil, floor, burst, reserve, fleet, &c, &fields))
		return NULL;
	o = (BucketObject *)brkpy_PaceType.tp_alloc(&brkpy_PaceType, 0);
	if (!o)
		return NULL;
	if (self->readonly) {
		rc = brk_bucket_find(self->seg, name, &k);
		if (rc == 0 && brk_bucket_info(k, &bi) == 0 && !bi.paced)
			rc = -EMEDIUMTYPE; /* a plain bucket is not a pace */
	} else {
		rc = brk_pace_get(self->seg, name, &c, &k);
	}
	if (rc) {
		Py_DECREF(o);
		if (rc == -EMEDIUMTYPE)
			return PyErr_Format(PyExc_ValueError,
					    "%s: the name is already used by a record of "
					    "another kind (a breaker, a budget or a plain bucket)",
					    name);
		if (rc == -EINVAL)
			return PyErr_Format(PyExc_ValueError,
					    "%s: floor must not exceed ceiling", name);
		return brkpy_set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->k = k;
	return (PyObject *)o;
}

static int get_priority(PyObject *o, int *out)
{
	uint64_t v;

	if (brkpy_get_u64(o, "priority", 1, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* _take(priority) -> (taken_at_ns, 0.0) if taken, else (0, jittered wait s). */
static PyObject *pace_take(BucketObject *self, PyObject *arg)
{
	uint64_t at = 0, nb = 0, wake, now;
	int prio, rc;

	if (brkpy_seg_check(self->seg) || get_priority(arg, &prio))
		return NULL;
	rc = brk_pace_take(self->k, prio, &at, &nb);
	if (rc == 0)
		return Py_BuildValue("Kd", (unsigned long long)at, 0.0);
	if (rc == -BRK_ENOTOKENS) {
		wake = brk_bucket_wake_ns(self->k, nb);
		now = brk_now_ns(self->seg->seg);
		if (wake == UINT64_MAX)
			return Py_BuildValue("Kd", 0ULL, Py_HUGE_VAL);
		return Py_BuildValue("Kd", 0ULL,
				     wake > now ? (double)(wake - now) / 1e9 : 1e-9);
	}
	if (rc == -BRK_ECONTENDED)
		return brkpy_raise_refusal(brkpy_NoTokens_cls, 0.0, "contended",
					   brk_bucket_name(self->k));
	return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
}

/* NoTokens for ticket @t's slot (cancelled first: it is given back when
 * it was the last reserved). */
static PyObject *wait_refused(BucketObject *self, struct brk_ticket *t, int cancel)
{
	uint64_t now = brk_now_ns(self->seg->seg);

	if (cancel)
		(void)brk_ticket_cancel(self->k, t);
	if (t->at_ns == UINT64_MAX)
		return brkpy_raise_refusal(brkpy_NoTokens_cls, Py_HUGE_VAL, "no_tokens",
					   brk_bucket_name(self->k));
	return brkpy_raise_refusal(brkpy_NoTokens_cls,
				   t->at_ns > now ? (double)(t->at_ns - now) / 1e9 : 0.0,
				   "no_tokens", brk_bucket_name(self->k));
}

/* _take_wait(priority, wait_ms) -> (taken_at_ns, waited s): a fair wait
 * (breaker.h "Fair waits"): brk_pace_reserve() of the next slot within
 * wait_ms (0 with a FakeClock: only a token free now), sleep to it
 * without the GIL, brk_ticket_check(), sleep again if a cut moved it.
 * A slot past wait_ms raises NoTokens with the wait, nothing reserved. A
 * signal's Python handler runs during the sleep; if it raises, the ticket
 * is cancelled and the exception propagates. */
static PyObject *pace_take_wait(BucketObject *self, PyObject *args)
{
	PyObject *po, *wo;
	uint64_t wait_ms, horizon, t0, now;
	struct brk_ticket t;
	int prio, rc, fake, r;

	if (!PyArg_ParseTuple(args, "OO:_take_wait", &po, &wo))
		return NULL;
	if (brkpy_seg_check(self->seg) || get_priority(po, &prio) ||
	    brkpy_get_u64(wo, "wait", BRK_MAX_DURATION_MS, &wait_ms))
		return NULL;
	fake = self->seg->clock != NULL;
	horizon = fake ? 0 : wait_ms * 1000000u;
	t0 = brk_now_ns(self->seg->seg);
	(void)brk_ticket_init(&t);
	rc = brk_pace_reserve(self->k, prio, horizon, &t);
	if (rc == -BRK_ENOTOKENS)
		return wait_refused(self, &t, 0);
	while (rc >= 0) {
		now = brk_now_ns(self->seg->seg);
		if (t.at_ns > now) {
			struct timespec ts = { (time_t)(t.at_ns / 1000000000u),
					       (long)(t.at_ns % 1000000000u) };

			if (fake || t.at_ns - t0 > horizon)
				return wait_refused(self, &t, 1); /* a cut moved it */
			self->seg->busy++;
			Py_BEGIN_ALLOW_THREADS
			r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			Py_END_ALLOW_THREADS
			self->seg->busy--;
			if (r == EINTR && PyErr_CheckSignals() < 0) {
				(void)brk_ticket_cancel(self->k, &t);
				return NULL;
			}
			continue;
		}
		rc = brk_ticket_check(self->k, &t);
		if (rc == 0)
			return Py_BuildValue("Kd", (unsigned long long)t.taken_at_ns,
					     t.taken_at_ns > t0
						     ? (double)(t.taken_at_ns - t0) / 1e9
						     : 0.0);
	}
	(void)brk_ticket_cancel(self->k, &t);
	if (rc == -BRK_ECONTENDED)
		return brkpy_raise_refusal(brkpy_NoTokens_cls, 0.0, "contended",
					   brk_bucket_name(self->k));
	return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
}

/* _report(taken_at_ns, signal, retry_after_ms) -> True if it cut the rate */
static PyObject *pace_report(BucketObject *self, PyObject *args)
{
	PyObject *ato, *sigo, *rao;
	uint64_t at, sig, ra;
	int rc;

	if (!PyArg_ParseTuple(args, "OOO:_report", &ato, &sigo, &rao))
		return NULL;
	if (brkpy_seg_check(self->seg))
		return NULL;
	if (brkpy_get_u64(ato, "taken_at", UINT64_MAX, &at) ||
	    brkpy_get_u64(sigo, "signal", BRK_PACE_IGNORE, &sig) ||
	    brkpy_get_u64(rao, "retry_after", BRK_MAX_DURATION_MS, &ra))
		return NULL;
	if (sig < BRK_PACE_OK)
		return PyErr_Format(PyExc_ValueError, "signal must be PACE_OK, PACE_LIMITED "
				    "or PACE_IGNORE");
	rc = brk_pace_report(self->k, at, (int)sig, (int64_t)ra);
	if (rc == -BRK_ECONTENDED)
		Py_RETURN_FALSE; /* the cut was not stored: a newer one was */
	if (rc < 0)
		return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
	return PyBool_FromLong(rc == 1);
}

static PyObject *pace_info(BucketObject *self, PyObject *unused)
{
	struct brk_bucket_info bi;
	int rc;

	(void)unused;
	if (brkpy_seg_check(self->seg))
		return NULL;
	rc = brk_bucket_info(self->k, &bi);
	if (rc)
		return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
	return brkpy_make_bucket_info(&bi);
}

/* update(ceiling, floor, burst, reserve_pct, fleet): only those not None */
static PyObject *pace_update(BucketObject *self, PyObject *args)
{
	PyObject *ceil, *floor, *burst, *reserve, *fleet;
	struct brk_pace_config c;
	unsigned fields;
	int rc;

	if (!PyArg_ParseTuple(args, "OOOOO:update", &ceil, &floor, &burst, &reserve,
			      &fleet))
		return NULL;
	if (brkpy_seg_check(self->seg))
		return NULL;
	if (pace_settings(ceil, floor, burst, reserve, fleet, &c, &fields))
		return NULL;
	do
		rc = brk_pace_update(self->k, &c, fields);
	while (rc == -BRK_ECONTENDED);
	if (rc == -EINVAL)
		return PyErr_Format(PyExc_ValueError, "%s: floor must not exceed ceiling",
				    brk_bucket_name(self->k));
	if (rc)
		return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
	Py_RETURN_NONE;
}

static PyObject *pace_name(BucketObject *self, void *c)
{
	(void)c;
	if (brkpy_seg_check(self->seg))
		return NULL;
	return PyUnicode_FromString(brk_bucket_name(self->k));
}

/* pace_signal_of(outcome, reason, retry_after_ms) (brk_pace_signal_of) */
PyObject *brkpy_pace_signal_of(PyObject *mod, PyObject *args)
{
	int outcome, reason;
	long long ra;

	(void)mod;
	if (!PyArg_ParseTuple(args, "iiL:pace_signal_of", &outcome, &reason, &ra))
		return NULL;
	return PyLong_FromLong(brk_pace_signal_of(outcome, reason, (int64_t)ra));
}

static PyMethodDef pace_methods[] = {
	{ "_take", (PyCFunction)pace_take, METH_O,
	  "_take(priority) -> (taken_at_ns, wait s); wait 0.0: taken." },
	{ "_take_wait", (PyCFunction)pace_take_wait, METH_VARARGS,
	  "_take_wait(priority, wait_ms) -> (taken_at_ns, waited s): a fair wait." },
	{ "_report", (PyCFunction)pace_report, METH_VARARGS,
	  "_report(taken_at_ns, signal, retry_after_ms) -> True if it cut the rate." },
	{ "info", (PyCFunction)pace_info, METH_NOARGS, "A snapshot as a dict." },
	{ "update", (PyCFunction)pace_update, METH_VARARGS,
	  "update(ceiling, floor, burst, reserve_pct, fleet): change those not None." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef pace_getset[] = {
	{ "name", (getter)pace_name, NULL, "The pace's name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject brkpy_PaceType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Pace",
	.tp_basicsize = sizeof(BucketObject),
	.tp_dealloc = (destructor)pace_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A paced GCRA bucket (brk_pace_*): a learned, host-wide rate.",
	.tp_methods = pace_methods,
	.tp_getset = pace_getset,
};
