/*
 * py_fakeclock.c - FakeClock: a test clock whose time is a uint64 in this
 * object, read by the library (brk_clock_fn) with no Python call.
 */
#include "py_core.h"

/* ---- FakeClock ---------------------------------------------------------- */

uint64_t brkpy_fake_clock_read(void *ctx)
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
	if (start && brkpy_get_u64(start, "start_ns", UINT64_MAX / 2, &v))
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

	if (brkpy_get_u64(arg, "ns", UINT64_MAX / 4, &d))
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

PyTypeObject brkpy_FakeClockType = {
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
