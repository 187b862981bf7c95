/*
 * bctl_segment.c - `bctl segment create|info|remove`: the segment's life.
 *
 *   bctl segment create --capacity N [--arena-mb M] [--mode OCTAL]
 *                       [--group G]
 *   bctl segment info [--json]
 *   bctl segment remove [--force]
 *
 * create makes the segment with that geometry (as breakerd or the first
 * worker would); one that exists already is fine if it has the same
 * geometry, an error saying how to resize if not. info prints what the
 * library's brk_segment_info() says. remove unlinks the name; it refuses
 * (exit 75, saying why) while breakerd's heartbeat is fresh or a lease is
 * held, because a process that still has the segment mapped keeps working
 * on the unlinked copy and the next one to attach creates a fresh one: the
 * host's processes would split into two groups. --force removes anyway.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bctl.h"
#include "bctl_out.h"

enum {
	OPT_CAPACITY = BCTL_OPT_FIRST_CMD,
	OPT_ARENA_MB,
	OPT_MODE,
	OPT_GROUP,
	OPT_FORCE,
};

static const struct option create_opts[] = {
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "arena-mb", required_argument, NULL, OPT_ARENA_MB },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "group", required_argument, NULL, OPT_GROUP },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static const struct option info_opts[] = {
	{ "json", no_argument, NULL, BCTL_OPT_JSON },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static const struct option remove_opts[] = {
	{ "force", no_argument, NULL, OPT_FORCE },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

struct create_args {
	uint32_t capacity;
	uint64_t arena_bytes;
	uint32_t mode;
	int64_t gid;
};

static int create_parse(struct bctl *g, int argc, char **argv,
			struct create_args *a)
{
	int c, rc;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", create_opts)) != -1) {
		switch (c) {
		case OPT_CAPACITY:
			rc = cli_opt_capacity("--capacity", optarg, &a->capacity);
			break;
		case OPT_ARENA_MB:
			rc = cli_opt_arena_mb("--arena-mb", optarg, &a->arena_bytes);
			break;
		case OPT_MODE:
			rc = cli_opt_mode("--mode", optarg, &a->mode);
			break;
		case OPT_GROUP:
			rc = cli_opt_group("--group", optarg, &a->gid);
			break;
		default:
			rc = bctl_opt_common(g, c, argc, argv);
			if (rc != BCTL_CONTINUE)
				return rc;
			rc = 0;
		}
		if (rc)
			return rc;
	}
	rc = bctl_no_args("segment create", argc, argv);
	if (rc)
		return rc;
	if (!a->capacity)
		return cli_usage_error("segment create: --capacity N is required "
				       "(records, 1 to %u; breakerd's default is "
				       "%u)", BRK_MAX_CAPACITY, BRK_DEFAULT_CAPACITY);
	return BCTL_CONTINUE;
}

static int seg_create(struct bctl *g, int argc, char **argv)
{
	struct create_args a = { 0, 0, 0, -1 };
	struct brk_attach_opts o;
	struct brk_segment_info si;
	char err[512] = "";
	const char *shm = bctl_shm(g);
	brk_segment *seg;
	int rc;

	rc = create_parse(g, argc, argv, &a);
	if (rc != BCTL_CONTINUE)
		return rc;
	if ((rc = bctl_check_shm(g)) != 0)
		return rc;
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.capacity = a.capacity;
	o.arena_bytes = a.arena_bytes;
	o.mode = a.mode;
	o.gid = a.gid;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, &seg);
	if (rc < 0)
		return err[0] ? cli_error("%s", err)
			      : cli_error("%s: %s", cli_q(shm), brk_strerror(rc));
	brk_segment_info(seg, &si);
	brk_detach(seg);
	if (si.capacity != a.capacity ||
	    (a.arena_bytes && si.arena_bytes != a.arena_bytes))
		return cli_error("%s: exists with capacity %" PRIu32 " records and "
				 "an arena of %" PRIu64 " bytes: its size is fixed "
				 "when it is created. To resize it: stop every "
				 "worker using it and breakerd, run 'bctl --shm %s "
				 "segment remove', then create it again",
				 cli_q(shm), si.capacity, si.arena_bytes, cli_q(shm));
	printf("%s: %s, capacity %" PRIu32 " records, arena %" PRIu64
	       " bytes, %" PRIu64 " bytes in /dev/shm, mode %04o\n", shm,
	       si.creator_pid == getpid() ? "created" : "exists already",
	       si.capacity, si.arena_bytes, si.total_size, (unsigned)si.mode);
	return cli_flush_stdout();
}

static void user_name(uint32_t uid, char *buf, size_t n)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, n, "%s", res->pw_name);
	else
		snprintf(buf, n, "%" PRIu32, uid);
}

static void group_name(uint32_t gid, char *buf, size_t n)
{
	struct group gr, *res = NULL;
	char tmp[1024];

	if (getgrgid_r((gid_t)gid, &gr, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, n, "%s", res->gr_name);
	else
		snprintf(buf, n, "%" PRIu32, gid);
}

static void print_ns(const char *key, uint64_t creator, uint64_t own, int differ)
{
	if (!creator)
		bctl_kv(stdout, 0, key, "unknown");
	else if (differ)
		bctl_kv(stdout, 0, key, "%" PRIu64 " (ours: %" PRIu64 ": differs, "
			"workers here cannot attach; see docs/guide/operating.md \"Containers\")",
			creator, own);
	else
		bctl_kv(stdout, 0, key, "%" PRIu64 " (ours too)", creator);
}

static int info_text(brk_segment *seg, const struct brk_segment_info *si)
{
	char user[256], grp[256], when[40];

	user_name(si->owner_uid, user, sizeof(user));
	group_name(si->owner_gid, grp, sizeof(grp));
	if (cli_format_time(si->created_wall_ms, when, sizeof(when)) < 0)
		snprintf(when, sizeof(when), "(bad time)");
	bctl_print_segment(stdout, si);
	bctl_kv(stdout, 0, "size", "%" PRIu64 " bytes", si->total_size);
	bctl_kv(stdout, 0, "layout", "%" PRIu32, si->layout_version);
	bctl_kv(stdout, 0, "mode", "%04o", (unsigned)si->mode);
	bctl_kv(stdout, 0, "owner", "%s:%s", user, grp);
	bctl_kv(stdout, 0, "created", "%s by pid %" PRId32, when, si->creator_pid);
	print_ns("pid_namespace", si->creator_pidns, si->own_pidns,
		 !!(si->ns_differ & BRK_NS_PID));
	print_ns("time_namespace", si->creator_timens, si->own_timens,
		 !!(si->ns_differ & BRK_NS_TIME));
	bctl_print_fleet(stdout, seg);
	return cli_flush_stdout();
}

static int info_json(brk_segment *seg, const struct brk_segment_info *si)
{
	json_t *o = bctl_json_segment(si);
	char user[256], grp[256], when[40];

	if (!o)
		return cli_error("cannot print JSON (out of memory)");
	user_name(si->owner_uid, user, sizeof(user));
	group_name(si->owner_gid, grp, sizeof(grp));
	json_object_set_new(o, "size", json_integer((json_int_t)si->total_size));
	json_object_set_new(o, "layout", json_integer(si->layout_version));
	snprintf(when, sizeof(when), "%04o", (unsigned)si->mode);
	json_object_set_new(o, "mode", json_string(when));
	json_object_set_new(o, "owner_uid", json_integer(si->owner_uid));
	json_object_set_new(o, "owner", json_string(user));
	json_object_set_new(o, "owner_gid", json_integer(si->owner_gid));
	json_object_set_new(o, "group", json_string(grp));
	if (cli_format_time(si->created_wall_ms, when, sizeof(when)) == 0)
		json_object_set_new(o, "created", json_string(when));
	json_object_set_new(o, "creator_pid", json_integer(si->creator_pid));
	json_object_set_new(o, "creator_pidns", json_integer((json_int_t)si->creator_pidns));
	json_object_set_new(o, "creator_timens", json_integer((json_int_t)si->creator_timens));
	json_object_set_new(o, "own_pidns", json_integer((json_int_t)si->own_pidns));
	json_object_set_new(o, "own_timens", json_integer((json_int_t)si->own_timens));
	json_object_set_new(o, "same_pidns", json_boolean(!(si->ns_differ & BRK_NS_PID)));
	json_object_set_new(o, "same_timens", json_boolean(!(si->ns_differ & BRK_NS_TIME)));
	json_object_set_new(o, "fleet_link", bctl_json_fleet(seg));
	if (bctl_json_put(o, 0) < 0)
		return cli_error("cannot print JSON (out of memory or write error)");
	return cli_flush_stdout();
}

static int seg_info(struct bctl *g, int argc, char **argv)
{
	struct brk_segment_info si;
	brk_segment *seg;
	int c, rc, json = 0;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", info_opts)) != -1) {
		if (c == BCTL_OPT_JSON) {
			json = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	rc = bctl_no_args("segment info", argc, argv);
	if (rc)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
	if (rc)
		return rc;
	brk_segment_info(seg, &si);
	rc = json ? info_json(seg, &si) : info_text(seg, &si);
	brk_detach(seg);
	return rc;
}

/* Leases held now (bulkhead permits and half-open probes of every
 * breaker), and the first record holding one. */
static uint64_t leases_held(brk_segment *seg, char *first)
{
	struct brk_record_brief br;
	struct brk_info in;
	uint64_t cur = 0, held = 0;
	int r;

	first[0] = '\0';
	while ((r = brk_record_next_brief(seg, &cur, &br)) != -ENOENT) {
		if (r != 0 || br.kind != BRK_KIND_BREAKER)
			continue;
		if (brk_info_at(seg, br.index, &in) != 0)
			continue;
		if ((in.in_flight || in.probes_in_flight) && !first[0])
			bctl_safe_name(in.name, sizeof(in.name), first);
		held += (uint64_t)in.in_flight + in.probes_in_flight;
	}
	return held;
}

/* 0: safe to remove; otherwise the refusal was printed (exit status). */
static int remove_check(const struct bctl *g, const char *shm)
{
	struct brk_segment_info si;
	struct brk_attach_opts o;
	char first[BRK_NAME_MAX + 1], err[512] = "";
	brk_segment *seg;
	uint64_t held;
	int rc;

	(void)g;
	brk_attach_opts_init(&o);
	o.shm_name = shm;
	o.flags = BCTL_ATTACH_INSPECT;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, &seg);
	if (rc == -ENOENT)
		return cli_error("%s: no such segment", cli_q(shm));
	if (rc < 0)
		return cli_error("%s: not removed: it cannot be checked (%s); "
				 "--force removes it without checking", cli_q(shm),
				 err[0] ? err : brk_strerror(rc));
	brk_segment_info(seg, &si);
	if (si.ns_differ & BRK_NS_PID) {
		brk_detach(seg);
		cli_error("%s: not removed: created in pid namespace %" PRIu64
			  ", we are in %" PRIu64 ": breakerd and the lease owners "
			  "cannot be checked from here; run this in the segment's "
			  "pid namespace, or --force", cli_q(shm), si.creator_pidns,
			  si.own_pidns);
		return BCTL_EXIT_TEMPFAIL;
	}
	if (bctl_daemon_state(&si) == BCTL_DAEMON_OK) {
		brk_detach(seg);
		cli_error("%s: not removed: breakerd (pid %" PRId32 ") is attached, "
			  "heartbeat %" PRIu64 " ms ago; stop it and the workers "
			  "first (they would keep the unlinked copy), or --force",
			  cli_q(shm), si.daemon_pid, si.heartbeat_age_ms);
		return BCTL_EXIT_TEMPFAIL;
	}
	held = leases_held(seg, first);
	brk_detach(seg);
	if (held) {
		cli_error("%s: not removed: %" PRIu64 " lease%s held (first: '%s'): "
			  "processes are using it; stop them first (they would keep "
			  "the unlinked copy), or --force", cli_q(shm), held,
			  held == 1 ? " is" : "s are", first);
		return BCTL_EXIT_TEMPFAIL;
	}
	return 0;
}

static int seg_remove(struct bctl *g, int argc, char **argv)
{
	const char *shm = bctl_shm(g);
	int c, rc, force = 0;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", remove_opts)) != -1) {
		if (c == OPT_FORCE) {
			force = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	rc = bctl_no_args("segment remove", argc, argv);
	if (rc)
		return rc;
	if ((rc = bctl_check_shm(g)) != 0)
		return rc;
	if (!force && (rc = remove_check(g, shm)) != 0)
		return rc;
	rc = brk_segment_unlink(shm);
	if (rc == -ENOENT)
		return cli_error("%s: no such segment", cli_q(shm));
	if (rc < 0)
		return cli_error("%s: cannot remove: %s", cli_q(shm), strerror(-rc));
	printf("%s: removed (a process that still has it mapped keeps the "
	       "unlinked copy; the next to attach creates a fresh one)\n", shm);
	return cli_flush_stdout();
}

const struct bctl_cmd bctl_segment_subs[] = {
	{ "create", seg_create, create_opts, NULL, NULL, NULL },
	{ "info", seg_info, info_opts, NULL, NULL, NULL },
	{ "remove", seg_remove, remove_opts, NULL, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL }
};

int bctl_cmd_segment(struct bctl *g, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	const struct bctl_cmd *s;

	if (!sub)
		return cli_usage_error("segment: missing subcommand (create, info "
				       "or remove)");
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
		return bctl_help();
	}
	for (s = bctl_segment_subs; s->name; s++)
		if (strcmp(sub, s->name) == 0)
			return s->run(g, argc - 1, argv + 1);
	return cli_usage_error("segment: unknown subcommand '%s' (create, info "
			       "or remove)", cli_q(sub));
}
