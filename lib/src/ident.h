/*
 * ident.h - this process's identity (pid + start time, recomputed in a
 * fork()ed child) and the library's monotonic clock, from ident.c.
 * Kept out of internal.h so that the shared declarations call nothing.
 */
#ifndef BRK_IDENT_H
#define BRK_IDENT_H

#include <stdint.h>

#include "atomics.h"
#include "breaker.h"

struct brk__ident {
	int32_t pid;
	uint64_t start_ticks; /* /proc/self/stat field 22, low 40 bits */
};
/* This process's identity; recomputed after fork() (atfork child hook). */
extern struct brk__ident brk__self_id;
extern int brk__self_ready;
const struct brk__ident *brk__self_slow(void);
static inline const struct brk__ident *brk__self(void)
{
	if (__builtin_expect(uatomic_read(&brk__self_ready), 1))
		return &brk__self_id;
	return brk__self_slow();
}

/* The library's monotonic clock (public as brk_monotonic_ns()). The
 * internal name stays for the library's own callers. */
#define brk__monotonic_ns brk_monotonic_ns

#endif /* BRK_IDENT_H */
