// SPDX-License-Identifier: GPL-2.0
/*
 * bareprobe [-r] LIB SYMBOL -- COMMAND [ARGS...]
 * Runs COMMAND with an empty BPF program on LIB:SYMBOL's entry (and, with
 * -r, its return): the cost floor idlegap's own probes are compared with.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bareprobe.skel.h"

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o);
	struct bpf_link *l1 = NULL, *l2 = NULL;
	struct bareprobe_bpf *skel;
	int i = 1, status = 1;
	bool ret = false;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-r")) {
		ret = true;
		i++;
	}
	if (argc < i + 4 || strcmp(argv[i + 2], "--")) {
		fprintf(stderr, "usage: bareprobe [-r] LIB SYMBOL -- COMMAND [ARGS...]\n");
		return 2;
	}
	skel = bareprobe_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bareprobe: cannot load: %s\n", strerror(errno));
		return 1;
	}
	o.func_name = argv[i + 1];
	l1 = bpf_program__attach_uprobe_opts(skel->progs.bare_entry, -1, argv[i], 0, &o);
	if (ret) {
		o.retprobe = true;
		l2 = bpf_program__attach_uprobe_opts(skel->progs.bare_return, -1, argv[i], 0, &o);
	}
	if (!l1 || (ret && !l2)) {
		fprintf(stderr, "bareprobe: cannot attach to %s:%s: %s\n", argv[i],
			argv[i + 1], strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[i + 3], &argv[i + 3]);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	bareprobe_bpf__destroy(skel);
	return status;
}
