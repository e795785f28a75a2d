/* SPDX-License-Identifier: MIT */
/*
 * fault.h - the lab disk's fault rules and request counters: the ctl
 * lines `flushkit disk fault` writes and the durability tests' stack
 * (tests/lib/fkfault.c, model ram without a write cache) uses to get
 * real kernel I/O errors.
 *
 *   fail OPS ERR OFF LEN   every OPS request overlapping image bytes
 *                          [OFF, OFF+LEN) fails with ERR (LEN 0: to the
 *                          end; fsync requests ignore the range)
 *   after N OPS ERR        the next N OPS requests succeed, every later
 *                          one fails with ERR
 *   all OPS ERR            = after 0 OPS ERR
 *   clear                  remove every rule
 *   reset                  zero the counters
 *
 * OPS: letters r (read), w (write), f (FLUSH = fsync of the image, and
 * the FUSE flush of a close).  ERR: EIO, ENOSPC, EROFS, EDQUOT or a
 * positive errno number.  A failing request fails whole and touches no
 * data.  Rules are tried in the order they were given until one fails
 * the request: an "after" rule before that one counts the request as
 * one of its successes, an "after" rule behind it does not see it.
 *
 * Invariants:
 * 1. Every image request is counted once, and once more as a fault if
 *    a rule failed it.
 * 2. An "after" rule's remaining count decreases only on requests it
 *    matches, never below 0.
 *
 * Not thread-safe: the daemon's lock is held around every call.
 */
#ifndef FK_DISK_FAULT_H
#define FK_DISK_FAULT_H

#include <stdint.h>
#include <stdio.h>

#define FAULT_OP_READ 1u
#define FAULT_OP_WRITE 2u
#define FAULT_OP_FSYNC 4u
#define FAULT_MAX_RULES 256

struct fault_rule {
	unsigned ops;
	int err;	   /* positive errno */
	int is_after;	   /* 1: "after" rule, else a range rule */
	uint64_t off, len; /* range rule; len 0 = to the end */
	uint64_t left;	   /* after rule: successes left */
};

struct fault_counters {
	uint64_t reads, writes, fsyncs, flushes;
	uint64_t read_bytes, write_bytes;
	uint64_t faults, read_faults, write_faults, fsync_faults;
};

struct fault_state {
	struct fault_rule rules[FAULT_MAX_RULES];
	int nrules;
	struct fault_counters c;
};

/* Count a request of @op (one FAULT_OP_*) and return the errno (> 0) it
 * must fail with, or 0. */
int fault_account(struct fault_state *s, unsigned op, uint64_t off,
		  uint64_t len);
/* One control line of the rule protocol: 0, 1 (not a rule line: the
 * caller's), -EINVAL (a rule line that is wrong) or -ENOSPC (too many
 * rules).  @line is modified. */
int fault_control(struct fault_state *s, char *line);
/* The "NAME VALUE" counter lines and the "rule ..." lines. */
void fault_print(const struct fault_state *s, FILE *f);

/* A ctl line's number: decimal, 0x hex or 0 octal (strtoull base 0),
 * no sign, nothing after it.  0 or -1.  The one parser of the ctl
 * protocol's numbers (diskd.c's seeds and counts too). */
int fault_parse_u64(const char *s, uint64_t *v);

#endif
