/*
 * abi.c - structs whose size may differ between the caller and the
 * library (breaker.h, "Growing structs"), and the plain-name entry points
 * of the sized functions, which assume the BREAKER_0 sizes.
 *
 * Reading follows the Linux kernel's copy_struct_from_user() (used by
 * openat2(2) and clone3(2)): take what both sides know, default what only
 * the library knows, refuse (-E2BIG) what only the caller knows unless it
 * is zero. Writing never goes past the caller's size.
 */
#include <errno.h>
#include <string.h>

#include "abi.h"
#include "internal.h"

/* The BREAKER_0 sizes are facts about the frozen ABI: if one of these
 * fails, a struct was changed in a way that breaks existing programs. */
_Static_assert(sizeof(struct brk_config) == BRK_CONFIG_SIZE_VER0, "brk_config");
_Static_assert(sizeof(struct brk_attach_opts) == BRK_ATTACH_OPTS_SIZE_VER0,
	       "brk_attach_opts");
_Static_assert(sizeof(struct brk_segment_info) == BRK_SEGMENT_INFO_SIZE_VER0,
	       "brk_segment_info");
_Static_assert(sizeof(struct brk_info) == BRK_INFO_SIZE_VER0, "brk_info");
_Static_assert(sizeof(struct brk_bucket_info) == BRK_BUCKET_INFO_SIZE_VER0,
	       "brk_bucket_info");
_Static_assert(sizeof(struct brk_budget_info) == BRK_BUDGET_INFO_SIZE_VER0,
	       "brk_budget_info");
_Static_assert(sizeof(struct brk_event) == BRK_EVENT_SIZE_VER0, "brk_event");
/* Fixed-size structs (rule 3): new fields come out of reserved_. */
_Static_assert(sizeof(struct brk_refusal) == 128, "brk_refusal");
_Static_assert(sizeof(struct brk_result) == 64, "brk_result");
_Static_assert(sizeof(brk_permit) == 96, "brk_permit");
_Static_assert(sizeof(struct brk_reclaim_stats) == 64, "brk_reclaim_stats");
_Static_assert(sizeof(struct brk_lease_info) == 16, "brk_lease_info");
/* Embedded structs must fit their reserved room in brk_info. */
_Static_assert(sizeof(struct brk_config) <= 256, "brk_info.config room");
_Static_assert(sizeof(struct brk_counters) <= 512, "brk_info.counters room");
_Static_assert(sizeof(struct brk_bucket_info) <= 256, "brk_info.bucket room");
_Static_assert(sizeof(struct brk_budget_info) <= 256, "brk_info.budget room");
_Static_assert(BRK_REASON_COUNT <= BRK_REASON_SLOTS, "failures_by_reason");
/* The size member is first, so that it is read before anything else. */
_Static_assert(offsetof(struct brk_config, size) == 0, "brk_config.size");
_Static_assert(offsetof(struct brk_attach_opts, size) == 0,
	       "brk_attach_opts.size");

int brk__struct_in(void *dst, size_t ksize, const void *src, size_t usize)
{
	const unsigned char *tail;
	size_t i;

	if (usize < 8 || usize % 8 != 0 || usize > BRK_STRUCT_SIZE_MAX)
		return -EINVAL;
	if (usize > ksize) {
		tail = (const unsigned char *)src + ksize;
		for (i = 0; i < usize - ksize; i++)
			if (tail[i])
				return -E2BIG;
	}
	memcpy(dst, src, usize < ksize ? usize : ksize);
	return 0;
}

void brk__struct_out(void *dst, size_t usize, const void *src, size_t ksize)
{
	size_t n = usize < ksize ? usize : ksize;

	memcpy(dst, src, n);
	if (usize > n)
		memset((unsigned char *)dst + n, 0, usize - n);
}

int brk__config_in(const struct brk_config *user, struct brk_config *out)
{
	int rc = 0;

	brk_config_init_sz(out, sizeof(*out));
	if (user)
		rc = brk__struct_in(out, sizeof(*out), user,
				    user->size ? user->size : BRK_CONFIG_SIZE_VER0);
	out->size = sizeof(*out);
	return rc;
}

int brk__attach_opts_in(const struct brk_attach_opts *user,
			struct brk_attach_opts *out)
{
	int rc = 0;

	brk_attach_opts_init_sz(out, sizeof(*out));
	if (user)
		rc = brk__struct_in(out, sizeof(*out), user,
				    user->size ? user->size
					       : BRK_ATTACH_OPTS_SIZE_VER0);
	out->size = sizeof(*out);
	return rc;
}

/*
 * brk_info.config.size tells the caller which brk_config it can copy out
 * and pass back. The caller's struct brk_config is the one of the release
 * its brk_info comes from, so the library maps the caller's
 * sizeof(struct brk_info) to that release's sizeof(struct brk_config).
 * One row per release in which either grew, oldest first.
 */
static const struct {
	size_t info, config;
} layouts[] = {
	{ BRK_INFO_SIZE_VER0, BRK_CONFIG_SIZE_VER0 },
};

static uint32_t config_size_for(size_t info_size)
{
	size_t i, c = layouts[0].config;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (info_size >= layouts[i].info)
			c = layouts[i].config;
	return (uint32_t)c;
}

static int info_out(struct brk_info *out, size_t size, int (*fill)(void *,
		    uint32_t, struct brk_info *), void *h, uint32_t idx)
{
	struct brk_info tmp;
	struct brk_info *k = size >= sizeof(tmp) ? out : &tmp;
	int rc;

	rc = fill(h, idx, k);
	if (k->kind == BRK_KIND_BREAKER)
		k->config.size = config_size_for(size);
	if (size > sizeof(tmp))
		memset((unsigned char *)out + sizeof(tmp), 0, size - sizeof(tmp));
	else if (k == &tmp)
		brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

static int fill_breaker(void *h, uint32_t idx, struct brk_info *out)
{
	(void)idx;
	return brk__breaker_info(h, out);
}

static int fill_at(void *h, uint32_t idx, struct brk_info *out)
{
	return brk__info_at(h, idx, out);
}

int brk_breaker_info_sz(brk_breaker *b, struct brk_info *out, size_t size)
{
	if (!b || !out)
		return -EINVAL;
	return info_out(out, size, fill_breaker, b, 0);
}

int brk_info_at_sz(brk_segment *seg, uint32_t idx, struct brk_info *out,
		   size_t size)
{
	if (!seg || !out)
		return -EINVAL;
	return info_out(out, size, fill_at, seg, idx);
}

int brk_segment_info_sz(brk_segment *seg, struct brk_segment_info *out,
			size_t size)
{
	struct brk_segment_info tmp;
	int rc;

	if (!seg || !out)
		return -EINVAL;
	rc = brk__segment_info(seg, &tmp);
	brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

int brk_bucket_info_sz(brk_bucket *k, struct brk_bucket_info *out, size_t size)
{
	struct brk_bucket_info tmp;
	int rc;

	if (!k || !out)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	rc = brk__bucket_info(k, &tmp);
	brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

int brk_budget_info_sz(brk_budget *g, struct brk_budget_info *out, size_t size)
{
	struct brk_budget_info tmp;
	int rc;

	if (!g || !out)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	rc = brk__budget_info(g, &tmp);
	brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

/* ---- plain names: the BREAKER_0 sizes (dlsym, ctypes, &function) ----- */

void (brk_config_init)(struct brk_config *c)
{
	brk_config_init_sz(c, BRK_CONFIG_SIZE_VER0);
}

void (brk_attach_opts_init)(struct brk_attach_opts *o)
{
	brk_attach_opts_init_sz(o, BRK_ATTACH_OPTS_SIZE_VER0);
}

int (brk_segment_info)(brk_segment *seg, struct brk_segment_info *out)
{
	return brk_segment_info_sz(seg, out, BRK_SEGMENT_INFO_SIZE_VER0);
}

int (brk_breaker_info)(brk_breaker *b, struct brk_info *out)
{
	return brk_breaker_info_sz(b, out, BRK_INFO_SIZE_VER0);
}

int (brk_info_at)(brk_segment *seg, uint32_t idx, struct brk_info *out)
{
	return brk_info_at_sz(seg, idx, out, BRK_INFO_SIZE_VER0);
}

int (brk_bucket_info)(brk_bucket *k, struct brk_bucket_info *out)
{
	return brk_bucket_info_sz(k, out, BRK_BUCKET_INFO_SIZE_VER0);
}

int (brk_budget_info)(brk_budget *g, struct brk_budget_info *out)
{
	return brk_budget_info_sz(g, out, BRK_BUDGET_INFO_SIZE_VER0);
}

int (brk_events_read)(brk_segment *seg, uint64_t *cursor,
		      struct brk_event *out, size_t max, uint64_t *lost)
{
	return brk_events_read_sz(seg, cursor, out, max, lost,
				  BRK_EVENT_SIZE_VER0);
}
