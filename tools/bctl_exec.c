/*
 * bctl_exec.c - `bctl exec NAME [options] -- CMD [ARG...]`: run CMD under
 * a permit of the breaker NAME and report how it went.
 *
 * Admission is one brk_admit() per attempt (breaker.h "Admission": the
 * breaker with its bulkhead, then the pace, then the retry budget, in that
 * fixed order) with --priority (high may use the bulkhead's reserve_pct
 * and the pace's reserve), and the release one brk_admit_release() with
 * the verdict. Refused (open, cooling, bulkhead full, no token) -> CMD is
 * not run, exit 75 with one line saying why and for how long. --wait DUR
 * is brk_admit()'s max_wait_ms: the waits it sleeps (cooling, an open
 * breaker's time left, a busy probe, a pace's token, a place in a
 * bulkhead's queue) come out of DUR in total. Without --wait, brk_admit()
 * sleeps nothing (max_wait_ms 0), and a refusal by the breaker's implicit
 * pace (cause "paced") is slept out here, up to the breaker's max_wait_ms
 * in all (issue 21) - brk_admit() has one max_wait_ms for every wait, and
 * the breaker's (5 min by default) would also sleep out open breakers and
 * full bulkheads that plain `bctl exec NAME` refuses at once. Signals:
 * bctl_exec_admit.c. Otherwise the permit is held while CMD runs
 * (bctl_run.c) and released with the verdict of bctl_outcome.c; bctl
 * exits with CMD's status.
 *
 * Retries (--retries N [--retry-budget BUDGET]): a run whose verdict is a
 * failure (non-zero exit not in --healthy-exit/--ignore-exit, timeout,
 * rate-limit or overload sign) is run again, up to N more times. Before
 * each retry:
 *  - the wait is the backoff brk_backoff_ms(BRK_JITTER_EQUAL, 100 ms, 5 s,
 *    retry number) - or the Retry-After the failed run reported, if that
 *    is longer. A Retry-After is a wait the upstream asked for, so it is
 *    charged to --wait (one total for the whole invocation, shared with
 *    the waits brk_admit() sleeps); one that does not fit in what is
 *    left of --wait (0 without --wait) ends the retries: exit 75, one line;
 *  - with --retry-budget, one retry token is withdrawn
 *    (brk_retry_permitted()); an exhausted budget ends the retries: exit
 *    75 with "NAME: retry budget BUDGET exhausted (deferred)", without
 *    sleeping on it. The first attempt deposits (brk_admit() with the
 *    budget, BRK_FIRST_ATTEMPT: step 4, once the breaker and the pace
 *    admitted it): an invocation refused at once sent nothing and earns
 *    no retries. A retry withdraws here, before its backoff, not in
 *    brk_admit() (BRK_RETRY asks the budget last, after sleeping on the
 *    breaker and taking a pace token, which a deferred retry would
 *    waste). The budget is created with the defaults (10/s, 0.2) if
 *    absent;
 *  - the retry goes through the breaker again (a refusal: exit 75 as
 *    usual).
 * A run that was interrupted, cancelled or could not be started is not
 * retried. When the retries are used up bctl exits with the last run's
 * status. Every run's output passes through.
 *
 * Pacing (--pace PACE, bctl_exec_pace.c; NAME is then optional): after the
 * breaker admits (or without NAME), brk_admit() takes one token from the
 * pace with --priority, sleeping while it fits in what is left of --wait;
 * otherwise exit 75, "PACE: rate limited, next token in N ms (waited M ms
 * of --wait DUR)", and the breaker permit is released cancelled. After
 * CMD (brk_admit_release()), if PACE is a real pace (paced bucket), a
 * rate-limit answer (429; 503/529 with a Retry-After) is released to the
 * breaker as BRK_THROTTLED (counts neither way, sets no cool-until) and
 * reported to the pace as LIMITED with the token's taken_at (the pace cuts
 * its rate); a success is reported OK. If PACE is a plain bucket, the
 * answer stays a rate_limited failure (brk_admit_release()'s rule: a
 * bucket that learns nothing must not hide 429s from the breaker).
 * Each retry takes from the pace again.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bctl.h"
#include "bctl_exec_admit.h"
#include "bctl_exec_pace.h"
#include "bctl_outcome.h"
#include "bctl_run.h"

#define EXEC_MAX_WAITS 100 /* bound on the admit/sleep loop */
#define EXEC_MAX_RETRIES 100
#define EXEC_BACKOFF_BASE_MS 100
#define EXEC_BACKOFF_CAP_MS 5000
#define EXEC_BUDGET_TRIES 100 /* -EAGAIN: tries, 1 ms apart */

enum {
	OPT_TIMEOUT = BCTL_OPT_FIRST_CMD,
	OPT_WAIT,
	OPT_HEALTHY,
	OPT_IGNORE,
	OPT_RETRIES,
	OPT_RETRY_BUDGET,
	OPT_PACE,
	OPT_PRIORITY
};

struct exec_opts {
	const char *name;    /* the breaker, or NULL (only with --pace) */
	const char *label;   /* name, else the pace: for messages */
	const char *pace;    /* --pace, or NULL */
	const char *wait_arg; /* --wait as given */
	char **cmd;
	uint64_t timeout_ms; /* 0: none */
	uint64_t wait_ms;
	int has_wait;
	uint8_t healthy[CLI_CODE_SET_BYTES];
	uint8_t ignore[CLI_CODE_SET_BYTES];
	uint64_t retries;    /* --retries; 0: none */
	int has_retries;
	const char *budget;  /* --retry-budget, or NULL */
	int priority;        /* --priority: enum brk_priority */
};

const struct option bctl_opts_exec[] = {
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "healthy-exit", required_argument, NULL, OPT_HEALTHY },
	{ "ignore-exit", required_argument, NULL, OPT_IGNORE },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "retry-budget", required_argument, NULL, OPT_RETRY_BUDGET },
	{ "pace", required_argument, NULL, OPT_PACE },
	{ "priority", required_argument, NULL, OPT_PRIORITY },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static int exec_opt(int c, struct exec_opts *o)
{
	switch (c) {
	case OPT_TIMEOUT:
		if (cli_opt_duration("--timeout", optarg, &o->timeout_ms))
			return CLI_EXIT_USAGE;
		return o->timeout_ms ? 0 :
		       cli_usage_error("--timeout: must be at least 1ms");
	case OPT_WAIT:
		o->has_wait = 1;
		o->wait_arg = optarg;
		return cli_opt_duration("--wait", optarg, &o->wait_ms);
	case OPT_HEALTHY:
		return cli_opt_code_set("--healthy-exit", optarg, o->healthy);
	case OPT_IGNORE:
		return cli_opt_code_set("--ignore-exit", optarg, o->ignore);
	case OPT_RETRIES:
		o->has_retries = 1;
		if (optarg[0] == '-')
			return cli_usage_error("--retries: '%s' is negative: must be "
					       "0..%d", cli_q(optarg),
					       EXEC_MAX_RETRIES);
		return cli_opt_uint("--retries", optarg, 0, EXEC_MAX_RETRIES,
				    &o->retries);
	case OPT_RETRY_BUDGET:
		o->budget = optarg;
		return 0;
	case OPT_PACE:
		o->pace = optarg;
		return bctl_check_name(optarg);
	case OPT_PRIORITY:
		if (strcmp(optarg, "high") == 0)
			o->priority = BRK_PRIORITY_HIGH;
		else if (strcmp(optarg, "normal") == 0)
			o->priority = BRK_PRIORITY_NORMAL;
		else
			return cli_usage_error("--priority: '%s' is not high or "
					       "normal", cli_q(optarg));
		return 0;
	}
	return BCTL_CONTINUE;
}

/* Options and NAME come before "--"; CMD after it. */
static int exec_parse(struct bctl *g, int argc, char **argv,
		      struct exec_opts *o)
{
	int dd, c, rc;

	for (dd = 1; dd < argc && strcmp(argv[dd], "--") != 0; dd++)
		;
	optind = 0;
	/* Without "--", stop at NAME: what follows may be CMD's options. */
	while ((c = bctl_getopt(dd, argv, dd == argc ? "+:hv" : ":hv",
				bctl_opts_exec)) != -1) {
		rc = exec_opt(c, o);
		if (rc == BCTL_CONTINUE)
			rc = bctl_opt_common(g, c, dd, argv);
		else if (rc == 0)
			continue;
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	if (dd >= argc - 1)
		return cli_usage_error("exec: missing '-- CMD [ARG...]'");
	/* NAME is optional with --pace. */
	if (!o->pace && optind == dd)
		return cli_usage_error("exec: missing breaker NAME (or --pace "
				       "PACE)");
	rc = o->pace && optind == dd ? 0 :
	     bctl_name_arg("exec", dd, argv, &o->name);
	if (rc)
		return rc;
	o->label = o->name ? o->name : o->pace;
	if (o->budget && !o->has_retries)
		return cli_usage_error("exec: --retry-budget needs --retries N");
	if (o->budget && bctl_check_name(o->budget))
		return CLI_EXIT_USAGE;
	o->cmd = argv + dd + 1;
	return BCTL_CONTINUE;
}

/* A forwarded signal already pending, or 0. */
static int exec_pending(const sigset_t *sigs)
{
	struct timespec zero = { 0, 0 };
	int sig = sigtimedwait(sigs, NULL, &zero);

	return sig > 0 ? sig : 0;
}

/* Sleep @ms unless a forwarded signal comes first: returns it, or 0. */
static int exec_sleep(const sigset_t *sigs, uint64_t ms)
{
	return exec_sleep_ns(sigs, ms * 1000000ull);
}

/* One line on stderr for a refusal; returns 75 (or 1 for other errors). */
static int exec_refused(const struct bctl *g, const struct exec_opts *o,
			int rc, const struct brk_refusal *why)
{
	char by[BRK_NAME_MAX + 16] = "";
	unsigned long long ms = (unsigned long long)why->wait_ms;

	if (why->by[0] && strncmp(why->by, o->label, sizeof(why->by)) != 0)
		snprintf(by, sizeof(by), ", by '%s'", cli_q(why->by));
	if (rc == -BRK_EOPEN && why->cause == BRK_CAUSE_FORCED_OPEN)
		cli_note("%s: forced open%s (until 'bctl reset')", o->label, by);
	else if (rc == -BRK_EOPEN && why->cause == BRK_CAUSE_PROBES_BUSY)
		cli_note("%s: half-open, probe in flight%s, retry in %llu ms",
			 o->label, by, ms);
	else if (rc == -BRK_EOPEN && ms)
		cli_note("%s: open%s, retry in %llu ms", o->label, by, ms);
	else if (rc == -BRK_EOPEN)
		cli_note("%s: open%s", o->label, by);
	else if (rc == -BRK_ECOOLING && why->cause == BRK_CAUSE_PACED)
		cli_note("%s: paced (its implicit pace %s:pace), next token in %llu ms"
			 "%s", o->label, o->label, ms, o->has_wait ?
			 " (longer than --wait)" : " (longer than max_wait_ms)");
	else if (rc == -BRK_ECOOLING)
		cli_note("%s: cooling (Retry-After%s), wait %llu ms%s", o->label, by,
			 ms, o->has_wait ? " (longer than --wait)" : "");
	else if (rc == -BRK_EFULL)
		cli_note("%s: bulkhead full%s", o->label, by);
	else if (rc == -BRK_EDEFERRED)
		cli_note("%s: retry budget exhausted%s", o->label, by);
	else if (rc == -BRK_ECONTENDED)
		cli_note("%s: not admitted (contended), try again later", o->label);
	else
		return bctl_fail(g, o->label, rc);
	return BCTL_EXIT_TEMPFAIL;
}

/* The breaker's max_wait_ms: how long a paced wait may be without --wait. */
static uint64_t exec_max_wait(brk_breaker *b)
{
	struct brk_info *i = calloc(1, sizeof(*i));
	uint64_t ms = BRK_DEFAULT_MAX_WAIT_MS;

	if (i && brk_breaker_info(b, i) == 0)
		ms = i->config.max_wait_ms;
	free(i);
	return ms;
}

/* What one attempt runs with: the records, the admission, the clock. */
struct exec_ctx {
	brk_segment *seg;
	brk_breaker *b;        /* NULL: --pace without NAME */
	struct exec_pace *pace; /* NULL: no --pace */
	brk_budget *u;         /* NULL: no --retry-budget */
	struct brk_admission adm;
};

/* The line for brk_admit()'s refusal @rc (75), or its error (1). */
static int exec_admit_refused(const struct bctl *g, const struct exec_opts *o,
			      const struct exec_ctx *c, int rc,
			      uint64_t waited_ns)
{
	const struct brk_admission *a = &c->adm;
	struct brk_refusal why;

	if (a->code == BRK_ADMIT_RATE_LIMITED && c->pace)
		return exec_pace_refused(c->pace, a->wait_ms, waited_ns);
	if (a->code == BRK_ADMIT_RATE_LIMITED && c->b) {
		/* the breaker's implicit pace (NAME:pace): its slot is past
		 * --wait, or past max_wait_ms without it */
		memset(&why, 0, sizeof(why));
		why.wait_ms = a->wait_ms;
		why.cause = BRK_CAUSE_PACED;
		return exec_refused(g, o, -BRK_ECOOLING, &why);
	}
	if (a->code == BRK_ADMIT_EXPIRED) { /* no deadline is given: not seen */
		cli_note("%s: not admitted before its deadline (expired), next "
			 "chance in %" PRIu64 " ms", a->by[0] ? a->by : o->label,
			 a->wait_ms);
		return BCTL_EXIT_TEMPFAIL;
	}
	if (a->code < 0) /* an error of a gate's call, not a refusal */
		return bctl_fail(g, a->by[0] ? a->by : o->label, rc);
	memset(&why, 0, sizeof(why));
	why.wait_ms = a->wait_ms;
	why.cause = a->cause;
	memcpy(why.by, a->by, sizeof(why.by));
	return exec_refused(g, o, rc, &why);
}

/*
 * One brk_admit() for the attempt (the first deposits into the budget),
 * --wait its max_wait_ms (what is left of it: *@left, decremented by the
 * time it took). Without --wait a refusal by the breaker's implicit pace
 * (cause "paced") is slept out here and brk_admit() asked again, up to the
 * breaker's max_wait_ms in all. 0 (c->adm holds the admission) or a
 * status.
 */
static int exec_admit(const struct bctl *g, const struct exec_opts *o,
		      struct exec_ctx *c, int first, const sigset_t *sigs,
		      uint64_t *left)
{
	struct brk_admit_req q;
	uint64_t paced_left = UINT64_MAX, t0, took = 0, ms;
	int i, rc = 0, sig;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.breaker = c->b;
	q.pace = c->pace ? c->pace->k : NULL;
	q.budget = first ? c->u : NULL; /* a retry withdrew before its backoff */
	q.attempt = BRK_FIRST_ATTEMPT;
	q.priority = o->priority;
	/* plain `bctl exec NAME` waits for its implicit pace's turn (a fair
	 * reservation in brk_admit(), issue 25) up to the breaker's
	 * max_wait_ms, and for nothing else (issue 21) */
	if (!o->has_wait && c->b && !c->pace)
		q.pace_wait_ms = exec_max_wait(c->b);
	for (i = 0; i < EXEC_MAX_WAITS; i++) {
		q.max_wait_ms = o->has_wait ? *left : 0;
		t0 = brk_now_ns(c->seg);
		rc = exec_admit_sig(&q, &c->adm, sigs, &sig);
		took = brk_now_ns(c->seg) - t0;
		if (o->has_wait)
			*left -= took / 1000000u < *left ? took / 1000000u : *left;
		if (sig) {
			if (rc == 0)
				brk_admit_release(&c->adm, BRK_CANCELLED,
						  BRK_REASON_NONE, 0);
			return 128 + sig;
		}
		if (rc == 0) {
			if (g->verbose && c->adm.wait_ms)
				cli_note("%s: admitted after waiting %" PRIu64 " ms",
					 o->label, c->adm.wait_ms);
			return 0;
		}
		if (rc == -BRK_ECONTENDED && c->pace &&
		    strcmp(c->adm.by, c->pace->name) == 0)
			continue; /* the pace's CAS gave up: take again at once */
		if (rc != -BRK_ECOOLING || c->adm.cause != BRK_CAUSE_PACED ||
		    o->has_wait)
			break;
		/* the implicit pace without --wait (issue 21) */
		if (paced_left == UINT64_MAX)
			paced_left = exec_max_wait(c->b);
		if (c->adm.wait_ms > paced_left)
			break;
		ms = c->adm.wait_ms ? c->adm.wait_ms : 1;
		if (g->verbose)
			cli_note("%s: paced, waiting %" PRIu64 " ms", o->label, ms);
		sig = exec_sleep(sigs, ms);
		if (sig)
			return 128 + sig;
		paced_left -= ms;
	}
	return exec_admit_refused(g, o, c, rc, took);
}

/* Release the admission with the verdict (brk_admit_release(): a paced
 * rate-limit answer becomes THROTTLED, the pace hears the answer). */
static void exec_release(const struct bctl *g, const struct exec_opts *o,
			 struct exec_ctx *c, const struct exec_verdict *v)
{
	char why[64] = "", res[48] = "";
	uint64_t cuts = g->verbose && c->pace ? exec_pace_cuts(c->pace) : 0;
	int rc;

	rc = brk_admit_release(&c->adm, v->outcome, v->reason, v->retry_after_ms);
	if (!g->verbose)
		return; /* a stale release (-BRK_ESTALE) is no news */
	if (c->pace && exec_pace_cuts(c->pace) > cuts)
		cli_note("%s: rate limit answer: the rate was cut", c->pace->name);
	if (!c->b) {
		if (rc < 0)
			cli_note("%s: report not counted: %s", o->label,
				 brk_strerror(rc));
		return;
	}
	if (v->outcome == BRK_FAILURE && c->adm.outcome == BRK_FAILURE)
		snprintf(why, sizeof(why), " (%s)", brk_reason_name(v->reason));
	if (v->retry_after_ms > 0)
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 ", retry after %" PRId64 " ms", v->retry_after_ms);
	snprintf(res, sizeof(res), "%s", rc ? brk_strerror(rc) : "counted");
	cli_note("%s: released: %s%s: %s", o->name,
		 brk_outcome_name(c->adm.outcome ? c->adm.outcome : v->outcome),
		 why, res);
}

static int exec_start_failed(const struct bctl *g, const struct exec_opts *o,
			     struct exec_ctx *c, const struct run_result *r)
{
	struct exec_verdict v = { BRK_CANCELLED, BRK_REASON_NONE, 0 };

	exec_release(g, o, c, &v);
	if (!r->exec_failed)
		return cli_error("cannot run '%s': %s", cli_q(o->cmd[0]),
				 strerror(r->start_errno));
	cli_note("%s: %s", cli_q(o->cmd[0]), strerror(r->start_errno));
	return r->start_errno == ENOENT ? BCTL_EXIT_NOTFOUND : BCTL_EXIT_NOEXEC;
}

/*
 * Run CMD under the admission and release it with the verdict (in
 * *@vout). *@retry: set if the run failed in a way worth retrying.
 */
static int exec_run(const struct bctl *g, const struct exec_opts *o,
		    struct exec_ctx *c, const sigset_t *sigs,
		    const sigset_t *orig, struct exec_verdict *vout, int *retry)
{
	struct run_opts ro = { o->cmd, o->timeout_ms, sigs, orig };
	struct run_result r;
	struct exec_facts f;
	struct exec_verdict v;
	int sig = exec_pending(sigs);

	*retry = 0;
	if (sig) { /* interrupted before CMD started */
		v = (struct exec_verdict){ BRK_CANCELLED, BRK_REASON_NONE, 0 };
		exec_release(g, o, c, &v);
		return 128 + sig;
	}
	if (bctl_run(&ro, &r) < 0)
		return exec_start_failed(g, o, c, &r);
	f = (struct exec_facts){ r.status, r.timed_out, r.interrupted, &r.scan,
				 o->healthy, o->ignore };
	bctl_verdict(&f, &v);
	*retry = v.outcome == BRK_FAILURE && !r.interrupted;
	*vout = v;
	exec_release(g, o, c, &v);
	if (r.timed_out)
		cli_note("%s: '%s' timed out after %" PRIu64 " ms", o->label,
			 cli_q(o->cmd[0]), o->timeout_ms);
	return bctl_exit_status(&f);
}

static void exec_pause_1ms(void)
{
	struct timespec ts = { 0, 1000000L };

	nanosleep(&ts, NULL);
}

/* The budget named by --retry-budget, created with the defaults if absent. */
static int exec_budget(const struct bctl *g, const struct exec_opts *o,
		       brk_segment *seg, brk_budget **u)
{
	int rc = brk_budget_get(seg, o->budget, BRK_DEFAULT_BUDGET_FLOOR,
				BRK_DEFAULT_BUDGET_RATIO, u);

	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, o->budget, BRK_KIND_BUDGET);
	return rc < 0 ? bctl_fail(g, o->budget, rc) : 0;
}

/* One retry token, or a status (75 deferred, 1 error). */
static int exec_withdraw(const struct bctl *g, const struct exec_opts *o,
			 brk_budget *u)
{
	int i, rc = -EAGAIN;

	for (i = 0; i < EXEC_BUDGET_TRIES && rc == -EAGAIN; i++) {
		rc = brk_retry_permitted(u);
		if (rc == -EAGAIN)
			exec_pause_1ms();
	}
	if (rc == 0)
		return 0;
	if (rc == -BRK_EDEFERRED || rc == -BRK_ECONTENDED || rc == -EAGAIN) {
		cli_note("%s: retry budget %s exhausted (deferred)", o->label,
			 o->budget);
		return BCTL_EXIT_TEMPFAIL;
	}
	return bctl_fail(g, o->budget, rc);
}

/*
 * Before retry number @k (0 = the first retry) after a failed run with
 * verdict @v: choose the wait, withdraw from the budget, sleep.
 * BCTL_CONTINUE, or the status to exit with.
 */
static int exec_before_retry(const struct bctl *g, const struct exec_opts *o,
			     brk_budget *u, const struct exec_verdict *v,
			     uint32_t k, uint64_t *left, const sigset_t *sigs)
{
	uint64_t ms = brk_backoff_ms(BRK_JITTER_EQUAL, EXEC_BACKOFF_BASE_MS,
				     EXEC_BACKOFF_CAP_MS, k, 0, NULL, NULL);
	uint64_t ra = v->retry_after_ms > 0 ? (uint64_t)v->retry_after_ms : 0;
	int rc, sig;

	if (ra > ms) {
		if (!o->has_wait || ra > *left) {
			cli_note("%s: the upstream asked to wait %" PRIu64 " ms "
				 "(Retry-After), more than --wait allows: not "
				 "retrying", o->label, ra);
			return BCTL_EXIT_TEMPFAIL;
		}
		ms = ra;
		*left -= ra;
	}
	if (u) {
		rc = exec_withdraw(g, o, u);
		if (rc)
			return rc;
	}
	if (g->verbose)
		cli_note("%s: retry %" PRIu32 " of %" PRIu64 " in %" PRIu64 " ms",
			 o->label, k + 1, o->retries, ms);
	sig = exec_sleep(sigs, ms);
	return sig ? 128 + sig : BCTL_CONTINUE;
}

/* The first attempt and up to --retries more. */
static int exec_attempts(const struct bctl *g, const struct exec_opts *o,
			 struct exec_ctx *c, const sigset_t *sigs,
			 const sigset_t *orig)
{
	struct exec_verdict v;
	uint64_t left = o->wait_ms;
	uint32_t k;
	int rc, st, retry;

	for (k = 0;; k++) {
		rc = exec_admit(g, o, c, k == 0, sigs, &left);
		if (rc)
			return rc;
		st = exec_run(g, o, c, sigs, orig, &v, &retry);
		if (!retry || k >= o->retries)
			return st;
		rc = exec_before_retry(g, o, c->u, &v, k, &left, sigs);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
}

static int exec_with(const struct bctl *g, const struct exec_opts *o,
		     const sigset_t *sigs, const sigset_t *orig)
{
	struct exec_pace pace = { o->pace, o->wait_arg, NULL, NULL, 0 };
	struct exec_ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = bctl_attach(g, 0, NULL, &c.seg);
	if (rc)
		return rc;
	rc = o->name ? brk_breaker_get(c.seg, o->name, NULL, &c.b) : 0;
	if (rc < 0) {
		rc = rc == -EMEDIUMTYPE ? bctl_find(g, c.seg, o->name, &c.b) :
		     bctl_create_fail(g, c.seg, o->name, rc);
		brk_detach(c.seg);
		return rc;
	}
	rc = o->pace ? exec_pace_open(g, c.seg, &pace) : 0;
	c.pace = o->pace ? &pace : NULL;
	if (rc == 0 && o->budget)
		rc = exec_budget(g, o, c.seg, &c.u);
	if (rc == 0)
		rc = exec_attempts(g, o, &c, sigs, orig);
	brk_detach(c.seg);
	return rc;
}

int bctl_cmd_exec(struct bctl *g, int argc, char **argv)
{
	struct exec_opts o;
	sigset_t sigs, orig;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = exec_parse(g, argc, argv, &o);
	if (rc != BCTL_CONTINUE)
		return rc;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &sigs, &orig) < 0)
		return cli_error("sigprocmask: %s", strerror(errno));
	/* They stay blocked until exit: a signal that comes after CMD ended
	 * must not turn CMD's status into ours being killed. */
	return exec_with(g, &o, &sigs, &orig);
}
