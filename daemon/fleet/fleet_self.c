/*
 * fleet_self.c - the messages this process published lately (fleet_self.h).
 */
#include "fleet_self.h"

#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t seq, sent_ms;
} sent[FLEET_SELF_REMEMBER];               /* under mu; seq 0: empty */
static unsigned next;                      /* under mu */

void fleet_self_note(uint64_t seq, uint64_t sent_ms)
{
	pthread_mutex_lock(&mu);
	sent[next].seq = seq;
	sent[next].sent_ms = sent_ms;
	next = (next + 1) % FLEET_SELF_REMEMBER;
	pthread_mutex_unlock(&mu);
}

int fleet_self_sent(uint64_t seq, uint64_t sent_ms)
{
	unsigned i;
	int found = 0;

	if (seq == 0)
		return 0;
	pthread_mutex_lock(&mu);
	for (i = 0; i < FLEET_SELF_REMEMBER && !found; i++)
		found = sent[i].seq == seq && sent[i].sent_ms == sent_ms;
	pthread_mutex_unlock(&mu);
	return found;
}
