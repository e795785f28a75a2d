/* SPDX-License-Identifier: MIT */
/*
 * cli-cp-parents.h - "flushkit cp --parents" (cli-cp-parents.c).
 */
#ifndef FK_CLI_CP_PARENTS_H
#define FK_CLI_CP_PARENTS_H

#include <stddef.h>

/* Directory components of one SRC, at most (a deeper path is refused,
 * ENAMETOOLONG). */
#define CLI_CP_PARENTS_MAX 256

struct cli_cp_parents {
	const char *dir;		  /* DIR, borrowed */
	const char *src;		  /* SRC, borrowed */
	size_t nr;			  /* directory components of SRC */
	size_t ends[CLI_CP_PARENTS_MAX];  /* each one's length in SRC */
	char created[CLI_CP_PARENTS_MAX]; /* made by prepare */
	size_t made;   /* components there in DIR (created or not) */
	size_t failed; /* the component prepare failed on */
};

/*
 * Unless @dir/dirname(@src) is a directory already (then p->made is 0:
 * nothing to do), check that each directory component of @src is a
 * directory and make it in @dir where missing (mode 0700; with @verbose
 * an "A -> DIR/A" line on stdout for each one made, as cp's).  Returns 0 or
 * -errno (a component that is no directory: -ENOTDIR; p->failed names it).
 */
int cli_cp_parents_prepare(struct cli_cp_parents *p, const char *src,
			   const char *dir, int verbose);
/* DIR/SRC, malloc'ed (NULL on ENOMEM). */
char *cli_cp_parents_dst(const struct cli_cp_parents *p);
/*
 * After the copy: give each component in DIR its source's owner, mode
 * and times (@flags: enum fk_copy_flags FK_COPY_NO_MODE, _NO_OWNER,
 * _NO_TIMES as for the copy), deepest first, fsync each, then fsync DIR.
 * Each failure is reported ("flushkit cp: OP 'PATH': ERROR"); returns 0
 * or the first -errno.
 */
int cli_cp_parents_finish(const struct cli_cp_parents *p, unsigned flags);

#endif
