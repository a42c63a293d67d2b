// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/folded.h"

struct stack {
	char *text;		/* "root;outer;...;inner" */
	uint64_t ns;
};

struct ig_folded {
	struct stack *v;
	size_t n, cap;
};

struct ig_folded *ig_folded_new(void)
{
	return calloc(1, sizeof(struct ig_folded));
}

void ig_folded_free(struct ig_folded *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		free(f->v[i].text);
	free(f->v);
	free(f);
}

/* Appends one frame name at @p, made safe for the format; returns the end. */
static char *put_frame(char *p, const char *name)
{
	const char *s = name && *name ? name : "[unknown]";

	for (; *s; s++)
		*p++ = *s == ';' ? ':' : (unsigned char)*s < ' ' || *s == 0x7f ?
			' ' : *s;
	return p;
}

static char *join(const char *root, const char *const *frames, size_t n)
{
	size_t len = strlen(root && *root ? root : "[unknown]") + 1, i;
	char *text, *p;

	for (i = 0; i < n; i++)
		len += strlen(frames[i] && *frames[i] ? frames[i] : "[unknown]") + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	p = put_frame(text, root);
	for (i = n; i-- > 0;) {
		*p++ = ';';
		p = put_frame(p, frames[i]);
	}
	*p = 0;
	return text;
}

int ig_folded_add(struct ig_folded *f, const char *root,
		  const char *const *frames, size_t n, uint64_t ns)
{
	char *text;

	if (!ns)
		return 0;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct stack *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	text = join(root, frames, n);
	if (!text)
		return -ENOMEM;
	f->v[f->n].text = text;
	f->v[f->n++].ns = ns;
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp(((const struct stack *)a)->text,
		      ((const struct stack *)b)->text);
}

/* Sorts and sums equal stacks in place. */
static void merge(struct ig_folded *f)
{
	size_t i, o = 0;

	qsort(f->v, f->n, sizeof(*f->v), cmp_stack);
	for (i = 0; i < f->n; i++) {
		if (o && !strcmp(f->v[o - 1].text, f->v[i].text)) {
			f->v[o - 1].ns += f->v[i].ns;
			free(f->v[i].text);
			continue;
		}
		f->v[o++] = f->v[i];
	}
	f->n = o;
}

int ig_folded_write(struct ig_folded *f, FILE *out)
{
	size_t i;

	merge(f);
	/* the errno of the write that failed (ENOSPC, EBADF...), EIO if none */
	errno = 0;
	for (i = 0; i < f->n; i++)
		if (fprintf(out, "%s %" PRIu64 "\n", f->v[i].text, f->v[i].ns) < 0)
			return errno ? -errno : -EIO;
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
