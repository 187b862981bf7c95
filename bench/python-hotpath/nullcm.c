/*
 * nullcm.c - the floor of the hot paths measured by hotpath.py: a C type
 * whose __enter__ (METH_NOARGS), __exit__ (METH_FASTCALL) and call(fn, ...)
 * (METH_FASTCALL | METH_KEYWORDS, vectorcalls fn) do nothing else: the
 * calling conventions of breakerd's _core.Guard, without the breaker.
 * Built by run.sh; benchmark only.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *nc_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

static PyObject *nc_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)self;
	(void)args;
	(void)nargs;
	Py_RETURN_FALSE;
}

static PyObject *nc_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
	Py_ssize_t n = PyVectorcall_NARGS(nargsf);

	(void)self;
	if (n < 1)
		return PyErr_Format(PyExc_TypeError, "call(fn, ...)");
	return PyObject_Vectorcall(args[0], args + 1, (size_t)(n - 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
				   kwnames);
}

static PyMethodDef nc_methods[] = {
	{ "__enter__", nc_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))nc_exit, METH_FASTCALL, NULL },
	{ "call", (PyCFunction)(void (*)(void))nc_call, METH_FASTCALL | METH_KEYWORDS, NULL },
	{ NULL, NULL, 0, NULL }
};

static PyTypeObject NullCMType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "_nullcm.NullCM",
	.tp_basicsize = sizeof(PyObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_methods = nc_methods,
	.tp_new = PyType_GenericNew,
};

static struct PyModuleDef nc_module = { PyModuleDef_HEAD_INIT, .m_name = "_nullcm", .m_size = -1 };

PyMODINIT_FUNC PyInit__nullcm(void)
{
	PyObject *m;

	if (PyType_Ready(&NullCMType) < 0)
		return NULL;
	m = PyModule_Create(&nc_module);
	if (m && PyModule_AddObjectRef(m, "NullCM", (PyObject *)&NullCMType) < 0)
		Py_CLEAR(m);
	return m;
}
