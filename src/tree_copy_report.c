// SPDX-License-Identifier: MIT
/*
 * tree_copy_report.c - how a copy says what happened: errors (through
 * the caller's fk_report_fn, counted, the first one kept), cp's refusals
 * (through fk_refused_fn, by the words they are reported with), progress
 * and cp -v's entries.  The lowest part of fk_tree_copy: every other
 * part calls it, it calls none of them (t-layers.sh).
 */
#include "flushkit.h"
#include "tree.h"
#include "tree_copy.h"

#include <errno.h>
#include <stdint.h>

void fk_copy_report(struct copy_ctx *c, int level, const char *op,
		    const char *path, int err)
{
	if (level == FK_REPORT_ERROR && !c->first_err)
		c->first_err = err;
	fk_tree_report(&c->fo, c->st, level, op, path, err);
}

/* The words existing_ok and the checks below report cp's refusals
 * with, and their enum fk_copy_refusal. */
const char fk_copy_same_file_op[] = "same file as the source",
	   fk_copy_dangling_op[] = "not writing through dangling symlink",
	   fk_copy_just_created_symlink_op[] =
	       "will not copy through just-created symlink",
	   fk_copy_just_created_op[] = "will not overwrite just-created",
	   fk_copy_into_self_op[] = "cannot copy a directory into itself",
	   fk_copy_backup_is_src_op[] = "backing up would destroy the source",
	   fk_copy_link_op[] = "cannot create hard link",
	   fk_copy_symlink_op[] = "cannot create symbolic link";

/* Report an error for the copy of @src to @dst (both display paths):
 * one of cp's refusals through the caller's fk_refused_fn if it has
 * one, else (and for any other @op) as report() for @dst. */
void fk_copy_refuse(struct copy_ctx *c, const char *op, const char *src,
		    const char *dst, int err)
{
	int kind =
	    op == fk_copy_same_file_op	? FK_COPY_REFUSED_SAME_FILE
	    : op == fk_copy_dangling_op ? FK_COPY_REFUSED_DANGLING
	    : op == fk_copy_just_created_symlink_op
		? FK_COPY_REFUSED_JUST_CREATED_SYMLINK
	    : op == fk_copy_just_created_op  ? FK_COPY_REFUSED_JUST_CREATED
	    : op == fk_copy_into_self_op     ? FK_COPY_REFUSED_INTO_SELF
	    : op == fk_copy_backup_is_src_op ? FK_COPY_REFUSED_BACKUP_IS_SOURCE
	    : op == fk_copy_link_op	     ? FK_COPY_REFUSED_LINK
	    : op == fk_copy_symlink_op	     ? FK_COPY_REFUSED_SYMLINK
					     : 0;
	if (!kind || !c->o->refused) {
		fk_copy_report(c, FK_REPORT_ERROR, op, dst, err);
		return;
	}
	if (!c->first_err)
		c->first_err = err;
	c->st->errors++;
	c->o->refused(c->o->refused_arg, kind, op, src, dst, err);
}

void fk_copy_progress(struct copy_ctx *c)
{
	if (!c->o->progress)
		return;
	c->st->walk_ns = fk_now_ns() - c->start_ns - c->inline_fsync_ns;
	fk_tree_progress(&c->fo, c->st, &c->last_progress_ns, 0);
}

/* cp -v: @e was created at @dpath. */
void fk_copy_copied(struct copy_ctx *c, const struct fk_walk_entry *e,
		    const char *dpath)
{
	if (c->o->copied)
		c->o->copied(c->o->copied_arg, e->path, dpath);
}

int fk_copy_is_space_err(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}
