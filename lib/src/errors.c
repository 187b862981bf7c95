/* errors.c - brk_strerror() and the names of enums. */
#include <string.h>

#include "internal.h"

const char *brk_strerror(int code)
{
	if (code < 0) {
		if (code < -0x7fffffff) /* -INT_MIN would overflow */
			return "unknown error";
		code = -code;
	}
	switch (code) {
	case 0:
		return "success";
	case BRK_EOPEN:
		return "refused: circuit breaker open";
	case BRK_EFULL:
		return "refused: bulkhead full";
	case BRK_ECOOLING:
		return "refused: cooling down after a Retry-After";
	case BRK_EDEFERRED:
		return "refused: retry budget exhausted (deferred)";
	case BRK_ESTALE:
		return "not counted: permit is stale (lease reclaimed, breaker "
		       "reset or in a newer generation, or released twice)";
	case BRK_ECORRUPT:
		return "segment content is corrupt";
	case BRK_ECONTENDED:
		return "gave up after a bounded number of CAS attempts";
	case BRK_ENOTOKENS:
		return "refused: rate limit, not enough tokens in the bucket now";
	case BRK_EEXPIRED:
		return "refused: the deadline would pass before the wait ends";
	case BRK_EUNTRUSTED:
		return "segment owned by an untrusted user (trusted: root, "
		       "our own uid, the system user breakerd, the users in "
		       "$BREAKERD_TRUSTED_OWNERS)";
	case BRK_ETRUNCATED:
		return "segment truncated: shorter than its header says, its "
		       "records are lost (stop its users, bctl segment remove, "
		       "restart breakerd)";
	case EPROTO:
		return "not a breakerd segment of this layout version";
	case ENOSPC:
		return "no space: the segment's arena (record storage) or record "
		       "capacity is full, or /dev/shm is; recreate the segment "
		       "bigger (breakerd --arena-mb N / --capacity N)";
	case EROFS:
		return "segment is attached read-only";
	case EMEDIUMTYPE:
		return "record exists with another kind (breaker, bucket or "
		       "retry budget)";
	case EXDEV:
		return "segment was created in another pid or time namespace";
	case EALREADY:
		return "already in that state";
	case EMFILE:
		return "this thread has a fleet origin set on too many segment "
		       "handles (brk_set_origin(seg, NULL) on one it is done with)";
	case ETIMEDOUT:
		return "timed out waiting for the segment to be initialised";
	case E2BIG:
		return "struct from a newer breaker.h sets fields this "
		       "libbreaker does not know (see \"Growing structs\" "
		       "in breaker.h)";
	default:
		return strerror(code);
	}
}

int brk_is_refusal(int code)
{
	return code == -BRK_EOPEN || code == -BRK_EFULL ||
	       code == -BRK_ECOOLING || code == -BRK_EDEFERRED ||
	       code == -BRK_ECONTENDED || code == -BRK_ENOTOKENS ||
	       code == -BRK_EEXPIRED;
}

const char *brk_state_name(int state)
{
	switch (state) {
	case BRK_CLOSED:
		return "closed";
	case BRK_OPEN:
		return "open";
	case BRK_HALF_OPEN:
		return "half_open";
	default:
		return "unknown";
	}
}

const char *brk_outcome_name(int outcome)
{
	static const char *const n[] = {
		[BRK_SUCCESS] = "success",
		[BRK_FAILURE] = "failure",
		[BRK_HEALTHY_ERROR] = "healthy_error",
		[BRK_REJECTED_REQUEST] = "rejected_request",
		[BRK_CANCELLED] = "cancelled",
		[BRK_THROTTLED] = "throttled",
	};
	if (outcome < BRK_SUCCESS || outcome > BRK_THROTTLED)
		return "unknown";
	return n[outcome];
}

const char *brk_reason_name(int reason)
{
	static const char *const n[BRK_REASON_COUNT] = {
		[BRK_REASON_NONE] = "none",
		[BRK_REASON_TIMEOUT] = "timeout",
		[BRK_REASON_CONNECT] = "connect",
		[BRK_REASON_SERVER_ERROR] = "server_error",
		[BRK_REASON_OVERLOADED] = "overloaded",
		[BRK_REASON_RATE_LIMITED] = "rate_limited",
		[BRK_REASON_OTHER] = "other",
	};
	if (reason < 0 || reason >= BRK_REASON_COUNT)
		return "unknown";
	return n[reason];
}

const char *brk_cause_name(int cause)
{
	static const char *const n[] = {
		[BRK_CAUSE_NONE] = "none",
		[BRK_CAUSE_OPEN] = "open",
		[BRK_CAUSE_PROBES_BUSY] = "probes_busy",
		[BRK_CAUSE_FORCED_OPEN] = "forced_open",
		[BRK_CAUSE_COOLING] = "cooling",
		[BRK_CAUSE_FULL] = "bulkhead_full",
		[BRK_CAUSE_CONTENDED] = "contended",
		[BRK_CAUSE_PACED] = "paced",
	};
	if (cause < BRK_CAUSE_NONE || cause > BRK_CAUSE_PACED)
		return "none";
	return n[cause];
}

const char *brk_mode_name(int mode)
{
	switch (mode) {
	case BRK_MODE_NORMAL:
		return "normal";
	case BRK_MODE_FORCED_OPEN:
		return "forced_open";
	case BRK_MODE_DISABLED:
		return "disabled";
	case BRK_MODE_METRICS_ONLY:
		return "metrics_only";
	default:
		return "unknown";
	}
}

const char *brk_kind_name(int kind)
{
	switch (kind) {
	case BRK_KIND_BREAKER:
		return "breaker";
	case BRK_KIND_BUCKET:
		return "bucket";
	case BRK_KIND_BUDGET:
		return "budget";
	default:
		return "unknown";
	}
}

const char *brk_lease_kind_name(int kind)
{
	return kind == BRK_LEASE_PROBE ? "probe"
	       : kind == BRK_LEASE_PERMIT ? "permit" : "unknown";
}

const char *brk_event_reason_name(int reason)
{
	static const char *const n[] = {
		[BRK_EV_THRESHOLD] = "threshold",
		[BRK_EV_COOLED] = "cooled",
		[BRK_EV_PROBE_OK] = "probe_ok",
		[BRK_EV_PROBE_FAILED] = "probe_failed",
		[BRK_EV_RETRY_AFTER] = "retry_after",
		[BRK_EV_TRIP] = "trip",
		[BRK_EV_RESET] = "reset",
		[BRK_EV_RECLAIM_DEAD] = "reclaim_dead_owner",
		[BRK_EV_RECLAIM_TIMEOUT] = "reclaim_probe_timeout",
		[BRK_EV_COOL_UNTIL] = "cool_until",
		[BRK_EV_FAILURE_RATE] = "failure_rate",
		[BRK_EV_SLOW_RATE] = "slow_rate",
		[BRK_EV_FORCED] = "forced",
		[BRK_EV_RETIRED] = "retired",
		[BRK_EV_PACE_CUT] = "pace_cut",
		[BRK_EV_HEALTH] = "health",
		[BRK_EV_FLEET_LINK] = "fleet_link",
		[BRK_EV_PACE_IMPLICIT] = "pace_implicit",
		[BRK_EV_HALF_OPEN] = "half_open",
	};
	if (reason < BRK_EV_THRESHOLD ||
	    (size_t)reason >= sizeof(n) / sizeof(n[0]) || !n[reason])
		return "unknown";
	return n[reason];
}
