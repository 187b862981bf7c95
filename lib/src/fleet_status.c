/*
 * fleet_status.c - the fleet link's status in the segment header
 * (layout.h "Fleet link status area"): brk_fleet_report() (one writer:
 * breakerd's link) and brk_fleet_status() (any reader, read-only attach
 * too), and the names of the link's states and drop causes.
 *
 * The public struct is copied word by word inside a sequence lock: the
 * writer makes seq odd (one CAS from even; a writer that died leaving it
 * odd is taken over after bounded tries), stores the words, and makes it
 * even again; a reader accepts a copy only when seq is even and the same
 * before and after. Everything read is bounds-checked (the segment is
 * untrusted): a state out of range or a host id or channel that is not a
 * valid id reads -BRK_ECORRUPT. A changed state writes the event
 * BRK_EV_FLEET_LINK. Older segments hold zeros here: state OFF.
 */
#include <string.h>

#include "abi.h"
#include "ident.h"
#include "internal.h"

#define READ_TRIES 64

_Static_assert(sizeof(struct brk_fleet_status) == BRK__FLEET_WORDS * 8u,
	       "the area holds the whole status");

const char *brk_fleet_state_name(int state)
{
	switch (state) {
	case BRK_FLEET_OFF:
		return "off";
	case BRK_FLEET_CONNECTING:
		return "connecting";
	case BRK_FLEET_CONNECTED:
		return "connected";
	case BRK_FLEET_DOWN:
		return "down";
	default:
		return "unknown";
	}
}

const char *brk_fleet_drop_name(int cause)
{
	static const char *const n[BRK_FLEET_DROP_COUNT] = {
		[BRK_FLEET_DROP_MALFORMED] = "malformed",
		[BRK_FLEET_DROP_OVERSIZE] = "oversize",
		[BRK_FLEET_DROP_UNKNOWN] = "unknown",
		[BRK_FLEET_DROP_NOT_FLEET] = "not_fleet",
		[BRK_FLEET_DROP_FUTURE] = "future",
		[BRK_FLEET_DROP_EXPIRED] = "expired",
		[BRK_FLEET_DROP_KIND] = "kind",
		[BRK_FLEET_DROP_AUTH] = "auth",
		[BRK_FLEET_DROP_REPLAY] = "replay",
		[BRK_FLEET_DROP_FLOOD] = "flood",
	};
	if (cause < 0 || (unsigned)cause >= BRK_FLEET_DROP_COUNT)
		return "unknown_cause";
	return n[cause];
}

uint64_t brk_fleet_drops(const struct brk_fleet_status *st, int cause)
{
	if (!st || cause < 0 || (unsigned)cause >= BRK_FLEET_DROP_COUNT)
		return 0;
	if ((unsigned)cause < BRK_FLEET_DROP_COUNT_VER0)
		return st->drops[cause];
	return st->drops_more[(unsigned)cause - BRK_FLEET_DROP_COUNT_VER0];
}

void brk_fleet_drops_add(struct brk_fleet_status *st, int cause, uint64_t n)
{
	if (!st || cause < 0 || (unsigned)cause >= BRK_FLEET_DROP_COUNT)
		return;
	if ((unsigned)cause < BRK_FLEET_DROP_COUNT_VER0)
		st->drops[cause] += n;
	else
		st->drops_more[(unsigned)cause - BRK_FLEET_DROP_COUNT_VER0] += n;
}

/* "" or a valid host id, NUL-terminated within its bytes. */
static int id_ok(const char *id)
{
	if (!memchr(id, '\0', BRK_HOST_ID_MAX + 1))
		return 0;
	return id[0] == '\0' || brk_host_id_validate(id) == 0;
}

static int status_ok(const struct brk_fleet_status *st)
{
	return st->state <= BRK_FLEET_DOWN && st->pid >= 0 &&
	       id_ok(st->host_id) && id_ok(st->channel);
}

/* The writer of the area (its first word @w0 and start) is this process:
 * the usual case, one report after another, without a /proc read. */
static int writer_is_me(const struct brk__fleet_area *a, uint64_t w0)
{
	const struct brk__ident *me = brk__self();

	return (int32_t)(w0 >> 32) == me->pid &&
	       uatomic_read(&a->start) == me->start_ticks + 1u;
}

static int writer_dead(const struct brk__fleet_area *a, uint64_t w0)
{
	uint64_t start = uatomic_read(&a->start);

	return brk__owner_dead((int32_t)(w0 >> 32), start ? start - 1u : 0, start != 0);
}

int brk_fleet_report_sz(brk_segment *seg, const struct brk_fleet_status *st,
			size_t size)
{
	struct brk__fleet_area *a;
	struct brk_fleet_status k;
	uint64_t words[BRK__FLEET_WORDS], seq = 0, old;
	uint32_t from;
	int tries, rc;
	size_t i;

	if (!seg || !st)
		return -EINVAL;
	rc = brk__struct_in(&k, sizeof(k), st, size);
	if (rc)
		return rc;
	k.pid = brk__self()->pid;
	if (!status_ok(&k))
		return -EINVAL;
	if (seg->readonly)
		return -EROFS;
	/* the strings' bytes after the NUL are zeros: one copy compares */
	memset(k.host_id + strlen(k.host_id), 0, sizeof(k.host_id) - strlen(k.host_id));
	memset(k.channel + strlen(k.channel), 0, sizeof(k.channel) - strlen(k.channel));
	memcpy(words, &k, sizeof(words));
	a = &seg->hdr->fleet;
	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		seq = uatomic_read(&a->seq);
		if ((seq & 1u) == 0 &&
		    uatomic_cmpxchg(&a->seq, seq, seq + 1u) == seq)
			break;
		caa_cpu_relax();
	}
	if (tries == BRK__CAS_TRIES) /* a writer died mid-copy: take over */
		uatomic_set(&a->seq, seq | 1u);
	cmm_smp_wmb();
	old = uatomic_read(&a->words[0]); /* state | pid << 32 */
	from = (uint32_t)(old & 0xffffffffu);
	if (from > BRK_FLEET_DOWN || (from != BRK_FLEET_OFF && !writer_is_me(a, old) &&
				      writer_dead(a, old)))
		from = BRK_FLEET_OFF; /* a dead writer's link was off */
	uatomic_set(&a->start, brk__self()->start_ticks + 1u);
	for (i = 0; i < BRK__FLEET_WORDS; i++)
		uatomic_set(&a->words[i], words[i]);
	cmm_smp_wmb();
	uatomic_set(&a->seq, (seq | 1u) + 1u);
	if (from != k.state)
		brk__event(seg, 0, "", (int)from, (int)k.state, BRK_EV_FLEET_LINK, k.pid, k.reconnects);
	return 0;
}
_Static_assert(offsetof(struct brk_fleet_status, state) == 0 &&
	       offsetof(struct brk_fleet_status, pid) == 4,
	       "state | pid << 32: the first word");

int brk_fleet_status_sz(brk_segment *seg, struct brk_fleet_status *out,
			size_t size)
{
	const struct brk__fleet_area *a;
	struct brk_fleet_status k;
	uint64_t words[BRK__FLEET_WORDS], s1, s2, start = 0;
	int tries;
	size_t i;

	if (!seg || !out || size < BRK_FLEET_STATUS_SIZE_VER0 ||
	    size > BRK_STRUCT_SIZE_MAX)
		return -EINVAL;
	a = &seg->hdr->fleet;
	for (tries = 0; tries < READ_TRIES; tries++) {
		s1 = uatomic_read(&a->seq);
		cmm_smp_rmb();
		if (s1 & 1u) {
			caa_cpu_relax();
			continue;
		}
		start = uatomic_read(&a->start);
		for (i = 0; i < BRK__FLEET_WORDS; i++)
			words[i] = uatomic_read(&a->words[i]);
		cmm_smp_rmb();
		s2 = uatomic_read(&a->seq);
		if (s1 == s2)
			break;
		caa_cpu_relax();
	}
	if (tries == READ_TRIES)
		return -BRK_ECONTENDED;
	memcpy(&k, words, sizeof(k));
	if (!status_ok(&k))
		return -BRK_ECORRUPT;
	/* a link whose writer is gone is off; its counters stay */
	if (k.state != BRK_FLEET_OFF && !(k.pid == brk__self()->pid &&
					   start == brk__self()->start_ticks + 1u) &&
	    brk__owner_dead(k.pid, start ? start - 1u : 0, start != 0))
		k.state = BRK_FLEET_OFF;
	brk__struct_out(out, size, &k, sizeof(k));
	return 0;
}
