/*
 * py_bucket.c - Bucket: a GCRA rate limit.
 */
#include "py_core.h"

/* ---- Bucket ------------------------------------------------------------- */

static void bucket_dealloc(BucketObject *self)
{
	Py_CLEAR(self->seg);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Segment.bucket(name, rate, burst) */
PyObject *brkpy_segment_bucket(SegmentObject *self, PyObject *args)
{
	PyObject *nameo, *rateo, *bursto;
	const char *name;
	double rate;
	uint64_t burst;
	BucketObject *o;
	brk_bucket *k;
	int rc;

	if (!PyArg_ParseTuple(args, "OOO:bucket", &nameo, &rateo, &bursto))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	if (!(name = brkpy_get_name(nameo, "name")) || brkpy_get_rate(rateo, "rate", &rate) ||
	    brkpy_get_u64(bursto, "burst", BRK_BUCKET_MAX_BURST, &burst))
		return NULL;
	if (!(rate >= BRK_BUCKET_MIN_RATE && rate <= BRK_BUCKET_MAX_RATE))
		return brkpy_value_error("rate must be %g..%g tokens/s",
				    BRK_BUCKET_MIN_RATE, BRK_BUCKET_MAX_RATE);
	if (burst < 1)
		return PyErr_Format(PyExc_ValueError, "burst must be 1..%u",
				    BRK_BUCKET_MAX_BURST);
	o = (BucketObject *)brkpy_BucketType.tp_alloc(&brkpy_BucketType, 0);
	if (!o)
		return NULL;
	rc = self->readonly ? brk_bucket_find(self->seg, name, &k)
			    : brk_bucket_get(self->seg, name, rate, (uint32_t)burst, &k);
	if (rc) {
		Py_DECREF(o);
		return brkpy_set_error(rc, name, NULL);
	}
	Py_INCREF(self);
	o->seg = self;
	o->k = k;
	return (PyObject *)o;
}

/* _take(n) -> 0.0 if taken, else the jittered wait in seconds. */
static PyObject *bucket_take(BucketObject *self, PyObject *arg)
{
	uint64_t n, nb = 0, wake, now;
	int rc;

	if (brkpy_seg_check(self->seg))
		return NULL;
	if (brkpy_get_u64(arg, "n", UINT32_MAX, &n))
		return NULL;
	if (n == 0)
		return PyErr_Format(PyExc_ValueError, "n must be at least 1");
	rc = brk_bucket_take(self->k, (uint32_t)n, &nb);
	if (rc == 0)
		return PyFloat_FromDouble(0.0);
	if (rc == -BRK_ENOTOKENS) {
		wake = brk_bucket_wake_ns(self->k, nb);
		now = brk_now_ns(self->seg->seg);
		if (wake == UINT64_MAX)
			return PyFloat_FromDouble(Py_HUGE_VAL);
		return PyFloat_FromDouble(wake > now ? (double)(wake - now) / 1e9 : 1e-9);
	}
	if (rc == -EINVAL)
		return PyErr_Format(PyExc_ValueError, "n=%llu is more than the bucket's burst",
				    (unsigned long long)n);
	if (rc == -BRK_ECONTENDED)
		return brkpy_raise_refusal(brkpy_NoTokens_cls, 0.0, "contended", brk_bucket_name(self->k));
	return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
}

static PyObject *bucket_info(BucketObject *self, PyObject *unused)
{
	struct brk_bucket_info bi;
	int rc;

	(void)unused;
	if (brkpy_seg_check(self->seg))
		return NULL;
	rc = brk_bucket_info(self->k, &bi);
	if (rc)
		return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
	return brkpy_make_bucket_info(&bi);
}

static PyObject *bucket_configure(BucketObject *self, PyObject *args)
{
	PyObject *rateo, *bursto;
	double rate;
	uint64_t burst;
	int rc;

	if (!PyArg_ParseTuple(args, "OO:configure", &rateo, &bursto))
		return NULL;
	if (brkpy_seg_check(self->seg))
		return NULL;
	if (brkpy_get_rate(rateo, "rate", &rate) ||
	    brkpy_get_u64(bursto, "burst", BRK_BUCKET_MAX_BURST, &burst))
		return NULL;
	rc = brk_bucket_configure(self->k, rate, (uint32_t)burst);
	if (rc == -EINVAL)
		return brkpy_value_error("rate must be %g..%g, burst 1..%u",
				    BRK_BUCKET_MIN_RATE, BRK_BUCKET_MAX_RATE,
				    BRK_BUCKET_MAX_BURST);
	if (rc)
		return brkpy_set_error(rc, brk_bucket_name(self->k), NULL);
	Py_RETURN_NONE;
}

static PyObject *bucket_name(BucketObject *self, void *c)
{
	(void)c;
	if (brkpy_seg_check(self->seg))
		return NULL;
	return PyUnicode_FromString(brk_bucket_name(self->k));
}

static PyMethodDef bucket_methods[] = {
	{ "_take", (PyCFunction)bucket_take, METH_O, "_take(n) -> wait s (0.0: taken)." },
	{ "info", (PyCFunction)bucket_info, METH_NOARGS, "A snapshot as a dict." },
	{ "configure", (PyCFunction)bucket_configure, METH_VARARGS, "configure(rate, burst)." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef bucket_getset[] = {
	{ "name", (getter)bucket_name, NULL, "The bucket's name.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject brkpy_BucketType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Bucket",
	.tp_basicsize = sizeof(BucketObject),
	.tp_dealloc = (destructor)bucket_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A GCRA token bucket (brk_bucket).",
	.tp_methods = bucket_methods,
	.tp_getset = bucket_getset,
};
