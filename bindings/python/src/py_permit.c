/*
 * py_permit.c - Permit: an admitted call, released at most once; released
 * as cancelled with a ResourceWarning if collected unreported; and the
 * acquire that admits it (brkpy_acquire, used by py_breaker.c and
 * py_guard.c: this file calls neither).
 */
#include <stdlib.h>
#include <time.h>

#include "py_core.h"

/* This process's pid, refreshed in a fork()ed child (getpid() is a
 * syscall; a permit records its owner on every acquire). */
pid_t brkpy_self_pid;

void brkpy_refresh_pid(void)
{
	brkpy_self_pid = getpid();
}

/* ---- Permit ------------------------------------------------------------- */

/* brk_acquire(), sleeping out (without the GIL) the refusals of the
 * breaker's implicit pace (cause "paced": its next token) up to its
 * max_wait_ms in all, as bctl exec and brk_call() do (issue 21: `with br:`
 * keeps the upstream's allowance with no configuration). With a FakeClock
 * it never sleeps: the refusal is raised with its wait. */
int brkpy_acquire(BreakerObject *br, brk_permit *p, struct brk_refusal *why)
{
	uint64_t left = UINT64_MAX;
	int rc, i;

	for (i = 0; i < 1000; i++) {
		struct timespec ts;

		rc = brk_acquire(br->b, p, why);
		if (rc != -BRK_ECOOLING || why->cause != BRK_CAUSE_PACED ||
		    br->seg->clock)
			return rc;
		if (left == UINT64_MAX) {
			struct brk_info *in = calloc(1, sizeof(*in));

			left = BRK_DEFAULT_MAX_WAIT_MS;
			if (in && brk_breaker_info(br->b, in) == 0)
				left = in->config.max_wait_ms;
			free(in);
		}
		if (why->wait_ms > left)
			return rc;
		left -= why->wait_ms;
		ts.tv_sec = (time_t)(why->wait_ms / 1000u);
		ts.tv_nsec = (long)(why->wait_ms % 1000u) * 1000000L;
		br->seg->busy++;
		Py_BEGIN_ALLOW_THREADS
		(void)nanosleep(&ts, NULL); /* a signal: ask again at once */
		Py_END_ALLOW_THREADS
		br->seg->busy--;
	}
	return rc;
}

int brkpy_permit_fill(PermitObject *p, BreakerObject *br, struct brk_refusal *why)
{
	int rc;

	p->released = 1; /* until admitted: nothing to release */
	p->counted = -1;
	rc = brkpy_acquire(br, &p->p, why);
	if (rc)
		return rc;
	Py_INCREF(br);
	p->br = br;
	p->pid = brkpy_self_pid;
	p->released = 0;
	return 0;
}

static void permit_finalize(PyObject *self)
{
	PermitObject *p = (PermitObject *)self;
	PyObject *et, *ev, *tb;

	if (p->released || !p->br)
		return;
	p->released = 1;
	if (p->pid != brkpy_self_pid)
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

/* Release @self once with @outcome: True (counted), False (a second
 * report, stale, contended), NULL with an exception (closed segment, other
 * library error). The arguments are checked by the caller. */
PyObject *brkpy_permit_release(PermitObject *self, int outcome, int reason, long long ra)
{
	int rc;

	if (self->released || !self->br)
		Py_RETURN_FALSE;
	if (brkpy_seg_check(self->br->seg))
		return NULL;
	self->released = 1;
	rc = brk_release(&self->p, outcome, reason, ra);
	self->counted = rc == 0;
	if (rc == 0)
		Py_RETURN_TRUE;
	if (rc == -BRK_ESTALE || rc == -BRK_ECONTENDED)
		Py_RETURN_FALSE;
	return brkpy_set_error(rc, brk_breaker_name(self->br->b), NULL);
}

/* _release(outcome, reason, retry_after_ms) -> True (counted) / False. A
 * second call is a no-op returning False. */
static PyObject *permit_release(PermitObject *self, PyObject *args)
{
	int outcome, reason;
	long long ra;

	if (!PyArg_ParseTuple(args, "iiL:_release", &outcome, &reason, &ra))
		return NULL;
	if (outcome < BRK_SUCCESS || outcome > BRK_THROTTLED)
		return PyErr_Format(PyExc_ValueError, "outcome %d is unknown", outcome);
	if (reason < 0 || reason >= BRK_REASON_COUNT)
		return PyErr_Format(PyExc_ValueError, "reason %d is unknown", reason);
	return brkpy_permit_release(self, outcome, reason, ra);
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

/* success(retry_after=None) -> bool counted. The common call (no
 * argument) is C; a retry_after goes to the Python layer's _report(). */
static PyObject *permit_success(PermitObject *self, PyObject *const *args, size_t nargsf,
				PyObject *kwnames)
{
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	PyObject *meth, *r;

	if (nargs == 0 && !kwnames)
		return brkpy_permit_release(self, BRK_SUCCESS, BRK_REASON_NONE, 0);
	meth = PyObject_GetAttrString((PyObject *)self, "_success_slow");
	if (!meth)
		return NULL;
	r = PyObject_Vectorcall(meth, args, (size_t)nargs, kwnames);
	Py_DECREF(meth);
	return r;
}

static PyMethodDef permit_methods[] = {
	{ "_release", (PyCFunction)permit_release, METH_VARARGS,
	  "_release(outcome, reason, retry_after_ms) -> bool counted." },
	{ "success", (PyCFunction)(void (*)(void))permit_success, METH_FASTCALL | METH_KEYWORDS,
	  "success(retry_after=None) -> True if counted; False if not (a second\n"
	  "report, stale, inherited from a fork()ed parent)." },
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

PyTypeObject brkpy_PermitType = {
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
