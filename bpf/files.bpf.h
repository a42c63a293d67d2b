/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Paths of the files tracked threads wait on: sent once per inode as an
 * IG_REC_FILE, walked from the file up to the process's own root across
 * mount points, so that a process in another mount namespace or a chroot
 * is named as it names its files.
 */
#ifndef IG_FILES_BPF_H
#define IG_FILES_BPF_H

#include "maps.bpf.h"

/* The walk from a file up to the process's root, one step per bpf_loop()
 * round, as d_path() does (which tracepoints may not call). */
struct path_walk {
	__u64 d, vm, m;		/* dentry, its vfsmount and struct mount */
	__u64 root, rootmnt;	/* the task's root */
	__u32 n, below, done;
};

static long path_step(__u64 i, void *arg)
{
	struct path_walk *c = arg;
	struct dentry *d = (void *)c->d;
	struct vfsmount *vm = (void *)c->vm;
	struct mount *m = (void *)c->m, *up;
	struct ig_file *r;
	__u32 zero = 0, n = c->n;

	if (c->d == c->root && c->vm == c->rootmnt) {
		c->done = 1;
		return 1;
	}
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		up = BPF_CORE_READ(m, mnt_parent);
		if (up == m) {
			c->done = 1;		/* the namespace's root */
			return 1;
		}
		c->below = 0;
		c->d = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		c->m = (__u64)up;
		c->vm = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	if (d == BPF_CORE_READ(d, d_parent)) {
		c->done = 1;		/* a file system's root, not mounted */
		return 1;
	}
	r = bpf_map_lookup_elem(&file_scratch, &zero);
	if (!r || n >= IG_PATH_DEPTH)
		return 1;
	/* bounded again where it is used: 6.1's verifier loses the bound of
	 * a value it reloads from the stack */
	barrier_var(n);
	n &= IG_PATH_DEPTH - 1;
	bpf_probe_read_kernel_str(r->comp[n], IG_NAME_LEN,
				  BPF_CORE_READ(d, d_name.name));
	r->ncomp = ++n;
	c->n = n;
	if (c->below)
		r->nmount = n;
	c->d = (__u64)BPF_CORE_READ(d, d_parent);
	return 0;
}

/* Fills the per-CPU scratch record with @f's path from @t's root. */
static __always_inline struct ig_file *file_path(struct task_struct *t,
						 struct file *f, __u64 key,
						 __u32 dev)
{
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct path_walk c = {
		.d = (__u64)BPF_CORE_READ(f, f_path.dentry),
		.vm = (__u64)vm,
		.m = (__u64)vm - bpf_core_field_offset(struct mount, mnt),
		.root = (__u64)BPF_CORE_READ(t, fs, root.dentry),
		.rootmnt = (__u64)BPF_CORE_READ(t, fs, root.mnt),
		.below = 1,
	};
	__u32 zero = 0;
	struct ig_file *r = bpf_map_lookup_elem(&file_scratch, &zero);

	if (!r)
		return NULL;
	r->key = key;
	r->s_dev = dev;
	r->ncomp = 0;
	r->nmount = 0;
	r->flags = 0;
	r->pad = 0;
	bpf_probe_read_kernel_str(r->fstype, sizeof(r->fstype),
				  BPF_CORE_READ(vm, mnt_sb, s_type, name));
	bpf_loop(IG_PATH_DEPTH + 8, path_step, &c, 0);
	if (!c.done)
		r->flags |= IG_FILEF_TRUNC;
	return r;
}

/* A storage wait on @f: name the file by key, and send its path the first
 * time (a file the kernel has forgotten is sent again). */
static __always_inline void note_file(struct ig_thread_state *ts,
				      struct task_struct *t, struct file *f)
{
	struct inode *ino = BPF_CORE_READ(f, f_inode);
	__u32 dev = BPF_CORE_READ(ino, i_sb, s_dev);
	__u64 key = IG_FILE_KEY(dev, BPF_CORE_READ(ino, i_ino));
	__u8 one = 1;
	struct ig_file *r, *p;

	ts->arg = key;
	ts->flags |= IG_F_FILE_KEY;
	if (!have_find_vma || bpf_map_lookup_elem(&files_sent, &key))
		return;		/* no bpf_loop() before 5.17 either */
	p = file_path(t, f, key, dev);
	if (!p)
		return;
	r = rec_reserve(sizeof(*r), IG_REC_FILE, BPF_CORE_READ(t, pid),
			BPF_CORE_READ(t, tgid), bpf_ktime_get_ns());
	if (!r)
		return;
	bpf_probe_read_kernel((void *)r + sizeof(r->h), sizeof(*r) - sizeof(r->h),
			      (void *)p + sizeof(p->h));
	rec_submit(r);
	bpf_map_update_elem(&files_sent, &key, &one, BPF_ANY);
}

#endif
