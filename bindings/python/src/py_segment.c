/*
 * py_segment.c - Segment: attach, close, header info, records and events.
 */
#include "py_core.h"

/* ---- Segment ------------------------------------------------------------ */

int brkpy_seg_check(SegmentObject *s)
{
	if (!s->seg) {
		PyErr_SetString(PyExc_ValueError, "the segment is closed");
		return -1;
	}
	return 0;
}

static void segment_dealloc(SegmentObject *self)
{
	if (self->seg)
		brk_detach(self->seg);
	self->seg = NULL;
	Py_CLEAR(self->clock);
	Py_CLEAR(self->shm);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* attach(shm=None, capacity=0, readonly=False, clock=None) */
PyObject *brkpy_attach(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "shm", "capacity", "readonly", "clock", NULL };
	PyObject *shm = Py_None, *cap = NULL, *clock = Py_None;
	int readonly = 0, rc;
	uint64_t capacity = 0;
	struct brk_attach_opts o;
	const char *name = NULL;
	char errbuf[512] = "";
	brk_segment *seg = NULL;
	SegmentObject *self;

	(void)mod;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOpO:attach", kwlist, &shm, &cap,
					 &readonly, &clock))
		return NULL;
	if (shm != Py_None) {
		if (!PyUnicode_Check(shm))
			return PyErr_Format(PyExc_TypeError, "shm must be a str or None, not %.100s",
					    Py_TYPE(shm)->tp_name);
		Py_ssize_t len;

		name = PyUnicode_AsUTF8AndSize(shm, &len);
		if (!name)
			return NULL;
		if ((size_t)len != strlen(name))
			return PyErr_Format(PyExc_ValueError, "shm must not contain NUL");
	}
	if (cap && cap != Py_None) {
		if (brkpy_get_u64(cap, "capacity", BRK_MAX_CAPACITY, &capacity))
			return NULL;
		if (capacity == 0)
			return PyErr_Format(PyExc_ValueError, "capacity must be 1..%u",
					    BRK_MAX_CAPACITY);
	}
	if (clock != Py_None && !PyObject_TypeCheck(clock, &brkpy_FakeClockType))
		return PyErr_Format(PyExc_TypeError,
				    "clock must be a breakerd.testing.FakeClock or None, not %.100s",
				    Py_TYPE(clock)->tp_name);
	self = (SegmentObject *)brkpy_SegmentType.tp_alloc(&brkpy_SegmentType, 0);
	if (!self)
		return NULL;
	name = brk_resolve_shm_name(name);
	self->shm = PyUnicode_FromString(name);
	if (!self->shm) {
		Py_DECREF(self);
		return NULL;
	}
	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.capacity = (uint32_t)capacity;
	o.flags = readonly ? BRK_ATTACH_READONLY : 0;
	o.errbuf = errbuf;
	o.errbuf_len = sizeof(errbuf);
	if (clock != Py_None) {
		o.clock = brkpy_fake_clock_read;
		o.clock_ctx = &((FakeClockObject *)clock)->now_ns;
	}
	/* May wait up to init_wait_ms for a creator: let other threads run. */
	Py_BEGIN_ALLOW_THREADS
	rc = brk_attach(&o, &seg);
	Py_END_ALLOW_THREADS
	if (rc) {
		Py_DECREF(self);
		if (rc == -EINVAL)
			return PyErr_Format(PyExc_ValueError, "shm: %s",
					    errbuf[0] ? errbuf : brk_strerror(rc));
		return brkpy_raise_error(rc, name, errbuf);
	}
	self->seg = seg;
	self->readonly = readonly;
	if (clock != Py_None) {
		Py_INCREF(clock);
		self->clock = clock;
	}
	return (PyObject *)self;
}

static PyObject *segment_close(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	if (self->busy)
		return PyErr_Format(PyExc_RuntimeError,
				    "the segment is in use by %d admit() or event wait "
				    "call(s) sleeping in other threads", self->busy);
	/* Handles of breakers from this segment now refuse every call
	 * (brkpy_seg_check) before they touch the unmapped memory. */
	if (self->seg)
		brk_detach(self->seg);
	self->seg = NULL;
	Py_RETURN_NONE;
}

/* ---- Segment methods ---------------------------------------------------- */

static PyObject *segment_info(SegmentObject *self, PyObject *unused)
{
	struct brk_segment_info si;
	PyObject *d, *hb;

	(void)unused;
	if (brkpy_seg_check(self))
		return NULL;
	brk_segment_info(self->seg, &si);
	if (si.heartbeat_age_ms == UINT64_MAX) {
		hb = Py_None;
		Py_INCREF(hb);
	} else {
		hb = PyLong_FromUnsignedLongLong(si.heartbeat_age_ms);
	}
	if (!hb)
		return NULL;
	d = Py_BuildValue("{s:s,s:I,s:I,s:I,s:I,s:K,s:K,s:i,s:i,s:N,s:K,s:K,s:O,"
			  "s:K,s:K,s:I}",
			  "shm", si.shm_name, "layout_version", si.layout_version,
			  "capacity", si.capacity, "used", si.used,
			  "record_size", si.record_size,
			  "total_size", (unsigned long long)si.total_size,
			  "created_wall_ms", (unsigned long long)si.created_wall_ms,
			  "creator_pid", (int)si.creator_pid, "daemon_pid", (int)si.daemon_pid,
			  "heartbeat_age_ms", hb,
			  "daemon_interval_ms", (unsigned long long)si.daemon_interval_ms,
			  "events_written", (unsigned long long)si.events_written,
			  "readonly", si.readonly ? Py_True : Py_False,
			  "arena_bytes", (unsigned long long)si.arena_bytes,
			  "arena_used_bytes", (unsigned long long)si.arena_used_bytes,
			  "unit_bytes", si.unit_bytes);
	return d;
}

static PyObject *segment_record_count(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	if (brkpy_seg_check(self))
		return NULL;
	return PyLong_FromUnsignedLong(brk_record_count(self->seg));
}

/* retire(name, idle_ms) -> True retired, False kept (busy: a lease held,
 * not closed, or active within idle_ms). brk_retire(). */
static PyObject *segment_retire(SegmentObject *self, PyObject *args)
{
	unsigned long long idle_ms;
	const char *name;
	int rc;

	if (!PyArg_ParseTuple(args, "sK", &name, &idle_ms))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = brk_retire(self->seg, name, (uint64_t)idle_ms);
	Py_END_ALLOW_THREADS
	if (rc == -EBUSY)
		Py_RETURN_FALSE;
	if (rc == -ENOENT)
		return PyErr_Format(PyExc_LookupError, "%s: no such record", name);
	if (rc)
		return brkpy_set_error(rc, name, NULL);
	Py_RETURN_TRUE;
}

/* retire_idle(idle_ms) -> records retired by one pass over the whole
 * index (brk_retire_idle()). A record is retired once a pass has seen it
 * unchanged for idle_ms: the first pass over a record only notes it. */
static PyObject *segment_retire_idle(SegmentObject *self, PyObject *arg)
{
	unsigned long long idle_ms = PyLong_AsUnsignedLongLong(arg);
	struct brk_retire_stats st;
	int rc;

	if (PyErr_Occurred())
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	memset(&st, 0, sizeof(st));
	Py_BEGIN_ALLOW_THREADS
	rc = brk_retire_idle(self->seg, (uint64_t)idle_ms, 0, &st);
	Py_END_ALLOW_THREADS
	if (rc < 0) /* else the number retired */
		return brkpy_set_error(rc, "retire_idle", NULL);
	return PyLong_FromUnsignedLong(st.retired);
}

/* records() -> list of info dicts of every published record. */
static PyObject *segment_records(SegmentObject *self, PyObject *unused)
{
	struct brk_info *in;
	PyObject *l, *d;
	uint64_t cur;
	int rc;

	(void)unused;
	if (brkpy_seg_check(self))
		return NULL;
	in = PyMem_Malloc(sizeof(*in));
	if (!in)
		return PyErr_NoMemory();
	l = PyList_New(0);
	/* the name index in order (brk_record_next()) */
	for (cur = 0; l;) {
		rc = brk_record_next(self->seg, &cur, in);
		if (rc == -ENOENT)
			break;
		if (rc) {
			Py_CLEAR(l);
			brkpy_set_error(rc, "record", NULL);
			break;
		}
		if (in->kind == BRK_KIND_BUCKET) {
			memcpy(in->bucket.name, in->name, sizeof(in->name));
			d = brkpy_make_bucket_info(&in->bucket);
		} else if (in->kind == BRK_KIND_BUDGET) {
			memcpy(in->budget.name, in->name, sizeof(in->name));
			d = brkpy_make_budget_info(&in->budget);
		}
		else
			d = brkpy_make_info(in);
		if (!d || PyList_Append(l, d))
			Py_CLEAR(l);
		Py_XDECREF(d);
	}
	PyMem_Free(in);
	return l;
}

static PyObject *segment_now_ns(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	if (brkpy_seg_check(self))
		return NULL;
	return PyLong_FromUnsignedLongLong(brk_now_ns(self->seg));
}

static PyObject *make_event(const struct brk_event *e)
{
	PyObject *d = PyDict_New();
	/* the fleet link's own event: from/to are link states */
	const char *(*st)(int) = e->reason == BRK_EV_FLEET_LINK ? brk_fleet_state_name
								  : brk_state_name;

	if (!d)
		return NULL;
	if (PUTU(d, "seq", e->seq) || PUTU(d, "wall_ms", e->wall_ms) ||
	    PUTU(d, "mono_ns", e->mono_ns) || PUTS(d, "name", e->name) ||
	    PUTS(d, "from", st(e->from)) || PUTS(d, "to", st(e->to)) ||
	    /* "": this host's decision; else the fleet peer's host id whose
	     * decision breakerd applied ("?": its peer slot was reused) */
	    PUTS(d, "origin", e->origin) ||
	    PUTS(d, "reason", brk_event_reason_name(e->reason)) || PUTI(d, "pid", e->pid) ||
	    PUTU(d, "value", e->value) ||
	    (e->reason == BRK_EV_FORCED &&
	     PUTS(d, "mode", brk_mode_name((int)(e->value > 255 ? 255 : e->value))))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* events(cursor) -> (list, next_cursor, lost) */
static PyObject *segment_events(SegmentObject *self, PyObject *arg)
{
	enum { BATCH = 256 };
	struct brk_event *buf;
	uint64_t cursor, lost = 0, l;
	PyObject *list, *e;
	int n, i;

	if (brkpy_seg_check(self))
		return NULL;
	if (brkpy_get_u64(arg, "cursor", UINT64_MAX, &cursor))
		return NULL;
	buf = PyMem_Malloc(sizeof(*buf) * BATCH);
	if (!buf)
		return PyErr_NoMemory();
	list = PyList_New(0);
	while (list) {
		l = 0;
		n = brk_events_read(self->seg, &cursor, buf, BATCH, &l);
		lost += l;
		for (i = 0; i < n && list; i++) {
			e = make_event(&buf[i]);
			if (!e || PyList_Append(list, e))
				Py_CLEAR(list);
			Py_XDECREF(e);
		}
		if (n < BATCH)
			break;
	}
	PyMem_Free(buf);
	if (!list)
		return NULL;
	return Py_BuildValue("NKK", list, (unsigned long long)cursor,
			     (unsigned long long)lost);
}

/* _events_wait(cursor, name or None, timeout_ms) -> (rc, cursor):
 * brk_events_wait() without the GIL (the listener thread's sleep). rc 1:
 * an event is at cursor; 0: timed out or kicked; a signal (EINTR) runs
 * its Python handler in this thread's next bytecode and returns 0. */
static PyObject *segment_events_wait(SegmentObject *self, PyObject *args)
{
	unsigned long long cur;
	long long timeout;
	PyObject *nameo;
	const char *name = NULL;
	uint64_t cursor;
	int rc;

	if (!PyArg_ParseTuple(args, "KOL:_events_wait", &cur, &nameo, &timeout))
		return NULL;
	if (brkpy_seg_check(self))
		return NULL;
	if (nameo != Py_None) {
		name = brkpy_get_name(nameo, "name");
		if (!name)
			return NULL;
	}
	cursor = cur;
	self->busy++;
	Py_BEGIN_ALLOW_THREADS
	rc = brk_events_wait(self->seg, &cursor, name, (int64_t)timeout);
	Py_END_ALLOW_THREADS
	self->busy--;
	if (rc == -EINTR)
		rc = 0;
	if (rc < 0)
		return brkpy_set_error(rc, name ? name : "events", NULL);
	return Py_BuildValue("iK", rc, (unsigned long long)cursor);
}

static PyObject *segment_events_kick(SegmentObject *self, PyObject *unused)
{
	int rc;

	(void)unused;
	if (brkpy_seg_check(self))
		return NULL;
	rc = brk_events_kick(self->seg);
	if (rc)
		return brkpy_set_error(rc, "events", NULL);
	Py_RETURN_NONE;
}

static PyObject *segment_events_waiters(SegmentObject *self, PyObject *unused)
{
	(void)unused;
	if (brkpy_seg_check(self))
		return NULL;
	return PyLong_FromUnsignedLongLong(brk_events_waiters(self->seg));
}

/* ---- Segment type ------------------------------------------------------- */

static PyObject *segment_get_closed(SegmentObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->seg == NULL);
}

static PyObject *segment_get_shm(SegmentObject *self, void *c)
{
	(void)c;
	Py_INCREF(self->shm);
	return self->shm;
}

static PyObject *segment_get_readonly(SegmentObject *self, void *c)
{
	(void)c;
	return PyBool_FromLong(self->readonly);
}

static PyMethodDef segment_methods[] = {
	{ "close", (PyCFunction)segment_close, METH_NOARGS, "Detach (brk_detach)." },
	{ "breaker", (PyCFunction)brkpy_segment_breaker, METH_VARARGS,
	  "breaker(name, settings=None) -> Breaker." },
	{ "bucket", (PyCFunction)brkpy_segment_bucket, METH_VARARGS,
	  "bucket(name, rate, burst) -> Bucket." },
	{ "pace", (PyCFunction)brkpy_segment_pace, METH_VARARGS,
	  "pace(name, ceiling, floor, burst, reserve_pct) -> Pace (get or create)." },
	{ "_admit", (PyCFunction)brkpy_segment_admit, METH_VARARGS,
	  "_admit(breaker, pace, budget, attempt, priority, deadline_ns, max_wait_ms) -> Admission." },
	{ "health", (PyCFunction)brkpy_segment_health, METH_O,
	  "health(name) -> dict (brk_health)." },
	{ "set_fallback", (PyCFunction)brkpy_segment_set_fallback, METH_VARARGS,
	  "set_fallback(name, on) -> True if changed." },
	{ "budget", (PyCFunction)brkpy_segment_budget, METH_VARARGS,
	  "budget(name, floor, ratio) -> Budget." },
	{ "_events_wait", (PyCFunction)segment_events_wait, METH_VARARGS,
	  "_events_wait(cursor, name, timeout_ms) -> (rc, cursor): brk_events_wait()." },
	{ "_events_kick", (PyCFunction)segment_events_kick, METH_NOARGS,
	  "brk_events_kick(): wake every waiter of the segment." },
	{ "events_waiters", (PyCFunction)segment_events_waiters, METH_NOARGS,
	  "brk_events_waiters(): callers blocked in brk_events_wait() host-wide." },
	{ "events", (PyCFunction)segment_events, METH_O,
	  "events(cursor) -> (list, next_cursor, lost)." },
	{ "info", (PyCFunction)segment_info, METH_NOARGS, "The segment header as a dict." },
	{ "record_count", (PyCFunction)segment_record_count, METH_NOARGS,
	  "Live records (published, not retired)." },
	{ "records", (PyCFunction)segment_records, METH_NOARGS,
	  "Info dicts of every record." },
	{ "retire", (PyCFunction)segment_retire, METH_VARARGS,
	  "retire(name, idle_ms) -> True retired, False kept (brk_retire)." },
	{ "retire_idle", (PyCFunction)segment_retire_idle, METH_O,
	  "retire_idle(idle_ms) -> records retired by one pass (brk_retire_idle)." },
	{ "now_ns", (PyCFunction)segment_now_ns, METH_NOARGS, "The handle's clock, ns." },
	{ NULL, NULL, 0, NULL }
};

static PyGetSetDef segment_getset[] = {
	{ "closed", (getter)segment_get_closed, NULL, "True after close().", NULL },
	{ "shm", (getter)segment_get_shm, NULL, "The shm name.", NULL },
	{ "readonly", (getter)segment_get_readonly, NULL, "Attached read-only.", NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

PyTypeObject brkpy_SegmentType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core.Segment",
	.tp_basicsize = sizeof(SegmentObject),
	.tp_dealloc = (destructor)segment_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An attached segment (brk_segment).",
	.tp_methods = segment_methods,
	.tp_getset = segment_getset,
};
