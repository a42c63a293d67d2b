// SPDX-License-Identifier: GPL-2.0
/* Storage time reaches files: each carries its path (as the process names
 * it), its mount and file system type, and every mount sums its files'
 * time exactly, however many files share it. */
#include "test_engine_util.h"

#define L	IG_STREAM_LEGACY
#define EPS	1e-9
#define NFILES	60

/* An IG_REC_FILE for /COMPS[n-1]/.../COMPS[0], the mount point being
 * the components from @nmount up. */
static void t_file(struct tstream *s, uint64_t ts, uint64_t key,
		   const char *fstype, unsigned int nmount, uint32_t flags,
		   unsigned int n, const char *const *comps)
{
	union ig_rec *r = ts_new(s, IG_REC_FILE, sizeof(struct ig_file), 100,
			      100, ts);
	unsigned int i;

	r->f.key = key;
	r->f.ncomp = (uint16_t)n;
	r->f.nmount = (uint16_t)nmount;
	r->f.flags = flags;
	snprintf(r->f.fstype, sizeof(r->f.fstype), "%s", fstype);
	for (i = 0; i < n && i < IG_PATH_DEPTH; i++)
		snprintf(r->f.comp[i], IG_NAME_LEN, "%s", comps[i]);
}

/* The field, or NULL when absent or null. */
static struct json_object *field(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static struct json_object *detail(struct json_object *j, const char *kind,
				  const char *name, const char *val)
{
	struct json_object *d = jpath(jcause(j, "causes", "storage"),
				      "details"), *x, *f;
	size_t i;

	for (i = 0; i < json_object_array_length(d); i++) {
		x = json_object_array_get_idx(d, i);
		f = field(x, name);
		if (!strcmp(json_object_get_string(field(x, "kind")), kind) &&
		    f && !strcmp(json_object_get_string(f), val))
			return x;
	}
	return NULL;
}

static const char *str(struct json_object *o, const char *k)
{
	struct json_object *v = field(o, k);

	return v ? json_object_get_string(v) : NULL;
}

/* The feeder reads 60 files under /mnt/data (ext4) in the gap [10, 52],
 * 0.5 ms each, then one file on / (no key: a recording from before
 * paths), then one whose path was cut. */
static void test_paths_and_mounts(void **state)
{
	static const char *const deep[IG_PATH_DEPTH] = {
		"x.bin", "d15", "d14", "d13", "d12", "d11", "d10", "d9",
		"d8", "d7", "d6", "d5", "d4", "d3", "d2", "d1" };
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *d;
	char name[64], *txt;
	uint64_t t = 11 * MS;
	int i;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 5 * MS, L);
	t_sync(&s, 100, 100, 6 * MS, 0, 10 * MS, L, 5 * MS);
	for (i = 0; i < NFILES; i++, t += MS / 2) {
		const char *comps[4] = { name, "train", "data", "mnt" };

		snprintf(name, sizeof(name), "sample-%05d.bin", i);
		t_file(&s, t, 1000 + i, "ext4", 2, 0, 4, comps);
		OFF(&s, .tid = 100, .t_off = t, .t_wake = t + MS / 2,
		    .t_on = t + MS / 2, .reason = IG_R_STORAGE,
		    .flags = IG_F_IOWAIT | IG_F_FILE_KEY, .arg = 1000 + i,
		    .name = name);
	}
	/* t = 41 ms */
	OFF(&s, .tid = 100, .t_off = t, .t_wake = t + 2 * MS,
	    .t_on = t + 2 * MS, .reason = IG_R_STORAGE, .flags = IG_F_IOWAIT,
	    .name = "old.bin");
	t_file(&s, t + 2 * MS, 7, "xfs", IG_PATH_DEPTH, IG_FILEF_TRUNC,
	       IG_PATH_DEPTH, deep);
	OFF(&s, .tid = 100, .t_off = t + 2 * MS, .t_wake = t + 5 * MS,
	    .t_on = t + 5 * MS, .reason = IG_R_STORAGE,
	    .flags = IG_F_IOWAIT | IG_F_FILE_KEY, .arg = 7, .name = "x.bin");
	t_submit(&s, 100, 100, 52 * MS, L);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	assert_near(cause_s(j, "causes", "storage"), S(35), EPS);
	assert_int_equal(ji(j, "events.by_type.file"), NFILES + 1);
	/* the mount has all its files' time, and counts them */
	d = detail(j, "mount", "mount", "/mnt/data");
	assert_non_null(d);
	assert_string_equal(str(d, "fstype"), "ext4");
	assert_int_equal(ji(d, "files"), NFILES);
	assert_near(jd(d, "seconds"), S(30), EPS);
	/* a file: its path, mount and type */
	d = detail(j, "file", "fstype", "ext4");
	assert_non_null(d);
	snprintf(name, sizeof(name), "/mnt/data/train/%s", str(d, "file"));
	assert_string_equal(str(d, "path"), name);
	assert_string_equal(str(d, "mount"), "/mnt/data");
	assert_string_equal(str(d, "fstype"), "ext4");
	/* no path recorded: named, not placed */
	d = detail(j, "file", "file", "old.bin");
	assert_non_null(d);
	assert_null(field(d, "path"));
	assert_null(field(d, "mount"));
	/* cut: marked so, and its mount is not guessed */
	d = detail(j, "file", "file", "x.bin");
	assert_non_null(d);
	assert_string_equal(str(d, "path"),
		".../d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12/d13/d14/d15/x.bin");
	assert_null(field(d, "mount"));
	json_object_put(j);

	/* many files: the text sums them under their mount */
	txt = report_text(e);
	assert_non_null(strstr(txt, "reading 60 files under /mnt/data (ext4)"));
	free(txt);
	ig_engine_free(e);
	ts_free(&s);
}

/* A file on the root mount; a malformed record names nothing. */
static void test_root_mount(void **state)
{
	static const char *const comps[2] = { "a.bin", "tmp" };
	struct tstream s = { 0 };
	struct ig_engine *e = new_engine(0, 0);
	struct json_object *j, *d;
	union ig_rec *r;

	(void)state;
	t_meta(&s, 0);
	t_task(&s, 0, 100, 100, 1, "python3");
	t_submit(&s, 100, 100, 5 * MS, L);
	t_sync(&s, 100, 100, 6 * MS, 0, 10 * MS, L, 5 * MS);
	t_file(&s, 11 * MS, 5, "ext4", 2, 0, 2, comps);
	r = ts_new(&s, IG_REC_FILE, sizeof(struct ig_file), 100, 100, 11 * MS);
	r->f.key = 6;
	r->f.ncomp = IG_PATH_DEPTH + 1;
	OFF(&s, .tid = 100, .t_off = 11 * MS, .t_wake = 20 * MS,
	    .t_on = 20 * MS, .reason = IG_R_STORAGE,
	    .flags = IG_F_IOWAIT | IG_F_FILE_KEY, .arg = 5, .name = "a.bin");
	OFF(&s, .tid = 100, .t_off = 20 * MS, .t_wake = 30 * MS,
	    .t_on = 30 * MS, .reason = IG_R_STORAGE,
	    .flags = IG_F_IOWAIT | IG_F_FILE_KEY, .arg = 6, .name = "b.bin");
	t_submit(&s, 100, 100, 52 * MS, L);
	t_end(&s, 100 * MS);
	ts_feed(&s, e);
	j = report(e);

	d = detail(j, "file", "file", "a.bin");
	assert_non_null(d);
	assert_string_equal(str(d, "path"), "/tmp/a.bin");
	assert_string_equal(str(d, "mount"), "/");
	d = detail(j, "mount", "mount", "/");
	assert_non_null(d);
	assert_int_equal(ji(d, "files"), 1);
	assert_near(jd(d, "seconds"), S(9), EPS);
	d = detail(j, "file", "file", "b.bin");
	assert_non_null(d);
	assert_null(field(d, "path"));
	json_object_put(j);
	ig_engine_free(e);
	ts_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_and_mounts),
		cmocka_unit_test(test_root_mount),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
