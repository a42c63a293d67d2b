// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus registry (metrics.c, metrics_text.c): window reports in
 * the JSON report's shape folded into counters by label set; label sets
 * shared only as far as the processes agree; label escaping; stale and
 * over-limit series dropped and counted; --label checks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "util/escape.h"
#include "util/hist.h"
#include "views/metrics.h"
#include "views/metrics_impl.h"

/* A window: processes "pid:device" (device -1: not on a GPU), one device
 * entry per device used with the given seconds, and the causes. */
static struct json_object *window(const char *procs_json,
				  const char *devices_json,
				  const char *causes_json)
{
	char buf[4096];
	struct json_object *o;

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"duration_s\": 10.0, \"complete\": true,"
		 " \"processes\": %s,"
		 " \"gpu\": {\"devices\": %s, \"gap_histogram\": {"
		 "  \"le_s\": [], \"counts\": [0,0,0,1,2,2,2,2,2,2,2,2,2,2,2,3],"
		 "  \"count\": 4, \"sum_s\": 12.5, \"exact\": true}},"
		 " \"causes\": %s,"
		 " \"unresolved_causes\": [{\"cause\": \"host_compute\", \"seconds\": 0.5}],"
		 " \"estimated_causes\": [{\"cause\": \"gil\", \"seconds\": 0.25}],"
		 " \"estimate_method\": \"device\","
		 " \"events\": {\"dropped\": 7}}",
		 procs_json, devices_json, causes_json);
	o = json_tokener_parse(buf);
	assert_non_null(o);
	return o;
}

#define ONE_PROC "[{\"pid\": 10, \"device\": 0}, {\"pid\": 11, \"device\": null}]"
#define ONE_DEV "[{\"device\": 0, \"busy_s\": 2.0, \"idle_s\": 7.0, \"unresolved_s\": 1.0," \
	" \"unresolved_host_bound_s\": 0.75, \"unresolved_gpu_bound_s\": 0.25, \"unresolved_open_s\": 0.0}]"
#define CAUSES "[{\"cause\": \"storage\", \"seconds\": 6.0}, {\"cause\": \"lock\", \"seconds\": 1.0}]"

static struct ig_pid_identity pod_id(pid_t pid, const char *rank)
{
	struct ig_pid_identity p = { .pid = pid };

	strcpy(p.id.pod, "trainer-0");
	strcpy(p.id.namespace, "ml");
	strcpy(p.id.pod_uid, "1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b");
	strcpy(p.id.rank, rank);
	strcpy(p.id.comm, "python3");
	strcpy(p.id.cuda_visible, "GPU-aaaa-1,GPU-bbbb-2");
	/* the runtime gave the container these GPUs (self = 0): the
	 * process's UUIDs stand */
	strcpy(p.id.nvidia_visible, "GPU-aaaa-1,GPU-bbbb-2");
	return p;
}

static char *render(struct ig_metrics *m)
{
	char *buf;
	size_t len;

	assert_int_equal(ig_metrics_render(m, &buf, &len), 0);
	assert_int_equal(strlen(buf), len);
	return buf;
}

static void has(const char *text, const char *line)
{
	if (!strstr(text, line)) {
		print_error("missing: %s\nin:\n%s\n", line, text);
		fail();
	}
}

static void hasnt(const char *text, const char *part)
{
	if (strstr(text, part)) {
		print_error("unexpected: %s\nin:\n%s\n", part, text);
		fail();
	}
}

#define LBL "UUID=\"GPU-aaaa-1\",namespace=\"ml\",pod=\"trainer-0\"," \
	"pod_uid=\"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b\",rank=\"0\",comm=\"python3\""

/* A window's part of a gap that had not ended when it stopped waiting
 * (docs/design.md §7.10): its own state, idle_open, shown once a window
 * counted some, and summed on like the others; never a cause. */
#define OPEN_DEV "[{\"device\": 0, \"busy_s\": 2.0, \"idle_s\": 7.0, \"idle_open_s\": 0.5," \
	" \"unresolved_s\": 1.0, \"unresolved_host_bound_s\": 1.0, \"unresolved_gpu_bound_s\": 0.0," \
	" \"unresolved_open_s\": 0.0}]"

static void test_idle_open(void **state)
{
	struct ig_metrics_opts o = { .sz = sizeof(o), .version = "0.1" };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct ig_pid_identity ids[] = { pod_id(10, "0") };
	struct json_object *w = window(ONE_PROC, ONE_DEV, CAUSES);
	struct json_object *wo = window(ONE_PROC, OPEN_DEV, CAUSES);
	char *t;

	(void)state;
	assert_non_null(m);
	assert_int_equal(ig_metrics_add_window(m, w, ids, 1), 0);
	t = render(m);
	hasnt(t, "state=\"idle_open\"");
	free(t);
	assert_int_equal(ig_metrics_add_window(m, wo, ids, 1), 0);
	assert_int_equal(ig_metrics_add_window(m, wo, ids, 1), 0);
	t = render(m);
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",state=\"idle_open\"} 1\n");
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",state=\"idle\"} 21\n");
	hasnt(t, "cause=\"idle_open\"");
	free(t);
	/* a window without any keeps the series, at its sum */
	assert_int_equal(ig_metrics_add_window(m, w, ids, 1), 0);
	t = render(m);
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",state=\"idle_open\"} 1\n");
	free(t);
	json_object_put(w);
	json_object_put(wo);
	ig_metrics_free(m);
}

static void test_one_window_and_sum(void **state)
{
	const char *const labels[] = { "cluster=eu-1", "team=a\"b" };
	struct ig_metrics_opts o = { .sz = sizeof(o), .labels = labels,
				     .nlabels = 2, .version = "0.1" };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct ig_pid_identity ids[] = { pod_id(10, "0") };
	struct json_object *w = window(ONE_PROC, ONE_DEV, CAUSES);
	char *t;

	(void)state;
	assert_non_null(m);
	assert_int_equal(ig_metrics_add_window(m, w, ids, 1), 0);
	assert_int_equal(ig_metrics_add_window(m, w, ids, 1), 0);
	t = render(m);
	has(t, "# TYPE idlegap_gpu_seconds_total counter\n");
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",state=\"idle\"} 14\n");
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",state=\"busy\"} 4\n");
	/* unresolved split by what the evidence shows, over two windows */
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",state=\"unresolved_host_bound\"} 1.5\n");
	has(t, "\nidlegap_gpu_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",state=\"unresolved_gpu_bound\"} 0.5\n");
	has(t, "\nidlegap_gpu_idle_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",cause=\"storage\"} 12\n");
	has(t, "\nidlegap_gpu_unresolved_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",cause=\"host_compute\"} 1\n");
	/* estimated idle: its own series, never in the proven one */
	has(t, "# TYPE idlegap_gpu_estimated_idle_seconds_total counter\n");
	/* and the method that gave it (the GPU's counters here) */
	has(t, "\nidlegap_gpu_estimated_idle_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",cause=\"gil\",method=\"device\"} 0.5\n");
	hasnt(t, "idlegap_gpu_idle_seconds_total{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\",cause=\"gil\"}");
	has(t, "# TYPE idlegap_gpu_gap_seconds histogram\n");
	has(t, ",le=\"0.001\"} 2\n");
	has(t, ",le=\"10\"} 6\n");
	has(t, ",le=\"+Inf\"} 8\n");
	has(t, "\nidlegap_gpu_gap_seconds_sum{" LBL ",cluster=\"eu-1\",team=\"a\\\"b\"} 25\n");
	has(t, "\nidlegap_windows_total{cluster=\"eu-1\",team=\"a\\\"b\"} 2\n");
	has(t, "\nidlegap_records_lost_total{cluster=\"eu-1\",team=\"a\\\"b\"} 14\n");
	has(t, "\nidlegap_observed_seconds_total{cluster=\"eu-1\",team=\"a\\\"b\"} 20\n");
	has(t, "\nidlegap_processes{cluster=\"eu-1\",team=\"a\\\"b\"} 1\n");
	has(t, "idlegap_build_info{cluster=\"eu-1\",team=\"a\\\"b\",version=\"0.1\"} 1\n");
	hasnt(t, "pid=");
	hasnt(t, "gpu=");	/* CUDA_VISIBLE_DEVICES gave UUIDs, not indexes */
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* A device whose estimate was refused for its width but whose bounds
 * stood (docs/design.md §4.10, "The bound apart"): the bound is no
 * estimated idle, so no estimated series comes of it. */
static void test_bound_alone(void **state)
{
	struct ig_metrics_opts o = { .sz = sizeof(o), .version = "0.1" };
	struct ig_metrics *m = ig_metrics_new(&o);
	/* as a report has it: the bound in "gpu" and its device, no
	 * estimated causes anywhere */
	struct json_object *w = json_tokener_parse(
		"{\"version\": 1, \"duration_s\": 10.0, \"complete\": true,"
		" \"processes\": " ONE_PROC ","
		" \"gpu\": {\"idle_estimated_s\": null, \"idle_at_least_s\": 0.9,"
		"  \"estimate_refused\": \"too wide\", \"estimated_causes\": [],"
		"  \"devices\": [{\"device\": 0, \"busy_s\": 2.0, \"idle_s\": 7.0,"
		"   \"unresolved_s\": 1.0, \"idle_estimated_s\": null,"
		"   \"idle_at_least_s\": 0.9, \"estimated_causes\": []}]},"
		" \"causes\": " CAUSES ","
		" \"unresolved_causes\": [{\"cause\": \"host_compute\", \"seconds\": 1.0}],"
		" \"estimated_causes\": [], \"events\": {\"dropped\": 0}}");
	char *t;

	(void)state;
	assert_non_null(w);
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	t = render(m);
	has(t, "idlegap_gpu_idle_seconds_total{");
	hasnt(t, "idlegap_gpu_estimated_idle_seconds_total{");
	hasnt(t, "0.9\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* A job whose GPU waited in collectives: the peer_wait state, and the
 * wait by late rank and cause, summed over windows; none without. */
static void test_peer_wait(void **state)
{
	struct ig_metrics_opts o = { .sz = sizeof(o), .version = "0.1" };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct json_object *w = window(ONE_PROC,
		"[{\"device\": 0, \"busy_s\": 2.0, \"idle_s\": 1.0, \"unresolved_s\": 0.0,"
		" \"peer_wait_s\": 3.5}]", CAUSES);
	struct json_object *plain = window(ONE_PROC, ONE_DEV, CAUSES);
	char *t;

	(void)state;
	json_object_object_add(w, "stragglers", json_tokener_parse(
		"[{\"rank\": 2, \"pid\": 12, \"host\": \"n1\", \"late_s\": 3.5,"
		" \"collectives\": 9, \"causes\": [{\"cause\": \"storage\", \"seconds\": 3.0,"
		" \"share\": 0.857}, {\"cause\": \"gil\", \"seconds\": 0.5, \"share\": 0.143}]}]"));
	assert_int_equal(ig_metrics_add_window(m, plain, NULL, 0), 0);
	t = render(m);
	hasnt(t, "peer_wait");
	free(t);
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	t = render(m);
	has(t, "state=\"peer_wait\"} 7\n");
	has(t, "# TYPE idlegap_gpu_peer_wait_seconds_total counter\n");
	has(t, "\nidlegap_gpu_peer_wait_seconds_total{late_rank=\"2\",cause=\"storage\"} 6\n");
	has(t, "\nidlegap_gpu_peer_wait_seconds_total{late_rank=\"2\",cause=\"gil\"} 1\n");
	free(t);
	json_object_put(w);
	json_object_put(plain);
	ig_metrics_free(m);
}

/* A rank of a communicator that never waited for a peer (the job's
 * straggler): its GPU's peer_wait series is there, at 0, beside its
 * peers', found by the rank's device or its process's; a GPU with no rank
 * on it has none. */
static void test_peer_wait_zero(void **state)
{
	struct ig_metrics_opts o = { .sz = sizeof(o), .version = "0.1" };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct json_object *w = window(
		"[{\"pid\": 10, \"device\": 0}, {\"pid\": 11, \"device\": 1},"
		" {\"pid\": 12, \"device\": 2}, {\"pid\": 13, \"device\": 3}]",
		"[{\"device\": 0, \"busy_s\": 2.0, \"idle_s\": 1.0, \"unresolved_s\": 0.0,"
		" \"peer_wait_s\": 3.5},"
		" {\"device\": 1, \"busy_s\": 2.0, \"idle_s\": 1.0, \"unresolved_s\": 0.0,"
		" \"peer_wait_s\": 0.0},"
		" {\"device\": 2, \"busy_s\": 2.0, \"idle_s\": 4.5, \"unresolved_s\": 0.0,"
		" \"peer_wait_s\": 0.0},"
		" {\"device\": 3, \"busy_s\": 2.0, \"idle_s\": 1.0, \"unresolved_s\": 0.0,"
		" \"peer_wait_s\": 0.0}]", CAUSES);
	char *t;

	(void)state;
	json_object_object_add(w, "collectives", json_tokener_parse(
		"{\"ranks\": [{\"rank\": 0, \"pid\": 10, \"device\": 0, \"peer_wait_s\": 3.5},"
		" {\"rank\": 1, \"pid\": 11, \"device\": null, \"peer_wait_s\": 0.0},"
		" {\"rank\": 2, \"pid\": 12, \"device\": 2, \"peer_wait_s\": 0.0}]}"));
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	t = render(m);
	has(t, "gpu=\"0\",state=\"peer_wait\"} 3.5\n");
	has(t, "gpu=\"1\",state=\"peer_wait\"} 0\n");
	has(t, "gpu=\"2\",state=\"peer_wait\"} 0\n");
	hasnt(t, "gpu=\"3\",state=\"peer_wait\"");
	has(t, "gpu=\"3\",state=\"busy\"} 2\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* Two ranks on two GPUs: the device series each have their rank and
 * UUID; the window's causes only what both share. */
static void test_shared_labels_only(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct ig_pid_identity ids[] = { pod_id(10, "0"), pod_id(12, "1") };
	struct json_object *w = window(
		"[{\"pid\": 10, \"device\": 0}, {\"pid\": 12, \"device\": 1}]",
		"[{\"device\": 0, \"busy_s\": 1.0, \"idle_s\": 2.0, \"unresolved_s\": 0.0},"
		" {\"device\": 1, \"busy_s\": 3.0, \"idle_s\": 4.0, \"unresolved_s\": 0.0}]",
		CAUSES);
	char *t;

	(void)state;
	assert_int_equal(ig_metrics_add_window(m, w, ids, 2), 0);
	t = render(m);
	has(t, "idlegap_gpu_seconds_total{UUID=\"GPU-aaaa-1\",namespace=\"ml\",pod=\"trainer-0\",pod_uid=\"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b\",rank=\"0\",comm=\"python3\",state=\"idle\"} 2\n");
	has(t, "idlegap_gpu_seconds_total{UUID=\"GPU-bbbb-2\",namespace=\"ml\",pod=\"trainer-0\",pod_uid=\"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b\",rank=\"1\",comm=\"python3\",state=\"idle\"} 4\n");
	has(t, "idlegap_gpu_idle_seconds_total{namespace=\"ml\",pod=\"trainer-0\",pod_uid=\"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b\",comm=\"python3\",cause=\"storage\"} 6\n");
	has(t, "idlegap_processes 2\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* Reports with cause time per GPU: each GPU's cause and gap series carry
 * its own job's labels, as its state series do. */
static void test_causes_per_gpu(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct ig_pid_identity ids[] = { pod_id(10, "0"), pod_id(12, "1") };
	struct json_object *w = window(
		"[{\"pid\": 10, \"device\": 0}, {\"pid\": 12, \"device\": 1}]",
		"[{\"device\": 0, \"busy_s\": 1.0, \"idle_s\": 2.0, \"unresolved_s\": 0.0,"
		"  \"causes\": [{\"cause\": \"storage\", \"seconds\": 2.0}],"
		"  \"unresolved_causes\": [],"
		"  \"gap_histogram\": {\"counts\": [0,0,0,0,0,0,0,0,0,0,0,0,0,1,1,1],"
		"                      \"count\": 1, \"sum_s\": 2.0}},"
		" {\"device\": 1, \"busy_s\": 3.0, \"idle_s\": 4.0, \"unresolved_s\": 0.5,"
		"  \"causes\": [{\"cause\": \"lock\", \"seconds\": 3.0},"
		"               {\"cause\": \"gil\", \"seconds\": 1.0}],"
		"  \"unresolved_causes\": [{\"cause\": \"host_compute\", \"seconds\": 0.5}],"
		"  \"gap_histogram\": {\"counts\": [0,0,0,0,0,0,0,0,0,0,0,0,2,2,2,2],"
		"                      \"count\": 2, \"sum_s\": 4.0}}]",
		CAUSES);
	char *t;

	(void)state;
	assert_int_equal(ig_metrics_add_window(m, w, ids, 2), 0);
	t = render(m);
#define POD "namespace=\"ml\",pod=\"trainer-0\",pod_uid=\"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b\""
	has(t, "idlegap_gpu_idle_seconds_total{UUID=\"GPU-aaaa-1\"," POD ",rank=\"0\",comm=\"python3\",cause=\"storage\"} 2\n");
	has(t, "idlegap_gpu_idle_seconds_total{UUID=\"GPU-bbbb-2\"," POD ",rank=\"1\",comm=\"python3\",cause=\"lock\"} 3\n");
	has(t, "idlegap_gpu_idle_seconds_total{UUID=\"GPU-bbbb-2\"," POD ",rank=\"1\",comm=\"python3\",cause=\"gil\"} 1\n");
	has(t, "idlegap_gpu_unresolved_seconds_total{UUID=\"GPU-bbbb-2\"," POD ",rank=\"1\",comm=\"python3\",cause=\"host_compute\"} 0.5\n");
	has(t, "idlegap_gpu_gap_seconds_count{UUID=\"GPU-aaaa-1\"," POD ",rank=\"0\",comm=\"python3\"} 1\n");
	has(t, "idlegap_gpu_gap_seconds_count{UUID=\"GPU-bbbb-2\"," POD ",rank=\"1\",comm=\"python3\"} 2\n");
#undef POD
	/* the window's own totals are not counted once more */
	hasnt(t, "cause=\"storage\"} 6");
	hasnt(t, "rank=\"0\",comm=\"python3\",cause=\"lock\"");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* No identity (a process outside any pod, CUDA_VISIBLE_DEVICES unset):
 * the device ordinal is the gpu label; the comm is escaped once more. */
static void test_no_identity(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct ig_pid_identity id = { .pid = 10 };
	struct json_object *w = window(ONE_PROC, ONE_DEV, "[]");
	char *t;

	(void)state;
	strcpy(id.id.comm, "a\\x1b\"q");
	assert_int_equal(ig_metrics_add_window(m, w, &id, 1), 0);
	t = render(m);
	has(t, "idlegap_gpu_seconds_total{gpu=\"0\",comm=\"a\\\\x1b\\\"q\",state=\"busy\"} 2\n");
	hasnt(t, "idlegap_gpu_idle_seconds_total{");
	free(t);
	json_object_put(w);
	/* a pid the caller has no identity for */
	m = (ig_metrics_free(m), ig_metrics_new(NULL));
	w = window(ONE_PROC, ONE_DEV, "[]");
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	t = render(m);
	has(t, "idlegap_gpu_seconds_total{gpu=\"0\",state=\"idle\"} 7\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* Processes whose GPU nothing placed (no context seen, no NVML: a
 * gpu.devices entry each, "device": null, with its pid): each on
 * /metrics under gpu="unknown" with its pid and comm, never under
 * another's GPU 0, counted once each in
 * idlegap_gpu_processes_unknown_device_total and among the processes;
 * its RANK stays the rank label. */
#define UNK_PROCS "[{\"pid\": 20, \"comm\": \"python3\", \"device\": null, \"ordinal\": null}," \
	" {\"pid\": 21, \"comm\": \"python3\", \"device\": null, \"ordinal\": null}," \
	" {\"pid\": 22, \"comm\": \"worker\", \"device\": null, \"ordinal\": null}]"
#define UNK_DEVS "[{\"device\": null, \"pid\": 20, \"busy_s\": 1.0, \"idle_s\": 4.0," \
	" \"peer_wait_s\": 0.5, \"causes\": [{\"cause\": \"storage\", \"seconds\": 4.0}]}," \
	" {\"device\": null, \"pid\": 21, \"busy_s\": 3.0, \"idle_s\": 2.0," \
	" \"causes\": [{\"cause\": \"gil\", \"seconds\": 2.0}]}]"

static void test_unknown_device(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct ig_pid_identity ids[2] = { { .pid = 20 }, { .pid = 21 } };
	struct json_object *w = window(UNK_PROCS, UNK_DEVS, "[]");
	char *t;

	(void)state;
	strcpy(ids[0].id.comm, "python3");
	strcpy(ids[0].id.rank, "2");
	strcpy(ids[0].id.local_rank, "2");
	ids[0].id.self = IG_SELF_RANK;
	strcpy(ids[1].id.comm, "python3");
	assert_int_equal(ig_metrics_add_window(m, w, ids, 2), 0);
	assert_int_equal(ig_metrics_add_window(m, w, ids, 2), 0);
	t = render(m);
	has(t, "\nidlegap_gpu_seconds_total{gpu=\"unknown\",rank=\"2\",comm=\"python3\","
	    "pid=\"20\",self_reported=\"rank\",state=\"idle\"} 8\n");
	has(t, "\nidlegap_gpu_seconds_total{gpu=\"unknown\",rank=\"2\",comm=\"python3\","
	    "pid=\"20\",self_reported=\"rank\",state=\"peer_wait\"} 1\n");
	has(t, "\nidlegap_gpu_idle_seconds_total{gpu=\"unknown\",rank=\"2\",comm=\"python3\","
	    "pid=\"20\",self_reported=\"rank\",cause=\"storage\"} 8\n");
	has(t, "\nidlegap_gpu_seconds_total{gpu=\"unknown\",comm=\"python3\","
	    "pid=\"21\",state=\"busy\"} 6\n");
	hasnt(t, "gpu=\"0\"");
	hasnt(t, "pid=\"22\"");
	has(t, "\nidlegap_gpu_processes_unknown_device_total 2\n");
	has(t, "\nidlegap_processes 2\n");
	free(t);
	json_object_put(w);
	/* gone: its series go IG_METRICS_PID_KEEP windows later, not ten
	 * (a host may start such processes by the thousand); it is not
	 * counted again while it was seen within the registry's keep */
	w = window("[]", "[]", "[]");
	for (int i = 0; i < IG_METRICS_PID_KEEP; i++)
		assert_int_equal(ig_metrics_add_window(m, w, ids, 2), 0);
	t = render(m);
	has(t, "pid=\"20\"");
	free(t);
	assert_int_equal(ig_metrics_add_window(m, w, ids, 2), 0);
	t = render(m);
	hasnt(t, "pid=\"20\"");
	hasnt(t, "pid=\"21\"");
	has(t, "\nidlegap_series_dropped_total{reason=\"stale\"} 2\n");
	has(t, "\nidlegap_gpu_processes_unknown_device_total 2\n");
	has(t, "\nidlegap_processes 0\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

/* Labels only the process vouches for are named in self_reported: its
 * rank, a Slurm job from its environment, a GPU UUID it names itself. */
static void test_self_reported(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct ig_pid_identity id = pod_id(10, "0");
	struct json_object *w = window(ONE_PROC, ONE_DEV, "[]");
	char *t;

	(void)state;
	id.id.self = IG_SELF_RANK;
	assert_int_equal(ig_metrics_add_window(m, w, &id, 1), 0);
	t = render(m);
	has(t, "idlegap_gpu_seconds_total{UUID=\"GPU-aaaa-1\",namespace=\"ml\",pod=\"trainer-0\","
	    "pod_uid=\"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b\",rank=\"0\",comm=\"python3\","
	    "self_reported=\"rank\",state=\"busy\"} 2\n");
	free(t);
	/* the GPUs from the environment, not the runtime; a Slurm job too */
	m = (ig_metrics_free(m), ig_metrics_new(NULL));
	id.id.self = IG_SELF_RANK | IG_SELF_SLURM | IG_SELF_NVIDIA;
	strcpy(id.id.slurm_job, "77");
	assert_int_equal(ig_metrics_add_window(m, w, &id, 1), 0);
	t = render(m);
	has(t, "slurm_job=\"77\",rank=\"0\",comm=\"python3\",self_reported=\"UUID,slurm_job,rank\",state=\"busy\"} 2\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

static void test_stale_and_limit(void **state)
{
	struct ig_metrics_opts o = { .sz = sizeof(o), .keep_windows = 2,
				     .max_series = 2 };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct ig_pid_identity a = pod_id(10, "0"), b = pod_id(10, "1");
	struct ig_pid_identity c = pod_id(10, "2");
	struct json_object *w = window(ONE_PROC, ONE_DEV, CAUSES);
	char *t;
	int i;

	(void)state;
	assert_int_equal(ig_metrics_add_window(m, w, &a, 1), 0);
	/* rank 1 has one label set for the device and causes: fits */
	assert_int_equal(ig_metrics_add_window(m, w, &b, 1), 0);
	assert_int_equal(ig_metrics_add_window(m, w, &c, 1), 0);
	t = render(m);
	has(t, "idlegap_series_dropped_total{reason=\"limit\"} 1\n");
	hasnt(t, "rank=\"2\"");
	free(t);
	for (i = 0; i < 3; i++)
		assert_int_equal(ig_metrics_add_window(m, w, &b, 1), 0);
	t = render(m);
	hasnt(t, "rank=\"0\"");
	has(t, "rank=\"1\"");
	has(t, "idlegap_series_dropped_total{reason=\"stale\"} 1\n");
	free(t);
	json_object_put(w);
	ig_metrics_free(m);
}

static void test_bad_input(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct json_object *w = json_tokener_parse("{\"version\": 2, \"gpu\": {}}");
	struct json_object *x = json_tokener_parse(
		"{\"version\": 1, \"gpu\": {\"devices\": [{\"device\": -4, \"idle_s\": \"x\"}],"
		" \"gap_histogram\": {\"counts\": [1, 2]}},"
		" \"processes\": [{\"pid\": \"x\", \"device\": 99999}, 3],"
		" \"causes\": [{\"cause\": \"bad name\", \"seconds\": 1},"
		"  {\"cause\": \"storage\", \"seconds\": -5}, 7]}");
	const char *const bad[] = { "x" };
	struct ig_metrics_opts o = { .sz = sizeof(o), .labels = bad, .nlabels = 1 };
	char *t;

	(void)state;
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), -EINVAL);
	assert_int_equal(ig_metrics_add_window(m, NULL, NULL, 0), -EINVAL);
	assert_int_equal(ig_metrics_add_window(m, x, NULL, 0), 0);
	t = render(m);
	has(t, "idlegap_windows_total 1\n");
	has(t, "idlegap_windows_partial_total 1\n");
	has(t, "cause=\"storage\"} 0\n");
	hasnt(t, "bad name");
	hasnt(t, "le=");
	free(t);
	json_object_put(w);
	json_object_put(x);
	ig_metrics_free(m);
	errno = 0;
	assert_null(ig_metrics_new(&o));
	assert_int_equal(errno, EINVAL);
}

static void test_check_label(void **state)
{
	(void)state;
	assert_int_equal(ig_metrics_check_label("cluster=eu-1"), 0);
	assert_int_equal(ig_metrics_check_label("_x=ünïcode"), 0);
	assert_int_equal(ig_metrics_check_label("cluster="), 0);
	assert_int_equal(ig_metrics_check_label("cluster"), -EINVAL);
	assert_int_equal(ig_metrics_check_label("=v"), -EINVAL);
	assert_int_equal(ig_metrics_check_label("1x=v"), -EINVAL);
	assert_int_equal(ig_metrics_check_label("__name__=v"), -EINVAL);
	assert_int_equal(ig_metrics_check_label("a-b=v"), -EINVAL);
	/* a bad VALUE is told apart from a bad KEY */
	assert_int_equal(ig_metrics_check_label("a=line\nbreak"), -EILSEQ);
	assert_int_equal(ig_metrics_check_label("a=\xff"), -EILSEQ);
	assert_int_equal(ig_metrics_check_label("a=back\\slash"), -EILSEQ);
	{
		char big[300];

		memset(big, 'v', sizeof(big) - 1);
		big[0] = 'a', big[1] = '=', big[sizeof(big) - 1] = 0;
		assert_int_equal(ig_metrics_check_label(big), -E2BIG);
	}
	assert_int_equal(ig_metrics_check_label("pod=x"), -EEXIST);
	assert_int_equal(ig_metrics_check_label("cause=x"), -EEXIST);
	assert_int_equal(ig_metrics_check_label(NULL), -EINVAL);
}

/* Label values in the exposition: escaped as the text format asks, and
 * UTF-8 whatever bytes a name held. */
static void test_lset_utf8(void **state)
{
	struct ig_lset ls = { 0 };
	char *t;

	(void)state;
	snprintf(ls.v[IG_MK_COMM], sizeof(ls.v[0]), "tr\xff\xfe\"q\\\n");
	t = ig_metrics_lset_text(&ls);
	assert_non_null(t);
	assert_true(ig_utf8_valid(t, strlen(t)));
	assert_string_equal(t, "comm=\"tr\xef\xbf\xbd\xef\xbf\xbd\\\"q\\\\\\n\"");
	free(t);
}

/* The JSON's gap_histogram source: exact while every gap is kept, then by
 * bucket within 3% of the bound. */
static void test_hist_count_le(void **state)
{
	struct ig_hist h = { 0 };
	uint64_t i, n;

	(void)state;
	for (i = 1; i <= 10; i++)
		ig_hist_add(&h, i * 100000);	/* 0.1 .. 1 ms */
	assert_int_equal(ig_hist_count_le(&h, 250000), 2);
	assert_int_equal(ig_hist_count_le(&h, 1000000), 10);
	assert_int_equal(ig_hist_count_le(&h, 99999), 0);
	for (i = 11; i <= 20000; i++)
		ig_hist_add(&h, i * 100000);	/* to 2 s */
	n = ig_hist_count_le(&h, 1000000000);	/* 1 s: 10000 gaps */
	assert_true(n >= 9700 && n <= 10300);
	assert_int_equal(ig_hist_count_le(&h, 10000000000ULL), 20000);
	ig_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_window_and_sum),
		cmocka_unit_test(test_peer_wait),
		cmocka_unit_test(test_peer_wait_zero),
		cmocka_unit_test(test_bound_alone),
		cmocka_unit_test(test_shared_labels_only),
		cmocka_unit_test(test_causes_per_gpu),
		cmocka_unit_test(test_no_identity),
		cmocka_unit_test(test_unknown_device),
		cmocka_unit_test(test_self_reported),
		cmocka_unit_test(test_stale_and_limit),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_idle_open),
		cmocka_unit_test(test_check_label),
		cmocka_unit_test(test_lset_utf8),
		cmocka_unit_test(test_hist_count_le),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
