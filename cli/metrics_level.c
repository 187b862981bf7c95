/*
 * metrics_level.c - `bctl metrics --by-level N` (and breakerd's /metrics
 * with it): the records that pass the filters summed per prefix of the
 * first N levels of their names, one group per prefix, found through an
 * open-addressing hash. Only counters and the in-flight gauges are
 * summed (a sum of tokens, rates or remaining seconds means nothing);
 * breakers are also counted per state. metrics_render.c prints the
 * groups (label prefix="...").
 */
#include "metrics_level.h"

#include <errno.h>
#include <string.h>

#include "record_out.h"

void metrics_level_init(struct m_groups *g, unsigned levels)
{
	memset(g, 0, sizeof(*g));
	g->v.size = sizeof(struct m_group);
	g->levels = levels;
}

void metrics_level_free(struct m_groups *g)
{
	free(g->v.v);
	free(g->slot);
}

/* The first @levels '/'-separated levels of @name (all of it if it has
 * fewer), into @out. */
static void m_prefix(const char *name, unsigned levels, char *out)
{
	size_t i;

	for (i = 0; name[i]; i++)
		if (name[i] == '/' && --levels == 0)
			break;
	memcpy(out, name, i);
	out[i] = '\0';
}

static size_t m_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

static int m_groups_rehash(struct m_groups *g, size_t slots)
{
	uint32_t *ns = calloc(slots, sizeof(*ns));
	size_t i;

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < g->v.n; i++) {
		const struct m_group *x = (const struct m_group *)g->v.v + i;
		size_t pos = m_hash(x->brk.name) & (slots - 1);

		while (ns[pos])
			pos = (pos + 1) & (slots - 1);
		ns[pos] = (uint32_t)i + 1;
	}
	free(g->slot);
	g->slot = ns;
	g->mask = slots - 1;
	return 0;
}

/* The group of @name, created (zeroed, named) if new; NULL: no memory. */
static struct m_group *m_group_of(struct m_groups *g, const char *name)
{
	char prefix[BRK_NAME_MAX + 1];
	struct m_group *x;
	size_t pos;

	m_prefix(name, g->levels, prefix);
	if ((g->v.n + 1) * 2 > g->mask + 1 &&
	    m_groups_rehash(g, g->mask ? (g->mask + 1) * 2 : 64) < 0)
		return NULL;
	for (pos = m_hash(prefix) & g->mask; g->slot[pos]; pos = (pos + 1) & g->mask) {
		x = (struct m_group *)g->v.v + (g->slot[pos] - 1);
		if (strcmp(x->brk.name, prefix) == 0)
			return x;
	}
	x = m_push(&g->v);
	if (!x)
		return NULL;
	memset(x, 0, sizeof(*x));
	memcpy(x->brk.name, prefix, strlen(prefix) + 1);
	g->slot[pos] = (uint32_t)g->v.n;
	return x;
}

static void m_add_counters(struct brk_counters *sum, const struct brk_counters *c)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *a = (const uint64_t *)c;
	size_t i;

	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		d[i] += a[i];
}
_Static_assert(sizeof(struct brk_counters) % sizeof(uint64_t) == 0,
	       "struct brk_counters is all uint64_t");

int metrics_level_add(struct m_groups *g, const struct brk_info *in)
{
	char name[BRK_NAME_MAX + 1];
	struct m_group *x;

	bctl_safe_name(in->name, sizeof(in->name), name);
	x = m_group_of(g, name);
	if (!x)
		return -ENOMEM;
	switch (in->kind) {
	case BRK_KIND_BREAKER:
		x->n_brk++;
		x->brk.n_state[in->state >= BRK_CLOSED && in->state <= BRK_HALF_OPEN
			       ? in->state : BRK_OPEN]++;
		m_add_counters(&x->brk.c, &in->counters);
		x->brk.in_flight += in->in_flight;
		x->brk.probes_in_flight += in->probes_in_flight;
		x->brk.arrivals += in->arrivals;
		x->brk.completions += in->completions;
		break;
	case BRK_KIND_BUCKET:
		x->n_bkt++;
		x->bkt.taken += in->bucket.taken;
		x->bkt.denied += in->bucket.denied;
		x->bkt.tokens_taken += in->bucket.tokens_taken;
		break;
	case BRK_KIND_BUDGET:
		x->n_bud++;
		x->bud.deposits += in->budget.deposits;
		x->bud.retries += in->budget.retries;
		x->bud.retries_floor += in->budget.retries_floor;
		x->bud.deferred += in->budget.deferred;
		break;
	}
	return 0;
}

int metrics_level_out(const struct m_groups *g, struct m_recs *r)
{
	size_t i;

	for (i = 0; i < g->v.n; i++) {
		const struct m_group *x = (const struct m_group *)g->v.v + i;
		void *p;

		if (x->n_brk && !(p = m_push(&r->brk)))
			return -ENOMEM;
		if (x->n_brk)
			memcpy(p, &x->brk, sizeof(x->brk));
		if (x->n_bkt && !(p = m_push(&r->bkt)))
			return -ENOMEM;
		if (x->n_bkt) {
			memcpy(p, &x->bkt, sizeof(x->bkt));
			memcpy(((struct brk_bucket_info *)p)->name, x->brk.name,
			       sizeof(x->brk.name));
		}
		if (x->n_bud && !(p = m_push(&r->bud)))
			return -ENOMEM;
		if (x->n_bud) {
			memcpy(p, &x->bud, sizeof(x->bud));
			memcpy(((struct brk_budget_info *)p)->name, x->brk.name,
			       sizeof(x->brk.name));
		}
	}
	return 0;
}
