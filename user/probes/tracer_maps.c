// SPDX-License-Identifier: GPL-2.0
/*
 * The large hash maps made beside the flavours' pick (docs/design.md
 * §7.1): the kernel fills a preallocated hash map's free list, or an LRU
 * map's lists, when the map is created, tens of ms for ours on a small
 * VM, while the parse of the kernel's BTF that picks the hooks' flavours
 * runs on the other CPU.  A thread creates them, helped by the loader
 * once the flavours are picked; libbpf then takes their
 * fds instead of creating them itself.  A map not made here is left to
 * libbpf, which creates it, or says why not, as it would have.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes/log.h"
#include "probes/tracer_int.h"

static bool worth_it(enum bpf_map_type type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/* Before Linux 5.11 a map's memory counts against RLIMIT_MEMLOCK, which
 * libbpf lifts for its load on such kernels: lifted here as it would be,
 * once; whether it was. */
static bool lift_memlock(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static bool tried, lifted;
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	pthread_mutex_lock(&mu);
	if (!tried) {
		tried = true;
		lifted = !setrlimit(RLIMIT_MEMLOCK, &r);
	}
	pthread_mutex_unlock(&mu);
	return lifted;
}

/* Makes the maps not yet taken; the thread and, once the flavours are
 * picked, the loader's own thread share them. */
static void *make(void *arg)
{
	struct ig_premade *p = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n) {
		struct ig_premade_map *m = &p->m[i];
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = m->flags);

		m->fd = bpf_map_create(m->type, m->name, m->key_size, m->value_size,
				       m->max_entries, &o);
		if (m->fd < 0 && errno == EPERM && lift_memlock())
			m->fd = bpf_map_create(m->type, m->name, m->key_size,
					       m->value_size, m->max_entries, &o);
		if (m->fd < 0)
			m->err = errno;
	}
	return NULL;
}

void ig_tracer_maps_start(struct ig_premade *p, struct bpf_object *obj)
{
	struct bpf_map *map;

	memset(p, 0, sizeof(*p));
	bpf_object__for_each_map(map, obj) {
		struct ig_premade_map *m;

		if (p->n == IG_PREMADE_MAX || !worth_it(bpf_map__type(map)) ||
		    !bpf_map__autocreate(map) || bpf_map__pin_path(map))
			continue;
		m = &p->m[p->n++];
		m->map = map;
		m->type = bpf_map__type(map);
		snprintf(m->name, sizeof(m->name), "%s", bpf_map__name(map));
		m->key_size = bpf_map__key_size(map);
		m->value_size = bpf_map__value_size(map);
		m->max_entries = bpf_map__max_entries(map);
		m->flags = bpf_map__map_flags(map);
		m->fd = -1;
	}
	p->started = p->n && !pthread_create(&p->th, NULL, make, p);
}

void ig_tracer_maps_finish(struct ig_premade *p)
{
	size_t i, took = 0;

	if (!p->started)
		return;
	make(p);
	pthread_join(p->th, NULL);
	p->started = false;
	for (i = 0; i < p->n; i++) {
		struct ig_premade_map *m = &p->m[i];

		if (m->fd < 0) {
			ig_debug("map %s: left to libbpf (%s)", m->name, strerror(m->err));
			continue;
		}
		/* libbpf dups the fd and skips the map's creation */
		if (bpf_map__reuse_fd(m->map, m->fd))
			ig_debug("map %s: left to libbpf (%s)", m->name, strerror(errno));
		else
			took++;
		close(m->fd);
		m->fd = -1;
	}
	ig_debug("%zu of %zu hash maps made beside the flavours' pick", took, p->n);
}
