// SPDX-License-Identifier: MIT
/*
 * peer-pg.c - "flushkit reproduce": the PostgreSQL 15 peer, a private
 * cluster on a seed's disk, started, used and removed with the seed.
 */
#include "reproduce.h"

static struct pg *pg_active[2];

static const char *pg_bin(void)
{
	const char *b = getenv("PG_BIN");
	return b && *b ? b : "/usr/lib/postgresql/15/bin";
}

/* bench/peers/tpcb-pg-result.py of the tree the binary was built in
 * (BUILD/flushkit: BUILD/../bench/peers), or the installed copy
 * (BIN/../share/flushkit/peers).  0 or -ENOENT. */
static int pg_find_script(char *path, size_t len)
{
	char exe[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	static const char *const rel[] = {"/../bench/peers", "/bench/peers",
					  "/../share/flushkit/peers"};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, len, "%s%s/tpcb-pg-result.py", exe, rel[i]);
		if (!access(path, R_OK))
			return 0;
	}
	return -ENOENT;
}

/*
 * Can the peer run here?  1 yes; 0 PostgreSQL 15 is not installed
 * (@why says what is missing); -1 installed but something else is
 * missing (@why).
 */
int pg_available(char *why, size_t len)
{
	static const char *const progs[] = {"initdb", "pg_ctl", "postgres",
					    "pgbench", "psql"};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char p[700];
		snprintf(p, sizeof(p), "%s/%s", pg_bin(), progs[i]);
		if (access(p, X_OK)) {
			snprintf(why, len, "no %s", p);
			return 0;
		}
	}
	char s[1200];
	if (!getpwnam("postgres"))
		snprintf(why, len, "no user postgres");
	else if (!disk_in_path("runuser"))
		snprintf(why, len, "no runuser in PATH");
	else if (!disk_in_path("python3"))
		snprintf(why, len, "no python3 in PATH");
	else if (pg_find_script(s, sizeof(s)))
		snprintf(why, len,
			 "no bench/peers/tpcb-pg-result.py beside the "
			 "flushkit binary's directory");
	else
		return 1;
	return -1;
}

/* The command, for the record: LOGDIR/commands.txt. */
static void record_command(const char *log, char *const *argv)
{
	char cmds[2400];
	const char *slash = strrchr(log, '/');
	snprintf(cmds, sizeof(cmds), "%.*s/commands.txt",
		 slash ? (int)(slash - log) : 1, slash ? log : ".");
	FILE *cf = fopen(cmds, "ae");
	if (!cf)
		return;
	fprintf(cf, "%s:", log);
	for (int i = 0; argv[i]; i++)
		fprintf(cf, " %s", argv[i]);
	fprintf(cf, "\n");
	fclose(cf);
}

/*
 * Run @a (a->v[0] the program's path) for the peer: as user postgres
 * when @as_pg (runuser -u postgres --), its own process group, stdin
 * /dev/null, none of our descriptors, stdout into LOGDIR/@out (or
 * @cap, @caplen when @cap), stderr into LOGDIR/@err (NULL: with
 * stdout; with @cap: into LOGDIR/@out).  @stoppable: not started after
 * a stop signal, and sent it (a step of the experiment); else it runs
 * whatever (a server's stop).  Returns its status, -EINTR (stopped) or
 * -errno; a failure is printed naming the program and the log.
 */
int pg_exec(struct pg *p, struct child_argv *a, int as_pg, int stoppable,
	    const char *out, const char *err, char *cap, size_t caplen)
{
	if (stoppable && stop)
		return -EINTR;
	struct child_argv r = CHILD_ARGV_INIT;
	char *const *argv = a->v;
	int rc = child_argv_check(a);
	if (!rc && as_pg) {
		child_argv_add(&r, "runuser");
		child_argv_add(&r, "-u");
		child_argv_add(&r, "postgres");
		child_argv_add(&r, "--");
		for (int i = 0; i < a->n; i++)
			child_argv_add(&r, "%s", a->v[i]);
		argv = r.v;
		rc = child_argv_check(&r);
	}
	if (rc) {
		cli_error("'%s': its argument list: %s", a->n ? a->v[0] : "",
			  strerror(-rc));
		child_argv_release(&r);
		return rc;
	}
	char olog[2400], elog[2400];
	snprintf(olog, sizeof(olog), "%s/%s", p->logdir, out);
	if (err)
		snprintf(elog, sizeof(elog), "%s/%s", p->logdir, err);
	record_command(olog, argv);
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_SIGDFL |
					CHILD_SETPGID | CHILD_PDEATHSIG |
					CHILD_EXEC_MSG | CHILD_CLOSEFDS};
	if (cap) {
		o.capture = cap;
		o.capture_len = caplen;
		o.err_path = olog;
		rc = child_run(argv[0], argv, &o);
	} else {
		o.out_path = olog;
		if (err)
			o.err_path = elog;
		else
			o.flags |= CHILD_STDERR_OUT;
		pid_t pid;
		rc = child_start(argv[0], argv, &o, &pid);
		if (!rc) {
			if (stoppable) {
				child_pgid = pid;
				if (stop)
					kill(-pid, SIGTERM);
			}
			rc = child_wait(pid, 0);
			if (stoppable)
				child_pgid = 0;
		}
	}
	const char *name = strrchr(a->v[0], '/');
	name = name ? name + 1 : a->v[0];
	if (stoppable && stop)
		rc = -EINTR;
	else if (rc < 0)
		cli_error("run '%s': %s", a->v[0], strerror(-rc));
	else if (rc)
		cli_error("'%s' failed with status %d; see '%s'", name, rc,
			  err && !cap ? elog : olog);
	child_argv_release(&r);
	return rc;
}

/* Stop the postmaster of data directory @data, not through pg_ctl (a
 * killed run's, or one pg_ctl could not stop): its pid from
 * postmaster.pid, taken only if that process's working directory is
 * @data (the postmaster's is its data directory); SIGQUIT (immediate
 * shutdown), after 10 s SIGKILL.  1 if a server was stopped, 0 if none
 * runs, -EBUSY if it would not go. */
static int pg_kill_postmaster(const char *data)
{
	char path[1300], real[PATH_MAX], cwd[PATH_MAX], link[64];
	snprintf(path, sizeof(path), "%s/postmaster.pid", data);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	long pid = 0;
	int ok = fscanf(f, "%ld", &pid) == 1 && pid > 1;
	fclose(f);
	if (!ok || !realpath(data, real))
		return 0;
	snprintf(link, sizeof(link), "/proc/%ld/cwd", pid);
	ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return 0;
	cwd[n] = 0;
	if (strcmp(cwd, real))
		return 0; /* the pid is another process's now */
	kill((pid_t)pid, SIGQUIT);
	for (int i = 0; i < 150; i++) {
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			return 1;
		if (i == 100)
			kill((pid_t)pid, SIGKILL);
		usleep(100000);
	}
	cli_error("PostgreSQL server %ld of '%s' does not stop", pid, data);
	return -EBUSY;
}

/* Stop @p's server if it runs (pg_ctl stop -m fast, else
 * pg_kill_postmaster).  0 or -errno. */
int pg_stop(struct pg *p)
{
	if (!p->started)
		return 0;
	char pidf[1300];
	snprintf(pidf, sizeof(pidf), "%s/postmaster.pid", p->data);
	int rc = 0;
	/* A start cut short by a stop signal (pg_ctl killed, the server
	 * it forked still coming up): its postmaster.pid comes soon. */
	for (int i = 0; i < 30 && access(pidf, F_OK); i++)
		usleep(100000);
	if (!access(pidf, F_OK)) {
		struct child_argv a = CHILD_ARGV_INIT;
		child_argv_add(&a, "%s/pg_ctl", p->bin);
		child_argv_add(&a, "-D");
		child_argv_add(&a, "%s", p->data);
		child_argv_add(&a, "-m");
		child_argv_add(&a, "fast");
		child_argv_add(&a, "-w");
		child_argv_add(&a, "-t");
		child_argv_add(&a, "60");
		child_argv_add(&a, "stop");
		rc = pg_exec(p, &a, 1, 0, "pg-stop.log", NULL, NULL, 0);
		child_argv_release(&a);
		if (rc && pg_kill_postmaster(p->data) >= 0)
			rc = 0;
	}
	p->started = 0;
	return rc;
}

/* Stop @p's server and remove its data directory, socket directory and
 * record.  0 or -errno (the server would not stop). */
int pg_release(struct pg *p)
{
	int rc = pg_stop(p);
	if (!rc && p->made) {
		rm_tree(p->data);
		rm_tree(p->sock);
		p->made = 0;
	}
	if (!rc && p->rec[0])
		unlink(p->rec);
	for (int i = 0; i < 2; i++)
		if (pg_active[i] == p && !rc)
			pg_active[i] = NULL;
	return rc;
}

/* Every cluster of this run (before its disk goes, and at exit). */
void pg_stop_all(void)
{
	for (int i = 0; i < 2; i++)
		if (pg_active[i])
			pg_release(pg_active[i]);
}

/*
 * The PostgreSQL servers that killed runs left: for each run directory
 * under DISK_ROOT whose lock nobody holds, the server of each of its
 * *.pgcluster records (pg_kill_postmaster).  Before disk_cleanup_stale,
 * which cannot unmount a disk a server still uses.  Count stopped.
 */
int pg_cleanup_stale(void)
{
	DIR *dir = opendir(DISK_ROOT);
	if (!dir)
		return 0;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "run-", 4))
			continue;
		char path[1024], lock[1100];
		snprintf(path, sizeof(path), DISK_ROOT "/%s", e->d_name);
		snprintf(lock, sizeof(lock), "%s/lock", path);
		int fd = open(lock, O_RDWR | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB)) {
			if (fd >= 0)
				close(fd); /* a live run (or one starting) */
			continue;
		}
		DIR *rd = opendir(path);
		struct dirent *r;
		while (rd && (r = readdir(rd))) {
			size_t n = strlen(r->d_name);
			if (n < 11 || strcmp(r->d_name + n - 10, ".pgcluster"))
				continue;
			char rec[1400], data[1200];
			snprintf(rec, sizeof(rec), "%s/%s", path, r->d_name);
			FILE *f = fopen(rec, "re");
			if (!f)
				continue;
			if (fgets(data, sizeof(data), f)) {
				data[strcspn(data, "\n")] = 0;
				if (pg_kill_postmaster(data) > 0)
					count++;
			}
			fclose(f);
		}
		if (rd)
			closedir(rd);
		close(fd);
	}
	closedir(dir);
	return count;
}

/* Append @lines (NULL-terminated) to DATA/postgresql.conf. */
static int pg_conf(struct pg *p, const char *const *lines)
{
	char path[1300];
	snprintf(path, sizeof(path), "%s/postgresql.conf", p->data);
	FILE *f = fopen(path, "ae");
	if (!f) {
		int e = errno;
		cli_error("open '%s': %s", path, strerror(e));
		return -e;
	}
	fprintf(f,
		"# flushkit reproduce\nlisten_addresses = ''\nport = %d\n"
		"unix_socket_directories = '%s'\nlog_line_prefix = '%%m "
		"[%%p] '\nlog_timezone = 'UTC'\n",
		PG_PORT, p->sock);
	for (int i = 0; lines && lines[i]; i++)
		fprintf(f, "%s\n", lines[i]);
	if (fclose(f)) {
		int e = errno;
		cli_error("write '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

static int chown_dir(const char *path, const struct pg *p)
{
	if (mkdir(path, 0700) && errno != EEXIST) {
		int e = errno;
		cli_error("mkdir '%s': %s", path, strerror(e));
		return -e;
	}
	if (chown(path, p->uid, p->gid)) {
		int e = errno;
		cli_error("chown '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * A new cluster @name in @data (on a seed's disk) with @lines in its
 * postgresql.conf, its server started; step logs into @logdir.  The
 * run directory and DISK_ROOT become 0711 (user postgres must reach
 * the disk below them; nothing in them can be listed).  0, -EINTR or
 * -errno; on failure the caller still calls pg_release.
 */
int pg_init(struct pg *p, struct ctx *c, const char *name, const char *data,
	    const char *logdir, const char *const *lines)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->bin, sizeof(p->bin), "%s", pg_bin());
	snprintf(p->data, sizeof(p->data), "%s", data);
	snprintf(p->sock, sizeof(p->sock), "%s/pgsock-%s", c->run_dir, name);
	snprintf(p->logdir, sizeof(p->logdir), "%s", logdir);
	if (pg_find_script(p->script, sizeof(p->script)))
		return -ENOENT;
	struct passwd *pw = getpwnam("postgres");
	if (!pw)
		return -ENOENT;
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	for (int i = 0; i < 2; i++)
		if (!pg_active[i]) {
			pg_active[i] = p;
			break;
		}
	if (chmod(DISK_ROOT, 0711) || chmod(c->run_dir, 0711)) {
		int e = errno;
		cli_error("chmod '%s': %s", c->run_dir, strerror(e));
		return -e;
	}
	/* The record first: a run killed from here on leaves it. */
	snprintf(p->rec, sizeof(p->rec), "%s/%s.pgcluster", c->run_dir, name);
	FILE *f = fopen(p->rec, "we");
	if (!f || fprintf(f, "%s\n", p->data) < 0 || fclose(f)) {
		int e = errno;
		cli_error("create '%s': %s", p->rec, strerror(e));
		return -e;
	}
	p->made = 1;
	int rc = chown_dir(p->data, p);
	if (!rc)
		rc = chown_dir(p->sock, p);
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "%s/postgres", p->bin);
	child_argv_add(&a, "--version");
	if (!rc) {
		rc = pg_exec(p, &a, 0, 1, "pg-version.log", NULL, p->version,
			     sizeof(p->version));
		p->version[strcspn(p->version, "\n")] = 0;
	}
	child_argv_release(&a);
	child_argv_add(&a, "%s/initdb", p->bin);
	child_argv_add(&a, "-D");
	child_argv_add(&a, "%s", p->data);
	child_argv_add(&a, "-A");
	child_argv_add(&a, "trust");
	child_argv_add(&a, "-U");
	child_argv_add(&a, "postgres");
	child_argv_add(&a, "--locale=C");
	child_argv_add(&a, "-E");
	child_argv_add(&a, "UTF8");
	child_argv_add(&a, "-N"); /* the caller syncs the file system */
	if (!rc)
		rc = pg_exec(p, &a, 1, 1, "pg-initdb.log", NULL, NULL, 0);
	child_argv_release(&a);
	if (!rc)
		rc = pg_conf(p, lines);
	child_argv_add(&a, "%s/pg_ctl", p->bin);
	child_argv_add(&a, "-D");
	child_argv_add(&a, "%s", p->data);
	child_argv_add(&a, "-l");
	child_argv_add(&a, "%s/server.log", p->data);
	child_argv_add(&a, "-w");
	child_argv_add(&a, "-t");
	child_argv_add(&a, "120");
	child_argv_add(&a, "start");
	if (!rc) {
		p->started = 1; /* from here pg_stop stops it */
		rc = pg_exec(p, &a, 1, 1, "pg-start.log", NULL, NULL, 0);
	}
	child_argv_release(&a);
	return rc;
}

/* "BIN/@prog -h SOCK -p PORT -U postgres" into @a: a client of the
 * cluster over its socket (psql, pgbench). */
void pg_client_argv(const struct pg *p, struct child_argv *a, const char *prog)
{
	child_argv_add(a, "%s/%s", p->bin, prog);
	child_argv_add(a, "-h");
	child_argv_add(a, "%s", p->sock);
	child_argv_add(a, "-p");
	child_argv_add(a, "%d", PG_PORT);
	child_argv_add(a, "-U");
	child_argv_add(a, "postgres");
}

/* psql -c SQL for each of @sql (NULL-terminated), as postgres over the
 * socket; the last one's output (unaligned, tuples only) into @cap. */
int pg_sql(struct pg *p, const char *const *sql, char *cap, size_t caplen)
{
	struct child_argv a = CHILD_ARGV_INIT;
	pg_client_argv(p, &a, "psql");
	child_argv_add(&a, "-X");
	child_argv_add(&a, "-q");
	child_argv_add(&a, "-At");
	child_argv_add(&a, "-v");
	child_argv_add(&a, "ON_ERROR_STOP=1");
	for (int i = 0; sql[i]; i++) {
		child_argv_add(&a, "-c");
		child_argv_add(&a, "%s", sql[i]);
	}
	child_argv_add(&a, "postgres");
	char dummy[256];
	int rc = pg_exec(p, &a, 0, 1, "pg-psql.log", NULL, cap ? cap : dummy,
			 cap ? caplen : sizeof(dummy));
	child_argv_release(&a);
	if (!rc && cap)
		cap[strcspn(cap, "\n")] = 0;
	return rc;
}

/* pgbench -i -s @scale into the cluster. */
int pg_pgbench_init(struct pg *p, int scale)
{
	struct child_argv a = CHILD_ARGV_INIT;
	pg_client_argv(p, &a, "pgbench");
	child_argv_add(&a, "-i");
	child_argv_add(&a, "-q");
	child_argv_add(&a, "-s");
	child_argv_add(&a, "%d", scale);
	child_argv_add(&a, "postgres");
	int rc = pg_exec(p, &a, 0, 1, "pg-pgbench-init.log", NULL, NULL, 0);
	child_argv_release(&a);
	return rc;
}

/* The counters a result file records, as one JSON object (as
 * bench/peers/tpcb.sh's). */
int pg_stats(struct pg *p, char *buf, size_t len)
{
	static const char *const q[] = {
	    "SELECT json_build_object('buffers_backend_fsync', "
	    "b.buffers_backend_fsync, 'buffers_backend', b.buffers_backend, "
	    "'buffers_checkpoint', b.buffers_checkpoint, 'checkpoints', "
	    "b.checkpoints_timed + b.checkpoints_req, 'wal_fpi', w.wal_fpi, "
	    "'wal_bytes', w.wal_bytes, 'wal_sync', w.wal_sync) FROM "
	    "pg_stat_bgwriter b, pg_stat_wal w",
	    NULL};
	return pg_sql(p, q, buf, len);
}

double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copy @from's bytes after @off to @to (a run's lines of the server
 * log). */
void copy_tail(const char *from, off_t off, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[65536];
	ssize_t n;
	if (in >= 0 && out >= 0 && lseek(in, off, SEEK_SET) == off)
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}
