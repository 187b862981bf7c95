/*
 * rb_fakeclock.c - Breakerd::Testing::FakeClock: a test clock whose time is a
 * uint64 in this object, read by the library (brk_clock_fn) with no Ruby
 * call and no GVL.
 */
#include "rb_core.h"

VALUE rbk_cFakeClock;

static const rb_data_type_t clock_type = {
	"Breakerd::Testing::FakeClock",
	{ NULL, RUBY_TYPED_DEFAULT_FREE, NULL, NULL, { 0 } },
	0, 0, RUBY_TYPED_FREE_IMMEDIATELY,
};

uint64_t rbk_fake_clock_read(void *ctx)
{
	return __atomic_load_n((uint64_t *)ctx, __ATOMIC_ACQUIRE);
}

uint64_t *rbk_fake_clock_ptr(VALUE clock)
{
	return rb_check_typeddata(clock, &clock_type);
}

static VALUE clock_alloc(VALUE cls)
{
	uint64_t *t;
	VALUE obj = TypedData_Make_Struct(cls, uint64_t, &clock_type, t);

	*t = 1000000000000ULL; /* 1000 s: a clock that is not at 0 */
	return obj;
}

/* _set_ns(ns): the start time (initialize, in Ruby). */
static VALUE clock_set_ns(VALUE self, VALUE ns)
{
	__atomic_store_n(rbk_fake_clock_ptr(self), rbk_u64(ns, "start", UINT64_MAX / 2),
			 __ATOMIC_RELEASE);
	return self;
}

static VALUE clock_now_ns(VALUE self)
{
	return ULL2NUM(__atomic_load_n(rbk_fake_clock_ptr(self), __ATOMIC_ACQUIRE));
}

/* _advance_ns(ns) -> the new time in ns. */
static VALUE clock_advance_ns(VALUE self, VALUE ns)
{
	uint64_t d = rbk_u64(ns, "seconds", UINT64_MAX / 4);

	return ULL2NUM(__atomic_add_fetch(rbk_fake_clock_ptr(self), d, __ATOMIC_ACQ_REL));
}

void rbk_init_fakeclock(void)
{
	VALUE testing = rb_define_module_under(rbk_mBreakerd, "Testing");

	rbk_cFakeClock = rb_define_class_under(testing, "FakeClock", rb_cObject);
	rb_define_alloc_func(rbk_cFakeClock, clock_alloc);
	rb_define_private_method(rbk_cFakeClock, "_set_ns", clock_set_ns, 1);
	rb_define_private_method(rbk_cFakeClock, "_advance_ns", clock_advance_ns, 1);
	rb_define_method(rbk_cFakeClock, "now_ns", clock_now_ns, 0);
}
