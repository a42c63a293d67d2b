// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "recording.h"

_Static_assert(sizeof(struct ig_file_header) == 24, "file header layout");

struct ig_rec_writer {
	FILE *f;
	int err;
};

struct ig_rec_writer *ig_rec_writer_open(const char *path)
{
	struct ig_file_header fh = {
		.magic = IG_FILE_MAGIC,
		.version = IG_FORMAT_VERSION,
		.header_size = sizeof(fh),
		.byte_order = IG_BYTE_ORDER,
		.clock = CLOCK_MONOTONIC,
	};
	struct ig_rec_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->f = fopen(path, "we");
	if (!w->f) {
		free(w);
		return NULL;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	if (fwrite(&fh, sizeof(fh), 1, w->f) != 1) {
		int e = errno;

		fclose(w->f);
		free(w);
		errno = e;
		return NULL;
	}
	return w;
}

int ig_rec_writer_put(struct ig_rec_writer *w, const struct ig_hdr *rec)
{
	if (w->err)
		return w->err;
	if (fwrite(rec, rec->size, 1, w->f) != 1)
		w->err = -(errno ? errno : EIO);
	return w->err;
}

int ig_rec_writer_flush(struct ig_rec_writer *w)
{
	if (!w->err && fflush(w->f))
		w->err = -(errno ? errno : EIO);
	return w->err;
}

int ig_rec_writer_close(struct ig_rec_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = w->err;
	if (fflush(w->f) && !err)
		err = -errno;
	if (fsync(fileno(w->f)) && !err && errno != EINVAL)
		err = -errno;
	if (fclose(w->f) && !err)
		err = -errno;
	free(w);
	return err;
}

static int fail(struct ig_read_result *res, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ig_read_result *res, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	return err;
}

static int check_header(const char *path, const unsigned char *p, size_t len,
			struct ig_read_result *res)
{
	struct ig_file_header fh;

	if (len < sizeof(fh))
		return fail(res, -EINVAL, "%s: not an idlegap recording (%zu bytes)",
			    path, len);
	memcpy(&fh, p, sizeof(fh));
	if (memcmp(fh.magic, IG_FILE_MAGIC, sizeof(fh.magic)))
		return fail(res, -EINVAL, "%s: not an idlegap recording", path);
	if (fh.byte_order != IG_BYTE_ORDER)
		return fail(res, -EINVAL, "%s: recorded on a machine of the other byte order",
			    path);
	if (fh.version != IG_FORMAT_VERSION)
		return fail(res, -EINVAL, "%s: recording format version %u, this idlegap reads version %u",
			    path, fh.version, IG_FORMAT_VERSION);
	if (fh.header_size < sizeof(fh) || fh.header_size > len)
		return fail(res, -EINVAL, "%s: corrupt file header", path);
	return (int)fh.header_size;
}

int ig_recording_read(const char *path, bool partial, ig_rec_cb cb, void *ctx,
		      struct ig_read_result *res)
{
	/* aligned copy for records that are not 8-byte aligned in the file */
	union { struct ig_hdr h; unsigned char b[65536]; } *tmp = NULL;
	const unsigned char *p = MAP_FAILED;
	size_t len = 0, off;
	struct stat st;
	int fd, err = 0, hlen;
	bool ended = false;

	memset(res, 0, sizeof(*res));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(res, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = fail(res, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = fail(res, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	len = st.st_size;
	if (len) {
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			err = fail(res, -errno, "%s: %s", path, strerror(errno));
			goto out;
		}
	}
	hlen = check_header(path, p == MAP_FAILED ? NULL : p, len, res);
	if (hlen < 0) {
		err = hlen;
		goto out;
	}
	for (off = hlen; off < len && !ended; ) {
		struct ig_hdr h;
		size_t min;
		const struct ig_hdr *rec;

		if (len - off < sizeof(h)) {
			err = fail(res, -EINVAL, "%s: truncated at byte %zu (in a record header)",
				   path, off);
			break;
		}
		memcpy(&h, p + off, sizeof(h));
		min = ig_rec_min_size(h.type);
		if (h.size < sizeof(h) || (min && h.size < min)) {
			err = fail(res, -EINVAL, "%s: corrupt record at byte %zu (type %u, size %u)",
				   path, off, h.type, h.size);
			break;
		}
		if (h.size > len - off) {
			err = fail(res, -EINVAL, "%s: truncated at byte %zu (record of %u bytes, %zu left)",
				   path, off, h.size, len - off);
			break;
		}
		if (off % 8) {
			if (!tmp && !(tmp = malloc(sizeof(*tmp)))) {
				err = fail(res, -ENOMEM, "out of memory");
				break;
			}
			memcpy(tmp->b, p + off, h.size);
			rec = &tmp->h;
		} else {
			rec = (const struct ig_hdr *)(p + off);
		}
		if (off == (size_t)hlen && h.type != IG_REC_META) {
			err = fail(res, -EINVAL, "%s: corrupt: first record is not the run metadata",
				   path);
			break;
		}
		if (h.type == IG_REC_END)
			ended = true;
		res->records++;
		off += h.size;
		if (min) {	/* records of unknown types are skipped */
			err = cb(rec, ctx);
			if (err) {
				fail(res, err, "%s: stopped at record %zu", path, res->records);
				goto out;
			}
		}
	}
	res->complete = ended;
	if (!err && !ended)
		err = fail(res, -EINVAL, "%s: truncated: the recording has no end record (tracer killed?)",
			   path);
	if (err && partial) {
		/* keep what was read; the caller reports it as incomplete */
		err = 0;
	}
out:
	free(tmp);
	if (p != MAP_FAILED)
		munmap((void *)p, len);
	close(fd);
	return err;
}
