// SPDX-License-Identifier: GPL-2.0
/*
 * Entry points: streams, events, kernel launches.  The _ptsz variants differ
 * from the plain ones only in what stream handle 0 means.
 */
#include <stdlib.h>

#include "simgpu.h"

/* ---- streams ------------------------------------------------------------- */

SIM_IMPL stream_create(CUstream *ph, unsigned int flags, int priority)
{
	struct ctx *c;
	struct stream *s;
	CUresult r;

	if ((r = ctx_need(&c)))
		return r;
	if (!ph || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	/* Priorities range from 0 (lowest) to -5, and are clamped. */
	priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
	sim_lock();
	s = stream_new(c, STREAM_USER, flags, priority);
	sim_unlock();
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

SIM_IMPL stream_destroy(CUstream h)
{
	bool ok;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	ok = reg_has(h, OBJ_STREAM);
	sim_unlock();
	if (!ok)
		return CUDA_ERROR_INVALID_HANDLE;
	stream_retire((struct stream *)h);
	return CUDA_SUCCESS;
}

SIM_IMPL stream_synchronize(CUstream h, bool ptds)
{
	struct stream *s;
	CUresult r;

	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	stream_sync(s);
	return CUDA_SUCCESS;
}

SIM_IMPL stream_query(CUstream h, bool ptds)
{
	struct stream *s;
	CUresult r;

	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	return stream_idle(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

SIM_IMPL stream_wait_event(CUstream h, CUevent ev, unsigned int flags,
				  bool ptds)
{
	struct event *e = (struct event *)ev;
	struct stream *s;
	struct dep d = { NULL, 0 };
	CUresult r;

	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	if (flags & ~(unsigned int)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!reg_has(e, OBJ_EVENT))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (e->recorded)
		d = (struct dep){ e->s, e->seq };
	sim_unlock();
	if (r || !d.seq)
		return r;
	/* A zero-length marker that carries the dependency, so that later
	 * work and synchronizations of s wait for the event. */
	return stream_submit(s, OP_MARKER, 0, &d, NULL, NULL);
}

/* ---- events -------------------------------------------------------------- */

SIM_IMPL event_create(CUevent *ph, unsigned int flags)
{
	struct ctx *c;
	struct event *e;
	CUresult r;

	if ((r = ctx_need(&c)))
		return r;
	if (!ph || (flags & ~(unsigned int)(CU_EVENT_BLOCKING_SYNC |
					    CU_EVENT_DISABLE_TIMING |
					    CU_EVENT_INTERPROCESS)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & CU_EVENT_INTERPROCESS) &&
	    !(flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->flags = flags;
	e->refs = 1;
	sim_lock();
	reg_add(e, OBJ_EVENT);
	sim_unlock();
	*ph = (CUevent)e;
	return CUDA_SUCCESS;
}

SIM_IMPL event_record(CUevent ev, CUstream h, unsigned int flags,
			     bool ptds)
{
	struct event *e = (struct event *)ev;
	struct stream *s;
	CUresult r;
	bool kick = false;

	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	if (flags & ~(unsigned int)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!reg_has(e, OBJ_EVENT)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		e->gen++;
		r = submit_locked(s, OP_MARKER, 0, NULL, e, &e->seq, &kick);
		if (!r) {
			e->s = s;
			e->recorded = true;
			e->done = false;
		} else {
			e->gen--;
		}
	}
	sim_unlock();
	if (kick)
		stream_kick(s);
	return r;
}

SIM_IMPL event_query(CUevent ev)
{
	struct event *e = (struct event *)ev;
	CUresult r = CUDA_SUCCESS;
	uint64_t end;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	if (!reg_has(e, OBJ_EVENT))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (e->recorded && !stream_reached(e->s, e->seq, &end))
		r = CUDA_ERROR_NOT_READY;
	sim_unlock();
	return r;
}

SIM_IMPL event_synchronize(CUevent ev)
{
	struct event *e = (struct event *)ev;
	struct dep d;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	if (!reg_has(e, OBJ_EVENT)) {
		sim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	d = (struct dep){ e->s, e->seq };
	deps_wait(&d, e->recorded && e->s->completed < e->seq ? 1 : 0);
	return CUDA_SUCCESS;
}

/* sim.lock held.  When the event's last record was reached, even if its
 * device thread has not marked it yet. */
static bool event_time(struct event *e, uint64_t *ts)
{
	if (e->done) {
		*ts = e->ts;
		return true;
	}
	return stream_reached(e->s, e->seq, ts);
}

SIM_IMPL event_elapsed(float *ms, CUevent hs, CUevent he)
{
	struct event *a = (struct event *)hs, *b = (struct event *)he;
	CUresult r = CUDA_SUCCESS;
	uint64_t ta, tb;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (!reg_has(a, OBJ_EVENT) || !reg_has(b, OBJ_EVENT) ||
	    ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) ||
	    !a->recorded || !b->recorded)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (!event_time(a, &ta) || !event_time(b, &tb))
		r = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)(((double)tb - (double)ta) / 1e6);
	sim_unlock();
	return r;
}

SIM_IMPL event_destroy(CUevent ev)
{
	struct event *e = (struct event *)ev;
	CUresult r = CUDA_SUCCESS;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	if (!reg_has(e, OBJ_EVENT)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		reg_del(e);
		e->destroyed = true;
		event_unref(e);
	}
	sim_unlock();
	return r;
}

/* ---- launches ------------------------------------------------------------ */

/* idlegap_spin's first parameter is its duration in ns. */
static bool spin_ns(void **params, void **extra, uint64_t *ns)
{
	void *buf = NULL;
	size_t size = 0;

	if (params) {
		if (!params[0])
			return false;
		*ns = *(const unsigned long long *)params[0];
		return true;
	}
	for (; extra && extra[0] != CU_LAUNCH_PARAM_END; extra += 2) {
		if (extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[1];
		else if (extra[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[1])
			size = *(const size_t *)extra[1];
		else
			return false;
	}
	if (!buf || size < sizeof(unsigned long long))
		return false;
	*ns = *(const unsigned long long *)buf;
	return true;
}

SIM_IMPL launch(CUfunction hf, unsigned int gx, unsigned int gy,
		       unsigned int gz, unsigned int bx, unsigned int by,
		       unsigned int bz, CUstream h, void **params,
		       void **extra, bool ptds)
{
	struct func *f = (struct func *)hf;
	struct stream *s;
	uint64_t dur = sim.cfg.kernel_ns;
	sim_hook_fn fn = NULL;
	void *arg = NULL;
	CUresult r;
	bool ok;

	if (!sim_ready())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx_current())
		return CUDA_ERROR_INVALID_CONTEXT;
	sim_lock();
	ok = reg_has(f, OBJ_FUNC);
	sim_unlock();
	if (!ok)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gx || !gy || !gz || !bx || !by || !bz ||
	    (uint64_t)bx * by * bz > 1024 || (params && extra))
		return CUDA_ERROR_INVALID_VALUE;
	if (f->spin && !spin_ns(params, extra, &dur))
		return CUDA_ERROR_INVALID_VALUE;
	if (f->hook && !hook_params(params, &fn, &arg))
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = stream_resolve(h, ptds, &s)))
		return r;
	if (f->mod->ctx != s->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	burn_ns(sim.cfg.launch_ns);
	if (fn)
		return hook_submit(s, fn, arg);
	return stream_submit(s, OP_KERNEL, dur, NULL, NULL, NULL);
}

SIM_IMPL launch_ex(const CUlaunchConfig *c, CUfunction f,
			  void **params, void **extra, bool ptds)
{
	if (!c)
		return sim_ready() ? CUDA_ERROR_INVALID_VALUE
				   : CUDA_ERROR_NOT_INITIALIZED;
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
		      c->blockDimY, c->blockDimZ, c->hStream, params, extra,
		      ptds);
}

/* ---- exported ------------------------------------------------------------ */

SIM_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return stream_create(phStream, Flags, 0);
}

SIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream,
					       unsigned int flags, int priority)
{
	return stream_create(phStream, flags, priority);
}

SIM_EXPORT CUresult cuStreamDestroy(CUstream hStream)
{
	return stream_destroy(hStream);
}

SIM_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
	return stream_destroy(hStream);
}

SIM_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
	return stream_synchronize(hStream, false);
}

SIM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
	return stream_synchronize(hStream, true);
}

SIM_EXPORT CUresult cuStreamQuery(CUstream hStream)
{
	return stream_query(hStream, false);
}

SIM_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream)
{
	return stream_query(hStream, true);
}

SIM_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
				      unsigned int Flags)
{
	return stream_wait_event(hStream, hEvent, Flags, false);
}

SIM_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
					   unsigned int Flags)
{
	return stream_wait_event(hStream, hEvent, Flags, true);
}

SIM_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	return event_create(phEvent, Flags);
}

SIM_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	return event_record(hEvent, hStream, 0, false);
}

SIM_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return event_record(hEvent, hStream, 0, true);
}

SIM_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
					   unsigned int flags)
{
	return event_record(hEvent, hStream, flags, false);
}

SIM_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent,
						CUstream hStream,
						unsigned int flags)
{
	return event_record(hEvent, hStream, flags, true);
}

SIM_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
	return event_query(hEvent);
}

SIM_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
	return event_synchronize(hEvent);
}

SIM_EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
				       CUevent hEnd)
{
	return event_elapsed(pMilliseconds, hStart, hEnd);
}

SIM_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds,
					  CUevent hStart, CUevent hEnd)
{
	return event_elapsed(pMilliseconds, hStart, hEnd);
}

SIM_EXPORT CUresult cuEventDestroy(CUevent hEvent)
{
	return event_destroy(hEvent);
}

SIM_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
	return event_destroy(hEvent);
}

SIM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
				   unsigned int gridDimY,
				   unsigned int gridDimZ,
				   unsigned int blockDimX,
				   unsigned int blockDimY,
				   unsigned int blockDimZ,
				   unsigned int sharedMemBytes,
				   CUstream hStream, void **kernelParams,
				   void **extra)
{
	(void)sharedMemBytes;
	return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
		      blockDimZ, hStream, kernelParams, extra, false);
}

SIM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
					unsigned int gridDimY,
					unsigned int gridDimZ,
					unsigned int blockDimX,
					unsigned int blockDimY,
					unsigned int blockDimZ,
					unsigned int sharedMemBytes,
					CUstream hStream, void **kernelParams,
					void **extra)
{
	(void)sharedMemBytes;
	return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
		      blockDimZ, hStream, kernelParams, extra, true);
}

SIM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config,
				     CUfunction f, void **kernelParams,
				     void **extra)
{
	return launch_ex(config, f, kernelParams, extra, false);
}

SIM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config,
					  CUfunction f, void **kernelParams,
					  void **extra)
{
	return launch_ex(config, f, kernelParams, extra, true);
}
