/*
 * py_held.c - where `with br:` keeps its permit between __enter__ and
 * __exit__: a stack of (breaker, permit, frame) per context.
 *
 * The permit belongs to the running *context* (contextvars: each thread,
 * each asyncio task), never to the shared Breaker object, so threads and
 * tasks that interleave `with br:` / `async with br:` on one breaker each
 * leave with their own permit. A per-thread stack (Py_tss) would be
 * cheaper to find but wrong for asyncio: tasks A and B on one thread both
 * inside `with br: await ...` would leave with each other's permits.
 *
 * Cost: ContextVar.set() allocates (a new HAMT and a Token), twice per
 * block if the stack were an immutable tuple. So the value of the context
 * variable is a mutable stack object, set once per context and then changed
 * in place: push and pop cost no allocation and no set(). A context copied
 * from another one (asyncio.create_task(), copy_context(), to_thread())
 * inherits the variable's value: the stack records the context that set it
 * (`owner`, compared with the thread state's current context) and a copy
 * that finds a stack it does not own sets its own, empty one on its first
 * `with`. At most one live context has a given address and only it can be
 * running here, so no two contexts ever change one stack. (A context that
 * reuses the address of a dead owner adopts its stack: harmless, the dead
 * context's blocks are over, or abandoned and their permits still only
 * released once.)
 *
 * The frame: within one context, blocks of one breaker are not always
 * left in the reverse order of entering: a generator suspended inside
 * `with br:` may be finished by a caller that has meanwhile entered
 * `with br:` itself (the generator runs in its caller's context). So an
 * entry also records the Python frame that entered it (a generator's or
 * coroutine's frame is stable while it is suspended; a function's frame
 * lives until it returns); __exit__ takes the innermost entry of this
 * breaker entered by the same frame, and only if there is none (a wrapper
 * such as contextlib.ExitStack enters and leaves from different frames;
 * `async with`, whose __aenter__ is a frame of its own) the innermost entry
 * of this breaker.
 *
 * Allocation: a permit object whose block is over and that nobody else
 * refers to (`with br:` without `as`, the usual case) is kept as the
 * context's spare and reused by the next `with`: no Python object is made
 * per call. A spare holds no reference (its breaker is dropped), so it keeps
 * no segment mapped.
 *
 * Everything here runs with the GIL held; a stack is only ever changed by
 * the thread running its context.
 */
#include "py_core.h"

struct held_entry {
	PyObject *guard;      /* the Breaker (a strong reference) */
	PermitObject *permit; /* a strong reference */
	const void *frame;    /* identity only: the frame that entered, or NULL */
};

#define HELD_INLINE 4

struct brkpy_held {
	PyObject_HEAD
	const void *owner;    /* identity only: the context that set it */
	Py_ssize_t n, cap;
	struct held_entry *e; /* inl, or PyMem_Malloc()ed when deeper */
	PermitObject *spare;  /* a released permit nobody refers to, or NULL */
	struct held_entry inl[HELD_INLINE];
};

static PyObject *held_var; /* contextvars.ContextVar("breakerd_held") */

/* brkpy_held_get()'s cache (under the GIL): a borrowed stack */
static struct {
	uint64_t tsid, ver;
	brkpy_held *h;
} cache;

static void remember(PyThreadState *ts, brkpy_held *h)
{
	cache.tsid = ts->id;
	cache.ver = ts->context_ver;
	cache.h = h;
}

static void held_dealloc(brkpy_held *h)
{
	Py_ssize_t i;

	if (cache.h == h)
		cache.h = NULL;
	/* Blocks never left (a context dropped inside `with`): their permits
	 * are collected, i.e. released as cancelled with a ResourceWarning. */
	for (i = h->n - 1; i >= 0; i--) {
		Py_DECREF(h->e[i].guard);
		Py_DECREF(h->e[i].permit);
	}
	if (h->e != h->inl)
		PyMem_Free(h->e);
	Py_CLEAR(h->spare);
	Py_TYPE(h)->tp_free((PyObject *)h);
}

PyTypeObject brkpy_HeldType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "breakerd._core._Held",
	.tp_basicsize = sizeof(brkpy_held),
	.tp_dealloc = (destructor)held_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The permits of the open `with` blocks of one context (internal).",
};

int brkpy_held_init(void)
{
	held_var = PyContextVar_New("breakerd_held", NULL);
	return held_var ? 0 : -1;
}

/* The Python frame of thread @ts running the current C call, as an
 * identity (never dereferenced). 3.11 and 3.12: the interpreter frame, no
 * object made; otherwise the (public) frame object. */
const void *brkpy_frame_tag(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
	return ts->cframe ? (const void *)ts->cframe->current_frame : NULL;
#else
	(void)ts;
	return PyEval_GetFrame();
#endif
}

/* The current context's stack (a new reference) on thread @ts. If it has
 * none yet: a new one if @create, else NULL without an exception. NULL with
 * an exception on failure. The current context is the thread state's
 * (CPython's struct _ts field `context`, set by Context.run() and by
 * asyncio for each step of a task). */
brkpy_held *brkpy_held_get(PyThreadState *ts, int create)
{
	PyObject *v = NULL, *tok;
	brkpy_held *h;

	/* The last stack found, valid while the same thread has not entered or
	 * left a context since (CPython bumps context_ver on both; nothing but
	 * this file sets held_var): the context is the same, still current,
	 * so alive, and its value of held_var is still this stack. */
	if (cache.h && cache.tsid == ts->id && cache.ver == ts->context_ver) {
		Py_INCREF(cache.h);
		return cache.h;
	}
	if (PyContextVar_Get(held_var, NULL, &v) < 0)
		return NULL;
	if (v) {
		if (Py_IS_TYPE(v, &brkpy_HeldType) && ((brkpy_held *)v)->owner == ts->context) {
			remember(ts, (brkpy_held *)v);
			return (brkpy_held *)v;
		}
		Py_DECREF(v); /* a copied context's: not ours to change */
	}
	if (!create)
		return NULL;
	h = PyObject_New(brkpy_held, &brkpy_HeldType);
	if (!h)
		return NULL;
	h->n = 0;
	h->cap = HELD_INLINE;
	h->e = h->inl;
	h->spare = NULL;
	h->owner = NULL;
	tok = PyContextVar_Set(held_var, (PyObject *)h);
	if (!tok) {
		Py_DECREF(h);
		return NULL;
	}
	Py_DECREF(tok);
	h->owner = ts->context; /* set() made one if the thread had none */
	remember(ts, h);
	return h;
}

void brkpy_held_unref(brkpy_held *h)
{
	Py_DECREF(h);
}

/* A released permit of class @cls to reuse (a new reference), or NULL. */
PermitObject *brkpy_held_take_spare(brkpy_held *h, PyTypeObject *cls)
{
	PermitObject *p = h->spare;

	if (!p || !Py_IS_TYPE(p, cls))
		return NULL;
	h->spare = NULL;
	return p;
}

/* Give back @p (a reference the caller owns): kept as the spare if it is
 * released and nobody else refers to it, else dropped. */
void brkpy_held_recycle(brkpy_held *h, PermitObject *p)
{
	if (!h->spare && Py_REFCNT(p) == 1 && p->released) {
		Py_CLEAR(p->br);
		h->spare = p;
		return;
	}
	Py_DECREF(p);
}

/* Push (@guard, @p, @frame); takes a reference to @guard, takes over the
 * caller's reference to @p. -1 (MemoryError) if the stack cannot grow; then
 * @p is still the caller's. */
int brkpy_held_push(brkpy_held *h, PyObject *guard, PermitObject *p, const void *frame)
{
	struct held_entry *e;

	if (h->n == h->cap) {
		Py_ssize_t cap = h->cap * 2;

		if (h->e == h->inl) {
			e = PyMem_Malloc((size_t)cap * sizeof(*e));
			if (e)
				memcpy(e, h->inl, sizeof(h->inl));
		} else {
			e = PyMem_Realloc(h->e, (size_t)cap * sizeof(*e));
		}
		if (!e) {
			PyErr_NoMemory();
			return -1;
		}
		h->e = e;
		h->cap = cap;
	}
	e = &h->e[h->n++];
	Py_INCREF(guard);
	e->guard = guard;
	e->permit = p;
	e->frame = frame;
	return 0;
}

/* Remove and return (a reference now the caller's) the permit of the
 * innermost block of @guard entered by @frame, else (or if @frame is NULL)
 * of the innermost block of @guard. NULL (no exception) if there is none. */
PermitObject *brkpy_held_pop(brkpy_held *h, PyObject *guard, const void *frame)
{
	Py_ssize_t i = h->n - 1;
	PermitObject *p;

	if (i >= 0 && h->e[i].guard == guard && (!frame || h->e[i].frame == frame))
		goto found; /* the usual case: the top */
	for (i = h->n - 1; frame && i >= 0; i--)
		if (h->e[i].guard == guard && h->e[i].frame == frame)
			goto found;
	for (i = h->n - 1; i >= 0; i--)
		if (h->e[i].guard == guard)
			goto found;
	return NULL;
found:
	p = h->e[i].permit;
	guard = h->e[i].guard; /* the caller's own object: still referred to */
	if (i < h->n - 1)
		memmove(&h->e[i], &h->e[i + 1], (size_t)(h->n - i - 1) * sizeof(h->e[0]));
	h->n--;
	Py_DECREF(guard);
	return p;
}

/* _held() -> [(breaker, permit), ...]: the open blocks of the current
 * context, innermost last (for tests and debugging). */
PyObject *brkpy_held_list(PyObject *mod, PyObject *unused)
{
	brkpy_held *h;
	PyObject *l;
	Py_ssize_t i;

	(void)mod;
	(void)unused;
	h = brkpy_held_get(PyThreadState_Get(), 0);
	if (!h)
		return PyErr_Occurred() ? NULL : PyList_New(0);
	l = PyList_New(h->n);
	for (i = 0; l && i < h->n; i++) {
		PyObject *t = PyTuple_Pack(2, h->e[i].guard, (PyObject *)h->e[i].permit);

		if (!t) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, i, t);
	}
	Py_DECREF(h);
	return l;
}
