/*
 * bctl_health.c - health states of a name and its subtree (breaker.h
 * "Health states"):
 *   bctl health NAME [--json]    state, code, the record that decided,
 *                                since when, and the children counts
 *   bctl fallback NAME on|off    NAME's fallback flag (wins over every
 *                                other state until turned off)
 * Both attach read-write without creating anything, so the evaluation is
 * recorded (one event per transition, whoever notices it); health falls
 * back to a read-only attach when the segment is not writable for us.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bctl.h"
#include "bctl_out.h"

const struct option bctl_opts_health[] = {
	{ "json", no_argument, NULL, BCTL_OPT_JSON },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/* Options: --json (where @json is not NULL) and the common ones. */
static int health_parse(struct bctl *g, int argc, char **argv, int *json)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv",
				json ? bctl_opts_health : bctl_opts_common)) != -1) {
		if (c == BCTL_OPT_JSON && json) {
			*json = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return BCTL_CONTINUE;
}

/* The one message for a name no record of the subtree carries. */
static int no_such(const char *name)
{
	return cli_error("%s: no such breaker, bucket or budget", cli_q(name));
}

/* Attach read-write (never create), so the evaluation is recorded; a
 * segment we may only read is attached read-only (computed only). */
static int health_attach(const struct bctl *g, brk_segment **seg)
{
	struct brk_attach_opts o;
	char err[256] = "";
	int rc = -EINVAL;

	brk_attach_opts_init(&o);
	o.shm_name = bctl_shm(g);
	o.flags = BRK_ATTACH_NOCREATE;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	if (brk_shm_name_validate(o.shm_name) == 0)
		rc = brk_attach(&o, seg);
	if (rc == 0)
		return 0;
	if (rc == -EACCES || rc == -EPERM)
		return bctl_attach(g, BRK_ATTACH_NOCREATE | BCTL_ATTACH_INSPECT,
				   NULL, seg);
	return bctl_attach(g, BRK_ATTACH_NOCREATE, NULL, seg); /* says why */
}

static json_t *health_json(const char *name, const struct brk_health *h)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "state", json_string(brk_health_state_name(h->state)));
	json_object_set_new(o, "code", json_string(brk_health_code_name(h->code)));
	json_object_set_new(o, "by", json_string(h->by));
	json_object_set_new(o, "since_age_ms", h->since_age_ms == UINT64_MAX
				       ? json_null()
				       : json_integer((json_int_t)h->since_age_ms));
	json_object_set_new(o, "children", json_integer(h->children));
	json_object_set_new(o, "children_unavailable",
			    json_integer(h->children_unavailable));
	return o;
}

static void health_print(brk_segment *seg, const char *name,
			 const struct brk_health *h)
{
	printf("%s: %s\n", name, brk_health_state_name(h->state));
	printf("  code: %s\n", brk_health_code_name(h->code));
	printf("  by: %s\n", h->by);
	if (h->since_age_ms == UINT64_MAX && bctl_kind_of(seg, name) == BRK_KIND_BREAKER)
		/* the breaker has no room for its health word (brk_health()
		 * computes only): the arena is full, or we attached read-only */
		printf("  since: not recorded (no room for it: the segment's arena "
		       "is full, or it is attached read-only)\n");
	else if (h->since_age_ms == UINT64_MAX)
		printf("  since: not recorded (no breaker named %s)\n", name);
	else
		printf("  since: %" PRIu64 " ms ago\n", h->since_age_ms);
	printf("  children: %" PRIu32 " (%" PRIu32 " unavailable)\n",
	       h->children, h->children_unavailable);
}

int bctl_cmd_health(struct bctl *g, int argc, char **argv)
{
	struct brk_health h;
	brk_segment *seg;
	const char *name;
	int rc, json = 0;

	rc = health_parse(g, argc, argv, &json);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_name_arg("health", argc, argv, &name);
	if (rc)
		return rc;
	rc = health_attach(g, &seg);
	if (rc)
		return rc;
	rc = brk_health(seg, name, &h);
	if (rc == -ENOENT) {
		rc = no_such(name);
	} else if (rc < 0) {
		rc = bctl_fail(g, name, rc);
	} else if (json) {
		rc = bctl_json_put(health_json(name, &h), 0) < 0 ? CLI_EXIT_ERROR : 0;
	} else {
		health_print(seg, name, &h);
		rc = 0;
	}
	brk_detach(seg);
	if (rc == 0 && cli_flush_stdout())
		rc = CLI_EXIT_ERROR;
	return rc;
}

int bctl_cmd_fallback(struct bctl *g, int argc, char **argv)
{
	brk_segment *seg;
	const char *name, *arg;
	int rc, on;

	rc = health_parse(g, argc, argv, NULL);
	if (rc != BCTL_CONTINUE)
		return rc;
	if (optind >= argc)
		return cli_usage_error("fallback: missing breaker NAME");
	name = argv[optind];
	rc = bctl_check_name(name);
	if (rc)
		return rc;
	if (optind + 1 >= argc)
		return cli_usage_error("fallback: missing 'on' or 'off' after %s",
				       cli_q(name));
	arg = argv[optind + 1];
	if (optind + 2 < argc)
		return cli_usage_error("fallback: unexpected argument '%s'",
				       cli_q(argv[optind + 2]));
	if (strcmp(arg, "on") == 0)
		on = 1;
	else if (strcmp(arg, "off") == 0)
		on = 0;
	else
		return cli_usage_error("fallback: '%s' is not 'on' or 'off'",
				       cli_q(arg));
	rc = bctl_attach(g, BRK_ATTACH_NOCREATE, NULL, &seg);
	if (rc)
		return rc;
	rc = brk_set_fallback(seg, name, on);
	if (rc == 0) {
		if (on)
			printf("%s: fallback on: health is 'fallback' until 'bctl "
			       "fallback %s off'\n", name, name);
		else
			printf("%s: fallback off\n", name);
	} else if (rc == -EALREADY) {
		cli_note("%s: fallback already %s, unchanged", name, arg);
		rc = 0;
	} else if (rc == -ENOENT) {
		struct brk_health h;
		rc = brk_health(seg, name, &h) == -ENOENT
			     ? no_such(name)
			     : cli_error("%s: no breaker named '%s': the fallback flag "
					 "lives on NAME's own breaker ('bctl config %s' "
					 "creates one)", cli_q(name), cli_q(name), cli_q(name));
	} else if (rc == -EMEDIUMTYPE) {
		/* "bctl: NAME: ...", as the other fallback errors */
		rc = cli_error("%s: is a %s, not a breaker (the fallback flag lives "
			       "on a breaker)", cli_q(name), bctl_kind_word(seg, name));
	} else {
		rc = bctl_fail(g, name, rc);
	}
	brk_detach(seg);
	return rc;
}
