/*
 * py_errors.c - library codes to Python exceptions: refusals to the Refused
 * subclasses, bad arguments to ValueError, the rest to breakerd.Error.
 */
#include "py_core.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- exceptions (classes defined in breakerd/_errors.py) -------------- */

PyObject *brkpy_Error_cls, *brkpy_CircuitOpen_cls, *brkpy_Cooling_cls, *brkpy_BulkheadFull_cls,
	*brkpy_RetryDeferred_cls, *brkpy_NoTokens_cls, *brkpy_DeadlineExpired_cls;

/* Raise breakerd.Error(errno, message) for a library or system code. */
PyObject *brkpy_raise_error(int rc, const char *what, const char *errbuf)
{
	PyObject *exc;
	int code = rc < 0 ? -rc : rc;

	if (errbuf && errbuf[0])
		exc = PyObject_CallFunction(brkpy_Error_cls, "is", code, errbuf);
	else if (what) {
		PyObject *msg = PyUnicode_FromFormat("%s: %s", what, brk_strerror(rc));

		if (!msg)
			return NULL;
		exc = PyObject_CallFunction(brkpy_Error_cls, "iO", code, msg);
		Py_DECREF(msg);
	}
	else
		exc = PyObject_CallFunction(brkpy_Error_cls, "is", code, brk_strerror(rc));
	if (exc) {
		PyErr_SetObject(brkpy_Error_cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

/* Raise a Refused subclass with wait (s), cause and breaker. */
PyObject *brkpy_raise_refusal(PyObject *cls, double wait_s, const char *cause,
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
 * brkpy_set_error - map a negative library code to a Python exception.
 * @what: the argument or object the call was about, for the message.
 * Bad arguments are ValueError (TypeError is raised earlier, on types);
 * everything else is breakerd.Error (an OSError with .errno).
 */
PyObject *brkpy_set_error(int rc, const char *what, const char *errbuf)
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
		return brkpy_raise_error(rc, what, errbuf);
	}
}

PyObject *brkpy_value_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	PyErr_SetString(PyExc_ValueError, msg);
	return NULL;
}
