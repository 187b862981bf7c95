/*
 * env.c - what the benchmark programs read about their surroundings: the
 * load average (to judge how noisy a run was) and the paths of the
 * project's executables next to the benchmark's own in the build tree.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "bench.h"

/** bench_sibling_path - "<dir of this executable>/../@rel" into @buf
 * (e.g. "tools/bctl"); @buf is "" if /proc/self/exe cannot be read. */
void bench_sibling_path(const char *rel, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	buf[0] = 0;
	if (n <= 0)
		return;
	exe[n] = 0;
	snprintf(buf, len, "%s/../%s", dirname(exe), rel);
}

/** bench_loadavg - the 1-minute load average (-1: unknown). */
double bench_loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double v = -1;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}
