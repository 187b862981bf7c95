/*
 * rb_budget.c - Breakerd::Budget: a host-wide retry budget (Finagle's), over
 * brk_budget_*().
 */
#include "rb_core.h"

VALUE rbk_cBudget;

struct rbk_budget {
	struct rbk_seg *s;
	brk_budget *g;
	VALUE segment;
};

static void g_mark(void *p)
{
	rb_gc_mark(((struct rbk_budget *)p)->segment);
}

static void g_free(void *p)
{
	struct rbk_budget *x = p;

	rbk_seg_unref(x->s);
	xfree(x);
}

static const rb_data_type_t g_type = {
	"Breakerd::Budget",
	{ g_mark, g_free, NULL, NULL, { 0 } },
	0, 0, RUBY_TYPED_FREE_IMMEDIATELY,
};

static struct rbk_budget *g_of(VALUE self)
{
	struct rbk_budget *x = rb_check_typeddata(self, &g_type);

	rbk_seg_get(x->s);
	return x;
}

/* Segment#_budget(name, floor, ratio) */
static VALUE seg_budget(VALUE segment, VALUE name_v, VALUE floor_v, VALUE ratio_v)
{
	struct rbk_seg *s = rbk_seg_of(segment);
	const char *name = rbk_cstr(name_v, "name");
	double floor = rbk_num(floor_v, "floor"), ratio = rbk_num(ratio_v, "ratio");
	struct rbk_budget *x;
	brk_budget *g;
	VALUE obj;
	int rc;

	if (brk_name_validate(name))
		rb_raise(rb_eArgError, "name: '%s' is not a record name", name);
	if (floor != 0 && (floor < 0.001 || floor > BRK_BUDGET_MAX_FLOOR))
		rb_raise(rb_eArgError, "floor must be 0 or 0.001..%g retries/s, not %g",
			 BRK_BUDGET_MAX_FLOOR, floor);
	if (ratio != 0 && (ratio < 0.001 || ratio > BRK_BUDGET_MAX_RATIO))
		rb_raise(rb_eArgError, "ratio must be 0 or 0.001..%g, not %g",
			 BRK_BUDGET_MAX_RATIO, ratio);
	if ((rc = brk_budget_get(rbk_seg_get(s), name, floor, ratio, &g)))
		rbk_raise(rc, name);
	obj = TypedData_Make_Struct(rbk_cBudget, struct rbk_budget, &g_type, x);
	x->s = rbk_seg_ref(s);
	x->g = g;
	x->segment = segment;
	return obj;
}

static VALUE g_name(VALUE self)
{
	return rb_str_new_cstr(brk_budget_name(g_of(self)->g));
}

/* deposit: one first attempt (a deposit dropped under contention is not
 * an error: the budget errs towards fewer retries). */
static VALUE g_deposit(VALUE self)
{
	struct rbk_budget *x = g_of(self);
	int rc = brk_budget_deposit(x->g);

	if (rc && rc != -BRK_ECONTENDED)
		rbk_raise(rc, brk_budget_name(x->g));
	return Qnil;
}

/* retry: take one retry token, or raise RetryDeferred. */
static VALUE g_retry(VALUE self)
{
	struct rbk_budget *x = g_of(self);
	int rc = brk_retry_permitted(x->g);

	if (rc == 0)
		return Qtrue;
	if (rc == -BRK_EDEFERRED || rc == -BRK_ECONTENDED)
		rbk_raise_refused(-BRK_EDEFERRED, 0.0, "deferred", brk_budget_name(x->g));
	rbk_raise(rc, brk_budget_name(x->g));
}

static VALUE g_info(VALUE self)
{
	struct rbk_budget *x = g_of(self);
	struct brk_budget_info in;
	int rc = brk_budget_info(x->g, &in);

	if (rc)
		rbk_raise(rc, brk_budget_name(x->g));
	return rbk_budget_info_hash(&in);
}

void rbk_init_budget(void)
{
	rbk_cBudget = rb_define_class_under(rbk_mBreakerd, "Budget", rb_cObject);
	rb_undef_alloc_func(rbk_cBudget);
	rb_define_private_method(rbk_cSegment, "_budget", seg_budget, 3);
	rb_define_method(rbk_cBudget, "name", g_name, 0);
	rb_define_method(rbk_cBudget, "deposit", g_deposit, 0);
	rb_define_method(rbk_cBudget, "retry", g_retry, 0);
	rb_define_method(rbk_cBudget, "info", g_info, 0);
}
