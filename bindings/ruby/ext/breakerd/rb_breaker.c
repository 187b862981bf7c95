/*
 * rb_breaker.c - Breakerd::Breaker: get-or-create, acquire, inspection and
 * the operator actions, each one libbreaker call.
 */
#include "rb_core.h"

VALUE rbk_cBreaker;

struct rbk_breaker {
	struct rbk_seg *s;
	brk_breaker *b;  /* owned by the segment handle */
	VALUE segment;
};

static void br_mark(void *p)
{
	rb_gc_mark(((struct rbk_breaker *)p)->segment);
}

static void br_free(void *p)
{
	struct rbk_breaker *x = p;

	rbk_seg_unref(x->s);
	xfree(x);
}

static const rb_data_type_t br_type = {
	"Breakerd::Breaker",
	{ br_mark, br_free, NULL, NULL, { 0 } },
	0, 0, RUBY_TYPED_FREE_IMMEDIATELY,
};

static struct rbk_breaker *br_of(VALUE self)
{
	struct rbk_breaker *x = rb_check_typeddata(self, &br_type);

	if (!x->b)
		rb_raise(rbk_eError, "breaker not initialised");
	rbk_seg_get(x->s); /* raises if the segment was closed */
	return x;
}

static VALUE br_alloc(VALUE cls)
{
	struct rbk_breaker *x;

	return TypedData_Make_Struct(cls, struct rbk_breaker, &br_type, x);
}

/* Segment#_breaker(name, {"open_ms" => 2000, ...}) -> Breaker. The Ruby
 * layer has checked the settings (Breakerd._config_check) first. */
static VALUE seg_breaker(VALUE segment, VALUE name_v, VALUE fields)
{
	struct rbk_seg *s = rbk_seg_of(segment);
	const char *name = rbk_cstr(name_v, "name");
	struct brk_config c;
	struct rbk_breaker *x;
	brk_breaker *b;
	VALUE obj;
	int rc;

	if ((rc = brk_name_validate(name)))
		rb_raise(rb_eArgError,
			 "name: '%s' is not a breaker name (1..%d bytes of A-Z a-z 0-9 . _ : / -, "
			 "no empty level)", name, BRK_NAME_MAX);
	rbk_config_from_hash(fields, &c);
	rc = brk_breaker_get(rbk_seg_get(s), name, &c, &b);
	if (rc)
		rbk_raise(rc, name);
	obj = br_alloc(rbk_cBreaker);
	x = DATA_PTR(obj);
	x->s = rbk_seg_ref(s);
	x->b = b;
	x->segment = segment;
	return obj;
}

static VALUE br_name(VALUE self)
{
	return rb_str_new_cstr(brk_breaker_name(br_of(self)->b));
}

/* Breaker#_acquire -> Permit, or raise the Refused subclass. */
static VALUE br_acquire(VALUE self)
{
	struct rbk_breaker *x = br_of(self);
	struct brk_refusal why;
	brk_permit p;
	int rc = brk_acquire(x->b, &p, &why);

	if (rc == 0)
		return rbk_permit_new(self, x->s, &p);
	if (brk_is_refusal(rc))
		rbk_raise_refused(rc, (double)why.wait_ms / 1000.0, brk_cause_name(why.cause),
				  why.by);
	rbk_raise(rc, brk_breaker_name(x->b));
}

static VALUE yield_block(VALUE unused)
{
	return rb_yield_values(0);
}

/* Breaker#call { } -> the block's value. The fast path of the Ruby idiom:
 * acquire, run the block under rb_protect, release success (the permit
 * never leaves the C stack, no object is allocated). A refusal raises
 * before the block runs. An exception is handed to Ruby
 * (#_report_exception, with a Permit object for it) to be classified by
 * the breaker's failure/exclude/ignore, then re-raised; a non-local exit
 * that is not an exception (break, throw, return) is a success. With
 * keywords (exclude:, ignore:) the Ruby version (#_call_slow) runs. */
static VALUE br_call(int argc, VALUE *argv, VALUE self)
{
	struct rbk_breaker *x;
	struct brk_refusal why;
	brk_permit p;
	VALUE result, err;
	int rc, state = 0;

	rb_need_block();
	if (argc > 0)
		return rb_funcall_with_block_kw(self, rb_intern("_call_slow"), argc, argv,
						rb_block_proc(), RB_PASS_CALLED_KEYWORDS);
	x = br_of(self);
	rc = brk_acquire(x->b, &p, &why);
	if (rc) {
		if (brk_is_refusal(rc))
			rbk_raise_refused(rc, (double)why.wait_ms / 1000.0,
					  brk_cause_name(why.cause), why.by);
		rbk_raise(rc, brk_breaker_name(x->b));
	}
	result = rb_protect(yield_block, Qnil, &state);
	if (!state) {
		brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
		return result;
	}
	err = rb_errinfo();
	if (rb_obj_is_kind_of(err, rb_eException)) {
		/* released by _report_exception, or cancelled when collected */
		VALUE permit = rbk_permit_new(self, x->s, &p);

		rb_funcall(self, rb_intern("_report_exception"), 2, permit, err);
	} else {
		brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
	}
	rb_jump_tag(state);
}

static VALUE br_info(VALUE self)
{
	struct rbk_breaker *x = br_of(self);
	struct brk_info in;
	int rc = brk_breaker_info(x->b, &in);

	if (rc)
		rbk_raise(rc, brk_breaker_name(x->b));
	return rbk_breaker_info_hash(&in);
}

static VALUE br_state(VALUE self)
{
	struct rbk_breaker *x = br_of(self);
	struct brk_info in;
	int rc = brk_breaker_info(x->b, &in);

	if (rc)
		rbk_raise(rc, brk_breaker_name(x->b));
	return ID2SYM(rb_intern(brk_state_name(in.state)));
}

static VALUE br_reset(VALUE self)
{
	struct rbk_breaker *x = br_of(self);
	int rc = brk_reset(x->b);

	if (rc)
		rbk_raise(rc, brk_breaker_name(x->b));
	return Qnil;
}

/* _trip(ms) -> true, or false if it was already open. */
static VALUE br_trip(VALUE self, VALUE ms)
{
	struct rbk_breaker *x = br_of(self);
	int rc = brk_trip(x->b, rbk_u64(ms, "for", BRK_MAX_DURATION_MS));

	if (rc == -EALREADY)
		return Qfalse;
	if (rc)
		rbk_raise(rc, brk_breaker_name(x->b));
	return Qtrue;
}

/* _set_mode(mode) -> true, or false if it already was in that mode. */
static VALUE br_set_mode(VALUE self, VALUE mode)
{
	struct rbk_breaker *x = br_of(self);
	int rc = brk_set_mode(x->b, NUM2INT(mode));

	if (rc == -EALREADY)
		return Qfalse;
	if (rc)
		rbk_raise(rc, brk_breaker_name(x->b));
	return Qtrue;
}

/* _update({"open_ms" => ...}) -> nil or the name of the setting that broke
 * a rule (nothing written then). brk_breaker_update() of the given ones. */
static int field_bits(VALUE key, VALUE val, VALUE arg)
{
	uint64_t bit;

	if (!brk_config_field_lookup(rbk_cstr(key, "setting"), &bit))
		*(uint64_t *)arg |= bit;
	return ST_CONTINUE;
}

static VALUE br_update(VALUE self, VALUE fields)
{
	struct rbk_breaker *x = br_of(self);
	struct brk_config c;
	uint64_t bits = 0;
	const char *what = NULL;
	int rc;

	rbk_config_from_hash(fields, &c);
	rb_hash_foreach(fields, field_bits, (VALUE)&bits);
	rc = brk_breaker_update(x->b, &c, bits, &what);
	if (rc == -EINVAL && what)
		return rb_str_new_cstr(what);
	if (rc)
		rbk_raise(rc, brk_breaker_name(x->b));
	return Qnil;
}

void rbk_init_breaker(void)
{
	rbk_cBreaker = rb_define_class_under(rbk_mBreakerd, "Breaker", rb_cObject);
	rb_undef_alloc_func(rbk_cBreaker);
	rb_define_private_method(rbk_cSegment, "_breaker", seg_breaker, 2);
	rb_define_method(rbk_cBreaker, "name", br_name, 0);
	rb_define_private_method(rbk_cBreaker, "_acquire", br_acquire, 0);
	rb_define_method(rbk_cBreaker, "call", br_call, -1);
	rb_define_method(rbk_cBreaker, "info", br_info, 0);
	rb_define_method(rbk_cBreaker, "state", br_state, 0);
	rb_define_method(rbk_cBreaker, "reset", br_reset, 0);
	rb_define_private_method(rbk_cBreaker, "_trip", br_trip, 1);
	rb_define_private_method(rbk_cBreaker, "_set_mode", br_set_mode, 1);
	rb_define_private_method(rbk_cBreaker, "_update", br_update, 1);
}
