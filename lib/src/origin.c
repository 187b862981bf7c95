/*
 * origin.c - the fleet origin of events: brk_host_id_validate(),
 * brk_set_origin() and the segment's peer table (layout.h "Fleet peer
 * table").
 *
 * The peer table maps a host id to a slot of the segment header, so an
 * event needs one word for its origin (brk__event.pad[BRK__EV_ORIGIN] =
 * slot + 1 and the slot's generation). A slot is claimed by one CAS of
 * its word (free or oldest -> claiming, gen + 1), then the name and its
 * check are written and a second CAS makes it live. A reader trusts a
 * slot only if its word is live with the event's generation before and
 * after it copies the name, and the check matches: a reused slot (new
 * generation), a torn or a corrupt one reads "?". When every slot is live
 * the least recently named is reused (ties: the lowest index), which
 * only breakerd's fleet link does, for at most as many hosts as the fleet
 * has.
 *
 * The origin itself is per thread and per segment handle (a small
 * thread-local table keyed by the handle's serial, so a closed handle's
 * address reused by a new one starts local).
 */
#include <string.h>

#include "atomics.h"
#include "ident.h"
#include "origin.h"

#define TLS_ORIGINS 8u

struct tls_origin {
	uint64_t serial; /* 0: unused */
	uint64_t ref;
};

static __thread struct tls_origin tls_origins[TLS_ORIGINS];
static uint64_t serial_ctr;

uint64_t brk__next_serial(void)
{
	return uatomic_add_return(&serial_ctr, 1);
}

int brk_host_id_validate(const char *id)
{
	size_t i;

	if (!id || !id[0])
		return -EINVAL;
	for (i = 0; id[i]; i++) {
		unsigned char c = (unsigned char)id[i];
		if (i >= BRK_HOST_ID_MAX)
			return -ENAMETOOLONG;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return -EINVAL;
	}
	return 0;
}

/* FNV-1a over the generation and the 64 name bytes; never 0. */
static uint64_t peer_check(uint64_t gen, const uint64_t name[BRK__NAME_BYTES / 8])
{
	const unsigned char *p = (const unsigned char *)name;
	uint64_t h = 1469598103934665603ULL ^ gen;
	size_t i;

	for (i = 0; i < BRK__NAME_BYTES; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* Copy slot @i if it is live and trusted: its generation, else 0. */
static uint64_t peer_read(const brk_segment *s, uint32_t i,
			  uint64_t name[BRK__NAME_BYTES / 8])
{
	struct brk__peer *p = &s->hdr->peers[i];
	uint64_t w1 = uatomic_read(&p->word), w2, chk;
	size_t k;

	if (BRK__PEER_ST(w1) != BRK__PEER_LIVE)
		return 0;
	cmm_smp_rmb();
	for (k = 0; k < BRK__NAME_BYTES / 8; k++)
		name[k] = uatomic_read(&p->name[k]);
	chk = uatomic_read(&p->check);
	cmm_smp_rmb();
	w2 = uatomic_read(&p->word);
	if (w2 != w1 || BRK__PEER_GEN(w1) == 0 ||
	    chk != peer_check(BRK__PEER_GEN(w1), name))
		return 0;
	((char *)name)[BRK_HOST_ID_MAX] = '\0';
	if (brk_host_id_validate((const char *)name) != 0)
		return 0;
	return BRK__PEER_GEN(w1);
}

void brk__origin_name(const brk_segment *s, uint64_t ref, char *out)
{
	uint64_t name[BRK__NAME_BYTES / 8];
	uint32_t slot1 = BRK__ORIGIN_SLOT(ref);

	out[0] = '\0';
	if (ref == 0)
		return;
	strcpy(out, "?");
	if (slot1 == 0 || slot1 > BRK_FLEET_PEERS)
		return;
	if (peer_read(s, slot1 - 1, name) != BRK__ORIGIN_GEN(ref))
		return;
	memcpy(out, name, BRK__NAME_BYTES);
}

/* The slot naming @id, or claim one: its reference, or 0 (contended). */
static uint64_t peer_ref(brk_segment *s, const uint64_t want[BRK__NAME_BYTES / 8])
{
	uint64_t name[BRK__NAME_BYTES / 8], now_ms = brk__rel_ms(s, brk__now(s)) + 1u;
	int tries;

	for (tries = 0; tries < BRK__CAS_TRIES; tries++) {
		uint32_t i, pick = 0;
		uint64_t oldest = UINT64_MAX, w, gen;
		struct brk__peer *p;
		size_t k;

		for (i = 0; i < BRK_FLEET_PEERS; i++) {
			p = &s->hdr->peers[i];
			gen = peer_read(s, i, name);
			if (gen && memcmp(name, want, sizeof(name)) == 0) {
				uatomic_set(&p->used_ms, now_ms);
				return BRK__ORIGIN_MAKE(i, gen);
			}
			w = uatomic_read(&p->word);
			/* free first, then the least recently named */
			if (BRK__PEER_ST(w) == BRK__PEER_FREE) {
				if (oldest != 0) {
					oldest = 0;
					pick = i;
				}
			} else if (uatomic_read(&p->used_ms) < oldest) {
				oldest = uatomic_read(&p->used_ms);
				pick = i;
			}
		}
		p = &s->hdr->peers[pick];
		w = uatomic_read(&p->word);
		gen = (BRK__PEER_GEN(w) + 1u) & (UINT64_MAX >> 8);
		if (gen == 0)
			gen = 1;
		if (uatomic_cmpxchg(&p->word, w, BRK__PEER_MAKE(gen, BRK__PEER_CLAIMING)) != w)
			continue;
		uatomic_set(&p->used_ms, now_ms);
		for (k = 0; k < BRK__NAME_BYTES / 8; k++)
			uatomic_set(&p->name[k], want[k]);
		uatomic_set(&p->check, peer_check(gen, want));
		cmm_smp_wmb();
		if (uatomic_cmpxchg(&p->word, BRK__PEER_MAKE(gen, BRK__PEER_CLAIMING),
				    BRK__PEER_MAKE(gen, BRK__PEER_LIVE)) ==
		    BRK__PEER_MAKE(gen, BRK__PEER_CLAIMING))
			return BRK__ORIGIN_MAKE(pick, gen);
	}
	return 0;
}

static int tls_set(const brk_segment *s, uint64_t ref);

void brk__origin_forget(const brk_segment *s)
{
	(void)tls_set(s, 0);
}

uint64_t brk__origin_ref(const brk_segment *s)
{
	uint32_t i;

	for (i = 0; i < TLS_ORIGINS; i++)
		if (tls_origins[i].serial == s->serial)
			return tls_origins[i].ref;
	return 0;
}

static int tls_set(const brk_segment *s, uint64_t ref)
{
	uint32_t i, freei = TLS_ORIGINS;

	for (i = 0; i < TLS_ORIGINS; i++) {
		if (tls_origins[i].serial == s->serial) {
			if (ref == 0)
				tls_origins[i].serial = 0;
			else
				tls_origins[i].ref = ref;
			return 0;
		}
		if (tls_origins[i].serial == 0 && freei == TLS_ORIGINS)
			freei = i;
	}
	if (ref == 0)
		return 0;
	if (freei == TLS_ORIGINS)
		return -EMFILE;
	tls_origins[freei].serial = s->serial;
	tls_origins[freei].ref = ref;
	return 0;
}

int brk_set_origin(brk_segment *seg, const char *host_id)
{
	uint64_t want[BRK__NAME_BYTES / 8], ref;
	int rc;

	if (!seg)
		return -EINVAL;
	if (!host_id || !host_id[0])
		return tls_set(seg, 0);
	rc = brk_host_id_validate(host_id);
	if (rc)
		return rc;
	if (seg->readonly)
		return -EROFS;
	memset(want, 0, sizeof(want));
	memcpy(want, host_id, strlen(host_id));
	ref = peer_ref(seg, want);
	if (ref == 0)
		return -BRK_ECONTENDED;
	return tls_set(seg, ref);
}
