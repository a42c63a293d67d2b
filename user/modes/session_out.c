// SPDX-License-Identifier: GPL-2.0
/* A session's outputs (the engine or the record dump, the recording, the
 * reports) and the replay of a recording through them. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probes/discovery.h"
#include "modes/dump.h"
#include "engine/engine_obs.h"
#include "probes/log.h"
#include "host/nvml.h"
#include "util/outfile.h"
#include "views/progress.h"
#include "probes/pyframes.h"
#include "stacks/symbolize.h"
#include "stream/recording.h"
#include "modes/feed.h"
#include "modes/session_int.h"
#include "views/html.h"
#include "views/timeline_build.h"
#include "probes/tracer.h"

/* --perfetto: the timeline sees each record as the engine does. */
static void to_timeline(const struct ig_hdr *rec, void *ctx)
{
	struct session *s = ctx;

	ig_timeline_record(s->tlb, rec);
	ig_engine_feed(s->engine, rec);
}

static void to_dump(const struct ig_hdr *rec, void *ctx)
{
	ig_dump_record(ctx, rec);
}

/* An output opened but never written (the run or the read failed first). */
static void abandon_output(FILE *f, const char *path)
{
	if (!f)
		return;
	if (f != stdout) {
		ig_outfile_discard(path, fileno(f));
		fclose(f);
	}
}

/* --folded: the idle time's stacks, the cause as root frame. */
static int write_folded(struct session *s, const struct ig_output_opts *out)
{
	FILE *f = s->folded;
	int err;

	if (!f)
		return 0;
	s->folded = NULL;
	err = ig_engine_folded(s->engine, f);
	if (err && !ferror(f)) {
		ig_err("cannot make the folded stacks: %s", strerror(-err));
		abandon_output(f, out->folded_path);
		return 1;
	}
	return ig_session_close_output(f, out->folded_path, out->folded_path, -err);
}

/* --html: the page, from the engine at its end and what its observer saw. */
static int write_html(struct session *s, const struct ig_output_opts *out)
{
	struct ig_html_stats st;
	FILE *f = s->html_f;
	int err;

	if (!f)
		return 0;
	s->html_f = NULL;
	ig_engine_finish(s->engine);
	err = ig_html_write(s->html, s->engine, f, &st);
	if (err && !ferror(f)) {
		ig_err("cannot make the HTML page: %s", strerror(-err));
		abandon_output(f, out->html_path);
		return 1;
	}
	ig_debug("%s: %llu bytes, %llu of data, %u GPUs", out->html_path,
		 (unsigned long long)st.bytes, (unsigned long long)st.data_bytes, st.devices);
	if (st.devices_left_out)
		ig_warn("%s: %u GPUs left out of the page", out->html_path, st.devices_left_out);
	return ig_session_close_output(f, strcmp(out->html_path, "-") ? out->html_path :
				       "the HTML page to standard output", out->html_path, -err);
}

int ig_session_write_reports(struct session *s, const struct ig_output_opts *out)
{
	bool json_stdout = out->json_path && !strcmp(out->json_path, "-");
	bool pf_stdout = out->perfetto_path && !strcmp(out->perfetto_path, "-");
	bool html_stdout = out->html_path && !strcmp(out->html_path, "-");
	int rc = 0, err;
	FILE *f = s->json;

	if (!out->quiet && !json_stdout && !pf_stdout && !html_stdout) {
		err = ig_engine_report_text(s->engine, stdout);
		if (err && !ferror(stdout)) {
			ig_err("cannot make the report: %s", strerror(-err));
			rc = 1;
		}
		rc |= ig_session_close_output(stdout, "the report to standard output", NULL, -err);
	}
	if (f) {
		s->json = NULL;
		err = ig_engine_report_json(s->engine, f);
		if (err && !ferror(f)) {
			ig_err("cannot make the JSON report: %s", strerror(-err));
			abandon_output(f, out->json_path);
			rc = 1;
		} else {
			rc |= ig_session_close_output(f, json_stdout ?
					"the JSON report to standard output" : out->json_path,
					out->json_path, -err);
		}
	}
	rc |= write_folded(s, out) | ig_session_close_timeline(s, out);
	return rc | write_html(s, out);
}

int ig_session_close_timeline(struct session *s, const struct ig_output_opts *out)
{
	struct ig_perfetto_stats st;
	int err;

	if (!s->tlb)
		return 0;
	ig_engine_finish(s->engine);
	ig_timeline_estimates(s->tlb, s->engine);
	ig_timeline_steps(s->tlb, s->engine);
	err = ig_timeline_close(s->tlb, &st);
	s->tlb = NULL;
	if (err) {
		ig_err("cannot write %s: %s", out->perfetto_path, strerror(-err));
		return 1;
	}
	ig_debug("%s: %llu bytes, %llu slices, %llu instants, %llu flows", out->perfetto_path,
		 (unsigned long long)st.bytes, (unsigned long long)st.slices,
		 (unsigned long long)st.instants, (unsigned long long)st.flows);
	if (st.flows_left_out)
		ig_warn("%s: %llu waits for peers drawn without their flow (at most %d)",
			out->perfetto_path, (unsigned long long)st.flows_left_out,
			IG_TIMELINE_PEER_FLOWS);
	return 0;
}

/* Up front, as the recording: a bad path fails before the run. */
static int open_timeline(struct session *s, const char *path)
{
	int err = ig_timeline_open(&s->tlb, path);

	if (err) {
		ig_err("cannot write %s: %s", path, ig_outfile_strerror(err));
		return 1;
	}
	ig_timeline_observer(s->tlb, &s->obs[s->nobs++]);
	return 0;
}

/* The engine has one observer: several views see it through these. */
static void tee_span(void *ctx, const struct ig_obs_span *sp)
{
	struct session *s = ctx;
	unsigned int i;

	for (i = 0; i < s->nobs; i++)
		s->obs[i].span(s->obs[i].ctx, sp);
}

static void tee_estimate(void *ctx, const struct ig_obs_estimate *x)
{
	struct session *s = ctx;
	unsigned int i;

	for (i = 0; i < s->nobs; i++)
		if (s->obs[i].estimate)
			s->obs[i].estimate(s->obs[i].ctx, x);
}

static void observe(struct session *s)
{
	struct ig_engine_obs tee = { .span = tee_span, .ctx = s };
	unsigned int i;

	if (s->nobs == 1) {
		ig_engine_observe(s->engine, &s->obs[0]);
		return;
	}
	for (i = 0; i < s->nobs; i++)
		if (s->obs[i].estimate)
			tee.estimate = tee_estimate;
	if (s->nobs)
		ig_engine_observe(s->engine, &tee);
}

/* Up front, as the recording: a bad --json path fails before the run. */
static int open_out(FILE **out, const char *path)
{
	int fd;

	if (!strcmp(path, "-")) {
		*out = stdout;
		return 0;
	}
	fd = ig_outfile_open(path);
	if (fd < 0) {
		ig_err("cannot write %s: %s", path, ig_outfile_strerror(fd));
		return 1;
	}
	*out = fdopen(fd, "w");
	if (!*out) {
		ig_err("cannot write %s: %s", path, strerror(errno));
		close(fd);
		return 1;
	}
	return 0;
}

int ig_session_setup_outputs(struct session *s, const struct ig_output_opts *out,
			 const char *record_path)
{
	s->engine = ig_engine_new(&out->engine);
	if (!s->engine) {
		ig_err("cannot start the analysis: %s", strerror(errno));
		return 1;
	}
	if (out->perfetto_path && !out->dump && open_timeline(s, out->perfetto_path))
		return 1;
	if (out->html_path && !out->dump) {
		s->html_path = out->html_path;
		if (open_out(&s->html_f, out->html_path))
			return 1;
		if (!(s->html = ig_html_new())) {
			ig_err("out of memory");
			return 1;
		}
		ig_html_observer(s->html, &s->obs[s->nobs++]);
	}
	if (out->obs.span)
		s->obs[s->nobs++] = out->obs;
	observe(s);
	/* a live run: its periods and the run so far (session_days.c) */
	s->reorder = out->dump ? ig_feed_new(false, to_dump, stdout) :
		     s->o ? ig_feed_new(true, ig_session_days_feed, s) :
		     s->tlb ? ig_feed_new(false, to_timeline, s) : ig_feed_engine(false, s->engine);
	if (!s->reorder) {
		ig_err("out of memory");
		return 1;
	}
	if (record_path) {
		s->writer = s->o && s->o->output_max_bytes ?
			    ig_rec_writer_open_pieces(record_path, s->o->output_max_bytes,
						      s->o->output_files) :
			    ig_rec_writer_open(record_path);
		if (!s->writer) {
			ig_err("cannot write recording %s: %s", record_path,
			       ig_outfile_strerror(-errno));
			return 1;
		}
	}
	s->json_path = out->json_path;
	s->folded_path = out->folded_path;
	if (out->json_path && !out->dump && open_out(&s->json, out->json_path))
		return 1;
	if (out->folded_path && !out->dump && open_out(&s->folded, out->folded_path))
		return 1;
	return 0;
}

void ig_session_teardown(struct session *s)
{
	/* still open: never written, the run or the read failed first */
	abandon_output(s->json, s->json_path);
	ig_timeline_abandon(s->tlb);
	abandon_output(s->folded, s->folded_path);
	abandon_output(s->html_f, s->html_path);
	ig_html_free(s->html);
	ig_capture_close(&s->cap);
	ig_reorder_free(s->reorder);
	ig_engine_free(s->engine);
	ig_nvml_close(s->nvml);
}

struct replay {
	struct ig_reorder *reorder;
	bool oom;
	struct ig_progress prog;
	uint64_t bytes, records;
	/* pieces of one recording read in order: what a later piece
	 * restates at its start, and an earlier one's END, are left out */
	bool later, last;
	uint64_t nth, skip;	/* records of this piece so far, to leave out */
};

static int replay_cb(const struct ig_hdr *rec, void *ctx)
{
	struct replay *r = ctx;

	r->nth++;
	if (r->later && r->nth == 1 && rec->type == IG_REC_META &&
	    rec->size >= sizeof(struct ig_meta))
		r->skip = 1 + ((const struct ig_meta *)rec)->start_nrec;
	if (r->nth <= r->skip || (!r->last && rec->type == IG_REC_END))
		return 0;

	if (ig_reorder_push(r->reorder, rec)) {
		r->oom = true;
		return -ENOMEM;
	}
	/* the records' bytes: the file's, but for the block headers */
	r->bytes += rec->size;
	ig_progress_update(&r->prog, r->bytes, ++r->records);
	return 0;
}

/* One recording, or the pieces of one in order, into the session's
 * reorder stage; 0, or 1 after its line. */
static int replay_one(struct replay *r, const char *path, bool partial, bool later,
		      bool last)
{
	struct ig_read_result res;
	struct stat sb;
	int err;

	r->later = later;
	r->last = last;
	r->nth = r->skip = 0;
	ig_progress_init(&r->prog, STDERR_FILENO, path,
			 stat(path, &sb) ? 0 : (uint64_t)sb.st_size);
	err = ig_recording_read(path, partial, replay_cb, r, &res);
	ig_progress_end(&r->prog);
	if (err) {
		ig_err("%s%s", res.error, partial || r->oom || !res.records ? "" :
		       err == -EBADMSG ? "; --partial leaves the corrupt part out" :
		       "; --partial analyses what is there");
		return 1;
	}
	if (res.skipped_blocks)
		ig_warn("%s: left out %zu corrupt block%s (%zu bytes)", path,
			res.skipped_blocks, res.skipped_blocks == 1 ? "" : "s",
			res.skipped_bytes);
	if (!res.complete)
		ig_warn("%s; analysing the %zu records before it", res.error, res.records);
	return 0;
}

static int first_meta(const struct ig_hdr *rec, void *ctx)
{
	struct ig_meta *m = ctx;

	if (rec->type == IG_REC_META)
		memcpy(m, rec, rec->size < sizeof(*m) ? rec->size : sizeof(*m));
	return -ECANCELED;	/* the first record is all it takes */
}

struct piece {
	const char *path;
	struct ig_meta m;
};

static int by_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->m.piece < y->m.piece ? -1 : x->m.piece > y->m.piece;
}

/* Recordings @paths, in order, replayed as one through the outputs. */
static int replay_paths(const char *const *paths, int n, bool partial,
			const struct ig_output_opts *out)
{
	struct session s = {};
	struct replay r;
	int i, rc = 1;

	/* A batch run that ends soon: the heap the engine's buffers free is
	 * kept for their next growth, not given back at each shrink and
	 * faulted in again (glibc's 128 KiB trim threshold moves with the
	 * layout: up to 2 faults per thousand records, a sixth of the time). */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	if (ig_session_setup_outputs(&s, out, NULL))
		goto out;
	memset(&r, 0, sizeof(r));
	r.reorder = s.reorder;
	for (i = 0; i < n; i++)
		if (replay_one(&r, paths[i], partial, i > 0, i == n - 1))
			goto out;
	ig_reorder_flush(s.reorder);
	ig_engine_add_late(s.engine, ig_reorder_late(s.reorder));
	if (out->dump) {
		rc = ig_session_close_output(stdout, "the records to standard output", NULL, 0);
		goto out;
	}
	ig_engine_finish(s.engine);
	rc = ig_session_write_reports(&s, out);
out:
	ig_session_teardown(&s);
	return rc;
}

int ig_session_report_pieces(const char *const *paths, int n, bool partial,
			     const struct ig_output_opts *out)
{
	struct piece *v = calloc(n, sizeof(*v));
	const char **sorted = calloc(n, sizeof(*sorted));
	struct ig_read_result res;
	int i, j, rc = -1, same = 0;

	if (!v || !sorted) {
		free(v);
		free(sorted);
		ig_err("out of memory");
		return 1;
	}
	for (i = 0; i < n; i++) {
		v[i].path = paths[i];
		ig_recording_read(paths[i], true, first_meta, &v[i].m, &res);
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			same += v[i].m.run_id && v[i].m.run_id == v[j].m.run_id;
	if (!same)
		goto out;	/* recordings of several hosts */
	rc = 2;
	for (i = 1; i < n; i++)
		if (!v[i].m.run_id || v[i].m.run_id != v[0].m.run_id) {
			ig_err("%s and %s are not pieces of one recording: give the pieces of one "
			       "alone, or one recording per host", paths[0], paths[i]);
			goto out;
		}
	qsort(v, n, sizeof(*v), by_piece);
	for (i = 1; i < n; i++)
		if (v[i].m.piece != v[i - 1].m.piece + 1) {
			ig_err("%s and %s are pieces %u and %u of one recording: %s; give "
			       "pieces that follow one another", v[i - 1].path, v[i].path,
			       v[i - 1].m.piece, v[i].m.piece, v[i].m.piece == v[i - 1].m.piece ?
			       "the same piece twice" : "the pieces between them are missing");
			goto out;
		}
	for (i = 0; i < n; i++)
		sorted[i] = v[i].path;
	rc = replay_paths(sorted, n, partial, out);
out:
	free(sorted);
	free(v);
	return rc;
}

int ig_session_report(const char *path, bool partial,
		      const struct ig_output_opts *out)
{
	return replay_paths(&path, 1, partial, out);
}
