/*
 * test_cache.c - the per-process handle cache grows in the inserting
 * thread: 10^5 names are all found again (the same handles), and the
 * process never gains a thread; a lock word inherited through fork() from
 * a thread that held it does not block the child.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include "internal.h"
#include "fixture.h"

#define N_NAMES 100000u

/* Threads of this process (/proc/self/task). */
static unsigned thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void cache_grows_to_1e5_names_without_a_thread(void **state)
{
	struct ut *u;
	brk_breaker **h = calloc(N_NAMES, sizeof *h);
	brk_breaker *b;
	char name[32];
	unsigned i;
	size_t bytes;

	(void)state;
	assert_non_null(h);
	assert_int_equal(thread_count(), 1);
	u = ut_new("cache", N_NAMES, 0);
	assert_int_equal(brk__cache_count(u->seg), 0);
	bytes = brk__cache_bytes(u->seg);
	assert_true(bytes < 1024); /* starts small */
	for (i = 0; i < N_NAMES; i++) {
		snprintf(name, sizeof name, "host/%u.example", i);
		ut_rc(0, brk_breaker_get(u->seg, name, NULL, &h[i]));
	}
	assert_int_equal(brk__cache_count(u->seg), N_NAMES);
	/* grew: at most 4 slots (16 B) per name in the current table, plus
	 * the retired ones, which add at most as much again */
	bytes = brk__cache_bytes(u->seg);
	assert_true(bytes >= N_NAMES * 2 * 16 / 2);
	assert_true(bytes <= N_NAMES * 8 * 16 + 4096);
	for (i = 0; i < N_NAMES; i++) {
		snprintf(name, sizeof name, "host/%u.example", i);
		ut_rc(0, brk_breaker_find(u->seg, name, &b));
		assert_ptr_equal(b, h[i]); /* found in the cache, same handle */
	}
	assert_int_equal(brk__cache_count(u->seg), N_NAMES);
	assert_int_equal(thread_count(), 1);
	ut_free(u);
	free(h);
}

/* A handle holds one ancestor slot per '/' of its name. */
static void handle_parents_sized_by_name(void **state)
{
	struct ut *u = ut_new("cache", 64, 0);
	brk_breaker *a, *abc;

	(void)state;
	a = ut_breaker(u, "a", NULL);
	abc = ut_breaker(u, "a/b/c", NULL);
	assert_int_equal(a->n_parents, 0);
	assert_int_equal(abc->n_parents, 2);
	assert_ptr_equal(abc->parents[0], brk__brec(a));
	assert_null(abc->parents[1]); /* "a/b" does not exist */
	assert_true(sizeof(struct brk_breaker) <= 160);
	ut_free(u);
}

/* fork() while another thread held the insert lock: the child's lock
 * word names a pid that is not the child's; the child takes it over. */
static void cache_lock_inherited_through_fork_is_taken_over(void **state)
{
	struct ut *u = ut_new("cache", 64, 0);
	int status;
	pid_t pid;

	(void)state;
	ut_breaker(u, "before", NULL);
	u->seg->cache->lock = (int32_t)getpid(); /* "another thread" holds it */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		brk_breaker *b;

		alarm(10); /* a stuck lock ends the child, not the suite */
		_exit(brk_breaker_get(u->seg, "after/fork", NULL, &b) == 0 &&
			      brk_breaker_find(u->seg, "after/fork", &b) == 0
		      ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	u->seg->cache->lock = 0;
	ut_free(u);
}

/* brk_breaker_get(NULL settings) of a cached name takes the cache alone;
 * everything else still gets the full path's answer. */
static void get_without_settings_cached_same_answers(void **state)
{
	struct ut *u = ut_new("cache", 64, 0);
	brk_breaker *b, *again = NULL;
	brk_bucket *k;

	(void)state;
	b = ut_breaker(u, "svc", NULL);
	ut_rc(0, brk_breaker_get(u->seg, "svc", NULL, &again));
	assert_ptr_equal(again, b);
	ut_rc(0, brk_bucket_get(u->seg, "rl", 1.0, 1, &k));
	ut_rc(-EMEDIUMTYPE, brk_breaker_get(u->seg, "rl", NULL, &again));
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "bad//name", NULL, &again));
	ut_rc(-EINVAL, brk_breaker_get(NULL, "svc", NULL, &again));
	ut_rc(-EINVAL, brk_breaker_get(u->seg, "svc", NULL, NULL));
	ut_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cache_grows_to_1e5_names_without_a_thread),
		cmocka_unit_test(handle_parents_sized_by_name),
		cmocka_unit_test(cache_lock_inherited_through_fork_is_taken_over),
		cmocka_unit_test(get_without_settings_cached_same_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
