// SPDX-License-Identifier: GPL-2.0
/*
 * Workload identity (identity.c) on fixture /proc trees built in a
 * temporary directory: cgroup files in the shapes real nodes write
 * (containerd, CRI-O, docker; cgroupfs and systemd drivers; v1 and v2;
 * kind; a cgroup namespace; Slurm v1 and v2), environments from torchrun
 * and Slurm, the runtimes' records of their containers under a fixture
 * node root, and hostile input: a workload's nested cgroups, its forged
 * environment and its own service-account files never name another pod.
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
#include <sys/stat.h>
#include <unistd.h>
#include "host/identity.h"
#include "stream/records.h"

#define UID	"1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b"
#define UIDU	"1f0e4b1c_2d3a_4e5f_8a9b_0c1d2e3f4a5b"
#define CID	"3c5a8e1f9b2d4c6e8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f"

struct fixture {
	const char *name;
	const char *cgroup;
	const char *environ;	/* '\n' stands for NUL */
	const char *record;	/* the runtime's config.json, or NULL */
	const char *pod_uid, *container, *runtime, *pod, *namespace;
	const char *job, *step, *rank, *local_rank, *world;
	unsigned int self;
};

#define REC(uid, name, ns) "{\"annotations\": {\"io.kubernetes.cri.sandbox-uid\": \"" \
	uid "\", \"io.kubernetes.cri.sandbox-name\": \"" name "\", " \
	"\"io.kubernetes.cri.sandbox-namespace\": \"" ns "\"}}"
#define CRIO(uid, name, ns) "{\"annotations\": {\"io.kubernetes.pod.uid\": \"" \
	uid "\", \"io.kubernetes.pod.name\": \"" name "\", " \
	"\"io.kubernetes.pod.namespace\": \"" ns "\"}}"
#define UID2	"99999999-2d3a-4e5f-8a9b-0c1d2e3f4a5b"
#define CID2	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

static const struct fixture fixtures[] = {
	{ "containerd, systemd driver, v2",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  UIDU ".slice/cri-containerd-" CID ".scope\n",
	  "PATH=/usr/bin\nHOSTNAME=trainer-7d9f-abcde\nRANK=3\nLOCAL_RANK=1\n"
	  "WORLD_SIZE=16\n", REC(UID, "trainer-7d9f-abcde", "ml-team"),
	  UID, CID, "containerd", "trainer-7d9f-abcde", "ml-team",
	  "", "", "3", "1", "16", IG_SELF_RANK },
	{ "containerd, cgroupfs driver, v1, many controllers",
	  "12:memory:/kubepods/burstable/pod" UID "/" CID "\n"
	  "11:cpu,cpuacct:/kubepods/burstable/pod" UID "/" CID "\n"
	  "1:name=systemd:/kubepods/burstable/pod" UID "/" CID "\n",
	  "HOSTNAME=web-0\n", REC(UID, "web-0", "default"),
	  UID, CID, "", "web-0", "default", "", "", "", "", "", 0 },
	{ "CRI-O, systemd driver, guaranteed QoS, conmon sibling",
	  "0::/kubepods.slice/kubepods-pod" UIDU ".slice/crio-" CID ".scope\n",
	  "HOSTNAME=forged\n", CRIO(UID, "infer-1", "serving"),
	  UID, CID, "cri-o", "infer-1", "serving", "", "", "", "", "", 0 },
	{ "CRI-O conmon is not the container",
	  "0::/kubepods.slice/kubepods-pod" UIDU ".slice/crio-conmon-" CID
	  ".scope\n", "", NULL,
	  UID, "", "", "", "", "", "", "", "", "", 0 },
	{ "docker shim, systemd driver, besteffort",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	  UIDU ".slice/docker-" CID ".scope\n", "HOSTNAME=x\n", NULL,
	  UID, CID, "docker", "", "", "", "", "", "", "", 0 },
	{ "kind: a pod in a node container, systemd inside",
	  "0::/system.slice/docker-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaa.scope/kubelet.slice/kubelet-kubepods.slice/"
	  "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod"
	  UIDU ".slice/cri-containerd-" CID ".scope\n", "", NULL,
	  UID, CID, "containerd", "", "", "", "", "", "", "", 0 },
	{ "read from inside another cgroup namespace",
	  "0::/../../kubepods-burstable-pod" UIDU ".slice/cri-containerd-"
	  CID ".scope\n", "", NULL,
	  UID, CID, "containerd", "", "", "", "", "", "", "", 0 },
	{ "static pod: a 32-hex config hash",
	  "0::/kubepods/besteffort/pod0123456789abcdef0123456789abcdef/" CID
	  "\n", "", NULL,
	  "0123456789abcdef0123456789abcdef", CID, "", "", "", "", "", "", "",
	  "", 0 },
	{ "plain docker, v1, no pod: HOSTNAME is not a pod name",
	  "4:memory:/docker/" CID "\n", "HOSTNAME=3c5a8e1f9b2d\n", NULL,
	  "", CID, "", "", "", "", "", "", "", "", 0 },
	{ "Slurm, cgroup v1",
	  "7:devices:/slurm/uid_1000/job_4242/step_0/task_1\n"
	  "4:memory:/slurm/uid_1000/job_4242/step_0/task_1\n",
	  "SLURM_JOB_ID=999\nSLURM_STEP_ID=7\nRANK=0\n", NULL,
	  "", "", "", "", "", "4242", "0", "0", "", "", IG_SELF_RANK },
	{ "Slurm, cgroup v2, batch step",
	  "0::/system.slice/slurmstepd.scope/job_31337/step_batch/user/task_0\n",
	  "", NULL, "", "", "", "", "", "31337", "batch", "", "", "", 0 },
	{ "Slurm, cgroup v2, multiple slurmd",
	  "0::/system.slice/node7_slurmstepd.scope/job_5/step_extern/slurm\n",
	  "", NULL, "", "", "", "", "", "5", "extern", "", "", "", 0 },
	{ "Slurm without cgroup plugin: the environment",
	  "0::/user.slice/user-1000.slice/session-4.scope\n",
	  "SLURM_JOB_ID=777\nSLURM_STEP_ID=2\nWORLD_SIZE=8\n", NULL,
	  "", "", "", "", "", "777", "2", "", "", "8",
	  IG_SELF_SLURM | IG_SELF_RANK },
	{ "job_ outside Slurm is nothing",
	  "0::/user.slice/job_12/step_3\n", "", NULL,
	  "", "", "", "", "", "", "", "", "", "", 0 },
	{ "hostile values are dropped, not cut",
	  "0::/kubepods/pod" UID "/" CID "\n",
	  "HOSTNAME=a\"b\nRANK=1;drop\nLOCAL_RANK=-1\nWORLD_SIZE=\n"
	  "SLURM_JOB_ID=12345678901234567890123456789\n",
	  REC(UID, "a\\\"b", "Kube-System"),
	  UID, CID, "", "", "", "", "", "", "", "", 0 },
	{ "a pod UID of the wrong shape: no pod, and no container below it",
	  "0::/kubepods/pod1f0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5/" CID "\n"
	  "0::/kubepods/podzf0e4b1c-2d3a-4e5f-8a9b-0c1d2e3f4a5b/x\n", "", NULL,
	  "", "", "", "", "", "", "", "", "", "", 0 },
	{ "a workload's nested cgroup names another pod: the kubelet's stands",
	  "0::/kubepods/burstable/pod" UID "/" CID "/kubepods/burstable/pod"
	  UID2 "/" CID2 "\n",
	  "HOSTNAME=coredns-5d78c9869d-abcde\n", REC(UID, "trainer-0", "ml"),
	  UID, CID, "", "trainer-0", "ml", "", "", "", "", "", 0 },
	{ "the same, systemd driver, the nested one a slice",
	  "0::/kubepods.slice/kubepods-pod" UIDU ".slice/cri-containerd-" CID
	  ".scope/kubepods-pod" UIDU ".slice/cri-containerd-" CID2 ".scope\n",
	  "", NULL, UID, CID, "containerd", "", "", "", "", "", "", "", 0 },
	{ "a record of another pod names nothing",
	  "0::/kubepods/pod" UID "/" CID "\n", "",
	  REC(UID2, "coredns-5d78c9869d-abcde", "kube-system"),
	  UID, CID, "", "", "", "", "", "", "", "", 0 },
	{ "no record: HOSTNAME and the environment name no pod",
	  "0::/kubepods/pod" UID "/" CID "\n",
	  "HOSTNAME=coredns-5d78c9869d-abcde\nSLURM_JOB_ID=5\n", NULL,
	  UID, CID, "", "", "", "5", "", "", "", "", IG_SELF_SLURM },
	{ "Slurm: a job_ nested in the job's cgroup is not the job",
	  "0::/system.slice/slurmstepd.scope/job_31337/step_0/user/task_0/job_1/step_2\n",
	  "SLURM_JOB_ID=1\n", NULL,
	  "", "", "", "", "", "31337", "0", "", "", "", 0 },
	{ "no trailing newline, garbage lines",
	  "garbage\n::\n:::::\n0::/kubepods/pod" UID, "", NULL,
	  UID, "", "", "", "", "", "", "", "", "", 0 },
};

static void put(const char *dir, const char *name, const char *s, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, n, f), n);
	fclose(f);
}

static void make_tree(const char *root, int pid, const struct fixture *fx)
{
	char dir[512], sa[700], rec[800], *env = strdup(fx->environ), *p;

	snprintf(dir, sizeof(dir), "%s/%d", root, pid);
	assert_int_equal(mkdir(dir, 0700), 0);
	put(dir, "cgroup", fx->cgroup, strlen(fx->cgroup));
	for (p = env; *p; p++)
		if (*p == '\n')
			*p = '\0';
	put(dir, "environ", env, strlen(fx->environ));
	free(env);
	put(dir, "comm", "python3\n", 8);
	/* the container's own service-account file: never read */
	snprintf(sa, sizeof(sa), "mkdir -p %s/root/var/run/secrets/"
		 "kubernetes.io/serviceaccount", dir);
	assert_int_equal(system(sa), 0);
	put(dir, "root/var/run/secrets/kubernetes.io/serviceaccount/namespace",
	    "kube-system\n", 12);
	if (!fx->record)
		return;
	snprintf(sa, sizeof(sa), "%s/node/run/%s/%s", dir,
		 !strcmp(fx->runtime, "cri-o") ? "containers/storage/overlay-containers" :
		 "containerd/io.containerd.runtime.v2.task/k8s.io", fx->container);
	snprintf(rec, sizeof(rec), "mkdir -p %s%s", sa,
		 !strcmp(fx->runtime, "cri-o") ? "/userdata" : "");
	assert_int_equal(system(rec), 0);
	snprintf(rec, sizeof(rec), "%s%s", sa,
		 !strcmp(fx->runtime, "cri-o") ? "/userdata" : "");
	put(rec, "config.json", fx->record, strlen(fx->record));
}

static void test_fixtures(void **state)
{
	char root[] = "/tmp/ig-identity-XXXXXX", cmd[64], node[600];
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *fx = &fixtures[i];
		struct ig_identity id;

		print_message("# %s\n", fx->name);
		make_tree(root, 100 + (int)i, fx);
		snprintf(node, sizeof(node), "%s/%d/node", root, 100 + (int)i);
		ig_identity_set_node_root(node);
		assert_int_equal(ig_identity_read(root, 100 + (int)i, &id), 0);
		assert_string_equal(id.pod_uid, fx->pod_uid);
		assert_string_equal(id.container, fx->container);
		assert_string_equal(id.runtime, fx->runtime);
		assert_string_equal(id.pod, fx->pod);
		assert_string_equal(id.namespace, fx->namespace);
		assert_string_equal(id.slurm_job, fx->job);
		assert_string_equal(id.slurm_step, fx->step);
		assert_string_equal(id.rank, fx->rank);
		assert_string_equal(id.local_rank, fx->local_rank);
		assert_string_equal(id.world_size, fx->world);
		assert_string_equal(id.comm, "python3");
		assert_int_equal(id.self, fx->self);
	}
	ig_identity_set_node_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_gone_and_self(void **state)
{
	struct ig_identity id;

	(void)state;
	assert_int_equal(ig_identity_read("/nonexistent", 1, &id), -ENOENT);
	assert_string_equal(id.comm, "");
	/* the real /proc: this process has a comm and a cgroup */
	assert_int_equal(ig_identity_read(NULL, getpid(), &id), 0);
	assert_string_equal(id.comm, "test_identity");
}

static void test_comm_escaped(void **state)
{
	char root[] = "/tmp/ig-identity-XXXXXX", dir[600], cmd[64];
	struct ig_identity id;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/7", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put(dir, "comm", "a\x1b]0;x\xff\n", 8);
	assert_int_equal(ig_identity_read(root, 7, &id), 0);
	assert_string_equal(id.comm, "a\\x1b]0;x\\xff");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* The container's own files (its service-account namespace, reached
 * through its root) name nothing: only the runtime's record does. */
static void test_container_files_ignored(void **state)
{
	char root[] = "/tmp/ig-identity-XXXXXX", cmd[1024];
	struct ig_identity id;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p 8/root/run/secrets/kubernetes.io/serviceaccount && "
		 "echo kube-system > 8/root/run/secrets/kubernetes.io/serviceaccount/namespace && "
		 "printf '0::/kubepods/pod%s/%s\n' > 8/cgroup && "
		 "printf 'HOSTNAME=coredns-0\\0NVIDIA_VISIBLE_DEVICES=GPU-forged\\0' > 8/environ",
		 root, UID, CID);
	assert_int_equal(system(cmd), 0);
	ig_identity_set_node_root(root);
	assert_int_equal(ig_identity_read(root, 8, &id), 0);
	assert_string_equal(id.pod_uid, UID);
	assert_string_equal(id.namespace, "");
	assert_string_equal(id.pod, "");
	assert_string_equal(id.nvidia_visible, "GPU-forged");
	assert_int_equal(id.self, IG_SELF_NVIDIA);
	/* the runtime's record: its environment's GPUs replace the process's */
	snprintf(cmd, sizeof(cmd),
		 "d=%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s && mkdir -p $d && "
		 "printf '{\"process\": {\"env\": [\"PATH=/bin\", \"NVIDIA_VISIBLE_DEVICES=GPU-real\"]}, "
		 "\"annotations\": {\"io.kubernetes.cri.sandbox-uid\": \"%s\", "
		 "\"io.kubernetes.cri.sandbox-name\": \"trainer-0\", "
		 "\"io.kubernetes.cri.sandbox-namespace\": \"ml\"}}' > $d/config.json",
		 root, CID, UID);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ig_identity_read(root, 8, &id), 0);
	assert_string_equal(id.namespace, "ml");
	assert_string_equal(id.pod, "trainer-0");
	assert_string_equal(id.nvidia_visible, "GPU-real");
	assert_int_equal(id.self, 0);
	assert_int_equal(ig_identity_gpu_self(&id, 0), 0);
	/* a UUID the process names itself, not the container's */
	strcpy(id.cuda_visible, "GPU-other");
	assert_int_equal(ig_identity_gpu_self(&id, 0), 1);
	strcpy(id.cuda_visible, "GPU-real");
	assert_int_equal(ig_identity_gpu_self(&id, 0), 0);
	ig_identity_set_node_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}


/* The IDENT record (identity_rec.c): the pod from the outermost kubepods
 * cgroup and the runtime's record of its container; what the process
 * says (its environment) or nests below its own cgroup names nothing. */
static void test_ident_record(void **state)
{
	char root[] = "/tmp/ig-identity-XXXXXX", cmd[2048];
	struct ig_ident r;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p 9 10 11 && "
		 "printf '0::/kubepods.slice/kubepods-pod%s.slice/cri-containerd-%s.scope/kubepods/pod%s/%s\n' > 9/cgroup && "
		 "printf 'POD_NAME=victim\\0POD_NAMESPACE=finance\\0HOSTNAME=victim\\0' > 9/environ && "
		 "printf '0::/user.slice/session-1.scope\n' > 10/cgroup && "
		 "printf 'POD_NAME=trainer-0\\0KUBERNETES_SERVICE_HOST=10.0.0.1\\0' > 10/environ && "
		 "for c in %s %s; do mkdir -p run/containerd/io.containerd.runtime.v2.task/k8s.io/$c; done && "
		 "printf '{\"annotations\": {\"io.kubernetes.cri.sandbox-uid\": \"%s\", "
		 "\"io.kubernetes.cri.sandbox-name\": \"trainer-0\", "
		 "\"io.kubernetes.cri.sandbox-namespace\": \"ml\"}}' "
		 "> run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json && "
		 "printf '{\"annotations\": {\"io.kubernetes.cri.sandbox-uid\": \"%s\", "
		 "\"io.kubernetes.cri.sandbox-name\": \"victim\", "
		 "\"io.kubernetes.cri.sandbox-namespace\": \"finance\"}}' "
		 "> run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json",
		 root, UIDU, CID, UID2, CID2, CID, CID2, UID, CID, UID2, CID2);
	assert_int_equal(system(cmd), 0);
	ig_identity_set_node_root(root);
	ig_identity_record_forget();
	assert_int_equal(ig_identity_record(&r, root, 9, 1234), 0);
	assert_int_equal(r.h.type, IG_REC_IDENT);
	assert_int_equal(r.h.size, sizeof(r));
	assert_true(r.h.size >= ig_rec_min_size(IG_REC_IDENT) && r.h.size % 8 == 0);
	assert_string_equal(ig_rec_type_name(IG_REC_IDENT), "ident");
	assert_int_equal(r.h.tgid, 9);
	assert_int_equal(r.h.tid, 9);
	assert_int_equal(r.h.ts, 1234);
	assert_string_equal(r.pod_uid, UID);
	assert_string_equal(r.container, CID);
	assert_string_equal(r.runtime, "containerd");
	assert_string_equal(r.pod, "trainer-0");
	assert_string_equal(r.namespace, "ml");
	/* read once per container: the same names without the file */
	snprintf(cmd, sizeof(cmd), "mv %s/run %s/run.moved", root, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ig_identity_record(&r, root, 9, 1235), 0);
	assert_string_equal(r.pod, "trainer-0");
	assert_string_equal(r.namespace, "ml");
	ig_identity_record_forget();
	assert_int_equal(ig_identity_record(&r, root, 9, 1236), 0);
	assert_string_equal(r.pod, "");
	snprintf(cmd, sizeof(cmd), "mv %s/run.moved %s/run", root, root);
	assert_int_equal(system(cmd), 0);
	/* in no pod nor container: no record, whatever it says */
	assert_int_equal(ig_identity_record(&r, root, 10, 1), -ENOENT);
	/* gone */
	assert_int_equal(ig_identity_record(&r, root, 11, 1), -ENOENT);
	assert_int_equal(ig_identity_record(&r, root, 12, 1), -ENOENT);
	/* a record that names another pod leaves the name unknown */
	snprintf(cmd, sizeof(cmd), "printf '0::/kubepods/pod%s/%s\n' > %s/11/cgroup",
		 UID2, CID, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ig_identity_record(&r, root, 11, 1), 0);
	assert_string_equal(r.pod_uid, UID2);
	assert_string_equal(r.pod, "");
	assert_string_equal(r.namespace, "");
	ig_identity_set_node_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void check_gpu(const char *cvd, unsigned int ord, const char *gpu,
		      const char *uuid)
{
	struct ig_identity id = { 0 };
	char g[16], u[128];

	snprintf(id.cuda_visible, sizeof(id.cuda_visible), "%s", cvd);
	ig_identity_gpu(&id, ord, g, sizeof(g), u, sizeof(u));
	assert_string_equal(g, gpu);
	assert_string_equal(u, uuid);
}

static void test_gpu(void **state)
{
	(void)state;
	check_gpu("", 3, "3", "");
	check_gpu("2,3", 0, "2", "");
	check_gpu("2,3", 1, "3", "");
	check_gpu("2,3", 2, "", "");
	check_gpu("GPU-8f3c0a1b-1111-2222-3333-444455556666,1", 0, "",
		  "GPU-8f3c0a1b-1111-2222-3333-444455556666");
	check_gpu("MIG-GPU-8f3c0a1b/1/0", 0, "", "MIG-GPU-8f3c0a1b/1/0");
	check_gpu("-1", 0, "", "");
}

static void check_token(const char *container, const char *nv, const char *cvd,
			unsigned int ord, const char *want)
{
	struct ig_identity id = { 0 };
	char t[80];

	snprintf(id.container, sizeof(id.container), "%s", container);
	snprintf(id.nvidia_visible, sizeof(id.nvidia_visible), "%s", nv);
	snprintf(id.cuda_visible, sizeof(id.cuda_visible), "%s", cvd);
	ig_identity_gpu_token(&id, ord, t, sizeof(t));
	assert_string_equal(t, want);
}

/* Which host GPU an ordinal is: two containers that each see their own
 * GPU as 0 name two GPUs; where nothing says which, a container's GPUs
 * are its own, never the host's of the same number. */
static void test_gpu_token(void **state)
{
	static const char *const u1 = "GPU-8f3c0a1b-1111-2222-3333-444455556666";
	static const char *const u2 = "GPU-0b1c2d3e-1111-2222-3333-444455556666";
	char nv[128];

	(void)state;
	check_token("", "", "", 2, "#2");		/* the host's */
	check_token("", "", "1,3", 1, "#3");
	check_token("", "", "1,3", 2, "");		/* past what it sees */
	check_token("", "all", "", 5, "#5");
	check_token("abc123", "", "", 0, "C:abc123/0");	/* unnamed */
	check_token("abc123", u1, "", 0, u1);		/* the device plugin's */
	check_token("def456", u2, "", 0, u2);
	check_token("abc123", u1, "", 1, "");
	check_token("abc123", "4,6", "", 1, "#6");
	snprintf(nv, sizeof(nv), "%s,%s", u1, u2);
	check_token("abc123", nv, "1", 0, u2);		/* both: CUDA's of NVIDIA's */
	check_token("abc123", "none", "", 0, "");
	check_token("abc123", "void", "", 0, "");
	check_token("", "", u1, 0, u1);
	check_gpu("", 0, "0", "");
}

static void test_environ_edges(void **state)
{
	static const char env[] = "RANK=5\0=x\0noequals\0RANK=6\0LOCAL_RANK";
	struct ig_identity id = { 0 };

	(void)state;
	ig_identity_parse_environ(env, sizeof(env) - 1, &id);
	assert_string_equal(id.rank, "5");	/* the first one wins */
	assert_string_equal(id.local_rank, "");
	strcpy(id.pod_uid, UID);
	ig_identity_parse_runtime(REC(UID, "x", "a.b"), strlen(REC(UID, "x", "a.b")), &id);
	assert_string_equal(id.namespace, "");	/* a namespace has no dots */
	assert_string_equal(id.pod, "x");
	ig_identity_parse_runtime("{\"annotations\": 5}", 18, &id);
	ig_identity_parse_runtime("{", 1, &id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_gone_and_self),
		cmocka_unit_test(test_comm_escaped),
		cmocka_unit_test(test_container_files_ignored),
		cmocka_unit_test(test_ident_record),
		cmocka_unit_test(test_gpu),
		cmocka_unit_test(test_gpu_token),
		cmocka_unit_test(test_environ_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
