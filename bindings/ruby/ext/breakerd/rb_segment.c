/*
 * rb_segment.c - Breakerd::Segment: attach, close, get-or-create records,
 * events; and the reference-counted handle every object shares.
 */
#include <ruby/thread.h>

#include "rb_core.h"

VALUE rbk_cSegment;

/* ---- the shared handle ------------------------------------------------------ */

struct rbk_seg *rbk_seg_ref(struct rbk_seg *s)
{
	s->refs++;
	return s;
}

void rbk_seg_unref(struct rbk_seg *s)
{
	if (!s || --s->refs > 0)
		return;
	if (s->seg)
		brk_detach(s->seg);
	xfree(s);
}

brk_segment *rbk_seg_get(struct rbk_seg *s)
{
	if (!s || s->closed || !s->seg)
		rb_raise(rbk_eError, "the segment is closed");
	return s->seg;
}

/* ---- Segment ------------------------------------------------------------------ */

static void seg_mark(void *p)
{
	struct rbk_seg **s = p;

	if (*s)
		rb_gc_mark((*s)->clock);
}

static void seg_free(void *p)
{
	struct rbk_seg **s = p;

	rbk_seg_unref(*s);
	xfree(s);
}

static const rb_data_type_t seg_type = {
	"Breakerd::Segment",
	{ seg_mark, seg_free, NULL, NULL, { 0 } },
	0, 0, RUBY_TYPED_FREE_IMMEDIATELY,
};

struct rbk_seg *rbk_seg_of(VALUE segment)
{
	struct rbk_seg **s = rb_check_typeddata(segment, &seg_type);

	if (!*s)
		rb_raise(rbk_eError, "the segment is not attached");
	return *s;
}

static VALUE seg_alloc(VALUE cls)
{
	struct rbk_seg **s;

	return TypedData_Make_Struct(cls, struct rbk_seg *, &seg_type, s);
}

struct attach_args {
	struct brk_attach_opts o;
	brk_segment *seg;
	int rc;
};

static void *attach_nogvl(void *p)
{
	struct attach_args *a = p;

	a->rc = brk_attach(&a->o, &a->seg);
	return NULL;
}

/* Segment#_attach(shm or nil, capacity or nil, readonly, clock or nil):
 * brk_attach() without the GVL (it may wait for a creator). */
static VALUE seg_attach(VALUE self, VALUE shm, VALUE cap, VALUE ro, VALUE clock)
{
	struct rbk_seg **sp = rb_check_typeddata(self, &seg_type), *s;
	struct attach_args a;
	char errbuf[512] = "";
	VALUE name = Qnil;

	if (*sp)
		rb_raise(rbk_eError, "already attached");
	memset(&a, 0, sizeof(a));
	brk_attach_opts_init(&a.o);
	if (!NIL_P(shm)) {
		name = rb_str_dup(rb_obj_is_kind_of(shm, rb_cSymbol) ? rb_sym2str(shm) : shm);
		a.o.shm_name = rbk_cstr(name, "shm");
	}
	if (!NIL_P(cap))
		a.o.capacity = (uint32_t)rbk_u64(cap, "capacity", BRK_MAX_CAPACITY);
	if (RTEST(ro))
		a.o.flags |= BRK_ATTACH_READONLY;
	if (!NIL_P(clock)) {
		a.o.clock = rbk_fake_clock_read;
		a.o.clock_ctx = rbk_fake_clock_ptr(clock);
	}
	a.o.errbuf = errbuf;
	a.o.errbuf_len = sizeof(errbuf);
	rb_thread_call_without_gvl(attach_nogvl, &a, RUBY_UBF_IO, NULL);
	RB_GC_GUARD(name);
	if (a.rc) {
		VALUE e = rb_exc_new_cstr(rbk_eError, errbuf[0] ? errbuf : brk_strerror(a.rc));

		rb_iv_set(e, "@code", INT2NUM(-a.rc));
		rb_exc_raise(e);
	}
	s = ALLOC(struct rbk_seg);
	s->seg = a.seg;
	s->refs = 1;
	s->closed = 0;
	s->clock = clock;
	*sp = s;
	return self;
}

static VALUE seg_close(VALUE self)
{
	struct rbk_seg **sp = rb_check_typeddata(self, &seg_type);

	if (*sp && !(*sp)->closed) {
		(*sp)->closed = 1;
		/* detached when the last breaker, permit... made from it goes */
	}
	return Qnil;
}

static VALUE seg_closed_p(VALUE self)
{
	struct rbk_seg **sp = rb_check_typeddata(self, &seg_type);

	return (!*sp || (*sp)->closed) ? Qtrue : Qfalse;
}

static VALUE seg_now_ns(VALUE self)
{
	return ULL2NUM(brk_now_ns(rbk_seg_get(rbk_seg_of(self))));
}

static VALUE seg_info(VALUE self)
{
	struct brk_segment_info si;
	VALUE h;
	int rc;

	if ((rc = brk_segment_info(rbk_seg_get(rbk_seg_of(self)), &si)))
		rbk_raise(rc, "segment info");
	h = rb_hash_new();
	rb_hash_aset(h, rb_str_new_cstr("shm"), rb_str_new_cstr(si.shm_name));
	rb_hash_aset(h, rb_str_new_cstr("capacity"), UINT2NUM(si.capacity));
	rb_hash_aset(h, rb_str_new_cstr("used"), UINT2NUM(si.used));
	rb_hash_aset(h, rb_str_new_cstr("creator_pid"), INT2NUM(si.creator_pid));
	rb_hash_aset(h, rb_str_new_cstr("daemon_pid"), INT2NUM(si.daemon_pid));
	rb_hash_aset(h, rb_str_new_cstr("events_written"), ULL2NUM(si.events_written));
	rb_hash_aset(h, rb_str_new_cstr("readonly"), si.readonly ? Qtrue : Qfalse);
	return h;
}

/* Segment#_events(cursor) -> [[event hash, ...], next cursor, lost]. */
static VALUE seg_events(VALUE self, VALUE cursor_v)
{
	brk_segment *seg = rbk_seg_get(rbk_seg_of(self));
	uint64_t cursor = rbk_u64(cursor_v, "cursor", UINT64_MAX), lost = 0;
	struct brk_event ev[64];
	VALUE list = rb_ary_new();
	int n, i;

	n = brk_events_read(seg, &cursor, ev, 64, &lost);
	if (n < 0)
		rbk_raise(n, "events");
	for (i = 0; i < n; i++) {
		VALUE h = rb_hash_new();

		rb_hash_aset(h, rb_str_new_cstr("seq"), ULL2NUM(ev[i].seq));
		rb_hash_aset(h, rb_str_new_cstr("wall_ms"), ULL2NUM(ev[i].wall_ms));
		rb_hash_aset(h, rb_str_new_cstr("name"), rb_str_new_cstr(ev[i].name));
		rb_hash_aset(h, rb_str_new_cstr("from"), rb_str_new_cstr(brk_state_name(ev[i].from)));
		rb_hash_aset(h, rb_str_new_cstr("to"), rb_str_new_cstr(brk_state_name(ev[i].to)));
		rb_hash_aset(h, rb_str_new_cstr("reason"),
			     rb_str_new_cstr(brk_event_reason_name(ev[i].reason)));
		rb_hash_aset(h, rb_str_new_cstr("pid"), INT2NUM(ev[i].pid));
		rb_hash_aset(h, rb_str_new_cstr("value"), ULL2NUM(ev[i].value));
		rb_hash_aset(h, rb_str_new_cstr("origin"), rb_str_new_cstr(ev[i].origin));
		rb_ary_push(list, h);
	}
	return rb_ary_new_from_args(3, list, ULL2NUM(cursor), ULL2NUM(lost));
}

static VALUE seg_unlink(VALUE mod, VALUE shm)
{
	int rc = brk_segment_unlink(NIL_P(shm) ? NULL : rbk_cstr(shm, "shm"));

	if (rc == -ENOENT)
		return Qfalse;
	if (rc)
		rbk_raise(rc, "unlink");
	return Qtrue;
}

void rbk_init_segment(void)
{
	rbk_cSegment = rb_define_class_under(rbk_mBreakerd, "Segment", rb_cObject);
	rb_define_alloc_func(rbk_cSegment, seg_alloc);
	rb_define_private_method(rbk_cSegment, "_attach", seg_attach, 4);
	rb_define_method(rbk_cSegment, "close", seg_close, 0);
	rb_define_method(rbk_cSegment, "closed?", seg_closed_p, 0);
	rb_define_method(rbk_cSegment, "now_ns", seg_now_ns, 0);
	rb_define_method(rbk_cSegment, "info", seg_info, 0);
	rb_define_private_method(rbk_cSegment, "_events", seg_events, 1);
	rb_define_module_function(rbk_mBreakerd, "unlink", seg_unlink, 1);
}
