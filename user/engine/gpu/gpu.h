/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GPU model's parts, for one another only:
 *   gpu.c       devices and streams: a stream's pending interval opens on
 *               a submission and closes when a sync or query proves it
 *               empty; closed intervals and busy evidence wait on the device
 *   drain.c     CUDA call records into those stream openings and closings
 *   sweep.c     the sweep that finalises a device's timeline up to the
 *               watermark and hands gaps and unresolved pieces on
 */
#ifndef IG_ENGINE_GPU_H
#define IG_ENGINE_GPU_H

#include "engine/model.h"

/* ---- gpu.c ---- */
/* The stream @key of @p, created on its process's device; NULL on ENOMEM. */
struct ig_stream *ig_gpu_stream_get(struct ig_engine *e, struct ig_process *p,
				 uint64_t key);
/* A new stream @key of @p on device @d (carried in); NULL on ENOMEM. */
struct ig_stream *ig_gpu_stream_new(struct ig_process *p, uint64_t key,
				    struct ig_device *d);
/* The device's first submission: its counted span starts at @ts. */
void ig_gpu_dev_activate(struct ig_device *d, uint64_t ts);
/* Work submitted at @t by @tid: pending, known so until @pending_until. */
void ig_gpu_stream_open(struct ig_stream *s, uint64_t t, uint64_t pending_until,
			uint32_t tid, uint32_t tgid);
/* A finished pending interval [t0, t1] (tid 0: lost evidence). */
void ig_gpu_add_closed(struct ig_device *d, uint64_t t0, uint64_t t1,
		       uint32_t tid, uint32_t tgid, uint32_t how);
/* The device was proven busy over [t0, t1]. */
void ig_gpu_add_busy(struct ig_device *d, uint64_t t0, uint64_t t1);
/* The stream is proven empty at t (how: enum ig_bound). */
void ig_gpu_stream_close(struct ig_stream *s, uint64_t t, uint32_t how);

/* ---- sweep.c ---- */
/* Finalise the device's timeline as far as every stream's state is known. */
void ig_sweep_advance(struct ig_engine *e, struct ig_device *d);

#endif
