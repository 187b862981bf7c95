/*
 * py_guard.c - _core.Guard, the C base of breakerd.Breaker: the hot paths
 * `with br:` (__enter__/__exit__), `async with br:` (_aenter/_aexit, called
 * by the Python coroutines), br.call(fn, ...) and br.acquire().
 *
 * The common case is all C and makes no Python object: __enter__ acquires
 * into a reused permit object and pushes it on the context's stack
 * (py_held.c); __exit__ without an exception pops it and reports success.
 * Only a block left by an exception calls into Python: the Breaker's
 * _exit_error(permit, exc) classifies it (failure=/exclude=/ignore=).
 * call() needs no stack at all: the permit lives in its C frame.
 *
 * The GIL stays held throughout (see py_module.c).
 */
#include "py_core.h"

static PyObject *str_exit_error, *str_call_slow;

static int guard_ready(GuardObject *self)
{
	if (!self->core || !self->permit_cls) {
		PyErr_SetString(PyExc_TypeError, "breakerd: Breaker.__init__ was not called");
		return -1;
	}
	return brkpy_seg_check(self->core->seg);
}

static void guard_dealloc(GuardObject *self)
{
	Py_CLEAR(self->core);
	Py_CLEAR(self->permit_cls);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Guard(core, permit_class) */
static int guard_init(GuardObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "core", "permit_class", NULL };
	PyObject *core, *cls;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!:Guard", kwlist, &brkpy_BreakerType,
					 &core, &PyType_Type, &cls))
		return -1;
	if (!PyType_IsSubtype((PyTypeObject *)cls, &brkpy_PermitType)) {
		PyErr_SetString(PyExc_TypeError, "permit_class must be a Permit subclass");
		return -1;
	}
	Py_INCREF(core);
	Py_XSETREF(self->core, (BreakerObject *)core);
	Py_INCREF(cls);
	Py_XSETREF(self->permit_cls, (PyTypeObject *)cls);
	return 0;
}

/* Acquire and push; the permit (a new reference) for `as`. */
static PyObject *guard_enter_at(GuardObject *self, PyThreadState *ts, const void *frame)
{
	struct brk_refusal why;
	brkpy_held *h;
	PermitObject *p;
	int rc;

	if (guard_ready(self))
		return NULL;
	h = brkpy_held_get(ts, 1);
	if (!h)
		return NULL;
	p = brkpy_held_take_spare(h, self->permit_cls);
	if (!p) {
		/* allocated before the acquire: no Python error may come
		 * between an admitted acquire and its permit object */
		p = (PermitObject *)self->permit_cls->tp_alloc(self->permit_cls, 0);
		if (!p) {
			brkpy_held_unref(h);
			return NULL;
		}
	}
	why.by[0] = '\0';
	rc = brkpy_permit_fill(p, self->core, &why);
	if (rc) {
		brkpy_held_recycle(h, p);
		brkpy_held_unref(h);
		return brkpy_raise_acquire(self->core, rc, &why);
	}
	if (brkpy_held_push(h, (PyObject *)self, p, frame)) {
		p->released = 1;
		p->counted = brk_release(&p->p, BRK_CANCELLED, BRK_REASON_NONE, 0) == 0;
		Py_DECREF(p);
		brkpy_held_unref(h);
		return NULL;
	}
	Py_INCREF(p);
	brkpy_held_unref(h);
	return (PyObject *)p;
}

/* Pop this breaker's permit and report it: success if @exc is None (unless
 * the block reported it), else as the Python classifier says. */
static PyObject *guard_exit_at(GuardObject *self, PyObject *exc, PyThreadState *ts,
			      const void *frame)
{
	brkpy_held *h;
	PermitObject *p;
	PyObject *r;

	if (!self->core || !self->permit_cls) {
		guard_ready(self); /* sets the TypeError */
		return NULL;
	}
	h = brkpy_held_get(ts, 0);
	if (!h && PyErr_Occurred())
		return NULL;
	p = h ? brkpy_held_pop(h, (PyObject *)self, frame) : NULL;
	if (!p) {
		if (h)
			brkpy_held_unref(h);
		return PyErr_Format(PyExc_RuntimeError,
				    "breakerd: leaving `with %s` that this context did not enter",
				    self->core->seg->seg ? brk_breaker_name(self->core->b) : "breaker");
	}
	if (exc == Py_None) {
		r = p->released ? Py_NewRef(Py_False)
				: brkpy_permit_release(p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	} else {
		r = PyObject_CallMethodObjArgs((PyObject *)self, str_exit_error, (PyObject *)p, exc,
					       NULL);
	}
	brkpy_held_recycle(h, p);
	brkpy_held_unref(h);
	if (!r)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

static PyObject *guard_enter(GuardObject *self, PyObject *unused)
{
	PyThreadState *ts = PyThreadState_Get();

	(void)unused;
	return guard_enter_at(self, ts, brkpy_frame_tag(ts));
}

static PyObject *guard_exit(GuardObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyThreadState *ts = PyThreadState_Get();

	if (nargs != 3)
		return PyErr_Format(PyExc_TypeError, "__exit__ takes 3 arguments (%zd given)", nargs);
	return guard_exit_at(self, args[1], ts, brkpy_frame_tag(ts));
}

/* For `async with`: __aenter__/__aexit__ are coroutines of their own, so
 * their frames say nothing: innermost block of this breaker in the task. */
static PyObject *guard_aenter(GuardObject *self, PyObject *unused)
{
	(void)unused;
	return guard_enter_at(self, PyThreadState_Get(), NULL);
}

static PyObject *guard_aexit(GuardObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	if (nargs != 3)
		return PyErr_Format(PyExc_TypeError, "_aexit takes 3 arguments (%zd given)", nargs);
	return guard_exit_at(self, args[1], PyThreadState_Get(), NULL);
}

/* A function whose call runs it to the end: a plain Python function (or a
 * method of one) that is no coroutine or generator function, or a builtin.
 * Anything else goes the Python way (Breaker._call_slow). */
static int plain_sync(PyObject *fn)
{
	if (PyMethod_Check(fn))
		fn = PyMethod_GET_FUNCTION(fn);
	if (PyFunction_Check(fn)) {
		PyCodeObject *co = (PyCodeObject *)PyFunction_GET_CODE(fn);

		return !(co->co_flags & (CO_COROUTINE | CO_GENERATOR | CO_ASYNC_GENERATOR |
					 CO_ITERABLE_COROUTINE));
	}
	return PyCFunction_Check(fn);
}

/* fn's exception left a call() admitted with @bp: classify it in Python.
 * The exception is still set on entry and on return (or replaced by the
 * classifier's own, chained to it). */
static void call_failed(GuardObject *self, const brk_permit *bp, pid_t pid)
{
	PyObject *et, *ev, *tb, *r;
	PermitObject *p;

	PyErr_Fetch(&et, &ev, &tb);
	PyErr_NormalizeException(&et, &ev, &tb);
	if (tb)
		PyException_SetTraceback(ev, tb);
	p = (PermitObject *)self->permit_cls->tp_alloc(self->permit_cls, 0);
	if (!p) {
		brk_permit c = *bp;

		brk_release(&c, BRK_CANCELLED, BRK_REASON_NONE, 0);
		Py_XDECREF(et);
		Py_XDECREF(ev);
		Py_XDECREF(tb);
		return; /* MemoryError set */
	}
	p->p = *bp;
	Py_INCREF(self->core);
	p->br = self->core;
	p->pid = pid;
	p->released = 0;
	p->counted = -1;
	r = PyObject_CallMethodObjArgs((PyObject *)self, str_exit_error, (PyObject *)p, ev, NULL);
	if (!r && !p->released) { /* _exit_error itself failed early */
		p->released = 1;
		p->counted = brk_release(&p->p, BRK_CANCELLED, BRK_REASON_NONE, 0) == 0;
	}
	Py_DECREF(p);
	if (r) {
		Py_DECREF(r);
		PyErr_Restore(et, ev, tb);
		return;
	}
	{ /* the classifier's exception, with fn's as its __context__ */
		PyObject *et2, *ev2, *tb2;

		PyErr_Fetch(&et2, &ev2, &tb2);
		PyErr_NormalizeException(&et2, &ev2, &tb2);
		if (ev2 && ev2 != ev)
			PyException_SetContext(ev2, ev); /* steals ev */
		else
			Py_XDECREF(ev);
		Py_XDECREF(et);
		Py_XDECREF(tb);
		PyErr_Restore(et2, ev2, tb2);
	}
}

/* call(fn, *args, **kwargs): fn(*args, **kwargs) under a permit. */
static PyObject *guard_call(GuardObject *self, PyObject *const *args, size_t nargsf,
			    PyObject *kwnames)
{
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	struct brk_refusal why;
	brk_permit bp;
	pid_t pid;
	PyObject *fn, *r;
	int rc;

	if (nargs < 1)
		return PyErr_Format(PyExc_TypeError, "call() needs the function to call");
	fn = args[0];
	if (!plain_sync(fn)) {
		PyObject *slow = PyObject_GetAttr((PyObject *)self, str_call_slow);

		if (!slow)
			return NULL;
		r = PyObject_Vectorcall(slow, args, (size_t)nargs, kwnames);
		Py_DECREF(slow);
		return r;
	}
	if (guard_ready(self))
		return NULL;
	why.by[0] = '\0';
	rc = brkpy_acquire(self->core, &bp, &why);
	if (rc)
		return brkpy_raise_acquire(self->core, rc, &why);
	pid = brkpy_self_pid;
	r = PyObject_Vectorcall(fn, args + 1, (size_t)(nargs - 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
				kwnames);
	if (!r) {
		if (self->core->seg->seg)
			call_failed(self, &bp, pid);
		return NULL;
	}
	if (brkpy_seg_check(self->core->seg)) {
		Py_DECREF(r);
		return NULL;
	}
	rc = brk_release(&bp, BRK_SUCCESS, BRK_REASON_NONE, 0);
	if (rc && rc != -BRK_ESTALE && rc != -BRK_ECONTENDED) {
		Py_DECREF(r);
		return brkpy_set_error(rc, brk_breaker_name(self->core->b), NULL);
	}
	return r;
}

/* acquire() -> a permit_class object, or raise a Refused subclass. */
static PyObject *guard_acquire(GuardObject *self, PyObject *unused)
{
	struct brk_refusal why;
	PermitObject *p;
	int rc;

	(void)unused;
	if (guard_ready(self))
		return NULL;
	/* allocated first: no Python error may come between an admitted
	 * acquire and the object that releases it */
	p = (PermitObject *)self->permit_cls->tp_alloc(self->permit_cls, 0);
	if (!p)
		return NULL;
	why.by[0] = '\0';
	rc = brkpy_permit_fill(p, self->core, &why);
	if (rc == 0)
		return (PyObject *)p;
	Py_DECREF(p);
	return brkpy_raise_acquire(self->core, rc, &why);
}

static PyObject *guard_get_core(GuardObject *self, void *c)
{
	(void)c;
	if (!self->core)
		Py_RETURN_NONE;
	return Py_NewRef((PyObject *)self->core);
}

static PyMethodDef guard_methods[] = {
	{ "__enter__", (PyCFunction)guard_enter, METH_NOARGS,
	  "Acquire a permit (or raise a Refused subclass) and return it." },
	{ "__exit__", (PyCFunction)(void (*)(void))guard_exit, METH_FASTCALL,
	  "Report the block's permit: success, or as the exception is classified." },
	{ "acquire", (PyCFunction)guard_acquire, METH_NOARGS,
	  "acquire() -> Permit, or raise a Refused subclass." },
	{ "_aenter", (PyCFunction)guard_aenter, METH_NOARGS, "__enter__ for async with." },
	{ "_aexit", (PyCFunction)(void (*)(void))guard_aexit, METH_FASTCALL,
	  "__exit__ for async with." },
	{ "call", (PyCFunction)(void (*)(void))guard_call, METH_FASTCALL | METH_KEYWORDS,
	  "call(fn, *args, **kwargs): fn(*args, **kwargs) under a permit; for a\n"
	  "coroutine function, the coroutine to await." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef guard_getset[] = {
	{ "_b", (getter)guard_get_core, NULL, "The _core.Breaker.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

int brkpy_guard_init(void)
{
	str_exit_error = PyUnicode_InternFromString("_exit_error");
	str_call_slow = PyUnicode_InternFromString("_call_slow");
	return str_exit_error && str_call_slow ? 0 : -1;
}

PyTypeObject brkpy_GuardType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Guard",
	.tp_basicsize = sizeof(GuardObject),
	.tp_dealloc = (destructor)guard_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "The C base of breakerd.Breaker: with, async with and call().",
	.tp_methods = guard_methods,
	.tp_getset = guard_getset,
	.tp_init = (initproc)guard_init,
	.tp_new = PyType_GenericNew,
};

