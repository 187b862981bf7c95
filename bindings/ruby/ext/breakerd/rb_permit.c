/*
 * rb_permit.c - Breakerd::Permit: one admitted call, released exactly once.
 *
 * Fork: a permit belongs to the process that was admitted (the library's
 * lease owner). A child fork()ed while it was out (Puma's preload_app!,
 * Process.fork) holds a copy of the object: releasing it there returns
 * false and changes nothing (checked here against the pid that
 * pthread_atfork refreshes, and again by the library), and collecting it
 * there releases nothing, so the parent's lease is never touched by a
 * child. A permit collected unreleased in its own process is released
 * as cancelled (no verdict), so a lost permit never holds a probe slot or
 * a bulkhead permit until probe_timeout.
 */
#include "rb_core.h"

VALUE rbk_cPermit;

struct rbk_permit {
	struct rbk_seg *s;
	brk_permit p;
	VALUE breaker;
	pid_t pid;       /* the process admitted */
	int released;    /* 0 out, 1 released */
	int counted;     /* brk_release() returned 0 */
};

static void permit_mark(void *p)
{
	rb_gc_mark(((struct rbk_permit *)p)->breaker);
}

static void permit_free(void *p)
{
	struct rbk_permit *x = p;

	if (!x->released && x->pid == rbk_pid && x->s && x->s->seg)
		brk_release(&x->p, BRK_CANCELLED, BRK_REASON_NONE, 0);
	rbk_seg_unref(x->s);
	xfree(x);
}

static const rb_data_type_t permit_type = {
	"Breakerd::Permit",
	{ permit_mark, permit_free, NULL, NULL, { 0 } },
	0, 0, RUBY_TYPED_FREE_IMMEDIATELY,
};

VALUE rbk_permit_new(VALUE breaker, struct rbk_seg *s, const brk_permit *p)
{
	struct rbk_permit *x;
	VALUE obj = TypedData_Make_Struct(rbk_cPermit, struct rbk_permit, &permit_type, x);

	x->s = rbk_seg_ref(s);
	x->p = *p;
	x->breaker = breaker;
	x->pid = rbk_pid;
	return obj;
}

/* _release(outcome, reason, retry_after_ms) -> true if the library counted
 * it; false if not (released before, inherited from a fork()ed parent, the
 * lease reclaimed, the breaker reset or in a newer generation). */
static VALUE permit_release(VALUE self, VALUE o, VALUE r, VALUE ms)
{
	struct rbk_permit *x = rb_check_typeddata(self, &permit_type);
	int outcome = NUM2INT(o), reason = NUM2INT(r), rc;
	int64_t ra = NUM2LL(ms);

	if (x->released || x->pid != rbk_pid)
		return Qfalse;
	rbk_seg_get(x->s);
	x->released = 1;
	rc = brk_release(&x->p, outcome, reason, ra);
	if (rc == 0) {
		x->counted = 1;
		return Qtrue;
	}
	if (rc == -BRK_ESTALE || rc == -BRK_ECONTENDED)
		return Qfalse;
	rbk_raise(rc, "release");
}

static VALUE permit_released_p(VALUE self)
{
	struct rbk_permit *x = rb_check_typeddata(self, &permit_type);

	return x->released ? Qtrue : Qfalse;
}

/* counted: nil until released, then true/false. */
static VALUE permit_counted(VALUE self)
{
	struct rbk_permit *x = rb_check_typeddata(self, &permit_type);

	if (!x->released)
		return Qnil;
	return x->counted ? Qtrue : Qfalse;
}

static VALUE permit_breaker(VALUE self)
{
	return ((struct rbk_permit *)rb_check_typeddata(self, &permit_type))->breaker;
}

/* bind_thread: the calling thread owns the leases (brk_permit_bind_thread). */
static VALUE permit_bind_thread(VALUE self)
{
	struct rbk_permit *x = rb_check_typeddata(self, &permit_type);
	int rc;

	if (x->released || x->pid != rbk_pid)
		return Qfalse;
	rc = brk_permit_bind_thread(&x->p);
	if (rc == -BRK_ESTALE)
		return Qfalse;
	if (rc)
		rbk_raise(rc, "bind_thread");
	return Qtrue;
}

void rbk_init_permit(void)
{
	rbk_cPermit = rb_define_class_under(rbk_mBreakerd, "Permit", rb_cObject);
	rb_undef_alloc_func(rbk_cPermit);
	rb_define_private_method(rbk_cPermit, "_release", permit_release, 3);
	rb_define_method(rbk_cPermit, "released?", permit_released_p, 0);
	rb_define_method(rbk_cPermit, "counted", permit_counted, 0);
	rb_define_method(rbk_cPermit, "breaker_object", permit_breaker, 0);
	rb_define_method(rbk_cPermit, "bind_thread", permit_bind_thread, 0);
}
