/* SPDX-License-Identifier: MIT */
/*
 * syscr.h - the read system calls (read, pread, readv...) a process has
 * made so far, from its io file (/proc/self/io, /proc/PID/io): -1 if it
 * cannot be read.  For the programs of tests/realprog that count them.
 */
#ifndef TFD_REALPROG_SYSCR_H
#define TFD_REALPROG_SYSCR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long syscr_of(const char *io)
{
	char buf[512], *p;
	FILE *f = fopen(io, "r");
	long n = -1;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if ((p = strstr(buf, "syscr:")))
			n = atol(p + 6);
	fclose(f);
	return n;
}

#endif
