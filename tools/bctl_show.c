/*
 * bctl_show.c - the read-only views: `bctl list` and `bctl inspect`.
 * Both attach read-only without the namespace check, so read permission on
 * the segment is enough.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bctl.h"
#include "record_filter.h"
#include "bctl_out.h"


const struct option bctl_opts_inspect[] = {
	{ "json", no_argument, NULL, BCTL_OPT_JSON },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

const struct option bctl_opts_list[] = {
	{ "json", no_argument, NULL, BCTL_OPT_JSON },
	BCTL_FILTER_LONGOPTS,
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/* Options of list and inspect: --json, list's filters (@f NULL: none) and
 * the common ones. */
static int show_parse(struct bctl *g, int argc, char **argv, int *json,
		      struct bctl_filter *f)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", f ? bctl_opts_list : bctl_opts_inspect)) != -1) {
		if (c == BCTL_OPT_JSON) {
			*json = 1;
			continue;
		}
		if (f && (rc = bctl_filter_opt(f, c, optarg)) != 0) {
			if (rc != BCTL_CONTINUE)
				return rc;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return BCTL_CONTINUE;
}

/* One record of the list, printed at once (a JSON array element on a line
 * of its own); returns 0, or 1 after printing a warning. */
static int list_one(const struct brk_info *in, int json, int *first)
{
	json_t *o;

	if (!json) {
		bctl_print_record_row(stdout, in);
		return 0;
	}
	o = bctl_json_record(in);
	if (!o) {
		cli_note("%s: out of memory", in->name);
		return 1;
	}
	fputs(*first ? "\n  " : ",\n  ", stdout);
	*first = 0;
	json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER |
		   JSON_REAL_PRECISION(15));
	json_decref(o);
	return 0;
}

/* Output is block-buffered into a pipe; a filter that matches rarely
 * would hold rows back until the end, so what is buffered is flushed when
 * LIST_FLUSH_MS have passed since the last flush (checked every
 * LIST_FLUSH_CHECK rows, and after every record that passes a filter). */
#define LIST_FLUSH_MS 20
#define LIST_FLUSH_CHECK 256u

static void list_flush_due(struct timespec *at)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - at->tv_sec) * 1000 +
	    (now.tv_nsec - at->tv_nsec) / 1000000 >= LIST_FLUSH_MS) {
		fflush(stdout);
		*at = now;
	}
}

/*
 * Walk the name index (bctl_filter_next()) and print each record that
 * passes the filters as soon as it is read: nothing is collected or
 * sorted, so the first line comes after a few records whatever the size
 * of the segment, and memory stays flat. Index order is the order of the
 * names' hashes.
 */
static int list_all(const struct bctl *g, brk_segment *seg, int json,
		    const struct bctl_filter *f)
{
	struct brk_segment_info si;
	struct brk_info *in = malloc(sizeof(*in));
	struct timespec at;
	unsigned long rows = 0;
	uint64_t cur = 0;
	int bad = 0, first = 1, filtered = bctl_filter_any(f);

	if (!in)
		return cli_error("out of memory");
	clock_gettime(CLOCK_MONOTONIC, &at);
	if (json)
		fputc('[', stdout);
	else
		bctl_print_list_header(stdout, f ? f->kind : 0);
	fflush(stdout); /* the header (or "["): output has begun */
	while (bctl_filter_next(bctl_shm(g), seg, &cur, f, in, &bad)) {
		bad |= list_one(in, json, &first);
		if (rows++ == 0)
			fflush(stdout); /* the first record at once */
		else if (filtered || rows % LIST_FLUSH_CHECK == 0)
			list_flush_due(&at);
	}
	free(in);
	if (json) {
		fputs(first ? "]\n" : "\n]\n", stdout);
	} else {
		brk_segment_info(seg, &si);
		fputc('\n', stdout);
		bctl_print_segment(stdout, &si);
	}
	return cli_flush_stdout() ? CLI_EXIT_ERROR : bad;
}

int bctl_cmd_list(struct bctl *g, int argc, char **argv)
{
	struct bctl_filter f;
	brk_segment *seg;
	int json = 0, rc;

	bctl_filter_init(&f);
	rc = show_parse(g, argc, argv, &json, &f);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_no_args("list", argc, argv);
	if (rc)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
	if (rc)
		return rc;
	rc = list_all(g, seg, json, &f);
	brk_detach(seg);
	return rc;
}

/* A bucket or a retry budget: its snapshot in a struct brk_info. */
static int inspect_limit(const struct bctl *g, brk_segment *seg,
			 const char *name, struct brk_info *in)
{
	brk_breaker *b;
	brk_bucket *k;
	brk_budget *u;
	int rc;

	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof(in->name), "%s", name);
	if (brk_bucket_find(seg, name, &k) == 0) {
		in->kind = BRK_KIND_BUCKET;
		rc = brk_bucket_info(k, &in->bucket);
	} else if (brk_budget_find(seg, name, &u) == 0) {
		in->kind = BRK_KIND_BUDGET;
		rc = brk_budget_info(u, &in->budget);
	} else {
		return bctl_find(g, seg, name, &b); /* says what it is */
	}
	return rc < 0 ? bctl_fail(g, name, rc) : 0;
}

static int inspect_one(const struct bctl *g, brk_segment *seg,
		       const char *name, int json)
{
	struct brk_info in;
	struct brk_segment_info si;
	brk_breaker *b;
	json_t *o;
	int rc;

	rc = brk_breaker_find(seg, name, &b);
	if (rc == -EMEDIUMTYPE)
		rc = inspect_limit(g, seg, name, &in);
	else if (rc < 0)
		return bctl_find(g, seg, name, &b);
	else if ((rc = brk_breaker_info(b, &in)) < 0)
		return bctl_fail(g, name, rc);
	if (rc)
		return rc;
	brk_segment_info(seg, &si);
	if (json) {
		o = bctl_json_record(&in);
		if (o)
			json_object_set_new(o, "segment", bctl_json_segment(&si));
		if (bctl_json_put(o, 0) < 0)
			return cli_error("cannot print JSON (out of memory or write error)");
	} else {
		bctl_print_record(stdout, &in);
		bctl_print_segment(stdout, &si);
	}
	return cli_flush_stdout();
}

/* `bctl inspect` with no NAME: the segment header and the fleet link. */
static int inspect_segment(const struct bctl *g, brk_segment *seg, int json)
{
	struct brk_segment_info si;
	json_t *o;

	brk_segment_info(seg, &si);
	if (json) {
		o = json_object();
		if (o) {
			json_object_set_new(o, "segment", bctl_json_segment(&si));
			json_object_set_new(o, "fleet_link", bctl_json_fleet(seg));
		}
		if (bctl_json_put(o, 0) < 0)
			return cli_error("cannot print JSON (out of memory or write error)");
	} else {
		bctl_print_segment(stdout, &si);
		bctl_print_fleet(stdout, seg);
	}
	(void)g;
	return cli_flush_stdout();
}

int bctl_cmd_inspect(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	const char *name;
	int json = 0, rc;

	rc = show_parse(g, argc, argv, &json, NULL);
	if (rc != BCTL_CONTINUE)
		return rc;
	if (optind >= argc) {
		rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
		if (rc)
			return rc;
		rc = inspect_segment(g, seg, json);
		brk_detach(seg);
		return rc;
	}
	rc = bctl_record_arg("inspect", "", argc, argv, &name);
	if (rc)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, name, &seg);
	if (rc)
		return rc;
	rc = inspect_one(g, seg, name, json);
	brk_detach(seg);
	return rc;
}
