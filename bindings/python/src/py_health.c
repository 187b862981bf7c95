/*
 * py_health.c - Segment.health(name) and Segment.set_fallback(name, on): the
 * health state of a name's subtree (brk_health, brk_set_fallback), as the
 * dict `bctl health NAME --json` prints.
 */
#include "py_core.h"

/* health(name) -> {"name", "state", "code", "by", "since_age_ms" (None:
 * not recorded), "children", "children_unavailable"} */
PyObject *brkpy_segment_health(SegmentObject *self, PyObject *arg)
{
	struct brk_health h;
	const char *name;
	PyObject *d, *since;
	int rc;

	if (brkpy_seg_check(self))
		return NULL;
	if (!(name = brkpy_get_name(arg, "name")))
		return NULL;
	rc = brk_health(self->seg, name, &h);
	if (rc == -ENOENT)
		return PyErr_Format(PyExc_LookupError, "%s: no such breaker, bucket or budget",
				    name);
	if (rc)
		return brkpy_set_error(rc, name, NULL);
	h.by[sizeof(h.by) - 1] = '\0';
	if (h.since_age_ms == UINT64_MAX) {
		Py_INCREF(Py_None);
		since = Py_None;
	} else if (!(since = PyLong_FromUnsignedLongLong(h.since_age_ms))) {
		return NULL;
	}
	d = Py_BuildValue("{s:s,s:s,s:s,s:s,s:N,s:I,s:I}", "name", name,
			  "state", brk_health_state_name(h.state),
			  "code", brk_health_code_name(h.code), "by", h.by,
			  "since_age_ms", since, "children", (unsigned)h.children,
			  "children_unavailable", (unsigned)h.children_unavailable);
	return d;
}

/* set_fallback(name, on) -> True if changed, False if it already was so */
PyObject *brkpy_segment_set_fallback(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *ono;
	const char *name;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:set_fallback", &nameo, &ono))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	if (!(name = brkpy_get_name(nameo, "name")))
		return NULL;
	if (!PyBool_Check(ono))
		return PyErr_Format(PyExc_TypeError, "on must be True or False, not %.100s",
				    Py_TYPE(ono)->tp_name);
	do
		rc = brk_set_fallback(self->seg, name, ono == Py_True);
	while (rc == -BRK_ECONTENDED);
	if (rc == -EALREADY)
		Py_RETURN_FALSE;
	if (rc == -ENOENT)
		return PyErr_Format(PyExc_LookupError, "%s: no such breaker", name);
	if (rc == -EMEDIUMTYPE)
		return PyErr_Format(PyExc_ValueError,
				    "%s: a bucket or budget: the fallback flag lives on a breaker",
				    name);
	if (rc)
		return brkpy_set_error(rc, name, NULL);
	Py_RETURN_TRUE;
}
