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
#include <sys/stat.h>

#include <ini.h>

#include "cli_util.h"
#include "limit_opts.h"

enum bf_kind { BF_BREAKER, BF_BUCKET, BF_BUDGET, BF_PACE, BF_NKINDS };

static const char *const bf_kind_words[BF_NKINDS] = {
	"breaker", "bucket", "budget", "pace"
};

#define BF_MAX_KEYS 32
#define BF_KEY_MAX 40

#define BF_VAL_MAX 64

struct bf_key {
	char name[BF_KEY_MAX]; /* as written ('_') */
	char val[BF_VAL_MAX];  /* as written, for messages */
	int line;
};

struct bf_section {
	int kind;
	char name[BRK_NAME_MAX + 1];
	char header[BRK_NAME_MAX + 16]; /* "[breaker NAME]" for messages */
	int line;
	int bad;               /* the header was refused: its keys are skipped */
	int unchecked;         /* a key or line of it had an error: not checked
				* against the segment */
	struct bf_key keys[BF_MAX_KEYS];
	int nkeys;
	struct cfg_set cfg;
	struct bucket_set bucket;
	struct budget_set budget;
	struct pace_set pace;
};

/* An error kept to be reported with the others, in the order of lines. */
struct bf_msg {
	int line, seq;
	char *section, *key, *text;
};

struct bf_msgs {
	struct bf_msg *v;
	int n, cap;
};

struct bf_file {
	char *path;
	struct bf_section *sec;
	int n, cap;
	int errors;          /* bf_load()'s, kept in msgs */
	struct bf_msgs msgs;
};

static void (*bf_sink)(void *ctx, const struct bf_diag *d);
static void *bf_sink_ctx;

void bf_set_diag(void (*fn)(void *ctx, const struct bf_diag *d), void *ctx)
{
	bf_sink = fn;
	bf_sink_ctx = ctx;
}

/* One error out: to the sink, else "PROG: FILE:LINE: [kind NAME] key: why"
 * on stderr (@bare: "PROG: why", the message names the file). */
static void bf_emit(const char *file, int line, const char *sec, const char *key,
		    const char *msg, int summary, int bare)
{
	struct bf_diag d = { file, line, sec, key, msg, summary };
	char where[24] = "";

	if (bf_sink) {
		bf_sink(bf_sink_ctx, &d);
		return;
	}
	if (bare) {
		fprintf(stderr, "%s: %s\n", cli_prog(), msg);
		return;
	}
	if (line > 0)
		snprintf(where, sizeof(where), ":%d", line);
	fprintf(stderr, "%s: %s%s: %s%s%s%s%s\n", cli_prog(), file, where,
		sec ? sec : "", sec ? " " : "", key ? key : "", key ? ": " : "",
		msg);
}

static char *bf_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Keep an error for bf_msgs_report(); printed at once if out of memory. */
static void bf_msgs_add(struct bf_msgs *m, const char *file, int line,
			const char *sec, const char *key, const char *text)
{
	struct bf_msg *e;

	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;
		void *p = realloc(m->v, (size_t)cap * sizeof(*e));

		if (!p) {
			bf_emit(file, line, sec, key, text, 0, 0);
			return;
		}
		m->v = p;
		m->cap = cap;
	}
	e = &m->v[m->n];
	e->line = line;
	e->seq = m->n;
	e->section = bf_dup(sec);
	e->key = bf_dup(key);
	e->text = strdup(text);
	if ((sec && !e->section) || (key && !e->key) || !e->text) {
		free(e->section);
		free(e->key);
		free(e->text);
		bf_emit(file, line, sec, key, text, 0, 0);
		return;
	}
	m->n++;
}

static void bf_msgs_free(struct bf_msgs *m)
{
	int i;

	for (i = 0; i < m->n; i++) {
		free(m->v[i].section);
		free(m->v[i].key);
		free(m->v[i].text);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* no "--help" hint after a value's error: the summary line follows */
static const char bf_hint[] = "";

/* The shared parsers' message ("KEY: why"), caught (cli_set_msg_sink()). */
struct bf_cap {
	char text[512];
	int n;
};

static void bf_cap_fn(void *ctx, const char *msg)
{
	struct bf_cap *c = ctx;

	if (c->n++ == 0)
		snprintf(c->text, sizeof(c->text), "%s", msg);
}

/* @c's message without its leading "@label: ". */
static const char *bf_cap_text(const struct bf_cap *c, const char *label)
{
	size_t n = strlen(label);

	if (strncmp(c->text, label, n) == 0 && c->text[n] == ':' &&
	    c->text[n + 1] == ' ')
		return c->text + n + 2;
	return c->text;
}

struct bf_reader {
	FILE *f;
	struct bf_file *bf;
	struct bf_section *cur;
	int line;
	int errors;
	int read_errno;
	struct bf_cap cap;
};

static void bf_errk(struct bf_reader *r, int line, const char *sec,
		    const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void bf_errk(struct bf_reader *r, int line, const char *sec,
		    const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bf_msgs_add(&r->bf->msgs, r->bf->path, line, sec, key, msg);
	r->errors++;
}

#define bf_err(r, line, ...) bf_errk(r, line, NULL, NULL, __VA_ARGS__)

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

	errno = 0;
	if (!fgets(str, num, r->f)) {
		if (ferror(r->f))
			r->read_errno = errno ? errno : EIO;
		return NULL;
	}
	r->line++;
	len = strlen(str);
	if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(r->f)) {
		bf_err(r, r->line, "line longer than %d bytes", num - 2);
		if (r->cur)
			r->cur->unchecked = 1;
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
	} else if (*p && !strchr(";#\r\n", *p) && !strpbrk(p, "=:")) {
		/* neither section, key nor comment: said here, so every such
		 * line is reported (inih tells only the first) */
		bf_err(r, r->line, "syntax error: expected [kind NAME], key = value, "
		       "or a comment");
		if (r->cur)
			r->cur->unchecked = 1;
		str[0] = '\0';
	}
	return str;
}

static int bf_handler(void *user, const char *section, const char *key,
		      const char *value)
{
	struct bf_reader *r = user;
	struct bf_section *s = r->cur;
	char opt[BF_KEY_MAX];
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
		bf_errk(r, r->line, s->header, cli_q(key), "no such setting");
		s->unchecked = 1;
		return 1;
	}
	for (i = 0; key[i]; i++)
		opt[i] = key[i] == '_' ? '-' : key[i];
	opt[i] = '\0';
	for (i = 0; i < (size_t)s->nkeys; i++)
		if (strcmp(s->keys[i].name, key) == 0) {
			bf_errk(r, r->line, s->header, key, "set twice (first at "
				"line %d)", s->keys[i].line);
			s->unchecked = 1;
			return 1;
		}
	if (s->nkeys < BF_MAX_KEYS) {
		snprintf(s->keys[s->nkeys].name, BF_KEY_MAX, "%s", key);
		snprintf(s->keys[s->nkeys].val, BF_VAL_MAX, "%s", value);
		s->keys[s->nkeys++].line = r->line;
	}
	r->cap.n = 0; /* the parser's message, "KEY: why", is caught */
	switch (s->kind) {
	case BF_BREAKER:
		rc = cfg_opt(opt, key, value, &s->cfg);
		break;
	case BF_BUCKET:
		rc = bucket_opt(opt, key, value, &s->bucket);
		break;
	case BF_BUDGET:
		rc = budget_opt(opt, key, value, &s->budget);
		break;
	default:
		rc = pace_opt(opt, key, value, &s->pace);
		break;
	}
	if (rc == -ENOENT) {
		bf_errk(r, r->line, s->header, cli_q(key), "no such setting of a %s "
			"(the keys are 'bctl %s' options with '_' for '-')",
			bf_kind_words[s->kind],
			s->kind == BF_BREAKER ? "config" : bf_kind_words[s->kind]);
		s->unchecked = 1;
	} else if (rc) {
		bf_errk(r, r->line, s->header, key, "%s", r->cap.n ?
			bf_cap_text(&r->cap, key) : "invalid value");
		s->unchecked = 1;
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

/* The value of @key in @s as written, or NULL if it is not declared. */
static const char *bf_key_val(const struct bf_section *s, const char *key)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		if (strcmp(s->keys[i].name, key) == 0)
			return s->keys[i].val;
	return NULL;
}

/* A pace's floor above its ceiling, both declared. */
static void bf_check_paces(struct bf_reader *r)
{
	char cl[64];
	struct bf_section *s;
	int i;

	for (i = 0; i < r->bf->n; i++) {
		s = &r->bf->sec[i];
		if (s->bad || s->unchecked || s->kind != BF_PACE)
			continue;
		snprintf(cl, sizeof(cl), "ceiling (line %d)", bf_key_line(s, "ceiling"));
		r->cap.n = 0;
		if (pace_check(&s->pace, "floor", cl) != 0) {
			bf_errk(r, bf_key_line(s, "floor"), s->header, "floor", "%s",
				bf_cap_text(&r->cap, "floor"));
			s->unchecked = 1;
		}
	}
}

/* "cannot read PATH: why": nothing of it is applied. */
static int bf_unreadable(struct bf_file *bf, int err)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "cannot read %s: %s", bf->path, strerror(err));
	bf_emit(bf->path, 0, NULL, NULL, msg, 0, 1);
	bf_emit(bf->path, 0, NULL, NULL, "1 error, nothing was applied", 1, 0);
	bf_free(bf);
	return CLI_EXIT_USAGE;
}

int bf_load(const char *path, struct bf_file **out)
{
	struct bf_reader r;
	struct bf_file *bf;
	struct stat st;
	int i, rc, err;

	*out = NULL;
	bf = calloc(1, sizeof(*bf));
	if (!bf || !(bf->path = strdup(path))) {
		free(bf);
		return cli_error("%s: out of memory", path);
	}
	memset(&r, 0, sizeof(r));
	r.bf = bf;
	r.f = fopen(path, "r");
	if (!r.f)
		return bf_unreadable(bf, errno);
	if (fstat(fileno(r.f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(r.f);
		return bf_unreadable(bf, EISDIR);
	}
	cli_set_usage_hint(bf_hint);
	cli_set_msg_sink(bf_cap_fn, &r.cap); /* each shared parser's message */
	rc = ini_parse_stream(bf_read, &r, bf_handler, &r);
	if (r.read_errno || ferror(r.f)) {
		err = r.read_errno ? r.read_errno : EIO;
		cli_set_msg_sink(NULL, NULL);
		cli_set_usage_hint(NULL);
		fclose(r.f);
		return bf_unreadable(bf, err);
	}
	fclose(r.f);
	if (rc > 0) { /* inih's first line that is neither, if not said yet */
		for (i = 0; i < bf->msgs.n && bf->msgs.v[i].line != rc; i++)
			;
		if (i == bf->msgs.n)
			bf_err(&r, rc, "syntax error: expected [kind NAME], key = "
			       "value, or a comment");
	}
	bf_check_paces(&r);
	cli_set_msg_sink(NULL, NULL);
	cli_set_usage_hint(NULL);
	if (rc < 0)
		bf_err(&r, r.line, "out of memory");
	bf->errors = r.errors;
	*out = bf;
	return 0;
}

int bf_errors(const struct bf_file *f)
{
	return f ? f->errors : 0;
}

void bf_free(struct bf_file *f)
{
	if (!f)
		return;
	bf_msgs_free(&f->msgs);
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
	struct bf_msgs msgs; /* BF_CHECK's errors, reported with bf_load()'s */
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
	if (x->pass == BF_CHECK)
		bf_msgs_add(&x->msgs, x->f->path, line, s->header, key, msg);
	else /* a concurrent change: said at once, for its record */
		bf_emit(x->f->path, line, s->header, key, msg, 0, 0);
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

/* bctl's notes on a fleet setting that does nothing now (limit_opts.h).
 * Not from breakerd (a diag sink is set): it applies the file before its
 * own link starts, so "no breakerd --fleet link" would be wrong, and it
 * logs its link's state itself (logfmt, not a "prog: note" line). */
static void bf_fleet_notes(const struct bf_ctx *x, const struct bf_section *s,
			   const struct brk_config *c)
{
	if (!bf_sink)
		cfg_fleet_notes(x->seg, s->name, c, &s->cfg);
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
			return bf_breaker_invalid(x, s, &c, what, 1);
		if (x->pass == BF_WRITE) {
			rc = brk_breaker_get(x->seg, s->name, &c, &b);
			/* a concurrent creator won: the declared settings win */
			if (rc == 0)
				rc = brk_breaker_update(b, &c, cfg_bits(&s->cfg), &what);
			if (rc < 0)
				return bf_lib_fail(x, s, rc);
		}
		cfg_list(&c, &s->cfg, ch, sizeof(ch)); /* every declared setting */
		if (x->pass != BF_CHECK) {
			fprintf(x->out, "%s %s%s%s\n", s->header, bf_verb(x, "created"),
				ch[0] ? ": " : "", ch);
			bf_fleet_notes(x, s, &c);
		}
		return 0;
	}
	rc = brk_breaker_info(b, &in);
	if (rc < 0)
		return bf_lib_fail(x, s, rc);
	old = c = in.config;
	if (cfg_apply(&c, &s->cfg) == 0) {
		if (x->pass != BF_CHECK) {
			fprintf(x->out, "%s unchanged\n", s->header);
			bf_fleet_notes(x, s, &c);
		}
		return 0;
	}
	if (brk_config_validate(&c, &what) != 0)
		return bf_breaker_invalid(x, s, &c, what, 0);
	if (x->pass == BF_WRITE) {
		rc = brk_breaker_update(b, &c, cfg_bits(&s->cfg), &what);
		if (rc == -EINVAL)
			return bf_breaker_invalid(x, s, &c, what, 0);
		if (rc < 0)
			return bf_lib_fail(x, s, rc);
	}
	cfg_changes(&old, &c, &s->cfg, ch, sizeof(ch));
	if (x->pass != BF_CHECK) {
		fprintf(x->out, "%s %s: %s\n", s->header, bf_verb(x, "updated"), ch);
		bf_fleet_notes(x, s, &c);
	}
	return 0;
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

static int bf_bucket(struct bf_ctx *x, const struct bf_section *s)
{
	const struct bucket_set *a = &s->bucket;
	struct brk_bucket_info in;
	brk_bucket *k = NULL;
	double rate;
	uint32_t burst;
	char ch[256] = "";
	int rc = x->seg ? brk_bucket_find(x->seg, s->name, &k) : -ENOENT;

	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	if (rc == -ENOENT) {
		if (!a->has_rate || !a->has_burst) /* at the header: no such key */
			return bf_failk(x, s, s->line, !a->has_rate ? "rate" : "burst",
					"needed to create the bucket (no such bucket: "
					"rate and burst are both needed)");
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
	if (bucket_interval_ns(rate) != in.interval_ns)
		bf_change(ch, sizeof(ch), "rate %g/s -> %g/s", in.rate_per_s, rate);
	if (burst != in.burst)
		bf_change(ch, sizeof(ch), "burst %" PRIu32 " -> %" PRIu32, in.burst, burst);
	if (x->pass != BF_CHECK)
		fprintf(x->out, "%s %s: %s\n", s->header, bf_verb(x, "updated"), ch);
	return 0;
}

static int bf_budget(struct bf_ctx *x, const struct bf_section *s)
{
	const struct budget_set *a = &s->budget;
	struct brk_budget_info in;
	brk_budget *u = NULL;
	double floor, ratio;
	char ch[256] = "";
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
	if (!budget_milli_eq(floor, in.floor_per_s))
		bf_change(ch, sizeof(ch), "floor %g/s -> %g/s", in.floor_per_s, floor);
	if (!budget_milli_eq(ratio, in.ratio))
		bf_change(ch, sizeof(ch), "ratio %g -> %g", in.ratio, ratio);
	if (x->pass != BF_CHECK)
		fprintf(x->out, "%s %s: %s\n", s->header, bf_verb(x, "updated"), ch);
	return 0;
}

static int bf_pace(struct bf_ctx *x, const struct bf_section *s)
{
	const struct pace_set *a = &s->pace;
	struct brk_bucket_info in;
	brk_bucket *k = NULL;
	char ch[256] = "";
	int rc = x->seg ? brk_bucket_find(x->seg, s->name, &k) : -ENOENT;

	if (rc == -EMEDIUMTYPE)
		return bf_wrong_kind(x, s);
	if (rc < 0 && rc != -ENOENT)
		return bf_lib_fail(x, s, rc);
	if (rc == -ENOENT) {
		if (!(a->fields & BRK_PACE_F_CEILING))
			return bf_failk(x, s, s->line, "ceiling", "needed to create "
					"the pace (no such pace)");
		if (x->pass == BF_WRITE) {
			rc = brk_pace_get(x->seg, s->name, &a->c, &k);
			if (rc == 0) /* a concurrent creator won: ours win */
				rc = brk_pace_update(k, &a->c, a->fields);
			if (rc < 0)
				return bf_lib_fail(x, s, rc);
		}
		/* every declared setting, in the words of the update line */
		bf_change(ch, sizeof(ch), "ceiling %g/s", a->c.ceiling_per_s);
		if (a->fields & BRK_PACE_F_FLOOR)
			bf_change(ch, sizeof(ch), "floor %g/s", a->c.floor_per_s);
		if (a->fields & BRK_PACE_F_BURST)
			bf_change(ch, sizeof(ch), "burst %" PRIu32, a->c.burst);
		if (a->fields & BRK_PACE_F_RESERVE)
			bf_change(ch, sizeof(ch), "reserve %" PRIu32 "%%", a->c.reserve_pct);
		if (a->fields & BRK_PACE_F_FLEET)
			bf_change(ch, sizeof(ch), "fleet %s", a->c.fleet ? "on" : "off");
		if (x->pass != BF_CHECK)
			fprintf(x->out, "%s %s: %s\n", s->header, bf_verb(x, "created"), ch);
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
		bf_change(ch, sizeof(ch), "ceiling %g/s -> %g/s", in.ceiling_per_s,
			  a->c.ceiling_per_s);
	if ((a->fields & BRK_PACE_F_FLOOR) && !bf_rate_eq(a->c.floor_per_s, in.floor_per_s))
		bf_change(ch, sizeof(ch), "floor %g/s -> %g/s", in.floor_per_s,
			  a->c.floor_per_s);
	if ((a->fields & BRK_PACE_F_BURST) && a->c.burst != in.burst)
		bf_change(ch, sizeof(ch), "burst %" PRIu32 " -> %" PRIu32, in.burst,
			  a->c.burst);
	if ((a->fields & BRK_PACE_F_RESERVE) && a->c.reserve_pct != in.reserve_pct)
		bf_change(ch, sizeof(ch), "reserve %" PRIu32 "%% -> %" PRIu32 "%%",
			  in.reserve_pct, a->c.reserve_pct);
	if ((a->fields & BRK_PACE_F_FLEET) && a->c.fleet != in.fleet)
		bf_change(ch, sizeof(ch), "fleet %s -> %s", in.fleet ? "on" : "off",
			  a->c.fleet ? "on" : "off");
	if (!ch[0]) {
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
		fprintf(x->out, "%s %s: %s\n", s->header, bf_verb(x, "updated"), ch);
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
		if (!x->f->sec[i].bad && !x->f->sec[i].unchecked)
			(void)run[x->f->sec[i].kind](x, &x->f->sec[i]);
	return x->errors;
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
	int i, n = 0, at = 0, m;
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
		for (i = 0; i < n; i++)
			bf_emit(f->path, v[i]->line, v[i]->section, v[i]->key,
				v[i]->text, 0, 0);
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
	snprintf(note, sizeof(note), "%d error%s, nothing was applied", total,
		 total == 1 ? "" : "s");
	bf_emit(f->path, 0, NULL, NULL, note, 1, 0);
}

int bf_apply(brk_segment *seg, const struct bf_file *f, enum bf_mode mode,
	     FILE *out)
{
	struct bf_ctx x = { seg, f, BF_CHECK, out, 0, { NULL, 0, 0 } };
	int total;

	if (!seg && mode == BF_APPLY)
		return cli_error("%s: no segment to apply it to", f->path);
	total = bf_pass_run(&x) + f->errors;
	if (total) {
		bf_report(&x, total);
		bf_msgs_free(&x.msgs);
		return CLI_EXIT_USAGE;
	}
	bf_msgs_free(&x.msgs);
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
