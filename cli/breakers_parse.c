/*
 * breakers_parse.c - the breakers file read and parsed (libinih): its
 * sections, keys and values, every error kept with its line. Checked
 * against the segment and applied by breakers_apply.c. See
 * breakers_file.h.
 */
#include "breakers_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "cli_util.h"

const char *const bf_kind_words[BF_NKINDS] = {
	"breaker", "bucket", "budget", "pace"
};

static void (*bf_sink)(void *ctx, const struct bf_diag *d);
static void *bf_sink_ctx;

void bf_set_diag(void (*fn)(void *ctx, const struct bf_diag *d), void *ctx)
{
	bf_sink = fn;
	bf_sink_ctx = ctx;
}

int bf_has_sink(void)
{
	return bf_sink != NULL;
}

static void bf_emit_d(const struct bf_diag *dp, int bare);

void bf_emit(const char *file, int line, const char *sec, const char *key,
	     const char *msg, int summary, int bare)
{
	struct bf_diag d = { file, line, sec, key, msg, summary, 0 };

	bf_emit_d(&d, bare);
}

void bf_emit_room(const char *file, int line, const char *sec,
		  const char *msg)
{
	struct bf_diag d = { file, line, sec, NULL, msg, 0, 1 };

	bf_emit_d(&d, 0);
}

static void bf_emit_d(const struct bf_diag *dp, int bare)
{
	struct bf_diag d = *dp;
	const char *file = d.file, *sec = d.section, *key = d.key, *msg = d.msg;
	int line = d.line;
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

void bf_msgs_add(struct bf_msgs *m, const char *file, int line,
		 const char *sec, const char *key, const char *text)
{
	struct bf_msg *e;

	if (m->n >= BF_MSGS_MAX)
		return; /* counted by the caller, reported as "N more" */
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
	e->room = 0;
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

void bf_msgs_free(struct bf_msgs *m)
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

/* FNV-1a of a section's name: its first slot in bf_file.names. */
static uint32_t bf_name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

int bf_find(const struct bf_file *f, const char *name)
{
	uint32_t mask, at;

	if (!f || !f->names_cap)
		return -1;
	mask = (uint32_t)f->names_cap - 1;
	for (at = bf_name_hash(name) & mask; f->names[at]; at = (at + 1) & mask)
		if (strcmp(f->sec[f->names[at] - 1].name, name) == 0)
			return f->names[at] - 1;
	return -1;
}

static void bf_name_put(int *names, int cap, const struct bf_section *sec,
			int i)
{
	uint32_t mask = (uint32_t)cap - 1, at;

	for (at = bf_name_hash(sec[i].name) & mask; names[at]; at = (at + 1) & mask)
		;
	names[at] = i + 1;
}

/* Section @i's name into the index (at most half full: grown by
 * doubling). 0 or -ENOMEM. */
static int bf_name_add(struct bf_file *f, int i)
{
	int j, cap, *v;

	if (2 * (f->n + 1) > f->names_cap) {
		cap = f->names_cap ? f->names_cap * 2 : 64;
		while (2 * (f->n + 1) > cap)
			cap *= 2;
		v = calloc((size_t)cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (j = 0; j < f->names_cap; j++)
			if (f->names[j])
				bf_name_put(v, cap, f->sec, f->names[j] - 1);
		free(f->names);
		f->names = v;
		f->names_cap = cap;
	}
	bf_name_put(f->names, f->names_cap, f->sec, i);
	return 0;
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
	s->key0 = r->bf->nkeys;
	s->line = line;
	s->bad = 1;
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
	if (k == BF_PACE)
		brk_pace_config_init(&s->pace.c);
	memcpy(s->name, name, strlen(name) + 1); /* validated: fits */
	snprintf(s->header, sizeof(s->header), "[%s %s]", bf_kind_words[k], s->name);
	i = bf_find(r->bf, name);
	if (i >= 0) {
		bf_err(r, line, "%s: '%s' is already declared at line %d "
		       "(one section per record name)", s->header, name,
		       r->bf->sec[i].line);
		return;
	}
	if (bf_name_add(r->bf, r->bf->n - 1) != 0) {
		bf_err(r, line, "out of memory");
		return;
	}
	s->bad = 0;
}

/* The reader counts lines and sees every section header, including one
 * with no keys (for which inih calls no handler). It reads byte by byte
 * (not fgets()), so that a NUL byte is seen: fgets() would hand inih the
 * text before it, and take the rest of a long line for a line of its own
 * (a NUL in a comment could hide a key behind it). */
static char *bf_read(char *str, int num, void *stream)
{
	struct bf_reader *r = stream;
	size_t len = 0, nul = 0;
	char *p, *end;
	int c = EOF;

	errno = 0;
	while (len + 1 < (size_t)num && (c = getc_unlocked(r->f)) != EOF) {
		if (c == '\0' && !nul)
			nul = len + 1;
		str[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (len == 0) {
		if (ferror(r->f))
			r->read_errno = errno ? errno : EIO;
		return NULL;
	}
	str[len] = '\0';
	r->line++;
	/* a UTF-8 byte order mark (Windows editors) before the first line */
	if (r->line == 1 && len >= 3 && memcmp(str, "\xef\xbb\xbf", 3) == 0) {
		memmove(str, str + 3, len - 2);
		len -= 3;
		if (len == 0)
			return str;
	}
	if (nul || (len == (size_t)num - 1 && str[len - 1] != '\n' &&
		    !feof(r->f))) {
		if (nul)
			bf_err(r, r->line, "a NUL byte (column %zu): the file "
			       "must be text; the line is not read", nul);
		else
			bf_err(r, r->line, "line longer than %d bytes", num - 2);
		if (r->cur)
			r->cur->unchecked = 1;
		if (str[len - 1] != '\n')
			while ((c = getc_unlocked(r->f)) != EOF && c != '\n')
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
		/* after ']' only blanks or a comment: a key written on the
		 * header's line was dropped by inih without a word */
		for (p = end + 1; *p == ' ' || *p == '\t'; p++)
			;
		if (*p && !strchr(";#\r\n", *p)) {
			char tail[64];
			size_t n = strcspn(p, "\r\n");

			snprintf(tail, sizeof(tail), "%.*s", (int)(n < 48 ? n : 48), p);
			*end = '\0';
			bf_err(r, r->line, "[%s]: text after the section header "
			       "('%s'): put each key on a line of its own",
			       cli_q(strchr(str, '[') + 1), cli_q(tail));
			*end = ']';
			if (r->cur)
				r->cur->unchecked = 1;
		}
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

/* Room for one more key in the pool and @text bytes of its text (grown
 * by doubling): 0 or -ENOMEM. The sections' keys pointers are set once
 * the file is read. */
static int bf_key_room(struct bf_file *f, size_t text)
{
	size_t cc;
	int cap;
	void *p;

	if (f->nkchars + text > f->capkchars) {
		cc = f->capkchars ? f->capkchars : 1024;
		while (f->nkchars + text > cc)
			cc *= 2;
		if (cc > UINT32_MAX || !(p = realloc(f->kchars, cc)))
			return -ENOMEM;
		f->kchars = p;
		f->capkchars = cc;
	}
	if (f->nkeys < f->capkeys)
		return 0;
	cap = f->capkeys ? f->capkeys * 2 : 64;
	p = realloc(f->keys, (size_t)cap * sizeof(*f->keys));
	if (!p)
		return -ENOMEM;
	f->keys = p;
	f->capkeys = cap;
	return 0;
}

/* Append @str (at most @max - 1 bytes of it) to the key text pool, which
 * has room (bf_key_room()). Returns its offset. */
static uint32_t bf_kput(struct bf_file *f, const char *str, size_t max)
{
	size_t n = strnlen(str, max - 1);
	uint32_t at = (uint32_t)f->nkchars;

	memcpy(f->kchars + at, str, n);
	f->kchars[at + n] = '\0';
	f->nkchars += n + 1;
	return at;
}

static int bf_handler(void *user, const char *section, const char *key,
		      const char *value)
{
	struct bf_reader *r = user;
	struct bf_section *s = r->cur;
	struct bf_key *kv;
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
	kv = r->bf->keys + s->key0;
	for (i = 0; i < (size_t)s->nkeys; i++)
		if (strcmp(r->bf->kchars + kv[i].name, key) == 0) {
			bf_errk(r, r->line, s->header, key, "set twice (first at "
				"line %d)", kv[i].line);
			s->unchecked = 1;
			return 1;
		}
	if (s->nkeys < BF_MAX_KEYS &&
	    bf_key_room(r->bf, BF_KEY_MAX + BF_VAL_MAX) == 0) {
		kv = &r->bf->keys[r->bf->nkeys++];
		kv->name = bf_kput(r->bf, key, BF_KEY_MAX);
		kv->val = bf_kput(r->bf, value, BF_VAL_MAX);
		kv->line = r->line;
		s->nkeys++;
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

int bf_key_line(const struct bf_section *s, const char *key)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		if (strcmp(s->kchars + s->keys[i].name, key) == 0)
			return s->keys[i].line;
	return s->line;
}

const char *bf_key_val(const struct bf_section *s, const char *key)
{
	int i;

	for (i = 0; i < s->nkeys; i++)
		if (strcmp(s->kchars + s->keys[i].name, key) == 0)
			return s->kchars + s->keys[i].val;
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

/* "cannot read PATH: why": nothing of it is applied. @err 0: not a
 * regular file. */
static int bf_unreadable(struct bf_file *bf, int err)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "cannot read %s: %s", bf->path, err ?
		 strerror(err) : "not a regular file (a FIFO, socket or "
		 "device: it is read only from a file)");
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
	int i, rc, err, fd;

	*out = NULL;
	bf = calloc(1, sizeof(*bf));
	if (!bf || !(bf->path = strdup(path))) {
		free(bf);
		return cli_error("%s: out of memory", path);
	}
	memset(&r, 0, sizeof(r));
	r.bf = bf;
	/* O_NONBLOCK: a FIFO must not block the open; anything but a
	 * regular file (a FIFO, /dev/zero, /dev/urandom) is refused, not
	 * read for ever */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bf_unreadable(bf, errno);
	if (fstat(fd, &st) != 0) {
		err = errno;
		close(fd);
		return bf_unreadable(bf, err);
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? EISDIR : 0;
		close(fd);
		return bf_unreadable(bf, err);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    !(r.f = fdopen(fd, "r"))) {
		err = errno;
		close(fd);
		return bf_unreadable(bf, err ? err : EIO);
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
	for (i = 0; i < bf->n; i++) { /* the pools move no more */
		bf->sec[i].keys = bf->keys + bf->sec[i].key0;
		bf->sec[i].kchars = bf->kchars;
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
	free(f->kept);
	free(f->kept_names);
	free(f->names);
	free(f->keys);
	free(f->kchars);
	free(f->sec);
	free(f->path);
	free(f);
}

int bf_count(const struct bf_file *f)
{
	return f ? (f->kept ? f->nkept : f->n) : 0;
}

int bf_compact(struct bf_file *f)
{
	size_t len = 0, at = 0;
	int i, n = 0;

	if (!f || f->kept)
		return 0;
	for (i = 0; i < f->n; i++)
		if (!f->sec[i].bad)
			len += strlen(f->sec[i].name) + 1;
	f->kept = malloc((size_t)(f->n ? f->n : 1) * sizeof(*f->kept));
	f->kept_names = malloc(len ? len : 1);
	if (!f->kept || !f->kept_names) {
		free(f->kept);
		free(f->kept_names);
		f->kept = NULL;
		f->kept_names = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < f->n; i++) {
		size_t l;

		if (f->sec[i].bad)
			continue;
		l = strlen(f->sec[i].name) + 1;
		memcpy(f->kept_names + at, f->sec[i].name, l);
		f->kept[n].kind = f->sec[i].kind;
		f->kept[n++].name = f->kept_names + at;
		at += l;
	}
	f->nkept = n;
	bf_msgs_free(&f->msgs);
	free(f->names);
	free(f->keys);
	free(f->kchars);
	free(f->sec);
	f->names = NULL;
	f->keys = NULL;
	f->kchars = NULL;
	f->nkchars = f->capkchars = 0;
	f->sec = NULL;
	f->names_cap = f->nkeys = f->capkeys = f->n = f->cap = 0;
	return 0;
}
