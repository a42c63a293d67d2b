// SPDX-License-Identifier: GPL-2.0
/* Recordings of several hosts in one analysis (docs/design.md §4.9,
 * §7.4): two hosts' recordings of one 4-rank job, the second's clock
 * 1000.005 s ahead and its pids the same as the first's, merged: the
 * offset is recovered from the collective ends, the answers are those of
 * the 4 ranks traced together, each rank keeps its host and pid, and
 * what cannot be aligned or read is refused. */
#include <unistd.h>
#include "test_engine_util.h"
#include "modes/report_merge.h"
#include "stream/recording.h"

#define L	IG_STREAM_LEGACY
#define ID	0x1234abcdULL
#define NR	4
#define K	5
#define SHIFT	(1000ULL * 1000 * MS + 5 * MS)

static char dir[] = "/tmp/test_merge.XXXXXX";

static void t_nccl(struct tstream *s, uint32_t pid, uint64_t ts, unsigned int kind,
		   int rank, uint64_t seq)
{
	union ig_rec *r = ts_new(s, IG_REC_NCCL, sizeof(struct ig_nccl), pid, pid, ts);

	r->nc.kind = kind;
	r->nc.api = kind == IG_NC_COMM ? IG_NA_ncclCommInitRank : IG_NA_ncclAllReduce;
	r->nc.comm = 0x5000 + pid;
	r->nc.id = ID;
	r->nc.rank = rank;
	r->nc.nranks = NR;
	r->nc.seq = seq;
	r->nc.stream = L;
	r->nc.count = 1 << 20;
	r->nc.dtype = 7;
}

/* Ranks @first .. @last of the job on a host named @host whose clock reads
 * @off more; its pids are 100 + the rank's index on the host.  Rank 2
 * reads from storage for 40 ms before each all-reduce.  @nccl false: the
 * same host's work without collectives. */
static void job(struct tstream *s, const char *host, int first, int last,
		uint64_t off, bool nccl)
{
	union ig_rec *m = ts_new(s, IG_REC_META, sizeof(struct ig_meta), 0, 0, off);
	uint64_t k, b;
	int r;

	m->mt.version = IG_FORMAT_VERSION;
	m->mt.ncpus = 2;
	m->mt.realtime_ns = 1700000000ULL * 1000 * MS;
	snprintf(m->mt.host, sizeof(m->mt.host), "%s", host);
	for (r = first; r <= last; r++) {
		union ig_rec *g;
		uint32_t pid = 100 + r - first;

		t_task(s, off, pid, pid, 1, "trainer");
		g = ts_new(s, IG_REC_GPUMAP, sizeof(struct ig_gpumap), pid, pid, off);
		g->g.n = 1;
		g->g.dev[0] = r - first;
		if (nccl)
			t_nccl(s, pid, off + 1 * MS, IG_NC_COMM, r, 0);
	}
	for (k = 0; k < K; k++) {
		b = off + 10 * MS + k * 100 * MS;
		for (r = first; r <= last; r++) {
			uint32_t pid = 100 + r - first;
			uint64_t t = r == 2 ? b + 53 * MS : b + 12 * MS, end = b + 60 * MS;

			t_submit(s, pid, pid, b + 1 * MS, L);
			t_sync(s, pid, pid, b + 1 * MS + 10 * US, b + 11 * MS,
			       b + 11 * MS + 10 * US, L, b + 1 * MS);
			if (r == 2)
				OFF(s, .tid = pid, .t_off = b + 12 * MS, .t_wake = b + 52 * MS,
				    .t_on = b + 52 * MS, .reason = IG_R_STORAGE,
				    .flags = IG_F_IOWAIT, .name = "shard.bin", .cpu = 1);
			if (nccl)
				t_nccl(s, pid, t, IG_NC_COLL, r, k + 1);
			t_submit(s, pid, pid, t + 10 * US, L);
			t_sync(s, pid, pid, t + 20 * US, end - 10 * US, end, L, t + 10 * US);
		}
	}
	t_end(s, off + 600 * MS);
}

/* A host whose clock reads @shift more at 0 and runs @d faster: every
 * time the stream's records carry, moved there. */
static uint64_t on_clock(uint64_t t, uint64_t shift, double d)
{
	return t ? shift + t + (uint64_t)((double)t * d) : 0;
}

static void drift_stream(struct tstream *s, uint64_t shift, double d)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		union ig_rec *r = &s->r[i];

		r->h.ts = on_clock(r->h.ts, shift, d) ?: shift;	/* 0: the start */
		if (r->h.type == IG_REC_OFFCPU) {
			r->o.t_off = on_clock(r->o.t_off, shift, d);
			r->o.t_wake = on_clock(r->o.t_wake, shift, d);
		} else if (r->h.type == IG_REC_CUDA) {
			r->c.t_begin = on_clock(r->c.t_begin, shift, d);
			r->c.t_wake = on_clock(r->c.t_wake, shift, d);
			r->c.last_submit = on_clock(r->c.last_submit, shift, d);
		}
	}
}

/* The stream sorted, as a recording file. */
static char *write_rec(struct tstream *s, const char *name)
{
	static char paths[8][128];
	static int np;
	char *path = paths[np++ % 8];
	struct ig_rec_writer *w;
	size_t i, j, *idx = malloc(s->n * sizeof(*idx));

	assert_non_null(idx);
	snprintf(path, 128, "%s/%s", dir, name);
	w = ig_rec_writer_open(path);
	assert_non_null(w);
	for (i = 0; i < s->n; i++) {
		for (j = i; j > 0 && s->r[idx[j - 1]].h.ts > s->r[i].h.ts; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	for (i = 0; i < s->n; i++)
		assert_int_equal(ig_rec_writer_put(w, &s->r[idx[i]].h), 0);
	assert_int_equal(ig_rec_writer_close(w), 0);
	free(idx);
	ts_free(s);
	return path;
}

static struct json_object *merged(const char **paths, int n,
				  const struct ig_clock_offset *offs, int noffs, int *rc)
{
	char json[160];
	struct ig_output_opts o = { .quiet = true, .json_path = json,
				    .engine = { .sz = sizeof(o.engine) } };
	struct json_object *j;

	snprintf(json, sizeof(json), "%s/merged.json", dir);
	unlink(json);
	*rc = ig_merge_report(paths, n, false, offs, noffs, &o);
	j = json_object_from_file(json);
	unlink(json);
	return j;
}

static struct json_object *rank_of(struct json_object *j, int rank)
{
	struct json_object *a = jpath(j, "collectives.ranks");
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++)
		if (ji(json_object_array_get_idx(a, i), "rank") == rank)
			return json_object_array_get_idx(a, i);
	fail_msg("no rank %d", rank);
	return NULL;
}

static void test_two_hosts(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *one, *j, *st, *ca, *devs;
	const char *paths[2];
	int r, rc;

	(void)state;
	/* the 4 ranks traced together: the answer to match */
	job(&s, "nodeA", 0, 3, 0, true);
	ts_feed(&s, e);
	one = report(e);
	ig_engine_free(e);

	job(&s, "nodeA", 0, 1, 0, true);
	paths[0] = write_rec(&s, "a.igrec");
	job(&s, "nodeB", 2, 3, SHIFT, true);
	paths[1] = write_rec(&s, "b.igrec");
	j = merged(paths, 2, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(j);

	ca = jpath(j, "clock_alignment");
	assert_int_equal(json_object_array_length(ca), 2);
	ca = json_object_array_get_idx(ca, 1);
	assert_string_equal(json_object_get_string(jpath(ca, "host")), "nodeB");
	assert_near(jd(ca, "offset_s"), -(double)SHIFT / 1e9, 1e-6);
	assert_near(jd(ca, "error_s"), 0, 1e-9);
	assert_int_equal(ji(ca, "collectives"), K);
	assert_int_equal(ji(ca, "pid_base"), 1 << 24);

	assert_int_equal(ji(j, "collectives.matched"), K);
	assert_int_equal(ji(j, "collectives.unmatched_calls"), 0);
	devs = jpath(j, "gpu.devices");
	assert_int_equal(json_object_array_length(devs), 4);
	assert_int_equal(ji(json_object_array_get_idx(devs, 2), "device"), 100);
	assert_int_equal(ji(json_object_array_get_idx(devs, 3), "device"), 101);

	st = json_object_array_get_idx(jpath(j, "stragglers"), 0);
	assert_non_null(st);
	assert_int_equal(ji(st, "rank"), 2);
	assert_int_equal(ji(st, "pid"), 100);
	assert_string_equal(json_object_get_string(jpath(st, "host")), "nodeB");
	assert_near(jd(st, "late_s"), jd(json_object_array_get_idx(jpath(one, "stragglers"), 0),
					 "late_s"), 1e-6);
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(st, "causes"), 0), "cause")), "storage");
	for (r = 0; r < NR; r++) {
		assert_near(jd(rank_of(j, r), "peer_wait_s"), jd(rank_of(one, r), "peer_wait_s"),
			    1e-6);
		assert_int_equal(ji(rank_of(j, r), "pid"), 100 + r % 2);
		assert_string_equal(json_object_get_string(jpath(rank_of(j, r), "host")),
				    r < 2 ? "nodeA" : "nodeB");
	}
	assert_near(jd(j, "gpu.peer_wait_s"), jd(one, "gpu.peer_wait_s"), 1e-6);
	assert_string_equal(json_object_get_string(jpath(j, "meta.host")), "nodeA,nodeB");
	assert_int_equal(ji(j, "meta.ncpus"), 4);
	json_object_put(j);
	json_object_put(one);
}

/* The second host's clock runs 50 ppm fast as well: the drift is found,
 * the answers stay those of the ranks traced together. */
static void test_drift(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *one, *j, *ca;
	const char *paths[2];
	int r, rc;

	(void)state;
	job(&s, "nodeA", 0, 3, 0, true);
	ts_feed(&s, e);
	one = report(e);
	ig_engine_free(e);

	job(&s, "nodeA", 0, 1, 0, true);
	paths[0] = write_rec(&s, "ad.igrec");
	job(&s, "nodeB", 2, 3, 0, true);
	drift_stream(&s, SHIFT, 50e-6);
	paths[1] = write_rec(&s, "bd.igrec");
	j = merged(paths, 2, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	ca = json_object_array_get_idx(jpath(j, "clock_alignment"), 1);
	assert_near(jd(ca, "offset_s"), -(double)SHIFT / 1e9, 1e-6);
	assert_near(jd(ca, "drift_ppm"), -50.0 / (1 + 50e-6), 0.01);
	assert_true(jd(ca, "error_s") < 1e-6);
	assert_int_equal(ji(json_object_array_get_idx(jpath(j, "stragglers"), 0), "rank"), 2);
	for (r = 0; r < NR; r++)
		assert_near(jd(rank_of(j, r), "peer_wait_s"), jd(rank_of(one, r), "peer_wait_s"),
			    1e-6);
	json_object_put(j);
	json_object_put(one);
}

/* Three hosts (ranks 0, 1-2, 3), each clock its own: each aligned on the
 * first, each host's processes and GPUs its own. */
static void test_three_hosts(void **state)
{
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *one, *j, *ca, *devs;
	const char *paths[3];
	int r, rc;

	(void)state;
	job(&s, "nodeA", 0, 3, 0, true);
	ts_feed(&s, e);
	one = report(e);
	ig_engine_free(e);

	job(&s, "nodeA", 0, 0, 0, true);
	paths[0] = write_rec(&s, "a4.igrec");
	job(&s, "nodeB", 1, 2, SHIFT, true);
	paths[1] = write_rec(&s, "b4.igrec");
	job(&s, "nodeC", 3, 3, 7 * MS, true);
	paths[2] = write_rec(&s, "c4.igrec");
	j = merged(paths, 3, NULL, 0, &rc);
	assert_int_equal(rc, 0);
	ca = jpath(j, "clock_alignment");
	assert_int_equal(json_object_array_length(ca), 3);
	assert_near(jd(json_object_array_get_idx(ca, 1), "offset_s"), -(double)SHIFT / 1e9, 1e-6);
	assert_near(jd(json_object_array_get_idx(ca, 2), "offset_s"), -0.007, 1e-6);
	assert_int_equal(ji(json_object_array_get_idx(ca, 2), "pid_base"), 2 << 24);
	devs = jpath(j, "gpu.devices");
	assert_int_equal(json_object_array_length(devs), 4);
	assert_int_equal(ji(json_object_array_get_idx(devs, 0), "device"), 0);
	assert_int_equal(ji(json_object_array_get_idx(devs, 1), "device"), 100);
	assert_int_equal(ji(json_object_array_get_idx(devs, 2), "device"), 101);
	assert_int_equal(ji(json_object_array_get_idx(devs, 3), "device"), 200);
	assert_int_equal(ji(json_object_array_get_idx(jpath(j, "stragglers"), 0), "rank"), 2);
	assert_string_equal(json_object_get_string(jpath(json_object_array_get_idx(
		jpath(j, "stragglers"), 0), "host")), "nodeB");
	for (r = 0; r < NR; r++)
		assert_near(jd(rank_of(j, r), "peer_wait_s"), jd(rank_of(one, r), "peer_wait_s"),
			    1e-6);
	assert_int_equal(ji(j, "meta.ncpus"), 6);
	json_object_put(j);
	json_object_put(one);
}

/* No collective to align on: refused, nothing written, unless the offset
 * is given. */
static void test_unaligned(void **state)
{
	struct tstream s = { 0 };
	struct ig_clock_offset off = { .name = "nodeC", .seconds = -(double)SHIFT / 1e9 };
	struct json_object *j;
	const char *paths[2];
	int rc;

	(void)state;
	job(&s, "nodeA", 0, 1, 0, true);
	paths[0] = write_rec(&s, "a2.igrec");
	job(&s, "nodeC", 2, 3, SHIFT, false);
	paths[1] = write_rec(&s, "c.igrec");
	j = merged(paths, 2, NULL, 0, &rc);
	assert_int_equal(rc, 1);
	assert_null(j);
	j = merged(paths, 2, &off, 1, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(j);
	assert_true(json_object_get_boolean(jpath(json_object_array_get_idx(
		jpath(j, "clock_alignment"), 1), "given")));
	assert_near(jd(json_object_array_get_idx(jpath(j, "clock_alignment"), 1), "offset_s"),
		    off.seconds, 1e-9);
	json_object_put(j);
	/* an offset for no recording, or for the reference: bad usage */
	snprintf(off.name, sizeof(off.name), "nodeZ");
	j = merged(paths, 2, &off, 1, &rc);
	assert_int_equal(rc, 2);
	assert_null(j);
	snprintf(off.name, sizeof(off.name), "nodeA");
	j = merged(paths, 2, &off, 1, &rc);
	assert_int_equal(rc, 2);
	assert_null(j);
	/* the same recording twice */
	paths[1] = paths[0];
	j = merged(paths, 2, NULL, 0, &rc);
	assert_int_equal(rc, 1);
	assert_null(j);
}

/* A truncated recording among them: refused before anything is written. */
static void test_truncated(void **state)
{
	struct tstream s = { 0 };
	struct json_object *j;
	const char *paths[2];
	int rc;
	FILE *f;
	long n;

	(void)state;
	job(&s, "nodeA", 0, 1, 0, true);
	paths[0] = write_rec(&s, "a3.igrec");
	job(&s, "nodeB", 2, 3, SHIFT, true);
	paths[1] = write_rec(&s, "b3.igrec");
	f = fopen(paths[1], "r+");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	assert_int_equal(ftruncate(fileno(f), n / 2), 0);
	fclose(f);
	j = merged(paths, 2, NULL, 0, &rc);
	assert_int_equal(rc, 1);
	assert_null(j);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_hosts),
		cmocka_unit_test(test_drift),
		cmocka_unit_test(test_three_hosts),
		cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
