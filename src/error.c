// SPDX-License-Identifier: MIT
/*
 * error.c - fk_strerror() and fk_version().
 */
#include "flushkit.h"

#include <string.h>

const char *fk_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "Success";
	case FK_EDEGRADED:
		return "Completed, durability degraded (a directory or file "
		       "cannot be fsynced on its file system)";
	case FK_ECORRUPT:
		return "Data is corrupt (a failed checksum or identity check, "
		       "or a missing file)";
	case FK_ESTOPPED:
		return "Store stopped after an earlier I/O error";
	default:
		/* strerror() may use a static buffer for unknown values, but
		 * glibc returns static strings for all known errno values. */
		return strerror(err);
	}
}

const char *fk_version(void)
{
	return FK_VERSION_STRING;
}
