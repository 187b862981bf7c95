/*
 * bphp_clock.c - Breakerd\Testing\FakeClock: a test clock whose time is a
 * uint64 in this object, read by the library (brk_clock_fn) with no PHP
 * call. A Segment attached with it holds a reference to it.
 */
#include "bphp_core.h"

zend_class_entry *bphp_ce_fakeclock;
static zend_object_handlers clock_handlers;

uint64_t bphp_fake_clock_read(void *ctx)
{
	return __atomic_load_n((uint64_t *)ctx, __ATOMIC_ACQUIRE);
}

uint64_t *bphp_fake_clock_ptr(zend_object *clock)
{
	return &BPHP_OBJ(bphp_clock_obj, clock)->ns;
}

static zend_object *clock_create(zend_class_entry *ce)
{
	struct bphp_clock_obj *o = zend_object_alloc(sizeof(*o), ce);

	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &clock_handlers;
	o->ns = 1000000000000ULL; /* 1000 s: a clock that is not at 0 */
	return &o->std;
}

/* __construct(int|float|string $start = 1000): the start, in seconds. */
PHP_METHOD(Breakerd_Testing_FakeClock, __construct)
{
	zval *start = NULL;
	uint64_t ms = 1000000;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_ZVAL(start)
	ZEND_PARSE_PARAMETERS_END();
	if (start && bphp_duration_ms(start, 1, NULL, &ms))
		RETURN_THROWS();
	__atomic_store_n(&BPHP_THIS(bphp_clock_obj)->ns, ms * 1000000ULL, __ATOMIC_RELEASE);
}

/* advance(int|float|string $by): int - the new time in ns. */
PHP_METHOD(Breakerd_Testing_FakeClock, advance)
{
	zval *by;
	uint64_t ms;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ZVAL(by)
	ZEND_PARSE_PARAMETERS_END();
	if (bphp_duration_ms(by, 1, NULL, &ms))
		RETURN_THROWS();
	RETURN_LONG((zend_long)__atomic_add_fetch(&BPHP_THIS(bphp_clock_obj)->ns,
						   ms * 1000000ULL, __ATOMIC_ACQ_REL));
}

PHP_METHOD(Breakerd_Testing_FakeClock, nowNs)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG((zend_long)__atomic_load_n(&BPHP_THIS(bphp_clock_obj)->ns, __ATOMIC_ACQUIRE));
}

ZEND_BEGIN_ARG_INFO_EX(ai_construct, 0, 0, 0)
	ZEND_ARG_TYPE_MASK(0, start, MAY_BE_LONG | MAY_BE_DOUBLE | MAY_BE_STRING, "1000")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_advance, 0, 1, IS_LONG, 0)
	ZEND_ARG_TYPE_MASK(0, by, MAY_BE_LONG | MAY_BE_DOUBLE | MAY_BE_STRING, NULL)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_long, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()

static const zend_function_entry clock_methods[] = {
	PHP_ME(Breakerd_Testing_FakeClock, __construct, ai_construct, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Testing_FakeClock, advance, ai_advance, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Testing_FakeClock, nowNs, ai_long, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

void bphp_init_clock(void)
{
	zend_class_entry ce;

	INIT_CLASS_ENTRY(ce, "Breakerd\\Testing\\FakeClock", clock_methods);
	bphp_ce_fakeclock = zend_register_internal_class(&ce);
	bphp_ce_fakeclock->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES |
				       ZEND_ACC_NOT_SERIALIZABLE;
	bphp_ce_fakeclock->create_object = clock_create;
	memcpy(&clock_handlers, zend_get_std_object_handlers(), sizeof(clock_handlers));
	clock_handlers.offset = XtOffsetOf(struct bphp_clock_obj, std);
	clock_handlers.clone_obj = NULL;
}
