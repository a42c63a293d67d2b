// SPDX-License-Identifier: GPL-2.0
/* Name tables: every probed entry point has a name and a probe class. */
#include "test_engine_util.h"

static void test_api_roundtrip(void **state)
{
	unsigned int i;

	(void)state;
	assert_null(ig_api_name(IG_API_NONE));
	assert_null(ig_api_name(IG_API__MAX));
	for (i = 1; i < IG_API__MAX; i++) {
		const char *n = ig_api_name(i);

		if (!n)
			fail_msg("api %u has no name", i);
		assert_int_equal(ig_api_by_name(n), (int)i);
		assert_true(ig_api_class_of(i) >= IG_AC_LAUNCH_STACK9);
		assert_true(ig_api_class_of(i) <= IG_AC_CTX_DEVICE);
	}
	assert_int_equal(ig_api_by_name("cuNoSuchThing"), -1);
	assert_int_equal(ig_api_by_name(NULL), -1);
	assert_string_equal(ig_api_name(IG_API_cuLaunchKernel),
			    "cuLaunchKernel");
	assert_string_equal(ig_api_name(IG_API_cuMemcpyHtoDAsync_v2_ptsz),
			    "cuMemcpyHtoDAsync_v2_ptsz");
	assert_string_equal(ig_api_name(IG_API_cuInit), "cuInit");
}

/*
 * Recordings store enum ig_api values: each existing entry point keeps its
 * number for ever (bpf/cuda_api.def is append only).
 */
static void test_api_values_pinned(void **state)
{
	static const char *const v1[] = {
		NULL,
		"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
		"cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel",
		"cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch",
		"cuGraphLaunch_ptsz", "cuMemcpyAsync", "cuMemcpyAsync_ptsz",
		"cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2",
		"cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyDtoHAsync",
		"cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz",
		"cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2",
		"cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpy2DAsync",
		"cuMemcpy2DAsync_v2", "cuMemcpy2DAsync_v2_ptsz",
		"cuMemcpy3DAsync", "cuMemcpy3DAsync_v2",
		"cuMemcpy3DAsync_v2_ptsz", "cuMemcpyPeerAsync",
		"cuMemcpyPeerAsync_ptsz", "cuMemsetD8Async",
		"cuMemsetD8Async_ptsz", "cuMemsetD16Async",
		"cuMemsetD16Async_ptsz", "cuMemsetD32Async",
		"cuMemsetD32Async_ptsz", "cuMemcpyHtoD", "cuMemcpyHtoD_v2",
		"cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH", "cuMemcpyDtoH_v2",
		"cuMemcpyDtoH_v2_ptds", "cuMemcpy", "cuMemcpy_ptds",
		"cuMemcpyDtoD", "cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2_ptds",
		"cuMemsetD8", "cuMemsetD8_v2", "cuMemsetD8_v2_ptds",
		"cuMemsetD16", "cuMemsetD16_v2", "cuMemsetD16_v2_ptds",
		"cuMemsetD32", "cuMemsetD32_v2", "cuMemsetD32_v2_ptds",
		"cuStreamSynchronize", "cuStreamSynchronize_ptsz",
		"cuCtxSynchronize", "cuCtxSynchronize_v2",
		"cuEventSynchronize", "cuStreamQuery", "cuStreamQuery_ptsz",
		"cuEventQuery", "cuEventRecord", "cuEventRecord_ptsz",
		"cuEventRecordWithFlags", "cuEventRecordWithFlags_ptsz",
		"cuMemAlloc", "cuMemAlloc_v2", "cuMemFree", "cuMemFree_v2",
		"cuMemAllocHost", "cuMemAllocHost_v2", "cuMemHostAlloc",
		"cuMemFreeHost", "cuMemHostRegister", "cuMemHostRegister_v2",
		"cuMemHostUnregister", "cuModuleLoadData",
		"cuModuleLoadDataEx", "cuModuleGetFunction", "cuStreamCreate",
		"cuStreamCreateWithPriority", "cuStreamDestroy",
		"cuStreamDestroy_v2", "cuCtxCreate", "cuCtxCreate_v2",
		"cuCtxCreate_v4", "cuDevicePrimaryCtxRetain",
		"cuCtxSetCurrent", "cuInit",
	};
	unsigned int i, n = sizeof(v1) / sizeof(v1[0]);

	(void)state;
	assert_true(IG_API__MAX >= n);
	for (i = 1; i < n; i++)
		if (!ig_api_name(i) || strcmp(ig_api_name(i), v1[i]))
			fail_msg("api %u is %s, recordings say %s", i,
				 ig_api_name(i), v1[i]);
}

static void test_api_dev_arg_submits(void **state)
{
	unsigned int i, nsubmit = 0;

	(void)state;
	assert_int_equal(ig_api_dev_arg(IG_API_cuDevicePrimaryCtxRetain), 2);
	assert_int_equal(ig_api_dev_arg(IG_API_cuCtxCreate), 3);
	assert_int_equal(ig_api_dev_arg(IG_API_cuCtxCreate_v2), 3);
	assert_int_equal(ig_api_dev_arg(IG_API_cuCtxCreate_v4), 4);
	assert_int_equal(ig_api_dev_arg(IG_API_cuLaunchKernel), 0);
	assert_int_equal(ig_api_dev_arg(IG_API__MAX), 0);
	for (i = 1; i < IG_API__MAX; i++) {
		if (ig_api_class_of(i) == IG_AC_CTX_DEVICE)
			assert_true(ig_api_dev_arg(i) > 0);
		nsubmit += ig_api_submits(i);
	}
	assert_true(ig_api_submits(IG_API_cuLaunchKernelEx_ptsz));
	assert_true(ig_api_submits(IG_API_cuGraphLaunch));
	assert_true(ig_api_submits(IG_API_cuMemsetD32_v2_ptds));
	assert_true(ig_api_submits(IG_API_cuMemcpyHtoD_v2));
	assert_false(ig_api_submits(IG_API_cuEventRecord));
	assert_false(ig_api_submits(IG_API_cuStreamSynchronize));
	assert_false(ig_api_submits(IG_API_NONE));
	assert_int_equal(nsubmit, 53);
}

static void test_api_classes(void **state)
{
	static const struct {
		unsigned int api;
		enum ig_api_class cls;
	} want[] = {
		{ IG_API_cuLaunchKernel, IG_AC_LAUNCH_STACK9 },
		{ IG_API_cuLaunchKernel_ptsz, IG_AC_LAUNCH_STACK9 },
		{ IG_API_cuLaunchCooperativeKernel_ptsz, IG_AC_LAUNCH_STACK9 },
		{ IG_API_cuLaunchKernelEx, IG_AC_LAUNCH_EX },
		{ IG_API_cuLaunchKernelEx_ptsz, IG_AC_LAUNCH_EX },
		{ IG_API_cuGraphLaunch, IG_AC_STREAM_ARG2 },
		{ IG_API_cuGraphLaunch_ptsz, IG_AC_STREAM_ARG2 },
		{ IG_API_cuMemcpy2DAsync_v2, IG_AC_STREAM_ARG2 },
		{ IG_API_cuMemcpy3DAsync_v2_ptsz, IG_AC_STREAM_ARG2 },
		{ IG_API_cuMemcpyAsync, IG_AC_STREAM_ARG4 },
		{ IG_API_cuMemcpyHtoDAsync_v2, IG_AC_STREAM_ARG4 },
		{ IG_API_cuMemcpyDtoDAsync_v2_ptsz, IG_AC_STREAM_ARG4 },
		{ IG_API_cuMemsetD32Async_ptsz, IG_AC_STREAM_ARG4 },
		{ IG_API_cuMemcpyPeerAsync, IG_AC_STREAM_ARG6 },
		{ IG_API_cuMemcpyHtoD_v2, IG_AC_SYNC_COPY },
		{ IG_API_cuMemcpyDtoH_v2_ptds, IG_AC_SYNC_COPY },
		{ IG_API_cuMemcpy, IG_AC_SYNC_COPY },
		{ IG_API_cuMemcpyDtoD_v2, IG_AC_SUBMIT_NOSTREAM },
		{ IG_API_cuMemsetD8_v2_ptds, IG_AC_SUBMIT_NOSTREAM },
		{ IG_API_cuStreamSynchronize_ptsz, IG_AC_STREAM_SYNC },
		{ IG_API_cuCtxSynchronize_v2, IG_AC_CTX_SYNC },
		{ IG_API_cuEventSynchronize, IG_AC_EVENT_SYNC },
		{ IG_API_cuStreamQuery, IG_AC_STREAM_QUERY },
		{ IG_API_cuEventQuery, IG_AC_EVENT_QUERY },
		{ IG_API_cuEventRecordWithFlags_ptsz, IG_AC_EVENT_RECORD },
		{ IG_API_cuStreamCreateWithPriority, IG_AC_STREAM_CREATE },
		{ IG_API_cuCtxCreate_v4, IG_AC_CTX_DEVICE },
		{ IG_API_cuDevicePrimaryCtxRetain, IG_AC_CTX_DEVICE },
		{ IG_API_cuCtxSetCurrent, IG_AC_API },
		{ IG_API_cuMemAlloc_v2, IG_AC_API },
		{ IG_API_cuStreamDestroy_v2, IG_AC_API },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (ig_api_class_of(want[i].api) != want[i].cls)
			fail_msg("%s: class %d, want %d",
				 ig_api_name(want[i].api),
				 ig_api_class_of(want[i].api), want[i].cls);
	assert_int_equal(ig_api_class_of(IG_API__MAX), 0);
	assert_true(ig_api_is_sync_copy(IG_API_cuMemcpyDtoH));
	assert_false(ig_api_is_sync_copy(IG_API_cuMemcpyDtoD));
}

/* Recordings store an off-CPU reason's value, and its kind decides its
 * attribution (bpf/offcpu_reasons.def): the first thirteen, pinned. */
static void test_reasons_pinned(void **state)
{
	static const struct {
		const char *name;
		enum ig_reason_kind kind;
	} v[] = {
		{ NULL, IG_RK_FOLLOW },
		{ "preempt", IG_RK_RUNNABLE }, { "storage", IG_RK_STORAGE },
		{ "page_fault", IG_RK_FAULT }, { "futex", IG_RK_FUTEX },
		{ "pipe", IG_RK_FOLLOW }, { "unix", IG_RK_FOLLOW },
		{ "eventfd", IG_RK_FOLLOW }, { "socket", IG_RK_NETWORK },
		{ "poll", IG_RK_FOLLOW }, { "sleep", IG_RK_SLEEP },
		{ "waitchild", IG_RK_FOLLOW }, { "io_uring", IG_RK_IOWAIT },
		{ "other", IG_RK_IOWAIT },
	};
	unsigned int i, n = sizeof(v) / sizeof(v[0]);

	(void)state;
	assert_int_equal(IG_R_PREEMPT, 1);
	assert_int_equal(IG_R_OTHER, 13);
	assert_true(IG_R__MAX >= n);
	for (i = 1; i < n; i++) {
		if (strcmp(ig_rec_reason_name(i), v[i].name))
			fail_msg("reason %u is %s, recordings say %s", i,
				 ig_rec_reason_name(i), v[i].name);
		if (ig_rec_reason_kind(i) != v[i].kind)
			fail_msg("reason %s: kind %d, want %d", v[i].name,
				 ig_rec_reason_kind(i), v[i].kind);
	}
	assert_int_equal(ig_rec_reason_kind(0), IG_RK_FOLLOW);
	assert_int_equal(ig_rec_reason_kind(999), IG_RK_FOLLOW);
}

static void test_other_names(void **state)
{
	unsigned int i;

	(void)state;
	for (i = IG_R_PREEMPT; i < IG_R__MAX; i++)
		assert_string_not_equal(ig_rec_reason_name(i), "unknown");
	assert_string_equal(ig_rec_reason_name(IG_R_PAGEFAULT), "page_fault");
	assert_string_equal(ig_rec_reason_name(999), "unknown");
	for (i = 0; i < IG_C__MAX; i++)
		assert_non_null(ig_names_cause(i));
	assert_string_equal(ig_names_cause(IG_C_CPU_STARVATION),
			    "cpu_starvation");
	assert_string_equal(ig_names_cause(IG_C_WAIT_UNTRACKED),
			    "wait_untracked");
	assert_null(ig_names_cause(IG_C__MAX));
	assert_string_equal(ig_rec_type_name(IG_REC_OFFCPU), "offcpu");
	assert_string_equal(ig_rec_type_name(IG_REC_NVML), "nvml");
	assert_string_equal(ig_rec_type_name(IG_REC_SAMPLE), "sample");
	assert_string_equal(ig_rec_type_name(0x999), "unknown");
	assert_string_equal(ig_rec_cuda_kind_name(IG_CU_QUERY_BUSY),
			    "query_busy");
	assert_string_equal(ig_rec_stop_reason_name(IG_STOP_SIGNAL), "signal");
	assert_string_equal(ig_rec_proc_kind_name(IG_PROC_FORK), "fork");
	assert_string_equal(ig_rec_proc_kind_name(IG_PROC_GROUP_EXIT), "group_exit");
	assert_null(ig_rec_proc_kind_name(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_roundtrip),
		cmocka_unit_test(test_api_classes),
		cmocka_unit_test(test_api_values_pinned),
		cmocka_unit_test(test_api_dev_arg_submits),
		cmocka_unit_test(test_reasons_pinned),
		cmocka_unit_test(test_other_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
