/*
 * breakers_parse.h - the breakers file as its parser (breakers_parse.c)
 * hands it to its applier (breakers_apply.c): the sections with their
 * declared settings and the keys as written, and the errors kept to be
 * reported in the order of lines. Private to the two; the interface is
 * breakers_file.h.
 */
#ifndef BREAKERS_PARSE_H
#define BREAKERS_PARSE_H

#include "breakers_file.h"
#include "limit_opts.h"

enum bf_kind { BF_BREAKER, BF_BUCKET, BF_BUDGET, BF_PACE, BF_NKINDS };

/* "breaker", "bucket", "budget", "pace": the section words, by kind. */
extern const char *const bf_kind_words[BF_NKINDS];

#define BF_MAX_KEYS 32
#define BF_KEY_MAX 40

#define BF_VAL_MAX 64

/* A key of a section: its name and value in the file's key text pool
 * (struct bf_file kchars: offsets, the pool grows while the file is
 * read), each at most BF_KEY_MAX - 1 and BF_VAL_MAX - 1 bytes. */
struct bf_key {
	uint32_t name;         /* as written ('_') */
	uint32_t val;          /* as written, for messages */
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
	struct bf_key *keys;   /* its keys in the file's pool (struct bf_file
				* keys), set when the file is read */
	const char *kchars;    /* and the pool of their text (the same) */
	int key0, nkeys;       /* their first index in the pool, how many */
	union {                /* by kind: one set a section */
		struct cfg_set cfg;
		struct bucket_set bucket;
		struct budget_set budget;
		struct pace_set pace;
	};
};

/* An error kept to be reported with the others, in the order of lines. */
struct bf_msg {
	int line, seq;
	int room;            /* a lack of room (struct bf_diag room) */
	char *section, *key, *text;
};

/* Errors kept per list (the file's, the check's): a file of a million
 * bad lines is reported as its first BF_MSGS_MAX errors and a count of
 * the rest, in bounded memory. Each list is kept in the order of lines,
 * so the first BF_MSGS_MAX of both, merged, are the file's first. */
#define BF_MSGS_MAX 100

struct bf_msgs {
	struct bf_msg *v;
	int n, cap;
};

struct bf_file {
	char *path;
	struct bf_section *sec;
	int n, cap;
	struct bf_key *keys; /* every section's keys, a section's together */
	int nkeys, capkeys;
	char *kchars;        /* their names and values, '\0' after each */
	size_t nkchars, capkchars;
	int *names;          /* open addressing over the names of the sections
			      * not refused (index + 1; 0: empty), so that a
			      * name is found in constant time: a file of 100k
			      * sections is read in linear time */
	int names_cap;       /* slots (a power of two, or 0) */
	/* bf_compact(): only the kinds and names are kept, for
	 * bf_report_removed() at the next reload (sec, keys and msgs freed) */
	struct bf_kept { int kind; const char *name; } *kept;
	char *kept_names;
	int nkept;
	int errors;          /* bf_load()'s, kept in msgs */
	struct bf_msgs msgs;
};

/**
 * bf_emit - one error out: to the diag sink (bf_set_diag()), else "PROG:
 * FILE:LINE: [kind NAME] key: why" on stderr (@bare: "PROG: why", the
 * message names the file). @summary: the last line, "N errors, ...".
 */
void bf_emit(const char *file, int line, const char *sec, const char *key,
	     const char *msg, int summary, int bare);
/** bf_emit_room - bf_emit() of an error that is a lack of room in the
 * segment (struct bf_diag room). */
void bf_emit_room(const char *file, int line, const char *sec,
		  const char *msg);
/** bf_has_sink - is a diag sink set (breakerd), not stderr (bctl)? */
int bf_has_sink(void);

/** bf_msgs_add - keep an error to report later; printed at once if out
 * of memory. */
void bf_msgs_add(struct bf_msgs *m, const char *file, int line,
		 const char *sec, const char *key, const char *text);
void bf_msgs_free(struct bf_msgs *m);

/** bf_find - the index of the section named @name (any kind; not one
 * whose header was refused), or -1. Constant time. */
int bf_find(const struct bf_file *f, const char *name);

/** bf_key_line - the line of @key in @s, else the header's. */
int bf_key_line(const struct bf_section *s, const char *key);
/** bf_key_val - the value of @key in @s as written, or NULL if it is not
 * declared. */
const char *bf_key_val(const struct bf_section *s, const char *key);

#endif /* BREAKERS_PARSE_H */
