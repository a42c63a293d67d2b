// SPDX-License-Identifier: GPL-2.0
/*
 * Entry points: copies and memsets, in every name the driver exports for
 * them: legacy 32-bit (no suffix), _v2, and _v2_ptds/_v2_ptsz where handle 0
 * (or, for the synchronous forms, the implicit stream) is the calling
 * thread's default stream.
 */
#include "simgpu.h"

#define DP(p) ((void *)(uintptr_t)(p))

/* ---- synchronous host <-> device ----------------------------------------- */

SIM_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost,
				 unsigned int ByteCount)
{
	return copy_run(HTOD, NULL, false, false, DP(dstDevice), srcHost,
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
				    size_t ByteCount)
{
	return copy_run(HTOD, NULL, false, false, DP(dstDevice), srcHost,
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice,
					 const void *srcHost, size_t ByteCount)
{
	return copy_run(HTOD, NULL, true, false, DP(dstDevice), srcHost,
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice,
				 unsigned int ByteCount)
{
	return copy_run(DTOH, NULL, false, false, dstHost, DP(srcDevice),
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice,
				    size_t ByteCount)
{
	return copy_run(DTOH, NULL, false, false, dstHost, DP(srcDevice),
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice,
					 size_t ByteCount)
{
	return copy_run(DTOH, NULL, true, false, dstHost, DP(srcDevice),
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr_v1 dstDevice,
				 CUdeviceptr_v1 srcDevice,
				 unsigned int ByteCount)
{
	return copy_run(DTOD, NULL, false, false, DP(dstDevice),
			DP(srcDevice), ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice,
				    CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy_run(DTOD, NULL, false, false, DP(dstDevice),
			DP(srcDevice), ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice,
					 CUdeviceptr srcDevice,
					 size_t ByteCount)
{
	return copy_run(DTOD, NULL, true, false, DP(dstDevice), DP(srcDevice),
			ByteCount);
}

/* ---- asynchronous host <-> device ---------------------------------------- */

SIM_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice,
				      const void *srcHost,
				      unsigned int ByteCount, CUstream hStream)
{
	return copy_run(HTOD, hStream, false, true, DP(dstDevice), srcHost,
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice,
					 const void *srcHost, size_t ByteCount,
					 CUstream hStream)
{
	return copy_run(HTOD, hStream, false, true, DP(dstDevice), srcHost,
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice,
					      const void *srcHost,
					      size_t ByteCount,
					      CUstream hStream)
{
	return copy_run(HTOD, hStream, true, true, DP(dstDevice), srcHost,
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice,
				      unsigned int ByteCount, CUstream hStream)
{
	return copy_run(DTOH, hStream, false, true, dstHost, DP(srcDevice),
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
					 size_t ByteCount, CUstream hStream)
{
	return copy_run(DTOH, hStream, false, true, dstHost, DP(srcDevice),
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost,
					      CUdeviceptr srcDevice,
					      size_t ByteCount,
					      CUstream hStream)
{
	return copy_run(DTOH, hStream, true, true, dstHost, DP(srcDevice),
			ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice,
				      CUdeviceptr_v1 srcDevice,
				      unsigned int ByteCount, CUstream hStream)
{
	return copy_run(DTOD, hStream, false, true, DP(dstDevice),
			DP(srcDevice), ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice,
					 CUdeviceptr srcDevice,
					 size_t ByteCount, CUstream hStream)
{
	return copy_run(DTOD, hStream, false, true, DP(dstDevice),
			DP(srcDevice), ByteCount);
}

SIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice,
					      CUdeviceptr srcDevice,
					      size_t ByteCount,
					      CUstream hStream)
{
	return copy_run(DTOD, hStream, true, true, DP(dstDevice),
			DP(srcDevice), ByteCount);
}

/* ---- unified ------------------------------------------------------------- */

SIM_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src,
			     size_t ByteCount)
{
	return copy_unified(NULL, false, false, dst, src, ByteCount);
}

SIM_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src,
				  size_t ByteCount)
{
	return copy_unified(NULL, true, false, dst, src, ByteCount);
}

SIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
				  size_t ByteCount, CUstream hStream)
{
	return copy_unified(hStream, false, true, dst, src, ByteCount);
}

SIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src,
				       size_t ByteCount, CUstream hStream)
{
	return copy_unified(hStream, true, true, dst, src, ByteCount);
}

/* ---- memset -------------------------------------------------------------- */

SIM_EXPORT CUresult cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc,
			       unsigned int N)
{
	(void)uc;
	return memset_run(NULL, false, (CUdeviceptr)dstDevice, N);
}

SIM_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc,
				  size_t N)
{
	(void)uc;
	return memset_run(NULL, false, dstDevice, N);
}

SIM_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc,
				       size_t N)
{
	(void)uc;
	return memset_run(NULL, true, dstDevice, N);
}

SIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc,
				    size_t N, CUstream hStream)
{
	(void)uc;
	return memset_run(hStream, false, dstDevice, N);
}

SIM_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice,
					 unsigned char uc, size_t N,
					 CUstream hStream)
{
	(void)uc;
	return memset_run(hStream, true, dstDevice, N);
}
