/*
 * py_budget.c - Budget: a retry budget.
 */
#include "py_core.h"

/* ---- Budget ------------------------------------------------------------- */

static void budget_dealloc(BudgetObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *brkpy_segment_budget(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *flo, *rao;
	const char *name;
	double fl, ra;
	BudgetObject *o;
	brk_budget *g;
	int rc;

	if (!PyArg_ParseTuple(args, "OOO:budget", &nameo, &flo, &rao))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	if (!(name = brkpy_get_name(nameo, "name")) || brkpy_get_rate(flo, "floor", &fl) ||
	    brkpy_get_rate(rao, "ratio", &ra))
		return NULL;
	if (!(fl == 0 || (fl >= 0.001 && fl <= BRK_BUDGET_MAX_FLOOR)))
		return brkpy_value_error("floor must be 0 or 0.001..%g retries/s",
				    BRK_BUDGET_MAX_FLOOR);
	if (!(ra == 0 || (ra >= 0.001 && ra <= BRK_BUDGET_MAX_RATIO)))
		return brkpy_value_error("ratio must be 0 or 0.001..%g",
				    BRK_BUDGET_MAX_RATIO);
	o = (BudgetObject *)brkpy_BudgetType.tp_alloc(&brkpy_BudgetType, 0);
	if (!o)
		return NULL;
	rc = self->readonly ? brk_budget_find(self->seg, name, &g)
			    : brk_budget_get(self->seg, name, fl, ra, &g);
	if (rc) {
		Py_DECREF(o);
		return brkpy_set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->g = g;
	return (PyObject *)o;
}

static PyObject *budget_deposit(BudgetObject *self, PyObject *unused)
{
	int rc;

	(void)unused;
	if (brkpy_seg_check(self->seg))
		return NULL;
	rc = brk_budget_deposit(self->g);
	if (rc == 0 || rc == -BRK_ECONTENDED) /* a dropped deposit errs toward fewer retries */
		Py_RETURN_NONE;
	return brkpy_set_error(rc, brk_budget_name(self->g), NULL);
}

/* _retry() -> None if permitted, else raise RetryDeferred with an
 * estimate of when the floor next holds a token. */
static PyObject *budget_retry(BudgetObject *self, PyObject *unused)
{
	struct brk_budget_info gi;
	double wait = 0.0;
	int rc;

	(void)unused;
	if (brkpy_seg_check(self->seg))
		return NULL;
	rc = brk_retry_permitted(self->g);
	if (rc == 0)
		Py_RETURN_NONE;
	if (rc == -BRK_EDEFERRED || rc == -BRK_ECONTENDED) {
		if (brk_budget_info(self->g, &gi) == 0 && gi.floor_per_s > 0 &&
		    gi.floor_tokens < 1.0)
			wait = (1.0 - gi.floor_tokens) / gi.floor_per_s;
		return brkpy_raise_refusal(brkpy_RetryDeferred_cls, wait,
				     rc == -BRK_EDEFERRED ? "deferred" : "contended",
				     brk_budget_name(self->g));
	}
	return brkpy_set_error(rc, brk_budget_name(self->g), NULL);
}

static PyObject *budget_info(BudgetObject *self, PyObject *unused)
{
	struct brk_budget_info gi;
	int rc;

	(void)unused;
	if (brkpy_seg_check(self->seg))
		return NULL;
	rc = brk_budget_info(self->g, &gi);
	if (rc)
		return brkpy_set_error(rc, brk_budget_name(self->g), NULL);
	return brkpy_make_budget_info(&gi);
}

static PyObject *budget_configure(BudgetObject *self, PyObject *args)
{
	PyObject *flo, *rao;
	double fl, ra;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:configure", &flo, &rao))
		return NULL;
	if (brkpy_seg_check(self->seg))
		return NULL;
	if (brkpy_get_rate(flo, "floor", &fl) || brkpy_get_rate(rao, "ratio", &ra))
		return NULL;
	rc = brk_budget_configure(self->g, fl, ra);
	if (rc == -EINVAL)
		return brkpy_value_error("floor must be 0 or 0.001..%g, ratio 0 or 0.001..%g",
				    BRK_BUDGET_MAX_FLOOR, BRK_BUDGET_MAX_RATIO);
	if (rc)
		return brkpy_set_error(rc, brk_budget_name(self->g), NULL);
	Py_RETURN_NONE;
}

static PyObject *budget_name(BudgetObject *self, void *c)
{
	(void)c;
	if (brkpy_seg_check(self->seg))
		return NULL;
	return PyUnicode_FromString(brk_budget_name(self->g));
}

static PyMethodDef budget_methods[] = {
	{ "deposit", (PyCFunction)budget_deposit, METH_NOARGS, "Record one first attempt." },
	{ "retry", (PyCFunction)budget_retry, METH_NOARGS,
	  "Take one retry token, or raise RetryDeferred." },
	{ "info", (PyCFunction)budget_info, METH_NOARGS, "A snapshot as a dict." },
	{ "configure", (PyCFunction)budget_configure, METH_VARARGS, "configure(floor, ratio)." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef budget_getset[] = {
	{ "name", (getter)budget_name, NULL, "The budget's name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject brkpy_BudgetType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Budget",
	.tp_basicsize = sizeof(BudgetObject),
	.tp_dealloc = (destructor)budget_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A retry budget (brk_budget).",
	.tp_methods = budget_methods,
	.tp_getset = budget_getset,
};
