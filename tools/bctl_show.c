/*
 * bctl_show.c - the read-only views: `bctl list` and `bctl inspect`.
 * Both attach read-only without the namespace check, so read permission on
 * the segment is enough.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bctl.h"
#include "bctl_out.h"


static const struct option show_opts[] = {
	{ "json", no_argument, NULL, BCTL_OPT_JSON },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/* Options of list and inspect: --json and the common ones. */
static int show_parse(struct bctl *g, int argc, char **argv, int *json)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", show_opts)) != -1) {
		if (c == BCTL_OPT_JSON) {
			*json = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return BCTL_CONTINUE;
}

/* One record of the list; returns 0, or 1 after printing a warning. */
static int list_one(const struct bctl *g, brk_segment *seg, uint32_t idx,
		    int json, json_t *arr)
{
	struct brk_info in;
	int rc = brk_info_at(seg, idx, &in);

	if (rc == -ENOENT)
		return 0; /* being created right now */
	if (rc < 0) {
		cli_note("%s: record %" PRIu32 ": %s", cli_q(bctl_shm(g)), idx,
			 brk_strerror(rc));
		return 1;
	}
	if (json)
		json_array_append_new(arr, bctl_json_record(&in));
	else
		bctl_print_record_row(stdout, &in);
	return 0;
}

static int list_all(const struct bctl *g, brk_segment *seg, int json)
{
	struct brk_segment_info si;
	json_t *arr = json ? json_array() : NULL;
	uint32_t n, i;
	int bad = 0;

	brk_segment_info(seg, &si);
	/* refs are arena units: records start anywhere below the units
	 * handed out so far (the rest answer -ENOENT) */
	n = si.unit_bytes ? (uint32_t)(si.arena_used_bytes / si.unit_bytes) : 0;
	if (json && !arr)
		return cli_error("out of memory");
	if (!json)
		bctl_print_list_header(stdout);
	for (i = 0; i < n; i++)
		bad |= list_one(g, seg, i, json, arr);
	if (json && bctl_json_put(arr, 0) < 0)
		return cli_error("write error on standard output");
	if (!json) {
		fputc('\n', stdout);
		bctl_print_segment(stdout, &si);
	}
	return cli_flush_stdout() ? CLI_EXIT_ERROR : bad;
}

int bctl_cmd_list(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	int json = 0, rc;

	rc = show_parse(g, argc, argv, &json);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_no_args("list", argc, argv);
	if (rc)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
	if (rc)
		return rc;
	rc = list_all(g, seg, json);
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

int bctl_cmd_inspect(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	const char *name;
	int json = 0, rc;

	rc = show_parse(g, argc, argv, &json);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_name_arg("inspect", argc, argv, &name);
	if (rc)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, name, &seg);
	if (rc)
		return rc;
	rc = inspect_one(g, seg, name, json);
	brk_detach(seg);
	return rc;
}
