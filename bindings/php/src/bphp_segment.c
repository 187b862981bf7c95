/*
 * bphp_segment.c - Breakerd\Segment: attach (lazily, once per process and
 * name), close, info, events; and the reference-counted handle every
 * object shares.
 */
#include "bphp_core.h"

zend_class_entry *bphp_ce_segment;
static zend_object_handlers segment_handlers;

/* ---- the shared handle ------------------------------------------------------ */

#define BPHP_MAX_PERSISTENT 16

/* Persistent handles of this process (no fake clock), by name and mode. */
static struct bphp_seg *persistent[BPHP_MAX_PERSISTENT];
static int persistent_ro[BPHP_MAX_PERSISTENT];

struct bphp_seg *bphp_seg_ref(struct bphp_seg *s)
{
	s->refs++;
	return s;
}

static void seg_free_handle(struct bphp_seg *s)
{
	/* A handle inherited through fork() is the parent's: its mapping is
	 * our copy, detaching it here unmaps only ours. */
	if (s->seg)
		brk_detach(s->seg);
	if (s->clock)
		OBJ_RELEASE(s->clock);
	pefree(s, 1);
}

void bphp_seg_unref(struct bphp_seg *s)
{
	if (!s || --s->refs > 0)
		return;
	seg_free_handle(s);
}

void bphp_seg_shutdown(void)
{
	for (int i = 0; i < BPHP_MAX_PERSISTENT; i++) {
		if (persistent[i]) {
			bphp_seg_unref(persistent[i]);
			persistent[i] = NULL;
		}
	}
}

brk_segment *bphp_seg_get(struct bphp_seg *s)
{
	if (!s || !s->seg) {
		zend_throw_exception(bphp_ce_error, "the segment is closed", EBADF);
		return NULL;
	}
	return s->seg;
}

/* ---- Segment object --------------------------------------------------------- */

static zend_object *segment_create(zend_class_entry *ce)
{
	struct bphp_segment_obj *o = zend_object_alloc(sizeof(*o), ce);

	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &segment_handlers;
	return &o->std;
}

static void segment_free(zend_object *obj)
{
	struct bphp_segment_obj *o = BPHP_OBJ(bphp_segment_obj, obj);

	bphp_seg_unref(o->s);
	o->s = NULL;
	zend_object_std_dtor(obj);
}

struct bphp_seg *bphp_segment_of(zval *self)
{
	struct bphp_segment_obj *o = BPHP_OBJ(bphp_segment_obj, Z_OBJ_P(self));

	if (!o->s || o->closed) {
		zend_throw_exception(bphp_ce_error, "the segment is closed", EBADF);
		return NULL;
	}
	return o->s;
}

static struct bphp_seg *do_attach(const char *name, zend_long capacity, int readonly,
				  zend_object *clock)
{
	struct brk_attach_opts o;
	char errbuf[512] = "";
	brk_segment *seg = NULL;
	struct bphp_seg *s;
	int rc;

	brk_attach_opts_init(&o);
	o.shm_name = name;
	o.capacity = (uint32_t)capacity;
	if (readonly)
		o.flags |= BRK_ATTACH_READONLY;
	if (clock) {
		o.clock = bphp_fake_clock_read;
		o.clock_ctx = bphp_fake_clock_ptr(clock);
	}
	o.errbuf = errbuf;
	o.errbuf_len = sizeof(errbuf);
	rc = brk_attach(&o, &seg);
	if (rc) {
		zend_throw_exception_ex(bphp_ce_error, -rc, "%s",
					errbuf[0] ? errbuf : brk_strerror(rc));
		return NULL;
	}
	s = pecalloc(1, sizeof(*s), 1);
	s->seg = seg;
	s->refs = 1;
	s->pid = bphp_pid;
	s->persistent = !clock;
	if (clock) {
		s->clock = clock;
		GC_ADDREF(clock);
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

/* Segment::attach(?string $shm = null, ?int $capacity = null,
 *                 ?Testing\FakeClock $clock = null, bool $readonly = false): Segment
 * Without a clock the handle is the process's: the first attach of a name
 * in a process maps it, later ones (later requests of an FPM child) get
 * the same mapping. A process fork()ed after an attach maps its own. */
PHP_METHOD(Breakerd_Segment, attach)
{
	zend_string *shm = NULL;
	zend_long capacity = 0;
	bool cap_null = 1, readonly = 0;
	zend_object *clock = NULL;
	struct bphp_segment_obj *obj;
	struct bphp_seg *s = NULL;
	const char *name;
	int i, free_slot = -1;

	ZEND_PARSE_PARAMETERS_START(0, 4)
		Z_PARAM_OPTIONAL
		Z_PARAM_PATH_STR_OR_NULL(shm)
		Z_PARAM_LONG_OR_NULL(capacity, cap_null)
		Z_PARAM_OBJ_OF_CLASS_OR_NULL(clock, bphp_ce_fakeclock)
		Z_PARAM_BOOL(readonly)
	ZEND_PARSE_PARAMETERS_END();

	if (!cap_null && (capacity < 1 || capacity > (zend_long)BRK_MAX_CAPACITY)) {
		zend_argument_value_error(2, "must be 1..%u records, not " ZEND_LONG_FMT,
					  BRK_MAX_CAPACITY, capacity);
		RETURN_THROWS();
	}
	name = brk_resolve_shm_name(shm ? ZSTR_VAL(shm) : NULL);
	if (brk_shm_name_validate(name)) {
		zend_argument_value_error(1, "\"%s\" is not a segment name (\"/name\", at most 255 "
					  "bytes, no other '/')", name);
		RETURN_THROWS();
	}
	if (!clock) {
		for (i = 0; i < BPHP_MAX_PERSISTENT; i++) {
			if (!persistent[i]) {
				if (free_slot < 0)
					free_slot = i;
				continue;
			}
			if (persistent[i]->pid != bphp_pid) {
				/* inherited through fork(): the parent's */
				bphp_seg_unref(persistent[i]);
				persistent[i] = NULL;
				if (free_slot < 0)
					free_slot = i;
				continue;
			}
			if (persistent_ro[i] == (int)readonly && !strcmp(persistent[i]->name, name)) {
				s = bphp_seg_ref(persistent[i]);
				break;
			}
		}
	}
	if (!s) {
		s = do_attach(name, cap_null ? 0 : capacity, readonly, clock);
		if (!s)
			RETURN_THROWS();
		if (!clock && free_slot >= 0) {
			persistent[free_slot] = bphp_seg_ref(s);
			persistent_ro[free_slot] = readonly;
		}
	}
	object_init_ex(return_value, bphp_ce_segment);
	obj = BPHP_OBJ(bphp_segment_obj, Z_OBJ_P(return_value));
	obj->s = s;
}

/* close(): later calls on this Segment object throw; breakers made from
 * it keep working (the mapping is the process's). */
PHP_METHOD(Breakerd_Segment, close)
{
	ZEND_PARSE_PARAMETERS_NONE();
	BPHP_THIS(bphp_segment_obj)->closed = 1;
}

PHP_METHOD(Breakerd_Segment, isClosed)
{
	struct bphp_segment_obj *o = BPHP_THIS(bphp_segment_obj);

	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_BOOL(!o->s || o->closed);
}

PHP_METHOD(Breakerd_Segment, name)
{
	struct bphp_seg *s;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	RETURN_STRING(s->name);
}

PHP_METHOD(Breakerd_Segment, nowNs)
{
	struct bphp_seg *s;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	RETURN_LONG((zend_long)brk_now_ns(s->seg));
}

PHP_METHOD(Breakerd_Segment, info)
{
	struct brk_segment_info si;
	struct bphp_seg *s;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_segment_info(s->seg, &si))) {
		bphp_throw(rc, "segment info");
		RETURN_THROWS();
	}
	array_init(return_value);
	add_assoc_string(return_value, "shm", si.shm_name);
	add_assoc_long(return_value, "capacity", si.capacity);
	add_assoc_long(return_value, "used", si.used);
	add_assoc_long(return_value, "creator_pid", si.creator_pid);
	add_assoc_long(return_value, "daemon_pid", si.daemon_pid);
	add_assoc_long(return_value, "events_written", (zend_long)si.events_written);
	add_assoc_bool(return_value, "readonly", si.readonly);
	add_assoc_long(return_value, "mode", si.mode);
}

/* events(int $cursor = 0): array ['events' => [...], 'next' => int, 'lost' => int]:
 * the events with sequence >= $cursor still in the ring, oldest first
 * (seq, wall_ms, name, from, to, reason, pid, value, origin). */
PHP_METHOD(Breakerd_Segment, events)
{
	zend_long cursor_l = 0;
	struct brk_event ev[64];
	struct bphp_seg *s;
	uint64_t cursor, lost = 0;
	zval list;
	int n, i;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(cursor_l)
	ZEND_PARSE_PARAMETERS_END();
	if (cursor_l < 0) {
		zend_argument_value_error(1, "must be >= 0");
		RETURN_THROWS();
	}
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	cursor = (uint64_t)cursor_l;
	n = brk_events_read(s->seg, &cursor, ev, 64, &lost);
	if (n < 0) {
		bphp_throw(n, "events");
		RETURN_THROWS();
	}
	array_init(&list);
	for (i = 0; i < n; i++) {
		zval e;

		array_init(&e);
		add_assoc_long(&e, "seq", (zend_long)ev[i].seq);
		add_assoc_long(&e, "wall_ms", (zend_long)ev[i].wall_ms);
		add_assoc_string(&e, "name", ev[i].name);
		add_assoc_string(&e, "from", brk_state_name(ev[i].from));
		add_assoc_string(&e, "to", brk_state_name(ev[i].to));
		add_assoc_string(&e, "reason", brk_event_reason_name(ev[i].reason));
		add_assoc_long(&e, "pid", ev[i].pid);
		add_assoc_long(&e, "value", (zend_long)ev[i].value);
		add_assoc_string(&e, "origin", ev[i].origin);
		add_next_index_zval(&list, &e);
	}
	array_init(return_value);
	add_assoc_zval(return_value, "events", &list);
	add_assoc_long(return_value, "next", (zend_long)cursor);
	add_assoc_long(return_value, "lost", (zend_long)lost);
}

/* Segment::unlink(?string $shm = null): bool (false: there was none).
 * Not for a segment in use: see brk_segment_unlink(). */
PHP_METHOD(Breakerd_Segment, unlink)
{
	zend_string *shm = NULL;
	int rc;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_PATH_STR_OR_NULL(shm)
	ZEND_PARSE_PARAMETERS_END();
	rc = brk_segment_unlink(shm ? ZSTR_VAL(shm) : NULL);
	if (rc == -ENOENT)
		RETURN_FALSE;
	if (rc) {
		bphp_throw(rc, "unlink");
		RETURN_THROWS();
	}
	RETURN_TRUE;
}

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_attach, 0, 0, Breakerd\\Segment, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, shm, IS_STRING, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, capacity, IS_LONG, 1, "null")
	ZEND_ARG_OBJ_INFO_WITH_DEFAULT_VALUE(0, clock, Breakerd\\Testing\\FakeClock, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, readonly, _IS_BOOL, 0, "false")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_void, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_bool, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_long, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_array, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_events, 0, 0, IS_ARRAY, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, cursor, IS_LONG, 0, "0")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_unlink, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, shm, IS_STRING, 1, "null")
ZEND_END_ARG_INFO()

/* Defined with their types: bphp_breaker.c, bphp_limits.c. */
PHP_METHOD(Breakerd_Segment, breaker);
PHP_METHOD(Breakerd_Segment, bucket);
PHP_METHOD(Breakerd_Segment, pace);
PHP_METHOD(Breakerd_Segment, budget);
PHP_METHOD(Breakerd_Segment, admit);

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_breaker, 0, 1, Breakerd\\Breaker, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, settings, IS_ARRAY, 0, "[]")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_bucket, 0, 3, Breakerd\\Bucket, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, rate, IS_DOUBLE, 0)
	ZEND_ARG_TYPE_INFO(0, burst, IS_LONG, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_pace, 0, 2, Breakerd\\Pace, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO(0, ceiling, IS_DOUBLE, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, floor, IS_DOUBLE, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, burst, IS_LONG, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, reservePct, IS_LONG, 1, "null")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_budget, 0, 1, Breakerd\\Budget, 0)
	ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, floor, IS_DOUBLE, 0, "10.0")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, ratio, IS_DOUBLE, 0, "0.2")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_admit, 0, 0, Breakerd\\Admission, 0)
	ZEND_ARG_OBJ_INFO_WITH_DEFAULT_VALUE(0, breaker, Breakerd\\Breaker, 1, "null")
	ZEND_ARG_OBJ_TYPE_MASK(0, pace, Breakerd\\Pace|Breakerd\\Bucket, MAY_BE_NULL, "null")
	ZEND_ARG_OBJ_INFO_WITH_DEFAULT_VALUE(0, budget, Breakerd\\Budget, 1, "null")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, priority, IS_STRING, 0, "'normal'")
	ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, retry, _IS_BOOL, 0, "false")
	ZEND_ARG_TYPE_MASK(0, maxWait, MAY_BE_LONG | MAY_BE_DOUBLE | MAY_BE_STRING, "0")
ZEND_END_ARG_INFO()

static const zend_function_entry segment_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_ME(Breakerd_Segment, admit, ai_admit, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, breaker, ai_breaker, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, bucket, ai_bucket, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, pace, ai_pace, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, budget, ai_budget, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, attach, ai_attach, ZEND_ACC_PUBLIC | ZEND_ACC_STATIC)
	PHP_ME(Breakerd_Segment, unlink, ai_unlink, ZEND_ACC_PUBLIC | ZEND_ACC_STATIC)
	PHP_ME(Breakerd_Segment, close, ai_void, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, isClosed, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, name, ai_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, nowNs, ai_long, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, info, ai_array, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Segment, events, ai_events, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

void bphp_init_segment(void)
{
	zend_class_entry ce;

	INIT_CLASS_ENTRY(ce, "Breakerd\\Segment", segment_methods);
	bphp_ce_segment = zend_register_internal_class(&ce);
	bphp_ce_segment->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES |
				     ZEND_ACC_NOT_SERIALIZABLE;
	bphp_ce_segment->create_object = segment_create;
	memcpy(&segment_handlers, zend_get_std_object_handlers(), sizeof(segment_handlers));
	segment_handlers.offset = XtOffsetOf(struct bphp_segment_obj, std);
	segment_handlers.free_obj = segment_free;
	segment_handlers.clone_obj = NULL;
}
