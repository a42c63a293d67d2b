/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workload identity of a process, read on the node alone (no API server):
 * the Kubernetes pod and container from its cgroup path, the pod name from
 * its HOSTNAME and the namespace from the projected service-account volume,
 * the Slurm job and step from the cgroup path or its environment, the
 * torchrun rank and the CUDA devices it may see from its environment.
 *
 * Everything here comes from the process itself, so it is untrusted: each
 * field keeps only values of its own shape (a pod UID, hex container ids,
 * digits for ranks, a DNS label for the namespace); anything else leaves
 * the field empty.  Every field is a NUL-terminated string, "" when unknown.
 */
#ifndef IG_IDENTITY_H
#define IG_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>

struct ig_identity {
	char pod_uid[40];	/* 8-4-4-4-12, or a static pod's 32 hex */
	char container[72];	/* container id, hex */
	char runtime[16];	/* "containerd", "cri-o", "docker", "podman" or "" */
	char pod[64];		/* HOSTNAME, when in a pod */
	char namespace[64];
	char slurm_job[24];
	char slurm_step[24];	/* "0", "batch", "extern"... */
	char rank[12];
	char local_rank[12];
	char world_size[12];
	char cuda_visible[256];	/* CUDA_VISIBLE_DEVICES as set */
	char nvidia_visible[256];	/* NVIDIA_VISIBLE_DEVICES: a container's GPUs */
	char comm[68];		/* escaped (escape.h) */
};

/*
 * Fills @id for @pid from @proc_root ("/proc" when NULL): cgroup, environ,
 * comm, and the namespace file under PID/root.  Fields it cannot read stay
 * "".  0, or -ENOENT when the process is gone (nothing read at all).
 */
int ig_identity_read(const char *proc_root, pid_t pid, struct ig_identity *id);

/* The parsers ig_identity_read uses, on the file contents (any bytes,
 * not NUL-terminated); each fills only the fields it finds. */
void ig_identity_parse_cgroup(const char *buf, size_t len,
			      struct ig_identity *id);
void ig_identity_parse_environ(const char *buf, size_t len,
			       struct ig_identity *id);
void ig_identity_parse_namespace(const char *buf, size_t len,
				 struct ig_identity *id);

/*
 * The host GPU behind the process's device @ordinal, named so that two
 * processes name one GPU alike and two GPUs differently: a GPU-/MIG-
 * UUID, "#N" for the host's index N, or "C:<container>/N" for ordinal N
 * of a container whose GPUs are not named in its environment.  Through
 * CUDA_VISIBLE_DEVICES, then NVIDIA_VISIBLE_DEVICES (the container's
 * GPUs, "all": the host's).  "" when the ordinal is past what the
 * process may see (@tok is @n bytes, 80 are enough).
 */
/* Device numbers in the agent's window reports: below IG_GPU_NAMED the
 * host's index; IG_GPU_NAMED + i the window's i-th GPU named only by a
 * UUID or a container. */
#define IG_GPU_NAMED		1000
#define IG_GPU_MAX_NAMED	1024
#define IG_MAX_DEVICE_ID	(IG_GPU_NAMED + IG_GPU_MAX_NAMED)
void ig_identity_gpu_token(const struct ig_identity *id, unsigned int ordinal,
			   char *tok, size_t n);

/*
 * The same as labels: the nvidia-smi index (as DCGM's `gpu` label) into
 * @gpu, or a GPU-/MIG- UUID into @uuid.  Each "" when unknown.
 */
void ig_identity_gpu(const struct ig_identity *id, unsigned int ordinal,
		     char *gpu, size_t ngpu, char *uuid, size_t nuuid);

#endif
