/* SPDX-License-Identifier: MIT */
/* version.c - tfd_version(3): the library's version at run time. */
#include "tfd.h"

const char *tfd_version(void)
{
	return TFD_VERSION_STRING;
}
