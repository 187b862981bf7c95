/*
 * py_info.c - snapshots as dicts with the fields of `bctl inspect --json`.
 */
#include "py_core.h"

/* ---- info dicts --------------------------------------------------------- */

PyObject *brkpy_make_info(const struct brk_info *in)
{
	static const struct { const char *key; int reason; } rk[] = {
		{ "timeout", BRK_REASON_TIMEOUT },
		{ "connect", BRK_REASON_CONNECT },
		{ "server_error", BRK_REASON_SERVER_ERROR },
		{ "overloaded", BRK_REASON_OVERLOADED },
		{ "rate_limited", BRK_REASON_RATE_LIMITED },
		{ "other", BRK_REASON_OTHER },
	};
	const struct brk_counters *c = &in->counters;
	PyObject *d = PyDict_New(), *x = NULL, *l, *r;
	size_t i, n;
	uint64_t cum = 0; /* hold_time: the cumulative count */
	int rc;
	uint32_t bound;

	if (!d)
		return NULL;
	if (PUTS(d, "name", in->name) || PUTS(d, "kind", "breaker") ||
	    PUTS(d, "state", brk_state_name(in->state)) ||
	    PUTS(d, "mode", brk_mode_name(in->mode)) ||
	    PUTU(d, "generation", in->generation_full) ||
	    PUTU(d, "consecutive_failures", in->consecutive_failures) ||
	    PUTU(d, "failure_streak", in->failure_streak) ||
	    PUTU(d, "cooling_level", in->cooling_level) ||
	    PUTU(d, "open_remaining_ms", in->open_remaining_ms) ||
	    PUTU(d, "cool_until_remaining_ms", in->cool_until_remaining_ms) ||
	    PUTU(d, "half_open_successes", in->half_open_successes) ||
	    PUTU(d, "probes_in_flight", in->probes_in_flight) ||
	    PUTU(d, "in_flight", in->in_flight) ||
	    PUTU(d, "record_bytes", in->record_bytes))
		goto fail;
	if (!(x = PyList_New(0)))
		goto fail;
	n = in->n_leases < sizeof(in->leases) / sizeof(in->leases[0])
		    ? in->n_leases : sizeof(in->leases) / sizeof(in->leases[0]);
	for (i = 0; i < n; i++) {
		l = PyDict_New();
		if (!l || PUTI(l, "pid", in->leases[i].pid) ||
		    PUTS(l, "kind", brk_lease_kind_name(in->leases[i].kind)) ||
		    PUTU(l, "age_ms", in->leases[i].age_ms) || PyList_Append(x, l)) {
			Py_XDECREF(l);
			goto fail;
		}
		Py_DECREF(l);
	}
	if (brkpy_put(d, "leases", x))
		goto fail_nox;
	if (!(x = PyDict_New()) || PUTU(x, "calls", in->window_calls) ||
	    PUTU(x, "failures", in->window_failures) || PUTU(x, "slow", in->window_slow) ||
	    PUTU(x, "distinct_failing_processes", in->distinct_failing_processes))
		goto fail;
	if (brkpy_put(d, "window", x))
		goto fail_nox;
	if (brkpy_put(d, "config", brkpy_cfg_to_dict(&in->config)))
		goto fail;
	/* as bctl inspect --json: the breaker's implicit pace's rate, or None */
	if (brkpy_put(d, "implicit_pace_per_s", in->implicit_pace_per_s > 0.0 ?
		      PyFloat_FromDouble(in->implicit_pace_per_s) :
		      (Py_INCREF(Py_None), Py_None)))
		goto fail_nox;
	/* the bulkhead's limit now (learned with max_concurrent auto) and,
	 * learned, the latencies it follows; as `bctl inspect --json` */
	/* waiters in the bulkhead's queue, None without a bulkhead: as
	 * `bctl inspect --json` */
	if (brkpy_put(d, "queued", in->config.max_concurrent ||
			      in->config.concurrency_auto ?
		      PyLong_FromUnsignedLongLong(in->queued) :
		      (Py_INCREF(Py_None), Py_None)))
		goto fail_nox;
	if (PUTD(d, "concurrency_limit", in->concurrency_limit) ||
	    brkpy_put(d, "latency_baseline_us", in->config.concurrency_auto ?
		      PyLong_FromUnsignedLongLong(in->latency_baseline_us) :
		      (Py_INCREF(Py_None), Py_None)) ||
	    brkpy_put(d, "latency_recent_us", in->config.concurrency_auto ?
		      PyLong_FromUnsignedLongLong(in->latency_recent_us) :
		      (Py_INCREF(Py_None), Py_None)))
		goto fail_nox;
	if (!(x = PyDict_New()) || PUTU(x, "allowed", c->allowed) ||
	    PUTU(x, "rejected_open", c->rejected_open) ||
	    PUTU(x, "rejected_cooling", c->rejected_cooling) ||
	    PUTU(x, "rejected_full", c->rejected_full) ||
	    PUTU(x, "successes", c->successes) || PUTU(x, "failures", c->failures) ||
	    PUTU(x, "healthy_errors", c->healthy_errors) ||
	    PUTU(x, "ignored", c->ignored) || PUTU(x, "cancelled", c->cancelled) ||
	    PUTU(x, "throttled", c->throttled) ||
	    PUTU(x, "probes", c->probes) || PUTU(x, "reclaimed", c->reclaimed) ||
	    PUTU(x, "transitions", c->transitions) || PUTU(x, "stale", c->stale))
		goto fail;
	if (!(r = PyDict_New()))
		goto fail;
	for (i = 0; i < sizeof(rk) / sizeof(rk[0]); i++)
		if (PUTU(r, rk[i].key, c->failures_by_reason[rk[i].reason])) {
			Py_DECREF(r);
			goto fail;
		}
	if (brkpy_put(x, "failures_by_reason", r))
		goto fail;
	if (brkpy_put(d, "counters", x))
		goto fail_nox;
	/* the "signals" of `bctl inspect --json` (docs/design/cli.md "Signals") */
	if (!(x = PyDict_New()) || PUTU(x, "arrivals", in->arrivals) ||
	    PUTU(x, "completions", in->completions) ||
	    PUTU(x, "in_flight", (uint64_t)in->in_flight + in->probes_in_flight) ||
	    PUTU(x, "oldest_in_flight_ms", in->oldest_in_flight_ms) ||
	    PUTU(x, "max_concurrent", in->config.max_concurrent) ||
	    PUTU(x, "half_open_probes", in->config.half_open_probes))
		goto fail;
	bound = in->config.concurrency_auto ? (uint32_t)in->concurrency_limit
					    : in->config.max_concurrent;
	if (bound == 0)
		rc = PyDict_SetItemString(x, "remaining_concurrent", Py_None);
	else
		rc = PUTU(x, "remaining_concurrent",
			  in->in_flight < bound ? bound - in->in_flight : 0);
	if (rc)
		goto fail;
	if (brkpy_put(d, "signals", x))
		goto fail_nox;
	/* "hold_time": permit hold time, as `bctl inspect --json` */
	if (!(x = PyDict_New()) || PUTS(x, "state", brk_hold_state_name(in->hold.state)) ||
	    PUTU(x, "count", in->hold.count) || PUTU(x, "sum_us", in->hold.sum_us))
		goto fail;
	if (!(l = PyList_New(0)))
		goto fail;
	/* cumulative counts, the last "le" "+Inf": bctl inspect --json's */
	for (i = 0; i < BRK_HOLD_BUCKETS; i++) {
		uint64_t b = brk_hold_bound_us((unsigned)i);
		PyObject *e = PyDict_New(), *le;

		cum += in->hold.bucket[i];
		le = b == UINT64_MAX ? PyUnicode_FromString("+Inf")
				     : PyFloat_FromDouble((double)b / 1e6);
		if (!e || !le || PyDict_SetItemString(e, "le", le) ||
		    PUTU(e, "count", cum) || PyList_Append(l, e)) {
			Py_XDECREF(le);
			Py_XDECREF(e);
			Py_DECREF(l);
			goto fail;
		}
		Py_DECREF(le);
		Py_DECREF(e);
	}
	if (brkpy_put(x, "buckets", l))
		goto fail;
	if (brkpy_put(d, "hold_time", x))
		goto fail_nox;
	return d;
fail:
	Py_XDECREF(x);
fail_nox:
	Py_DECREF(d);
	return NULL;
}

static PyObject *age_or_none(uint64_t ms)
{
	if (ms == UINT64_MAX)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLongLong(ms);
}

/* "pace" of a paced bucket, as bctl_limits_out.c's json_pace() */
static PyObject *make_pace_info(const struct brk_bucket_info *b)
{
	return Py_BuildValue("{s:d,s:d,s:d,s:d,s:I,s:O,s:O,s:d,s:N,s:N,s:{s:K,s:K,s:K,s:K}}",
			     "rate", b->learned_per_s, "ceiling", b->ceiling_per_s,
			     "floor", b->floor_per_s, "w_max", b->w_max_per_s,
			     "reserve_pct", (unsigned)b->reserve_pct,
			     "fleet", b->fleet ? Py_True : Py_False,
			     "implicit", b->implicit ? Py_True : Py_False,
			     "accepted_per_s", b->accepted_per_s,
			     "last_cut_age_ms", age_or_none(b->last_cut_age_ms),
			     "last_denied_age_ms", age_or_none(b->last_denied_age_ms),
			     "counters", "cuts", (unsigned long long)b->cuts,
			     "limited", (unsigned long long)b->limited,
			     "ok", (unsigned long long)b->ok,
			     "high_taken", (unsigned long long)b->high_taken);
}

/* The fields and shape of `bctl inspect --json` for a bucket / budget. */
PyObject *brkpy_make_bucket_info(const struct brk_bucket_info *b)
{
	uint64_t full_ms = b->full_in_ns / 1000000u + (b->full_in_ns % 1000000u != 0);
	PyObject *d;

	d = Py_BuildValue("{s:s,s:s,s:O,s:d,s:I,s:K,s:d,s:K,s:{s:K,s:K,s:K}}",
			     "name", b->name, "kind", "bucket",
			     "configured", b->configured ? Py_True : Py_False,
			     "rate_per_s", b->rate_per_s, "burst", (unsigned)b->burst,
			     "interval_ns", (unsigned long long)b->interval_ns,
			     "tokens", b->tokens, "full_in_ms", (unsigned long long)full_ms,
			     "counters", "taken", (unsigned long long)b->taken,
			     "denied", (unsigned long long)b->denied,
			     "tokens_taken", (unsigned long long)b->tokens_taken);
	if (!d)
		return NULL;
	/* only paces carry the keys, as in bctl: a plain bucket's dict is
	 * unchanged */
	if (b->paced && (brkpy_put(d, "paced", PyBool_FromLong(1)) ||
			 brkpy_put(d, "pace", make_pace_info(b))))
		goto fail;
	return d;
fail:
	Py_XDECREF(d);
	return NULL;
}

PyObject *brkpy_make_budget_info(const struct brk_budget_info *g)
{
	uint64_t all = g->deposits + g->retries;

	return Py_BuildValue("{s:s,s:s,s:O,s:d,s:d,s:I,s:d,s:d,s:d,s:{s:K,s:K,s:K,s:K},"
			     "s:{s:K,s:K,s:d,s:d}}",
			     "name", g->name, "kind", "budget",
			     "configured", g->configured ? Py_True : Py_False,
			     "floor_per_s", g->floor_per_s, "ratio", g->ratio,
			     "floor_burst", (unsigned)g->floor_burst,
			     "balance", g->balance, "pool", g->pool,
			     "floor_tokens", g->floor_tokens,
			     "counters", "deposits", (unsigned long long)g->deposits,
			     "retries", (unsigned long long)g->retries,
			     "retries_floor", (unsigned long long)g->retries_floor,
			     "deferred", (unsigned long long)g->deferred,
			     "signals", "first_attempts", (unsigned long long)g->deposits,
			     "retries", (unsigned long long)g->retries,
			     "retry_share", all ? (double)g->retries / (double)all : 0.0,
			     "tokens_left", g->balance);
}
