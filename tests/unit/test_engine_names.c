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

static void test_other_names(void **state)
{
	unsigned int i;

	(void)state;
	for (i = IG_R_PREEMPT; i < IG_R__MAX; i++)
		assert_string_not_equal(ig_reason_name(i), "unknown");
	assert_string_equal(ig_reason_name(IG_R_PAGEFAULT), "page_fault");
	assert_string_equal(ig_reason_name(999), "unknown");
	for (i = 0; i < IG_C__MAX; i++)
		assert_non_null(ig_cause_name(i));
	assert_string_equal(ig_cause_name(IG_C_CPU_STARVATION),
			    "cpu_starvation");
	assert_string_equal(ig_cause_name(IG_C_WAIT_UNTRACKED),
			    "wait_untracked");
	assert_null(ig_cause_name(IG_C__MAX));
	assert_string_equal(ig_rec_type_name(IG_REC_OFFCPU), "offcpu");
	assert_string_equal(ig_rec_type_name(IG_REC_NVML), "nvml");
	assert_string_equal(ig_rec_type_name(IG_REC_SAMPLE), "sample");
	assert_string_equal(ig_rec_type_name(0x999), "unknown");
	assert_string_equal(ig_cuda_kind_name(IG_CU_QUERY_BUSY),
			    "query_busy");
	assert_string_equal(ig_stop_reason_name(IG_STOP_SIGNAL), "signal");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_roundtrip),
		cmocka_unit_test(test_api_classes),
		cmocka_unit_test(test_other_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
