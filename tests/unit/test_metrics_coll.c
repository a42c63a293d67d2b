// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives by communicator in the registry (metrics_coll.c,
 * docs/design.md §7.5): one series pair per rank and communicator under
 * the rank's own labels, summed across windows; entries that are not one
 * skipped; series dropped when stale; labels the agent sets refused.
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
#include "views/metrics.h"

static struct json_object *window(const char *by_comm)
{
	char buf[4096];
	struct json_object *o;

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"duration_s\": 10.0, \"complete\": true,"
		 " \"processes\": [{\"pid\": 10, \"device\": 1000, \"ordinal\": 0},"
		 "                 {\"pid\": 11, \"device\": 3, \"ordinal\": 3}],"
		 " \"gpu\": {\"devices\": []},"
		 " \"collectives\": {\"by_communicator\": %s}}", by_comm);
	o = json_tokener_parse(buf);
	assert_non_null(o);
	return o;
}

#define GOOD "[{\"communicator\": \"9c5c98b6f32c31f7\", \"rank\": 2, \"size\": 4, \"pid\": 10," \
	" \"device\": 1000, \"calls\": 40, \"ended\": 39, \"launch_to_end_s\": 0.25}," \
	" {\"communicator\": \"9c5c98b6f32c31f7\", \"rank\": 3, \"size\": 4, \"pid\": 11," \
	" \"device\": 3, \"calls\": 40, \"ended\": 40, \"launch_to_end_s\": 1.5}]"

static char *render(struct ig_metrics *m)
{
	char *buf;
	size_t len;

	assert_int_equal(ig_metrics_render(m, &buf, &len), 0);
	return buf;
}

static void test_per_rank_summed(void **state)
{
	const char *labels[] = { "cluster=a" };
	struct ig_metrics_opts o = { .sz = sizeof(o), .labels = labels, .nlabels = 1 };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct ig_pid_identity ids[1] = { { .pid = 10 } };
	struct json_object *w = window(GOOD);
	char *buf;

	(void)state;
	strcpy(ids[0].id.pod, "ddp-2");
	strcpy(ids[0].id.namespace, "ml");
	strcpy(ids[0].id.rank, "2");
	ids[0].id.self = IG_SELF_RANK;
	assert_int_equal(ig_metrics_add_window(m, w, ids, 1), 0);
	assert_int_equal(ig_metrics_add_window(m, w, ids, 1), 0);
	buf = render(m);
	/* the rank's own labels: its GPU is its ordinal 0 (the host's GPU
	 * known by UUID only is the window's device 1000, not a label) */
	assert_non_null(strstr(buf,
		"idlegap_collectives_ended_total{gpu=\"0\",namespace=\"ml\",pod=\"ddp-2\",rank=\"2\","
		"self_reported=\"rank\",communicator=\"9c5c98b6f32c31f7\",comm_rank=\"2\",comm_size=\"4\","
		"cluster=\"a\"} 78\n"));
	assert_non_null(strstr(buf,
		"idlegap_collective_launch_to_end_seconds_total{gpu=\"0\",namespace=\"ml\",pod=\"ddp-2\","
		"rank=\"2\",self_reported=\"rank\",communicator=\"9c5c98b6f32c31f7\",comm_rank=\"2\","
		"comm_size=\"4\",cluster=\"a\"} 0.5\n"));
	/* a process without an identity: its GPU only */
	assert_non_null(strstr(buf,
		"idlegap_collectives_ended_total{gpu=\"3\",communicator=\"9c5c98b6f32c31f7\","
		"comm_rank=\"3\",comm_size=\"4\",cluster=\"a\"} 80\n"));
	assert_non_null(strstr(buf, "# TYPE idlegap_collective_launch_to_end_seconds_total counter\n"));
	free(buf);
	json_object_put(w);
	ig_metrics_free(m);
}

static void test_bad_entries_skipped(void **state)
{
	struct ig_metrics *m = ig_metrics_new(NULL);
	struct json_object *w = window(
		"[{\"communicator\": \"9C5C\\\"}\", \"rank\": 0, \"size\": 2, \"pid\": 10, \"ended\": 1},"
		" {\"communicator\": \"12345678901234567\", \"rank\": 0, \"size\": 2, \"pid\": 10, \"ended\": 1},"
		" {\"communicator\": \"abc\", \"rank\": 2, \"size\": 2, \"pid\": 10, \"ended\": 1},"
		" {\"communicator\": \"abc\", \"rank\": -1, \"size\": 2, \"pid\": 10, \"ended\": 1},"
		" {\"communicator\": \"abc\", \"rank\": 0, \"size\": 0, \"pid\": 10, \"ended\": 1},"
		" {\"rank\": 0, \"size\": 2, \"pid\": 10, \"ended\": 1}, 7]");
	char *buf;

	(void)state;
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	buf = render(m);
	assert_null(strstr(buf, "idlegap_collectives_ended_total"));
	free(buf);
	json_object_put(w);
	ig_metrics_free(m);
}

static void test_stale_dropped(void **state)
{
	struct ig_metrics_opts o = { .sz = sizeof(o), .keep_windows = 2 };
	struct ig_metrics *m = ig_metrics_new(&o);
	struct json_object *w = window(GOOD), *empty = window("[]");
	char *buf;
	int i;

	(void)state;
	assert_int_equal(ig_metrics_add_window(m, w, NULL, 0), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(ig_metrics_add_window(m, empty, NULL, 0), 0);
	buf = render(m);
	assert_non_null(strstr(buf, "idlegap_collectives_ended_total{gpu=\"3\""));
	free(buf);
	assert_int_equal(ig_metrics_add_window(m, empty, NULL, 0), 0);
	buf = render(m);
	assert_null(strstr(buf, "idlegap_collectives_ended_total"));
	assert_non_null(strstr(buf, "idlegap_series_dropped_total{reason=\"stale\"} 2\n"));
	free(buf);
	json_object_put(w);
	json_object_put(empty);
	ig_metrics_free(m);
}

static void test_own_labels_refused(void **state)
{
	(void)state;
	assert_int_equal(ig_metrics_check_label("communicator=x"), -EEXIST);
	assert_int_equal(ig_metrics_check_label("comm_rank=1"), -EEXIST);
	assert_int_equal(ig_metrics_check_label("comm_size=1"), -EEXIST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_rank_summed),
		cmocka_unit_test(test_bad_entries_skipped),
		cmocka_unit_test(test_stale_dropped),
		cmocka_unit_test(test_own_labels_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
