/*
 * breakers.c - breakerd applies the breakers file. See breakers.h.
 */
#include "breakers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakers_file.h"
#include "cli_util.h"
#include "logfmt.h"

/* Each line @out collected as one logfmt line "breakers file". */
static void log_lines(const char *path, char *buf, size_t len)
{
	struct logline l;
	char *p = buf, *nl;

	while (buf && p < buf + len && *p) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		ll_begin(&l, "info", "breakers file");
		ll_str(&l, "file", path);
		ll_str(&l, "change", p);
		ll_end(&l);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* What the errors of one apply were. */
struct diag_seen {
	int reload;   /* SIGHUP: breakerd runs on with what it had */
	int room;     /* errors that are a lack of room in the segment */
	int other;    /* the others (the file's) */
};

/* Each error of the file as one logfmt line: level=error msg=WHY file=
 * line= section= key= (those that apply); on SIGHUP, a lack of room in
 * the segment (the file is fine, the segment is full) is level=warn:
 * nothing changes and breakerd runs on. The summary is left out: the
 * "breakers file rejected" line follows. */
static void log_diag(void *ctx, const struct bf_diag *d)
{
	struct diag_seen *seen = ctx;
	struct logline l;

	if (d->summary)
		return;
	if (d->room)
		seen->room++;
	else
		seen->other++;
	ll_begin(&l, d->room && seen->reload ? "warn" : "error", d->msg);
	ll_str(&l, "file", d->file);
	if (d->line > 0)
		ll_u64(&l, "line", (uint64_t)d->line);
	if (d->section)
		ll_str(&l, "section", d->section);
	if (d->key)
		ll_str(&l, "key", d->key);
	ll_end(&l);
}

/* Load and apply @path; on success it becomes b->cur. A file that cannot
 * be read or has an error is rejected: nothing of it is applied. A write
 * that fails (another process took the room the check counted) is rolled
 * back: rejected too, unless the rollback could not put everything back
 * ("applied in part"). */
static int apply(struct breakers *b, int reload)
{
	struct diag_seen seen = { reload, 0, 0 };
	struct bf_file *f = NULL;
	struct logline l;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	int rc, in_part = 0, rejected;
	const char *level;

	bf_set_diag(log_diag, &seen);
	rc = bf_load(b->path, &f);
	if (rc == 0) {
		out = open_memstream(&buf, &len);
		if (!out) {
			bf_set_diag(NULL, NULL);
			bf_free(f);
			return cli_error("%s: out of memory", b->path);
		}
		rc = bf_apply(b->seg, f, BF_APPLY, out, &in_part);
		if (reload && (rc == 0 || in_part))
			bf_report_removed(b->cur, f, out);
		fclose(out);
		log_lines(b->path, buf, len);
		free(buf);
	}
	bf_set_diag(NULL, NULL);
	if (rc && !f)
		rc = CLI_EXIT_USAGE; /* not read: rejected, never "in part" */
	rejected = rc && !in_part;
	/* a reload refused for want of room only: warn, it runs on as it was */
	level = !rc ? "info" : reload && rejected && seen.room && !seen.other
		? "warn" : "error";
	ll_begin(&l, level, rejected ? "breakers file rejected, nothing of it "
		 "applied" : rc ? "breakers file applied in part (a concurrent "
		 "change, and the rollback failed)" : "breakers file applied");
	ll_str(&l, "file", b->path);
	if (f)
		ll_u64(&l, "sections", (uint64_t)bf_count(f));
	if (rc == CLI_EXIT_ERROR && rejected)
		ll_str(&l, "why", "a write failed, the ones before it rolled back");
	if (reload && rejected)
		ll_str(&l, "kept", "the settings applied before");
	ll_end(&l);
	if (rejected || !f) {
		bf_free(f);
		return rc;
	}
	bf_free(b->cur);
	(void)bf_compact(f); /* out of memory: kept whole */
	b->cur = f;
	return rc;
}

int breakers_start(struct breakers *b, const char *path, brk_segment *seg)
{
	memset(b, 0, sizeof(*b));
	b->path = path;
	b->seg = seg;
	return path ? apply(b, 0) : 0;
}

void breakers_reload(void *arg)
{
	struct breakers *b = arg;
	struct logline l;

	if (!b->path) {
		ll_begin(&l, "info", "SIGHUP: no breakers file to reload");
		ll_end(&l);
		return;
	}
	(void)apply(b, 1);
}

void breakers_end(struct breakers *b)
{
	bf_free(b->cur);
	b->cur = NULL;
}
