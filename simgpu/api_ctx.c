// SPDX-License-Identifier: GPL-2.0
/*
 * Entry points: initialization, devices, contexts, modules, allocation.
 * Each exported name is its own function; versioned variants are wrappers
 * around one static implementation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simgpu.h"

/* Tells programs (trainsim) that this is the simulator. */
__attribute__((visibility("default")))
const char simgpu_version[] = "idlegap simgpu 1";

static CUresult dev_check(CUdevice d)
{
	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (d < 0 || d >= sim.cfg.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

/* Shaped like a large data-center part; values only need to be plausible. */
static int attribute(CUdevice_attribute a, CUdevice d)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		return 49152;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
		return 1980000;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		return 132;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return 9;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		return 2048;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
		return 2;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		return 0x10 + sim.cfg.phys[d];
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		return 50 << 20;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
		return 1;
	default:
		return 0;
	}
}

SIM_IMPL ctx_create(CUcontext *p, unsigned int flags, CUdevice dev)
{
	struct ctx *c;
	CUresult r;

	if ((r = dev_check(dev)))
		return r;
	if (!p || (flags & ~(unsigned int)CU_CTX_FLAGS_MASK))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	c = ctx_new(dev, flags, false);
	sim_unlock();
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_set_current(c);
	*p = (CUcontext)c;
	return CUDA_SUCCESS;
}

SIM_IMPL primary_release(CUdevice dev)
{
	CUresult r;
	struct ctx *c;

	if ((r = dev_check(dev)))
		return r;
	sim_lock();
	c = sim.primary[dev];
	if (!c || c->refs <= 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		c->refs--;
	sim_unlock();
	return r;
}

SIM_IMPL ctx_sync(CUcontext h)
{
	struct ctx *c = (struct ctx *)h;
	CUresult r;
	bool ok;

	if (!c && (r = ctx_need(&c)))
		return r;
	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	ok = reg_has(c, OBJ_CTX);
	sim_unlock();
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_wait_all(c);
	return CUDA_SUCCESS;
}

/* ---- modules ------------------------------------------------------------- */

static bool is_ident(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '$';
}

static bool ptx_has_entry(const char *ptx, const char *name)
{
	size_t n = strlen(name);
	const char *p = ptx;

	while ((p = strstr(p, ".entry"))) {
		p += 6;
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!strncmp(p, name, n) && !is_ident(p[n]))
			return true;
	}
	return false;
}

/* ELF cubins and fatbins are taken on trust: any kernel name resolves.
 * PTX text must declare the entry. */
SIM_IMPL module_load(CUmodule *out, const void *image)
{
	const unsigned char *b = image;
	struct module *m;
	struct ctx *c;
	CUresult r;
	uint32_t magic;

	if ((r = ctx_need(&c)))
		return r;
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(&magic, b, sizeof(magic));
	if (memcmp(b, "\177ELF", 4) && magic != 0xba55ed50u) {
		if (!strstr(image, ".version") || !strstr(image, ".target")) {
			free(m);
			return CUDA_ERROR_INVALID_IMAGE;
		}
		m->ptx = strdup(image);
	}
	m->ctx = c;
	sim_lock();
	reg_add(m, OBJ_MODULE);
	sim_unlock();
	*out = (CUmodule)m;
	return CUDA_SUCCESS;
}

SIM_IMPL module_function(CUfunction *out, CUmodule h, const char *name)
{
	struct module *m = (struct module *)h;
	struct func *f;
	CUresult r = CUDA_SUCCESS;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!reg_has(m, OBJ_MODULE)) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	for (f = m->funcs; f; f = f->next)
		if (!strcmp(f->name, name))
			goto found;
	if (m->ptx && !ptx_has_entry(m->ptx, name)) {
		r = CUDA_ERROR_NOT_FOUND;
		goto out;
	}
	f = calloc(1, sizeof(*f) + strlen(name) + 1);
	if (!f) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	strcpy(f->name, name);
	f->mod = m;
	f->spin = !strcmp(name, "idlegap_spin");
	f->hook = !strcmp(name, "simgpu_hook");
	f->next = m->funcs;
	m->funcs = f;
	reg_add(f, OBJ_FUNC);
found:
	*out = (CUfunction)f;
out:
	sim_unlock();
	return r;
}

/* ---- exported: init and devices ------------------------------------------ */

SIM_EXPORT CUresult cuInit(unsigned int Flags)
{
	return sim_init(Flags);
}

SIM_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = dev_check(ordinal)))
		return r;
	*device = ordinal;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetCount(int *count)
{
	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim.cfg.ndev;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r;

	if ((r = dev_check(dev)))
		return r;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", SIM_DEVICE_NAME);
	return CUDA_SUCCESS;
}

/* The UUID NVML gives the physical GPU behind the ordinal. */
SIM_IMPL device_uuid(CUuuid *uuid, CUdevice dev)
{
	CUresult r;

	if ((r = dev_check(dev)))
		return r;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	simm_uuid_bytes((unsigned int)sim.cfg.phys[dev],
			(unsigned char *)uuid->bytes);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return device_uuid(uuid, dev);
}

SIM_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return device_uuid(uuid, dev);
}

SIM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
					 CUdevice dev)
{
	CUresult r;

	if ((r = dev_check(dev)))
		return r;
	if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = attribute(attrib, dev);
	return CUDA_SUCCESS;
}

/* ---- exported: contexts -------------------------------------------------- */

SIM_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags,
				CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
				   CUdevice dev)
{
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx,
				   CUexecAffinityParam *paramsArray,
				   int numParams, unsigned int flags,
				   CUdevice dev)
{
	if (numParams < 0 || (numParams && !paramsArray))
		return sim_ready() ? CUDA_ERROR_INVALID_VALUE
				   : CUDA_ERROR_NOT_INITIALIZED;
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx,
				   CUctxCreateParams *ctxCreateParams,
				   unsigned int flags, CUdevice dev)
{
	(void)ctxCreateParams;
	return ctx_create(pctx, flags, dev);
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r;
	struct ctx *c;

	if ((r = dev_check(dev)))
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	c = sim.primary[dev];
	if (!c)
		c = sim.primary[dev] = ctx_new(dev, 0, true);
	if (c)
		c->refs++;
	sim_unlock();
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return primary_release(dev);
}

SIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return primary_release(dev);
}

SIM_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	bool ok;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	ok = !ctx || reg_has(ctx, OBJ_CTX);
	sim_unlock();
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_set_current((struct ctx *)ctx);
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)ctx_current();
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuCtxSynchronize(void)
{
	return ctx_sync(NULL);
}

SIM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	return ctx_sync(ctx);
}

/* ---- exported: modules --------------------------------------------------- */

SIM_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	return module_load(module, image);
}

SIM_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
				       unsigned int numOptions,
				       CUjit_option *options,
				       void **optionValues)
{
	(void)numOptions;
	(void)options;
	(void)optionValues;
	return module_load(module, image);
}

SIM_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
					const char *name)
{
	return module_function(hfunc, hmod, name);
}

/* ---- exported: memory allocation ----------------------------------------- */

SIM_IMPL mem_alloc(CUdeviceptr *p, size_t n, bool low32)
{
	struct ctx *c;
	CUresult r;

	if ((r = ctx_need(&c)))
		return r;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return dev_alloc(p, n, low32);
}

SIM_IMPL mem_free(CUdeviceptr p)
{
	struct ctx *c;

	return ctx_need(&c) ?: dev_free(p);
}

SIM_IMPL mem_alloc_host(void **pp, size_t n)
{
	struct ctx *c;
	CUresult r;

	if ((r = ctx_need(&c)))
		return r;
	if (!pp)
		return CUDA_ERROR_INVALID_VALUE;
	return host_alloc(pp, n);
}

SIM_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	CUdeviceptr p;
	CUresult r;

	if (!dptr)
		return mem_alloc(NULL, bytesize, true);
	if ((r = mem_alloc(&p, bytesize, true)))
		return r;
	*dptr = (CUdeviceptr_v1)p;
	return CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return mem_alloc(dptr, bytesize, false);
}

SIM_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	return mem_free((CUdeviceptr)dptr);
}

SIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return mem_free(dptr);
}

SIM_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return mem_alloc_host(pp, bytesize);
}

SIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return mem_alloc_host(pp, bytesize);
}

SIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize,
				   unsigned int Flags)
{
	if (Flags & ~(unsigned int)(CU_MEMHOSTALLOC_PORTABLE |
				    CU_MEMHOSTALLOC_DEVICEMAP |
				    CU_MEMHOSTALLOC_WRITECOMBINED))
		return sim_ready() ? CUDA_ERROR_INVALID_VALUE
				   : CUDA_ERROR_NOT_INITIALIZED;
	return mem_alloc_host(pp, bytesize);
}

SIM_EXPORT CUresult cuMemFreeHost(void *p)
{
	struct ctx *c;

	return ctx_need(&c) ?: host_free(p);
}
