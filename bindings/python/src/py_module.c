/*
 * py_module.c - breakerd._core: the CPython extension over libbreaker; its
 * module functions and initialisation.
 *
 * Types: Segment (brk_segment), Breaker (brk_breaker), Permit (brk_permit),
 * Bucket (brk_bucket), Budget (brk_budget), FakeClock (an injected clock
 * whose value lives in this object, read by the library as a uint64 with
 * no Python call and no GIL). The friendly surface (durations, exception
 * classification, context managers, decorators) is the breakerd package; these
 * files only translate between Python objects and the C API and map every
 * library code to a Python exception (see brkpy_set_error()).
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
#include <pthread.h>

#include "py_core.h"

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
				    "invalid duration %R (a number with a unit: us, ms, s, m, h or d, e.g. 250ms, 30s, 5m)%s",
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
		return PyErr_Format(PyExc_ValueError, "status %d is not an HTTP status (0, or 100..999)", status);
	return Py_BuildValue("iiL", r.outcome, r.reason, (long long)r.retry_after_ms);
}

static PyMethodDef core_methods[] = {
	{ "attach", (PyCFunction)(void (*)(void))brkpy_attach, METH_VARARGS | METH_KEYWORDS,
	  "attach(shm=None, capacity=None, readonly=False, clock=None) -> Segment." },
	{ "parse_duration_ms", (PyCFunction)core_parse_duration_ms, METH_O,
	  "brk_parse_duration(): '250ms' -> 250." },
	{ "strerror", (PyCFunction)core_strerror, METH_O, "brk_strerror(code)." },
	{ "config_check", (PyCFunction)brkpy_config_check, METH_O,
	  "None, or the C name of the first bad setting." },
	{ "config_defaults", (PyCFunction)brkpy_config_defaults, METH_NOARGS,
	  "brk_config_init() as a dict." },
	{ "_held", (PyCFunction)brkpy_held_list, METH_NOARGS,
	  "[(breaker, permit), ...]: the open `with` blocks of this context, innermost last." },
	{ "outcome_code", (PyCFunction)brkpy_outcome_code, METH_VARARGS,
	  "brk_outcome_code(outcome, reason): the stable outcome code." },
	{ "admit_code_name", (PyCFunction)brkpy_admit_code_name, METH_O,
	  "brk_admit_code_name(code)." },
	{ "pace_signal_of", (PyCFunction)brkpy_pace_signal_of, METH_VARARGS,
	  "brk_pace_signal_of(outcome, reason, retry_after_ms)." },
	{ "http_classify", (PyCFunction)core_http_classify, METH_VARARGS,
	  "brk_http_classify(status, text, retry_after, now_unix_ms)." },
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
	PyTypeObject *types[] = { &brkpy_FakeClockType, &brkpy_SegmentType, &brkpy_BreakerType,
				  &brkpy_PermitType, &brkpy_BucketType, &brkpy_BudgetType,
				  &brkpy_GuardType, &brkpy_PaceType, &brkpy_AdmissionType };
	const char *tnames[] = { "FakeClock", "Segment", "Breaker",
				 "Permit", "Bucket", "Budget", "Guard", "Pace", "Admission" };
	size_t i;

	brkpy_refresh_pid();
	if (pthread_atfork(NULL, NULL, brkpy_refresh_pid) != 0) {
		PyErr_SetString(PyExc_ImportError, "breakerd: pthread_atfork failed");
		return NULL;
	}
	errs = PyImport_ImportModule("breakerd._errors");
	if (!errs)
		return NULL;
	if (load_exc(errs, "Error", &brkpy_Error_cls) ||
	    load_exc(errs, "CircuitOpen", &brkpy_CircuitOpen_cls) ||
	    load_exc(errs, "Cooling", &brkpy_Cooling_cls) ||
	    load_exc(errs, "BulkheadFull", &brkpy_BulkheadFull_cls) ||
	    load_exc(errs, "RetryDeferred", &brkpy_RetryDeferred_cls) ||
	    load_exc(errs, "NoTokens", &brkpy_NoTokens_cls) ||
	    load_exc(errs, "DeadlineExpired", &brkpy_DeadlineExpired_cls)) {
		Py_DECREF(errs);
		return NULL;
	}
	Py_DECREF(errs);
	if (brkpy_held_init() || brkpy_guard_init() || PyType_Ready(&brkpy_HeldType) < 0)
		return NULL;
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
	    add_int(m, "THROTTLED", BRK_THROTTLED) ||
	    add_int(m, "REASON_NONE", BRK_REASON_NONE) ||
	    add_int(m, "REASON_TIMEOUT", BRK_REASON_TIMEOUT) ||
	    add_int(m, "REASON_CONNECT", BRK_REASON_CONNECT) ||
	    add_int(m, "REASON_SERVER_ERROR", BRK_REASON_SERVER_ERROR) ||
	    add_int(m, "REASON_OVERLOADED", BRK_REASON_OVERLOADED) ||
	    add_int(m, "REASON_RATE_LIMITED", BRK_REASON_RATE_LIMITED) ||
	    add_int(m, "REASON_OTHER", BRK_REASON_OTHER) ||
	    add_int(m, "FIRST_ATTEMPT", BRK_FIRST_ATTEMPT) ||
	    add_int(m, "RETRY", BRK_RETRY) ||
	    add_int(m, "PRIORITY_NORMAL", BRK_PRIORITY_NORMAL) ||
	    add_int(m, "PRIORITY_HIGH", BRK_PRIORITY_HIGH) ||
	    add_int(m, "PACE_OK", BRK_PACE_OK) ||
	    add_int(m, "PACE_LIMITED", BRK_PACE_LIMITED) ||
	    add_int(m, "PACE_IGNORE", BRK_PACE_IGNORE) ||
	    add_int(m, "PACE_MAX_RESERVE_PCT", BRK_PACE_MAX_RESERVE_PCT) ||
	    add_int(m, "PACE_DEFAULT_BURST", BRK_PACE_DEFAULT_BURST) ||
	    add_int(m, "MODE_NORMAL", BRK_MODE_NORMAL) ||
	    add_int(m, "MODE_FORCED_OPEN", BRK_MODE_FORCED_OPEN) ||
	    add_int(m, "MODE_DISABLED", BRK_MODE_DISABLED) ||
	    add_int(m, "MODE_METRICS_ONLY", BRK_MODE_METRICS_ONLY) ||
	    add_int(m, "NAME_MAX", BRK_NAME_MAX) ||
	    add_int(m, "MAX_FAILURE_THRESHOLD", BRK_MAX_FAILURE_THRESHOLD) ||
	    add_int(m, "MAX_SUCCESS_THRESHOLD", BRK_MAX_SUCCESS_THRESHOLD) ||
	    add_int(m, "MAX_MIN_CALLS", BRK_MAX_MIN_CALLS) ||
	    add_int(m, "MAX_PROBES", BRK_MAX_PROBES) ||
	    add_int(m, "MAX_CONCURRENT", BRK_MAX_CONCURRENT) ||
	    add_int(m, "MAX_QUORUM", BRK_MAX_QUORUM) ||
	    add_int(m, "MAX_RESERVE_PCT", BRK_MAX_RESERVE_PCT) ||
	    PyModule_AddObject(m, "MAX_DURATION_MS",
			       PyLong_FromUnsignedLongLong(BRK_MAX_DURATION_MS)) ||
	    PyModule_AddStringConstant(m, "DEFAULT_SHM", BRK_DEFAULT_SHM)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
