/* config.c - breaker settings: defaults, validation, shm words. */
#include <stddef.h>
#include <string.h>

#include "abi.h"
#include "internal.h"

void brk_config_init_sz(struct brk_config *c, size_t size)
{
	struct brk_config d;

	if (!c)
		return;
	memset(&d, 0, sizeof(d));
	brk__config_defaults(&d);
	brk__struct_out(c, size, &d, sizeof(d));
	if (size >= sizeof(c->size))
		c->size = (uint32_t)(size < BRK_STRUCT_SIZE_MAX ? size
							: BRK_STRUCT_SIZE_MAX);
}

/* The defaults (BRK_DEFAULT_*), the one place they are set. */
void brk__config_defaults(struct brk_config *c)
{
	c->failure_threshold = BRK_DEFAULT_FAILURE_THRESHOLD;
	c->failure_rate_pct = 0;
	c->window_ms = BRK_DEFAULT_WINDOW_MS;
	c->min_calls = BRK_DEFAULT_MIN_CALLS;
	c->slow_call_ms = 0;
	c->slow_rate_pct = 0;
	c->open_ms = BRK_DEFAULT_OPEN_MS;
	c->max_open_ms = BRK_DEFAULT_MAX_OPEN_MS;
	c->half_open_probes = BRK_DEFAULT_HALF_OPEN_PROBES;
	c->success_threshold = BRK_DEFAULT_SUCCESS_THRESHOLD;
	c->probe_timeout_ms = BRK_DEFAULT_PROBE_TIMEOUT_MS;
	c->max_wait_ms = BRK_DEFAULT_MAX_WAIT_MS;
	c->max_concurrent = BRK_DEFAULT_MAX_CONCURRENT;
	c->reserve_pct = BRK_DEFAULT_RESERVE_PCT;
	c->hold_histogram = 0;
	c->fleet = 0;
	c->fleet_probe = 0;
	c->implicit_pace = 1;
	c->concurrency_auto = 0;
	c->min_concurrent = BRK_DEFAULT_MIN_CONCURRENT;
}

#define CHECK(cond, name) \
	do { \
		if (!(cond)) { \
			if (what) \
				*what = name; \
			return -EINVAL; \
		} \
	} while (0)

int brk_config_validate(const struct brk_config *user, const char **what)
{
	struct brk_config k;
	const struct brk_config *c = &k;
	int rc;

	CHECK(user != NULL, "config");
	rc = brk__config_in(user, &k);
	if (rc) {
		if (what)
			*what = "size";
		return rc;
	}
	CHECK(c->failure_threshold >= 1 && c->failure_threshold <= BRK_MAX_FAILURE_THRESHOLD,
	      "failure_threshold");
	CHECK(c->failure_rate_pct <= 100, "failure_rate_pct");
	CHECK(c->window_ms >= 1 && c->window_ms <= BRK_MAX_DURATION_MS,
	      "window_ms");
	CHECK(c->min_calls <= BRK_MAX_MIN_CALLS, "min_calls");
	CHECK(c->slow_call_ms <= BRK_MAX_DURATION_MS, "slow_call_ms");
	CHECK(c->slow_rate_pct <= 100, "slow_rate_pct");
	CHECK(c->slow_call_ms == 0 || c->slow_rate_pct >= 1, "slow_rate_pct");
	/* a slow-call rate without a slow-call duration would do nothing */
	CHECK(c->slow_rate_pct == 0 || c->slow_call_ms != 0, "slow_call_ms");
	CHECK(c->open_ms >= 1 && c->open_ms <= BRK_MAX_DURATION_MS, "open_ms");
	CHECK(c->max_open_ms >= c->open_ms &&
	      c->max_open_ms <= BRK_MAX_DURATION_MS, "max_open_ms");
	CHECK(c->half_open_probes >= 1 && c->half_open_probes <= BRK_MAX_PROBES,
	      "half_open_probes");
	CHECK(c->success_threshold >= 1 && c->success_threshold <= BRK_MAX_SUCCESS_THRESHOLD,
	      "success_threshold");
	CHECK(c->probe_timeout_ms >= 1 &&
	      c->probe_timeout_ms <= BRK_MAX_DURATION_MS, "probe_timeout_ms");
	CHECK(c->max_wait_ms <= BRK_MAX_DURATION_MS, "max_wait_ms");
	CHECK(c->max_concurrent <= BRK_MAX_CONCURRENT, "max_concurrent");
	CHECK(c->min_distinct_processes <= BRK_MAX_QUORUM,
	      "min_distinct_processes");
	CHECK(c->reserve_pct <= BRK_MAX_RESERVE_PCT, "reserve_pct");
	CHECK(c->hold_histogram <= 1, "hold_histogram");
	CHECK(c->fleet <= 1, "fleet");
	CHECK(c->fleet_probe <= 1, "fleet_probe");
	CHECK(c->implicit_pace <= 1, "implicit_pace");
	CHECK(c->concurrency_auto <= 1, "concurrency_auto");
	/* min_concurrent is read only with concurrency_auto (any value up to
	 * BRK_MAX_CONCURRENT is kept without it); with it, the learned limit
	 * lies in [min_concurrent, max_concurrent], max_concurrent 0 meaning
	 * BRK_MAX_CONCURRENT */
	CHECK(c->min_concurrent <= BRK_MAX_CONCURRENT, "min_concurrent");
	CHECK(!c->concurrency_auto ||
	      (c->min_concurrent >= 1 &&
	       c->min_concurrent <= (c->max_concurrent ? c->max_concurrent
						       : BRK_MAX_CONCURRENT)),
	      "min_concurrent");
	return 0;
}

/* Every setting's field holds its public range (layout.h, brk__cfg_pos). */
_Static_assert(BRK_MAX_DURATION_MS < (1ULL << 38), "durations: 38 bits");
_Static_assert(BRK_MAX_FAILURE_THRESHOLD < (1u << 20) &&
	       BRK_MAX_SUCCESS_THRESHOLD < (1u << 20), "thresholds: 20 bits");
_Static_assert(BRK_MAX_MIN_CALLS < (1u << 30), "min_calls: 30 bits");
_Static_assert(BRK_MAX_PROBES < (1u << 4) && BRK_MAX_QUORUM < (1u << 4),
	       "probes, quorum: 4 bits");
_Static_assert(BRK_MAX_CONCURRENT < (1u << 7) && 100 < (1u << 7) &&
	       BRK_MAX_RESERVE_PCT < (1u << 7),
	       "max_concurrent, pcts: 7 bits");

/* brk__window_active() tests failure_rate_pct and slow_call_ms at once:
 * they are the top bits of one word. */
_Static_assert(BRK__CFG_WINDOW_SHIFT == 19 && BRK__CFG_WINDOW_WORD == 1,
	       "window word: failure_rate_pct at bit 19, slow_call_ms above it "
	       "to bit 63 (layout.h brk__cfg_pos)");
/* acquire.c start_time() tests slow_call_ms and hold_histogram at once */
_Static_assert(BRK__CFG_SLOW_SHIFT + 38u == 64u && BRK__CFG_HOLD_BIT == 1u,
	       "clock word: hold_histogram bit 0, slow_call_ms bits 26..63 of "
	       "cfg[BRK__CFG_WINDOW_WORD] (layout.h brk__cfg_pos)");

static uint64_t field_mask(struct brk__cfg_field f)
{
	return ((1ULL << f.bits) - 1u) << f.shift;
}

/* Word @w with setting @k replaced by @v (saturated to its field). */
uint64_t brk__cfg_field_put(uint64_t w, enum brk__cfg k, uint64_t v)
{
	struct brk__cfg_field f = brk__cfg_pos(k);
	uint64_t max = (1ULL << f.bits) - 1u;

	return (w & ~field_mask(f)) | ((v > max ? max : v) << f.shift);
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void brk__config_load(const struct brk__record *r, struct brk_config *c)
{
	c->failure_threshold = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_FAILURE_THRESHOLD), 1, BRK_MAX_FAILURE_THRESHOLD);
	c->failure_rate_pct = (uint32_t)clamp(brk__cfg(r, BRK__CFG_FAILURE_RATE), 0, 100);
	c->window_ms = clamp(brk__cfg(r, BRK__CFG_WINDOW_MS), 1, BRK_MAX_DURATION_MS);
	c->min_calls = (uint32_t)clamp(brk__cfg(r, BRK__CFG_MIN_CALLS), 0, BRK_MAX_MIN_CALLS);
	c->slow_call_ms = clamp(brk__cfg(r, BRK__CFG_SLOW_CALL_MS), 0, BRK_MAX_DURATION_MS);
	c->slow_rate_pct = (uint32_t)clamp(brk__cfg(r, BRK__CFG_SLOW_RATE), 0, 100);
	c->open_ms = clamp(brk__cfg(r, BRK__CFG_OPEN_MS), 1, BRK_MAX_DURATION_MS);
	c->max_open_ms = clamp(brk__cfg(r, BRK__CFG_MAX_OPEN_MS), c->open_ms,
			       BRK_MAX_DURATION_MS);
	c->half_open_probes = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_HALF_OPEN_PROBES), 1, BRK_MAX_PROBES);
	c->success_threshold = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_SUCCESS_THRESHOLD), 1, BRK_MAX_SUCCESS_THRESHOLD);
	c->probe_timeout_ms = clamp(brk__cfg(r, BRK__CFG_PROBE_TIMEOUT_MS), 1,
				    BRK_MAX_DURATION_MS);
	c->max_wait_ms = clamp(brk__cfg(r, BRK__CFG_MAX_WAIT_MS), 0, BRK_MAX_DURATION_MS);
	c->max_concurrent = (uint32_t)clamp(brk__cfg(r, BRK__CFG_MAX_CONCURRENT), 0,
					    BRK_MAX_CONCURRENT);
	c->min_distinct_processes = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_MIN_DISTINCT), 0, BRK_MAX_QUORUM);
	c->reserve_pct = (uint32_t)clamp(brk__cfg(r, BRK__CFG_RESERVE_PCT), 0,
					 BRK_MAX_RESERVE_PCT);
	c->hold_histogram = (uint32_t)brk__cfg(r, BRK__CFG_HOLD_HISTOGRAM);
	c->fleet = (uint32_t)brk__cfg(r, BRK__CFG_FLEET);
	c->fleet_probe = (uint32_t)brk__cfg(r, BRK__CFG_FLEET_PROBE);
	c->implicit_pace = (uint32_t)brk__cfg(r, BRK__CFG_IMPLICIT_PACE);
	c->concurrency_auto = (uint32_t)brk__cfg(r, BRK__CFG_CONCURRENCY_AUTO);
	c->min_concurrent = (uint32_t)clamp(brk__cfg(r, BRK__CFG_MIN_CONCURRENT), 0,
					    BRK_MAX_CONCURRENT);
}

/* ---- partial updates (brk_breaker_update) ------------------------------ */

/* The struct member of each setting, in enum brk__cfg order: bit i of
 * enum brk_config_field is setting i (its field: brk__cfg_pos()). */
static const struct cfg_member {
	const char *name;
	size_t off, size;
} members[BRK__CFG_COUNT] = {
#define M(k, f) [k] = { #f, offsetof(struct brk_config, f), \
			sizeof(((struct brk_config *)0)->f) }
	M(BRK__CFG_FAILURE_THRESHOLD, failure_threshold),
	M(BRK__CFG_FAILURE_RATE, failure_rate_pct),
	M(BRK__CFG_WINDOW_MS, window_ms),
	M(BRK__CFG_MIN_CALLS, min_calls),
	M(BRK__CFG_SLOW_CALL_MS, slow_call_ms),
	M(BRK__CFG_SLOW_RATE, slow_rate_pct),
	M(BRK__CFG_OPEN_MS, open_ms),
	M(BRK__CFG_MAX_OPEN_MS, max_open_ms),
	M(BRK__CFG_HALF_OPEN_PROBES, half_open_probes),
	M(BRK__CFG_SUCCESS_THRESHOLD, success_threshold),
	M(BRK__CFG_PROBE_TIMEOUT_MS, probe_timeout_ms),
	M(BRK__CFG_MAX_WAIT_MS, max_wait_ms),
	M(BRK__CFG_MAX_CONCURRENT, max_concurrent),
	M(BRK__CFG_MIN_DISTINCT, min_distinct_processes),
	M(BRK__CFG_RESERVE_PCT, reserve_pct),
	M(BRK__CFG_HOLD_HISTOGRAM, hold_histogram),
	M(BRK__CFG_FLEET, fleet),
	M(BRK__CFG_FLEET_PROBE, fleet_probe),
	M(BRK__CFG_IMPLICIT_PACE, implicit_pace),
	M(BRK__CFG_CONCURRENCY_AUTO, concurrency_auto),
	M(BRK__CFG_MIN_CONCURRENT, min_concurrent),
#undef M
};

_Static_assert(BRK_CFG_FAILURE_THRESHOLD == BRK__BIT(BRK__CFG_FAILURE_THRESHOLD) &&
	       BRK_CFG_FAILURE_RATE_PCT == BRK__BIT(BRK__CFG_FAILURE_RATE) &&
	       BRK_CFG_WINDOW_MS == BRK__BIT(BRK__CFG_WINDOW_MS) &&
	       BRK_CFG_MIN_CALLS == BRK__BIT(BRK__CFG_MIN_CALLS) &&
	       BRK_CFG_SLOW_CALL_MS == BRK__BIT(BRK__CFG_SLOW_CALL_MS) &&
	       BRK_CFG_SLOW_RATE_PCT == BRK__BIT(BRK__CFG_SLOW_RATE) &&
	       BRK_CFG_OPEN_MS == BRK__BIT(BRK__CFG_OPEN_MS) &&
	       BRK_CFG_MAX_OPEN_MS == BRK__BIT(BRK__CFG_MAX_OPEN_MS) &&
	       BRK_CFG_HALF_OPEN_PROBES == BRK__BIT(BRK__CFG_HALF_OPEN_PROBES) &&
	       BRK_CFG_SUCCESS_THRESHOLD == BRK__BIT(BRK__CFG_SUCCESS_THRESHOLD) &&
	       BRK_CFG_PROBE_TIMEOUT_MS == BRK__BIT(BRK__CFG_PROBE_TIMEOUT_MS) &&
	       BRK_CFG_MAX_WAIT_MS == BRK__BIT(BRK__CFG_MAX_WAIT_MS) &&
	       BRK_CFG_MAX_CONCURRENT == BRK__BIT(BRK__CFG_MAX_CONCURRENT) &&
	       BRK_CFG_MIN_DISTINCT_PROCESSES == BRK__BIT(BRK__CFG_MIN_DISTINCT) &&
	       BRK_CFG_RESERVE_PCT == BRK__BIT(BRK__CFG_RESERVE_PCT) &&
	       BRK_CFG_HOLD_HISTOGRAM == BRK__BIT(BRK__CFG_HOLD_HISTOGRAM) &&
	       BRK_CFG_FLEET == BRK__BIT(BRK__CFG_FLEET) &&
	       BRK_CFG_FLEET_PROBE == BRK__BIT(BRK__CFG_FLEET_PROBE) &&
	       BRK_CFG_IMPLICIT_PACE == BRK__BIT(BRK__CFG_IMPLICIT_PACE) &&
	       BRK_CFG_CONCURRENCY_AUTO == BRK__BIT(BRK__CFG_CONCURRENCY_AUTO) &&
	       BRK_CFG_MIN_CONCURRENT == BRK__BIT(BRK__CFG_MIN_CONCURRENT) &&
	       BRK_CFG_ALL == BRK__BIT(BRK__CFG_COUNT) - 1, "one bit per cfg word");

/* The index of a single known bit, or -1. */
static int field_index(uint64_t field)
{
	if (field == 0 || (field & (field - 1)) || (field & ~BRK_CFG_ALL))
		return -1;
	return __builtin_ctzll(field);
}

const char *brk_config_field_name(uint64_t field)
{
	int i = field_index(field);

	return i < 0 ? NULL : members[i].name;
}

int brk_config_field_lookup(const char *name, uint64_t *field)
{
	int i;

	if (!name || !field)
		return -EINVAL;
	for (i = 0; i < BRK__CFG_COUNT; i++)
		if (strcmp(members[i].name, name) == 0) {
			*field = BRK__BIT(i);
			return 0;
		}
	return -EINVAL;
}

uint64_t brk__cfg_member_get(const struct brk_config *c, int i)
{
	uint32_t v32;
	uint64_t v64;

	if (members[i].size == sizeof(v32)) {
		memcpy(&v32, (const char *)c + members[i].off, sizeof(v32));
		return v32;
	}
	memcpy(&v64, (const char *)c + members[i].off, sizeof(v64));
	return v64;
}

void brk__cfg_member_put(struct brk_config *c, int i, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (members[i].size == sizeof(v32))
		memcpy((char *)c + members[i].off, &v32, sizeof(v32));
	else
		memcpy((char *)c + members[i].off, &v, sizeof(v));
}

int brk_config_field_get(const struct brk_config *c, uint64_t field,
			 uint64_t *value)
{
	int i = field_index(field);

	if (!c || !value || i < 0)
		return -EINVAL;
	*value = brk__cfg_member_get(c, i);
	return 0;
}

int brk_config_field_set(struct brk_config *c, uint64_t field, uint64_t value)
{
	int i = field_index(field);

	if (!c || i < 0 || (members[i].size == 4 && value > UINT32_MAX))
		return -EINVAL;
	brk__cfg_member_put(c, i, value);
	return 0;
}

void brk__config_store(struct brk__record *r, const struct brk_config *c)
{
	uint64_t w[BRK__CFG_WORDS] = { 0 };
	int i;

	for (i = 0; i < BRK__CFG_COUNT; i++) {
		struct brk__cfg_field f = brk__cfg_pos((enum brk__cfg)i);
		w[f.word] = brk__cfg_field_put(w[f.word], (enum brk__cfg)i, brk__cfg_member_get(c, i));
	}
	for (i = 0; i < (int)BRK__CFG_WORDS; i++)
		uatomic_set(&r->cfg[i], w[i]);
}

int brk__config_in(const struct brk_config *user, struct brk_config *out)
{
	int rc = 0;

	brk_config_init_sz(out, sizeof(*out));
	if (user)
		rc = brk__struct_in(out, sizeof(*out), user,
				    user->size ? user->size : BRK_CONFIG_SIZE_VER0);
	out->size = sizeof(*out);
	return rc;
}

void (brk_config_init)(struct brk_config *c)
{
	brk_config_init_sz(c, BRK_CONFIG_SIZE_VER0);
}
