// SPDX-License-Identifier: MIT
/*
 * options.c - bench fsmark's options (fs_mark 3.3's, plus --sync-io,
 * --jobs, --json, --results) and --help.
 */
#include "cli-sys.h"
#include "cli.h"
#include "fsmark.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ---- */

void fsm_usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: flushkit bench fsmark -d DIR [-d DIR...] [OPTIONS]\n"
	    "\n"
	    "fs_mark-compatible small-file benchmark: create, write and sync "
	    "files.\n"
	    "\n"
	    "  -d DIR          directory, created with its parents if "
	    "missing\n"
	    "                  (repeatable; thread i uses DIR number i %% N)\n"
	    "  -t N            threads, a multiple of the -d count (default: "
	    "that)\n"
	    "  -n N            files per thread per loop (default 1000)\n"
	    "  -s BYTES        file size (default 51200)\n"
	    "  -w BYTES        bytes per write() (default 16384)\n"
	    "  -D N            N subdirectories 00, 01, ... in each directory\n"
	    "  -N N            N files in each subdirectory in turn (with -D)\n"
	    "  -L N            loops (default 1); keeps the files, as fs_mark\n"
	    "  -F              loop until the file system is full (keeps the "
	    "files)\n"
	    "  -k              keep files after each loop (default: unlink "
	    "them)\n"
	    "  -l FILE         also append the table to FILE\n"
	    "  -p N            file name length (default 40, at most 128)\n"
	    "  -r N            random characters at the end of names (default "
	    "24)\n"
	    "  -S METHOD       0 no sync, 1 fsync before close (default), 2 "
	    "sync then\n"
	    "                  one fsync, 3 post-reverse fsync, 4 sync + "
	    "post-reverse\n"
	    "                  fsync, 5 post fsync, 6 sync + post fsync;\n"
	    "                  batch: write all, then batched fsync;\n"
	    "                  twopass: write all, writeback hints, batched "
	    "fsync;\n"
	    "                  async: fsync each file as soon as it is "
	    "written, without\n"
	    "                  waiting (submit/reap), while the next files "
	    "are created;\n"
	    "                  a file counts once its fsync has returned "
	    "0\n"
	    "  --sync-io=IO    batch/async backend: auto (default), uring, "
	    "threads, "
	    "sequential\n"
	    "  --jobs N        fsyncs in flight per thread (default 32)\n"
	    "  --queue-depth N the old name of --jobs (kept for scripts)\n"
	    "  -v              min/avg/max microseconds of each system call\n"
	    "  --json          print the results as JSON\n"
	    "  --results=DIR   write the result file there (default results)\n"
	    "  --no-results    write no result file\n"
	    "  -h, --help      this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 an I/O error (reported on stderr), 2 "
	    "usage.\n");
}

int fsm_parse_opts(struct fsm *f, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"sync-io", required_argument, NULL, 'I'},
	    {"jobs", required_argument, NULL, 'Q'},
	    {"queue-depth", required_argument, NULL, 'Q'}, /* old name */
	    {"json", no_argument, NULL, 'J'},
	    {"results", required_argument, NULL, 256},
	    {"no-results", no_argument, NULL, 257},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, threads_given = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:d:t:n:s:w:L:kS:vhD:N:Fl:p:r:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (f->nr_dirs >= FSM_MAX_THREADS) {
				cli_usage_error("bench fsmark",
						"Max number of threads "
						"(and directories) is %d",
						FSM_MAX_THREADS);
				return -1;
			}
			if (strlen(optarg) >= PATH_MAX - FSM_NAME_MAX - 8) {
				cli_usage_error(
				    "bench fsmark",
				    "%s directory pathname "
				    "too long (must be less than %d "
				    "bytes)",
				    optarg, PATH_MAX - FSM_NAME_MAX - 8);
				return -1;
			}
			f->dirs[f->nr_dirs++] = optarg;
			break;
		case 't':
		case 'n':
		case 'L':
		case 'D':
		case 'N':
		case 'p':
		case 'r':
			if (cli_parse_u64(optarg, &v) || (v < 1 && c != 'r') ||
			    v > 1000000000) {
				cli_usage_error("bench fsmark",
						"invalid value '%s' for -%c",
						optarg, c);
				return -1;
			}
			if (c == 't' && v > FSM_MAX_THREADS) {
				cli_usage_error("bench fsmark",
						"Max threads is %d",
						FSM_MAX_THREADS);
				return -1;
			}
			if (c == 'n' && v > FSM_MAX_FILES) {
				cli_usage_error("bench fsmark",
						"Max files is %d",
						FSM_MAX_FILES);
				return -1;
			}
			if (c == 'D' && v < 2) {
				cli_usage_error("bench fsmark",
						"Number of subdirs "
						"needs to be greater than 1");
				return -1;
			}
			if ((c == 'p' || c == 'r') && v > FSM_NAME_MAX) {
				cli_usage_error("bench fsmark",
						"Max filename size is "
						"%d",
						FSM_NAME_MAX);
				return -1;
			}
			if (c == 'D' && v > 4096) {
				cli_bad_value("bench fsmark", "-D", optarg,
					      "at most 4096");
				return -1;
			}
			if (c == 't') {
				f->threads = (unsigned)v;
				threads_given = 1;
			} else if (c == 'n') {
				f->files = (unsigned)v;
			} else if (c == 'L') {
				f->loops = (unsigned)v;
				f->keep = 1; /* as fs_mark: -L keeps files */
			} else if (c == 'D') {
				f->subdirs = (unsigned)v;
			} else if (c == 'N') {
				f->per_subdir = (unsigned)v;
			} else if (c == 'p') {
				f->name_len = (unsigned)v;
			} else {
				f->rand_len = (unsigned)v;
			}
			break;
		case 'F':
			f->fill = 1;
			f->keep = 1; /* as fs_mark: hard to fill otherwise */
			break;
		case 'l':
			if (!*optarg) {
				cli_bad_value("bench fsmark", "-l", "",
					      "a file name");
				return -1;
			}
			f->log_name = optarg;
			break;
		case 's':
		case 'w':
			if (cli_parse_size(optarg, &v) || (c == 'w' && v < 1)) {
				cli_usage_error("bench fsmark",
						"invalid value '%s' for -%c",
						optarg, c);
				return -1;
			}
			if (c == 'w' && v > FSM_MAX_IO_BUFFER) {
				cli_usage_error("bench fsmark",
						"MAX IO buffer size is "
						"%u",
						FSM_MAX_IO_BUFFER);
				return -1;
			}
			if (c == 's')
				f->size = v;
			else
				f->write_size = v;
			break;
		case 'k':
			f->keep = 1;
			break;
		case 'S':
			f->method = -1;
			for (int m = 0; m <= M_LAST; m++)
				if (!strcmp(optarg, fsm_method_name[m]))
					f->method = m;
			if (f->method < 0) {
				cli_bad_value("bench fsmark", "-S", optarg,
					      "0-6, batch, twopass or async");
				return -1;
			}
			break;
		case 'v':
			f->verbose = 1;
			break;
		case 'I': {
			int io = cli_parse_sync_io(optarg);
			if (io < 0) {
				cli_bad_sync_io("bench fsmark", optarg);
				return -1;
			}
			f->bopts.sync_io = io;
			break;
		}
		case 'Q':
			if (cli_parse_jobs(optarg, &f->bopts.queue_depth)) {
				cli_bad_jobs("bench fsmark", optarg);
				return -1;
			}
			break;
		case 'J':
			f->json = 1;
			break;
		case 256:
			if (!*optarg) {
				cli_bad_value("bench fsmark", "--results", "",
					      "a directory");
				return -1;
			}
			f->results_dir = optarg;
			break;
		case 257:
			f->results_dir = NULL;
			break;
		case 'h':
			return 1;
		default:
			cli_option_error("bench fsmark", c, argv, longopts);
			return -1;
		}
	}
	if (optind < argc) {
		cli_usage_error("bench fsmark", "extra operand '%s'",
				argv[optind]);
		return -1;
	}
	if (!f->nr_dirs) {
		cli_usage_error("bench fsmark",
				"Must specify at least one directory "
				"with -d switch");
		return -1;
	}
	if (!f->subdirs && f->per_subdir) {
		cli_usage_error(
		    "bench fsmark",
		    "Must specify at more than 1 "
		    "subdirectory with -D switch for -N num_per_subdir "
		    "to make sense");
		return -1;
	}
	if (f->rand_len > f->name_len) {
		cli_usage_error("bench fsmark",
				"-r %u random bytes do not fit in "
				"-p %u byte names",
				f->rand_len, f->name_len);
		return -1;
	}
	/* fs_mark: at least one thread per directory, and the same number
	 * in each */
	if (!threads_given || f->nr_dirs > f->threads)
		f->threads = (unsigned)f->nr_dirs;
	else if (f->threads % f->nr_dirs) {
		cli_usage_error(
		    "bench fsmark",
		    "Threads (%u) must be an even multiple "
		    "the number of directories (%zu) and less than %d ",
		    f->threads, f->nr_dirs, FSM_MAX_THREADS);
		return -1;
	}
	return 0;
}
