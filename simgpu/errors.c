// SPDX-License-Identifier: GPL-2.0
/* cuGetErrorName / cuGetErrorString. */
#include "simgpu.h"

#define E(code, text) { code, #code, text }

static const struct {
	CUresult code;
	const char *name;
	const char *text;
} errors[] = {
	E(CUDA_SUCCESS, "no error"),
	E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	E(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
	E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
	E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
	E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
	E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	E(CUDA_ERROR_ILLEGAL_STATE, "the operation is not valid in the current state"),
	E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	E(CUDA_ERROR_NOT_READY, "device not ready"),
	E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
	E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
	E(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
	E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
	E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	E(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
	E(CUDA_ERROR_UNKNOWN, "unknown error"),
};

CUresult error_string(CUresult e, const char **out, bool name)
{
	size_t i;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == e) {
			*out = name ? errors[i].name : errors[i].text;
			return CUDA_SUCCESS;
		}
	*out = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}
