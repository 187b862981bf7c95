/*
 * record_filter.c - the record filters of `bctl list` and `bctl metrics`
 * (see record_filter.h).
 */
#include "record_filter.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

void bctl_filter_init(struct bctl_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->state = -1;
}

/* A prefix holds only bytes a name may hold and is no longer than one. */
static int prefix_ok(const char *p)
{
	size_t n = strlen(p), i;

	if (n == 0 || n > BRK_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == ':' || c == '/' || c == '-'))
			return 0;
	}
	return 1;
}

/* The value 0 .. @n-1 whose @name() is @s, or -1. */
static int word_of(const char *s, const char *(*name)(int), int first, int n)
{
	int k;

	for (k = first; k < first + n; k++)
		if (strcmp(name(k), s) == 0)
			return k;
	return -1;
}

int bctl_filter_opt(struct bctl_filter *f, int c, const char *arg)
{
	switch (c) {
	case BCTL_OPT_PREFIX:
		if (!prefix_ok(arg))
			return cli_usage_error("--prefix: invalid prefix '%s': use 1-%d bytes of "
					       "A-Z a-z 0-9 . _ : / -", cli_q(arg), BRK_NAME_MAX);
		f->prefix = arg;
		f->prefix_len = strlen(arg);
		return CLI_CONTINUE;
	case BCTL_OPT_STATE:
		f->state = word_of(arg, brk_state_name, BRK_CLOSED,
				   BRK_HALF_OPEN - BRK_CLOSED + 1);
		if (f->state < 0)
			return cli_usage_error("--state: unknown state '%s' (closed, open or half_open)",
					       cli_q(arg));
		return CLI_CONTINUE;
	case BCTL_OPT_KIND:
		/* "pace" is no kind of its own: a bucket in paced mode */
		f->paced = strcmp(arg, "pace") == 0;
		f->kind = f->paced ? BRK_KIND_BUCKET
				   : word_of(arg, brk_kind_name, BRK_KIND_BREAKER,
					     BRK_KIND_BUDGET - BRK_KIND_BREAKER + 1);
		if (f->kind < 0) {
			f->kind = 0;
			return cli_usage_error("--kind: unknown kind '%s' (breaker, bucket, "
					       "pace or budget)", cli_q(arg));
		}
		return CLI_CONTINUE;
	case BCTL_OPT_NOT_CLOSED:
		f->not_closed = true;
		return CLI_CONTINUE;
	case BCTL_OPT_CHANGED_WITHIN:
		if (cli_opt_duration("--changed-within", arg, &f->within_ms))
			return CLI_EXIT_USAGE;
		f->within = true;
		return CLI_CONTINUE;
	default:
		return 0;
	}
}

bool bctl_filter_any(const struct bctl_filter *f)
{
	return f->prefix || f->state >= 0 || f->kind || f->not_closed ||
	       f->within;
}

bool bctl_filter_match(const struct bctl_filter *f,
		       const struct brk_record_brief *b)
{
	bool by_state = f->state >= 0 || f->not_closed || f->within;

	if (f->prefix && strncmp(b->name, f->prefix, f->prefix_len) != 0)
		return false;
	if (f->kind && b->kind != f->kind)
		return false;
	if (by_state && b->kind != BRK_KIND_BREAKER)
		return false; /* only breakers have a state */
	if (f->state >= 0 && b->state != f->state)
		return false;
	if (f->not_closed && b->state == BRK_CLOSED)
		return false;
	if (f->within && b->last_change_age_ms > f->within_ms)
		return false; /* UINT64_MAX: never changed */
	return true;
}

int bctl_filter_next(const char *shm, brk_segment *seg, uint64_t *cur,
		     const struct bctl_filter *f, struct brk_info *in, int *bad)
{
	struct brk_record_brief b;
	int rc;

	for (;;) {
		if (!bctl_filter_any(f)) {
			rc = brk_record_next(seg, cur, in);
		} else {
			rc = brk_record_next_brief(seg, cur, &b);
			if (rc == 0 && !bctl_filter_match(f, &b))
				continue;
			if (rc == 0) {
				rc = brk_info_at(seg, b.index, in);
				if (rc == -ENOENT)
					continue; /* retired since the slot was read */
				if (rc < 0) {
					if (f->corrupt)
						(*f->corrupt)++;
					else
						cli_note("%s: record %" PRIu32 ": %s",
							 cli_q(shm), b.index,
							 brk_strerror(rc));
					*bad = 1;
					continue;
				}
				/* the brief form does not say paced: the snapshot does */
				if (f->paced && (in->kind != BRK_KIND_BUCKET ||
						 !in->bucket.paced))
					continue;
			}
		}
		if (rc == 0)
			return 1;
		if (rc == -ENOENT)
			return 0;
		if (f->corrupt)
			(*f->corrupt)++;
		else
			cli_note("%s: name index slot %" PRIu64 ": %s", cli_q(shm),
				 *cur - 1, brk_strerror(rc));
		*bad = 1;
	}
}
