/*
 * scale_bctl.c - bctl at scale: each command of scale_bctl_cmds[] is
 * fork/exec'd with its stdout on a pipe that this process drains; the
 * first-line latency is fork to the first byte read, the total is fork
 * to the child's exit. The output is counted, not kept: lines, and
 * series = lines that do not start with '#' (Prometheus comments).
 *
 * A command runs only if `bctl help` mentions its `needs` string, so a
 * row for an option bctl does not have yet says so instead of failing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "scale.h"

/* The table: one row per command (the record names are
 * "scale/NNNNNNN.example", see scale.c). */
const struct scale_bctl_cmd scale_bctl_cmds[] = {
	{ "bctl list", { "list", NULL }, NULL },
	{ "bctl list --prefix scale/0000", { "list", "--prefix", "scale/0000", NULL }, "--prefix" },
	{ "bctl list --state open", { "list", "--state", "open", NULL }, "--state" },
	{ "bctl list --json", { "list", "--json", NULL }, NULL },
	{ "bctl metrics", { "metrics", NULL }, NULL },
	{ "bctl metrics --not-closed", { "metrics", "--not-closed", NULL }, "--not-closed" },
	{ "bctl metrics --changed-within 1m", { "metrics", "--changed-within", "1m", NULL }, "--changed-within" },
	{ "bctl metrics --by-level 1", { "metrics", "--by-level", "1", NULL }, "--by-level" },
};
const int scale_bctl_ncmds =
	(int)(sizeof(scale_bctl_cmds) / sizeof(scale_bctl_cmds[0]));

#define READ_BUF (1u << 20)

/* fork/exec @bctl with @argv_tail (after "--shm @shm" when @shm is not
 * NULL), stdout on a pipe, stderr to /dev/null. Returns the read end, or
 * -errno; *pid is the child. */
static int spawn(const char *bctl, const char *shm, const char *const *tail,
		 pid_t *pid)
{
	const char *argv[16];
	pid_t parent = getpid();
	int fd[2], n = 0, i, null;

	argv[n++] = bctl;
	if (shm) {
		argv[n++] = "--shm";
		argv[n++] = shm;
	}
	for (i = 0; tail[i] && n < 15; i++)
		argv[n++] = tail[i];
	argv[n] = NULL;
	if (pipe(fd) != 0)
		return -errno;
	fflush(NULL);
	*pid = fork();
	if (*pid < 0) {
		int rc = -errno;
		close(fd[0]);
		close(fd[1]);
		return rc;
	}
	if (*pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(1);
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, STDERR_FILENO);
			close(null);
		}
		execv(bctl, (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	return fd[0];
}

static int reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int scale_bctl_has(const char *bctl, const char *needle)
{
	static const char *const help[] = { "help", NULL };
	char *buf, *tmp;
	size_t len = 0, cap = 1 << 16;
	pid_t pid = 0;
	ssize_t n;
	int fd, found;

	if (!needle)
		return 1;
	buf = malloc(cap + 1);
	if (!buf)
		return -1;
	fd = spawn(bctl, NULL, help, &pid);
	if (fd < 0) {
		free(buf);
		return -1;
	}
	while ((n = read(fd, buf + len, cap - len)) > 0 ||
	       (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		len += (size_t)n;
		if (len == cap) {
			tmp = realloc(buf, cap * 2 + 1);
			if (!tmp)
				break;
			buf = tmp;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	found = reap(pid) == 0 ? strstr(buf, needle) != NULL : -1;
	free(buf);
	return found;
}

/* One run: fills @first_ms, @total_ms, @lines, @series. Returns bctl's
 * exit status or -errno. */
static int run_once(const char *bctl, const char *shm,
		    const struct scale_bctl_cmd *cmd, char *buf, double *first_ms,
		    double *total_ms, uint64_t *lines, uint64_t *series)
{
	uint64_t t0 = bench_now_ns(), t_first = 0;
	int fd, at_line_start = 1, st;
	pid_t pid = 0;
	ssize_t n, i;

	*lines = *series = 0;
	fd = spawn(bctl, shm, cmd->args, &pid);
	if (fd < 0)
		return fd;
	for (;;) {
		n = read(fd, buf, READ_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!t_first)
			t_first = bench_now_ns();
		for (i = 0; i < n; i++) {
			if (at_line_start && buf[i] != '#' && buf[i] != '\n')
				(*series)++;
			at_line_start = buf[i] == '\n';
			*lines += at_line_start;
		}
	}
	close(fd);
	st = reap(pid);
	*total_ms = (double)(bench_now_ns() - t0) / 1e6;
	*first_ms = t_first ? (double)(t_first - t0) / 1e6 : *total_ms;
	return st;
}

void scale_bctl_run(const char *bctl, const char *shm,
		    const struct scale_bctl_cmd *cmd, int runs,
		    uint64_t budget_ms, struct scale_bctl_result *out)
{
	double first[BENCH_MAX_RUNS], total[BENCH_MAX_RUNS], spent = 0;
	char *buf;
	int r, st;

	memset(out, 0, sizeof(*out));
	if (access(bctl, X_OK) != 0) {
		snprintf(out->note, sizeof(out->note), "no bctl at %s", bctl);
		return;
	}
	st = scale_bctl_has(bctl, cmd->needs);
	if (st != 1) {
		snprintf(out->note, sizeof(out->note), st == 0
			 ? "bctl has no %s" : "bctl help failed", cmd->needs);
		return;
	}
	buf = malloc(READ_BUF);
	if (!buf) {
		out->state = -1;
		snprintf(out->note, sizeof(out->note), "out of memory");
		return;
	}
	if (runs > BENCH_MAX_RUNS)
		runs = BENCH_MAX_RUNS;
	for (r = 0; r < runs && (r == 0 || spent < (double)budget_ms); r++) {
		st = run_once(bctl, shm, cmd, buf, &first[r], &total[r],
			      &out->lines, &out->series);
		if (st != 0) {
			out->state = -1;
			snprintf(out->note, sizeof(out->note),
				 "failed (exit status %d)", st);
			free(buf);
			return;
		}
		spent += total[r];
	}
	free(buf);
	out->state = 1;
	out->runs = r;
	out->first_ms = bench_median(first, r);
	out->total_ms = bench_median(total, r);
}
