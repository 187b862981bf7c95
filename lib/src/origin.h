/*
 * origin.h - whose decision an event records (origin.c): the segment's
 * fleet peer table and the calling thread's origin per segment handle.
 * events.c asks it when writing and reading an event; it calls nothing
 * above the segment header.
 */
#ifndef BRK_ORIGIN_H
#define BRK_ORIGIN_H

#include <stdint.h>

#include "internal.h"

/* A serial for a new segment handle, unique in this process. */
uint64_t brk__next_serial(void);

/* The calling thread's origin on @s: 0 (this host), or the peer slot
 * reference BRK__ORIGIN_MAKE(slot, gen) (layout.h). */
uint64_t brk__origin_ref(const brk_segment *s);

/* Forget the calling thread's origin on @s (brk_detach()). */
void brk__origin_forget(const brk_segment *s);

/* The host id of origin reference @ref (read from the segment: untrusted)
 * into @out (BRK_HOST_ID_MAX + 1 bytes): "" for 0, "?" when the slot is
 * out of range, reused since, being claimed, or fails its check. */
void brk__origin_name(const brk_segment *s, uint64_t ref, char *out);

#endif /* BRK_ORIGIN_H */
