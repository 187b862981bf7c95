/*
 * rb_util.c - the helpers every file of the extension shares: the module
 * and its exceptions, library codes raised as Ruby exceptions, argument
 * checks, a brk_config from a Hash, and the pid of this process. It calls
 * no type file; rb_breakerd.c (the entry point) sets the module and
 * exceptions up and refreshes the pid in a fork()ed child.
 */
#include <math.h>
#include <string.h>

#include "rb_util.h"

VALUE rbk_mBreakerd, rbk_eError, rbk_eRefused, rbk_eCircuitOpen, rbk_eCooling,
	rbk_eBulkheadFull, rbk_eNoTokens, rbk_eRetryDeferred;

pid_t rbk_pid;

/* ---- errors ---------------------------------------------------------------- */

void rbk_raise(int code, const char *what)
{
	VALUE msg = rb_sprintf("%s: %s", what ? what : "breakerd", brk_strerror(code));
	VALUE e = rb_exc_new_str(rbk_eError, msg);

	rb_iv_set(e, "@code", INT2NUM(code < 0 ? -code : code));
	rb_exc_raise(e);
}

void rbk_raise_refused(int code, double wait_s, const char *cause, const char *by)
{
	VALUE cls, e, kw;

	switch (code < 0 ? -code : code) {
	case BRK_ECOOLING: cls = rbk_eCooling; break;
	case BRK_EFULL: cls = rbk_eBulkheadFull; break;
	case BRK_ENOTOKENS: cls = rbk_eNoTokens; break;
	case BRK_EDEFERRED: cls = rbk_eRetryDeferred; break;
	default: cls = rbk_eCircuitOpen; break; /* open, probes busy, forced, contended */
	}
	kw = rb_hash_new();
	rb_hash_aset(kw, ID2SYM(rb_intern("wait")), DBL2NUM(wait_s));
	rb_hash_aset(kw, ID2SYM(rb_intern("cause")), rb_str_new_cstr(cause));
	rb_hash_aset(kw, ID2SYM(rb_intern("breaker")), rb_str_new_cstr(by ? by : ""));
	e = rb_funcallv_kw(cls, rb_intern("new"), 1, &kw, RB_PASS_KEYWORDS);
	rb_exc_raise(e);
}

/* ---- arguments ------------------------------------------------------------- */

uint64_t rbk_u64(VALUE v, const char *name, uint64_t max)
{
	if (!RB_INTEGER_TYPE_P(v))
		rb_raise(rb_eTypeError, "%s must be an Integer, not %s", name, rb_obj_classname(v));
	if (rb_funcall(v, '<', 1, INT2FIX(0)) == Qtrue ||
	    rb_funcall(v, '>', 1, ULL2NUM(max)) == Qtrue)
		rb_raise(rb_eArgError, "%s must be 0..%llu, not %" PRIsVALUE, name,
			 (unsigned long long)max, v);
	return NUM2ULL(v);
}

double rbk_num(VALUE v, const char *name)
{
	double d;

	if (!RB_INTEGER_TYPE_P(v) && !RB_FLOAT_TYPE_P(v))
		rb_raise(rb_eTypeError, "%s must be a number, not %s", name, rb_obj_classname(v));
	d = NUM2DBL(v);
	if (!isfinite(d))
		rb_raise(rb_eArgError, "%s must be finite, not %" PRIsVALUE, name, v);
	return d;
}

const char *rbk_cstr(VALUE v, const char *name)
{
	if (RB_TYPE_P(v, T_SYMBOL))
		v = rb_sym2str(v);
	if (!RB_TYPE_P(v, T_STRING))
		rb_raise(rb_eTypeError, "%s must be a String, not %s", name, rb_obj_classname(v));
	if (memchr(RSTRING_PTR(v), 0, RSTRING_LEN(v)))
		rb_raise(rb_eArgError, "%s must not contain a NUL byte", name);
	return StringValueCStr(v);
}

/* ---- settings -------------------------------------------------------------- */

static int fill_field(VALUE key, VALUE val, VALUE arg)
{
	struct brk_config *c = (struct brk_config *)arg;
	const char *name = rbk_cstr(key, "setting");
	uint64_t bit;

	if (brk_config_field_lookup(name, &bit))
		rb_raise(rb_eArgError, "unknown setting %s", name);
	if (brk_config_field_set(c, bit, rbk_u64(val, name, UINT64_MAX)))
		rb_raise(rb_eArgError, "%s: %" PRIsVALUE " is out of range", name, val);
	return ST_CONTINUE;
}

void rbk_config_from_hash(VALUE h, struct brk_config *c)
{
	brk_config_init(c);
	Check_Type(h, T_HASH);
	rb_hash_foreach(h, fill_field, (VALUE)c);
}
