/*
 * ft.c - helpers of the tests/features programs; see ft.h.
 */
#include "ft.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FT_MAX_ARGS 32

brk_breaker *ft_breaker(brk_segment *seg, const char *name,
			const struct brk_config *cfg)
{
	brk_breaker *b = NULL;
	int rc = brk_breaker_get(seg, name, cfg, &b);

	if (rc != 0) {
		fprintf(stderr, "[%d] brk_breaker_get(%s): %d %s\n",
			(int)getpid(), name, rc, brk_strerror(rc));
		exit(1);
	}
	return b;
}

uint64_t ft_events_written(brk_segment *seg)
{
	struct brk_segment_info si;

	if (brk_segment_info(seg, &si) != 0)
		return 0;
	return si.events_written;
}

/* ---- workers ------------------------------------------------------- */

static void worker_calls(struct ft_worker *w, brk_breaker *b)
{
	struct brk_refusal why;
	brk_permit p;
	int i, rc;

	w->admitted = w->refused = w->release_errors = 0;
	w->last_rc = 0;
	w->by[0] = '\0';
	w->wait_ms = 0;
	for (i = 0; i < w->n; i++) {
		memset(&why, 0, sizeof(why));
		rc = brk_acquire(b, &p, &why);
		w->last_rc = rc;
		if (rc != 0) {
			w->refused++;
			memcpy(w->by, why.by, sizeof(w->by));
			w->by[BRK_NAME_MAX] = '\0';
			w->wait_ms = why.wait_ms;
			continue;
		}
		w->admitted++;
		if (w->hold_ms > 0)
			it_sleep_ms((unsigned)w->hold_ms);
		if (brk_release(&p, w->outcome, w->reason, 0) != 0)
			w->release_errors++;
	}
}

static int worker_main(int idx, void *arg)
{
	struct ft_worker *w = arg;
	brk_segment *seg;
	brk_breaker *b;
	int seen = 0;

	(void)idx;
	if (w->disabled_env)
		setenv(BRK_DISABLED_ENV, "1", 1);
	else
		unsetenv(BRK_DISABLED_ENV);
	seg = it_attach(w->shm, 0);
	b = ft_breaker(seg, w->name, &w->cfg);
	AT_STORE(&w->self_pid, (int32_t)getpid());
	for (;;) {
		int s = AT_LOAD(&w->seq);
		if (s == seen) {
			it_sleep_us(200);
			continue;
		}
		seen = s;
		if (AT_LOAD(&w->op) == FT_OP_EXIT)
			break;
		worker_calls(w, b);
		AT_STORE(&w->ack, s);
	}
	brk_detach(seg);
	AT_STORE(&w->ack, seen);
	return 0;
}

struct ft_worker *ft_worker_start(const char *shm, const char *name,
				  const struct brk_config *cfg,
				  int disabled_env)
{
	struct ft_worker *w = it_shared(sizeof(*w));

	snprintf(w->shm, sizeof(w->shm), "%s", shm);
	snprintf(w->name, sizeof(w->name), "%s", name);
	if (cfg)
		w->cfg = *cfg;
	else
		brk_config_init(&w->cfg);
	w->disabled_env = disabled_env;
	w->pid = it_fork(worker_main, 0, w);
	return w;
}

static int worker_cmd(struct ft_worker *w, int op, int timeout_ms)
{
	uint64_t deadline = it_now_ms() + (uint64_t)timeout_ms;
	int s = AT_LOAD(&w->seq) + 1;

	AT_STORE(&w->op, op);
	AT_STORE(&w->seq, s);
	while (AT_LOAD(&w->ack) != s) {
		if (it_now_ms() > deadline)
			return -1;
		it_sleep_us(200);
	}
	return 0;
}

int ft_worker_calls(struct ft_worker *w, int n, int outcome, int reason)
{
	w->n = n;
	w->outcome = outcome;
	w->reason = reason;
	return worker_cmd(w, FT_OP_CALLS, 10000);
}

void ft_worker_stop(struct ft_worker *w)
{
	int st;

	if (worker_cmd(w, FT_OP_EXIT, 5000) == 0 && it_wait(w->pid, 5000, &st) == 0)
		return;
	it_kill(w->pid);
}

/* ---- bctl ---------------------------------------------------------- */

static void slurp(int fd, char *buf, size_t cap)
{
	ssize_t n;

	if (!buf)
		return;
	n = pread(fd, buf, cap - 1, 0);
	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\n') /* one-line messages print neatly */
		n--;
	buf[n] = '\0';
}

int ft_bctl(const char *bctl, const char *shm, char *out, char *err,
	    size_t cap, ...)
{
	char *argv[FT_MAX_ARGS];
	FILE *fo = tmpfile(), *fe = tmpfile();
	va_list ap;
	int n = 0, st = 0, rc;
	pid_t pid;
	char *a;

	if (!fo || !fe) {
		fprintf(stderr, "tmpfile: %s\n", strerror(errno));
		exit(1);
	}
	argv[n++] = (char *)bctl;
	argv[n++] = "--shm";
	argv[n++] = (char *)shm;
	va_start(ap, cap);
	while ((a = va_arg(ap, char *)) != NULL && n < FT_MAX_ARGS - 1)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	pid = it_spawn(argv, fileno(fo), fileno(fe));
	if (it_wait(pid, 10000, &st) < 0) {
		it_kill(pid);
		rc = -1;
	} else if (WIFEXITED(st)) {
		rc = WEXITSTATUS(st);
	} else {
		rc = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
	}
	slurp(fileno(fo), out, cap);
	slurp(fileno(fe), err, cap);
	fclose(fo);
	fclose(fe);
	return rc;
}

/* ---- lines from a pipe --------------------------------------------- */

void ft_lines_init(struct ft_lines *r, int fd)
{
	r->fd = fd;
	r->len = 0;
	r->eof = 0;
}

static int take_line(struct ft_lines *r, char *line, size_t cap)
{
	char *nl = memchr(r->buf, '\n', r->len);
	size_t n, k;

	if (!nl) {
		if (r->len < sizeof(r->buf))
			return 0;
		nl = r->buf + r->len - 1; /* an over-long line: cut it */
	}
	n = (size_t)(nl - r->buf);
	k = n < cap - 1 ? n : cap - 1;
	memcpy(line, r->buf, k);
	line[k] = '\0';
	r->len -= n + 1;
	memmove(r->buf, nl + 1, r->len);
	return 1;
}

int ft_line(struct ft_lines *r, char *line, size_t cap, int timeout_ms)
{
	uint64_t deadline = it_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		struct pollfd pfd = { r->fd, POLLIN, 0 };
		int64_t left;
		ssize_t got;

		if (take_line(r, line, cap))
			return 1;
		if (r->eof)
			return -1;
		left = (int64_t)deadline - (int64_t)it_now_ms();
		if (left < 0)
			left = 0;
		got = poll(&pfd, 1, (int)left);
		if (got == 0)
			return 0;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
		if (got == 0)
			r->eof = 1;
		else if (got > 0)
			r->len += (size_t)got;
	}
}

int64_t ft_json_u64(const char *line, const char *key)
{
	char pat[80];
	const char *p;
	char *end;
	unsigned long long v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

int ft_json_has(const char *line, const char *key, const char *value)
{
	char pat[160];

	snprintf(pat, sizeof(pat), "\"%s\":\"%s\"", key, value);
	return strstr(line, pat) != NULL;
}
