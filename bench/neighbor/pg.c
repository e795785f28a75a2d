// SPDX-License-Identifier: MIT
/*
 * pg.c - bench neighbor's PostgreSQL victim: its cluster (neighbor.h,
 * struct nb_pg), started, stopped and removed on every exit path.
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why the PostgreSQL victims cannot run here, or NULL. */
const char *nb_pg_why(char *buf, size_t len)
{
	static const char *const progs[] = {"initdb", "postgres", "pgbench",
					    "pg_isready", "psql"};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/%s", PG_BIN, progs[i]);
		if (access(p, X_OK)) {
			snprintf(buf, len,
				 "no %s (Debian package postgresql-15)", p);
			return buf;
		}
	}
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("postgres");
		if (!pw) {
			snprintf(buf, len,
				 "no user postgres (PostgreSQL refuses to run "
				 "as root)");
			return buf;
		}
		nb_pg.setuid = 1;
		nb_pg.uid = pw->pw_uid;
		nb_pg.gid = pw->pw_gid;
	}
	return NULL;
}

static int pg_chown(const char *path)
{
	if (nb_pg.setuid && chown(path, nb_pg.uid, nb_pg.gid)) {
		int e = -errno;
		cli_error("bench neighbor: chown '%s' to postgres: %s", path,
			  strerror(-e));
		return e;
	}
	return 0;
}

/* A PostgreSQL client program, as ourselves (the socket is ours), its
 * output into @out_path. */
int nb_pg_client(char **argv, const char *cwd, const char *out_path)
{
	char prog[128];
	snprintf(prog, sizeof(prog), "%s/%s", PG_BIN, argv[0]);
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
					CHILD_SIGDFL | CHILD_PDEATHSIG |
					(out_path ? 0 : CHILD_STDOUT_NULL),
			       .cwd = cwd,
			       .out_path = out_path};
	return child_run(prog, argv, &o);
}

/* Stop the postmaster (fast shutdown, then immediate, then SIGKILL of
 * its process group) and remove the cluster, socket and log
 * directories.  Returns 0 or -1 (printed). */
int nb_pg_stop(void)
{
	int e = 0;
	if (nb_pg.pid > 0) {
		static const int sigs[] = {SIGINT, SIGQUIT, SIGKILL};
		static const int waits[] = {300, 100, 100}; /* 0.1 s */
		int r = -EAGAIN;
		for (int i = 0; i < 3 && r == -EAGAIN; i++) {
			if (i == 2)
				kill(-nb_pg.pid, SIGKILL);
			else
				kill(nb_pg.pid, sigs[i]);
			for (int k = 0; k < waits[i] && r == -EAGAIN; k++) {
				r = child_wait(nb_pg.pid, 1);
				if (r == -EAGAIN)
					nb_sleep_s(0.1);
			}
			if (i && r != -EAGAIN)
				cli_error("bench neighbor: PostgreSQL did not "
					  "stop on SIGINT: %s sent",
					  i == 1 ? "SIGQUIT" : "SIGKILL");
		}
		/* backends of an immediate shutdown: the group */
		kill(-nb_pg.pid, SIGKILL);
		nb_pg.pid = -1;
	}
	if (nb_pg.made) {
		const char *dirs[] = {nb_pg.data, nb_pg.sock, nb_pg.logs};
		for (size_t i = 0; i < 3; i++) {
			if (!dirs[i][0])
				continue;
			nb_remove_tree(dirs[i]);
			if (!access(dirs[i], F_OK)) {
				cli_error("bench neighbor: could not remove "
					  "'%s'",
					  dirs[i]);
				e = -1;
			}
		}
		nb_pg.made = 0;
		nb_state_save();
	}
	return e;
}

/* initdb DIR/pg, start the postmaster, wait until it accepts
 * connections.  Returns 0, -EINTR (a stop signal), or -1 (printed). */
int nb_pg_start(const char *dir, const char *out, uint64_t clients)
{
	char log[1100], b[1100];
	snprintf(nb_pg.data, sizeof(nb_pg.data), "%s/pg", dir);
	snprintf(nb_pg.sock, sizeof(nb_pg.sock),
		 "/tmp/flushkit-neighbor-pg.XXXXXX");
	snprintf(nb_pg.logs, sizeof(nb_pg.logs),
		 "/dev/shm/flushkit-neighbor-txlog.XXXXXX");
	nb_remove_tree(nb_pg.data);
	nb_pg.made = 1;
	if (!mkdtemp(nb_pg.sock) || !mkdtemp(nb_pg.logs)) {
		cli_error("bench neighbor: mkdtemp '%s': %s",
			  access(nb_pg.sock, F_OK) ? nb_pg.sock : nb_pg.logs,
			  strerror(errno));
		return -1;
	}
	if (nb_state_save())
		return -1;
	if (mkdir(nb_pg.data, 0700)) {
		cli_error("bench neighbor: mkdir '%s': %s", nb_pg.data,
			  strerror(errno));
		return -1;
	}
	if (pg_chown(nb_pg.data) || pg_chown(nb_pg.sock))
		return -1;

	char *vargv[] = {"postgres", "--version", NULL};
	struct child_opts vo = {.flags = CHILD_STDIN_NULL,
				.capture = nb_pg.version,
				.capture_len = sizeof(nb_pg.version)};
	snprintf(b, sizeof(b), "%s/postgres", PG_BIN);
	child_run(b, vargv, &vo);
	nb_pg.version[strcspn(nb_pg.version, "\n")] = '\0';

	/* initdb --no-sync: the runs start after a CHECKPOINT and a
	 * syncfs of the file system anyway */
	snprintf(log, sizeof(log), "%s/pg-initdb.log", out);
	snprintf(b, sizeof(b), "%s/initdb", PG_BIN);
	char *iargv[] = {"initdb", "-D",	nb_pg.data, "-A",
			 "trust",  "-U",	"postgres", "-E",
			 "UTF8",   "--no-sync", NULL};
	int flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT | CHILD_SIGDFL |
		    CHILD_PDEATHSIG | (nb_pg.setuid ? CHILD_SETUID : 0);
	struct child_opts io = {.flags = flags,
				.cwd = nb_pg.sock, /* one the server's user
						   can enter */
				.out_path = log,
				.uid = nb_pg.uid,
				.gid = nb_pg.gid};
	int st = child_run(b, iargv, &io);
	if (nb_stop_sig)
		return -EINTR;
	if (st) {
		cli_error("bench neighbor: initdb '%s' failed (status %d): "
			  "see '%s'",
			  nb_pg.data, st, log);
		return -1;
	}

	char sockopt[96], conns[64];
	snprintf(sockopt, sizeof(sockopt), "unix_socket_directories=%s",
		 nb_pg.sock);
	snprintf(conns, sizeof(conns), "max_connections=%llu",
		 (unsigned long long)clients + 10);
	snprintf(log, sizeof(log), "%s/pg-server.log", out);
	snprintf(b, sizeof(b), "%s/postgres", PG_BIN);
	char *sargv[] = {"postgres",
			 "-D",
			 nb_pg.data,
			 "-p",
			 PG_PORT,
			 "-c",
			 "listen_addresses=",
			 "-c",
			 sockopt,
			 "-c",
			 conns,
			 "-c",
			 "log_checkpoints=on",
			 "-c",
			 "log_line_prefix=%m [%p] ",
			 "-c",
			 "log_timezone=UTC",
			 NULL};
	io.flags |= CHILD_SETPGID;
	int e = child_start(b, sargv, &io, &nb_pg.pid);
	if (e) {
		cli_error("bench neighbor: start PostgreSQL: %s", strerror(-e));
		return -1;
	}
	char *rargv[] = {"pg_isready", "-q",	"-h", nb_pg.sock,
			 "-p",	       PG_PORT, NULL};
	for (int i = 0; i < 600; i++) {
		if (nb_stop_sig)
			return -EINTR;
		int r = child_wait(nb_pg.pid, 1);
		if (r != -EAGAIN) {
			nb_pg.pid = -1;
			cli_error("bench neighbor: PostgreSQL exited (status "
				  "%d) at its start: see '%s'",
				  r, log);
			return -1;
		}
		if (!nb_pg_client(rargv, NULL, NULL))
			return 0;
		nb_sleep_s(0.1);
	}
	cli_error("bench neighbor: PostgreSQL accepted no connection in "
		  "60 s: see '%s'",
		  log);
	return -1;
}

/* Move pgbench's per-transaction logs of one run from the tmpfs to
 * @run as txlog.* (its latency scatter for report).  Returns 0 or
 * -errno. */
int nb_pg_move_logs(const char *run)
{
	DIR *d = opendir(nb_pg.logs);
	if (!d)
		return -errno;
	struct dirent *de;
	int e = 0;
	while (!e && (de = readdir(d))) {
		if (strncmp(de->d_name, "txlog.", 6))
			continue;
		char from[1200], to[2000];
		snprintf(from, sizeof(from), "%s/%s", nb_pg.logs, de->d_name);
		snprintf(to, sizeof(to), "%s/%s", run, de->d_name);
		int in = open(from, O_RDONLY | O_CLOEXEC);
		int o =
		    open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (in < 0 || o < 0)
			e = -errno;
		char buf[65536];
		ssize_t n;
		while (!e && (n = read(in, buf, sizeof(buf))) != 0) {
			if (n < 0 || write(o, buf, (size_t)n) != n)
				e = n < 0 ? -errno : -EIO;
		}
		if (o >= 0 && close(o) && !e)
			e = -errno;
		if (in >= 0)
			close(in);
		unlink(from);
	}
	closedir(d);
	return e;
}

/* pgbench's -P lines ("progress: 5.0 s, 398.0 tps, lat 2.411 ms stddev
 * 0.893, ...") from @path into @rf, moved by @off seconds. */
void nb_pg_copy_progress(struct result_file *rf, const char *path, double off)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		double t, tps, lat, sd;
		if (sscanf(line,
			   "progress: %lf s, %lf tps, lat %lf ms stddev %lf",
			   &t, &tps, &lat, &sd) == 4)
			results_progress(rf, t + off, tps, lat, sd, -1);
	}
	fclose(f);
}
