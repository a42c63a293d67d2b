// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own accounting of the feeding threads, read just before the
 * workers stop: an oracle that idlegap does not write.  Per thread of this
 * process and of each worker process: time on CPU and time runnable but
 * waiting for a CPU (/proc/PID/task/TID/schedstat), block IO delay (field 42
 * of .../stat, counted while kernel.task_delayacct is on), and voluntary and
 * involuntary context switches (.../status).  The truth JSON carries them
 * ("accounting"); tools/accuracy.py judges the report's causes against them.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainsim.h"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f))
		err = -1;
	fclose(f);
	return err;
}

/* Whether the kernel counts block IO delay now: kernel.task_delayacct from
 * 5.14 on (off by default); before it, a kernel counts unless it was booted
 * with nodelayacct. */
static bool delayacct_on(void)
{
	char buf[4096] = "";

	if (!read_line("/proc/sys/kernel/task_delayacct", buf, sizeof(buf)))
		return buf[0] == '1';
	if (read_line("/proc/cmdline", buf, sizeof(buf)))
		return false;
	for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
		if (!strcmp(t, "nodelayacct"))
			return false;
	return true;
}

/* blkio delay: the 42nd field of stat, after the comm in parentheses */
static uint64_t stat_blkio_ticks(const char *dir)
{
	char path[96], buf[1024], *p;
	int field;

	snprintf(path, sizeof(path), "%s/stat", dir);
	if (read_line(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return 0;
	/* p + 2 is field 3 */
	for (p += 2, field = 3; *p && field < 42; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

static void status_switches(const char *dir, struct acct_thread *t)
{
	char path[96], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/status", dir);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "voluntary_ctxt_switches: %llu", &t->vol);
		sscanf(line, "nonvoluntary_ctxt_switches: %llu", &t->invol);
	}
	fclose(f);
}

/* a thread name as a JSON string needs no escape */
static void clean_comm(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.:-/", *s))
			*s = '_';
}

static void sample_task(struct acct *a, pid_t pid, pid_t tid, const char *role)
{
	static long tick_ns;
	struct acct_thread *t;
	char dir[64], path[96], buf[256];

	if (a->n >= ACCT_MAX)
		return;
	if (!tick_ns)
		tick_ns = 1000000000L / sysconf(_SC_CLK_TCK);
	t = &a->t[a->n];
	memset(t, 0, sizeof(*t));
	snprintf(dir, sizeof(dir), "/proc/%d/task/%d", (int)pid, (int)tid);
	snprintf(path, sizeof(path), "%s/schedstat", dir);
	if (read_line(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llu", &t->cpu_ns, &t->run_ns) != 2)
		return;
	snprintf(path, sizeof(path), "%s/comm", dir);
	if (!read_line(path, t->comm, sizeof(t->comm)))
		clean_comm(t->comm);
	t->blkio_ns = stat_blkio_ticks(dir) * (unsigned long long)tick_ns;
	status_switches(dir, t);
	t->pid = pid;
	t->tid = tid;
	t->role = role;
	a->n++;
}

/* every thread of PID; the main thread of this process is the feeder */
static void sample_proc(struct acct *a, const struct run *r, pid_t pid,
			const char *role)
{
	char dir[48];
	struct dirent *e;
	DIR *d;
	int w;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		const char *ro = role;

		if (tid <= 0)
			continue;
		if (pid == getpid() && tid == pid)
			ro = "feeder";
		else if (tid == r->holder_tid)
			ro = "holder";
		for (w = 0; r->o->threads && w < r->nworkers; w++)
			if (tid == r->worker_tid[w])
				ro = "worker";
		sample_task(a, pid, tid, ro);
	}
	closedir(d);
}

/* The host's CPU time not idle (/proc/stat's first line: user, nice, system,
 * irq, softirq, steal), in ns: with the job's own, what the rest of the host
 * took meanwhile. */
static unsigned long long host_busy_ns(void)
{
	unsigned long long v[8] = { 0 };
	char buf[256];

	if (read_line("/proc/stat", buf, sizeof(buf)) ||
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return 0;
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) *
	       (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK));
}

/* Into @a: the feeding threads now (@a is the run's start or its end). */
void acct_sample(struct run *r, struct acct *a)
{
	int w;

	a->n = 0;
	a->delayacct = delayacct_on();
	a->host_busy_ns = host_busy_ns();
	a->mono_ns = mono_ns();
	sample_proc(a, r, getpid(), "other");
	for (w = 0; !r->o->threads && w < r->nworkers; w++)
		if (r->worker_pid[w] > 0)
			sample_proc(a, r, r->worker_pid[w], "worker");
	for (w = 0; w < r->nhogs; w++)
		if (r->hog_pid[w] > 0)
			sample_proc(a, r, r->hog_pid[w], "hog");
	a->sampled = true;
}

/* counters only grow: a later value below an earlier one is no figure */
static unsigned long long sub(unsigned long long b, unsigned long long a)
{
	return b >= a ? b - a : 0;
}

/* what a thread of @end did since @start (all of its life if it came later) */
static struct acct_thread since(const struct acct_thread *e, const struct acct *start)
{
	struct acct_thread t = *e;
	int i;

	for (i = 0; i < start->n; i++) {
		const struct acct_thread *s = &start->t[i];

		if (s->tid != e->tid)
			continue;
		t.cpu_ns = sub(t.cpu_ns, s->cpu_ns);
		t.run_ns = sub(t.run_ns, s->run_ns);
		t.blkio_ns = sub(t.blkio_ns, s->blkio_ns);
		t.vol = sub(t.vol, s->vol);
		t.invol = sub(t.invol, s->invol);
		break;
	}
	return t;
}

/* The threads' figures over the feeder's loop: from @start to @end. */
void acct_json(FILE *f, const struct acct *start, const struct acct *end)
{
	int i;

	fprintf(f, "  \"accounting\": {\"delayacct\": %s, \"cpus\": %ld, "
		"\"wall_ns\": %llu, \"host_busy_ns\": %llu, \"threads\": [",
		start->delayacct && end->delayacct ? "true" : "false",
		sysconf(_SC_NPROCESSORS_ONLN),
		(unsigned long long)(end->mono_ns - start->mono_ns),
		sub(end->host_busy_ns, start->host_busy_ns));
	for (i = 0; i < end->n; i++) {
		const struct acct_thread d = since(&end->t[i], start), *t = &d;

		fprintf(f, "%s\n    {\"pid\": %d, \"tid\": %d, \"comm\": \"%s\", "
			"\"role\": \"%s\", "
			"\"cpu_ns\": %llu, \"run_delay_ns\": %llu, "
			"\"blkio_ns\": %llu, \"vol\": %llu, \"invol\": %llu}",
			i ? "," : "", (int)t->pid, (int)t->tid, t->comm, t->role,
			t->cpu_ns, t->run_ns, t->blkio_ns, t->vol, t->invol);
	}
	fprintf(f, "]},\n");
}
