/*
 * py_admit.c - Segment._admit() and Admission: brk_admit() (breaker, pace and
 * retry budget in one fixed order, with a deadline) and
 * brk_admit_release(). A refusal raises the Refused subclass of its gate
 * with .code, the library's stable code (brk_admit_code_name()). An
 * Admission is released at most once; one collected unreleased in the
 * process that made it is released as cancelled with a ResourceWarning.
 *
 * The GIL is released around brk_admit() when it may sleep (max_wait_ms >
 * 0 on the real clock): SegmentObject.busy counts those calls and
 * Segment.close() refuses while it is not 0, so the segment stays mapped
 * under a sleeping call.
 */
#include "py_core.h"

static void admission_finalize(PyObject *self)
{
	AdmissionObject *a = (AdmissionObject *)self;
	PyObject *et, *ev, *tb;

	if (a->released || !a->seg)
		return;
	a->released = 1;
	if (a->pid != brkpy_self_pid)
		return; /* a fork child's copy: the parent's to release */
	PyErr_Fetch(&et, &ev, &tb);
	if (a->seg->seg)
		brk_admit_release(&a->adm, BRK_CANCELLED, BRK_REASON_NONE, 0);
	if (PyErr_WarnFormat(PyExc_ResourceWarning, 1,
			     "breakerd: an admission was garbage-collected unreleased; "
			     "released as cancelled"))
		PyErr_WriteUnraisable(self);
	PyErr_Restore(et, ev, tb);
}

static void admission_dealloc(AdmissionObject *self)
{
	if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
		return; /* resurrected */
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The handle of an optional record argument: None, or a _core object of
 * @type (@type2 too, if not NULL) on segment @seg. */
static int record_arg(PyObject *o, const char *name, PyTypeObject *type,
		      PyTypeObject *type2, SegmentObject *seg, void **out)
{
	SegmentObject *owner;

	*out = NULL;
	if (o == Py_None)
		return 0;
	if (PyObject_TypeCheck(o, type)) {
		if (type == &brkpy_BreakerType) {
			owner = ((BreakerObject *)o)->seg;
			*out = ((BreakerObject *)o)->b;
		} else if (type == &brkpy_BudgetType) {
			owner = ((BudgetObject *)o)->seg;
			*out = ((BudgetObject *)o)->g;
		} else {
			owner = ((BucketObject *)o)->seg;
			*out = ((BucketObject *)o)->k;
		}
	} else if (type2 && PyObject_TypeCheck(o, type2)) {
		owner = ((BucketObject *)o)->seg;
		*out = ((BucketObject *)o)->k;
	} else {
		PyErr_Format(PyExc_TypeError, "%s must be a breakerd %s of this segment or "
			     "None, not %.100s", name, name, Py_TYPE(o)->tp_name);
		return -1;
	}
	if (owner != seg) {
		PyErr_Format(PyExc_ValueError, "%s belongs to another segment handle", name);
		return -1;
	}
	return brkpy_seg_check(owner);
}

/* The Refused subclass of an admission's refusal code. */
static PyObject *refusal_cls(int code)
{
	switch (code) {
	case BRK_ADMIT_EXPIRED:
		return brkpy_DeadlineExpired_cls;
	case BRK_ADMIT_COOLING:
		return brkpy_Cooling_cls;
	case BRK_ADMIT_RATE_LIMITED:
		return brkpy_NoTokens_cls;
	case BRK_ADMIT_BULKHEAD_FULL:
		return brkpy_BulkheadFull_cls;
	case BRK_ADMIT_DEFERRED:
		return brkpy_RetryDeferred_cls;
	default: /* BREAKER_OPEN, CONTENDED */
		return brkpy_CircuitOpen_cls;
	}
}

/* The cause word of a refusal (Refused.cause): the breaker's own cause,
 * else the gate's. */
static const char *refusal_cause(const struct brk_admission *a)
{
	switch (a->code) {
	case BRK_ADMIT_EXPIRED:
		return "expired";
	case BRK_ADMIT_RATE_LIMITED:
		return "no_tokens";
	case BRK_ADMIT_DEFERRED:
		return "deferred";
	case BRK_ADMIT_CONTENDED:
		return "contended";
	default:
		return a->cause ? brk_cause_name(a->cause) : "open";
	}
}

/*
 * Segment._admit(breaker, pace, budget, attempt, priority, deadline_ns,
 * max_wait_ms) -> Admission (GO), or raise the refusal. The records are
 * _core objects or None; attempt, priority are the enum values; deadline_ns
 * 0: none. The caller (breakerd.Segment.admit) converts and checks the
 * friendly arguments.
 */
PyObject *brkpy_segment_admit(SegmentObject *self, PyObject *args)
{
	PyObject *bro, *pao, *buo, *excls;
	unsigned long long deadline, maxw;
	int attempt, priority, rc, sleeps;
	struct brk_admit_req req;
	AdmissionObject *a;
	void *b, *k, *g;

	if (!PyArg_ParseTuple(args, "OOOiiKK:_admit", &bro, &pao, &buo, &attempt, &priority,
			      &deadline, &maxw))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	if (record_arg(bro, "breaker", &brkpy_BreakerType, NULL, self, &b) ||
	    record_arg(pao, "pace", &brkpy_PaceType, &brkpy_BucketType, self, &k) ||
	    record_arg(buo, "budget", &brkpy_BudgetType, NULL, self, &g))
		return NULL;
	if (!b && !k && !g)
		return PyErr_Format(PyExc_TypeError,
				    "admit() needs at least one of breaker=, pace=, budget=");
	if (maxw > BRK_MAX_DURATION_MS)
		return PyErr_Format(PyExc_ValueError, "max_wait is longer than the largest duration");
	/* Allocate first: no Python error may come between a GO and the
	 * object that releases it. */
	a = (AdmissionObject *)brkpy_AdmissionType.tp_alloc(&brkpy_AdmissionType, 0);
	if (!a)
		return NULL;
	a->released = 1;
	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.breaker = b;
	req.pace = k;
	req.budget = g;
	req.attempt = attempt;
	req.priority = priority;
	req.deadline_ns = deadline;
	req.max_wait_ms = maxw;
	sleeps = maxw > 0 && !self->clock; /* an injected clock never sleeps */
	if (sleeps) {
		uint64_t t0 = brk_now_ns(self->seg), spent_ms;

		for (;;) {
			self->busy++;
			Py_BEGIN_ALLOW_THREADS
			rc = brk_admit(&req, &a->adm);
			Py_END_ALLOW_THREADS
			self->busy--;
			if (rc != -EINTR)
				break;
			/* a signal during the sleep: its Python handler runs now
			 * (Ctrl-C raises KeyboardInterrupt at once, PEP 475),
			 * else wait on with what is left of max_wait */
			if (PyErr_CheckSignals() < 0) {
				Py_DECREF(a);
				return NULL;
			}
			spent_ms = (brk_now_ns(self->seg) - t0) / 1000000u;
			req.max_wait_ms = spent_ms < maxw ? maxw - spent_ms : 0;
		}
	} else {
		rc = brk_admit(&req, &a->adm);
	}
	if (rc == 0) {
		Py_INCREF(self);
		a->seg = self;
		a->pid = brkpy_self_pid;
		a->released = 0;
		a->paced = k != NULL;
		return (PyObject *)a;
	}
	if (brk_is_refusal(rc) || rc == -BRK_EEXPIRED) {
		struct brk_admission copy = a->adm;
		PyObject *kw, *e, *empty;

		Py_DECREF(a);
		copy.by[sizeof(copy.by) - 1] = '\0';
		excls = refusal_cls(copy.code);
		kw = Py_BuildValue("{s:d,s:s,s:s,s:s}", "wait", (double)copy.wait_ms / 1000.0,
				   "cause", refusal_cause(&copy), "breaker", copy.by,
				   "code", brk_admit_code_name(copy.code));
		empty = kw ? PyTuple_New(0) : NULL;
		e = empty ? PyObject_Call(excls, empty, kw) : NULL;
		Py_XDECREF(empty);
		Py_XDECREF(kw);
		if (e) {
			PyErr_SetObject(excls, e);
			Py_DECREF(e);
		}
		return NULL;
	}
	{
		char by[BRK_NAME_MAX + 1];

		memcpy(by, a->adm.by, sizeof(by));
		by[sizeof(by) - 1] = '\0';
		Py_DECREF(a);
		return brkpy_set_error(rc, by[0] ? by : "admit", NULL);
	}
}

/* _release(outcome, reason, retry_after_ms) -> True (reported), False (a
 * second release, stale, or a fork child's copy). */
static PyObject *admission_release(AdmissionObject *self, PyObject *args)
{
	int outcome, reason, rc;
	long long ra;

	if (!PyArg_ParseTuple(args, "iiL:_release", &outcome, &reason, &ra))
		return NULL;
	if (self->released || !self->seg)
		Py_RETURN_FALSE;
	if (brkpy_seg_check(self->seg))
		return NULL;
	self->released = 1;
	if (self->pid != brkpy_self_pid)
		Py_RETURN_FALSE; /* the parent's */
	rc = brk_admit_release(&self->adm, outcome, reason, (int64_t)ra);
	if (rc == 0)
		Py_RETURN_TRUE;
	if (rc == -BRK_ESTALE || rc == -BRK_ECONTENDED)
		Py_RETURN_FALSE;
	return brkpy_set_error(rc, "admission", NULL);
}

/* The outcome brk_admit_release() recorded (0 before): "throttled" for a
 * paced rate-limit answer whatever the caller reported. */
static PyObject *admission_get_recorded(AdmissionObject *self, void *c)
{
	(void)c;
	return PyLong_FromLong(self->adm.outcome);
}

static PyObject *admission_get_released(AdmissionObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->released);
}

static PyObject *admission_get_taken_at(AdmissionObject *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->adm.taken_at_ns);
}

static PyObject *admission_get_waited(AdmissionObject *self, void *c)
{
	(void)c;
	return PyFloat_FromDouble((double)self->adm.wait_ms / 1000.0);
}

static PyObject *admission_get_code(AdmissionObject *self, void *c)
{
	(void)c;
	return PyUnicode_FromString(brk_admit_code_name(self->adm.code));
}

static PyObject *admission_get_paced(AdmissionObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->paced);
}

/* outcome_code(outcome, reason) -> the stable code (brk_outcome_code) */
PyObject *brkpy_outcome_code(PyObject *mod, PyObject *args)
{
	int outcome, reason;

	(void)mod;
	if (!PyArg_ParseTuple(args, "ii:outcome_code", &outcome, &reason))
		return NULL;
	return PyUnicode_FromString(brk_outcome_code(outcome, reason));
}

PyObject *brkpy_admit_code_name(PyObject *mod, PyObject *arg)
{
	long code;

	(void)mod;
	code = PyLong_AsLong(arg);
	if (code == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(brk_admit_code_name((int)code));
}

static PyMethodDef admission_methods[] = {
	{ "_release", (PyCFunction)admission_release, METH_VARARGS,
	  "_release(outcome, reason, retry_after_ms) -> True if reported." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef admission_getset[] = {
	{ "released", (getter)admission_get_released, NULL, "Released (or given up).", NULL },
	{ "recorded_outcome", (getter)admission_get_recorded, NULL,
	  "The outcome the release recorded (0 before).", NULL },
	{ "taken_at", (getter)admission_get_taken_at, NULL,
	  "The pace token's time, ns of the segment clock (0: no pace).", NULL },
	{ "waited", (getter)admission_get_waited, NULL, "Seconds admit() slept.", NULL },
	{ "code", (getter)admission_get_code, NULL, "\"GO\".", NULL },
	{ "paced", (getter)admission_get_paced, NULL, "A pace was given.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject brkpy_AdmissionType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Admission",
	.tp_basicsize = sizeof(AdmissionObject),
	.tp_dealloc = (destructor)admission_dealloc,
	.tp_finalize = admission_finalize,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "An admitted job (brk_admission): release it exactly once.",
	.tp_methods = admission_methods,
	.tp_getset = admission_getset,
};
