/*
 * proc_stat.c - see proc_stat.h. The command name (field 2) may hold
 * spaces and parentheses: fields are counted from the last ')'.
 */
#include "proc_stat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int bench_proc_stat(pid_t pid, struct bench_proc_stat *out)
{
	char path[64], buf[2048], *p;
	unsigned long long ut, st;
	long long cut, cst;
	int pp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after ")": state (3), ppid (4) ... utime (14), stime (15),
	 * cutime (16), cstime (17) */
	if (!p || sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %llu %llu %lld %lld", &pp, &ut, &st, &cut, &cst) != 5)
		return -EPROTO;
	out->ppid = (pid_t)pp;
	out->utime = ut;
	out->stime = st;
	out->cutime = cut > 0 ? (uint64_t)cut : 0;
	out->cstime = cst > 0 ? (uint64_t)cst : 0;
	return 0;
}
