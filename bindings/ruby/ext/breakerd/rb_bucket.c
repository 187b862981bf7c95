/*
 * rb_bucket.c - Breakerd::Bucket (a GCRA rate limit) and Breakerd::Pace (a
 * learned rate: the same record in paced mode), over brk_bucket_*() and
 * brk_pace_*().
 */
#include <time.h>

#include <ruby/thread.h>

#include "rb_core.h"

VALUE rbk_cBucket, rbk_cPace;

struct rbk_bucket {
	struct rbk_seg *s;
	brk_bucket *k;
	VALUE segment;
};

static void k_mark(void *p)
{
	rb_gc_mark(((struct rbk_bucket *)p)->segment);
}

static void k_free(void *p)
{
	struct rbk_bucket *x = p;

	rbk_seg_unref(x->s);
	xfree(x);
}

static const rb_data_type_t k_type = {
	"Breakerd::Bucket",
	{ k_mark, k_free, NULL, NULL, { 0 } },
	0, 0, RUBY_TYPED_FREE_IMMEDIATELY,
};

static struct rbk_bucket *k_of(VALUE self)
{
	struct rbk_bucket *x = rb_check_typeddata(self, &k_type);

	rbk_seg_get(x->s);
	return x;
}

static VALUE k_wrap(VALUE cls, VALUE segment, struct rbk_seg *s, brk_bucket *k)
{
	struct rbk_bucket *x;
	VALUE obj = TypedData_Make_Struct(cls, struct rbk_bucket, &k_type, x);

	x->s = rbk_seg_ref(s);
	x->k = k;
	x->segment = segment;
	return obj;
}

static void check_name(const char *name)
{
	if (brk_name_validate(name))
		rb_raise(rb_eArgError,
			 "name: '%s' is not a record name (1..%d bytes of A-Z a-z 0-9 . _ : / -)",
			 name, BRK_NAME_MAX);
}

/* Segment#_bucket(name, rate, burst) */
static VALUE seg_bucket(VALUE segment, VALUE name_v, VALUE rate_v, VALUE burst_v)
{
	struct rbk_seg *s = rbk_seg_of(segment);
	const char *name = rbk_cstr(name_v, "name");
	double rate = rbk_num(rate_v, "rate");
	uint64_t burst = rbk_u64(burst_v, "burst", BRK_BUCKET_MAX_BURST);
	brk_bucket *k;
	int rc;

	check_name(name);
	if (rate < BRK_BUCKET_MIN_RATE || rate > BRK_BUCKET_MAX_RATE)
		rb_raise(rb_eArgError, "rate must be %g..%g tokens/s, not %g", BRK_BUCKET_MIN_RATE,
			 BRK_BUCKET_MAX_RATE, rate);
	if (burst < 1)
		rb_raise(rb_eArgError, "burst must be 1..%u", BRK_BUCKET_MAX_BURST);
	if ((rc = brk_bucket_get(rbk_seg_get(s), name, rate, (uint32_t)burst, &k)))
		rbk_raise(rc, name);
	return k_wrap(rbk_cBucket, segment, s, k);
}

/* Segment#_pace(name, ceiling, floor or nil, burst or nil, reserve_pct or nil) */
static VALUE seg_pace(VALUE segment, VALUE name_v, VALUE ceil_v, VALUE floor_v, VALUE burst_v,
		      VALUE res_v)
{
	struct rbk_seg *s = rbk_seg_of(segment);
	const char *name = rbk_cstr(name_v, "name");
	struct brk_pace_config c;
	brk_bucket *k;
	int rc;

	check_name(name);
	brk_pace_config_init(&c);
	c.ceiling_per_s = rbk_num(ceil_v, "ceiling");
	if (!NIL_P(floor_v))
		c.floor_per_s = rbk_num(floor_v, "floor");
	if (!NIL_P(burst_v))
		c.burst = (uint32_t)rbk_u64(burst_v, "burst", BRK_BUCKET_MAX_BURST);
	if (!NIL_P(res_v))
		c.reserve_pct = (uint32_t)rbk_u64(res_v, "reserve_pct", BRK_PACE_MAX_RESERVE_PCT);
	if (c.ceiling_per_s < BRK_BUCKET_MIN_RATE || c.ceiling_per_s > BRK_BUCKET_MAX_RATE)
		rb_raise(rb_eArgError, "ceiling must be %g..%g /s, not %g", BRK_BUCKET_MIN_RATE,
			 BRK_BUCKET_MAX_RATE, c.ceiling_per_s);
	if (c.floor_per_s < 0 || c.floor_per_s > c.ceiling_per_s)
		rb_raise(rb_eArgError, "floor must be 0 (default) .. ceiling, not %g", c.floor_per_s);
	if ((rc = brk_pace_get(rbk_seg_get(s), name, &c, &k)))
		rbk_raise(rc, name);
	return k_wrap(rbk_cPace, segment, s, k);
}

static VALUE k_name(VALUE self)
{
	return rb_str_new_cstr(brk_bucket_name(k_of(self)->k));
}

static double wait_s(struct rbk_bucket *x, uint64_t not_before)
{
	uint64_t wake = brk_bucket_wake_ns(x->k, not_before);
	uint64_t now = brk_now_ns(rbk_seg_get(x->s));

	if (wake == UINT64_MAX)
		return INFINITY;
	return wake > now ? (double)(wake - now) / 1e9 : 1e-9;
}

/* Bucket#_take(n) -> 0.0 (taken) or the seconds to wait (jittered). */
static VALUE k_take(VALUE self, VALUE n)
{
	struct rbk_bucket *x = k_of(self);
	uint64_t nb = 0;
	int rc = brk_bucket_take(x->k, (uint32_t)rbk_u64(n, "n", BRK_BUCKET_MAX_BURST), &nb);

	if (rc == 0)
		return DBL2NUM(0.0);
	if (rc == -BRK_ENOTOKENS)
		return DBL2NUM(wait_s(x, nb));
	if (rc == -EINVAL)
		rb_raise(rb_eArgError, "n must be 1..burst");
	rbk_raise(rc, brk_bucket_name(x->k));
}

static VALUE k_info(VALUE self)
{
	struct rbk_bucket *x = k_of(self);
	struct brk_bucket_info in;
	int rc = brk_bucket_info(x->k, &in);

	if (rc)
		rbk_raise(rc, brk_bucket_name(x->k));
	return rbk_bucket_info_hash(&in);
}

static VALUE k_configure(VALUE self, VALUE rate, VALUE burst)
{
	struct rbk_bucket *x = k_of(self);
	int rc = brk_bucket_configure(x->k, rbk_num(rate, "rate"),
				      (uint32_t)rbk_u64(burst, "burst", BRK_BUCKET_MAX_BURST));

	if (rc == -EINVAL)
		rb_raise(rb_eArgError, "rate or burst out of range");
	if (rc)
		rbk_raise(rc, brk_bucket_name(x->k));
	return Qnil;
}

/* Pace#_take(priority) -> [taken_at_ns, wait_s] (wait 0.0: taken). */
static VALUE p_take(VALUE self, VALUE prio)
{
	struct rbk_bucket *x = k_of(self);
	uint64_t at = 0, nb = 0;
	int rc = brk_pace_take(x->k, NUM2INT(prio), &at, &nb);

	if (rc == 0)
		return rb_ary_new_from_args(2, ULL2NUM(at), DBL2NUM(0.0));
	if (rc == -BRK_ENOTOKENS)
		return rb_ary_new_from_args(2, INT2FIX(0), DBL2NUM(wait_s(x, nb)));
	rbk_raise(rc, brk_bucket_name(x->k));
}

struct sleep_arg {
	struct timespec ts;
	int rc;
};

static void *sleep_nogvl(void *p)
{
	struct sleep_arg *a = p;

	a->rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &a->ts, NULL);
	return NULL;
}

static VALUE check_ints(VALUE unused)
{
	(void)unused;
	rb_thread_check_ints();
	return Qnil;
}

/* Pace#_take_wait(priority, wait_ms, fake) -> [taken_at_ns, waited_s]: a
 * fair wait (breaker.h "Fair waits"): brk_pace_reserve() of the next slot
 * within wait_ms (0 with a FakeClock: only a token free now), a sleep to
 * it without the GVL, brk_ticket_check(), again if a cut moved it. A slot
 * past wait_ms raises NoTokens with the wait, nothing reserved; an
 * interrupt (Thread#raise, Ctrl-C) cancels the ticket and propagates. */
static VALUE p_take_wait(VALUE self, VALUE prio, VALUE wait_ms, VALUE fake)
{
	struct rbk_bucket *x = k_of(self);
	brk_segment *seg = rbk_seg_get(x->s);
	uint64_t ms = rbk_u64(wait_ms, "wait", BRK_MAX_DURATION_MS);
	uint64_t horizon = RTEST(fake) ? 0 : ms * 1000000u, t0 = brk_now_ns(seg), now;
	struct brk_ticket t;
	int rc, state = 0;

	(void)brk_ticket_init(&t);
	rc = brk_pace_reserve(x->k, NUM2INT(prio), horizon, &t);
	while (rc >= 0) {
		now = brk_now_ns(seg);
		if (t.at_ns > now) {
			struct sleep_arg a = { { (time_t)(t.at_ns / 1000000000u),
						 (long)(t.at_ns % 1000000000u) }, 0 };

			if (RTEST(fake) || t.at_ns - t0 > horizon) {
				(void)brk_ticket_cancel(x->k, &t);
				rc = -BRK_ENOTOKENS;
				break;
			}
			rb_thread_call_without_gvl(sleep_nogvl, &a, RUBY_UBF_IO, NULL);
			rb_protect(check_ints, Qnil, &state);
			if (state) {
				(void)brk_ticket_cancel(x->k, &t);
				rb_jump_tag(state);
			}
			continue;
		}
		rc = brk_ticket_check(x->k, &t);
		if (rc == 0)
			return rb_ary_new_from_args(2, ULL2NUM(t.taken_at_ns),
						    DBL2NUM(t.taken_at_ns > t0
							    ? (double)(t.taken_at_ns - t0) / 1e9
							    : 0.0));
	}
	if (rc == -BRK_ENOTOKENS) {
		now = brk_now_ns(seg);
		rbk_raise_refused(rc, t.at_ns == UINT64_MAX ? INFINITY
				  : t.at_ns > now ? (double)(t.at_ns - now) / 1e9 : 0.0,
				  "no_tokens", brk_bucket_name(x->k));
	}
	(void)brk_ticket_cancel(x->k, &t);
	rbk_raise(rc, brk_bucket_name(x->k));
}

/* Pace#_report(taken_at_ns, signal, retry_after_ms) -> true if it cut. */
static VALUE p_report(VALUE self, VALUE at, VALUE sig, VALUE ms)
{
	struct rbk_bucket *x = k_of(self);
	int rc = brk_pace_report(x->k, rbk_u64(at, "taken_at", UINT64_MAX), NUM2INT(sig),
				 NUM2LL(ms));

	if (rc < 0)
		rbk_raise(rc, brk_bucket_name(x->k));
	return rc == 1 ? Qtrue : Qfalse;
}

void rbk_init_bucket(void)
{
	rbk_cBucket = rb_define_class_under(rbk_mBreakerd, "Bucket", rb_cObject);
	rb_undef_alloc_func(rbk_cBucket);
	rbk_cPace = rb_define_class_under(rbk_mBreakerd, "Pace", rb_cObject);
	rb_undef_alloc_func(rbk_cPace);
	rb_define_private_method(rbk_cSegment, "_bucket", seg_bucket, 3);
	rb_define_private_method(rbk_cSegment, "_pace", seg_pace, 5);
	rb_define_method(rbk_cBucket, "name", k_name, 0);
	rb_define_private_method(rbk_cBucket, "_take", k_take, 1);
	rb_define_method(rbk_cBucket, "info", k_info, 0);
	rb_define_private_method(rbk_cBucket, "_configure", k_configure, 2);
	rb_define_method(rbk_cPace, "name", k_name, 0);
	rb_define_private_method(rbk_cPace, "_take", p_take, 1);
	rb_define_private_method(rbk_cPace, "_take_wait", p_take_wait, 3);
	rb_define_private_method(rbk_cPace, "_report", p_report, 3);
	rb_define_method(rbk_cPace, "info", k_info, 0);
}
