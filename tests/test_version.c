/* SPDX-License-Identifier: MIT */
/* Versions: tfd_version(3), the header's macros, and the places that
 * repeat the number agree (the Makefile reads it from the header). */
#include "t.h"

#include "tfd.h"

/* The whole file, NUL-terminated, in a static buffer. */
static const char *slurp(const char *path)
{
	static char buf[1 << 18];
	FILE *f = fopen(path, "r");
	size_t n;

	CHECKF(f != NULL, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

TEST(version_at_run_time_is_the_headers)
{
	char want[32];

	CHECK(!strcmp(tfd_version(), TFD_VERSION_STRING));
	snprintf(want, sizeof(want), "%d.%d.%d", TFD_VERSION_MAJOR,
	         TFD_VERSION_MINOR, TFD_VERSION_PATCH);
	CHECK(!strcmp(tfd_version(), want));
	CHECK_EQ(TFD_VERSION_HEX, (TFD_VERSION_MAJOR << 16 | TFD_VERSION_MINOR << 8 | TFD_VERSION_PATCH));
	CHECK_GE(TFD_VERSION_HEX, 0x000200); /* tfd_version() is in 0.2.0 */
#if TFD_VERSION_HEX < 0x000200
#error TFD_VERSION_HEX is not usable in #if
#endif
}

/* make check passes the version it built (TFD_MAKE_VERSION); the pages'
 * footers, tfd_version(3) and the changelog must say the same. */
TEST(version_is_the_same_everywhere)
{
	static const char *const pages[] = {
		"man/tfd.1", "man/tfd.7", "man/tfd-preload.7", "man/timerfd.3",
		"man/tfd_create.3", "man/tfd_settime.3", "man/tfd_read.3",
		"man/tfd_close.3", "man/tfd_use_backend.3", "man/tfd_virtual.3",
		"man/tfd_version.3", "man/tfd_set.3",
	};
	const char *mk = getenv("TFD_MAKE_VERSION"), *s;
	char want[64];
	size_t i;

	if (!mk)
		t_skip("TFD_MAKE_VERSION is not set: no Makefile's version to "
		       "compare (make check sets it)");
	CHECKF(mk && !strcmp(mk, TFD_VERSION_STRING),
	       "the Makefile's VERSION '%s' is not the header's %s",
	       mk ? mk : "(unset)", TFD_VERSION_STRING);
	snprintf(want, sizeof(want), "\"tfd %s\"\n", TFD_VERSION_STRING);
	for (i = 0; i < sizeof(pages) / sizeof(*pages); i++) {
		s = strstr(slurp(pages[i]), "\n.TH ");
		CHECKF(s && strstr(s, want) &&
		               strstr(s, want) < strchr(s + 1, '\n') + 1,
		       "%s: the .TH line does not end with %s", pages[i], want);
	}
	s = slurp("man/tfd_version.3");
	snprintf(want, sizeof(want), "TFD_VERSION_MINOR  %d\n",
	         TFD_VERSION_MINOR);
	CHECKF(strstr(s, want), "tfd_version.3: no '%s'", want);
	snprintf(want, sizeof(want), "\\(dq%s\\(dq\n", TFD_VERSION_STRING);
	CHECKF(strstr(s, want), "tfd_version.3: no '%s'", want);
	snprintf(want, sizeof(want), "\n## %s ", TFD_VERSION_STRING);
	CHECKF(strstr(slurp("CHANGELOG.md"), want),
	       "CHANGELOG.md has no section '## %s'", TFD_VERSION_STRING);
}
