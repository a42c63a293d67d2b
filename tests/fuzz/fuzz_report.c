// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness over the whole `idlegap report` path: the recording
 * reader, reorder stage, engine, text and JSON reports (to /dev/null).
 * The input is a recording file.  Inputs of even size get their block
 * checksums made right first, so mutations reach past the reader's
 * checksum into the engine; odd ones test the checksum itself.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "stream/recording.h"
#include "modes/session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_WRONLY);

	(void)argc;
	(void)argv;
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		abort();
	close(fd);
	return 0;
}

static void fix_checksums(uint8_t *p, size_t len)
{
	struct ig_block_hdr bh;
	size_t off = sizeof(struct ig_file_header);

	while (len - off >= sizeof(bh) && off < len) {
		memcpy(&bh, p + off, sizeof(bh));
		if (bh.magic != IG_BLOCK_MAGIC || bh.len > IG_BLOCK_MAX ||
		    bh.len > len - off - sizeof(bh))
			return;
		bh.crc = ig_rec_block_crc(&bh, p + off + sizeof(bh));
		memcpy(p + off, &bh, sizeof(bh));
		off += sizeof(bh) + bh.len + (8 - bh.len % 8) % 8;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ig_output_opts out = {
		.json_path = "/dev/null",
		.engine = { .sz = sizeof(out.engine) },
	};
	char path[64];
	uint8_t *copy;
	int fd;

	if (size < sizeof(struct ig_file_header))
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size % 2 == 0)
		fix_checksums(copy, size);
	fd = memfd_create("igrec", MFD_CLOEXEC);
	if (fd < 0 || write(fd, copy, size) != (ssize_t)size)
		abort();
	free(copy);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* text + JSON, strict or --partial; or the record dump */
	switch (size % 3) {
	case 0:
		ig_session_report(path, true, &out);
		break;
	case 1:		/* and the estimate in the smallest blocks */
		out.engine.max_gaps_json = -1;
		out.engine.est_block = 64;
		ig_session_report(path, false, &out);
		break;
	default:
		out.json_path = NULL;
		out.dump = true;
		ig_session_report(path, true, &out);
	}
	close(fd);
	return 0;
}
