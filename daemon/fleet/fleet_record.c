/*
 * fleet_record.c - a record by name and its fleet setting.
 */
#include "fleet_record.h"

#include <errno.h>
#include <string.h>

int fleet_breaker_lookup(brk_segment *seg, const char *name,
			 brk_breaker **b, struct brk_info *info)
{
	int rc = brk_breaker_find(seg, name, b);

	if (rc < 0)
		return rc;
	rc = brk_breaker_info(*b, info);
	if (rc < 0)
		return rc;
	return info->config.fleet == 1;
}

int fleet_pace_lookup(brk_segment *seg, const char *name, brk_bucket **k)
{
	struct brk_bucket_info bi;
	int rc = brk_bucket_find(seg, name, k);

	if (rc < 0)
		return rc;
	rc = brk_bucket_info(*k, &bi);
	if (rc < 0)
		return rc;
	if (!bi.paced)
		return 0;
	return bi.fleet == 1;
}
