/*
 * cli_version.c - `--version` of bctl and breakerd: "PROG (breakerd) X.Y.Z".
 *
 * The version is meson's project version (meson.build's project()), the
 * one definition: meson writes it into the generated breakerd_version.h,
 * which only this file includes, so changing it rebuilds one object.
 */
#include <stdio.h>

#include "breakerd_version.h"
#include "cli_util.h"

const char *cli_version(void)
{
	return BREAKERD_VERSION;
}

int cli_print_version(void)
{
	printf("%s (breakerd) %s\n", cli_prog(), BREAKERD_VERSION);
	return cli_flush_stdout();
}
