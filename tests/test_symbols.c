/* SPDX-License-Identifier: MIT */
/*
 * What libtfd.a gives a program's link: only names of its own.  Every
 * global symbol it defines begins with tfd_ (or is timerfd, the 2007
 * call), so that no name of a program's (a global `g`, say) clashes.
 * Names that begin with __ are the compiler's (a sanitizer's, say).
 */
#include "t.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

TEST(static_library_defines_only_tfd_names)
{
	const char *tool = getenv("TFD_TOOL");
	char dir[512], cmd[1200], out[8192], err[512];

	if (!tool)
		t_skip("TFD_TOOL is not set: no build directory to look in");
	if (system("command -v nm >/dev/null 2>&1") != 0)
		t_skip("no nm (binutils) on this machine");
	snprintf(dir, sizeof dir, "%s", tool);
	snprintf(cmd, sizeof cmd,
		 "nm -g --defined-only %s/libtfd.a | "
		 "awk 'NF == 3 && $3 !~ /^(tfd_|__)/ && $3 != \"timerfd\" "
		 "{ print $3 }' | sort -u",
		 dirname(dir));
	CHECK_EQ(t_sh(cmd, out, sizeof out, err, sizeof err), 0);
	CHECKF(out[0] == '\0', "libtfd.a defines names not its own:\n%s",
	       out);
}
