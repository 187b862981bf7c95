/*
 * bctl_seg.c - attaching the segment and finding records (and what kind a
 * name is), with one-line errors that name the segment and the cause.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "bctl.h"
#include "bctl_out.h"

#define BCTL_ERRBUF 512

const char *bctl_shm(const struct bctl *g)
{
	return brk_resolve_shm_name(g->shm_flag);
}

/* A shm name is "/NAME" with no other '/' (the library's rule); one that
 * came from the environment says so, as breakerd's does. */
int bctl_check_shm(const struct bctl *g)
{
	const char *shm = bctl_shm(g);

	if (brk_shm_name_validate(shm) != 0)
		return cli_usage_error("invalid segment name '%s'%s: expected /NAME",
				       cli_q(shm), g->shm_flag ? "" :
				       " (from $" BRK_SHM_ENV ")");
	return 0;
}

/* Keep a library message on one line. */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

static int bctl_attach_error(const char *shm, const char *name, int rc,
			     char *err)
{
	one_line(err);
	if (rc == -ENOENT && name)
		return cli_error("%s: no breaker named '%s' (the segment does not exist)",
				 cli_q(shm), cli_q(name));
	if (rc == -ENOENT)
		return cli_error("%s: no such segment (no breaker was ever created there)",
				 cli_q(shm));
	if (err[0] && strstr(err, shm))
		return cli_error("%s", err);
	if (err[0])
		return cli_error("%s: %s", cli_q(shm), err);
	return cli_error("%s: %s", cli_q(shm), brk_strerror(rc));
}

int bctl_attach(const struct bctl *g, uint32_t flags, const char *name,
		brk_segment **seg)
{
	struct brk_attach_opts o;
	char err[BCTL_ERRBUF] = "";
	const char *shm = bctl_shm(g);
	int rc;

	*seg = NULL;
	rc = bctl_check_shm(g);
	if (rc)
		return rc;
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = flags;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, seg);
	if (rc == 0)
		return 0;
	*seg = NULL;
	return bctl_attach_error(shm, name, rc, err);
}

int bctl_fail(const struct bctl *g, const char *name, int rc)
{
	return cli_error("%s: %s: %s", cli_q(bctl_shm(g)), cli_q(name),
			 brk_strerror(rc));
}

/* A creation that gave up because the index lock was not let go (issue
 * 22): name the lock and its holder, and what to do. */
int bctl_create_fail(const struct bctl *g, brk_segment *seg, const char *name,
		     int rc)
{
	struct brk_segment_info si;

	if (rc == -BRK_ECONTENDED && seg && brk_segment_info(seg, &si) == 0 &&
	    si.index_lock_pid > 0)
		return cli_error("%s: %s: not created: the segment's index lock "
				 "(taken to create or retire a record) is held "
				 "by pid %d and was not let go in 2 s; if that "
				 "process is stopped (SIGSTOP, a debugger), "
				 "resume or end it (a dead holder's lock is "
				 "taken over). Existing records work meanwhile",
				 cli_q(bctl_shm(g)), cli_q(name),
				 (int)si.index_lock_pid);
	return bctl_fail(g, name, rc);
}

int bctl_find(const struct bctl *g, brk_segment *seg, const char *name,
	      brk_breaker **b)
{
	int rc = brk_breaker_find(seg, name, b);

	if (rc == 0)
		return 0;
	if (rc == -ENOENT)
		return cli_error("%s: no breaker named '%s'", cli_q(bctl_shm(g)),
				 cli_q(name));
	if (rc == -EMEDIUMTYPE)
		return bctl_wrong_kind(g, seg, name, BRK_KIND_BREAKER);
	return bctl_fail(g, name, rc);
}

int bctl_kind_of(brk_segment *seg, const char *name)
{
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *u;
	int rc;

	rc = brk_breaker_find(seg, name, &b);
	if (rc != -EMEDIUMTYPE)
		return rc == 0 ? BRK_KIND_BREAKER : rc;
	if (brk_bucket_find(seg, name, &k) == 0)
		return BRK_KIND_BUCKET;
	if (brk_budget_find(seg, name, &u) == 0)
		return BRK_KIND_BUDGET;
	return -EMEDIUMTYPE;
}

/* The kind in a sentence: the library's word, but "retry budget" for the
 * short "budget". */
static const char *kind_word(int kind)
{
	switch (kind) {
	case BRK_KIND_BREAKER:
	case BRK_KIND_BUCKET:
		return brk_kind_name(kind);
	case BRK_KIND_BUDGET:
		return "retry budget";
	default:
		return "record of another kind";
	}
}

const char *bctl_kind_word(brk_segment *seg, const char *name)
{
	struct brk_bucket_info bi;
	brk_bucket *k;
	int kind = bctl_kind_of(seg, name);

	if (kind == BRK_KIND_BUCKET && brk_bucket_find(seg, name, &k) == 0 &&
	    brk_bucket_info(k, &bi) == 0 && bi.paced)
		return "pace";
	return kind_word(kind < 0 ? 0 : kind);
}

int bctl_wrong_kind(const struct bctl *g, brk_segment *seg, const char *name,
		    int want)
{
	int kind = bctl_kind_of(seg, name);

	if (kind == want || kind < 0) /* changed under us: say what we can */
		return cli_error("%s: '%s' is a %s, not a %s", cli_q(bctl_shm(g)),
				 cli_q(name), kind_word(0), kind_word(want));
	return cli_error("%s: '%s' is a %s, not a %s", cli_q(bctl_shm(g)),
			 cli_q(name), bctl_kind_word(seg, name), kind_word(want));
}

