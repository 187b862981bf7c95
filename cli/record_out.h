/*
 * record_out.h - the pieces of bctl's output (bctl_out.h) that the
 * metrics renderer (metrics_render.c, also linked into breakerd) needs
 * too: a name made safe to print, and what the segment header says about
 * breakerd. record_out.c; no jansson, no struct bctl.
 */
#ifndef RECORD_OUT_H
#define RECORD_OUT_H

#include <stddef.h>

#include "breaker.h"

/** bctl_safe_name - @src (at most @cap bytes) as printable ASCII in @dst
 * (BRK_NAME_MAX + 1 bytes). */
void bctl_safe_name(const char *src, size_t cap, char *dst);

/* What the segment header says about breakerd. */
enum bctl_daemon {
	BCTL_DAEMON_NEVER,  /* no breakerd ever ran on this segment */
	BCTL_DAEMON_EXITED, /* its pid is gone */
	BCTL_DAEMON_STALE,  /* alive, but no heartbeat for 3 intervals + 1 s */
	BCTL_DAEMON_OK
};

enum bctl_daemon bctl_daemon_state(const struct brk_segment_info *s);

/**
 * bctl_fleet_read - the fleet link's status of @seg (brk_fleet_status()),
 * host id and channel made printable. Returns 1 (a link ran here: its
 * state is not off, or a counter moved), 0 (no link: "fleet link: off"),
 * or the library's error
 * (-BRK_ECORRUPT, -BRK_ECONTENDED). @st is zeroed first.
 */
int bctl_fleet_read(brk_segment *seg, struct brk_fleet_status *st);
/** bctl_wall_ms - CLOCK_REALTIME in ms since the epoch. */
uint64_t bctl_wall_ms(void);
/** bctl_age_ms - @now_ms - @then_ms, 0 if @then_ms is later. */
uint64_t bctl_age_ms(uint64_t now_ms, uint64_t then_ms);

#endif /* RECORD_OUT_H */
