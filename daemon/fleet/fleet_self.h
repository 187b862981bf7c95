/*
 * fleet_self.h - the messages this process published lately, so the
 * subscriber can tell its own echo from another breakerd that was given
 * the same --host-id (fleet_apply.c logs fleet=duplicate_host_id): the
 * (seq, sent_ms) of the last FLEET_SELF_REMEMBER sent. A mutex: the
 * publisher notes, the subscriber asks.
 */
#ifndef BREAKERD_FLEET_SELF_H
#define BREAKERD_FLEET_SELF_H

#include <stdint.h>

/* Enough for the echo's round trip: the publisher sends at most a few
 * hundred messages while one is in flight (a reconnect's burst of the
 * missed decisions is sent before the echoes are read, up to the ring). */
#define FLEET_SELF_REMEMBER 1024u

/* Remember a message we are about to publish (before the PUBLISH, so its
 * echo can never come first). */
void fleet_self_note(uint64_t seq, uint64_t sent_ms);

/* 1 if (@seq, @sent_ms) is one of the last FLEET_SELF_REMEMBER we sent. */
int fleet_self_sent(uint64_t seq, uint64_t sent_ms);

#endif
