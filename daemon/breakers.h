/*
 * breakers.h - breakerd's breakers file (cli/breakers_file.h): applied
 * at start and again on each SIGHUP, each change logged.
 *
 * At start a bad file is an error (breakerd does not start: exit 2, each
 * error named by file, line and key). On SIGHUP a bad file is logged and
 * nothing of it is applied: the settings applied before stay. Sections
 * removed since the last good file are logged: their records are kept as
 * they are and no longer managed.
 */
#ifndef BREAKERD_BREAKERS_H
#define BREAKERD_BREAKERS_H

#include "breaker.h"

struct bf_file;

struct breakers {
	const char *path;     /* NULL: no breakers file */
	brk_segment *seg;
	struct bf_file *cur;  /* the last file applied */
};

/**
 * breakers_start - apply @path (NULL: none) to @seg. Returns 0 or an exit
 * status (CLI_EXIT_USAGE: bad file, CLI_EXIT_ERROR: unreadable or a write
 * failed).
 */
int breakers_start(struct breakers *b, const char *path, brk_segment *seg);

/** breakers_reload - the SIGHUP: read and apply the file again (arg: a
 * struct breakers). */
void breakers_reload(void *arg);

void breakers_end(struct breakers *b);

#endif /* BREAKERD_BREAKERS_H */
