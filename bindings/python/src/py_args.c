/*
 * py_args.c - checked conversions of Python arguments (ints, names, rates)
 * and the dict helper of the info builders.
 */
#include "py_core.h"

/* ---- argument helpers --------------------------------------------------- */

/* An int in 0..max (bool refused), named @name in the errors. */
int brkpy_get_u64(PyObject *o, const char *name, uint64_t max, uint64_t *out)
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
			/* above 2**64 - 1: too large for every max, also
			 * UINT64_MAX (it was clamped to it and accepted) */
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "%s must be at most %llu", name,
				     (unsigned long long)max);
			return -1;
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
const char *brkpy_get_name(PyObject *o, const char *argname)
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

int brkpy_put(PyObject *d, const char *key, PyObject *v)
{
	int rc;

	if (!v)
		return -1;
	rc = PyDict_SetItemString(d, key, v);
	Py_DECREF(v);
	return rc;
}

int brkpy_get_rate(PyObject *o, const char *name, double *out)
{
	if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o))) {
		PyErr_Format(PyExc_TypeError, "%s must be a number, not %.100s", name,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	*out = PyFloat_AsDouble(o);
	return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}
