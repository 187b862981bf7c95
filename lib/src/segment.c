/*
 * segment.c - create, attach, validate and detach the shm segment.
 *
 * Creation (any process may create; the library does, so workers run
 * without the daemon): shm_open(O_CREAT|O_EXCL) -> fchmod/fchown ->
 * ftruncate -> posix_fallocate (a full /dev/shm fails now, not as SIGBUS
 * later) -> initialise -> cmm_smp_wmb() -> publish the magic last.
 * Attachers fstat (regular file, a trusted owner, not world-writable,
 * final size), wait with a deadline for the magic, then validate every
 * geometry field against what they compute themselves: the segment is
 * untrusted.
 *
 * Init-in-progress marker (issue 22): the creator makes the object with
 * the owner's execute bit set (BRK__INIT_MARK; a segment is never
 * executable otherwise) and clears it after publishing the magic. So a
 * segment below its header's size or with magic 0 is either being made
 * (marker set: wait, then -ETIMEDOUT "creator died half-way", which
 * breakerd repairs) or was emptied after it was made (no marker:
 * -BRK_ETRUNCATED at once, never re-initialised).
 */
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi.h"
#include "ident.h"
#include "internal.h"
#include "origin.h"
#include "subtree.h"

#define BRK__INIT_MARK S_IXUSR

struct attach_ctx {
	const struct brk_attach_opts *o;
	const char *name;
	uint64_t deadline_ns;
};

static int fail(const struct attach_ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct attach_ctx *c, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->o->errbuf || c->o->errbuf_len == 0)
		return code;
	n = snprintf(c->o->errbuf, c->o->errbuf_len, "%s: ", c->name);
	if (n < 0 || (size_t)n >= c->o->errbuf_len)
		return code;
	va_start(ap, fmt);
	vsnprintf(c->o->errbuf + n, c->o->errbuf_len - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

void brk_attach_opts_init_sz(struct brk_attach_opts *o, size_t size)
{
	struct brk_attach_opts d;

	if (!o)
		return;
	memset(&d, 0, sizeof(d));
	d.gid = -1;
	brk__struct_out(o, size, &d, sizeof(d));
	if (size >= sizeof(o->size))
		o->size = (uint32_t)(size < BRK_STRUCT_SIZE_MAX ? size
							: BRK_STRUCT_SIZE_MAX);
}

const char *brk_resolve_shm_name(const char *flag)
{
	const char *env;

	if (flag) /* an empty --shm is an error, never the default */
		return flag;
	env = getenv(BRK_SHM_ENV);
	if (env && *env)
		return env;
	return BRK_DEFAULT_SHM;
}

int brk_shm_name_validate(const char *name)
{
	size_t len;

	if (!name || name[0] != '/')
		return -EINVAL;
	len = strnlen(name, BRK_SHM_NAME_MAX + 1);
	if (len > BRK_SHM_NAME_MAX)
		return -ENAMETOOLONG;
	if (len < 2 || strchr(name + 1, '/'))
		return -EINVAL;
	return 0;
}

static uint64_t ns_inode(const char *which)
{
	struct stat st;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/ns/%s", which);
	if (stat(path, &st) != 0)
		return 0;
	return (uint64_t)st.st_ino;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void owner_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

static void init_header(brk_segment *s, uint32_t cap, uint32_t units)
{
	struct brk__header *h = s->hdr;

	h->version = BRK__LAYOUT_VERSION;
	h->header_size = BRK__HEADER_SIZE;
	h->total_size = brk__total_size(cap, units);
	h->capacity = cap;
	h->unit_size = BRK__UNIT;
	h->index_slots = brk__index_slots(cap);
	h->event_slots = BRK__EVENT_SLOTS;
	h->event_size = BRK__EVENT_SIZE;
	h->arena_units = units;
	h->index_offset = brk__index_offset();
	h->arena_offset = brk__arena_offset(cap);
	h->events_offset = brk__events_offset(cap, units);
	h->lmap_offset = brk__lmap_offset(cap, units);
	h->lmap_words = brk__lmap_words(units);
	h->arena_next = 1; /* unit 0 is never handed out (0: no block) */
	h->created_mono_ns = brk__now(s);
	h->created_wall_ns = wall_ns();
	h->creator_pid = (uint64_t)getpid();
	h->pidns_ino = ns_inode("pid");
	h->timens_ino = ns_inode("time");
	cmm_smp_wmb();
	uatomic_set(&h->magic, BRK__MAGIC);
}

static int map_fd(brk_segment *s, int fd, uint64_t size)
{
	int prot = s->readonly ? PROT_READ : PROT_READ | PROT_WRITE;
	void *p = mmap(NULL, size, prot, MAP_SHARED, fd, 0);

	struct stat st;

	if (p == MAP_FAILED)
		return -errno;
	if (fstat(fd, &st) == 0) {
		s->mode = (uint32_t)(st.st_mode & 0777);
		s->uid = (uint32_t)st.st_uid;
		s->gid = (uint32_t)st.st_gid;
	}
	s->base = p;
	s->size = size;
	s->hdr = p;
	return 0;
}

/* The arena's units for the options (validated by brk_attach()). */
static uint32_t arena_units_for(const struct brk_attach_opts *o, uint32_t cap)
{
	uint64_t u = o->arena_bytes ? o->arena_bytes / BRK__UNIT
				    : brk__default_arena_units(cap);

	return u > BRK__ARENA_MAX_UNITS ? BRK__ARENA_MAX_UNITS : (uint32_t)u;
}

/* Returns 0 created, -EEXIST if someone else has the name, or an error. */
static int create(brk_segment *s, struct attach_ctx *c)
{
	const struct brk_attach_opts *o = c->o;
	uint32_t cap = o->capacity ? o->capacity : BRK_DEFAULT_CAPACITY;
	uint32_t mode = o->mode ? o->mode : BRK_DEFAULT_MODE;
	uint32_t units = arena_units_for(o, cap);
	uint64_t size = brk__total_size(cap, units);
	int fd, rc;

	/* the marker is set from the first moment the name exists */
	fd = shm_open(c->name, O_RDWR | O_CREAT | O_EXCL, mode | BRK__INIT_MARK);
	if (fd < 0)
		return errno == EEXIST ? -EEXIST
		       : fail(c, -errno, "cannot create: %s", strerror(errno));
	if (fchmod(fd, mode | BRK__INIT_MARK) != 0 ||
	    (o->gid >= 0 && fchown(fd, (uid_t)-1, (gid_t)o->gid) != 0)) {
		rc = fail(c, -errno, "cannot set mode/group: %s", strerror(errno));
		goto undo;
	}
	if (ftruncate(fd, (off_t)size) != 0) {
		rc = fail(c, -errno, "cannot size to %llu bytes: %s",
			  (unsigned long long)size, strerror(errno));
		goto undo;
	}
	rc = posix_fallocate(fd, 0, (off_t)size);
	if (rc != 0) {
		rc = fail(c, rc == ENOSPC ? -ENOSPC : -rc,
			  "cannot allocate %llu bytes in /dev/shm: %s",
			  (unsigned long long)size, strerror(rc));
		goto undo;
	}
	rc = map_fd(s, fd, size);
	if (rc != 0) {
		fail(c, rc, "mmap: %s", strerror(-rc));
		goto undo;
	}
	init_header(s, cap, units);
	/* made: clear the init-in-progress marker (a failure leaves it, so
	 * the segment reads as half-made, which breakerd repairs) */
	if (fchmod(fd, mode) == 0)
		s->mode = mode;
	close(fd);
	return 0;
undo:
	/* We created this name and it never became valid: ours to remove. */
	shm_unlink(c->name);
	close(fd);
	return rc;
}

static int sleep_until_retry(const struct attach_ctx *c)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	if (brk__monotonic_ns(NULL) >= c->deadline_ns)
		return -ETIMEDOUT;
	nanosleep(&ts, NULL);
	return 0;
}

static int user_uid(const char *name, uid_t *uid)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwnam_r(name, &pw, tmp, sizeof(tmp), &res) != 0 || !res)
		return 0;
	*uid = res->pw_uid;
	return 1;
}

/* 1 if @uid is named in the comma-separated list @list (user names or
 * uids; blanks around an entry are ignored, an unknown name matches
 * nobody). */
static int uid_listed(uid_t uid, const char *list)
{
	char item[256];
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *s = item, *e, *num_end;
		unsigned long v;
		uid_t u;

		if (n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			while (*s == ' ' || *s == '\t')
				s++;
			e = s + strlen(s);
			while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
				*--e = '\0';
			if (*s >= '0' && *s <= '9') {
				errno = 0;
				v = strtoul(s, &num_end, 10);
				if (!*num_end && errno == 0 && v == (unsigned long)uid)
					return 1;
			} else if (*s && user_uid(s, &u) && u == uid) {
				return 1;
			}
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* The owners whose segment we use (issue 22): root, ourselves, the system
 * user breakerd (the systemd unit's), and $BREAKERD_TRUSTED_OWNERS. Any
 * other user could plant a segment under our name (/dev/shm is
 * world-writable) and steer, or truncate, everyone's breakers. */
static int owner_trusted(uid_t uid)
{
	uid_t u;

	if (uid == 0 || uid == geteuid())
		return 1;
	if (user_uid("breakerd", &u) && u == uid)
		return 1;
	/* secure_getenv: in a set-uid/set-gid or file-capability program
	 * the caller's environment must not widen whom it trusts */
	return uid_listed(uid, secure_getenv(BRK_TRUSTED_OWNERS_ENV));
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISLNK(m) ? "a symbolic link" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/* What sits at the name if not a segment (open() said only "too many
 * levels of symbolic links" or, for a directory, "invalid argument"). */
static int not_a_segment(const struct attach_ctx *c, int code,
			 const struct stat *st)
{
	char who[300];

	owner_name(st->st_uid, who, sizeof(who));
	if (S_ISDIR(st->st_mode))
		return fail(c, code, "not a segment: /dev/shm%s is a directory, "
			    "owned by %s; if nothing uses it, remove it (rmdir "
			    "/dev/shm%s)", c->name, who, c->name);
	return fail(c, code, "not a segment: /dev/shm%s is %s, owned by %s "
		    "(a segment is a regular file, never followed through a "
		    "link); if nothing uses it, remove it (bctl --shm %s "
		    "segment remove --force)", c->name, file_kind(st->st_mode),
		    who, c->name);
}

static int check_owner(const struct attach_ctx *c, const struct stat *st,
		       int readonly)
{
	char who[300];
	const char *env;

	if (!S_ISREG(st->st_mode))
		return not_a_segment(c, -EPROTO, st);
	owner_name(st->st_uid, who, sizeof(who));
	if (!owner_trusted(st->st_uid)) {
		env = secure_getenv(BRK_TRUSTED_OWNERS_ENV);
		return fail(c, -BRK_EUNTRUSTED, "owned by %s, not a trusted "
			    "owner (root, us: uid %u, the system user breakerd, "
			    "or a user in $%s%s%s%s): refused %s. If that "
			    "user runs your breakerd, add it to %s (names or "
			    "uids, comma-separated); if not, someone may have "
			    "planted it: stop its users and remove it (bctl "
			    "--shm %s segment remove --force)", who,
			    (unsigned)geteuid(), BRK_TRUSTED_OWNERS_ENV,
			    env ? ", now '" : ", unset", env ? env : "",
			    env ? "'" : "", readonly ? "even to read" :
			    "(read-only too)", BRK_TRUSTED_OWNERS_ENV,
			    c->name);
	}
	if (readonly)
		return 0;
	if (st->st_mode & S_IWOTH)
		return fail(c, -EPERM, "refusing a world-writable segment "
			    "(mode %04o, owner %s)", (unsigned)(st->st_mode & 07777), who);
	return 0;
}

/* An emptied segment: what happened and what to do (never re-made). */
static int truncated(const struct attach_ctx *c, const char *what)
{
	return fail(c, -BRK_ETRUNCATED, "truncated: %s; its records and their "
		    "state are lost, and every process that still has it "
		    "mapped dies of SIGBUS when it touches it. Stop its users "
		    "and breakerd, remove it (bctl --shm %s segment remove "
		    "--force), then start breakerd (it creates it anew) and "
		    "the workers", what, c->name);
}

/* fstat until the creator has sized it, or the deadline passes. */
static int wait_size(const struct attach_ctx *c, int fd, int readonly,
		     struct stat *st)
{
	int rc;

	for (;;) {
		if (fstat(fd, st) != 0)
			return fail(c, -errno, "fstat: %s", strerror(errno));
		rc = check_owner(c, st, readonly);
		if (rc)
			return rc;
		if ((uint64_t)st->st_size >= BRK__HEADER_SIZE)
			return 0;
		if (!(st->st_mode & BRK__INIT_MARK)) {
			char what[128];

			snprintf(what, sizeof(what), "%lld bytes, less than "
				 "its %u-byte header, after it was made (no "
				 "creator is at work on it)",
				 (long long)st->st_size, BRK__HEADER_SIZE);
			return truncated(c, what);
		}
		if (sleep_until_retry(c) == 0)
			continue;
		return fail(c, -ETIMEDOUT, "never sized (%lld bytes): its "
			    "creator died half-way (its init-in-progress "
			    "marker is still set); breakerd recreates it (or "
			    "remove /dev/shm%s)", (long long)st->st_size, c->name);
	}
}

static int wait_magic(const struct attach_ctx *c, brk_segment *s, int fd)
{
	struct stat st;
	uint64_t m;

	for (;;) {
		m = uatomic_read(&s->hdr->magic);
		cmm_smp_rmb();
		if (m == BRK__MAGIC)
			return 0;
		if (m != 0)
			return fail(c, -EPROTO, "wrong magic 0x%016llx: not a "
				    "breakerd segment", (unsigned long long)m);
		/* magic 0 and no creator at work: emptied and re-grown */
		if (fstat(fd, &st) == 0 && !(st.st_mode & BRK__INIT_MARK) &&
		    uatomic_read(&s->hdr->magic) == 0)
			return truncated(c, "its header is all zero after it "
					 "was made (no creator is at work on it)");
		if (sleep_until_retry(c))
			return fail(c, -ETIMEDOUT, "never initialised (magic "
				    "still 0): its creator died half-way; "
				    "breakerd recreates it (or remove /dev/shm%s)",
				    c->name);
	}
}

static int validate_header(const struct attach_ctx *c, brk_segment *s)
{
	const struct brk__header *h = s->hdr;
	uint32_t cap = h->capacity, units = h->arena_units;

	if (h->version != BRK__LAYOUT_VERSION)
		return fail(c, -EPROTO, "layout version %u, this library "
			    "speaks %u: made by %s release of breakerd; stop "
			    "every process using it (workers, breakerd), then "
			    "remove it (rm /dev/shm%s) and it is created anew",
			    h->version, BRK__LAYOUT_VERSION,
			    h->version < BRK__LAYOUT_VERSION ? "an older" : "a newer",
			    c->name);
	if (cap == 0 || cap > BRK_MAX_CAPACITY)
		return fail(c, -EPROTO, "capacity %u out of range", cap);
	if (units < BRK__ARENA_MIN_UNITS || units > BRK__ARENA_MAX_UNITS)
		return fail(c, -EPROTO, "arena of %u units out of range", units);
	if (h->header_size != BRK__HEADER_SIZE ||
	    h->unit_size != BRK__UNIT ||
	    h->event_size != BRK__EVENT_SIZE ||
	    h->event_slots != BRK__EVENT_SLOTS ||
	    h->index_slots != brk__index_slots(cap) ||
	    h->index_offset != brk__index_offset() ||
	    h->arena_offset != brk__arena_offset(cap) ||
	    h->lmap_offset != brk__lmap_offset(cap, units) ||
	    h->lmap_words != brk__lmap_words(units) ||
	    h->events_offset != brk__events_offset(cap, units))
		return fail(c, -EPROTO, "geometry does not match capacity %u "
			    "and arena of %u units", cap, units);
	if (h->total_size == brk__total_size(cap, units) && h->total_size > s->size) {
		char what[160];

		snprintf(what, sizeof(what), "%llu bytes of the %llu its header "
			 "says, with %llu live records",
			 (unsigned long long)s->size,
			 (unsigned long long)h->total_size,
			 (unsigned long long)uatomic_read(&h->live_records));
		return truncated(c, what);
	}
	if (h->total_size != brk__total_size(cap, units) || h->total_size != s->size)
		return fail(c, -EPROTO, "size %llu bytes (header says %llu), "
			    "expected %llu for capacity %u and arena of %u units "
			    "(truncated or not ours)",
			    (unsigned long long)s->size,
			    (unsigned long long)h->total_size,
			    (unsigned long long)brk__total_size(cap, units), cap,
			    units);
	return 0;
}

static int check_namespaces(const struct attach_ctx *c, brk_segment *s)
{
	uint64_t pidns = ns_inode("pid"), timens = ns_inode("time");

	if (c->o->flags & BRK_ATTACH_NOPROCESS)
		return 0;
	if (s->hdr->pidns_ino && pidns && s->hdr->pidns_ino != pidns)
		return fail(c, -EXDEV, "created in pid namespace %llu, we are "
			    "in %llu: lease owners cannot be checked; run this "
			    "process in the segment's pid namespace (docker "
			    "--pid=container:X --ipc=container:X, Kubernetes "
			    "shareProcessNamespace: true; see "
			    "docs/guide/operating.md \"Containers\")",
			    (unsigned long long)s->hdr->pidns_ino,
			    (unsigned long long)pidns);
	if (s->hdr->timens_ino && timens && s->hdr->timens_ino != timens)
		return fail(c, -EXDEV, "created in time namespace %llu, we "
			    "are in %llu: monotonic clocks differ; run this "
			    "process in the segment's time namespace (see "
			    "docs/guide/operating.md \"Containers\")",
			    (unsigned long long)s->hdr->timens_ino,
			    (unsigned long long)timens);
	return 0;
}

static int attach_existing(brk_segment *s, struct attach_ctx *c, int fd)
{
	struct stat st;
	int rc;

	rc = wait_size(c, fd, s->readonly, &st);
	if (rc)
		return rc;
	rc = map_fd(s, fd, (uint64_t)st.st_size);
	if (rc)
		return fail(c, rc, "mmap: %s", strerror(-rc));
	rc = wait_magic(c, s, fd);
	if (rc == 0)
		rc = validate_header(c, s);
	if (rc == 0)
		rc = check_namespaces(c, s);
	/* made, but its creator died before clearing the init marker: clear
	 * it (the owner can), so a later truncation is not taken for a
	 * half-made segment and re-made */
	if (rc == 0 && !s->readonly && (st.st_mode & BRK__INIT_MARK) &&
	    st.st_uid == geteuid() &&
	    fchmod(fd, st.st_mode & 0777 & ~(mode_t)BRK__INIT_MARK) == 0)
		s->mode = (uint32_t)(st.st_mode & 0777 & ~(mode_t)BRK__INIT_MARK);
	return rc;
}

static int open_or_create(brk_segment *s, struct attach_ctx *c)
{
	int oflag = s->readonly ? O_RDONLY : O_RDWR;
	int fd, rc, tries;

	for (tries = 0; tries < 100; tries++) {
		fd = shm_open(c->name, oflag | O_NONBLOCK, 0);
		if (fd >= 0) {
			rc = attach_existing(s, c, fd);
			close(fd);
			if (rc != -ETIMEDOUT || !(c->o->flags & BRK_ATTACH_REPAIR) ||
			    s->readonly)
				return rc;
			/* the supervisor replaces a half-made segment */
			if (s->base)
				munmap(s->base, s->size);
			s->base = NULL;
			s->hdr = NULL;
			shm_unlink(c->name);
			continue;
		}
		if (errno == EACCES || errno == EPERM)
			return fail(c, -errno, "permission denied (%s access)",
				    s->readonly ? "read" : "read-write");
		if (errno == ELOOP || errno == EINVAL || errno == EISDIR) {
			char path[BRK_SHM_NAME_MAX + 16];
			struct stat st;
			int err = errno;

			snprintf(path, sizeof(path), "/dev/shm%s", c->name);
			if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
				return not_a_segment(c, -err, &st);
			errno = err;
		}
		if (errno != ENOENT)
			return fail(c, -errno, "shm_open: %s", strerror(errno));
		if (s->readonly || (c->o->flags & BRK_ATTACH_NOCREATE))
			return fail(c, -ENOENT, "no such segment (is breakerd "
				    "or any worker running with this --shm?)");
		rc = create(s, c);
		if (rc != -EEXIST)
			return rc;
	}
	return fail(c, -EAGAIN, "segment keeps appearing and disappearing");
}

static void adopt_geometry(brk_segment *s)
{
	const struct brk__header *h = s->hdr;

	s->capacity = h->capacity;
	s->index_slots = h->index_slots;
	s->event_slots = h->event_slots;
	s->arena_units = h->arena_units;
	s->index = (uint64_t *)(s->base + h->index_offset);
	s->arena = s->base + h->arena_offset;
	s->events = (struct brk__event *)(s->base + h->events_offset);
	s->lmap = (uint64_t *)(s->base + h->lmap_offset);
	s->lmap_l0_words = brk__lmap_l0_words(h->arena_units);
	s->lmap_l1_words = brk__lmap_l1_words(h->arena_units);
	s->epoch_ns = h->created_mono_ns;
	s->epoch_wall_ns = h->created_wall_ns;
}

int brk_attach(const struct brk_attach_opts *user, brk_segment **out)
{
	struct brk_attach_opts k;
	const struct brk_attach_opts *opts = &k;
	struct attach_ctx c;
	brk_segment *s;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	/* Fields the caller's struct lacks get their defaults; a field it
	 * has and this library does not know is -E2BIG. Nothing is written
	 * (not even errbuf) before the struct is known to be well-formed. */
	rc = brk__attach_opts_in(user, &k); /* NULL: the defaults */
	if (rc)
		return rc;
	c.o = opts;
	c.name = brk_resolve_shm_name(opts->shm_name);
	if (opts->errbuf && opts->errbuf_len)
		opts->errbuf[0] = '\0';
	if (brk_shm_name_validate(c.name) != 0)
		return fail(&c, -EINVAL, "bad segment name: it must be '/' "
			    "followed by 1-%d characters without '/'",
			    BRK_SHM_NAME_MAX - 1);
	if (opts->capacity > BRK_MAX_CAPACITY || (opts->mode & ~0777u))
		return fail(&c, -EINVAL, "capacity above %u or mode outside 0777",
			    BRK_MAX_CAPACITY);
	if (opts->arena_bytes &&
	    (opts->arena_bytes < (uint64_t)BRK__ARENA_MIN_UNITS * BRK__UNIT ||
	     opts->arena_bytes > (uint64_t)BRK__ARENA_MAX_UNITS * BRK__UNIT))
		return fail(&c, -EINVAL, "arena of %llu bytes: it must be %llu "
			    "bytes to %llu bytes (1 GiB)",
			    (unsigned long long)opts->arena_bytes,
			    (unsigned long long)BRK_MIN_ARENA_BYTES,
			    (unsigned long long)BRK_MAX_ARENA_BYTES);
	c.deadline_ns = brk__monotonic_ns(NULL) +
		(uint64_t)(opts->init_wait_ms ? opts->init_wait_ms : 2000) * 1000000u;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(s->shm_name, sizeof(s->shm_name), "%s", c.name);
	s->readonly = !!(opts->flags & BRK_ATTACH_READONLY);
	s->disabled = getenv(BRK_DISABLED_ENV) &&
		      strcmp(getenv(BRK_DISABLED_ENV), "1") == 0;
	s->clock = opts->clock ? opts->clock : brk__monotonic_ns;
	s->clock_ctx = opts->clock_ctx;
	s->random = opts->random;
	s->random_ctx = opts->random_ctx;
	s->serial = brk__next_serial();
	(void)brk__self();
	rc = open_or_create(s, &c);
	if (rc == 0) {
		adopt_geometry(s);
		rc = brk__cache_init(s);
	}
	if (rc) {
		brk_detach(s);
		return rc;
	}
	*out = s;
	return 0;
}

int brk_detach(brk_segment *s)
{
	if (!s)
		return 0;
	brk__origin_forget(s);
	brk__cache_free(s);
	brk__subtree_cache_free(s);
	if (s->base)
		munmap(s->base, s->size);
	free(s);
	return 0;
}

int brk_segment_unlink(const char *shm_name)
{
	const char *n = brk_resolve_shm_name(shm_name);

	return shm_unlink(n) == 0 ? 0 : -errno;
}

uint64_t brk_now_ns(const brk_segment *s)
{
	return brk__now(s);
}

int brk__segment_info(brk_segment *s, struct brk_segment_info *out)
{
	uint64_t hb, next, now = brk__now(s);
	uint64_t dpid = uatomic_read(&s->hdr->daemon_pid);

	memset(out, 0, sizeof(*out));
	snprintf(out->shm_name, sizeof(out->shm_name), "%s", s->shm_name);
	out->layout_version = BRK__LAYOUT_VERSION;
	out->capacity = s->capacity;
	out->used = brk_record_count(s);
	out->record_size = BRK__BREAKER_UNITS * BRK__UNIT;
	out->live_records = out->used;
	out->unit_bytes = BRK__UNIT;
	out->arena_bytes = (uint64_t)s->arena_units * BRK__UNIT;
	next = uatomic_read(&s->hdr->arena_next);
	out->arena_used_bytes = (next > s->arena_units ? s->arena_units : next) *
				(uint64_t)BRK__UNIT;
	out->total_size = s->size;
	out->created_wall_ms = s->epoch_wall_ns / 1000000u;
	out->creator_pid = (int32_t)s->hdr->creator_pid;
	out->daemon_pid = dpid > 0x7fffffff ? 0 : (int32_t)dpid;
	hb = uatomic_read(&s->hdr->heartbeat_ns);
	out->heartbeat_age_ms = hb == 0 ? UINT64_MAX
				: now > hb ? (now - hb) / 1000000u : 0;
	out->daemon_interval_ms = uatomic_read(&s->hdr->daemon_interval_ms);
	out->events_written = uatomic_read(&s->hdr->event_head);
	out->readonly = s->readonly;
	out->mode = s->mode;
	out->owner_uid = s->uid;
	out->owner_gid = s->gid;
	out->creator_pidns = s->hdr->pidns_ino;
	out->creator_timens = s->hdr->timens_ino;
	out->own_pidns = ns_inode("pid");
	out->own_timens = ns_inode("time");
	if (out->creator_pidns && out->own_pidns &&
	    out->creator_pidns != out->own_pidns)
		out->ns_differ |= BRK_NS_PID;
	if (out->creator_timens && out->own_timens &&
	    out->creator_timens != out->own_timens)
		out->ns_differ |= BRK_NS_TIME;
	{ /* the index lock's holder (a token's pid; 0: free) */
		uint64_t lk = uatomic_read(&s->hdr->index_lock);

		out->index_lock_pid = lk ? (int32_t)BRK__TOK_PID(lk) : 0;
	}
	return 0;
}

int brk__attach_opts_in(const struct brk_attach_opts *user,
			struct brk_attach_opts *out)
{
	int rc = 0;

	brk_attach_opts_init_sz(out, sizeof(*out));
	if (user)
		rc = brk__struct_in(out, sizeof(*out), user,
				    user->size ? user->size
					       : BRK_ATTACH_OPTS_SIZE_VER0);
	out->size = sizeof(*out);
	return rc;
}

void (brk_attach_opts_init)(struct brk_attach_opts *o)
{
	brk_attach_opts_init_sz(o, BRK_ATTACH_OPTS_SIZE_VER0);
}

int brk_segment_info_sz(brk_segment *seg, struct brk_segment_info *out,
			size_t size)
{
	struct brk_segment_info tmp;
	int rc;

	if (!seg || !out)
		return -EINVAL;
	rc = brk__segment_info(seg, &tmp);
	brk__struct_out(out, size, &tmp, sizeof(tmp));
	return rc;
}

int (brk_segment_info)(brk_segment *seg, struct brk_segment_info *out)
{
	return brk_segment_info_sz(seg, out, BRK_SEGMENT_INFO_SIZE_VER0);
}
