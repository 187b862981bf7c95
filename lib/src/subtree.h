/*
 * subtree.h - the records of a name's subtree (subtree.c), for health.c.
 */
#ifndef BRK_SUBTREE_H
#define BRK_SUBTREE_H

#include "internal.h"

/* Called once per record of the subtree: its ref, kind (enum brk_kind)
 * and whether it is NAME itself. */
typedef void (*brk__subtree_fn)(void *ctx, uint32_t ref, int kind, int self);

/*
 * brk__subtree_each - @fn for every record named @name (valid), @name/...
 * or @name:..., from the handle's cache of earlier walks when the name
 * index has not changed since (*@cached = 1), else by one walk of the
 * name index (which refreshes the cache). Thread-safe (a try-lock; a
 * thread that finds it taken walks uncached). Returns 0 or -BRK_ECORRUPT
 * (a slot or record that fails validation and did not change meanwhile;
 * @fn may have been called for some records).
 */
int brk__subtree_each(brk_segment *s, const char *name, brk__subtree_fn fn,
		      void *ctx, int *cached);

/* Free the handle's cache (brk_detach()). */
void brk__subtree_cache_free(brk_segment *s);

#endif /* BRK_SUBTREE_H */
