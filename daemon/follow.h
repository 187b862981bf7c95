/*
 * follow.h - follow the segment's event ring and log every event.
 *
 * breakerd starts at the ring's head (events written before it started are
 * not replayed) and logs, once per scan, every transition and reclaim that
 * any process recorded since. If the ring overran between two reads, the
 * number of events lost is logged.
 */
#ifndef BREAKERD_FOLLOW_H
#define BREAKERD_FOLLOW_H

#include <stdint.h>

#include "breaker.h"

struct follower {
	brk_segment *seg;
	uint64_t cursor; /* next sequence number wanted */
	uint64_t logged; /* events logged so far */
	uint64_t lost;   /* events lost so far (ring overran) */
};

/* Start following at the current head of the ring. */
void follow_init(struct follower *f, brk_segment *seg);

/* Log every event recorded since the last call. Returns how many. */
uint64_t follow_drain(struct follower *f);

#endif /* BREAKERD_FOLLOW_H */
