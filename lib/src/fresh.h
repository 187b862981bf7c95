/*
 * fresh.h - the entry points' check that a handle still names the record
 * it resolved (private). Only the entry points include it: the files that
 * resolve names (index.c, refresh.c and what they call) never do, so the
 * check's call into refresh.c closes no circle of files.
 */
#ifndef BRK_FRESH_H
#define BRK_FRESH_H

#include "internal.h"

/* 0 if @b's record is still the one its view resolved (one load of the
 * head word), else brk__refresh(b): re-resolved by name (retire.c). */
static inline int brk__fresh(brk_breaker *b)
{
	const struct brk__view *v = uatomic_read(&b->view);

	if (__builtin_expect(uatomic_read(&v->rec->head) == v->head, 1))
		return 0;
	return brk__refresh(b);
}
/* Entry points: re-resolve a stale handle, or return the error. */
#define BRK__FRESH_OR_RETURN(b) \
	do { \
		int fresh_rc_ = brk__fresh(b); \
		if (fresh_rc_) \
			return fresh_rc_; \
	} while (0)

#endif /* BRK_FRESH_H */
