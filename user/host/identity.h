/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workload identity of a process, read on the node alone (no API server),
 * from what the workload cannot change where that exists (docs/design.md §7.7):
 * the pod UID and container id from the outermost kubepods cgroup the
 * kubelet made (cgroups the workload nests below its own are ignored); the
 * pod name and namespace from the container runtime's record of that
 * container (its OCI config.json annotations, under the node root), and
 * only when the record's pod UID is the cgroup's; the Slurm job and step
 * from the cgroup slurmd made.  What only the process says (its
 * environment: the torchrun rank, CUDA_VISIBLE_DEVICES, a Slurm job
 * without a cgroup, NVIDIA_VISIBLE_DEVICES without a runtime record) is
 * kept but flagged in @self.  Never HOSTNAME or a file in the container's
 * own mount namespace.
 *
 * Every field keeps only values of its own shape (a pod UID, hex container
 * ids, digits for ranks, DNS names); anything else leaves the field empty.
 * Every field is a NUL-terminated string, "" when unknown.
 */
#ifndef IG_IDENTITY_H
#define IG_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct ig_identity {
	char pod_uid[40];	/* 8-4-4-4-12, or a static pod's 32 hex */
	char container[72];	/* container id, hex */
	char runtime[16];	/* "containerd", "cri-o", "docker", "podman" or "" */
	char pod[64];		/* the runtime record's pod name */
	char namespace[64];	/* the runtime record's namespace */
	char slurm_job[24];
	char slurm_step[24];	/* "0", "batch", "extern"... */
	char rank[12];
	char local_rank[12];
	char world_size[12];
	char cuda_visible[256];	/* CUDA_VISIBLE_DEVICES as set */
	char nvidia_visible[256];	/* NVIDIA_VISIBLE_DEVICES: a container's GPUs */
	char comm[68];		/* escaped (escape.h) */
	unsigned int self;	/* IG_SELF_*: fields the process reported itself */
};

#define IG_SELF_RANK	1u	/* rank, local_rank, world_size: environment */
#define IG_SELF_SLURM	2u	/* slurm_job, slurm_step: environment */
#define IG_SELF_NVIDIA	4u	/* nvidia_visible: environment, not the runtime */

/*
 * Where the node's records are read (the container runtimes' task
 * directories under ROOT/run): "/" (the default) on the node or a
 * DaemonSet that mounts them at their own paths; a fixture tree in tests.
 * Not thread-safe: set once, before reading.
 */
void ig_identity_set_node_root(const char *root);

/*
 * The runtime's record of container @cid (hex) into @id's pod, namespace
 * and, from its process environment, nvidia_visible, when the record's
 * pod UID is @id->pod_uid: the JSON of an OCI config.json, any bytes.
 */
void ig_identity_parse_runtime(const char *buf, size_t len,
			       struct ig_identity *id);

/*
 * Fills @id for @pid from @proc_root ("/proc" when NULL): cgroup, environ
 * and comm; then the runtime's record of its container under the node
 * root.  Fields it cannot read stay "".  0, or -ENOENT when the process is
 * gone (nothing read at all).
 */
int ig_identity_read(const char *proc_root, pid_t pid, struct ig_identity *id);

/*
 * The IDENT record of @pid at @ts (identity_rec.c): only what the node
 * vouches for, from its cgroup (under @proc_root, "/proc" when NULL) and
 * the runtime's record of its container.  0, -ENOENT when it is in no pod
 * nor container, or the -errno of reading its cgroup.
 */
struct ig_ident;
int ig_identity_record(struct ig_ident *r, const char *proc_root, pid_t pid,
		       __u64 ts);
/* The runtime records ig_identity_record() keeps, by container, are
 * forgotten (the node root changed).  Neither is thread-safe. */
void ig_identity_record_forget(void);

/* The parsers ig_identity_read uses, on the file contents (any bytes,
 * not NUL-terminated); each fills only the fields it finds. */
void ig_identity_parse_cgroup(const char *buf, size_t len,
			      struct ig_identity *id);
void ig_identity_parse_environ(const char *buf, size_t len,
			       struct ig_identity *id);

/* Whether the GPU labels of @ordinal rest on what the process says: a
 * CUDA_VISIBLE_DEVICES UUID, or an index read through an environment's
 * NVIDIA_VISIBLE_DEVICES or on the host. */
int ig_identity_gpu_self(const struct ig_identity *id, unsigned int ordinal);

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
