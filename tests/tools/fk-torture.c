// SPDX-License-Identifier: MIT
/*
 * fk-torture.c - the crash torture harness as a program (kill -9, power
 * cut, crash during recovery): run the TPC-B workload on the page store,
 * inject one fault per trial (kill -9, a power cut on a loop-mounted
 * ext4/xfs, or a crash in the middle of recovery), recover, verify,
 * repeat; print how many trials ran and how many failed.  The logic is in
 * tests/lib/fktorture.c (shared with the CI tests); this is the option
 * parser.  scripts/torture.sh runs the full trial counts.
 *
 * Exit status: 0 every trial passed, 1 a trial failed or the run could
 * not be set up, 2 usage, 77 power cut without root / loop devices.
 */
#include "fkcut.h"
#include "fktorture.h"
#include "flushkit.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fk-torture [options]\n"
		"  --fault kill|powercut|recovery-kill|recovery-powercut\n"
		"                     the fault of every trial (kill)\n"
		"  --fs ext4|xfs|btrfs\n"
		"                     put the store on a loop-mounted file "
		"system\n"
		"                     (needed for power cuts; root)\n"
		"  --cut disk|goingdown\n"
		"                     power cuts at a lab disk that loses its "
		"write cache\n"
		"                     (btrfs needs it), or FS_IOC_GOINGDOWN "
		"(default)\n"
		"  --cut-mode drop|subset|reorder|mixed\n"
		"                     what the disk keeps of its cache (mixed: "
		"drawn per cut)\n"
		"  --flush-ignore     negative control: the disk ignores FLUSH "
		"during the\n"
		"                     workloads (trials must fail)\n"
		"  --trials N         number of trials (10; FK_TRIALS)\n"
		"  --seed S           random seed (clock; FK_TEST_SEED)\n"
		"  --preset naive|smooth|both\n"
		"                     flush preset of the store (both: "
		"alternate)\n"
		"  --wal-compression off|lz4|zstd\n"
		"                     compress the WAL's full-page images "
		"(off)\n"
		"  --interrupts N     recovery faults: cut 1..N reopens in a "
		"row (3)\n"
		"  --max-history N    make the database afresh beyond N "
		"history rows\n"
		"  --dir DIR          work directory (a new one in "
		"/var/tmp)\n"
		"  --always-close     the verifier closes the store after "
		"every recovery\n"
		"                     (else half the time)\n"
		"  --verbose          a line per step\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"fault", required_argument, NULL, 'f'},
	    {"fs", required_argument, NULL, 'F'},
	    {"trials", required_argument, NULL, 'n'},
	    {"seed", required_argument, NULL, 's'},
	    {"preset", required_argument, NULL, 'p'},
	    {"interrupts", required_argument, NULL, 'i'},
	    {"wal-compression", required_argument, NULL, 'W'},
	    {"max-history", required_argument, NULL, 'm'},
	    {"dir", required_argument, NULL, 'd'},
	    {"always-close", no_argument, NULL, 'c'},
	    {"cut", required_argument, NULL, 'C'},
	    {"cut-mode", required_argument, NULL, 'M'},
	    {"flush-ignore", no_argument, NULL, 'I'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct fkt_torture_opts o;
	struct fkt_torture_result res;
	int c;

	fkt_torture_opts_init(&o);
	o.trials = fkt_torture_trials_env(o.trials);
	const char *se = getenv("FK_TEST_SEED");
	if (se && *se)
		o.seed = strtoull(se, NULL, 10);
	while ((c = getopt_long(argc, argv, "f:F:n:s:p:i:W:m:d:cvhC:M:I", lo,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			o.fault = fkt_torture_fault_parse(optarg);
			if (o.fault < 0) {
				fprintf(stderr,
					"fk-torture: unknown fault "
					"'%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'F':
			if (strcmp(optarg, "ext4") && strcmp(optarg, "xfs") &&
			    strcmp(optarg, "btrfs")) {
				fprintf(stderr,
					"fk-torture: unknown file "
					"system '%s'\n",
					optarg);
				return 2;
			}
			o.fs_type = optarg;
			break;
		case 'n':
			o.trials = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			if (!strcmp(optarg, "naive"))
				o.preset = FKT_PRESET_NAIVE;
			else if (!strcmp(optarg, "smooth"))
				o.preset = FKT_PRESET_SMOOTH;
			else if (!strcmp(optarg, "both"))
				o.preset = FKT_PRESET_BOTH;
			else {
				fprintf(stderr,
					"fk-torture: unknown preset "
					"'%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'W':
			o.wal_compression = fk_wal_compression_parse(optarg);
			if (o.wal_compression < 0) {
				fprintf(stderr,
					"fk-torture: unknown "
					"wal_compression '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'i':
			o.max_interrupts = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'm':
			o.max_history_rows = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			o.dir = optarg;
			break;
		case 'c':
			o.always_close = 1;
			break;
		case 'C':
			if (!strcmp(optarg, "disk"))
				o.cut_disk = 1;
			else if (!strcmp(optarg, "goingdown"))
				o.cut_disk = 0;
			else {
				fprintf(stderr,
					"fk-torture: unknown cut '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'M':
			if (fkt_cut_mode_ok(optarg)) {
				fprintf(stderr,
					"fk-torture: unknown cut mode '%s'\n",
					optarg);
				return 2;
			}
			o.cut_mode = strcmp(optarg, "mixed") ? optarg : NULL;
			break;
		case 'I':
			o.flush_ignore = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !o.trials) {
		usage(stderr);
		return 2;
	}
	int r = fkt_torture_run(&o, &res);
	if (r == 77) {
		fprintf(stderr, "SKIP: power cuts need root and loop "
				"devices\n");
		return 77;
	}
	if (r)
		return 1;
	return res.failed ? 1 : 0;
}
