/*
 * bphp_settings.c - breaker settings: the PHP array keys (the same names
 * as the Python and Ruby keywords) and their brk_config members, converted
 * here and checked by brk_config_validate(). Durations go through
 * brk_parse_duration() (strings) or are seconds (int|float).
 */
#include <math.h>

#include "bphp_core.h"

enum kind { K_COUNT, K_DURATION, K_DURATION_OR_NULL, K_PCT, K_BOOL };

static const struct setting {
	const char *key;     /* PHP array key */
	const char *field;   /* brk_config member */
	enum kind kind;
} table[] = {
	{ "failure_threshold", "failure_threshold", K_COUNT },
	{ "open", "open_ms", K_DURATION },
	{ "max_open", "max_open_ms", K_DURATION },
	{ "half_open_probes", "half_open_probes", K_COUNT },
	{ "success_threshold", "success_threshold", K_COUNT },
	{ "probe_timeout", "probe_timeout_ms", K_DURATION },
	{ "max_wait", "max_wait_ms", K_DURATION },
	{ "max_concurrent", "max_concurrent", K_COUNT },
	{ "failure_rate", "failure_rate_pct", K_PCT },
	{ "window", "window_ms", K_DURATION },
	{ "min_calls", "min_calls", K_COUNT },
	{ "slow_call", "slow_call_ms", K_DURATION_OR_NULL },
	{ "slow_rate", "slow_rate_pct", K_PCT },
	{ "min_distinct_processes", "min_distinct_processes", K_COUNT },
	{ "reserve_pct", "reserve_pct", K_COUNT },
	{ "hold_histogram", "hold_histogram", K_BOOL },
	{ "fleet", "fleet", K_BOOL },
	{ "fleet_probe", "fleet_probe", K_BOOL },
	{ "implicit_pace", "implicit_pace", K_BOOL },
	/* a bulkhead limit learned from latency (docs/design/limits.md
	 * "Adaptive concurrency"): the C fields as they are, no "auto" string
	 * to parse; max_concurrent is its bound (0: 64) */
	{ "concurrency_auto", "concurrency_auto", K_BOOL },
	{ "min_concurrent", "min_concurrent", K_COUNT },
};

static const struct rule { const char *field; const char *text; } rules[] = {
	{ "failure_threshold", "must be 1..1000000" },
	{ "success_threshold", "must be 1..1000000" },
	{ "half_open_probes", "must be 1..8" },
	{ "max_concurrent", "must be 0 (no bulkhead) ..64" },
	{ "min_concurrent", "must be 1..max_concurrent (64 when 0) with concurrency_auto => true" },
	{ "min_calls", "must be 0..1000000000" },
	{ "min_distinct_processes", "must be 0 or 1 (off), or 2..8" },
	{ "reserve_pct", "must be 0..90" },
	{ "max_open_ms", "must be at least open (the first cooling period)" },
	{ "open_ms", "must be at least 1 ms" },
	{ "probe_timeout_ms", "must be at least 1 ms" },
	{ "window_ms", "must be at least 1 ms" },
	{ "slow_rate_pct", "must be 1..100 when slow_call is set (both, or neither)" },
	{ "slow_call_ms", "must be set together with slow_rate" },
	{ "failure_rate_pct", "must be 1..100, or null (off)" },
};

static const char *key_names(void)
{
	return "failure_threshold, open, max_open, half_open_probes, success_threshold, "
	       "probe_timeout, max_wait, max_concurrent, failure_rate, window, min_calls, "
	       "slow_call, slow_rate, min_distinct_processes, reserve_pct, hold_histogram, "
	       "fleet, fleet_probe, implicit_pace, concurrency_auto, min_concurrent";
}

static int convert(const struct setting *st, zval *v, uint32_t argn, uint64_t *out)
{
	const char *k = st->key;
	double d;

	ZVAL_DEREF(v);
	switch (st->kind) {
	case K_COUNT:
		if (Z_TYPE_P(v) == IS_STRING && !strcmp(k, "max_concurrent")) {
			zend_argument_type_error(argn, "key \"max_concurrent\" must be of type int, "
						 "string given (a learned limit: \"concurrency_auto\" "
						 "=> true, \"max_concurrent\" => N, 0 for 64)");
			return -1;
		}
		if (Z_TYPE_P(v) != IS_LONG) {
			zend_argument_type_error(argn, "key \"%s\" must be of type int, %s given", k,
						 zend_zval_type_name(v));
			return -1;
		}
		if (Z_LVAL_P(v) < 0 || Z_LVAL_P(v) > (zend_long)UINT32_MAX) {
			zend_argument_value_error(argn, "key \"%s\" must be 0..%u, not " ZEND_LONG_FMT,
						  k, UINT32_MAX, Z_LVAL_P(v));
			return -1;
		}
		*out = (uint64_t)Z_LVAL_P(v);
		return 0;
	case K_BOOL:
		if (Z_TYPE_P(v) != IS_TRUE && Z_TYPE_P(v) != IS_FALSE) {
			zend_argument_type_error(argn, "key \"%s\" must be of type bool, %s given", k,
						 zend_zval_type_name(v));
			return -1;
		}
		*out = Z_TYPE_P(v) == IS_TRUE;
		return 0;
	case K_PCT:
		if (Z_TYPE_P(v) == IS_NULL) {
			*out = 0;
			return 0;
		}
		if (Z_TYPE_P(v) != IS_LONG && Z_TYPE_P(v) != IS_DOUBLE) {
			zend_argument_type_error(argn, "key \"%s\" must be a percentage (int|float "
						 "1..100) or null, %s given", k, zend_zval_type_name(v));
			return -1;
		}
		d = zval_get_double(v);
		if (!(d >= 1 && d <= 100)) {
			zend_argument_value_error(argn, "key \"%s\" must be a percentage 1..100 (50 = "
						  "half) or null, not %g", k, d);
			return -1;
		}
		*out = (uint64_t)llround(d);
		return 0;
	case K_DURATION_OR_NULL:
		if (Z_TYPE_P(v) == IS_NULL) {
			*out = 0;
			return 0;
		}
		return bphp_duration_ms(v, argn, k, out);
	case K_DURATION:
		return bphp_duration_ms(v, argn, k, out);
	}
	return -1;
}

int bphp_config_from_array(HashTable *h, uint32_t argn, struct brk_config *c, uint64_t *bits)
{
	zend_string *key;
	zend_ulong idx;
	zval *v;

	brk_config_init(c);
	if (bits)
		*bits = 0;
	if (!h)
		return 0;
	ZEND_HASH_FOREACH_KEY_VAL(h, idx, key, v) {
		const struct setting *st = NULL;
		uint64_t val, bit;

		if (!key) {
			zend_argument_value_error(argn, "must be an array of setting => value, "
						  "not a list (index " ZEND_ULONG_FMT ")", idx);
			return -1;
		}
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			if (!strcmp(table[i].key, ZSTR_VAL(key)))
				st = &table[i];
		if (!st) {
			zend_argument_value_error(argn, "unknown setting \"%s\" (known: %s)",
						  ZSTR_VAL(key), key_names());
			return -1;
		}
		if (convert(st, v, argn, &val))
			return -1;
		if (brk_config_field_lookup(st->field, &bit) || brk_config_field_set(c, bit, val)) {
			zend_argument_value_error(argn, "key \"%s\" is out of range", st->key);
			return -1;
		}
		if (bits)
			*bits |= bit;
	} ZEND_HASH_FOREACH_END();
	return 0;
}

void bphp_config_rule_error(uint32_t argn, const char *field, HashTable *given)
{
	const char *key = field, *text = "is out of range";
	zval *v = NULL;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].field, field))
			key = table[i].key;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(rules[i].field, field))
			text = rules[i].text;
	if (given)
		v = zend_hash_str_find(given, key, strlen(key));
	if (v) {
		zend_string *shown = zval_try_get_string(v);

		zend_argument_value_error(argn, "bad setting \"%s\" => %s: %s", key,
					  shown ? ZSTR_VAL(shown) : "?", text);
		if (shown)
			zend_string_release(shown);
	} else {
		zend_argument_value_error(argn, "bad setting \"%s\": %s", key, text);
	}
}
