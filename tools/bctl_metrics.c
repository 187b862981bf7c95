/*
 * bctl_metrics.c - `bctl metrics`: the segment in the Prometheus text
 * exposition format, version 0.0.4, rendered by metrics_render.c (the
 * renderer breakerd --metrics-listen serves too; the families, labels and
 * the --by-level grouping are described there). This file is the
 * command: its options (the filters of record_filter.h and --by-level), the
 * read-only attach (read permission on the segment is enough) and the
 * output on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bctl.h"
#include "record_filter.h"
#include "metrics_render.h"

enum { M_OPT_BY_LEVEL = BCTL_OPT_FIRST_CMD };

const struct option bctl_opts_metrics[] = {
	BCTL_FILTER_LONGOPTS,
	{ "by-level", required_argument, NULL, M_OPT_BY_LEVEL },
	BCTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static int m_parse(struct bctl *g, int argc, char **argv, struct metrics_opts *o)
{
	uint64_t v;
	int c, rc;

	metrics_opts_init(o);
	optind = 0;
	while ((c = bctl_getopt(argc, argv, ":hv", bctl_opts_metrics)) != -1) {
		if (c == M_OPT_BY_LEVEL) {
			if (cli_opt_uint("--by-level", optarg, 1, METRICS_MAX_LEVELS, &v))
				return CLI_EXIT_USAGE;
			o->by_level = (unsigned)v;
			continue;
		}
		rc = bctl_filter_opt(&o->filter, c, optarg);
		if (rc == BCTL_CONTINUE)
			continue;
		if (rc)
			return rc;
		rc = bctl_opt_common(g, c, argc, argv);
		if (rc != BCTL_CONTINUE)
			return rc;
	}
	return bctl_no_args("metrics", argc, argv) ? CLI_EXIT_USAGE : BCTL_CONTINUE;
}

int bctl_cmd_metrics(struct bctl *g, int argc, char **argv)
{
	struct metrics_opts o;
	brk_segment *seg;
	int rc;

	rc = m_parse(g, argc, argv, &o);
	if (rc != BCTL_CONTINUE)
		return rc;
	rc = bctl_attach(g, BCTL_ATTACH_INSPECT, NULL, &seg);
	if (rc)
		return rc;
	rc = metrics_render(stdout, seg, bctl_shm(g), &o);
	if (rc == -ENOMEM)
		rc = cli_error("out of memory");
	else if (rc < 0)
		rc = cli_error("%s: %s", cli_q(bctl_shm(g)), brk_strerror(rc));
	else
		rc = cli_flush_stdout();
	brk_detach(seg);
	return rc;
}
