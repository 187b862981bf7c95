/*
 * breakers_apply.c - the parsed breakers file (breakers_parse.h) checked
 * against the segment, then applied or said (--dry-run); the errors of
 * both reported in the order of lines. See breakers_file.h.
 */
#include "breakers_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

/* ---- check and apply ----------------------------------------------------- */

/* CHECK: print errors only; DRY: say what would change; WRITE: change. */
enum bf_pass { BF_CHECK, BF_DRY, BF_WRITE };

/* What an updated section's declared settings were before (BF_WRITE),
 * to put them back if a later section cannot be written. */
union bf_old {
	struct brk_config c;         /* breaker */
	struct { double rate; uint32_t burst; } bucket;
	struct { double floor, ratio; } budget;
	struct brk_pace_config pace;
};

/* One written section: created (retired again on a rollback) or updated
 * (its old settings in bf_ctx.olds[old]). */
struct bf_undo {
	const struct bf_section *s;
	void *h;                     /* updated: its handle (brk_breaker,
				      * brk_bucket or brk_budget by kind) */
	int is_new;
	int old;
};

struct bf_ctx {
	brk_segment *seg;
	const struct bf_file *f;
	enum bf_pass pass;
	FILE *out;
	int errors;
	struct bf_msgs msgs; /* BF_CHECK's errors, reported with bf_load()'s */
	/* room (BF_CHECK with a segment): what the segment has free, what
	 * the file needs, and the first section that does not fit */
	int room;
	struct brk_segment_info si;
	uint64_t new_recs, arena_need;
	const struct bf_section *short_rec, *short_arena;
	int room_err;        /* the error being said is a lack of room */
	/* BF_WRITE: what was written, in order */
	struct bf_undo *undo;
	int nundo, capundo;
	union bf_old *olds;
	int nolds, capolds;
};

static int bf_failk(struct bf_ctx *x, const struct bf_section *s, int line,
		    const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int bf_failk(struct bf_ctx *x, const struct bf_section *s, int line,
		    const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (x->pass == BF_CHECK) {
		int n = x->msgs.n;

		bf_msgs_add(&x->msgs, x->f->path, line, s->header, key, msg);
		if (x->msgs.n > n)
			x->msgs.v[n].room = x->room_err;
	} else if (x->room_err) { /* a concurrent change: said at once */
		bf_emit_room(x->f->path, line, s->header, msg);
	} else {
		bf_emit(x->f->path, line, s->header, key, msg, 0, 0);
	}
	x->errors++;
	return -1;
}

#define bf_fail(x, s, line, ...) bf_failk(x, s, line, NULL, __VA_ARGS__)

/* @ms as the file would write it: "10m", "30s", "250ms". */
static const char *bf_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%" PRIu64 "h", ms / 3600000);
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%" PRIu64 "m", ms / 60000);
	else if (ms && ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
	return buf;
}

/* A record of another kind under the name. */
static int bf_wrong_kind(struct bf_ctx *x, const struct bf_section *s)
{
	return bf_fail(x, s, s->line, "the segment's record '%s' is of another "
		       "kind (not a %s): retire it first (bctl retire) or rename "
		       "the section", s->name, bf_kind_words[s->kind]);
}

static int bf_lib_fail(struct bf_ctx *x, const struct bf_section *s, int rc)
{
	struct brk_segment_info si;

	if (x->pass == BF_WRITE && rc == -ENOSPC &&
	    brk_segment_info(x->seg, &si) == 0) {
		x->room_err = 1;
		rc = bf_fail(x, s, s->line, "no room for the record: another "
			     "process took the room the check counted (%" PRIu32
			     " of %" PRIu32 " records free now, %" PRIu64 " arena "
			     "bytes)", si.capacity > si.used ? si.capacity - si.used
			     : 0, si.capacity, si.arena_bytes > si.arena_used_bytes
			     ? si.arena_bytes - si.arena_used_bytes : 0);
		x->room_err = 0;
		return rc;
	}
	return bf_fail(x, s, s->line, "%s", brk_strerror(rc));
}

static const char *bf_verb(const struct bf_ctx *x, const char *done)
{
	if (x->pass == BF_WRITE)
		return done;
	if (strcmp(done, "created") == 0)
		return "would be created";
	return "would be updated";
}

/* cfg_hint()'s words as the file writes them: "--slow-call" is slow_call. */
static void bf_file_words(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in && o + 1 < len; in++) {
		if (in[0] == '-' && in[1] == '-')
			in++;
		else if (*in == '-' && o && out[o - 1] != ' ')
			out[o++] = '_';
		else
			out[o++] = *in;
	}
	out[o] = '\0';
}

/*
 * The library refused @c (brk_config_validate()'s @what, its member's
 * name): say it at the line of the key the file gave, in the file's words
 * (its keys, its values as written). @is_new: the settings not declared
 * are the defaults, else the record's.
 */
static int bf_breaker_invalid(struct bf_ctx *x, const struct bf_section *s,
			      const struct brk_config *c, const char *what,
			      int is_new)
{
	const char *whose = is_new ? "the default" : "the record's";
	const char *ov = bf_key_val(s, "open"), *mv = bf_key_val(s, "max_open");
	const char *sc = bf_key_val(s, "slow_call"), *sr = bf_key_val(s, "slow_rate");
	const struct cfg_field *f = cfg_field_by_key(what);
	char a[32], b[32], key[BF_KEY_MAX], hint[128];
	const char *val;
	size_t i;

	if (!f)
		return bf_fail(x, s, s->line, "the settings are refused (%s)",
			       what ? what : "unknown");
	if (strcmp(what, "max_open_ms") == 0 && c->max_open_ms < c->open_ms) {
		if (ov && mv)
			return bf_failk(x, s, bf_key_line(s, "max_open"), "max_open",
					"max_open = %s is less than open = %s (line "
					"%d)", mv, ov, bf_key_line(s, "open"));
		if (ov)
			return bf_failk(x, s, bf_key_line(s, "open"), "open",
					"open = %s is more than max_open (%s, %s); "
					"raise max_open too", ov,
					bf_ms(c->max_open_ms, b, sizeof(b)), whose);
		if (mv)
			return bf_failk(x, s, bf_key_line(s, "max_open"), "max_open",
					"max_open = %s is less than open (%s, %s); "
					"lower open too", mv,
					bf_ms(c->open_ms, a, sizeof(a)), whose);
	}
	if (strcmp(what, "slow_rate_pct") == 0 && c->slow_call_ms && c->slow_rate_pct < 1) {
		if (sr)
			return bf_failk(x, s, bf_key_line(s, "slow_rate"), "slow_rate",
					"slow_rate = %s must be 1-100 when slow_call "
					"is set", sr);
		if (sc)
			return bf_failk(x, s, bf_key_line(s, "slow_call"), "slow_call",
					"slow_call = %s needs slow_rate (1-100) too", sc);
	}
	if (strcmp(what, "slow_call_ms") == 0 && !c->slow_call_ms && c->slow_rate_pct) {
		if (sr && !sc)
			return bf_failk(x, s, bf_key_line(s, "slow_rate"), "slow_rate",
					"slow_rate = %s needs slow_call (a duration) "
					"too", sr);
		if (sc)
			return bf_failk(x, s, bf_key_line(s, "slow_call"), "slow_call",
					"slow_call = %s turns off the slow-call check "
					"that slow_rate (%" PRIu32 ") needs", sc,
					c->slow_rate_pct);
	}
	for (i = 0; f->opt[i] && i < sizeof(key) - 1; i++)
		key[i] = f->opt[i] == '-' ? '_' : f->opt[i];
	key[i] = '\0';
	bf_file_words(cfg_hint(what), hint, sizeof(hint));
	val = bf_key_val(s, key);
	if (val)
		return bf_failk(x, s, bf_key_line(s, key), key, "%s = %s is refused%s",
				key, val, hint);
	return bf_failk(x, s, s->line, key, "%s (%" PRIu64 ", %s) is refused with "
			"the declared settings%s", key, cfg_get(c, f), whose, hint);
}

/* Append "KEY OLD -> NEW" to @buf (", " between). */
static void bf_change(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bf_change(char *buf, size_t len, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	if (at && at + 2 < len) {
		memcpy(buf + at, ", ", 3);
		at += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
}

/* Two rates the library stores as the same GCRA interval. */
static int bf_rate_eq(double a, double b)
{
	return bucket_interval_ns(a) == bucket_interval_ns(b);
}

/*
 * One section against its record: what the kind's steps (struct bf_steps)
 * found and decided, for bf_section_apply() to write and say.
 */
struct bf_plan {
	int is_new;           /* no record of the name: it is created */
	int changed;          /* a record that is there: a setting differs */
	char ch[512];         /* created: the declared settings; updated:
	                         "KEY OLD -> NEW, ..." */
	brk_breaker *b;       /* the record, when there is one (or created) */
	brk_bucket *k;        /* (bucket and pace) */
	brk_budget *u;
	struct brk_config c;  /* breaker: the settings to write */
	double floor, ratio;  /* budget: the values to write */
	union bf_old was;     /* a record that is there: its settings now */
};

/*
 * A kind's steps. find: the record of the section's name (0, -ENOENT,
 * -EMEDIUMTYPE: another kind, or another error). plan_new / plan_old:
 * check the section against no record / the record and fill the plan;
 * 0, or -1 after bf_fail(). write: create or update the record as
 * planned (BF_WRITE only); 0, or -1 after bf_fail(). note: after the
 * section's line (may be NULL).
 */
struct bf_steps {
	int (*find)(struct bf_ctx *x, const struct bf_section *s,
		    struct bf_plan *p);
	int (*plan_new)(struct bf_ctx *x, const struct bf_section *s,
			struct bf_plan *p);
	int (*plan_old)(struct bf_ctx *x, const struct bf_section *s,
			struct bf_plan *p);
	int (*write)(struct bf_ctx *x, const struct bf_section *s,
		     struct bf_plan *p);
	void (*note)(const struct bf_ctx *x, const struct bf_section *s,
		     const struct bf_plan *p);
};

/* ---- [breaker NAME] ---- */

static int breaker_find(struct bf_ctx *x, const struct bf_section *s,
			struct bf_plan *p)
{
	return brk_breaker_find(x->seg, s->name, &p->b);
}

static int breaker_plan_new(struct bf_ctx *x, const struct bf_section *s,
			    struct bf_plan *p)
{
	const char *what = NULL;

	brk_config_init(&p->c);
	cfg_apply(&p->c, &s->cfg);
	if (brk_config_validate(&p->c, &what) != 0)
		return bf_breaker_invalid(x, s, &p->c, what, 1);
	cfg_list(&p->c, &s->cfg, p->ch, sizeof(p->ch)); /* every declared setting */
	return 0;
}

static int breaker_plan_old(struct bf_ctx *x, const struct bf_section *s,
			    struct bf_plan *p)
{
	struct brk_config old;
	struct brk_info in;
	const char *what = NULL;
	int rc = brk_breaker_info(p->b, &in);

	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	old = p->c = p->was.c = in.config;
	if (cfg_apply(&p->c, &s->cfg) == 0)
		return 0; /* unchanged */
	if (brk_config_validate(&p->c, &what) != 0)
		return bf_breaker_invalid(x, s, &p->c, what, 0);
	p->changed = 1;
	cfg_changes(&old, &p->c, &s->cfg, p->ch, sizeof(p->ch));
	return 0;
}

static int breaker_write(struct bf_ctx *x, const struct bf_section *s,
			 struct bf_plan *p)
{
	const char *what = NULL;
	int rc;

	if (p->is_new) {
		rc = brk_breaker_get(x->seg, s->name, &p->c, &p->b);
		/* a concurrent creator won: the declared settings win */
		if (rc == 0)
			rc = brk_breaker_update(p->b, &p->c, cfg_bits(&s->cfg), &what);
		return rc < 0 ? bf_lib_fail(x, s, rc) : 0;
	}
	rc = brk_breaker_update(p->b, &p->c, cfg_bits(&s->cfg), &what);
	if (rc == -EINVAL)
		return bf_breaker_invalid(x, s, &p->c, what, 0);
	return rc < 0 ? bf_lib_fail(x, s, rc) : 0;
}

/* bctl's notes on a fleet setting that does nothing now (limit_opts.h).
 * Not from breakerd (a diag sink is set): it applies the file before its
 * own link starts, so "no breakerd --fleet link" would be wrong, and it
 * logs its link's state itself (logfmt, not a "prog: note" line). */
static void breaker_note(const struct bf_ctx *x, const struct bf_section *s,
			 const struct bf_plan *p)
{
	if (!bf_has_sink())
		cfg_fleet_notes(x->seg, s->name, &p->c, &s->cfg);
}

/* ---- [bucket NAME] ---- */

static int bucket_find(struct bf_ctx *x, const struct bf_section *s,
		       struct bf_plan *p)
{
	return brk_bucket_find(x->seg, s->name, &p->k);
}

static int bucket_plan_new(struct bf_ctx *x, const struct bf_section *s,
			   struct bf_plan *p)
{
	const struct bucket_set *a = &s->bucket;

	if (!a->has_rate || !a->has_burst) /* at the header: no such key */
		return bf_failk(x, s, s->line, !a->has_rate ? "rate" : "burst",
				"needed to create the bucket (no such bucket: "
				"rate and burst are both needed)");
	snprintf(p->ch, sizeof(p->ch), "rate %g/s, burst %" PRIu64, a->rate,
		 a->burst);
	return 0;
}

static int bucket_plan_old(struct bf_ctx *x, const struct bf_section *s,
			   struct bf_plan *p)
{
	const struct bucket_set *a = &s->bucket;
	struct brk_bucket_info in;
	double rate;
	uint32_t burst;
	int rc = brk_bucket_info(p->k, &in);

	if (rc == 0 && !in.configured)
		rc = -EAGAIN;
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	if (in.paced)
		return bf_fail(x, s, s->line, "'%s' is a pace (learned rate), not "
			       "a plain bucket: declare it as [pace %s]", s->name,
			       s->name);
	p->was.bucket.rate = in.rate_per_s;
	p->was.bucket.burst = in.burst;
	rate = a->has_rate ? a->rate : in.rate_per_s;
	burst = a->has_burst ? (uint32_t)a->burst : in.burst;
	p->changed = bucket_interval_ns(rate) != in.interval_ns ||
		     burst != in.burst;
	if (bucket_interval_ns(rate) != in.interval_ns)
		bf_change(p->ch, sizeof(p->ch), "rate %g/s -> %g/s", in.rate_per_s,
			  rate);
	if (burst != in.burst)
		bf_change(p->ch, sizeof(p->ch), "burst %" PRIu32 " -> %" PRIu32,
			  in.burst, burst);
	return 0;
}

static int bucket_write(struct bf_ctx *x, const struct bf_section *s,
			struct bf_plan *p)
{
	const struct bucket_set *a = &s->bucket;
	int rc;

	if (p->is_new) {
		rc = brk_bucket_get(x->seg, s->name, a->rate, (uint32_t)a->burst,
				    &p->k);
		if (rc == 0) /* a concurrent creator won: ours win */
			rc = brk_bucket_configure(p->k, a->rate, (uint32_t)a->burst);
	} else {
		rc = brk_bucket_update(p->k, a->rate, (uint32_t)a->burst,
				       (a->has_rate ? BRK_BUCKET_RATE : 0) |
				       (a->has_burst ? BRK_BUCKET_BURST : 0));
	}
	return rc < 0 ? bf_lib_fail(x, s, rc) : 0;
}

/* ---- [budget NAME] ---- */

static int budget_find(struct bf_ctx *x, const struct bf_section *s,
		       struct bf_plan *p)
{
	return brk_budget_find(x->seg, s->name, &p->u);
}

static int budget_plan_new(struct bf_ctx *x, const struct bf_section *s,
			   struct bf_plan *p)
{
	const struct budget_set *a = &s->budget;

	(void)x;
	p->floor = a->has_floor ? a->floor : BRK_DEFAULT_BUDGET_FLOOR;
	p->ratio = a->has_ratio ? a->ratio : BRK_DEFAULT_BUDGET_RATIO;
	snprintf(p->ch, sizeof(p->ch), "floor %g/s, ratio %g", p->floor,
		 p->ratio);
	return 0;
}

static int budget_plan_old(struct bf_ctx *x, const struct bf_section *s,
			   struct bf_plan *p)
{
	const struct budget_set *a = &s->budget;
	struct brk_budget_info in;
	int rc = brk_budget_info(p->u, &in);

	if (rc == 0 && !in.configured)
		rc = -EAGAIN;
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	p->was.budget.floor = in.floor_per_s;
	p->was.budget.ratio = in.ratio;
	p->floor = a->has_floor ? a->floor : in.floor_per_s;
	p->ratio = a->has_ratio ? a->ratio : in.ratio;
	p->changed = !budget_milli_eq(p->floor, in.floor_per_s) ||
		     !budget_milli_eq(p->ratio, in.ratio);
	if (!budget_milli_eq(p->floor, in.floor_per_s))
		bf_change(p->ch, sizeof(p->ch), "floor %g/s -> %g/s",
			  in.floor_per_s, p->floor);
	if (!budget_milli_eq(p->ratio, in.ratio))
		bf_change(p->ch, sizeof(p->ch), "ratio %g -> %g", in.ratio,
			  p->ratio);
	return 0;
}

static int budget_write(struct bf_ctx *x, const struct bf_section *s,
			struct bf_plan *p)
{
	const struct budget_set *a = &s->budget;
	int rc;

	if (p->is_new) {
		rc = brk_budget_get(x->seg, s->name, p->floor, p->ratio, &p->u);
		if (rc == 0)
			rc = brk_budget_configure(p->u, p->floor, p->ratio);
	} else {
		rc = brk_budget_update(p->u, p->floor, p->ratio,
				       (a->has_floor ? BRK_BUDGET_FLOOR : 0) |
				       (a->has_ratio ? BRK_BUDGET_RATIO : 0));
	}
	return rc < 0 ? bf_lib_fail(x, s, rc) : 0;
}

/* ---- [pace NAME] ---- */

static int pace_plan_new(struct bf_ctx *x, const struct bf_section *s,
			 struct bf_plan *p)
{
	const struct pace_set *a = &s->pace;

	if (!(a->fields & BRK_PACE_F_CEILING))
		return bf_failk(x, s, s->line, "ceiling", "needed to create "
				"the pace (no such pace)");
	/* every declared setting, in the words of the update line */
	bf_change(p->ch, sizeof(p->ch), "ceiling %g/s", a->c.ceiling_per_s);
	if (a->fields & BRK_PACE_F_FLOOR)
		bf_change(p->ch, sizeof(p->ch), "floor %g/s", a->c.floor_per_s);
	if (a->fields & BRK_PACE_F_BURST)
		bf_change(p->ch, sizeof(p->ch), "burst %" PRIu32, a->c.burst);
	if (a->fields & BRK_PACE_F_RESERVE)
		bf_change(p->ch, sizeof(p->ch), "reserve %" PRIu32 "%%",
			  a->c.reserve_pct);
	if (a->fields & BRK_PACE_F_FLEET)
		bf_change(p->ch, sizeof(p->ch), "fleet %s", a->c.fleet ? "on" : "off");
	return 0;
}

static int pace_plan_old(struct bf_ctx *x, const struct bf_section *s,
			 struct bf_plan *p)
{
	const struct pace_set *a = &s->pace;
	struct brk_bucket_info in;
	int rc = brk_bucket_info(p->k, &in);

	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	if (!in.paced)
		return bf_fail(x, s, s->line, "'%s' is a plain bucket (fixed rate), "
			       "not a pace: declare it as [bucket %s]", s->name,
			       s->name);
	brk_pace_config_init(&p->was.pace);
	p->was.pace.ceiling_per_s = in.ceiling_per_s;
	p->was.pace.floor_per_s = in.floor_per_s;
	p->was.pace.burst = in.burst;
	p->was.pace.reserve_pct = in.reserve_pct;
	p->was.pace.fleet = in.fleet;
	if ((a->fields & BRK_PACE_F_FLOOR) && !(a->fields & BRK_PACE_F_CEILING) &&
	    a->c.floor_per_s > in.ceiling_per_s)
		return bf_failk(x, s, bf_key_line(s, "floor"), "floor", "%g is above "
			       "the pace's ceiling %g/s", a->c.floor_per_s,
			       in.ceiling_per_s);
	if ((a->fields & BRK_PACE_F_CEILING) && !(a->fields & BRK_PACE_F_FLOOR) &&
	    a->c.ceiling_per_s < in.floor_per_s)
		return bf_failk(x, s, bf_key_line(s, "ceiling"), "ceiling", "%g is "
			       "below the pace's floor %g/s", a->c.ceiling_per_s,
			       in.floor_per_s);
	/* the rates are stored as GCRA intervals (ns): compare those, not
	 * the declared number with the one read back (7/s reads 6.99999997) */
	if ((a->fields & BRK_PACE_F_CEILING) && !bf_rate_eq(a->c.ceiling_per_s, in.ceiling_per_s))
		bf_change(p->ch, sizeof(p->ch), "ceiling %g/s -> %g/s",
			  in.ceiling_per_s, a->c.ceiling_per_s);
	if ((a->fields & BRK_PACE_F_FLOOR) && !bf_rate_eq(a->c.floor_per_s, in.floor_per_s))
		bf_change(p->ch, sizeof(p->ch), "floor %g/s -> %g/s", in.floor_per_s,
			  a->c.floor_per_s);
	if ((a->fields & BRK_PACE_F_BURST) && a->c.burst != in.burst)
		bf_change(p->ch, sizeof(p->ch), "burst %" PRIu32 " -> %" PRIu32,
			  in.burst, a->c.burst);
	if ((a->fields & BRK_PACE_F_RESERVE) && a->c.reserve_pct != in.reserve_pct)
		bf_change(p->ch, sizeof(p->ch), "reserve %" PRIu32 "%% -> %" PRIu32 "%%",
			  in.reserve_pct, a->c.reserve_pct);
	if ((a->fields & BRK_PACE_F_FLEET) && a->c.fleet != in.fleet)
		bf_change(p->ch, sizeof(p->ch), "fleet %s -> %s",
			  in.fleet ? "on" : "off", a->c.fleet ? "on" : "off");
	p->changed = p->ch[0] != '\0';
	return 0;
}

static int pace_write(struct bf_ctx *x, const struct bf_section *s,
		      struct bf_plan *p)
{
	const struct pace_set *a = &s->pace;
	int rc;

	if (p->is_new) {
		rc = brk_pace_get(x->seg, s->name, &a->c, &p->k);
		if (rc == 0) /* a concurrent creator won: ours win */
			rc = brk_pace_update(p->k, &a->c, a->fields);
	} else {
		rc = brk_pace_update(p->k, &a->c, a->fields);
	}
	return rc < 0 ? bf_lib_fail(x, s, rc) : 0;
}

/* A pace is a bucket in paced mode: found as one. */
static const struct bf_steps bf_kinds[BF_NKINDS] = {
	[BF_BREAKER] = { breaker_find, breaker_plan_new, breaker_plan_old,
			 breaker_write, breaker_note },
	[BF_BUCKET] = { bucket_find, bucket_plan_new, bucket_plan_old,
			bucket_write, NULL },
	[BF_BUDGET] = { budget_find, budget_plan_new, budget_plan_old,
			budget_write, NULL },
	[BF_PACE] = { bucket_find, pace_plan_new, pace_plan_old, pace_write,
		      NULL },
};

/* The library's kind of @s's record (a pace is a bucket). */
static int bf_lib_kind(const struct bf_section *s)
{
	return s->kind == BF_BREAKER ? BRK_KIND_BREAKER :
	       s->kind == BF_BUDGET ? BRK_KIND_BUDGET : BRK_KIND_BUCKET;
}

/*
 * BF_CHECK: add what the section takes from the segment (a record if it
 * is created; arena bytes for its record and a breaker's extension
 * blocks, brk_arena_cost()) to the file's need, and note the first
 * section that no longer fits. The sum is compared with the room once
 * every section is planned (bf_room_check()).
 */
static void bf_room_add(struct bf_ctx *x, const struct bf_section *s,
			const struct bf_plan *p)
{
	uint64_t bytes = 0;
	uint64_t free_recs, free_arena;

	if (!x->room || (!p->is_new && !p->changed))
		return;
	if (brk_arena_cost(bf_lib_kind(s), s->kind == BF_BREAKER ? &p->c : NULL,
			   p->is_new ? NULL : p->b, &bytes) < 0)
		bytes = 0; /* checked by the plan already: not reached */
	free_recs = x->si.capacity > x->si.used ? x->si.capacity - x->si.used : 0;
	free_arena = x->si.arena_bytes > x->si.arena_used_bytes
		? x->si.arena_bytes - x->si.arena_used_bytes : 0;
	if (p->is_new && ++x->new_recs > free_recs && !x->short_rec)
		x->short_rec = s;
	x->arena_need += bytes;
	if (x->arena_need > free_arena && !x->short_arena)
		x->short_arena = s;
}

/* After the check's pass: the file's need against the room; an error at
 * the first section that does not fit. */
static void bf_room_check(struct bf_ctx *x)
{
	uint64_t free_recs, free_arena;

	if (!x->room)
		return;
	free_recs = x->si.capacity > x->si.used ? x->si.capacity - x->si.used : 0;
	free_arena = x->si.arena_bytes > x->si.arena_used_bytes
		? x->si.arena_bytes - x->si.arena_used_bytes : 0;
	x->room_err = 1;
	if (x->short_rec)
		(void)bf_fail(x, x->short_rec, x->short_rec->line, "no room for "
			      "the record: %" PRIu64 " new records needed, %" PRIu64
			      " free (capacity %" PRIu32 ", %" PRIu32 " used); a "
			      "larger --capacity (breakerd, bctl segment create) "
			      "or retire records first (bctl retire)",
			      x->new_recs, free_recs, x->si.capacity, x->si.used);
	if (x->short_arena)
		(void)bf_fail(x, x->short_arena, x->short_arena->line, "no room "
			      "in the arena: %" PRIu64 " bytes needed, %" PRIu64
			      " free (of %" PRIu64 "); a larger --arena-mb (breakerd, "
			      "bctl segment create)", x->arena_need, free_arena,
			      x->si.arena_bytes);
	x->room_err = 0;
}

/* Grow @*v (of @*cap elements of @size) to hold @n + 1. 0 or -ENOMEM. */
static int bf_grow(void **v, int *cap, int n, size_t size)
{
	int c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*v, (size_t)c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* BF_WRITE: remember what @s was, to put it back (bf_rollback()). */
static int bf_undo_push(struct bf_ctx *x, const struct bf_section *s,
			const struct bf_plan *p)
{
	struct bf_undo *e;

	if (bf_grow((void **)&x->undo, &x->capundo, x->nundo, sizeof(*x->undo)) ||
	    (!p->is_new && bf_grow((void **)&x->olds, &x->capolds, x->nolds,
				   sizeof(*x->olds))))
		return -ENOMEM;
	e = &x->undo[x->nundo++];
	e->s = s;
	e->is_new = p->is_new;
	e->h = s->kind == BF_BREAKER ? (void *)p->b : s->kind == BF_BUDGET
		? (void *)p->u : (void *)p->k;
	e->old = -1;
	if (!p->is_new) {
		e->old = x->nolds;
		x->olds[x->nolds++] = p->was;
	}
	return 0;
}

/*
 * The one applier of the four kinds: find the section's record, check
 * the section against it (or against none: created), and in the pass's
 * way say nothing (BF_CHECK: add up the room it takes), say what would
 * change (BF_DRY), or write and say it (BF_WRITE): "[kind NAME] created:
 * ...", "... updated: KEY OLD -> NEW, ...", "... unchanged". BF_WRITE
 * keeps what it changed in the undo log before it writes.
 */
static int bf_section_apply(struct bf_ctx *x, const struct bf_section *s)
{
	const struct bf_steps *k = &bf_kinds[s->kind];
	struct bf_plan p;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = x->seg ? k->find(x, s, &p) : -ENOENT;
	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	p.is_new = rc == -ENOENT;
	rc = p.is_new ? k->plan_new(x, s, &p) : k->plan_old(x, s, &p);
	if (rc < 0)
		return rc;
	if (x->pass == BF_CHECK)
		bf_room_add(x, s, &p);
	if (!p.is_new && !p.changed) {
		if (x->pass != BF_CHECK) {
			fprintf(x->out, "%s unchanged\n", s->header);
			if (k->note)
				k->note(x, s, &p);
		}
		return 0;
	}
	if (x->pass == BF_WRITE) {
		if (bf_undo_push(x, s, &p) < 0)
			return bf_fail(x, s, s->line, "out of memory");
		rc = k->write(x, s, &p);
		if (rc < 0) {
			if (!x->undo[--x->nundo].is_new) /* nothing written */
				x->nolds--;
			return rc;
		}
	}
	if (x->pass != BF_CHECK) {
		fprintf(x->out, "%s %s%s%s\n", s->header,
			bf_verb(x, p.is_new ? "created" : "updated"),
			p.ch[0] || !p.is_new ? ": " : "", p.ch);
		if (k->note)
			k->note(x, s, &p);
	}
	return 0;
}

/* The sections in order; BF_WRITE stops at the first that fails (the
 * ones before are rolled back). */
static int bf_pass_run(struct bf_ctx *x)
{
	int i;

	x->errors = 0;
	for (i = 0; i < x->f->n; i++) {
		if (x->f->sec[i].bad || x->f->sec[i].unchecked)
			continue;
		if (bf_section_apply(x, &x->f->sec[i]) < 0 && x->pass == BF_WRITE)
			break;
	}
	return x->errors;
}

/* Put one written section back as it was: a created record retired (its
 * name is free again), an updated one given its declared settings' old
 * values. 0, or the library's error. */
static int bf_undo_one(struct bf_ctx *x, const struct bf_undo *e)
{
	const struct bf_section *s = e->s;
	const union bf_old *o = &x->olds[e->old < 0 ? 0 : e->old];
	const char *what = NULL;

	if (e->is_new)
		return brk_retire(x->seg, s->name, 0);
	switch (s->kind) {
	case BF_BREAKER:
		return brk_breaker_update(e->h, &o->c, cfg_bits(&s->cfg), &what);
	case BF_BUCKET:
		return brk_bucket_update(e->h, o->bucket.rate, o->bucket.burst,
					 (s->bucket.has_rate ? BRK_BUCKET_RATE : 0) |
					 (s->bucket.has_burst ? BRK_BUCKET_BURST : 0));
	case BF_BUDGET:
		return brk_budget_update(e->h, o->budget.floor, o->budget.ratio,
					 (s->budget.has_floor ? BRK_BUDGET_FLOOR : 0) |
					 (s->budget.has_ratio ? BRK_BUDGET_RATIO : 0));
	default:
		return brk_pace_update(e->h, &o->pace, s->pace.fields);
	}
}

/* A write failed: every section written before it is put back, the
 * last first. Returns how many could not be (each said, for its record). */
static int bf_rollback(struct bf_ctx *x)
{
	int i, rc, left = 0;

	for (i = x->nundo - 1; i >= 0; i--) {
		rc = bf_undo_one(x, &x->undo[i]);
		if (rc < 0) {
			bf_emit(x->f->path, x->undo[i].s->line, x->undo[i].s->header,
				NULL, x->undo[i].is_new ? "created, and could not be "
				"retired again: it stays" : "updated, and could not "
				"be put back: the new settings stay", 0, 0);
			bf_emit(x->f->path, x->undo[i].s->line, x->undo[i].s->header,
				NULL, brk_strerror(rc), 0, 0);
			left++;
		}
	}
	return left;
}

static int bf_msg_cmp(const void *pa, const void *pb)
{
	const struct bf_msg *a = *(const struct bf_msg *const *)pa;
	const struct bf_msg *b = *(const struct bf_msg *const *)pb;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* bf_load()'s errors and the check's, in the order of lines; the sections
 * not checked against the segment; the summary. */
static void bf_report(struct bf_ctx *x, int total)
{
	const struct bf_file *f = x->f;
	int i, n = 0, at = 0, m, shown = -1;
	const struct bf_msg **v;
	char note[1024];

	for (i = 0; i < x->msgs.n; i++)
		x->msgs.v[i].seq += f->msgs.n; /* after bf_load()'s on a line */
	v = malloc((size_t)(f->msgs.n + x->msgs.n + 1) * sizeof(*v));
	for (i = 0; v && i < f->msgs.n; i++)
		v[n++] = &f->msgs.v[i];
	for (i = 0; v && i < x->msgs.n; i++)
		v[n++] = &x->msgs.v[i];
	if (v) {
		qsort(v, (size_t)n, sizeof(*v), bf_msg_cmp);
		if (n > BF_MSGS_MAX)
			n = BF_MSGS_MAX;
		shown = n;
		for (i = 0; i < n; i++)
			if (v[i]->room)
				bf_emit_room(f->path, v[i]->line, v[i]->section,
					     v[i]->text);
			else
				bf_emit(f->path, v[i]->line, v[i]->section,
					v[i]->key, v[i]->text, 0, 0);
		free(v);
	} else { /* out of memory: unsorted */
		for (i = 0; i < f->msgs.n; i++)
			bf_emit(f->path, f->msgs.v[i].line, f->msgs.v[i].section,
				f->msgs.v[i].key, f->msgs.v[i].text, 0, 0);
		for (i = 0; i < x->msgs.n; i++)
			bf_emit(f->path, x->msgs.v[i].line, x->msgs.v[i].section,
				x->msgs.v[i].key, x->msgs.v[i].text, 0, 0);
	}
	note[0] = '\0';
	for (i = 0, m = 0; i < f->n; i++) {
		if (f->sec[i].bad || !f->sec[i].unchecked)
			continue;
		if (at < (int)sizeof(note)) {
			int k = snprintf(note + at, sizeof(note) - (size_t)at, "%s%s",
					 m ? ", " : "not checked against the segment: ",
					 f->sec[i].header);

			at += k > 0 ? k : 0;
		}
		m++;
	}
	if (m) {
		if (at < (int)sizeof(note))
			snprintf(note + at, sizeof(note) - (size_t)at, " (%s an error "
				 "above)", m == 1 ? "it has" : "each has");
		bf_emit(f->path, 0, NULL, NULL, note, 0, 0);
	}
	if (shown >= 0 && total > shown) {
		snprintf(note, sizeof(note), "and %d more errors, not shown "
			 "(the first %d are)", total - shown, shown);
		bf_emit(f->path, 0, NULL, NULL, note, 0, 0);
	}
	snprintf(note, sizeof(note), "%d error%s, nothing was applied", total,
		 total == 1 ? "" : "s");
	bf_emit(f->path, 0, NULL, NULL, note, 1, 0);
}

int bf_apply(brk_segment *seg, const struct bf_file *f, enum bf_mode mode,
	     FILE *out, int *in_part)
{
	struct bf_ctx x;
	char *buf = NULL, note[256];
	size_t len = 0;
	FILE *mem;
	int total, left;

	if (in_part)
		*in_part = 0;
	if (!seg && mode == BF_APPLY)
		return cli_error("%s: no segment to apply it to", f->path);
	memset(&x, 0, sizeof(x));
	x.seg = seg;
	x.f = f;
	x.pass = BF_CHECK;
	x.out = out;
	x.room = seg && brk_segment_info(seg, &x.si) == 0;
	if (!seg) { /* the segment the real apply would create: bctl's
		     * defaults (brk_attach_opts), unit 0 never handed out */
		x.room = 1;
		x.si.capacity = BRK_DEFAULT_CAPACITY;
		x.si.arena_bytes = (uint64_t)BRK_DEFAULT_CAPACITY * 448u +
			(uint64_t)(BRK_DEFAULT_CAPACITY / 8 > 1024 ?
				   BRK_DEFAULT_CAPACITY / 8 : 1024) * 64u;
		x.si.arena_used_bytes = 64;
	}
	if (bf_pass_run(&x) == 0 && f->errors == 0)
		bf_room_check(&x); /* counted only when every section was */
	total = x.errors + f->errors;
	if (total) {
		bf_report(&x, total);
		bf_msgs_free(&x.msgs);
		return CLI_EXIT_USAGE;
	}
	bf_msgs_free(&x.msgs);
	if (mode != BF_APPLY) {
		x.pass = BF_DRY;
		return bf_pass_run(&x) ? CLI_EXIT_ERROR : 0;
	}
	/* the lines are said once every section is written: a rolled-back
	 * apply says only what failed */
	mem = open_memstream(&buf, &len);
	if (!mem)
		return cli_error("%s: out of memory", f->path);
	x.pass = BF_WRITE;
	x.out = mem;
	if (bf_pass_run(&x) == 0) {
		fclose(mem);
		fwrite(buf, 1, len, out);
		free(buf);
		free(x.undo);
		free(x.olds);
		return 0;
	}
	fclose(mem);
	free(buf);
	/* a concurrent change (most likely another process took the room
	 * the check counted): nothing of the file stays */
	left = bf_rollback(&x);
	if (left && in_part)
		*in_part = 1;
	if (left)
		snprintf(note, sizeof(note), "applied in part: %d of the %d "
			 "sections written before the error could not be put "
			 "back (above)", left, x.nundo);
	else
		snprintf(note, sizeof(note), "1 error, nothing was applied (%d "
			 "section%s written before it put back as %s was)", x.nundo,
			 x.nundo == 1 ? "" : "s", x.nundo == 1 ? "it" : "each");
	bf_emit(f->path, 0, NULL, NULL, note, 1, 0);
	free(x.undo);
	free(x.olds);
	return CLI_EXIT_ERROR;
}

/* Does @f declare a record of @kind and @name? Constant time. */
static int bf_has(const struct bf_file *f, int kind, const char *name)
{
	int i = bf_find(f, name);

	return i >= 0 && f->sec[i].kind == kind;
}

int bf_report_removed(const struct bf_file *old, const struct bf_file *cur,
		      FILE *out)
{
	int i, n = 0, kind;
	const char *name;

	for (i = 0; old && i < (old->kept ? old->nkept : old->n); i++) {
		if (old->kept) {
			kind = old->kept[i].kind;
			name = old->kept[i].name;
		} else if (old->sec[i].bad) {
			continue;
		} else {
			kind = old->sec[i].kind;
			name = old->sec[i].name;
		}
		if (bf_has(cur, kind, name))
			continue;
		fprintf(out, "[%s %s] removed from the file: the record is kept "
			"as it is and no longer managed\n", bf_kind_words[kind],
			name);
		n++;
	}
	return n;
}
