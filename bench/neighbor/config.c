// SPDX-License-Identifier: MIT
/*
 * config.c - bench neighbor's victims, neighbours and configurations
 * (neighbor.h lists them), and which configurations cannot run here.
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"

const char *const nb_victim_names[NR_VICTIMS] = {"rate", "full", "pg-rate",
						 "pg-full"};
const char *const nb_neighbor_names[NR_NEIGHBORS] = {"stream", "tree"};
const char *const nb_config_names[NR_CONFIGS] = {
    "plain",	 "exec",   "nocache",	"strict",	  "blkio",
    "exec-idle", "ionice", "exec-pace", "exec-hint-idle", "exec-small"};

/* Which configurations cannot run here, and why. */
void nb_find_skips(struct env *env)
{
	int root = geteuid() == 0;
	char p[256];
	if (!disk_in_path("ionice"))
		env->skip[C_IONICE] =
		    "not installed (no ionice in PATH: Debian package "
		    "util-linux)";
	if (!disk_in_path("nocache")) {
		env->skip[C_NOCACHE] =
		    "not installed (no nocache in PATH: Debian package "
		    "nocache)";
	}
	nb_bdi_knob("strict_limit", p, sizeof(p));
	if (!root)
		env->skip[C_STRICT] = "needs root (writes the bdi's knobs)";
	else if (access(p, W_OK)) {
		snprintf(env->skip_buf[C_STRICT], sizeof(env->skip_buf[0]),
			 "no writable %s", p);
		env->skip[C_STRICT] = env->skip_buf[C_STRICT];
	}
	if (!root)
		env->skip[C_BLKIO] = "needs root (makes a blkio cgroup)";
	else if (access("/sys/fs/cgroup/blkio", W_OK))
		env->skip[C_BLKIO] =
		    "no cgroup v1 blkio at /sys/fs/cgroup/blkio";
}
