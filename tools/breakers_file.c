/*
 * breakers_file.c - the breakers file: parse (libinih), check against the
 * segment, apply. See breakers_file.h.
 */
#include "breakers_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "cli_util.h"
#include "limit_opts.h"

enum bf_kind { BF_BREAKER, BF_BUCKET, BF_BUDGET, BF_PACE, BF_NKINDS };

static const char *const bf_kind_words[BF_NKINDS] = {
	"breaker", "bucket", "budget", "pace"
};

#define BF_MAX_KEYS 32
#define BF_KEY_MAX 40

struct bf_key {
	char name[BF_KEY_MAX]; /* as written ('_') */
	int line;
};

struct bf_section {
	int kind;
	char name[BRK_NAME_MAX + 1];
	char header[BRK_NAME_MAX + 16]; /* "[breaker NAME]" for messages */
	int line;
	int bad;               /* the header was refused: its keys are skipped */
	struct bf_key keys[BF_MAX_KEYS];
	int nkeys;
	struct cfg_set cfg;
	struct bucket_set bucket;
	struct budget_set budget;
	struct pace_set pace;
};

struct bf_file {
	char *path;
	struct bf_section *sec;
	int n, cap;
};

/* no "--help" hint after a value's error: the summary line follows */
static const char bf_hint[] = "";

struct bf_reader {
	FILE *f;
	struct bf_file *bf;
	struct bf_section *cur;
	int line;
	int errors;
	int first_err_line;
};

static void bf_err(struct bf_reader *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void bf_err(struct bf_reader *r, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s:%d: %s\n", cli_prog(), r->bf->path, line, msg);
	r->errors++;
	if (!r->first_err_line || line < r->first_err_line)
		r->first_err_line = line;
}

/* "[kind NAME]" at @line: a new section. */
static void bf_section_begin(struct bf_reader *r, const char *text, int line)
{
	char kind[16], name[256], extra[2];
	struct bf_section *s;
	int k, i, n;

	r->cur = NULL;
	if (r->bf->n == r->bf->cap) {
		int cap = r->bf->cap ? r->bf->cap * 2 : 16;
		void *p = realloc(r->bf->sec, (size_t)cap * sizeof(*s));

		if (!p) {
			bf_err(r, line, "out of memory");
			return;
		}
		r->bf->sec = p;
		r->bf->cap = cap;
	}
	s = &r->bf->sec[r->bf->n];
	memset(s, 0, sizeof(*s));
	s->line = line;
	s->bad = 1;
	brk_pace_config_init(&s->pace.c);
	r->cur = s;
	r->bf->n++;
	n = sscanf(text, "%15s %255s %1s", kind, name, extra);
	for (k = 0; k < BF_NKINDS && n >= 1; k++)
		if (strcmp(kind, bf_kind_words[k]) == 0)
			break;
	if (n < 1 || k == BF_NKINDS) {
		bf_err(r, line, "[%s]: unknown section: use [breaker NAME], "
		       "[bucket NAME], [budget NAME] or [pace NAME]", cli_q(text));
		return;
	}
	if (n < 2) {
		bf_err(r, line, "[%s]: missing NAME", cli_q(text));
		return;
	}
	if (n > 2) {
		bf_err(r, line, "[%s]: unexpected text after the name", cli_q(text));
		return;
	}
	if (brk_name_validate(name) != 0) {
		bf_err(r, line, "[%s]: invalid name '%s': use 1-%d bytes of "
		       "A-Z a-z 0-9 . _ : / - with no empty '/' level",
		       cli_q(text), cli_q(name), BRK_NAME_MAX);
		return;
	}
	s->kind = k;
	memcpy(s->name, name, strlen(name) + 1); /* validated: fits */
	snprintf(s->header, sizeof(s->header), "[%s %s]", bf_kind_words[k], s->name);
	for (i = 0; i < r->bf->n - 1; i++)
		if (!r->bf->sec[i].bad && strcmp(r->bf->sec[i].name, name) == 0) {
			bf_err(r, line, "%s: '%s' is already declared at line %d "
			       "(one section per record name)", s->header, name,
			       r->bf->sec[i].line);
			return;
		}
	s->bad = 0;
}

/* The reader counts lines and sees every section header, including one
 * with no keys (for which inih calls no handler). */
static char *bf_read(char *str, int num, void *stream)
{
	struct bf_reader *r = stream;
	char *p, *end;
	size_t len;
	int c;

	if (!fgets(str, num, r->f))
		return NULL;
	r->line++;
	len = strlen(str);
	if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(r->f)) {
		bf_err(r, r->line, "line longer than %d bytes", num - 2);
		while ((c = fgetc(r->f)) != EOF && c != '\n')
			;
		str[0] = '\0'; /* the rest is skipped: a blank line to inih */
		return str;
	}
	for (p = str; *p == ' ' || *p == '\t'; p++)
		;
	if (*p == '[') {
		end = strchr(p, ']');
		if (!end) {
			bf_err(r, r->line, "section header without ']'");
			r->cur = NULL;
			str[0] = '\0';
			return str;
		}
		*end = '\0';
		bf_section_begin(r, p + 1, r->line);
		*end = ']';
	}
	return str;
}

static int bf_handler(void *user, const char *section, const char *key,
		      const char *value)
{
	struct bf_reader *r = user;
	struct bf_section *s = r->cur;
	char opt[BF_KEY_MAX], label[BF_KEY_MAX + 256];
	size_t i;
	int rc;

	(void)section;
	if (!s) {
		bf_err(r, r->line, "%s: a key outside a section (begin with "
		       "[breaker NAME], [bucket NAME], [budget NAME] or [pace NAME])",
		       cli_q(key));
		return 1;
	}
	if (s->bad)
		return 1; /* its header's error was printed */
	if (strlen(key) >= sizeof(opt)) {
		bf_err(r, r->line, "%s %s: no such setting", s->header, cli_q(key));
		return 1;
	}
	for (i = 0; key[i]; i++)
		opt[i] = key[i] == '_' ? '-' : key[i];
	opt[i] = '\0';
	for (i = 0; i < (size_t)s->nkeys; i++)
		if (strcmp(s->keys[i].name, key) == 0) {
			bf_err(r, r->line, "%s %s: set twice (first at line %d)",
			       s->header, key, s->keys[i].line);
			return 1;
		}
	if (s->nkeys < BF_MAX_KEYS) {
		snprintf(s->keys[s->nkeys].name, BF_KEY_MAX, "%s", key);
		s->keys[s->nkeys++].line = r->line;
	}
	snprintf(label, sizeof(label), "%s:%d: %s %s", r->bf->path, r->line,
		 s->header, key);
	switch (s->kind) {
	case BF_BREAKER:
		rc = cfg_opt(opt, label, value, &s->cfg);
		break;
	case BF_BUCKET:
		rc = bucket_opt(opt, label, value, &s->bucket);
		break;
	case BF_BUDGET:
		rc = budget_opt(opt, label, value, &s->budget);
		break;
	default:
		rc = pace_opt(opt, label, value, &s->pace);
		break;
	}
	if (rc == -ENOENT) {
		bf_err(r, r->line, "%s %s: no such setting of a %s (the keys are "
		       "'bctl %s' options with '_' for '-')", s->header, cli_q(key),
		       bf_kind_words[s->kind],
		       s->kind == BF_BREAKER ? "config" : bf_kind_words[s->kind]);
	} else if (rc) {
		/* the shared parser printed "PROG: FILE:LINE: [..] key: why" */
		r->errors++;
		if (!r->first_err_line || r->line < r->first_err_line)
			r->first_err_line = r->line;
	}
	return 1;
}

/* The line of @key in @s, else the header's. */
static int bf_key_line(const struct bf_section *s, const char *key)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		if (strcmp(s->keys[i].name, key) == 0)
			return s->keys[i].line;
	return s->line;
}

/* A pace's floor above its ceiling, both declared. */
static void bf_check_paces(struct bf_reader *r)
{
	char fl[BF_KEY_MAX + 256], cl[BF_KEY_MAX + 256];
	const struct bf_section *s;
	int i;

	cli_set_usage_hint(bf_hint);
	for (i = 0; i < r->bf->n; i++) {
		s = &r->bf->sec[i];
		if (s->bad || s->kind != BF_PACE)
			continue;
		snprintf(fl, sizeof(fl), "%s:%d: %s floor", r->bf->path,
			 bf_key_line(s, "floor"), s->header);
		snprintf(cl, sizeof(cl), "ceiling (line %d)", bf_key_line(s, "ceiling"));
		if (pace_check(&s->pace, fl, cl) != 0)
			r->errors++;
	}
	cli_set_usage_hint(NULL);
}

int bf_load(const char *path, struct bf_file **out)
{
	struct bf_reader r;
	struct bf_file *bf;
	int rc;

	*out = NULL;
	bf = calloc(1, sizeof(*bf));
	if (!bf || !(bf->path = strdup(path))) {
		free(bf);
		return cli_error("%s: out of memory", path);
	}
	memset(&r, 0, sizeof(r));
	r.bf = bf;
	r.f = fopen(path, "r");
	if (!r.f) {
		rc = cli_error("%s: %s", path, strerror(errno));
		bf_free(bf);
		return rc;
	}
	cli_set_usage_hint(bf_hint); /* after each shared parser's message */
	rc = ini_parse_stream(bf_read, &r, bf_handler, &r);
	cli_set_usage_hint(NULL);
	if (ferror(r.f))
		bf_err(&r, r.line, "read error");
	fclose(r.f);
	if (rc > 0) /* inih's first line that is neither */
		bf_err(&r, rc, "syntax error: expected [kind NAME], key = value, "
		       "or a comment");
	bf_check_paces(&r);
	if (rc < 0)
		bf_err(&r, r.line, "out of memory");
	if (r.errors) {
		fprintf(stderr, "%s: %s: %d error%s, nothing was applied\n",
			cli_prog(), path, r.errors, r.errors == 1 ? "" : "s");
		bf_free(bf);
		return CLI_EXIT_USAGE;
	}
	*out = bf;
	return 0;
}

void bf_free(struct bf_file *f)
{
	if (!f)
		return;
	free(f->sec);
	free(f->path);
	free(f);
}

int bf_count(const struct bf_file *f)
{
	return f ? f->n : 0;
}

/* ---- check and apply ----------------------------------------------------- */

/* CHECK: print errors only; DRY: say what would change; WRITE: change. */
enum bf_pass { BF_CHECK, BF_DRY, BF_WRITE };

struct bf_ctx {
	brk_segment *seg;
	const struct bf_file *f;
	enum bf_pass pass;
	FILE *out;
	int errors;
};

static int bf_fail(struct bf_ctx *x, const struct bf_section *s, int line,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int bf_fail(struct bf_ctx *x, const struct bf_section *s, int line,
		   const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s:%d: %s %s\n", cli_prog(), x->f->path, line,
		s->header, msg);
	x->errors++;
	return -1;
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

/* "failure_threshold 5 -> 3, open 30000ms -> 10000ms" into @buf. */
static void bf_cfg_changes(const struct brk_config *old, const struct brk_config *new,
			   const struct cfg_set *set, char *buf, size_t len)
{
	size_t i, at = 0;
	uint64_t a, b;
	int n;

	buf[0] = '\0';
	for (i = 0; i < cfg_n && at < len; i++) {
		if (!(set->mask & (1u << i)))
			continue;
		a = cfg_get(old, &cfg_fields[i]);
		b = cfg_get(new, &cfg_fields[i]);
		if (a == b)
			continue;
		n = snprintf(buf + at, len - at, "%s%s %" PRIu64 " -> %" PRIu64,
			     at ? ", " : "", cfg_fields[i].key, a, b);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

static int bf_breaker_invalid(struct bf_ctx *x, const struct bf_section *s,
			      const struct brk_config *c, const char *what)
{
	const struct cfg_field *f = cfg_field_by_key(what);
	char key[BF_KEY_MAX];
	size_t i;

	if (!f)
		return bf_fail(x, s, s->line, "invalid setting %s",
			       what ? what : "(unknown)");
	for (i = 0; f->opt[i] && i < sizeof(key) - 1; i++)
		key[i] = f->opt[i] == '-' ? '_' : f->opt[i];
	key[i] = '\0';
	return bf_fail(x, s, bf_key_line(s, key), "%s: invalid setting %s = %" PRIu64
		       "%s", key, what, cfg_get(c, f), cfg_hint(what));
}

static int bf_breaker(struct bf_ctx *x, const struct bf_section *s)
{
	struct brk_config c, old;
	struct brk_info in;
	const char *what = NULL;
	brk_breaker *b = NULL;
	char ch[512];
	int rc = x->seg ? brk_breaker_find(x->seg, s->name, &b) : -ENOENT;

	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	if (rc == -ENOENT) {
		brk_config_init(&c);
		cfg_apply(&c, &s->cfg);
		if (brk_config_validate(&c, &what) != 0)
			return bf_breaker_invalid(x, s, &c, what);
		if (x->pass == BF_WRITE) {
			rc = brk_breaker_get(x->seg, s->name, &c, &b);
			/* a concurrent creator won: the declared settings win */
			if (rc == 0)
				rc = brk_breaker_update(b, &c, cfg_bits(&s->cfg), &what);
			if (rc < 0)
				return bf_lib_fail(x, s, rc);
		}
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s %s\n", s->header, bf_verb(x, "created"));
		return 0;
	}
	rc = brk_breaker_info(b, &in);
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	old = c = in.config;
	if (cfg_apply(&c, &s->cfg) == 0) {
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s unchanged\n", s->header);
		return 0;
	}
	if (brk_config_validate(&c, &what) != 0)
		return bf_breaker_invalid(x, s, &c, what);
	if (x->pass == BF_WRITE) {
		rc = brk_breaker_update(b, &c, cfg_bits(&s->cfg), &what);
		if (rc == -EINVAL)
			return bf_breaker_invalid(x, s, &c, what);
		if (rc < 0)
			return bf_lib_fail(x, s, rc);
	}
	bf_cfg_changes(&old, &c, &s->cfg, ch, sizeof(ch));
	if (x->pass != BF_CHECK)
		fprintf(x->out, "%s %s: %s\n", s->header, bf_verb(x, "updated"), ch);
	return 0;
}

static int bf_bucket(struct bf_ctx *x, const struct bf_section *s)
{
	const struct bucket_set *a = &s->bucket;
	struct brk_bucket_info in;
	brk_bucket *k = NULL;
	double rate;
	uint32_t burst;
	int rc = x->seg ? brk_bucket_find(x->seg, s->name, &k) : -ENOENT;

	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	if (rc == -ENOENT) {
		if (!a->has_rate || !a->has_burst)
			return bf_fail(x, s, s->line, "no such bucket: rate and "
				       "burst are both needed to create it");
		if (x->pass == BF_WRITE) {
			rc = brk_bucket_get(x->seg, s->name, a->rate,
					    (uint32_t)a->burst, &k);
			if (rc == 0) /* a concurrent creator won: ours win */
				rc = brk_bucket_configure(k, a->rate, (uint32_t)a->burst);
			if (rc < 0)
				return bf_lib_fail(x, s, rc);
		}
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s %s: rate %g/s, burst %" PRIu64 "\n",
				s->header, bf_verb(x, "created"), a->rate, a->burst);
		return 0;
	}
	rc = brk_bucket_info(k, &in);
	if (rc == 0 && !in.configured)
		rc = -EAGAIN;
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	if (in.paced)
		return bf_fail(x, s, s->line, "'%s' is a pace (learned rate), not "
			       "a plain bucket: declare it as [pace %s]", s->name,
			       s->name);
	rate = a->has_rate ? a->rate : in.rate_per_s;
	burst = a->has_burst ? (uint32_t)a->burst : in.burst;
	if (bucket_interval_ns(rate) == in.interval_ns && burst == in.burst) {
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s unchanged\n", s->header);
		return 0;
	}
	if (x->pass == BF_WRITE) {
		rc = brk_bucket_update(k, a->rate, (uint32_t)a->burst,
				       (a->has_rate ? BRK_BUCKET_RATE : 0) |
				       (a->has_burst ? BRK_BUCKET_BURST : 0));
		if (rc < 0)
			return bf_lib_fail(x, s, rc);
	}
	if (x->pass != BF_CHECK)
		fprintf(x->out, "%s %s: rate %g/s -> %g/s, burst %" PRIu32 " -> %"
			PRIu32 "\n", s->header, bf_verb(x, "updated"),
			in.rate_per_s, rate, in.burst, burst);
	return 0;
}

static int bf_budget(struct bf_ctx *x, const struct bf_section *s)
{
	const struct budget_set *a = &s->budget;
	struct brk_budget_info in;
	brk_budget *u = NULL;
	double floor, ratio;
	int rc = x->seg ? brk_budget_find(x->seg, s->name, &u) : -ENOENT;

	floor = a->has_floor ? a->floor : BRK_DEFAULT_BUDGET_FLOOR;
	ratio = a->has_ratio ? a->ratio : BRK_DEFAULT_BUDGET_RATIO;
	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	if (rc == -ENOENT) {
		if (x->pass == BF_WRITE) {
			rc = brk_budget_get(x->seg, s->name, floor, ratio, &u);
			if (rc == 0)
				rc = brk_budget_configure(u, floor, ratio);
			if (rc < 0)
				return bf_lib_fail(x, s, rc);
		}
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s %s: floor %g/s, ratio %g\n", s->header,
				bf_verb(x, "created"), floor, ratio);
		return 0;
	}
	rc = brk_budget_info(u, &in);
	if (rc == 0 && !in.configured)
		rc = -EAGAIN;
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	floor = a->has_floor ? a->floor : in.floor_per_s;
	ratio = a->has_ratio ? a->ratio : in.ratio;
	if (budget_milli_eq(floor, in.floor_per_s) && budget_milli_eq(ratio, in.ratio)) {
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s unchanged\n", s->header);
		return 0;
	}
	if (x->pass == BF_WRITE) {
		rc = brk_budget_update(u, floor, ratio,
				       (a->has_floor ? BRK_BUDGET_FLOOR : 0) |
				       (a->has_ratio ? BRK_BUDGET_RATIO : 0));
		if (rc < 0)
			return bf_lib_fail(x, s, rc);
	}
	if (x->pass != BF_CHECK)
		fprintf(x->out, "%s %s: floor %g/s -> %g/s, ratio %g -> %g\n",
			s->header, bf_verb(x, "updated"), in.floor_per_s, floor,
			in.ratio, ratio);
	return 0;
}

static int bf_pace(struct bf_ctx *x, const struct bf_section *s)
{
	const struct pace_set *a = &s->pace;
	struct brk_bucket_info in;
	brk_bucket *k = NULL;
	int rc = x->seg ? brk_bucket_find(x->seg, s->name, &k) : -ENOENT;

	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	if (rc == -ENOENT) {
		if (!(a->fields & BRK_PACE_F_CEILING))
			return bf_fail(x, s, s->line, "no such pace: ceiling is "
				       "needed to create it");
		if (x->pass == BF_WRITE) {
			rc = brk_pace_get(x->seg, s->name, &a->c, &k);
			if (rc == 0) /* a concurrent creator won: ours win */
				rc = brk_pace_update(k, &a->c, a->fields);
			if (rc < 0)
				return bf_lib_fail(x, s, rc);
		}
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s %s: ceiling %g/s\n", s->header,
				bf_verb(x, "created"), a->c.ceiling_per_s);
		return 0;
	}
	rc = brk_bucket_info(k, &in);
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	if (!in.paced)
		return bf_fail(x, s, s->line, "'%s' is a plain bucket (fixed rate), "
			       "not a pace: declare it as [bucket %s]", s->name,
			       s->name);
	if ((a->fields & BRK_PACE_F_FLOOR) && !(a->fields & BRK_PACE_F_CEILING) &&
	    a->c.floor_per_s > in.ceiling_per_s)
		return bf_fail(x, s, bf_key_line(s, "floor"), "floor: %g is above "
			       "the pace's ceiling %g/s", a->c.floor_per_s,
			       in.ceiling_per_s);
	if ((a->fields & BRK_PACE_F_CEILING) && !(a->fields & BRK_PACE_F_FLOOR) &&
	    a->c.ceiling_per_s < in.floor_per_s)
		return bf_fail(x, s, bf_key_line(s, "ceiling"), "ceiling: %g is "
			       "below the pace's floor %g/s", a->c.ceiling_per_s,
			       in.floor_per_s);
	if ((!(a->fields & BRK_PACE_F_CEILING) || a->c.ceiling_per_s == in.ceiling_per_s) &&
	    (!(a->fields & BRK_PACE_F_FLOOR) || a->c.floor_per_s == in.floor_per_s) &&
	    (!(a->fields & BRK_PACE_F_BURST) || a->c.burst == in.burst) &&
	    (!(a->fields & BRK_PACE_F_RESERVE) || a->c.reserve_pct == in.reserve_pct)) {
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s unchanged\n", s->header);
		return 0;
	}
	if (x->pass == BF_WRITE) {
		rc = brk_pace_update(k, &a->c, a->fields);
		if (rc < 0)
			return bf_lib_fail(x, s, rc);
	}
	if (x->pass != BF_CHECK)
		fprintf(x->out, "%s %s\n", s->header, bf_verb(x, "updated"));
	return 0;
}

static int bf_pass_run(struct bf_ctx *x)
{
	static int (*const run[BF_NKINDS])(struct bf_ctx *, const struct bf_section *) = {
		bf_breaker, bf_bucket, bf_budget, bf_pace
	};
	int i;

	x->errors = 0;
	for (i = 0; i < x->f->n; i++)
		(void)run[x->f->sec[i].kind](x, &x->f->sec[i]);
	return x->errors;
}

int bf_apply(brk_segment *seg, const struct bf_file *f, enum bf_mode mode,
	     FILE *out)
{
	struct bf_ctx x = { seg, f, BF_CHECK, out, 0 };

	if (!seg && mode == BF_APPLY)
		return cli_error("%s: no segment to apply it to", f->path);
	if (bf_pass_run(&x)) {
		fprintf(stderr, "%s: %s: %d error%s, nothing was applied\n",
			cli_prog(), f->path, x.errors, x.errors == 1 ? "" : "s");
		return CLI_EXIT_USAGE;
	}
	x.pass = mode == BF_APPLY ? BF_WRITE : BF_DRY;
	if (bf_pass_run(&x))
		return CLI_EXIT_ERROR; /* a concurrent change: said per record */
	return 0;
}

static int bf_has(const struct bf_file *f, const struct bf_section *s)
{
	int i;

	for (i = 0; f && i < f->n; i++)
		if (f->sec[i].kind == s->kind && strcmp(f->sec[i].name, s->name) == 0)
			return 1;
	return 0;
}

int bf_report_removed(const struct bf_file *old, const struct bf_file *cur,
		      FILE *out)
{
	int i, n = 0;

	for (i = 0; old && i < old->n; i++) {
		if (bf_has(cur, &old->sec[i]))
			continue;
		fprintf(out, "%s removed from the file: the record is kept as it "
			"is and no longer managed\n", old->sec[i].header);
		n++;
	}
	return n;
}
