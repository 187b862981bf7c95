/*
 * breakers_file.h - the declarative breakers file (/etc/breakerd/
 * breakers.conf): INI parsed with libinih, applied by `bctl apply FILE`
 * and by breakerd at start and on SIGHUP.
 *
 *   [breaker NAME]   keys: bctl config's options, '_' for '-'
 *   [bucket NAME]    rate, burst          (bctl bucket)
 *   [budget NAME]    floor, ratio         (bctl budget)
 *   [pace NAME]      ceiling, floor, burst, reserve (bctl pace)
 *
 * Values are parsed by the parsers bctl uses (limit_opts.h). A declared
 * setting is written with the library's update of only the declared
 * fields, so it wins over a worker's create-time config; undeclared
 * settings keep what the record has. A record a worker creates after an
 * apply keeps its create-time settings until the next apply (bctl apply,
 * breakerd's SIGHUP or restart).
 *
 * Nothing is applied partly: the whole file is parsed and then checked
 * against the segment (kinds, settings needed to create, combinations the
 * library refuses, free records and arena room) before the first write;
 * any error applies nothing.
 * Every error of the file is reported in one run, in the order of its
 * lines, each as "PROG: FILE:LINE: [kind NAME] key: why" in the file's
 * words (its keys and values as written); a section with a syntax or
 * value error is not checked against the segment, and the report says so.
 * A file that cannot be read is "PROG: cannot read FILE: why". A
 * concurrent writer between the check and the write (a worker creating
 * records takes the room the check counted) can still make a write fail:
 * that is reported for its section, and the sections written before it
 * are rolled back (bf_apply()). Both passes are linear in the sections
 * (a name index, bf_find()).
 */
#ifndef BREAKERS_FILE_H
#define BREAKERS_FILE_H

#include <stdio.h>

#include "breaker.h"

#define BF_DEFAULT_PATH "/etc/breakerd/breakers.conf"
/* breakerd without --breakers: $BREAKERD_BREAKERS names the file instead
 * of BF_DEFAULT_PATH; set and empty, no file at all (the test suite sets
 * it so a host's own file never leaks into a test's breakerd). */
#define BF_ENV "BREAKERD_BREAKERS"

struct bf_file;

/* One error of the file: @line 0 (none: the whole file), @section
 * ("[kind NAME]") and @key (as written) NULL where they do not apply. */
struct bf_diag {
	const char *file;
	int line;
	const char *section;
	const char *key;
	const char *msg;
	int summary; /* the last line: "N errors, nothing was applied" */
	int room;    /* a lack of room in the segment (free records, arena),
		      * not a mistake in the file: the same file fits a
		      * segment with more room */
};

/**
 * bf_set_diag - send each error to @fn(@ctx, diag) (breakerd: a logfmt
 * line) instead of printing it on stderr; NULL prints again. With a
 * sink set, bf_apply() leaves out bctl's notes on fleet settings
 * (cfg_fleet_notes()). Not thread-safe: set it before loading.
 */
void bf_set_diag(void (*fn)(void *ctx, const struct bf_diag *d), void *ctx);

/**
 * bf_load - read and parse @path (syntax, kinds, names, keys, values).
 * Returns 0 with *@out (to bf_free()) when it could be read, even with
 * errors: they are kept (bf_errors()) and reported by bf_apply() with the
 * ones found against the segment. CLI_EXIT_USAGE: it cannot be read
 * ("cannot read FILE: why", reported). CLI_EXIT_ERROR: out of memory.
 */
int bf_load(const char *path, struct bf_file **out);

/** bf_errors - how many errors bf_load() found in @f (0: it parsed). */
int bf_errors(const struct bf_file *f);

enum bf_mode { BF_APPLY, BF_DRY_RUN };

/**
 * bf_apply - check @f against @seg (NULL: no segment yet, every record
 * is new; BF_DRY_RUN only) and, if all of it can be applied, apply it
 * (BF_APPLY) or say what would change (BF_DRY_RUN): one line per section
 * on @out ("breaker NAME: created|updated: KEY OLD -> NEW, ...|unchanged").
 * The check counts the records and arena bytes the file needs against
 * what the segment has free (one error at the first section that does
 * not fit: "N new records needed, M free"), the same in both modes.
 * BF_APPLY writes the sections in order, each one's old settings kept;
 * if a write fails (another process took the room meanwhile), every
 * section written before it is put back (created records retired,
 * updated ones given their old values) and the lines are not printed.
 * Returns 0, CLI_EXIT_USAGE (the check refused: nothing applied; errors
 * on stderr) or CLI_EXIT_ERROR (a write failed and was rolled back, or
 * a dry-run's read failed; said on stderr). *@in_part (may be NULL) is
 * set to 1 when a rollback could not put everything back.
 */
int bf_apply(brk_segment *seg, const struct bf_file *f, enum bf_mode mode,
	     FILE *out, int *in_part);

/**
 * bf_report_removed - one line on @out for each section of @old that
 * @cur no longer has: its record is kept as it is and no longer managed.
 * Returns how many.
 */
int bf_report_removed(const struct bf_file *old, const struct bf_file *cur,
		      FILE *out);

/** bf_count - the number of sections. */
int bf_count(const struct bf_file *f);

/**
 * bf_compact - keep of @f only what bf_report_removed() needs of an old
 * file (each section's kind and name; about 30 bytes a section), freeing
 * the rest: breakerd keeps the file it applied until the next SIGHUP, and
 * two whole files of 100k sections would double its memory. @f can then
 * be only bf_report_removed()'s @old, bf_count() and bf_free(). Returns
 * 0, or -ENOMEM (@f is left whole).
 */
int bf_compact(struct bf_file *f);

void bf_free(struct bf_file *f);

#endif /* BREAKERS_FILE_H */
