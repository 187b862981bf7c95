/* config.c - breaker settings: defaults, validation, shm words. */
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
	CHECK(c->failure_threshold >= 1 && c->failure_threshold <= 1000000,
	      "failure_threshold");
	CHECK(c->failure_rate_pct <= 100, "failure_rate_pct");
	CHECK(c->window_ms >= 1 && c->window_ms <= BRK_MAX_DURATION_MS,
	      "window_ms");
	CHECK(c->min_calls <= 1000000000u, "min_calls");
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
	CHECK(c->success_threshold >= 1 && c->success_threshold <= 1000000,
	      "success_threshold");
	CHECK(c->probe_timeout_ms >= 1 &&
	      c->probe_timeout_ms <= BRK_MAX_DURATION_MS, "probe_timeout_ms");
	CHECK(c->max_wait_ms <= BRK_MAX_DURATION_MS, "max_wait_ms");
	CHECK(c->max_concurrent <= BRK_MAX_CONCURRENT, "max_concurrent");
	CHECK(c->min_distinct_processes <= BRK_MAX_QUORUM,
	      "min_distinct_processes");
	return 0;
}

void brk__config_store(struct brk__record *r, const struct brk_config *c)
{
	uatomic_set(&r->cfg[BRK__CFG_FAILURE_THRESHOLD], c->failure_threshold);
	uatomic_set(&r->cfg[BRK__CFG_FAILURE_RATE], c->failure_rate_pct);
	uatomic_set(&r->cfg[BRK__CFG_WINDOW_MS], c->window_ms);
	uatomic_set(&r->cfg[BRK__CFG_MIN_CALLS], c->min_calls);
	uatomic_set(&r->cfg[BRK__CFG_SLOW_CALL_MS], c->slow_call_ms);
	uatomic_set(&r->cfg[BRK__CFG_SLOW_RATE], c->slow_rate_pct);
	uatomic_set(&r->cfg[BRK__CFG_OPEN_MS], c->open_ms);
	uatomic_set(&r->cfg[BRK__CFG_MAX_OPEN_MS], c->max_open_ms);
	uatomic_set(&r->cfg[BRK__CFG_HALF_OPEN_PROBES], c->half_open_probes);
	uatomic_set(&r->cfg[BRK__CFG_SUCCESS_THRESHOLD], c->success_threshold);
	uatomic_set(&r->cfg[BRK__CFG_PROBE_TIMEOUT_MS], c->probe_timeout_ms);
	uatomic_set(&r->cfg[BRK__CFG_MAX_WAIT_MS], c->max_wait_ms);
	uatomic_set(&r->cfg[BRK__CFG_MAX_CONCURRENT], c->max_concurrent);
	uatomic_set(&r->cfg[BRK__CFG_MIN_DISTINCT], c->min_distinct_processes);
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void brk__config_load(const struct brk__record *r, struct brk_config *c)
{
	c->failure_threshold = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_FAILURE_THRESHOLD), 1, 1000000);
	c->failure_rate_pct = (uint32_t)clamp(brk__cfg(r, BRK__CFG_FAILURE_RATE), 0, 100);
	c->window_ms = clamp(brk__cfg(r, BRK__CFG_WINDOW_MS), 1, BRK_MAX_DURATION_MS);
	c->min_calls = (uint32_t)clamp(brk__cfg(r, BRK__CFG_MIN_CALLS), 0, 1000000000u);
	c->slow_call_ms = clamp(brk__cfg(r, BRK__CFG_SLOW_CALL_MS), 0, BRK_MAX_DURATION_MS);
	c->slow_rate_pct = (uint32_t)clamp(brk__cfg(r, BRK__CFG_SLOW_RATE), 0, 100);
	c->open_ms = clamp(brk__cfg(r, BRK__CFG_OPEN_MS), 1, BRK_MAX_DURATION_MS);
	c->max_open_ms = clamp(brk__cfg(r, BRK__CFG_MAX_OPEN_MS), c->open_ms,
			       BRK_MAX_DURATION_MS);
	c->half_open_probes = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_HALF_OPEN_PROBES), 1, BRK_MAX_PROBES);
	c->success_threshold = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_SUCCESS_THRESHOLD), 1, 1000000);
	c->probe_timeout_ms = clamp(brk__cfg(r, BRK__CFG_PROBE_TIMEOUT_MS), 1,
				    BRK_MAX_DURATION_MS);
	c->max_wait_ms = clamp(brk__cfg(r, BRK__CFG_MAX_WAIT_MS), 0, BRK_MAX_DURATION_MS);
	c->max_concurrent = (uint32_t)clamp(brk__cfg(r, BRK__CFG_MAX_CONCURRENT), 0,
					    BRK_MAX_CONCURRENT);
	c->min_distinct_processes = (uint32_t)clamp(
		brk__cfg(r, BRK__CFG_MIN_DISTINCT), 0, BRK_MAX_QUORUM);
}
