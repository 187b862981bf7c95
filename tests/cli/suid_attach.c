/*
 * suid_attach.c - attach read-write to the segment argv[1] and detach:
 * exit 0, or 1 with the library's message on stderr. Linked with the
 * static libbreaker so that a set-uid root copy of it (made by
 * bctl_trusted_owner.sh) runs the library as a privileged program would:
 * in secure execution, where the caller's environment must not widen
 * whom it trusts.
 */
#include <stdio.h>

#include "breaker.h"

int main(int argc, char **argv)
{
	struct brk_attach_opts o;
	brk_segment *seg;
	char err[1024] = "";
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: suid_attach SHM\n");
		return 2;
	}
	brk_attach_opts_init(&o);
	o.shm_name = argv[1];
	o.flags = BRK_ATTACH_NOCREATE;
	o.errbuf = err;
	o.errbuf_len = sizeof(err);
	rc = brk_attach(&o, &seg);
	if (rc) {
		fprintf(stderr, "suid_attach: %s\n", err[0] ? err : brk_strerror(rc));
		return 1;
	}
	brk_detach(seg);
	return 0;
}
