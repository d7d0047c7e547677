/* SPDX-License-Identifier: MIT */
/* The manual pages render in the tree without a warning (tests/man.sh). */
#include "t.h"

#include <sys/wait.h>

TEST(docs_every_page_renders_in_the_tree_without_a_warning)
{
	static char out[1 << 16], err[4096];
	int st = t_sh("sh tests/man.sh", out, sizeof(out), err, sizeof(err));

	fputs(out, stdout);
	if (st == 77)
		t_skip("%s", strncmp(out, "man: skipped: ", 14) ? out : out + 14);
	CHECKF(st == 0, "tests/man.sh: exit %d: %s%s", st, out, err);
}
