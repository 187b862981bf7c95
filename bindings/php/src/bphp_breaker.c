/*
 * bphp_breaker.c - Breakerd\Breaker: get-or-create, call, acquire,
 * inspection and the operator actions, each one libbreaker call.
 */
#include "bphp_core.h"

zend_class_entry *bphp_ce_breaker;
static zend_object_handlers breaker_handlers;

static zend_object *breaker_create(zend_class_entry *ce)
{
	struct bphp_breaker_obj *o = zend_object_alloc(sizeof(*o), ce);

	zend_object_std_init(&o->std, ce);
	object_properties_init(&o->std, ce);
	o->std.handlers = &breaker_handlers;
	return &o->std;
}

static void breaker_free(zend_object *obj)
{
	struct bphp_breaker_obj *o = BPHP_OBJ(bphp_breaker_obj, obj);

	bphp_seg_unref(o->s);
	zend_object_std_dtor(obj);
}

static struct bphp_breaker_obj *this_breaker(zval *self)
{
	struct bphp_breaker_obj *o = BPHP_OBJ(bphp_breaker_obj, Z_OBJ_P(self));

	if (!o->b) {
		zend_throw_exception(bphp_ce_error, "breaker not initialised", EINVAL);
		return NULL;
	}
	return o;
}

/* Segment->breaker(string $name, array $settings = []): Breaker
 * Get or create; the settings (keys of the defaults table) are used only
 * if this call creates the record, and are checked first (nothing in the
 * segment changes on a bad one). */
PHP_METHOD(Breakerd_Segment, breaker)
{
	zend_string *name;
	HashTable *settings = NULL;
	struct bphp_seg *s;
	struct bphp_breaker_obj *o;
	struct brk_config c;
	const char *bad = NULL;
	brk_breaker *b;
	int rc;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_PATH_STR(name)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(settings)
	ZEND_PARSE_PARAMETERS_END();
	if (brk_name_validate(ZSTR_VAL(name))) {
		zend_argument_value_error(1, "\"%s\" is not a breaker name (1..%d bytes of A-Z a-z "
					  "0-9 . _ : / -, no empty level)", ZSTR_VAL(name),
					  BRK_NAME_MAX);
		RETURN_THROWS();
	}
	if (bphp_config_from_array(settings, 2, &c, NULL))
		RETURN_THROWS();
	if (brk_config_validate(&c, &bad)) {
		bphp_config_rule_error(2, bad ? bad : "size", settings);
		RETURN_THROWS();
	}
	if (!(s = bphp_segment_of(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_breaker_get(s->seg, ZSTR_VAL(name), &c, &b))) {
		bphp_throw(rc, ZSTR_VAL(name));
		RETURN_THROWS();
	}
	object_init_ex(return_value, bphp_ce_breaker);
	o = BPHP_OBJ(bphp_breaker_obj, Z_OBJ_P(return_value));
	o->s = bphp_seg_ref(s);
	o->b = b;
}

PHP_METHOD(Breakerd_Breaker, name)
{
	struct bphp_breaker_obj *o;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_breaker(ZEND_THIS)))
		RETURN_THROWS();
	RETURN_STRING(brk_breaker_name(o->b));
}

static int acquire(struct bphp_breaker_obj *o, brk_permit *p)
{
	struct brk_refusal why;
	int rc = brk_acquire(o->b, p, &why);

	if (rc == 0)
		return 0;
	if (brk_is_refusal(rc))
		bphp_throw_refused(rc, (double)why.wait_ms / 1000.0, brk_cause_name(why.cause),
				   why.by);
	else
		bphp_throw(rc, brk_breaker_name(o->b));
	return -1;
}

/* acquire(): Permit, or throw the Refused subclass. Report the permit
 * exactly once (success(), failure(), reportHttp()...); one left
 * unreported is cancelled when its object goes, or at request end. */
PHP_METHOD(Breakerd_Breaker, acquire)
{
	struct bphp_breaker_obj *o;
	brk_permit p;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_breaker(ZEND_THIS)) || acquire(o, &p))
		RETURN_THROWS();
	bphp_permit_new(return_value, o->s, &p, brk_breaker_name(o->b));
}

/* call(callable $fn, mixed ...$args): mixed
 * $fn(...$args) under a permit, reported on every path: a return is a
 * success; a Breakerd\Refused thrown inside (another breaker's) cancels;
 * any other \Exception is a failure (reason "other") and an \Error (a bug
 * in the caller: TypeError...) cancels; either is re-thrown. A refusal
 * throws before $fn runs. The permit never leaves the C stack. */
PHP_METHOD(Breakerd_Breaker, call)
{
	struct bphp_breaker_obj *o;
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zval *args = NULL;
	uint32_t argc = 0;
	HashTable *named = NULL;
	brk_permit p;
	int outcome, reason;

	ZEND_PARSE_PARAMETERS_START(1, -1)
		Z_PARAM_FUNC(fci, fcc)
		Z_PARAM_VARIADIC_WITH_NAMED(args, argc, named)
	ZEND_PARSE_PARAMETERS_END();
	if (!(o = this_breaker(ZEND_THIS)) || acquire(o, &p))
		RETURN_THROWS();
	fci.retval = return_value;
	fci.params = args;
	fci.param_count = argc;
	fci.named_params = named;
	if (zend_call_function(&fci, &fcc) != SUCCESS && !EG(exception)) {
		brk_release(&p, BRK_CANCELLED, BRK_REASON_NONE, 0);
		RETURN_THROWS();
	}
	if (!EG(exception)) {
		brk_release(&p, BRK_SUCCESS, BRK_REASON_NONE, 0);
		return;
	}
	if (instanceof_function(EG(exception)->ce, bphp_ce_refused) ||
	    !instanceof_function(EG(exception)->ce, zend_ce_exception)) {
		outcome = BRK_CANCELLED;
		reason = BRK_REASON_NONE;
	} else {
		outcome = BRK_FAILURE;
		reason = BRK_REASON_OTHER;
	}
	brk_release(&p, outcome, reason, 0);
}

static int info_of(struct bphp_breaker_obj *o, struct brk_info *in)
{
	int rc = brk_breaker_info(o->b, in);

	if (rc)
		bphp_throw(rc, brk_breaker_name(o->b));
	return rc;
}

/* info(): array with the fields of `bctl inspect --json`. */
PHP_METHOD(Breakerd_Breaker, info)
{
	struct bphp_breaker_obj *o;
	struct brk_info in;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_breaker(ZEND_THIS)) || info_of(o, &in))
		RETURN_THROWS();
	bphp_breaker_info_array(return_value, &in);
}

/* state(): "closed", "open" or "half_open". */
PHP_METHOD(Breakerd_Breaker, state)
{
	struct bphp_breaker_obj *o;
	struct brk_info in;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_breaker(ZEND_THIS)) || info_of(o, &in))
		RETURN_THROWS();
	RETURN_STRING(brk_state_name(in.state));
}

PHP_METHOD(Breakerd_Breaker, reset)
{
	struct bphp_breaker_obj *o;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_breaker(ZEND_THIS)))
		RETURN_THROWS();
	if ((rc = brk_reset(o->b))) {
		bphp_throw(rc, brk_breaker_name(o->b));
		RETURN_THROWS();
	}
}

/* trip(int|float|string $for = 60): bool (false: it was already open). */
PHP_METHOD(Breakerd_Breaker, trip)
{
	struct bphp_breaker_obj *o;
	zval *d = NULL;
	uint64_t ms = 60000;
	int rc;

	ZEND_PARSE_PARAMETERS_START(0, 1)
		Z_PARAM_OPTIONAL
		Z_PARAM_ZVAL(d)
	ZEND_PARSE_PARAMETERS_END();
	if (d && bphp_duration_ms(d, 1, NULL, &ms))
		RETURN_THROWS();
	if (ms == 0) {
		zend_argument_value_error(1, "must be at least 1 ms");
		RETURN_THROWS();
	}
	if (!(o = this_breaker(ZEND_THIS)))
		RETURN_THROWS();
	rc = brk_trip(o->b, ms);
	if (rc == -EALREADY)
		RETURN_FALSE;
	if (rc) {
		bphp_throw(rc, brk_breaker_name(o->b));
		RETURN_THROWS();
	}
	RETURN_TRUE;
}

static void set_mode(INTERNAL_FUNCTION_PARAMETERS, int mode)
{
	struct bphp_breaker_obj *o;
	int rc;

	ZEND_PARSE_PARAMETERS_NONE();
	if (!(o = this_breaker(ZEND_THIS)))
		RETURN_THROWS();
	rc = brk_set_mode(o->b, mode);
	if (rc == -EALREADY)
		RETURN_FALSE;
	if (rc) {
		bphp_throw(rc, brk_breaker_name(o->b));
		RETURN_THROWS();
	}
	RETURN_TRUE;
}

PHP_METHOD(Breakerd_Breaker, forceOpen) { set_mode(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_MODE_FORCED_OPEN); }
PHP_METHOD(Breakerd_Breaker, disable) { set_mode(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_MODE_DISABLED); }
PHP_METHOD(Breakerd_Breaker, metricsOnly) { set_mode(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_MODE_METRICS_ONLY); }
PHP_METHOD(Breakerd_Breaker, normal) { set_mode(INTERNAL_FUNCTION_PARAM_PASSTHRU, BRK_MODE_NORMAL); }

/* configure(array $settings): void - change the given settings of the
 * record (state and counters kept; brk_breaker_update()). */
PHP_METHOD(Breakerd_Breaker, configure)
{
	struct bphp_breaker_obj *o;
	HashTable *settings;
	struct brk_config c;
	uint64_t bits;
	const char *bad = NULL;
	int rc;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(settings)
	ZEND_PARSE_PARAMETERS_END();
	if (bphp_config_from_array(settings, 1, &c, &bits))
		RETURN_THROWS();
	if (!(o = this_breaker(ZEND_THIS)))
		RETURN_THROWS();
	rc = brk_breaker_update(o->b, &c, bits, &bad);
	if (rc == -EINVAL && bad) {
		bphp_config_rule_error(1, bad, settings);
		RETURN_THROWS();
	}
	if (rc) {
		bphp_throw(rc, brk_breaker_name(o->b));
		RETURN_THROWS();
	}
}

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_array, 0, 0, IS_ARRAY, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_void, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_bool, 0, 0, _IS_BOOL, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(ai_acquire, 0, 0, Breakerd\\Permit, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_call, 0, 1, IS_MIXED, 0)
	ZEND_ARG_TYPE_INFO(0, fn, IS_CALLABLE, 0)
	ZEND_ARG_VARIADIC_TYPE_INFO(0, args, IS_MIXED, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_trip, 0, 0, _IS_BOOL, 0)
	ZEND_ARG_TYPE_MASK(0, for, MAY_BE_LONG | MAY_BE_DOUBLE | MAY_BE_STRING, "60")
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(ai_configure, 0, 1, IS_VOID, 0)
	ZEND_ARG_TYPE_INFO(0, settings, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

static const zend_function_entry breaker_methods[] = {
	BPHP_NO_CONSTRUCT
	PHP_ME(Breakerd_Breaker, name, ai_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, call, ai_call, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, acquire, ai_acquire, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, info, ai_array, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, state, ai_string, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, reset, ai_void, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, trip, ai_trip, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, forceOpen, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, disable, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, metricsOnly, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, normal, ai_bool, ZEND_ACC_PUBLIC)
	PHP_ME(Breakerd_Breaker, configure, ai_configure, ZEND_ACC_PUBLIC)
	PHP_FE_END
};

void bphp_init_breaker(void)
{
	zend_class_entry ce;

	INIT_CLASS_ENTRY(ce, "Breakerd\\Breaker", breaker_methods);
	bphp_ce_breaker = zend_register_internal_class(&ce);
	bphp_ce_breaker->ce_flags |= ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES |
				     ZEND_ACC_NOT_SERIALIZABLE;
	bphp_ce_breaker->create_object = breaker_create;
	memcpy(&breaker_handlers, zend_get_std_object_handlers(), sizeof(breaker_handlers));
	breaker_handlers.offset = XtOffsetOf(struct bphp_breaker_obj, std);
	breaker_handlers.free_obj = breaker_free;
	breaker_handlers.clone_obj = NULL;
}
