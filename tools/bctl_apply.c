/*
 * bctl_apply.c - `bctl apply FILE [--dry-run]`: apply the breakers file
 * FILE once (see breakers_file.h): every section is checked against the
 * segment first; one error applies nothing. Prints one line per section:
 * created, updated (what changed) or unchanged; --dry-run says what it
 * would change and writes nothing (an absent segment is not created).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bctl.h"
#include "breakers_file.h"

enum { OPT_DRY_RUN = BCTL_OPT_FIRST_CMD };

const struct option bctl_opts_apply[] = {
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/* --dry-run: the segment if it exists, read-only; NULL if it does not. */
static int attach_dry(const struct bctl *g, brk_segment **seg)
{
	struct brk_attach_opts o;
	int rc;

	if ((rc = bctl_check_shm(g)) != 0)
		return rc;
	brk_attach_opts_init(&o);
	o.shm_name = bctl_shm(g);
	o.flags = BRK_ATTACH_NOCREATE | BRK_ATTACH_READONLY;
	rc = brk_attach(&o, seg);
	if (rc == -ENOENT) {
		*seg = NULL;
		return 0;
	}
	if (rc < 0)
		return bctl_fail(g, bctl_shm(g), rc);
	return 0;
}

int bctl_cmd_apply(struct bctl *g, int argc, char **argv)
{
	struct bf_file *f = NULL;
	brk_segment *seg = NULL;
	const char *path;
	int c, rc, dry = 0;

	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_apply)) != -1) {
		if (c == OPT_DRY_RUN) {
			dry = 1;
			continue;
		}
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	if (optind >= argc)
		return cli_usage_error("apply: missing FILE (the breakers file, "
				       "e.g. " BF_DEFAULT_PATH ")");
	if (optind + 1 < argc)
		return cli_usage_error("apply: unexpected argument '%s'",
				       cli_q(argv[optind + 1]));
	path = argv[optind];
	rc = bf_load(path, &f);
	if (rc)
		return rc;
	/* a file with errors is only checked: no segment is created for it */
	rc = dry || bf_errors(f) ? attach_dry(g, &seg) : bctl_attach(g, 0, NULL, &seg);
	if (rc) {
		bf_free(f);
		return rc;
	}
	rc = bf_apply(seg, f, dry || bf_errors(f) ? BF_DRY_RUN : BF_APPLY, stdout,
		      NULL);
	if (seg)
		brk_detach(seg);
	bf_free(f);
	if (cli_flush_stdout())
		return CLI_EXIT_ERROR;
	return rc;
}
