// SPDX-License-Identifier: MIT
/*
 * fault.c - fault rules and counters of the lab disk (see fault.h).
 *
 * Interface routines: fault_account, fault_control, fault_print.
 */
#include "fault.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int fault_account(struct fault_state *s, unsigned op, uint64_t off,
		  uint64_t len)
{
	int err = 0;
	for (int i = 0; i < s->nrules && !err; i++) {
		struct fault_rule *r = &s->rules[i];
		if (!(r->ops & op))
			continue;
		if (r->is_after) {
			if (r->left > 0)
				r->left--;
			else
				err = r->err;
		} else if (op == FAULT_OP_FSYNC) {
			err = r->err;
		} else if (off + len > r->off &&
			   (r->len == 0 || off < r->off + r->len)) {
			err = r->err;
		}
	}
	if (op == FAULT_OP_READ) {
		s->c.reads++;
		if (!err)
			s->c.read_bytes += len;
	} else if (op == FAULT_OP_WRITE) {
		s->c.writes++;
		if (!err)
			s->c.write_bytes += len;
	}
	if (err) {
		s->c.faults++;
		if (op == FAULT_OP_READ)
			s->c.read_faults++;
		else if (op == FAULT_OP_WRITE)
			s->c.write_faults++;
		else
			s->c.fsync_faults++;
	}
	return err;
}

static int parse_ops(const char *s, unsigned *ops)
{
	*ops = 0;
	for (; *s; s++) {
		if (*s == 'r')
			*ops |= FAULT_OP_READ;
		else if (*s == 'w')
			*ops |= FAULT_OP_WRITE;
		else if (*s == 'f')
			*ops |= FAULT_OP_FSYNC;
		else
			return -1;
	}
	return *ops ? 0 : -1;
}

static int parse_err(const char *s, int *err)
{
	static const struct {
		const char *name;
		int err;
	} names[] = {{"EIO", EIO},
		     {"ENOSPC", ENOSPC},
		     {"EROFS", EROFS},
		     {"EDQUOT", EDQUOT}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			*err = names[i].err;
			return 0;
		}
	char *end;
	long v = strtol(s, &end, 10);
	if (*s && !*end && v > 0 && v < 4096) {
		*err = (int)v;
		return 0;
	}
	return -1;
}

int fault_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-')
		return -1;
	*v = x;
	return 0;
}

int fault_control(struct fault_state *s, char *line)
{
	char *tok[6];
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r", &save); t && n < 6;
	     t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	if (n == 0)
		return 0;
	if (!strcmp(tok[0], "clear") && n == 1) {
		s->nrules = 0;
		return 0;
	}
	if (!strcmp(tok[0], "reset") && n == 1) {
		memset(&s->c, 0, sizeof(s->c));
		return 0;
	}
	struct fault_rule r = {0};
	if (!strcmp(tok[0], "fail")) {
		if (n != 5 || parse_ops(tok[1], &r.ops) ||
		    parse_err(tok[2], &r.err) ||
		    fault_parse_u64(tok[3], &r.off) ||
		    fault_parse_u64(tok[4], &r.len))
			return -EINVAL;
	} else if (!strcmp(tok[0], "after")) {
		r.is_after = 1;
		if (n != 4 || fault_parse_u64(tok[1], &r.left) ||
		    parse_ops(tok[2], &r.ops) || parse_err(tok[3], &r.err))
			return -EINVAL;
	} else if (!strcmp(tok[0], "all")) {
		r.is_after = 1;
		if (n != 3 || parse_ops(tok[1], &r.ops) ||
		    parse_err(tok[2], &r.err))
			return -EINVAL;
	} else if (!strcmp(tok[0], "clear") || !strcmp(tok[0], "reset")) {
		return -EINVAL;
	} else {
		return 1;
	}
	if (s->nrules == FAULT_MAX_RULES)
		return -ENOSPC;
	s->rules[s->nrules++] = r;
	return 0;
}

static void ops_str(unsigned ops, char *s)
{
	if (ops & FAULT_OP_READ)
		*s++ = 'r';
	if (ops & FAULT_OP_WRITE)
		*s++ = 'w';
	if (ops & FAULT_OP_FSYNC)
		*s++ = 'f';
	*s = 0;
}

void fault_print(const struct fault_state *s, FILE *f)
{
	const struct fault_counters *c = &s->c;
	fprintf(f,
		"reads %" PRIu64 "\nwrites %" PRIu64 "\nfsyncs %" PRIu64
		"\nflushes %" PRIu64 "\nread_bytes %" PRIu64
		"\nwrite_bytes %" PRIu64 "\nfaults %" PRIu64
		"\nread_faults %" PRIu64 "\nwrite_faults %" PRIu64
		"\nfsync_faults %" PRIu64 "\nrules %d\n",
		c->reads, c->writes, c->fsyncs, c->flushes, c->read_bytes,
		c->write_bytes, c->faults, c->read_faults, c->write_faults,
		c->fsync_faults, s->nrules);
	for (int i = 0; i < s->nrules; i++) {
		const struct fault_rule *r = &s->rules[i];
		char ops[4];
		ops_str(r->ops, ops);
		if (r->is_after)
			fprintf(f, "rule after %" PRIu64 " %s %d\n", r->left,
				ops, r->err);
		else
			fprintf(f, "rule fail %s %d %" PRIu64 " %" PRIu64 "\n",
				ops, r->err, r->off, r->len);
	}
}
